"""Shape helpers shared by the rules (batch axes, axes, primal values); they use no
primitive (the ones written with primitives, lift and unbroadcast, are in
:mod:`dualad.ops.core.linear`).

Batch axes. A tangent or cotangent may carry ``nb`` leading batch axes in front of
its primal's shape (vector-mode forward sweeps seed many directions at once; a
reverse sweep may pull back a batch of cotangents): a tangent of ``x`` has shape
``batch + x.shape``, a cotangent of ``ans`` has shape ``batch + ans.shape``, and every
rule is polymorphic in ``batch``. The rules never count those axes themselves; they
ask :func:`batch_ndim` (``nb``) or :func:`batch_shape` (``batch``), always comparing a
tangent with its own primal (``batch_ndim(t, x)``) or a cotangent with the output
(``batch_ndim(ct, ans)``), and move the primal's axes behind the batch with
:func:`shift_axes` (axes) or :func:`batch_perm` (a permutation). ``lift`` makes a
batched tangent broadcast against a larger output, ``unbroadcast`` sums a cotangent back
to batch + an argument's shape (both in :mod:`dualad.ops.core.linear`).
"""
from __future__ import annotations

from ..core.tracer import Box, primal_value, shape_of
from ..core.values import is_batched, per_example

__all__ = [
    "batch_ndim", "batch_shape", "normalize_axes", "shift_axes", "batch_perm",
    "primal_tree", "value_only", "plain_argument"
]


def batch_ndim(batched, primal) -> int:
    """``nb``: how many leading batch axes the tangent or cotangent ``batched`` carries
    beyond the shape of ``primal`` (the value it is a tangent or cotangent of)."""
    return len(shape_of(batched)) - len(shape_of(primal))


def batch_shape(batched, primal) -> tuple:
    """``batch``: the leading batch axes of ``batched`` beyond ``primal``'s shape, as a
    shape (``()`` when unbatched)."""
    s = shape_of(batched)
    return s[:len(s) - len(shape_of(primal))]


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


def shift_axes(axes: tuple, nb: int) -> tuple:
    """The primal's (non-negative) ``axes`` as axes of a value with ``nb`` batch axes
    in front."""
    return tuple(a + nb for a in axes)


def batch_perm(perm: tuple, nb: int) -> tuple:
    """The permutation ``perm`` of a primal's axes as a permutation of a value with
    ``nb`` batch axes in front (the batch axes stay where they are)."""
    return tuple(range(nb)) + tuple(p + nb for p in perm)


def primal_tree(x):
    """``x`` with every traced value, also inside (nested) lists and tuples, replaced by
    its primal value."""
    if isinstance(x, Box):
        return primal_value(x)
    if type(x) is list or type(x) is tuple:
        return type(x)(primal_tree(v) for v in x)
    return x


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
