r"""Custom rules for closures: ``custom_jvp`` and ``custom_vjp``, as in JAX.

A function :math:`y = f(x_0, x_1, \dots)` of pytrees of arrays, with a rule of its own
that every transformation uses instead of differentiating its body.

``custom_jvp``: the rule is a JVP, the pushforward
:math:`(x, \dot x) \mapsto (f(x),\ \dot y = \sum_i \partial f/\partial x_i\,\dot x_i)`,
written ``jvp(primals, tangents) -> (primal_out, tangent_out)``. Forward mode calls it;
reverse mode transposes it: since :math:`\dot y` is linear in :math:`\dot x`, the
pullback :math:`\bar y \mapsto \bar x_i = (\partial f/\partial x_i)^T \bar y` is one
reverse sweep through the rule at :math:`\dot x = 0`, seeded with :math:`\bar y`. The rule
runs on the values one level down, so written in NumPy calls it is differentiated again
(second order, Hessians).

``custom_vjp``: the rule is a pair ``fwd(*args) -> (primal_out, residuals)`` and
``bwd(residuals, ct) -> (ct_0, ct_1, ...)``, one cotangent
:math:`\bar x_i = (\partial f/\partial x_i)^T \bar y` per positional argument (a pytree
like the argument, or ``None`` for a zero). Reverse mode only: forward mode raises, as in
JAX. Under reverse-over-reverse ``fwd`` runs again on the traced arguments, so that the
residuals, and ``bwd``'s result, carry the outer level's derivative.

Both are one :class:`dualad.extend.Primitive` each, called on the flattened array leaves
of the differentiable arguments (the outputs packed into one vector when there are
several leaves), so every interpreter (tape, dual numbers, vmap's loop, jit's staging,
checkpoint) treats them like any user primitive. Non-differentiable arguments
(``nondiff_argnums``: ints, strings, callables) travel beside the leaves, never traced.
A function closing over a value that an outer transformation traces raises an error
naming the function and the variable: pass the value as an argument instead.
"""
from __future__ import annotations

import functools
import inspect
import numbers
from typing import Any, Callable, Generic, ParamSpec, Sequence, TypeVar

import numpy as np

from .api import vjp as _vjp
from ..core.primitive import Primitive
from ..core.tracer import Box, shape_of, unguarded_value
from ..core.tree import describe, flatten, flatten_like

__all__ = ["custom_jvp", "custom_vjp"]

P = ParamSpec("P")
R = TypeVar("R")
F = TypeVar("F", bound=Callable[..., Any])


class _Call:
    """One call of a custom function: how to rebuild its arguments from the primitive's
    leaves, the output's structure (filled when the primal runs) and the residuals
    ``fwd`` made for exactly these leaves (a custom_vjp's; reused by the pullback only
    when it is handed those very leaves)."""

    __slots__ = ("nargs", "nondiff", "rebuild", "slots", "static", "out", "saved")

    def __init__(self, nargs, nondiff, rebuild, slots, static):
        self.nargs = nargs          # the number of positional arguments
        self.nondiff = nondiff      # {position: value} of the nondiff arguments
        self.rebuild = rebuild      # the tuple of differentiable arguments from all leaves
        self.slots = slots          # positions, among all leaves, of the primitive's leaves
        self.static = static        # all leaves, non-array ones in place (None elsewhere)
        self.out = None             # (rebuild, shapes, dtypes) of the output
        self.saved = None           # (leaves, residuals) of the last fwd on plain leaves

    def diff_args(self, leaves):
        """The differentiable arguments (a tuple of pytrees) from the primitive's leaves."""
        full = list(self.static)
        for k, v in zip(self.slots, leaves):
            full[k] = v
        return self.rebuild(full)

    def all_args(self, leaves):
        """Every positional argument, the nondiff ones in their places."""
        diff = iter(self.diff_args(leaves))
        return tuple(self.nondiff[i] if i in self.nondiff else next(diff)
                     for i in range(self.nargs))

    def nondiff_values(self):
        return tuple(self.nondiff[i] for i in sorted(self.nondiff))


class _Custom(Generic[P, R]):
    """What custom_jvp and custom_vjp share: argument handling, the primitive, checks."""

    kind = "custom"

    def __init__(self, fun: Callable[P, R], nondiff_argnums: int | Sequence[int] = ()) -> None:
        if not callable(fun):
            raise TypeError(f"{self.kind}: expected a function, got {type(fun).__name__}")
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.name = getattr(fun, "__name__", type(fun).__name__)
        if isinstance(nondiff_argnums, int):
            nondiff_argnums = (nondiff_argnums,)
        try:
            self.nondiff_argnums = tuple(sorted({int(i) for i in nondiff_argnums}))
        except (TypeError, ValueError):
            raise TypeError(f"{self.kind} function '{self.name}': nondiff_argnums must be a "
                            f"tuple of ints, got {nondiff_argnums!r}") from None
        try:
            self._signature = inspect.signature(fun)
        except (TypeError, ValueError):
            self._signature = None
        self._check_argnums_against_signature()
        self._prim = Primitive(f"{self.kind}:{self.name}", self._primal, wraps=fun,
                               doc=fun.__doc__)
        self._prim.batch_rules = False     # rules are written for one direction
        self._prim.def_all(jvp=self._jvp_all, vjp=self._vjp_all)

    def __repr__(self):
        return f"<{self.kind} function {self.name}>"

    def __get__(self, obj, objtype=None):   # a method: bind like a function
        return self if obj is None else functools.partial(self, obj)

    # -- arguments ----------------------------------------------------------------------

    def _check_argnums_against_signature(self):
        sig = self._signature
        if sig is None or any(p.kind is p.VAR_POSITIONAL for p in sig.parameters.values()):
            return
        n = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                for p in sig.parameters.values())
        bad = [i for i in self.nondiff_argnums if not -n <= i < n]
        if bad:
            raise ValueError(f"{self.kind} function '{self.name}': nondiff_argnums {bad} out "
                             f"of range: '{self.name}' takes {n} positional argument(s), so "
                             f"an argnum must be in 0..{n - 1}")

    def _positional(self, args, kwargs):
        """``args`` with ``kwargs`` (and defaults) bound to positions, as JAX resolves them."""
        if self._signature is None:
            if not kwargs:
                return args
            raise TypeError(f"{self.kind} function '{self.name}' was called with keyword "
                            f"arguments {sorted(kwargs)} but its signature cannot be read: "
                            f"pass them positionally")
        try:
            bound = self._signature.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{self.kind} function '{self.name}': {e}") from None
        bound.apply_defaults()
        if bound.kwargs:
            raise TypeError(f"{self.kind} function '{self.name}': keyword-only arguments "
                            f"{sorted(bound.kwargs)} cannot be resolved to positions; make "
                            f"them positional parameters (the rules receive arguments by "
                            f"position)")
        return bound.args

    def _split(self, args):
        """(leaves for the primitive, the call's bookkeeping) for positional ``args``."""
        n = len(args)
        nondiff = {}
        for i in self.nondiff_argnums:
            j = i + n if i < 0 else i
            if not 0 <= j < n:
                raise ValueError(f"{self.kind} function '{self.name}': nondiff_argnums "
                                 f"contains {i}, out of range for a call with {n} positional "
                                 f"argument(s): an argnum must be in 0..{n - 1}")
            nondiff[j] = args[j]
            if _holds_box(args[j]):
                raise TypeError(f"{self.kind} function '{self.name}': argument {j} is in "
                                f"nondiff_argnums but holds a traced value; nondiff "
                                f"arguments are for ints, strings, callables and constant "
                                f"arrays: take it out of nondiff_argnums to differentiate "
                                f"with respect to it")
        diff = tuple(a for i, a in enumerate(args) if i not in nondiff)
        leaves, rebuild = flatten(diff)
        slots, static = [], []
        for k, leaf in enumerate(leaves):
            if _is_array_leaf(leaf):
                slots.append(k)
                static.append(None)
            else:
                static.append(leaf)
        call = _Call(n, nondiff, rebuild, tuple(slots), tuple(static))
        return [leaves[k] for k in slots], call

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        args = self._positional(args, kwargs)
        leaves, call = self._split(args)
        traced = any(isinstance(v, Box) for v in leaves)
        if not traced:
            out = self.fun(*args)
            if _holds_box(out):   # computed from a traced closure: the rule never sees it
                self._check_closures(call)
                raise self._closure_error(None)
            return out
        if not self._has_rule():
            raise TypeError(f"{self.kind} function '{self.name}' was called under a "
                            f"transformation before its rule was defined: "
                            f"{self._define_hint()} first (a call outside any "
                            f"transformation just runs '{self.name}')")
        self._check_closures(call)
        packed = self._prim(*leaves, call=call)
        return _unpack(call, packed)

    # -- the primal ---------------------------------------------------------------------

    def _record_output(self, call, out, what):
        """Check ``out`` (a pytree of arrays), store its structure, return it packed."""
        if out is None:
            raise TypeError(f"{self.kind} function '{self.name}': {what} returned None "
                            f"(a missing return statement?); return the output arrays")
        if _holds_box(out):
            raise self._closure_error(None)
        leaves, rebuild = flatten(out)
        for k, leaf in enumerate(leaves):
            if not _is_array_leaf(leaf):
                raise TypeError(f"{self.kind} function '{self.name}': {what} returned "
                                f"{describe(leaf)} as output leaf {k}; outputs must be "
                                f"arrays or numbers (pytrees of them)")
        # arrays and NumPy scalars as they are (a 0-d result stays a NumPy scalar)
        leaves = [v if isinstance(v, (np.ndarray, np.generic)) else np.asarray(v)[()]
                  for v in leaves]
        if call.out is None:
            call.out = (rebuild, tuple(v.shape for v in leaves), tuple(v.dtype for v in leaves))
        return _pack(leaves)

    # -- closures -----------------------------------------------------------------------

    def _rule_functions(self):
        return ()

    def _check_closures(self, call):
        for fn in (self.fun,) + self._rule_functions():
            name = _traced_free_variable(fn)
            if name is not None:
                raise self._closure_error(name)
        for j, v in call.nondiff.items():
            name = _traced_free_variable(v) if callable(v) else None
            if name is not None:
                raise self._closure_error(name, via=f" (through argument {j}, a function "
                                                    f"in nondiff_argnums)")

    def _closure_error(self, var, via=""):
        what = f"closes over '{var}'{via}, a value" if var is not None else \
            "uses a value (a closure or a global)"
        return TypeError(
            f"{self.kind} function '{self.name}' {what} traced by an outer transformation "
            f"(grad, jvp, vmap or jit of an enclosing function): its derivative through "
            f"that value would be lost. Pass it to '{self.name}' as an argument instead, "
            f"and give its {'tangent' if self.kind == 'custom_jvp' else 'cotangent'} in "
            f"the rule")

    def _check_levels(self, out, inputs):
        """A rule's result may not carry a trace above its inputs' (a closed-over tracer)."""
        top = _top_level(inputs)
        if _top_level(out) > top:
            raise self._closure_error(None)

    # -- shared checks ------------------------------------------------------------------

    def _check_like(self, got, shapes, dtypes, what, where):
        """Flat leaves of ``got`` checked leaf by leaf against ``shapes``/``dtypes``."""
        noun = what.split()[-1] if what.split()[-1] != "output" else "value"
        for k, (g, shape, dtype) in enumerate(zip(got, shapes, dtypes)):
            if g is None:
                continue
            if isinstance(g, (tuple, list, dict)):
                raise TypeError(f"{self.kind} function '{self.name}': {what} leaf {k} is "
                                f"{describe(g)}, but {where} leaf {k} is an array of shape "
                                f"{shape}: give it the same structure")
            have = shape_of(g)
            if have != shape:
                raise ValueError(f"{self.kind} function '{self.name}': {what} leaf {k} has "
                                 f"shape {have}, but {where} leaf {k} has shape {shape}: "
                                 f"return a {noun} of shape {shape}")
            kind = np.result_type(unguarded_value(g)).kind
            if kind not in "fc":
                raise TypeError(f"{self.kind} function '{self.name}': {what} leaf {k} has "
                                f"dtype {np.result_type(unguarded_value(g))}; a "
                                f"{noun} must be floating (or complex)")
            if kind == "c" and np.dtype(dtype).kind != "c":
                raise TypeError(f"{self.kind} function '{self.name}': {what} leaf {k} is "
                                f"complex but {where} leaf {k} is real ({dtype}): return a "
                                f"real {noun}")


class custom_jvp(_Custom[P, R]):
    r"""A function with its own JVP rule, for every transformation (JAX's ``custom_jvp``).

    Decorate :math:`f`, then give its rule with :meth:`defjvp` (or one tangent map per
    argument with :meth:`defjvps`). The rule receives the primal arguments and their
    tangents, pytrees like the arguments, and returns ``(primal_out, tangent_out)``:
    :math:`(f(x),\ \sum_i \partial f/\partial x_i\,\dot x_i)`. Forward mode calls it;
    reverse mode transposes it (the tangent output must be linear in the tangents, as a
    JVP is); the rule itself, written in NumPy calls, is differentiated for higher
    orders. A call outside any transformation just runs ``fun``.

    Parameters
    ----------
    fun : callable
        The function: positional arguments (pytrees of arrays, or the
        ``nondiff_argnums`` ones), a pytree of arrays out. Keyword arguments of a call
        are bound to positions by ``fun``'s signature.
    nondiff_argnums : tuple of int, optional
        Positions of arguments that are not differentiated (ints, strings, callables,
        constant arrays); the rule receives them first: ``jvp(*nondiff, primals,
        tangents)``.

    Returns
    -------
    custom_jvp
        The function, called like ``fun``.

    See Also
    --------
    custom_vjp : The reverse-mode counterpart.
    dualad.primitive : Rules for a primitive (``defjvp``/``defvjp``/``defderiv``).

    Examples
    --------
    :math:`\log(1 + e^x)` with the stable derivative :math:`\sigma(x)`:

    >>> @dualad.custom_jvp
    ... def softplus(x):
    ...     return np.logaddexp(0.0, x)
    >>> @softplus.defjvp
    ... def softplus_jvp(primals, tangents):
    ...     (x,), (x_dot,) = primals, tangents
    ...     return softplus(x), x_dot / (1.0 + np.exp(-x))
    >>> print(float(dualad.grad(softplus)(0.0)))
    0.5
    >>> print(float(dualad.grad(dualad.grad(softplus))(0.0)))
    0.25
    """

    kind = "custom_jvp"

    def __init__(self, fun: Callable[P, R], nondiff_argnums: int | Sequence[int] = ()) -> None:
        super().__init__(fun, nondiff_argnums)
        self.jvp: Callable[..., Any] | None = None
        self._jvps: tuple[Any, ...] | None = None

    def defjvp(self, jvp: F) -> F:
        """Give the JVP rule; usable as a decorator.

        Parameters
        ----------
        jvp : callable
            ``jvp(*nondiff_args, primals, tangents) -> (primal_out, tangent_out)``:
            ``primals`` and ``tangents`` are tuples with one entry per differentiable
            positional argument (pytrees like it); ``tangent_out`` has the output's
            structure and shapes and is linear in ``tangents``.

        Returns
        -------
        callable
            ``jvp`` itself.
        """
        if not callable(jvp):
            raise TypeError(f"custom_jvp function '{self.name}': defjvp expects a function "
                            f"jvp(primals, tangents), got {type(jvp).__name__}")
        self.jvp, self._jvps = jvp, None
        return jvp

    def defjvps(self, *jvps: Callable[..., Any] | None) -> None:
        r"""Give the JVP rule as one tangent map per differentiable argument.

        Parameters
        ----------
        *jvps : callable or None
            ``jvps[i](t_i, primal_out, *primals)``: argument :math:`i`'s contribution
            :math:`\partial f/\partial x_i\,\dot x_i` to the output tangent (``None``:
            the argument does not move the output). The contributions are summed.

        Returns
        -------
        None
        """
        if self.nondiff_argnums:
            raise TypeError(f"custom_jvp function '{self.name}': defjvps cannot be used with "
                            f"nondiff_argnums (as in JAX); give one rule with defjvp")
        self._jvps = tuple(jvps)

        def jvp(*args):
            primals, tangents = args
            out = self.fun(*primals)
            if len(self._jvps) != len(primals):
                raise TypeError(f"custom_jvp function '{self.name}': defjvps was given "
                                f"{len(self._jvps)} rule(s) but the call has "
                                f"{len(primals)} differentiable argument(s): give one rule "
                                f"(or None) per argument")
            total = None
            for rule, t in zip(self._jvps, tangents):
                if rule is None:
                    continue
                contrib = rule(t, out, *primals)
                total = contrib if total is None else _tree_add(total, contrib)
            if total is None:
                total = _tree_zeros(out)
            return out, total
        jvp.__name__ = f"{self.name}_jvps"
        self.jvp = jvp

    def _has_rule(self):
        return self.jvp is not None

    def _define_hint(self):
        return f"decorate its rule with @{self.name}.defjvp (jvp(primals, tangents))"

    def _rule_functions(self):
        return (self.jvp,) if self._jvps is None else self._jvps

    def _primal(self, *leaves, call):
        return self._record_output(call, self.fun(*call.all_args(leaves)), "the function")

    def _tangent(self, call, leaves, tangents):
        """The packed output tangent the rule gives for full (zero-filled) ``tangents``."""
        primals = call.diff_args(leaves)
        tans = call.diff_args(tangents)
        res = self.jvp(*call.nondiff_values(), primals, tans)
        if res is None:
            raise TypeError(f"custom_jvp function '{self.name}': its JVP rule returned None "
                            f"(a missing return statement?); return (primal_out, "
                            f"tangent_out)")
        if not isinstance(res, (tuple, list)) or len(res) != 2:
            raise TypeError(f"custom_jvp function '{self.name}': its JVP rule must return a "
                            f"pair (primal_out, tangent_out), got {describe(res)}")
        primal_out, tangent_out = res
        rebuild, shapes, dtypes = call.out
        like = rebuild([0.0] * len(shapes))
        p_leaves = self._leaves_like(like, primal_out, "primal output of its JVP rule")
        t_leaves = self._leaves_like(like, tangent_out, "tangent output of its JVP rule")
        self._check_like(p_leaves, shapes, dtypes, "primal output", "the function's output")
        if any(t is None for t in t_leaves):
            t_leaves = [np.zeros(s, _tangent_dtype(d)) if t is None else t
                        for t, s, d in zip(t_leaves, shapes, dtypes)]
        self._check_like(t_leaves, shapes, dtypes, "tangent output", "the function's output")
        self._check_levels(t_leaves, list(leaves) + list(tangents))
        return _pack([_as_dtype(t, d) for t, d in zip(t_leaves, dtypes)])

    def _leaves_like(self, like, tree, what):
        try:
            return flatten_like(like, tree, f"custom_jvp function '{self.name}'", what,
                                like_name="the function's output")
        except ValueError as e:
            raise TypeError(str(e)) from None

    def _jvp_all(self, tangents, ans, *leaves, call):
        full = [_zero_tangent(v) if t is None else t for t, v in zip(tangents, leaves)]
        return self._tangent(call, leaves, full)

    def _vjp_all(self, ct, ans, *leaves, call):
        """The transpose of the (linear) JVP rule: one reverse sweep through it at zero
        tangents, seeded with the output cotangent ``ct``."""
        diff = [k for k, v in enumerate(leaves) if _is_inexact(v)]
        zeros = [_zero_tangent(v) for v in leaves]

        def linear(*ts):
            full = list(zeros)
            for k, t in zip(diff, ts):
                full[k] = t
            return self._tangent(call, leaves, full)

        if not diff:
            return [None] * len(leaves)
        _, pullback = _vjp(linear, *(zeros[k] for k in diff))
        cts = pullback(ct)
        out = [None] * len(leaves)
        for k, c in zip(diff, cts):
            out[k] = c
        return out


class custom_vjp(_Custom[P, R]):
    r"""A function with its own VJP rule, for reverse mode (JAX's ``custom_vjp``).

    Decorate :math:`f`, then give :meth:`defvjp` two functions: ``fwd(*args)`` returns
    ``(primal_out, residuals)`` (any pytree the pullback needs), and ``bwd(residuals,
    ct)`` returns a tuple with one cotangent :math:`\bar x_i = (\partial f/\partial
    x_i)^T \bar y` per differentiable positional argument (a pytree like it, or
    ``None`` for a zero). ``grad``, ``vjp``, ``jacrev``, ``vmap``, ``jit`` and
    ``checkpoint`` use it; forward mode (``jvp``, ``jacfwd``) raises (use
    :class:`custom_jvp`). A ``bwd`` written in NumPy calls is differentiated again under
    reverse-over-reverse (``jacrev(grad(f))``). A call outside any transformation just
    runs ``fun``.

    Parameters
    ----------
    fun : callable
        The function: positional arguments (pytrees of arrays, or the
        ``nondiff_argnums`` ones), a pytree of arrays out.
    nondiff_argnums : tuple of int, optional
        Positions of arguments that are not differentiated; ``fwd`` receives every
        argument in its place, ``bwd`` receives them first: ``bwd(*nondiff, residuals,
        ct)``, and returns cotangents for the others only.

    Returns
    -------
    custom_vjp
        The function, called like ``fun``.

    See Also
    --------
    custom_jvp : The forward-mode rule, which reverse mode transposes.
    dualad.Function : The PyTorch-style spelling.

    Examples
    --------
    A gradient clipped to norm 1 on the way back:

    >>> @dualad.custom_vjp
    ... def clip_gradient(x):
    ...     return x
    >>> def clip_fwd(x):
    ...     return x, None
    >>> def clip_bwd(res, ct):
    ...     return (ct / np.maximum(1.0, np.linalg.norm(ct)),)
    >>> clip_gradient.defvjp(clip_fwd, clip_bwd)
    >>> print(dualad.grad(lambda x: np.sum(3.0 * clip_gradient(x)))(np.zeros(2)))
    [0.70710678 0.70710678]
    """

    kind = "custom_vjp"

    def __init__(self, fun: Callable[P, R], nondiff_argnums: int | Sequence[int] = ()) -> None:
        super().__init__(fun, nondiff_argnums)
        self.fwd: Callable[..., Any] | None = None
        self.bwd: Callable[..., Any] | None = None

    def defvjp(self, fwd: Callable[..., Any], bwd: Callable[..., Any]) -> None:
        """Give the VJP rule as a forward pass and a backward pass.

        Parameters
        ----------
        fwd : callable
            ``fwd(*args) -> (primal_out, residuals)``, with the same arguments as the
            function (nondiff ones included, in place).
        bwd : callable
            ``bwd(*nondiff_args, residuals, ct) -> cotangents``: a tuple with one entry
            per differentiable positional argument, a pytree like that argument (or
            ``None`` for a zero); ``ct`` has the output's structure.

        Returns
        -------
        None
        """
        for what, fn in (("fwd", fwd), ("bwd", bwd)):
            if not callable(fn):
                raise TypeError(f"custom_vjp function '{self.name}': defvjp expects "
                                f"functions fwd and bwd, got {type(fn).__name__} as {what}")
        self.fwd, self.bwd = fwd, bwd

    def _has_rule(self):
        return self.fwd is not None

    def _define_hint(self):
        return f"call {self.name}.defvjp(fwd, bwd)"

    def _rule_functions(self):
        return (self.fwd, self.bwd)

    def _forward(self, call, leaves):
        """(packed output, residuals) from ``fwd`` on ``leaves``."""
        res = self.fwd(*call.all_args(leaves))
        if res is None:
            raise TypeError(f"custom_vjp function '{self.name}': its fwd returned None (a "
                            f"missing return statement?); return (primal_out, residuals)")
        if not isinstance(res, (tuple, list)) or len(res) != 2:
            raise TypeError(f"custom_vjp function '{self.name}': its fwd must return a pair "
                            f"(primal_out, residuals), got {describe(res)}")
        return res

    def _primal(self, *leaves, call):
        out, residuals = self._forward(call, leaves)
        packed = self._record_output(call, out, "fwd")
        if _holds_box(residuals):
            raise self._closure_error(None)
        call.saved = (leaves, residuals)
        return packed

    def _jvp_all(self, tangents, ans, *leaves, call):
        raise TypeError(f"can't apply forward-mode differentiation (jvp, jacfwd, hessian's "
                        f"forward pass) to '{self.name}', a custom_vjp function: it has only "
                        f"a reverse-mode rule. Use reverse mode (grad, vjp, jacrev, "
                        f"jacobian(f, mode='rev'), hessian(f, mode='reverse-over-reverse')), "
                        f"or define '{self.name}' with dualad.custom_jvp instead, whose rule "
                        f"serves both modes")

    def _vjp_all(self, ct, ans, *leaves, call):
        saved = call.saved
        if saved is not None and len(saved[0]) == len(leaves) and all(
                a is b for a, b in zip(saved[0], leaves)):
            residuals = saved[1]          # fwd ran on these very (plain) values
        else:                             # traced by an outer level: run fwd at that level
            _, residuals = self._forward(call, leaves)
        rebuild, shapes, dtypes = call.out
        ct_tree = _unpack(call, ct)
        cts = self.bwd(*call.nondiff_values(), residuals, ct_tree)
        if cts is None:
            raise TypeError(f"custom_vjp function '{self.name}': its bwd returned None (a "
                            f"missing return statement?); return a tuple with one "
                            f"cotangent per differentiable argument")
        diff_args = call.diff_args(leaves)
        if not isinstance(cts, (tuple, list)):
            cts = (cts,) if len(diff_args) == 1 else cts
        if not isinstance(cts, (tuple, list)) or len(cts) != len(diff_args):
            got = len(cts) if isinstance(cts, (tuple, list)) else describe(cts)
            raise TypeError(f"custom_vjp function '{self.name}': its bwd returned {got} "
                            f"cotangent(s), but '{self.name}' has {len(diff_args)} "
                            f"differentiable argument(s): return a tuple with one cotangent "
                            f"(or None) per argument")
        full = []
        for i, (c, arg) in enumerate(zip(cts, diff_args)):
            a_leaves = flatten(arg)[0]
            if c is None:
                full.extend([None] * len(a_leaves))
                continue
            try:
                c_leaves = flatten_like(arg, c, f"custom_vjp function '{self.name}'",
                                        f"the cotangent bwd returned for argument {i}",
                                        like_name=f"argument {i}")
            except ValueError as e:
                raise TypeError(str(e)) from None
            full.extend(c_leaves)
        picked = [full[k] for k in call.slots]
        shapes_in = [shape_of(v) for v in leaves]
        dtypes_in = [np.result_type(unguarded_value(v)) for v in leaves]
        self._check_like(picked, shapes_in, dtypes_in, "cotangent", "the argument")
        self._check_levels(picked, list(leaves) + [ct] + flatten(residuals)[0])
        return [None if c is None or not _is_inexact(v) else _as_dtype(c, d)
                for c, v, d in zip(picked, leaves, dtypes_in)]


# -- helpers ----------------------------------------------------------------------------

def _is_array_leaf(v):
    return isinstance(v, (Box, np.ndarray, np.generic, numbers.Number)) and not isinstance(
        v, (str, bytes))


def _is_inexact(v):
    return np.result_type(unguarded_value(v)).kind in "fc"


def _tangent_dtype(dtype):
    return dtype if np.dtype(dtype).kind in "fc" else np.float64


def _zero_tangent(v):
    return np.zeros(shape_of(v), _tangent_dtype(np.result_type(unguarded_value(v))))


def _as_dtype(t, dtype):
    """A tangent (cotangent) in its primal's precision (float32 stays float32)."""
    if np.dtype(dtype).kind not in "fc":
        return t
    have = np.result_type(unguarded_value(t))
    if have == dtype or (have.kind == "c" and np.dtype(dtype).kind != "c"):
        return t
    return t.astype(dtype) if hasattr(t, "astype") else np.asarray(t, dtype)


def _pack(leaves):
    """One array from the output leaves: the leaf itself, or all of them raveled and
    concatenated (so the primitive has one output whatever the output's structure)."""
    if len(leaves) == 1:
        return leaves[0]
    if not leaves:
        return np.zeros(0)
    return np.concatenate([np.reshape(v, (-1,)) for v in leaves])


def _unpack(call, packed):
    """The output pytree from the primitive's packed output (plain or traced)."""
    rebuild, shapes, dtypes = call.out
    if len(shapes) == 1:
        return rebuild([packed])
    leaves, start = [], 0
    for shape, dtype in zip(shapes, dtypes):
        size = int(np.prod(shape, dtype=np.int64))
        piece = np.reshape(packed[start:start + size], shape)
        if np.result_type(unguarded_value(piece)) != dtype:
            piece = piece.astype(dtype)
        leaves.append(piece)
        start += size
    return rebuild(leaves)


def _holds_box(tree):
    if isinstance(tree, Box):
        return True
    if isinstance(tree, (tuple, list, dict)):
        return any(isinstance(v, Box) for v in flatten(tree)[0])
    return False


def _top_level(values):
    top = -1
    for v in values:
        if isinstance(v, (tuple, list, dict)):
            top = max(top, _top_level(flatten(v)[0]))
        elif isinstance(v, Box):
            top = max(top, v._trace.level)
    return top


def _traced_free_variable(fn):
    """The name of a free variable of ``fn`` holding a traced value, or None."""
    fn = getattr(fn, "__func__", fn)
    cells = getattr(fn, "__closure__", None)
    if not cells:
        return None
    names = fn.__code__.co_freevars
    for name, cell in zip(names, cells):
        try:
            value = cell.cell_contents
        except ValueError:      # an empty cell (a variable assigned later)
            continue
        if _holds_box(value):
            return name
    return None


def _tree_add(a, b):
    la, rebuild = flatten(a)
    lb = flatten(b)[0]
    return rebuild([x if y is None else y if x is None else x + y for x, y in zip(la, lb)])


def _tree_zeros(tree):
    leaves, rebuild = flatten(tree)
    return rebuild([_zero_tangent(v) for v in leaves])
