"""Primitives and the registry: what the interpreters know how to differentiate.

A :class:`Primitive` is declared once, with its NumPy implementation, its JVP and VJP
rules (or the partial derivatives they are built from, :mod:`dualad.core.partials`), its
SymPy translation, its sparsity-pattern kind and the NumPy callables it implements;
:func:`register` adds it to :data:`REGISTRY` and files those callables in the front
end's tables (:data:`NUMPY_UFUNCS`, :data:`NUMPY_FUNCTIONS`). Calling a primitive finds
the highest-level trace among its arguments (:mod:`dualad.core.tracer`) and lets that trace
interpret the call.
"""
from __future__ import annotations

import sys
import threading
from typing import TYPE_CHECKING, Any

import numpy as np

from .partials import compile_partial
from .tracer import Box, ndim_of, shape_of
from .array_types import constant_error, refused_kind
from .rules import RuleTable, rule_table

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from .partials import arg

__all__ = [
    "Primitive", "SPARSITY_KINDS", "Builders", "BUILDERS", "install_builders",
    "sample", "add_note", "REGISTRY", "NUMPY_UFUNCS", "NUMPY_FUNCTIONS", "implements",
    "register", "missing_rule", "load_families", "FAMILY_LOADERS"
]

_NDARRAY = np.ndarray
# The rule tables the declaration methods fill (claimed and documented by the interpreters
# that read them: forward mode, reverse mode, batching).
JVP = rule_table("jvp", per_argument=True)
VJP = rule_table("vjp", per_argument=True)
JVP_ALL = rule_table("jvp_all")
VJP_ALL = rule_table("vjp_all")
BATCH = rule_table("batch")
LINEAR_BATCHED = rule_table("linear_batched")


def _refuse_subclass(prim, a, args):
    """Raise for an np.matrix or masked-array constant ``a`` among a primitive's arguments
    when a traced value is among them too (dualad.core.array_types); other subclasses pass."""
    kind = refused_kind(a)
    if kind is not None and any(isinstance(b, Box) for b in args):
        fn = prim.implements[0] if prim.implements else None
        name = getattr(fn, "__name__", None)
        raise constant_error(kind, f"numpy.{name}" if name and getattr(np, name, None) is fn
                             else prim.name, a)


class Primitive:
    r"""An operation the interpreters know: its value, derivative rules and declarations.

    A primitive is the unit every interpreter differentiates. Its primal value comes
    from ``impl`` on plain arrays; its JVP rules push an argument's tangent forward to
    the output's tangent, its VJP rules pull the output's cotangent back to an
    argument's cotangent (the pullback), and the sweep, the forward process, vmap, the
    sparsity detector and the SymPy oracle all read those same rules. Differentiable
    arguments are positional; non-differentiable ones (axes, shapes, indices) are
    keyword parameters. Calling a primitive finds the highest-level trace among its
    arguments and hands it the call (``trace.process(prim, args, params)``); with no
    traced argument it runs ``impl``.

    Parameters
    ----------
    name : str
        The registry key (unique once :func:`register` files the primitive).
    impl : callable
        ``impl(*args, **params)``: the primal value on plain NumPy arrays.
    sympy : callable, optional
        ``sympy(sp, *args, **params)``: the same value built from SymPy objects (the
        oracle's translation); ``sp`` is the ``sympy`` module.
    zero_derivative : bool, optional
        The derivative is 0 everywhere (comparisons, ``floor``, ``sign``): the
        interpreters skip the rules and propagate zeros.
    linear : bool, optional
        The primitive is linear in its differentiable arguments (set by
        :meth:`def_linear`).
    nondiff_argnums : tuple of int, optional
        Positional arguments that are not differentiable (an integer order, a mask).
    elementwise : bool, optional
        The primitive maps elements to elements with broadcasting; its batching rule
        is broadcasting itself.
    sparsity : str or callable, optional
        The sparsity-pattern kind for the sparse planner, one of
        :data:`SPARSITY_KINDS`, or a pattern rule. ``None``: the planner assumes a
        dense pattern and says so.
    implements : tuple of callable, optional
        The NumPy / SciPy callables this primitive computes with their own signature
        (``np.sin``); :func:`register` files them in the front end's dispatch tables.
    samples : list of dict, optional
        Example calls for the rule checker, each made by :func:`sample`.
    domain : list of tuple, optional
        Per argument, the ``(lo, hi)`` interval the rule checker draws from (or
        ``None``).
    complex_domain : list of tuple, optional
        The same for complex samples of a holomorphic elementwise primitive.
    holomorphic : bool, optional
        Complex-differentiable: the rule checker tests complex tangents too.
    symbolic_rules : bool, optional
        False when the SymPy oracle should not differentiate the rules symbolically
        (rules that branch on values).
    cores : callable, optional
        ``cores(*shapes, **params)``: for a primitive returning several arrays packed
        in one, the core shape of each output.
    rule_guard : callable, optional
        ``rule_guard(prim, rule, argnum, kind)`` wraps each hand-written rule in a
        shape check (set by ``dualad.primitive`` for users' primitives).
    function_class : type, optional
        The ``dualad.Function`` subclass a primitive was made from.
    wraps : callable, optional
        The user's function a primitive was declared from (its ``__wrapped__``).
    doc : str, optional
        The docstring ``help(prim)`` shows (a user's function's own).
    batch : callable, optional
        The batching rule for ``dualad.vmap``, as :meth:`defbatch` sets it.

    Attributes
    ----------
    rules : dict
        Each interpreter's rules, keyed by its :class:`~dualad.core.rules.RuleTable`:
        ``rules[JVP][i](tangent_i, ans, *args, **params)`` argument ``i``'s
        contribution to the output tangent (forward mode); ``rules[VJP][i](cotangent,
        ans, *args, **params)`` the cotangent of argument ``i``, unbroadcast to its
        shape (reverse mode); ``rules.get(JVP_ALL)`` / ``rules.get(VJP_ALL)`` rules for
        all arguments at once (:meth:`def_all`); ``rules.get(BATCH)`` vmap's rule
        (:meth:`defbatch`); ``rules.get(LINEAR_BATCHED)`` ``def_linear``'s
        ``batched=``. Filled by the declaration methods only.
    derivs : tuple or None
        An elementwise primitive's partials :math:`\partial y/\partial x_i`, each
        compiled once (a constant, "argument j", or a function of ``(ans, *args)``;
        ``None`` for a non-differentiable argument): the one source of its JVP, its
        VJP and the reverse sweep's fast path (set by :meth:`defderiv`).
    batch_rules : bool
        True when the rules accept leading batch axes on tangents and cotangents;
        False for rules written for one direction (users' rules), which the
        interpreters map over the batch.

    See Also
    --------
    register : File a primitive in the registry and the dispatch tables.
    implements : Declare the NumPy callables a dualad function computes.
    sample : One example call for the rule checker.
    dualad.primitive : The front door for users' primitives.

    Notes
    -----
    Every declaration is stored in the field of its name, set in ``__init__``
    (``name``, ``impl``, ``sympy``, ``zero_derivative``, ``linear``, ``nondiff_argnums``,
    ``elementwise``, ``sparsity``, ``implements``, ``samples``, ``domain``,
    ``complex_domain``, ``holomorphic``, ``symbolic_rules``, ``cores``, ``rule_guard``,
    ``function_class``, ``wraps``, ``doc``), as are the partials (``derivs``,
    ``batch_rules``); the interpreters' rules are in ``rules``, by table (a new
    interpreter adds a table, not a field); nothing else is stored on a primitive (it
    has ``__slots__``).

    With :math:`y = f(x_0, x_1, \ldots)` (``ans``), the rules of argument :math:`i` are

    .. math::

        \mathrm{JVP}_i(\dot x_i) = \frac{\partial f}{\partial x_i}\,\dot x_i,
        \qquad
        \mathrm{VJP}_i(\bar y) = \bar y\,\frac{\partial f}{\partial x_i},

    the VJP summed over the axes broadcasting added, so that it has :math:`x_i`'s
    shape. Forward mode sums the JVPs of every traced argument; the reverse sweep
    accumulates each VJP into its argument's cotangent. Rules are written with
    registry operations (``dualad.numpy``, other primitives), never raw NumPy on their
    arguments: then they differentiate again (higher order), run on pattern values
    (sparsity) and on SymPy values (the oracle). Tangents and cotangents may carry
    leading batch axes in front of their primal's shape (many directions at once).

    Examples
    --------
    A primitive declared by its partial derivative, :math:`d(x^3)/dx = 3x^2`:

    >>> from dualad.extend import Primitive
    >>> cube = Primitive("cube", lambda x: x ** 3).defderiv(lambda ans, x: 3 * x ** 2)
    >>> print(float(dualad.grad(cube)(2.0)))
    12.0
    >>> print([float(v) for v in dualad.jvp(cube, (2.0,), (1.0,))])
    [8.0, 12.0]
    """

    __slots__ = ("name", "impl", "rules", "derivs", "batch_rules", "sympy", "zero_derivative",
                 "linear", "nondiff_argnums", "elementwise", "sparsity", "implements",
                 "samples", "domain", "complex_domain", "holomorphic", "symbolic_rules",
                 "cores", "rule_guard", "function_class", "wraps", "doc", "__weakref__")
    # The slots' types (declarations for type checkers; nothing is stored on the class).
    name: str
    impl: Callable[..., Any]
    rules: dict[RuleTable, Any]
    derivs: tuple[Any, ...] | None
    batch_rules: bool
    sympy: Callable[..., Any] | None
    zero_derivative: bool
    linear: bool
    nondiff_argnums: tuple[int, ...]
    elementwise: bool
    sparsity: str | Callable[..., Any] | None
    implements: tuple[Callable[..., Any], ...]
    samples: list[dict[str, Any]] | None
    domain: list[tuple[float, float] | None] | None
    complex_domain: list[tuple[float, float] | None] | None
    holomorphic: bool
    symbolic_rules: bool
    cores: Callable[..., Any] | None
    rule_guard: Callable[..., Any] | None
    function_class: type | None
    wraps: Callable[..., Any] | None
    doc: str | None

    def __init__(self, name: str, impl: Callable[..., Any], *,
                 sympy: Callable[..., Any] | None = None, zero_derivative: bool = False,
                 linear: bool = False, nondiff_argnums: Sequence[int] = (),
                 elementwise: bool = False, sparsity: str | Callable[..., Any] | None = None,
                 implements: Sequence[Callable[..., Any]] = (),
                 samples: list[dict[str, Any]] | None = None,
                 domain: list[tuple[float, float] | None] | None = None,
                 complex_domain: list[tuple[float, float] | None] | None = None,
                 holomorphic: bool = False, symbolic_rules: bool = True,
                 cores: Callable[..., Any] | None = None,
                 rule_guard: Callable[..., Any] | None = None, function_class: type | None = None,
                 wraps: Callable[..., Any] | None = None, doc: str | None = None,
                 batch: Callable[..., Any] | None = None) -> None:
        self.name = name
        self.impl = impl
        self.rules = {JVP: {}, VJP: {}}   # each interpreter's rules, by table (core.rules)
        if batch is not None:
            self.rules[BATCH] = batch      # vmap's batching rule (else derived, dualad.vmap)
        self.batch_rules = True   # rules accept leading batch axes (else: mapped per direction)
        self.derivs = None        # elementwise: ∂ans/∂arg_i compiled (dualad.core.partials.Partial)
        self.sympy = sympy
        self.zero_derivative = zero_derivative
        self.linear = linear
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.elementwise = elementwise
        if isinstance(sparsity, str) and sparsity not in SPARSITY_KINDS:
            raise ValueError(f"primitive {name!r}: unknown sparsity kind {sparsity!r} (one of "
                             f"{', '.join(sorted(SPARSITY_KINDS))}, or a pattern rule)")
        self.sparsity = sparsity
        self.implements = tuple(implements)
        self.samples = samples
        self.domain = domain
        self.complex_domain = complex_domain
        self.holomorphic = holomorphic
        self.symbolic_rules = symbolic_rules
        self.cores = cores
        self.rule_guard = rule_guard
        self.function_class = function_class
        self.wraps = wraps
        self.doc = doc

    def __call__(self, *args: Any, **params: Any) -> Any:
        top = None
        for a in args:
            if isinstance(a, Box):
                t = a._trace
                if top is None or t.level > top.level:
                    top = t
            elif (a.__class__ is _NDARRAY and a.dtype.hasobject or a.__class__ is list
                  or a.__class__ is tuple):    # np.array([x, y]), [x, y]: dualad.frontend.objects
                packed = BUILDERS.object_arrays(args)
                if packed is not None:         # stacked: the call again, on traced arrays
                    return self(*packed, **params)
            elif a.__class__ is not _NDARRAY and isinstance(a, _NDARRAY):
                _refuse_subclass(self, a, args)   # np.matrix, np.ma: dualad.core.array_types
        if top is None:
            return self.impl(*args, **params)
        return top.process(self, args, params)

    def defjvp(self, *rules: Callable[..., Any],
               argnums: Sequence[int] | None = None) -> Primitive:
        r"""Declare the JVP (forward) rules, one per differentiable argument.

        Parameters
        ----------
        *rules : callable
            ``rule_i(t, ans, *args, **params)``: the contribution of argument ``i``'s
            tangent ``t`` to the output's tangent, :math:`\partial f/\partial x_i \cdot
            \dot x_i`, given the primal output ``ans`` and the primal arguments.
            ``None`` (as a rule's result) stands for a zero tangent.
        argnums : sequence of int, optional
            The arguments the rules belong to (default: 0, 1, ... in order).

        Returns
        -------
        Primitive
            This primitive (the calls chain).
        """
        for i, rule in zip(range(len(rules)) if argnums is None else argnums, rules):
            self.rules[JVP][i] = self._hand_rule(rule, i, "jvp")
        return self

    def defvjp(self, *rules: Callable[..., Any],
               argnums: Sequence[int] | None = None) -> Primitive:
        r"""Declare the VJP (reverse) rules, one per differentiable argument.

        Parameters
        ----------
        *rules : callable
            ``rule_i(ct, ans, *args, **params)``: argument ``i``'s cotangent pulled back
            from the output's cotangent ``ct``, :math:`\bar y \cdot \partial f/\partial
            x_i`, summed over the axes broadcasting added (:func:`unbroadcast`) so it has
            the argument's shape. ``None`` (as a rule's result) stands for a zero.
        argnums : sequence of int, optional
            The arguments the rules belong to (default: 0, 1, ... in order).

        Returns
        -------
        Primitive
            This primitive (the calls chain).
        """
        for i, rule in zip(range(len(rules)) if argnums is None else argnums, rules):
            self.rules[VJP][i] = self._hand_rule(rule, i, "vjp")
        return self

    def defderiv(self, *partials: complex | arg | Callable[..., Any]) -> Primitive:
        r"""Declare both rules of an elementwise primitive by its partial derivatives.

        The partials :math:`\partial y/\partial x_i`, compiled once into ``derivs``, are
        the one source of both rules (JVP :math:`\dot y = \sum_i \partial y/\partial
        x_i \cdot \dot x_i`, VJP :math:`\bar x_i = \mathrm{unbroadcast}(\bar y \cdot
        \partial y/\partial x_i)`) and of the reverse sweep's elementwise fast path. A
        later ``defjvp``/``defvjp`` replaces the rule of its argument in every path.

        Parameters
        ----------
        *partials : number, Partial or callable
            One per argument: a number (a constant partial), ``dualad.core.partials.arg(j)``
            (the partial is argument ``j``) or a function ``d(ans, *args)`` written with
            registry operations, elementwise and broadcastable to the output.

        Returns
        -------
        Primitive
            This primitive (the calls chain).
        """
        derivs = tuple(compile_partial(d) for d in partials)
        for i, d in enumerate(derivs):
            if d.fn is not None:
                if BUILDERS.from_partial is None:   # declared while dualad loads: built
                    self.rules[JVP].pop(i, None)      # by install_builders, in order
                    self.rules[VJP].pop(i, None)
                    _PENDING.append((self, i, d))
                else:
                    self.rules[JVP][i], self.rules[VJP][i] = BUILDERS.from_partial(d, i)
        self.derivs = derivs
        # rules built from derivatives broadcast over batch axes
        self.batch_rules = True
        # an argument without a partial keeps its hand-written rules (if any), which the
        # fast path would not see: then the fast path is off
        if any(d.fn is None and (i in self.rules[VJP]) for i, d in enumerate(derivs)):
            self._drop_derivs()
        return self

    def def_linear(self, transpose: Callable[..., Any], *,
                   batched: Callable[..., Any] | None = None) -> Primitive:
        r"""Declare both rules of a primitive linear in its first (only differentiable) argument.

        For a linear map :math:`y = A x` the JVP is the primitive itself applied to the
        tangent, :math:`\dot y = A \dot x`, and the VJP its transpose (adjoint)
        applied to the cotangent, :math:`\bar x = A^T \bar y`.

        Parameters
        ----------
        transpose : callable
            ``transpose(ct, ans, x, **params)``: the adjoint applied to the output's
            cotangent ``ct``, with ``x``'s shape behind ``ct``'s batch axes.
        batched : callable, optional
            ``batched(batch, **params)``, for a primitive whose parameters name axes or
            shapes: the parameters that apply it to a tangent with the leading batch
            axes ``batch`` (reshape: ``shape`` becomes ``batch + shape``). Without it
            the primitive is applied to the tangent as it is (elementwise ones
            broadcast over batch axes).

        Returns
        -------
        Primitive
            This primitive (the calls chain).

        Notes
        -----
        Example, reshape (its transpose is the reshape back to x's shape, behind the
        cotangent's batch axes)::

            reshape_p.def_linear(
                lambda ct, ans, x, shape: reshape_p(ct, shape=batch_shape(ct, ans) + shape_of(x)),
                batched=lambda batch, shape: {"shape": batch + shape})
        """
        self.linear = True
        if batched is not None:
            self.rules[LINEAR_BATCHED] = batched
        else:
            self.rules.pop(LINEAR_BATCHED, None)

        def jvp(t, ans, x, **params):
            if batched is not None:
                nb = ndim_of(t) - ndim_of(x)
                if nb:
                    params = batched(shape_of(t)[:nb], **params)
            return self(t, **params)
        jvp.__name__ = jvp.__qualname__ = f"{self.name}_jvp"
        self.rules[JVP][0] = self._hand_rule(jvp, 0, "jvp")
        self.rules[VJP][0] = self._hand_rule(transpose, 0, "vjp")
        return self

    def defbatch(self, rule: Callable[..., Any]) -> Primitive:
        """Declare the batching rule that ``dualad.vmap`` applies to this primitive.

        Without one, vmap derives a rule (elementwise primitives broadcast,
        ``def_linear``'s ``batched=``) or loops over the batch (see
        :func:`batching_rule`, :func:`is_looped`).

        Parameters
        ----------
        rule : callable
            ``rule(args, batched, **params)``: ``args`` the positional arguments one
            level down, ``batched[i]`` True when ``args[i]`` carries a leading batch
            axis; the output (each element of a tuple output) must carry it. Written
            with registry operations, as every rule. It may return ``NotImplemented``
            for a call it does not cover (vmap then loops).

        Returns
        -------
        Primitive
            This primitive (the calls chain).
        """
        self.rules[BATCH] = rule
        return self

    def def_all(self, *, jvp: Callable[..., Any] | None = None,
                vjp: Callable[..., Any] | None = None) -> Primitive:
        r"""Declare rules over all arguments at once (for a primitive whose derivative
        does not split into one term per argument cheaply: a solve, an integrator, a loop).

        Parameters
        ----------
        jvp : callable, optional
            ``jvp(tangents, ans, *args, **params)``: the output's tangent
            :math:`\dot y = \sum_i \partial f/\partial x_i\,\dot x_i` from the list of
            every argument's tangent (``None`` for an argument that has none).
        vjp : callable, optional
            ``vjp(ct, ans, *args, **params)``: every argument's cotangent, a list with
            ``None`` for the arguments that need none. With ``vjp.takes_wanted = True`` it
            is also given ``wanted=``, the arguments whose cotangents are needed.

        Returns
        -------
        Primitive
            This primitive (the calls chain).
        """
        if jvp is not None:
            self.rules[JVP_ALL] = jvp
        if vjp is not None:
            self.rules[VJP_ALL] = vjp
        return self

    def _hand_rule(self, rule, argnum, kind):
        """A hand-written rule for ``argnum`` becomes the one source of truth for it.

        The elementwise partials (``derivs``) would otherwise still drive the reverse
        sweep's fast path while the general path (anomaly mode, ``create_graph``) and
        forward mode ran the new rule: so a hand-written VJP turns the partials off, and
        a hand-written JVP too (the partials would no longer describe the primitive's
        derivative, which the sparsity detector and the rule checker read). The other
        arguments keep the rules built from their partials, which are correct one
        direction at a time as well. A user's primitive (``rule_guard`` set by
        :func:`dualad.primitive`) also wraps the rule in its shape check."""
        guard = self.rule_guard
        checked = rule if guard is None else guard(self, rule, argnum, kind)
        if self.derivs is not None:
            derivs = self.derivs
            self._drop_derivs()
            # The other direction's rule of this argument came from the old partial: it
            # becomes the transpose of the new rule (linear in its tangent/cotangent), so
            # forward and reverse mode keep computing one derivative.
            if argnum < len(derivs) and derivs[argnum].fn is not None:
                other = self.rules[VJP] if kind == "jvp" else self.rules[JVP]
                if BUILDERS.transpose is None:        # declared while dualad loads
                    other.pop(argnum, None)
                    _PENDING.append((self, argnum, (checked, kind)))
                else:
                    other[argnum] = BUILDERS.transpose(checked, kind, argnum)
        return checked

    def _drop_derivs(self):
        self.derivs = None
        # the rules are no longer all built from partials: hand-written ones of a user's
        # primitive are written for one direction (see dualad.transforms.custom.primitive)
        if self.rule_guard is not None:
            self.batch_rules = False

    def __repr__(self) -> str:
        return f"<primitive {self.name}>"


class _Docstring:
    """``Primitive.__doc__``: the class docstring, or an instance's ``doc`` field (a user's
    primitive shows its function's docstring in ``help``) without a per-instance dict."""

    def __init__(self, text):
        self.text = text

    def __get__(self, prim, owner=None):
        if prim is None or prim.doc is None:
            return self.text
        return prim.doc

    def __set__(self, prim, text):
        prim.doc = text


class _Wrapped:
    """``prim.__wrapped__``: the user's function a primitive was declared from (so
    ``inspect.signature`` shows its signature); absent (AttributeError) on built-in
    primitives and on the class itself."""

    def __get__(self, prim, owner=None):
        if prim is None or prim.wraps is None:
            raise AttributeError("__wrapped__")
        return prim.wraps


Primitive.__doc__ = _Docstring(Primitive.__doc__)
Primitive.__wrapped__ = _Wrapped()

# The sparsity-pattern kinds a primitive may declare (``Primitive.sparsity``); the pattern
# rule of each is in dualad.jacobians.rules.
SPARSITY_KINDS = frozenset({
    "elementwise",   # ans[k] from the arguments' broadcast element k
    "structural",    # each output element is one input element or a zero (impl on labels)
    "reduction",     # sum/max/min/prod over ``axis``: the union over each reduced group
    "cumulative",    # cumsum/cumprod along ``axis``: the union over each prefix
    "slice",         # each output element from its whole 1-D slice along ``axis`` (sort)
    "axes",          # each output element from its whole slice over ``axes`` (fft)
    "matrix",        # a stack of matrix functions: each output from its own matrix
    "untake",        # scatter-add into ``shape`` at ``idx``
    "matmul", "einsum",  # by the index structure of the product
    "dense",         # every output element from every input element (declared, no fallback)
    "sparse_matmul", "sparse_solve",  # by a sparse matrix's stored pattern (scipy.sparse)
})


class Builders:
    """What :class:`Primitive` builds with, supplied by the layers above this module (it
    imports none of them, which keeps it below them with no import cycle). dualad's
    ``__init__`` installs all three once, in one place (:func:`install_builders`), after
    the registry's modules are loaded:

    - ``from_partial(partial, i)``: the (JVP, VJP) pair of argument ``i`` of an
      elementwise primitive from its compiled partial (``dualad.ops.core.elementwise``);
    - ``transpose(rule, kind, i)``: the rule of the other direction as the transpose of
      a hand-written ``rule`` (``dualad.transforms.api``, which sweeps through it);
    - ``object_arrays(args)``: ``args`` with object arrays and lists of traced values
      (``np.array([x, y])``, ``[x, y]``) stacked into one traced array each, or None when
      none holds a traced value (``dualad.frontend.objects``).

    Rules declared before the installation (the built-in primitives, while ``dualad``
    loads) are built by it, in declaration order.
    """

    __slots__ = ("from_partial", "transpose", "object_arrays")

    def __init__(self):
        self.from_partial = self.transpose = None
        self.object_arrays = _no_object_arrays


def _no_object_arrays(args):
    return None


BUILDERS = Builders()
_PENDING: list[tuple[Primitive, int, Any]] = []   # rules declared before the builders


def install_builders(*, from_partial: Callable[..., Any], transpose: Callable[..., Any],
                     object_arrays: Callable[..., Any]) -> None:
    """Install :class:`Builders`' three functions and build the rules declared before.

    Called once, by ``dualad/__init__.py``. A pending derived rule is built only if no
    later declaration replaced it (a hand-written rule of the same argument, which then
    supplies the transpose itself)."""
    BUILDERS.from_partial, BUILDERS.transpose = from_partial, transpose
    BUILDERS.object_arrays = object_arrays
    for prim, i, what in _PENDING:
        if isinstance(what, tuple):              # the transpose of a hand-written rule
            rule, kind = what
            other = prim.rules[VJP] if kind == "jvp" else prim.rules[JVP]
            if i not in other:
                other[i] = transpose(rule, kind, i)
        elif i not in prim.rules[JVP] and i not in prim.rules[VJP]:
            prim.rules[JVP][i], prim.rules[VJP][i] = from_partial(what, i)
    _PENDING.clear()


def sample(*args, domain=None, **params):
    r"""Describe one example call of a primitive, for the rule checker.

    The rule checker (``dualad.verification.check_registry``) calls each primitive at
    its samples, compares its JVP and VJP rules with finite differences in both modes
    and checks that the two are transposes of each other (the dot-product test
    :math:`\langle \bar y, J \dot x\rangle = \langle J^T \bar y, \dot x\rangle`).

    Parameters
    ----------
    *args : tuple or array_like
        One entry per positional argument: a shape tuple (a random float array of that
        shape is drawn, inside ``domain``) or a concrete value used as is. A floating
        array is then a differentiable argument at a chosen point (a well-conditioned
        matrix, say), anything else (masks, integer indices) a non-differentiable one.
    domain : list of tuple, optional
        Per argument, the ``(lo, hi)`` interval random entries are drawn from, or
        ``None`` (the primitive's own ``domain``, else the checker's default).
    **params
        The keyword parameters of the call (axes, shapes, ...).

    Returns
    -------
    dict
        ``{"args": args, "params": params, "domain": domain}``; attach a list of these
        to a primitive as ``prim.samples``.

    See Also
    --------
    Primitive : Its ``samples`` field holds these.

    Examples
    --------
    >>> from dualad.extend import sample
    >>> sample((3,), domain=[(0.5, 2.0)])
    {'args': ((3,),), 'params': {}, 'domain': [(0.5, 2.0)]}
    >>> sample((2, 3), axis=1)["params"]
    {'axis': 1}
    """
    return {"args": args, "params": params, "domain": domain}


def add_note(e, text):
    """Add ``text`` to exception ``e``'s notes (once): which rule was running."""
    if hasattr(e, "add_note") and text not in getattr(e, "__notes__", ()):
        e.add_note(text)


# Lazy families. ``import dualad`` declares the core primitives; the families that need
# SciPy's heavy submodules (scipy.special, scipy.linalg, scipy.sparse, scipy.integrate:
# dualad.ops.special, dualad.ops.linalg, dualad.transforms.implicit, dualad.scipy's integrate and
# sparse) are declared when first needed. The tables below are dicts that load them on a
# miss and before they are walked (iterated, sized, asked ``in``), so whoever reads a
# table sees every declaration, as if all had been imported eagerly. ``FAMILY_LOADERS``
# holds the function that imports the families (set by dualad.core.families, which knows them:
# this module cannot import them, they import it).
FAMILY_LOADERS: list = []   # [guess(key) -> bool, load_all()]
_ABSENT = object()
_families = {"loaded": False, "loader": None}   # loader: the thread importing them
_families_lock = threading.RLock()


def load_families(key=_ABSENT):
    """Declare the lazily loaded families of primitives now (idempotent, thread-safe).

    ``import dualad`` leaves scipy.special's rules, the linear algebra, implicit
    differentiation and the primitives of dualad.scipy.integrate and .sparse for first
    use (docs/architecture.md, "What loads lazily"). The registry's tables call this on a
    miss and before they are walked, so it is never needed for correctness: call it to
    pay the import time up front.

    Parameters
    ----------
    key : callable or str, optional
        What a table lacks. Then first only the family that likely declares it
        (scipy.special's for a SciPy ufunc, the linear algebra's for a ``numpy.linalg``
        function), so a first ``np.linalg.solve`` on a traced value does not also import
        scipy.integrate; when that family is loaded already, every family. Without it,
        every family.

    Returns
    -------
    bool
        True when this call declared something (a table looks again, and calls again
        while it misses); False when all were declared already (perhaps by another thread
        while this one waited: a table looks once more either way) or this thread is
        declaring them right now (a lookup from inside a family's own import sees the
        table as it is, as eager imports did).
    """
    if _families["loaded"] or not FAMILY_LOADERS:   # none yet: dualad is being imported
        return False
    with _families_lock:   # reentrant: a family's import may look a table up
        if _families["loaded"] or _families["loader"] is not None:
            return False
        _families["loader"] = threading.get_ident()
        try:
            guess, load_all = FAMILY_LOADERS
            if key is not _ABSENT and guess(key):
                return True
            load_all()
            _families["loaded"] = True
        finally:
            _families["loader"] = None
    return True


def _before_declaring(frame):
    """A user's declaration (made from a module outside dualad, ``frame`` the caller's)
    first loads the families, so a clash with one of their names is refused now, by name,
    as it was when everything loaded eagerly, not later inside an unrelated first use.
    dualad's own declarations do not: they never clash (tests/dualad/test_lazy_import.py
    loads every family and module together), and a family may itself be what is loading."""
    if _families["loaded"] or _families["loader"] == threading.get_ident():
        return
    module = frame.f_globals.get("__name__") or "" if frame is not None else ""
    if module != "dualad" and not module.startswith("dualad."):
        load_families()


class _Declarations(dict):
    """A registry table that declares the lazy families before it answers "no" or is walked.

    A hit (``table[key]``, ``table.get(key)``) costs what a dict's costs; a miss, an
    iteration, ``len`` or ``in`` first loads the families (:func:`load_families`, once)."""

    __slots__ = ()

    def __missing__(self, key):
        while True:   # look again after every call: another thread may have declared it
            declared = load_families(key)
            if dict.__contains__(self, key):
                return dict.__getitem__(self, key)
            if not declared:
                raise KeyError(key)

    def get(self, key, default=None):
        try:
            return self[key]
        except KeyError:
            return default

    def __contains__(self, key):
        if dict.__contains__(self, key):
            return True
        while True:
            declared = load_families(key)
            if dict.__contains__(self, key):
                return True
            if not declared:
                return False

    def __iter__(self):
        load_families()
        return dict.__iter__(self)

    def __len__(self):
        load_families()
        return dict.__len__(self)

    def keys(self):
        load_families()
        return dict.keys(self)

    def values(self):
        load_families()
        return dict.values(self)

    def items(self):
        load_families()
        return dict.items(self)

    def copy(self):
        load_families()
        return dict(dict.items(self))

    def __repr__(self):
        load_families()
        return dict.__repr__(self)

    def __eq__(self, other):
        load_families()
        return dict.__eq__(self, other)

    __hash__ = None

    def __reduce__(self):   # a pickled table is a plain dict of every declaration
        return dict, (self.copy(),)


REGISTRY: dict[str, Primitive] = _Declarations()

# The NumPy front end's dispatch tables, {NumPy or SciPy callable: the dualad function (a
# primitive or a composition of primitives) that computes it on traced values, with the
# callable's own signature}. Filled only by the declarations: a primitive's
# ``implements=`` keyword (through :func:`register`) and the :func:`implements` decorator
# beside each function. ``Box.__array_ufunc__`` reads the first, ``__array_function__``
# the second (dualad.frontend.dispatch), and dualad.numpy takes its names from both. Like the
# registry they declare the lazy families on a miss.
NUMPY_UFUNCS: dict = _Declarations()
NUMPY_FUNCTIONS: dict = _Declarations()


def implements(*callables):
    """Declare a dualad function as what computes NumPy / SciPy callables on traced values.

    Plain NumPy code is differentiable because NumPy's protocols (``__array_ufunc__``,
    ``__array_function__``) hand a call on a traced value (a box) to the dualad
    function declared here; that function's primitives then record on the tape or
    push tangents forward. The front end's dispatch tables are built from these
    declarations only.

    Parameters
    ----------
    *callables : callable
        The NumPy / SciPy callables (``np.linalg.solve``, ``np.sin``,
        ``scipy.special.erf``) the decorated function computes, with their own
        signatures. Ufuncs go to :data:`NUMPY_UFUNCS`, everything else to
        :data:`NUMPY_FUNCTIONS`.

    Returns
    -------
    callable
        A decorator taking the dualad function (or a :class:`Primitive`) and returning
        it unchanged, after filing it in the tables (and, for a primitive, in its
        ``implements`` field).

    Raises
    ------
    ValueError
        When the decorator is applied and one of ``callables`` is already implemented by
        another function: each callable is declared once, and the message names both.

    See Also
    --------
    register : Files a primitive's ``implements=`` the same way.

    Notes
    -----
    Usage::

        @implements(np.linalg.solve)
        def solve(a, b): ...
    """
    callables = tuple(map(_dispatched, callables))

    def declare(fn):
        _before_declaring(sys._getframe(1))
        for c in callables:
            table = NUMPY_UFUNCS if isinstance(c, np.ufunc) else NUMPY_FUNCTIONS
            old = dict.get(table, c)   # as declared so far (no lazy loading from here)
            if old is not None and old is not fn:
                raise ValueError(f"{getattr(c, '__name__', c)!r} is already implemented by "
                                 f"{old!r}; it cannot also be {fn!r}")
            table[c] = fn
        if isinstance(fn, Primitive):
            fn.implements += tuple(c for c in callables if c not in fn.implements)
        return fn
    return declare


def _dispatched(c):
    """The callable NumPy's protocols hand to a traced value for ``c``. With
    ``SCIPY_ARRAY_API=1`` set, ``scipy.special.erf`` is SciPy's array-API wrapper of
    the ufunc (its ``__wrapped__``); the wrapper asks the argument's namespace, which
    calls the ufunc, and ``__array_ufunc__`` receives the ufunc: that is the key."""
    wrapped = getattr(c, "__wrapped__", None)
    return wrapped if isinstance(wrapped, np.ufunc) and not isinstance(c, np.ufunc) else c


def register(prim: Primitive) -> Primitive:
    """Add a primitive to the registry and file the NumPy callables it declares.

    :data:`REGISTRY` (name -> primitive) is what the rule checker, the coverage table and
    the sparsity rules walk; the primitive's ``implements=`` callables go to the front
    end's dispatch tables (as :func:`implements` files them), so plain NumPy calls on
    traced values reach it. An unregistered primitive still differentiates when called
    directly.

    Parameters
    ----------
    prim : Primitive
        The primitive; its ``name`` must not be registered yet.

    Returns
    -------
    Primitive
        ``prim`` itself, so ``p = register(Primitive(...))`` reads as a declaration.

    Raises
    ------
    ValueError
        If a primitive of the same name is registered, or a NumPy callable it declares
        is already implemented by another function.

    See Also
    --------
    Primitive, implements, sample
    """
    _before_declaring(sys._getframe(1))
    if dict.__contains__(REGISTRY, prim.name):
        raise ValueError(f"a primitive named {prim.name!r} is already registered")
    REGISTRY[prim.name] = prim
    implements(*prim.implements)(prim)
    return prim


def missing_rule(prim, argnum, mode):
    """Build the error an interpreter raises when a primitive has no rule for an argument.

    An interpreter that meets a traced argument whose primitive declares no JVP (forward
    mode) or VJP (reverse mode) rule for it raises this rather than dropping the
    derivative, in JAX's words: "Differentiation rule for 'foo' not implemented".

    Parameters
    ----------
    prim : Primitive
        The primitive called.
    argnum : int
        The position of the traced argument without a rule.
    mode : {"jvp", "vjp"}
        Which rule is missing: ``"jvp"`` (forward) or ``"vjp"`` (reverse).

    Returns
    -------
    NotImplementedError
        The error (not raised: the caller raises it), naming the primitive, the rule's
        kind and the argument.

    Examples
    --------
    >>> from dualad.extend import Primitive, missing_rule
    >>> print(missing_rule(Primitive("f", abs), 0, "vjp"))
    Differentiation rule for 'f' not implemented: no VJP (reverse) rule for argument 0
    """
    kind = "JVP (forward)" if mode == "jvp" else "VJP (reverse)"
    return NotImplementedError(
        f"Differentiation rule for '{prim.name}' not implemented: no {kind} rule "
        f"for argument {argnum}")
