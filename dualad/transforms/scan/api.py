"""``dualad.scan``: a loop the differentiation understands as a loop (JAX's ``lax.scan``).

    scan(step, carry, xs) = (c_l, [y_0, ..., y_{l-1}])
    where  (c_{k+1}, y_k) = step(c_k, xs[k]),  c_0 = carry

``checkpoints=None`` runs the loop in Python on whatever values come in, so every
transformation records every step (reverse mode keeps all ``l`` steps' tapes); under a
jit trace the loop is one equation instead (:mod:`dualad.transforms.scan.staged`).
``checkpoints="binomial"`` makes the loop ONE primitive whose reverse rule follows
Griewank's binomial schedule (:mod:`dualad.revolve`): at most ``snapshots`` carries are
stored and the fewest steps are recomputed (:mod:`dualad.transforms.scan.rules`). docs/scan.md.
"""
from __future__ import annotations

import math
import operator
from typing import TYPE_CHECKING, Any, Literal, overload

import numpy as np

from ...frontend.objects import traced_outputs
from ...core.tracer import Box
from ...core import tree
from .closure import aval, trace_step
from .rules import _stack, scan_primitive
from .staged import staged_scan

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TypeVar

    _C = TypeVar("_C")                                      # the carry
    _A = TypeVar("_A", bound="np.ndarray[Any, Any]")        # an array y: stacked, an array
    _S = TypeVar("_S", bound="np.generic")                  # a NumPy scalar y: stacked, an array

__all__ = ["scan", "default_snapshots", "CHECKPOINTS"]

CHECKPOINTS = (None, "binomial")


def _fname(f):
    return getattr(f, "__name__", type(f).__name__)


def default_snapshots(length: int) -> int:
    """``ceil(sqrt(l))`` (at least 1): memory and recomputation both grow like √l
    (each step is advanced about twice, r = 2, once ``C(s + 2, 2) >= l``)."""
    return max(1, math.isqrt(max(length - 1, 0)) + 1) if length else 1


@overload
def scan(step: Callable[[_C, Any], tuple[_C, _A]], carry: _C, xs: Any = None,
         length: int | None = None, checkpoints: Literal["binomial"] | None = None,
         snapshots: int | None = None, reverse: bool = False) -> tuple[_C, _A]: ...
@overload
def scan(step: Callable[[_C, Any], tuple[_C, _S]], carry: _C, xs: Any = None,
         length: int | None = None, checkpoints: Literal["binomial"] | None = None,
         snapshots: int | None = None, reverse: bool = False
         ) -> tuple[_C, np.ndarray[Any, np.dtype[_S]]]: ...
@overload
def scan(step: Callable[[_C, Any], tuple[_C, Any]], carry: _C, xs: Any = None,
         length: int | None = None, checkpoints: Literal["binomial"] | None = None,
         snapshots: int | None = None, reverse: bool = False) -> tuple[_C, Any]: ...
def scan(step: Callable[[Any, Any], tuple[Any, Any]], carry: Any, xs: Any = None,
         length: int | None = None, checkpoints: Literal["binomial"] | None = None,
         snapshots: int | None = None, reverse: bool = False) -> tuple[Any, Any]:
    r"""Loop ``step`` over the leading axis of ``xs``, carrying ``carry`` (JAX's ``lax.scan``).

    With :math:`c_0` = ``carry`` and :math:`(c_{k+1}, y_k) = \mathrm{step}(c_k, x_k)`
    for :math:`k = 0, \dots, l-1`, returns :math:`(c_l, [y_0, \dots, y_{l-1}])`, the
    :math:`y_k` stacked on a new leading axis. A loop the differentiation
    understands as a loop: with ``checkpoints="binomial"`` reverse mode stores at
    most ``snapshots`` carries (:math:`s`, the initial one included) plus one
    step's tape, instead of all :math:`l` steps' tapes, and recomputes the
    fewest steps any schedule can (Griewank's binomial checkpointing, the revolve
    schedule):

    .. math::

        t(l, s) = r\,l - \binom{s + r}{r - 1}, \qquad
        r = \min\Bigl\{\, r : \binom{s + r}{s} \ge l \,\Bigr\},

    extra step evaluations (:func:`dualad.revolve.forward_steps`), no step
    recomputed more than :math:`r` times. The default :math:`s = \lceil\sqrt l\,\rceil`
    makes memory and recomputation both grow like :math:`\sqrt l`.

    Parameters
    ----------
    step : callable
        ``step(carry, x) -> (carry, y)``. The new carry keeps the structure,
        shapes and dtypes of the old; ``y`` may be None (then ``ys`` is None).
        Carries, ``x`` and ``y`` may be pytrees (tuples, lists, dicts) of arrays.
    carry : array_like or pytree
        The initial carry :math:`c_0`.
    xs : array_like or pytree, optional
        Sliced along the leading axis, one slice per step; None (then ``x`` is
        None) needs ``length``.
    length : int, optional
        The number of steps; must agree with ``xs``'s leading length if both
        are given.
    checkpoints : {None, "binomial"}, default None
        None: the loop runs in Python and every transformation records every
        step (as an explicit loop would); under a :func:`dualad.jit` trace
        (a carry, an ``x`` or a value ``step`` closes over is traced by it)
        the loop is instead one loop equation whose derivatives are loops too:
        ``step`` is traced once, at the first step (its Python side effects
        happen then, once), unless that trace branches on a traced value
        (then the Python loop). ``"binomial"``: the loop is one
        primitive whose reverse rule follows the binomial schedule; ``step``
        is traced once, at the first iteration (its Python side effects happen
        then; the values of enclosing transformations it closes over become
        inputs of the loop), and replayed at every step.
    snapshots : int, optional
        With ``checkpoints="binomial"``, the number of stored carries, at least
        1 (default :math:`\lceil\sqrt{l}\,\rceil`).
    reverse : bool, default False
        Run from the last element of ``xs`` to the first (``ys`` keep ``xs``'s
        order).

    Returns
    -------
    carry : array_like or pytree
        The final carry :math:`c_l`.
    ys : array_like, pytree or None
        The :math:`y_k` stacked on a leading axis of length :math:`l`.

    Raises
    ------
    TypeError
        If ``step`` is not callable, does not return a pair, or changes the
        carry's structure, shapes or dtypes (the error names the leaf).
    ValueError
        If ``checkpoints`` is unknown, ``snapshots`` is given without
        ``checkpoints="binomial"`` or is below 1, the leaves of ``xs`` have
        different lengths, or neither ``xs`` nor ``length`` gives the length.

    See Also
    --------
    dualad.checkpoint : Recompute one block instead of storing it.
    dualad.revolve.schedule : The binomial schedule itself.

    Examples
    --------
    Cumulative products, the carry before each step stacked:

    >>> c, ys = dualad.scan(lambda c, x: (c * x, c), 1.0, np.array([1.0, 2.0, 3.0, 4.0]))
    >>> print(float(c), ys)
    24.0 [1. 1. 2. 6.]

    The same derivative with every step stored or with 4 stored carries and 14
    recomputed steps:

    >>> def loss(x0, checkpoints=None):
    ...     step = lambda c, x: (np.sin(c) * x, None)
    ...     c, _ = dualad.scan(step, x0, np.full(10, 1.1), checkpoints=checkpoints)
    ...     return c
    >>> g_all = dualad.grad(loss)(0.5)
    >>> g_binomial = dualad.grad(lambda x0: loss(x0, "binomial"))(0.5)
    >>> print(np.isclose(g_all, g_binomial), dualad.revolve.forward_steps(10, 4))
    True 14
    """
    name = _fname(step)
    api = f"dualad.scan({name})"
    if not callable(step):
        raise TypeError(f"dualad.scan: step must be a function (carry, x) -> (carry, y), got "
                        f"{type(step).__name__}")
    if checkpoints not in CHECKPOINTS:
        raise ValueError(f"{api}: checkpoints={checkpoints!r} is not one of None (store every "
                         f"step) or 'binomial' (revolve, with snapshots=s)")
    x_leaves, x_rebuild = ([], lambda leaves: None) if xs is None else tree.flatten(xs)
    l = _length(api, x_leaves, xs, length)
    if checkpoints is None and snapshots is not None:
        raise ValueError(f"{api}: snapshots={snapshots!r} applies to checkpoints='binomial' "
                         f"only; pass checkpoints='binomial' too, or drop snapshots")
    if checkpoints == "binomial":
        snapshots = default_snapshots(l) if snapshots is None else _snapshots(api, snapshots)
    if checkpoints is not None:   # np.array([a, b]) of traced scalars: one traced array
        carry, xs = traced_outputs(carry), traced_outputs(xs)
        x_leaves, x_rebuild = ([], x_rebuild) if xs is None else tree.flatten(xs)
    c_leaves, c_rebuild = tree.flatten(carry)
    c_structure = (_structure(carry), tree.describe(carry))
    c_avals = [_leaf_aval(api, "the carry's", j, c, checkpoints) for j, c in enumerate(c_leaves)]

    def split_out(out):
        return _split_out(api, out, c_structure, c_avals)

    def x_at(i):
        return [x[i] for x in x_leaves]

    if l == 0:
        return carry, _empty_ys(step, carry, x_leaves, x_rebuild, split_out)
    if checkpoints is None:
        out = staged_scan(step, name, c_leaves, c_rebuild, x_leaves, x_rebuild, split_out,
                          l, reverse)   # under a jit trace: one loop equation
        if out is not None:
            return out
        return _python_loop(step, carry, x_at, x_rebuild, l, reverse, split_out)
    order = range(l - 1, -1, -1) if reverse else range(l)
    x_first = x_at(order[0])
    traced = trace_step(step, name, c_leaves, c_rebuild, x_first, x_rebuild, split_out)
    prim, unpack = scan_primitive(traced, name, [aval(v) for v in traced.lifted], c_avals,
                                  [_leaf_aval(api, "xs's", j, x, checkpoints)
                                   for j, x in enumerate(x_first)],
                                  [_leaf_aval(api, "y's", j, y, checkpoints)
                                   for j, y in enumerate(traced.y_leaves)],
                                  l, snapshots, reverse,
                                  [isinstance(x, Box) for x in x_leaves])
    lifted, y_tree = traced.lifted, traced.y_tree
    traced.release()   # the primitive keeps the program only, not the trace's example values
    outs = [o[()] if isinstance(o, np.ndarray) and o.ndim == 0 else o   # as a loop gives
            for o in unpack(prim(*lifted, *c_leaves, *x_leaves))]
    n = len(c_leaves)
    ys = None if y_tree is None else y_tree(outs[n:])
    return c_rebuild(outs[:n]), ys


def _python_loop(step, carry, x_at, x_rebuild, l, reverse, split_out):
    ys = []
    y_spec = None
    for i in (range(l - 1, -1, -1) if reverse else range(l)):
        carry, y = split_out(step(carry, x_rebuild(x_at(i))))
        spec = _structure(y)
        if y_spec is None:
            y_spec = spec
        elif spec != y_spec:
            raise ValueError(f"dualad.scan: step returned y as {tree.describe(y)} at step {i}, "
                             f"but {y_spec!r} before; every step's y must have one structure")
        ys.append(y)
    if y_spec is None or ys[0] is None:
        return carry, None
    if reverse:
        ys.reverse()
    per_step = [tree.flatten(y)[0] for y in ys]
    rebuild = tree.flatten(ys[0])[1]
    return carry, rebuild([_stack([p[j] for p in per_step]) for j in range(len(per_step[0]))])


def _empty_ys(step, carry, x_leaves, x_rebuild, split_out):
    """ys of a zero-length scan: empty arrays of y's shapes, which only a call of ``step``
    tells (at plain values of the carry and zeros for x, its output discarded)."""
    from .closure import example_value
    plain_c = tree.tree_map(example_value, carry)
    x0 = [np.zeros(np.shape(example_value(x))[1:], np.result_type(example_value(x)))
          for x in x_leaves]
    with np.errstate(all="ignore"):
        _, y = split_out(step(plain_c, x_rebuild(x0)))
    if y is None:
        return None
    return tree.tree_map(lambda v: np.zeros((0,) + np.shape(v), np.result_type(v)), y)


def _length(api, x_leaves, xs, length):
    if length is not None:
        try:
            length = operator.index(length)
        except TypeError:
            raise TypeError(f"{api}: length must be an int, got {length!r}") from None
        if length < 0:
            raise ValueError(f"{api}: length must be >= 0, got {length}")
    if xs is None or not x_leaves:
        if length is None:
            raise ValueError(f"{api}: with xs=None (or xs without arrays) give length=, the "
                             f"number of steps")
        return length
    lengths = []
    for j, x in enumerate(x_leaves):
        shape = tuple(np.shape(x)) if not isinstance(x, Box) else x.shape
        if not shape:
            raise ValueError(f"{api}: xs leaf {j} is 0-d (shape ()); each leaf of xs is "
                             f"sliced along its leading axis, one slice per step")
        lengths.append(shape[0])
    if len(set(lengths)) > 1:
        raise ValueError(f"{api}: the leaves of xs have different leading lengths "
                         f"{lengths}; they are sliced together, one slice per step")
    if length is not None and length != lengths[0]:
        raise ValueError(f"{api}: length={length} but xs has leading length {lengths[0]}")
    return lengths[0]


def _snapshots(api, s):
    if isinstance(s, bool) or not isinstance(s, (int, np.integer)):
        raise TypeError(f"{api}: snapshots must be an int >= 1 (the stored carries, the "
                        f"initial one included), got {s!r}")
    if s < 1:
        raise ValueError(f"{api}: snapshots must be >= 1 (the stored carries, the initial one "
                         f"included), got {s}")
    return int(s)


def _structure(t):
    """A hashable description of a pytree's containers (not its leaves): the registry's
    structure, registered classes' auxiliary data included."""
    return tree.structure(t)


_NUMBERS = (bool, int, float, complex, np.ndarray, np.generic, Box)


def _leaf_aval(api, what, j, x, checkpoints):
    """``(shape, dtype)`` of a leaf: an array or a number. The binomial primitive carries
    nothing else; checkpoints=None's Python loop carries anything (None, an object array
    of traced scalars), compared by type and dtype."""
    numeric = isinstance(x, _NUMBERS) and np.result_type(
        x.dtype if isinstance(x, Box) else x).kind in "biufc"
    if not numeric and checkpoints is None:   # the Python loop carries anything
        return ("a", type(x).__name__), (None if x is None else np.result_type(
            getattr(x, "dtype", object)))
    if not numeric:
        extra = " with checkpoints='binomial'" if x is None else ""
        raise TypeError(f"{api}: {what} leaf {j} is {type(x).__name__} {x!r:.40}{extra}; the "
                        f"loop carries and stacks arrays and numbers. Keep other values out "
                        f"of the carry and y (close over them in step)")
    return aval(x)


def _split_out(api, out, c_structure, c_avals):
    """``(carry', y)`` of a step's return value, checked against the carry."""
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        what = "None (did it forget to `return`?)" if out is None else tree.describe(out)
        raise TypeError(f"{api}: step must return a pair (carry, y), got {what}; return "
                        f"(carry, None) when there is nothing to stack")
    carry, y = out
    if _structure(carry) != c_structure[0]:
        raise TypeError(f"{api}: step returned a carry with another structure than the one it "
                        f"was given: {tree.describe(carry)} instead of {c_structure[1]}; the "
                        f"carry keeps its structure (containers, keys, lengths) from step "
                        f"to step")
    for j, (c, (shape, dtype)) in enumerate(zip(tree.flatten(carry)[0], c_avals)):
        s, d = _leaf_aval(api, "the new carry's", j, c, None)
        if s != shape or d != dtype:
            fix = (f"cast the initial carry, or the new one: c.astype({dtype})" if s == shape
                   else "reshape or reduce the new value, or start from a carry of the shape "
                        "the step returns")
            raise TypeError(f"{api}: step returned carry leaf {j} with shape {s} and dtype "
                            f"{d}, but the carry it was given has shape {shape} and dtype "
                            f"{dtype}; the carry keeps its shapes and dtypes from step to step "
                            f"({fix})")
    return carry, y
