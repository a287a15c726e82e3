"""The extension surface: what it takes to declare a primitive or write an interpreter.

``dualad`` (``grad``, ``jvp``, ``vjp``, ``primitive``, ``Function``, ...) is for
differentiating code; this module is for extending dualad itself. The planner
(:mod:`dualad.jacobians`), the oracles (:mod:`dualad.verification`), the paper
reproductions and users import from ``dualad``, ``dualad.numpy``, ``dualad.scipy`` and
here, never from dualad's other modules, whose layout may change (a test,
``tests/test_layering.py``, holds that line). As HIPS autograd's ``extend.py``.

Declaring a primitive
---------------------
One way per job: a primitive's rules are ``defjvp``/``defvjp`` (one per argument) or
``defderiv`` (elementwise, by its partials); a closure's are ``dualad.custom_jvp`` /
``dualad.custom_vjp``; a PyTorch-style class is ``dualad.Function`` (docs/guide_core.md,
"Which way to give a rule"). The registry's own primitives also use three specialised
forms, for jobs those do not cover: ``def_linear`` (a linear map: its transpose),
``def_all`` (rules over all arguments at once) and ``defbatch`` (vmap's rule).

``Primitive(name, impl, *, sympy=None, zero_derivative=False, linear=False, nondiff_argnums=())``
    An operation the interpreters know. ``impl(*args, **params)`` computes the value on
    plain NumPy arrays; differentiable arguments are positional, everything else (axes,
    shapes, indices) a keyword parameter. ``sympy(sp, *args, **params)`` builds the
    same value from SymPy objects (the oracle's translation). ``linear`` says the
    primitive is linear in its arguments, ``zero_derivative`` that its derivative is 0
    everywhere (comparisons, ``floor``, ``sign``).
``prim.defjvp(rule_0, rule_1, ...)``, ``prim.defvjp(...)``, ``prim.defderiv(...)``
    The rules, one per differentiable argument i, with y = f(x_0, x_1, ...) = ``ans``::

        JVP   rule_i(ṫ_i, ans, *args, **params) = ∂f/∂x_i · ṫ_i      (a tangent of y)
        VJP   rule_i(ȳ,   ans, *args, **params) = ȳ · ∂f/∂x_i        (a cotangent of x_i)

    The JVP pushes a tangent of argument i forward to the output (forward mode sums
    the contributions of every argument); the VJP pulls the output's cotangent back to
    argument i, summed over the axes broadcasting added (:func:`unbroadcast`), so it
    has x_i's shape. ``None`` stands for a zero. Tangents and cotangents may carry
    leading batch axes in front of their primal's shape (many directions at once):
    rules written with broadcasting registry operations serve them unchanged.
    ``defderiv(d_0, d_1, ...)`` declares an elementwise primitive by its partials
    ``d_i(ans, *args) = ∂y/∂x_i`` and builds both rules from them.
    Rules are written with registry operations (``dualad.numpy``, other primitives),
    never raw NumPy on their arguments: then they differentiate again (higher order),
    run on pattern values (sparsity) and on SymPy values (the oracle).
``implements(*numpy_callables)``
    Declares that a function (a decorator) or a primitive (``Primitive(...,
    implements=(np.sin,))``) computes these NumPy callables: plain NumPy calls on boxes
    then reach it (the front end's tables are built from these declarations only).
``Primitive(..., sparsity=kind)``
    The primitive's sparsity-pattern kind for the sparse planner, one of
    :data:`SPARSITY_KINDS` (``"elementwise"``, ``"structural"``, ``"matrix"``, ...) or a
    pattern rule; none means the planner assumes a dense pattern and says so.
``register(prim)``
    Adds ``prim`` to :data:`REGISTRY` (name -> primitive), which the rule checker, the
    coverage table and the sparsity rules walk. Names are unique.
``sample(*args, domain=None, **params)``
    One example call for the rule checker; a primitive's ``samples`` is a list of them.
``missing_rule(prim, argnum, mode)``
    The error an interpreter raises for a rule that was not declared.
``prim.defbatch(rule)``
    The batching rule ``rule(args, batched, **params)`` that ``dualad.vmap`` applies:
    ``args`` the positional arguments one level down, each carrying a leading batch axis
    where ``batched[i]`` is True; the output (each element of a tuple) carries it too.
    Without one vmap derives it (elementwise primitives broadcast, ``def_linear``'s
    ``batched=`` parameters) or loops over the batch; ``batching_rule(prim)`` gives the
    rule in use and ``is_looped(prim)`` says whether it is the loop (docs/vmap.md).

``prim.def_all(jvp=None, vjp=None)``
    Rules over all arguments at once, for a primitive whose derivative does not split
    into a term per argument cheaply (a solve, an integrator, a loop):
    ``jvp(tangents, ans, *args, **params)`` the output's tangent from every argument's
    tangent (``None`` where there is none), ``vjp(ct, ans, *args, **params)`` the list of
    every argument's cotangent.
``rule_table(name, *, per_argument=False, owner=None, doc=None)``, ``RuleTable``, ``TABLES``
    Each interpreter reads its rules from tables of its own, by name: ``"jvp"`` and
    ``"jvp_all"`` (forward mode), ``"vjp"`` and ``"vjp_all"`` (reverse mode), ``"batch"``
    and ``"linear_batched"`` (vmap). ``rule_table("jvp").get(prim)`` is ``prim``'s entry
    (``{argnum: rule}`` for a per-argument table), ``.has(prim)`` whether it has one. A new
    interpreter claims a new table (``owner=`` its package) and fills it beside the
    primitives' declarations (``table.set(prim, rule)``); :data:`TABLES` lists them all.

``dualad.primitive`` and ``dualad.Function`` (public in ``dualad``) are the convenient
front doors for users' primitives; this module gives the machinery under them
(docs/guide_internals.md: adding one to dualad, step by step).

Writing an interpreter
----------------------
A primitive call ``prim(*args, **params)`` finds, among its arguments, the box whose
trace has the highest level (the innermost transformation) and hands the call to that
trace; with no box it runs ``impl``. An interpreter is a pair (docs/guide_internals.md
builds one, a flop counter, in one screen):

``Trace``
    One active transformation; subclasses define ``process(prim, args, params)``, which
    unwraps its own boxes, computes the output (calling ``prim`` on the values one level
    down, so outer transformations see the call) and returns it boxed. ``alive`` is
    False once the transformation has returned; ``escaped(prim, args)`` is the
    :class:`EscapedTracerError` to raise then. ``decisions``: see :func:`note_decision`.
``Box``
    Base class of traced values; a subclass stores its trace in ``_trace`` and exposes
    the value one level down as ``_inner``. NumPy calls on boxes reach the registry
    (operators and the NumPy protocols are attached to every Box subclass).
``PrimalBox``
    A Box that keeps its trace and its primal (``primal``, one level down): the base of
    the planner's pattern and census boxes and of the SymPy oracle's symbols; a subclass
    adds what its interpreter carries.
``new_level()``
    A fresh trace level, above every level handed out before (nested transformations).
``Dual``, ``JVPTrace``
    The forward interpreter: a primal with its tangent; subclass it to count or log.
``Var``, ``VJPTrace``, ``backward_sweep``
    The reverse interpreter: a node on the tape, the trace that records it, and the
    sweep that pulls cotangents back through the tape (dualad.teaching.opcount subclasses
    ``VJPTrace`` to count operations).
``BatchTracer``, ``BatchTrace``
    The batching interpreter (``dualad.vmap``): a value whose ``_inner`` carries the batch
    axis at 0 and whose ``shape`` is the per-example one; the trace's ``size`` is the
    batch size. Code that takes a plain value from a traced one without derivative (a
    mask, an integer cast) keeps the batch axis with ``nondiff_value(x)`` where
    ``primal_value(x)`` would hand on the whole batch as one example;
    ``per_example(fn, args, kwargs)`` runs a function of plain values (an argmax, a
    rank) per example, ``per_example_rule(rule)`` a JVP/VJP rule that plans its work
    from its arguments' values (sort's permutation).

Values, shapes, trees
---------------------
``primal_value(x)`` strips every box (the plain value under all traces);
``unguarded_value(x)`` the same without a ``dualad.jit`` guard, for reads that decide
no result (a dtype, a shape, a planner's census and cost model);
``shape_of(x)``, ``ndim_of(x)`` work on arrays, boxes and Python numbers.
``note_decision(x, name, value)`` logs a value-dependent result (a comparison, an
argmax, ``bool()``) on every trace under ``x`` that keeps a decision log: the sparse
planner re-detects its pattern when the decisions change. ``flatten(tree)`` returns the
leaves of a pytree (nested tuples/lists/dicts, named tuples, classes registered with
``dualad.tree.register``) and its structure, a callable rebuilding the tree from new
leaves; ``tree_map(fn, tree, *rest)`` maps over leaves (both also in :mod:`dualad.tree`). ``unbroadcast(g, shape, nb)`` sums a
cotangent (``nb`` leading batch axes) down to ``shape``: the VJP of broadcasting.

What a rule may ask of the interpreter that runs it (:mod:`dualad.core.values`, answered
by the value's own trace, so a rule never imports an interpreter): ``is_batched(x)``
(one value per vmap example), ``is_staged(x)`` (recorded by ``dualad.jit``),
``map_value(x, fn)`` (``fn`` of each example's plain value, no derivative),
``looped_call(fn, *args)`` (a differentiable ``fn`` once per example), with
``nondiff_value`` and ``per_example`` above. ``batched_axis(axis, t, x)``: axis ``axis``
of ``x`` as an axis of its tangent or cotangent ``t``, whose batch axes lead
(:mod:`dualad.core.batch_axes`).

For the planner and the oracles
-------------------------------
``check_input(api, argnum, x, where="", fname=None)``: ``x`` as a differentiable floating
array, or a TypeError naming ``api``, the argument (and the function ``fname``) and saying
what to pass (integers, text, bfloat16, an ``np.matrix``, a masked array). ``onehot_rows(start, count, offset, pshape,
dtype)``: rows of an identity as a structured batch of tangents (seeds that make the
first linear map a gather). ``NUMPY_FUNCTIONS``, ``NUMPY_UFUNCS``: the front end's tables
{NumPy callable: dualad function}, what plain NumPy calls on boxes reach.
``load_families()``: declare now the families of primitives ``import dualad`` leaves for
first use (scipy.special's rules, the linear algebra, implicit differentiation, the
primitives of dualad.scipy.integrate and .sparse; docs/architecture.md). Never needed for
correctness: ``REGISTRY`` and the two tables load them themselves on a miss and before
they are iterated; call it to pay the import time up front (a benchmark, a server).
``traced_outputs(out)``: a function's output with its object arrays of traced scalars
(``np.array([x, y])``) restacked into traced arrays, as ``grad``/``jvp``/``vjp`` do;
``raise_assignment_error(api, fname, e)``: the TypeError they raise instead of NumPy's
bare "setting an array element with a sequence" (``out[i] = x`` into a plain array).
``Replayed(fun, name, jit=True)``: ``fun`` (a prepared derivative) through ``dualad.jit``,
falling back to ``fun`` itself with one ``JitFallbackWarning`` for a signature whose
trace fails while ``fun`` runs (:mod:`dualad.interpreters.staging.default`).
``Assumed.of(fun, name)``: what ``fun`` reads outside its arguments (closure, globals,
containers), as it is now; ``.holds()`` is False once any of it changed (the check
``dualad.jit`` makes before a replay, :mod:`dualad.interpreters.staging.assumed`).
``Recycled(keep=2)``: a pool of the large arrays one site returns, handed out again once
nothing outside holds them (``.empty(shape, dtype)``, ``.copy(a)``): a result's memory
without new pages at every call (:mod:`dualad.core.recycle`).
``taylor_coverage()``: ``{name: kind}`` of every registered primitive's Taylor-mode rule
(recurrence, linear, multilinear, fallback, zero; :mod:`dualad.interpreters.taylor.rules`),
which ``dualad.verification.taylor`` tabulates in docs/taylor_rules.md.
``logger(part)``: ``logging.getLogger("dualad.<part>")`` for a part of ``dualad.core.logs``'s
``PARTS`` (jacobians, jit, distributed, checkpoint, autograd): the one way the library names
its loggers (docs/logging.md).
"""
from __future__ import annotations

from .transforms.api import check_input
from .frontend.objects import traced_outputs
from .frontend.inplace import raise_assignment_error
from .interpreters.staging.default import JitFallbackWarning, Replayed
from .interpreters.staging.assumed import Assumed
from .frontend.dispatch import FUNCTIONS as NUMPY_FUNCTIONS, UFUNCS as NUMPY_UFUNCS
from .interpreters.forward.dual import Dual, JVPTrace
from .core.onehot import onehot_rows
from .core.recycle import Recycled
from .core.logs import logger
from .ops.core.linear import unbroadcast
from .interpreters.reverse.sweep import backward_sweep
from .interpreters.reverse.tape import Var, VJPTrace
from .core.boxes import PrimalBox
from .core.tracer import (Box, EscapedTracerError, Trace, ndim_of, new_level, note_decision,
                     primal_value, shape_of, unguarded_value)
from .core.primitive import (REGISTRY, SPARSITY_KINDS, Primitive, implements, missing_rule, register,
                        sample)
from .core.families import load_families
from .core.rules import TABLES, RuleTable, rule_table
from .core.tree import flatten, tree_map
from .interpreters.batching.vmap import BatchTrace, batching_rule, is_looped
from .interpreters.batching.rules import per_example_rule
from .interpreters.batching.tracer import BatchTracer
from .core.values import is_batched, is_staged, looped_call, map_value, nondiff_value, per_example
from .core.batch_axes import batched_axis
from .interpreters.taylor.rules import coverage as taylor_coverage

__all__ = [
    # declaring primitives
    "Primitive", "register", "REGISTRY", "sample", "missing_rule", "implements",
    "SPARSITY_KINDS", "rule_table", "RuleTable", "TABLES",
    # interpreters
    "Trace", "Box", "PrimalBox", "new_level", "EscapedTracerError",
    "Dual", "JVPTrace", "Var", "VJPTrace", "backward_sweep",
    "BatchTrace", "BatchTracer", "batching_rule", "is_looped", "nondiff_value",
    "per_example", "per_example_rule",
    # values, shapes, trees
    "primal_value", "shape_of", "ndim_of", "note_decision", "flatten", "tree_map",
    "unbroadcast", "unguarded_value", "is_batched", "is_staged", "map_value", "looped_call",
    "batched_axis",
    # for the planner and the oracles
    "check_input", "onehot_rows", "NUMPY_FUNCTIONS", "NUMPY_UFUNCS", "traced_outputs",
    "raise_assignment_error", "Replayed", "JitFallbackWarning", "Assumed", "load_families",
    "Recycled",
    "taylor_coverage", "logger",
]
