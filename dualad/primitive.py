"""Primitives and the registry: what the interpreters know how to differentiate.

A :class:`Primitive` is declared once, with its NumPy implementation, its JVP and VJP
rules (or the partial derivatives they are built from, :mod:`dualad.partials`), its
SymPy translation, its sparsity-pattern kind and the NumPy callables it implements;
:func:`register` adds it to :data:`REGISTRY` and files those callables in the front
end's tables (:data:`NUMPY_UFUNCS`, :data:`NUMPY_FUNCTIONS`). Calling a primitive finds
the highest-level trace among its arguments (:mod:`dualad.tracer`) and lets that trace
interpret the call.
"""
from __future__ import annotations

import numpy as np

from .partials import compile_partial
from .tracer import Box, ndim_of, shape_of

__all__ = [
    "OBJECT_ARRAYS", "Primitive", "SPARSITY_KINDS", "DerivedRules", "DERIVED_RULES",
    "sample", "add_note", "REGISTRY", "NUMPY_UFUNCS", "NUMPY_FUNCTIONS", "implements",
    "register", "missing_rule"
]

_NDARRAY = np.ndarray
# The hook for object-array and list arguments (``np.array([x, y])``, ``[x, y]`` of traced
# values), set by dualad.objects.install: the arguments with such ones stacked into one
# traced array each, or None when none holds a traced value.
OBJECT_ARRAYS = [lambda args: None]


class Primitive:
    """An operation the interpreters know: its value, derivative rules and declarations.

    Differentiable arguments are positional; non-differentiable ones (axes, shapes,
    indices) are keyword parameters. Every field below is set in ``__init__`` (the
    declarations are its keyword arguments); nothing else is stored on a primitive.

    The value and the rules:

    - ``name``: the registry key; ``impl(*args, **params)``: the NumPy value.
    - ``jvps[i](tangent_i, ans, *args, **params)``: argument ``i``'s contribution to the
      output tangent; ``vjps[i](cotangent, ans, *args, **params)``: the cotangent of
      argument ``i``, unbroadcast to its shape. Tangents and cotangents may carry leading
      batch axes beyond their primal's shape.
    - ``jvp_all(tangents, ans, *args, **params)``: the output tangent from the list of all
      input tangents (``None`` where an input is not traced); ``vjp_all(cotangent, ans,
      *args, **params)``: every argument's cotangent at once (``None`` for a zero). Either
      is ``None`` when the per-argument rules are used.
    - ``derivs``: an elementwise primitive's partials ∂ans/∂arg_i, each compiled once
      (:class:`dualad.partials.Partial`: a constant, "argument j", or a function of
      ``(ans, *args)``; ``None`` for a non-differentiable argument), the one source of
      its JVP, its VJP and the sweep's fast path. ``None`` otherwise.
    - ``batch_rules``: True when the rules accept leading batch axes; False for rules
      written for one direction (users' rules), which are mapped over the batch.
    - ``batch(args, batched, **params)``: the batching rule for ``dualad.vmap`` (set by
      :meth:`defbatch`): ``args`` one level down, ``batched[i]`` True when ``args[i]``
      carries the leading batch axis; the output carries it. ``None``: derived
      (:func:`dualad.vmap.batching_rule`: broadcasting, ``linear_batched``, or a loop).
    - ``linear_batched(batch, **params)``: a linear primitive's parameters for a value
      with the leading batch axes ``batch`` (``def_linear``'s ``batched=``), or None.

    Declarations (keywords of ``__init__``):

    - ``sympy(sp, *args, **params)``: the SymPy translation, for the symbolic oracle.
    - ``zero_derivative``: the derivative is zero everywhere (sign, floor, comparisons);
      its value is a decision on the inputs (see :func:`note_decision`).
    - ``linear``: linear in its differentiable arguments together (its JVP is itself).
    - ``nondiff_argnums``: positional arguments that are not differentiable (a mask, an
      integer array).
    - ``elementwise``: ``ans[k]`` depends on the arguments' (broadcast) element ``k`` only.
    - ``sparsity``: how the Jacobian's sparsity pattern maps the arguments' index sets: a
      kind named in :data:`SPARSITY_KINDS`, or a pattern rule ``rule(prim, pats, primals,
      ans, params)`` (see ``dualad.jacobians.rules``); ``None``: ``"elementwise"`` if
      ``elementwise`` or ``derivs`` says so, else every output element depends on every
      input element (always safe, reported as a fallback).
    - ``implements``: the NumPy / SciPy callables this primitive computes with their own
      signature (``np.sin``); :func:`register` files them in the front end's dispatch
      tables (see :func:`implements`).
    - ``samples``: example calls for the rule checker (a list of :func:`sample`);
      ``domain``: per argument, the ``(lo, hi)`` interval the checker draws from (or
      ``None``); ``complex_domain``: the same for complex samples (a holomorphic
      elementwise primitive); ``holomorphic``: complex-differentiable, so the checker
      tests complex tangents too; ``symbolic_rules``: False when the SymPy oracle should
      not differentiate the rules symbolically (rules that branch on values).
    - ``cores(*shapes, **params)``: for a primitive returning several arrays packed in one,
      the core shape of each output (see ``dualad.ops.linalg.decomp.multi_output``).

    Set by :func:`dualad.primitive` and :class:`dualad.Function` for users' primitives:
    ``rule_guard(prim, rule, argnum, kind)`` wraps each hand-written rule in a shape
    check; ``function_class`` is the ``Function`` subclass a primitive was made from;
    ``wraps`` the user's function (also ``__wrapped__``) and ``doc`` its docstring (also
    ``__doc__``).
    """

    __slots__ = ("name", "impl", "jvps", "vjps", "jvp_all", "vjp_all", "derivs",
                 "batch_rules", "sympy", "zero_derivative", "linear", "nondiff_argnums",
                 "elementwise", "sparsity", "implements", "samples", "domain",
                 "complex_domain", "holomorphic", "symbolic_rules", "cores", "rule_guard",
                 "function_class", "wraps", "doc", "batch", "linear_batched", "__weakref__")

    def __init__(self, name, impl, *, sympy=None, zero_derivative=False, linear=False,
                 nondiff_argnums=(), elementwise=False, sparsity=None, implements=(),
                 samples=None, domain=None, complex_domain=None, holomorphic=False,
                 symbolic_rules=True, cores=None, rule_guard=None, function_class=None,
                 wraps=None, doc=None, batch=None):
        self.name = name
        self.impl = impl
        self.jvps = {}
        self.vjps = {}
        self.jvp_all = None
        self.vjp_all = None
        self.batch_rules = True   # rules accept leading batch axes (else: mapped per direction)
        self.derivs = None        # elementwise: ∂ans/∂arg_i compiled (dualad.partials.Partial)
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
        self.batch = batch             # vmap's batching rule (None: derived, dualad.vmap)
        self.linear_batched = None     # def_linear's ``batched=``

    def __call__(self, *args, **params):
        top = None
        for a in args:
            if isinstance(a, Box):
                t = a._trace
                if top is None or t.level > top.level:
                    top = t
            elif (a.__class__ is _NDARRAY and a.dtype.hasobject or a.__class__ is list
                  or a.__class__ is tuple):    # np.array([x, y]), [x, y]: dualad.objects
                packed = OBJECT_ARRAYS[0](args)
                if packed is not None:         # stacked: the call again, on traced arrays
                    return self(*packed, **params)
        if top is None:
            return self.impl(*args, **params)
        return top.process(self, args, params)

    def defjvp(self, *rules, argnums=None):
        """Register per-argument JVP rules ``rule(t, ans, *args, **params)``."""
        for i, rule in zip(range(len(rules)) if argnums is None else argnums, rules):
            self.jvps[i] = self._hand_rule(rule, i, "jvp")
        return self

    def defvjp(self, *rules, argnums=None):
        """Register per-argument VJP rules ``rule(ct, ans, *args, **params)``."""
        for i, rule in zip(range(len(rules)) if argnums is None else argnums, rules):
            self.vjps[i] = self._hand_rule(rule, i, "vjp")
        return self

    def defderiv(self, *partials):
        """Both rules of an elementwise primitive from its partials ∂ans/∂arg_i, each a
        number, ``dualad.partials.arg(j)`` or a function ``d(ans, *args)`` (see
        :mod:`dualad.partials`).

        The partials, compiled once into ``derivs``, are the one source of both rules and
        of the reverse sweep's elementwise fast path. A later ``defjvp``/``defvjp``
        replaces the rule of its argument in every path: see :meth:`_hand_rule`."""
        derivs = tuple(compile_partial(d) for d in partials)
        for i, d in enumerate(derivs):
            if d.fn is not None:
                self.jvps[i], self.vjps[i] = DERIVED_RULES.from_partial(d, i)
        self.derivs = derivs
        # rules built from derivatives broadcast over batch axes
        self.batch_rules = True
        # an argument without a partial keeps its hand-written rules (if any), which the
        # fast path would not see: then the fast path is off
        if any(d.fn is None and (i in self.vjps) for i, d in enumerate(derivs)):
            self._drop_derivs()
        return self

    def def_linear(self, transpose, *, batched=None):
        """Both rules of a primitive linear in its one differentiable argument (the first):
        the JVP is the primitive itself applied to the tangent, the VJP ``transpose(ct,
        ans, x, **params)`` its transpose (adjoint) applied to the cotangent.

        ``batched(batch, **params)``, for a primitive whose parameters name axes or
        shapes, gives the parameters that apply it to a tangent with the leading batch
        axes ``batch`` (reshape: ``shape`` becomes ``batch + shape``); without it the
        primitive is applied as it is (elementwise ones broadcast over batch axes).

        Example, reshape (its transpose is the reshape back to x's shape, behind the
        cotangent's batch axes)::

            reshape_p.def_linear(
                lambda ct, ans, x, shape: reshape_p(ct, shape=batch_shape(ct, ans) + shape_of(x)),
                batched=lambda batch, shape: {"shape": batch + shape})
        """
        self.linear = True
        self.linear_batched = batched

        def jvp(t, ans, x, **params):
            if batched is not None:
                nb = ndim_of(t) - ndim_of(x)
                if nb:
                    params = batched(shape_of(t)[:nb], **params)
            return self(t, **params)
        jvp.__name__ = jvp.__qualname__ = f"{self.name}_jvp"
        self.jvps[0] = self._hand_rule(jvp, 0, "jvp")
        self.vjps[0] = self._hand_rule(transpose, 0, "vjp")
        return self

    def defbatch(self, rule):
        """Declare the batching rule ``rule(args, batched, **params)`` that ``dualad.vmap``
        applies (see :mod:`dualad.vmap`): ``args`` the positional arguments one level
        down, ``batched[i]`` True when ``args[i]`` carries a leading batch axis; the
        output (each element of a tuple output) must carry it. Written with registry
        operations, as every rule. Without one, vmap derives a rule or loops; a rule
        may also return ``NotImplemented`` for a call it does not cover (vmap loops)."""
        self.batch = rule
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
                other = self.vjps if kind == "jvp" else self.jvps
                other[argnum] = DERIVED_RULES.transpose(checked, kind, argnum)
        return checked

    def _drop_derivs(self):
        self.derivs = None
        # the rules are no longer all built from partials: hand-written ones of a user's
        # primitive are written for one direction (see dualad.custom.primitive)
        if self.rule_guard is not None:
            self.batch_rules = False

    def __repr__(self):
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


class DerivedRules:
    """How :class:`Primitive` builds the rules it derives from a declaration, supplied by
    the layers that own the operations those rules are written with (this module
    imports neither, which keeps it below them with no import cycle):

    - ``from_partial(partial, i)``: the (JVP, VJP) pair of argument ``i`` of an
      elementwise primitive from its compiled partial (set by
      :mod:`dualad.ops.core.elementwise`);
    - ``transpose(rule, kind, i)``: the rule of the other direction as the transpose of
      a hand-written ``rule`` (set by :mod:`dualad.api`, which sweeps through it).
    """

    __slots__ = ("from_partial", "transpose")

    def __init__(self):
        self.from_partial = self.transpose = _not_installed


def _not_installed(*args):  # pragma: no cover - dualad's import installs both
    raise RuntimeError("import dualad first: its rule builders are not installed")


DERIVED_RULES = DerivedRules()


def sample(*args, domain=None, **params):
    """One example call of a primitive, for the rule checker.

    Each positional entry is either a shape tuple (a random float array of that
    shape is drawn, inside ``domain`` — a list of ``(lo, hi)`` per argument or
    ``None``) or a concrete value used as is: a floating array is then a
    differentiable argument at a chosen point (a well-conditioned matrix, say),
    anything else (masks, integer indices) a non-differentiable one.
    ``params`` are the keyword parameters. Attach a list of these to a
    primitive as ``prim.samples``.
    """
    return {"args": args, "params": params, "domain": domain}


def add_note(e, text):
    """Add ``text`` to exception ``e``'s notes (once): which rule was running."""
    if hasattr(e, "add_note") and text not in getattr(e, "__notes__", ()):
        e.add_note(text)


REGISTRY: dict[str, Primitive] = {}

# The NumPy front end's dispatch tables, {NumPy or SciPy callable: the dualad function (a
# primitive or a composition of primitives) that computes it on traced values, with the
# callable's own signature}. Filled only by the declarations: a primitive's
# ``implements=`` keyword (through :func:`register`) and the :func:`implements` decorator
# beside each function. ``Box.__array_ufunc__`` reads the first, ``__array_function__``
# the second (dualad.dispatch), and dualad.numpy takes its names from both.
NUMPY_UFUNCS: dict = {}
NUMPY_FUNCTIONS: dict = {}


def implements(*callables):
    """Declare the decorated dualad function (or primitive) as what computes each NumPy /
    SciPy callable in ``callables`` on traced values::

        @implements(np.linalg.solve)
        def solve(a, b): ...

    Ufuncs go to :data:`NUMPY_UFUNCS`, everything else to :data:`NUMPY_FUNCTIONS`. Each
    callable is declared once: a second declaration raises, naming both."""
    callables = tuple(map(_dispatched, callables))

    def declare(fn):
        for c in callables:
            table = NUMPY_UFUNCS if isinstance(c, np.ufunc) else NUMPY_FUNCTIONS
            old = table.get(c)
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
    """Add ``prim`` to :data:`REGISTRY` (names are unique) and file the NumPy callables it
    declares (``implements=``) in the dispatch tables."""
    if prim.name in REGISTRY:
        raise ValueError(f"a primitive named {prim.name!r} is already registered")
    REGISTRY[prim.name] = prim
    implements(*prim.implements)(prim)
    return prim


def missing_rule(prim, argnum, mode):
    kind = "JVP (forward)" if mode == "jvp" else "VJP (reverse)"
    return NotImplementedError(
        f"Differentiation rule for '{prim.name}' not implemented: no {kind} rule "
        f"for argument {argnum}")
