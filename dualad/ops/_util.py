"""Shape helpers shared by the rules (batch axes, axes, primal values); they use no
primitive (the ones written with primitives, lift and unbroadcast, are in
:mod:`dualad.ops.core.linear`).

Batch axes: the convention (batch axes lead; an axis ``a`` of the primal is axis
``a + nb`` of its tangent or cotangent) and its helpers live in
:mod:`dualad.core.batch_axes` (``batch_ndim``, ``batch_shape``, ``batched_axis``,
``shift_axes``, ``batch_perm``), where the rules import them from. ``lift`` makes a batched
tangent broadcast against a larger output, ``unbroadcast`` sums a cotangent back to
batch + an argument's shape (both in :mod:`dualad.ops.core.linear`).
"""
from __future__ import annotations

from ..core.tracer import primal_value, shape_of
from ..core.values import is_batched, per_example

__all__ = [
    "normalize_axes", "value_only", "plain_argument"
]


def normalize_axes(axis, ndim: int) -> tuple:
    """``axis`` (None, int or tuple) as a sorted tuple of non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    if not isinstance(axis, (tuple, list)):
        axis = (axis,)
    out = []
    for a in axis:
        a = int(a)
        if not -ndim <= a < max(ndim, 1):
            raise ValueError(f"axis {a} is out of bounds for an array of dimension {ndim}")
        out.append(a % ndim if ndim else 0)
    return tuple(sorted(out))


def value_only(fn):
    """``fn`` called on the primal values of its arguments (keys in a tuple, as
    ``np.lexsort((x, y))`` takes them, included): a function of values alone (indices,
    counts, predicates), whose derivative is 0. Under vmap it is called example by
    example (:func:`dualad.core.values.per_example`): the primal value of a batched
    argument holds the whole batch, which ``fn`` would take for one example."""
    def call(*args, **kwargs):
        return per_example(fn, args, kwargs, fn.__name__)
    call.__name__ = fn.__name__
    call.__doc__ = fn.__doc__
    return call


def plain_argument(fname, argname, x):
    """The primal value of a non-differentiable argument (indices, repeats, a condition)
    that every example must share: a batched one (vmap: one per example) raises, naming
    the function, rather than letting the whole batch pass for one example."""
    if is_batched(x):
        raise NotImplementedError(
            f"{fname}: argument {argname} is batched by vmap (one per example, per-example "
            f"shape {shape_of(x)}); {fname} with per-example {argname} is not supported. "
            f"Select with a mask instead, which keeps every example's shape (np.where(cond, "
            f"x, 0)), or call {fname} outside vmap")
    return primal_value(x)
