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

The two classes are in :mod:`.custom_jvp` and :mod:`.custom_vjp`; this module holds what
they share (:class:`CustomFunction`: the call, the flattening, the checks). Both are one
:class:`dualad.extend.Primitive` each, called on the flattened array leaves
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

from ..core.primitive import Primitive
from ..core.tracer import Box, shape_of, unguarded_value
from ..core.tree import describe, flatten, is_leaf

# What custom_jvp.py and custom_vjp.py share (this module holds no public name of dualad).
__all__ = ["CustomFunction", "P", "R", "F", "as_dtype", "holds_box", "is_inexact", "pack",
           "tangent_dtype", "tree_add", "tree_zeros", "unpack", "zero_tangent"]

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


class CustomFunction(Generic[P, R]):
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
            if holds_box(args[j]):
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
            if holds_box(out):   # computed from a traced closure: the rule never sees it
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
        return unpack(call, packed)

    # -- the primal ---------------------------------------------------------------------

    def _record_output(self, call, out, what):
        """Check ``out`` (a pytree of arrays), store its structure, return it packed."""
        if out is None:
            raise TypeError(f"{self.kind} function '{self.name}': {what} returned None "
                            f"(a missing return statement?); return the output arrays")
        if holds_box(out):
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
        return pack(leaves)

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


def _is_array_leaf(v):
    return isinstance(v, (Box, np.ndarray, np.generic, numbers.Number)) and not isinstance(
        v, (str, bytes))


def is_inexact(v):
    return np.result_type(unguarded_value(v)).kind in "fc"


def tangent_dtype(dtype):
    return dtype if np.dtype(dtype).kind in "fc" else np.float64


def zero_tangent(v):
    return np.zeros(shape_of(v), tangent_dtype(np.result_type(unguarded_value(v))))


def as_dtype(t, dtype):
    """A tangent (cotangent) in its primal's precision (float32 stays float32)."""
    if np.dtype(dtype).kind not in "fc":
        return t
    have = np.result_type(unguarded_value(t))
    if have == dtype or (have.kind == "c" and np.dtype(dtype).kind != "c"):
        return t
    return t.astype(dtype) if hasattr(t, "astype") else np.asarray(t, dtype)


def pack(leaves):
    """One array from the output leaves: the leaf itself, or all of them raveled and
    concatenated (so the primitive has one output whatever the output's structure)."""
    if len(leaves) == 1:
        return leaves[0]
    if not leaves:
        return np.zeros(0)
    return np.concatenate([np.reshape(v, (-1,)) for v in leaves])


def unpack(call, packed):
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


def holds_box(tree):
    if isinstance(tree, Box):
        return True
    if not is_leaf(tree):
        return any(isinstance(v, Box) for v in flatten(tree)[0])
    return False


def _top_level(values):
    top = -1
    for v in values:
        if not is_leaf(v):
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
        if holds_box(value):
            return name
    return None


def tree_add(a, b):
    la, rebuild = flatten(a)
    lb = flatten(b)[0]
    return rebuild([x if y is None else y if x is None else x + y for x, y in zip(la, lb)])


def tree_zeros(tree):
    leaves, rebuild = flatten(tree)
    return rebuild([zero_tangent(v) for v in leaves])
