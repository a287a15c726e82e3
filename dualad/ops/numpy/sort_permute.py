"""sort's derivative as a primitive: the tangent taken in the order that sorts x.

``sort`` moves each slice's entries along ``axis`` by the permutation π that sorts x
(stable), so its derivative is that permutation (π is locally constant in x), with each
group of tied values averaged (the symmetric convention of dualad's sort: at a tie the
derivative is the mean of the one-sided ones):

    sort_permute(t, x; axis, inverse=False) = T(t[π])          (the JVP of sort)
    sort_permute(u, x; axis, inverse=True)  = (T u)[π⁻¹]       (its transpose, the VJP)

T averages the tied groups of sorted x, a symmetric projection, so each map is the other's
transpose. x is a non-differentiable argument (the permutation's derivative is 0), t a
linear one. Declaring the permutation as a primitive of x, rather than computing π from
x's value inside sort's rules, is what lets vmap batch sort's derivative: under vmap each
example sorts by its own permutation, and the batching rule gives x and t a batch axis
both.

``axis`` is negative (counted from the end), so t may carry leading axes x has not (a
batch of tangents, vmap's batch axis): x broadcasts against t from the right.
"""
from __future__ import annotations

import numpy as np

from ...core.primitive import Primitive, register, sample
from ...core.tracer import CONCRETE, Box, ndim_of, note_decision, primal_value
from ...core.values import staged_value
from ..core.batch_ops import align_stacks

__all__ = ["sort_permute_p", "sort_tangent"]


def _tie_average(y, s):
    """``y`` with each run of equal values of ``s`` (sorted along the last axis, s
    broadcast to y) replaced by the run's mean; exact sums (``np.add.reduceat``)."""
    s = np.broadcast_to(s, y.shape)
    starts = np.ones(y.shape, dtype=bool)
    starts[..., 1:] = s[..., 1:] != s[..., :-1]
    if starts.all() or y.size == 0:
        return y
    flat = starts.ravel()
    first = np.flatnonzero(flat)              # every row starts a run: runs never span rows
    sums = np.add.reduceat(y.reshape(-1), first)
    counts = np.diff(np.r_[first, flat.size]).astype(np.result_type(y.real.dtype, np.float16))
    gid = np.cumsum(flat) - 1
    return (sums / counts)[gid].reshape(y.shape)


def _impl(t, x, axis, inverse):
    t, x = np.asarray(t), np.asarray(x)
    perm = np.argsort(x, axis=axis, kind="stable")
    shape = np.broadcast_shapes(t.shape, x.shape)
    t = np.moveaxis(np.broadcast_to(t, shape), axis, -1)
    perm = np.moveaxis(np.broadcast_to(perm, shape), axis, -1)
    s = np.take_along_axis(np.moveaxis(np.broadcast_to(x, shape), axis, -1), perm, axis=-1)
    if not inverse:
        out = _tie_average(np.take_along_axis(t, perm, axis=-1), s)
    else:
        out = np.empty(t.shape, dtype=t.dtype)
        np.put_along_axis(out, perm, _tie_average(t, s), axis=-1)
    return np.moveaxis(out, -1, axis)


sort_permute_p = register(Primitive("sort_permute", _impl, linear=True, nondiff_argnums=(1,),
                                    sparsity="slice"))
# Linear in t; x only chooses the permutation: no derivative in x.
sort_permute_p.defjvp(lambda tt, ans, t, x, axis, inverse:
                      sort_permute_p(tt, x, axis=axis, inverse=inverse))
sort_permute_p.defvjp(lambda ct, ans, t, x, axis, inverse:
                      sort_permute_p(ct, x, axis=axis, inverse=not inverse))
# vmap: the trailing -axis axes are the sorted slices' (and the ones behind them); the batch
# axes line up in front of both operands' leading axes
sort_permute_p.defbatch(lambda args, batched, axis, inverse: sort_permute_p(
    *align_stacks(args, batched, (-axis, -axis)), axis=axis, inverse=inverse))
sort_permute_p.samples = [
    sample((4,), np.array([0.3, -1.0, 2.0, 0.5]), axis=-1, inverse=False),
    sample((4,), np.array([0.3, -1.0, 2.0, 0.5]), axis=-1, inverse=True),
    sample((2, 3), np.array([[1.0, 2.0, 1.0], [3.0, 0.0, -3.0]]), axis=-1, inverse=False),
    sample((2, 3), np.array([[1.0, 2.0, 1.0], [3.0, 0.0, -3.0]]), axis=-2, inverse=True),
]


def sort_tangent(t, x, axis, inverse=False):
    """sort's JVP (``inverse=False``: t in x's sorted order, ties averaged) or VJP
    (``inverse=True``) along the non-negative ``axis`` of x. x is used without its
    derivative (its BatchTracers kept, so that under vmap each example has its own
    permutation)."""
    axis = axis - ndim_of(x)
    _note_permutation(x, axis)
    return sort_permute_p(t, staged_value(x), axis=axis, inverse=inverse)


def _note_permutation(x, axis):
    """Log the permutation (a decision on x's values) where a trace under x keeps a log
    (the planner's caches ask whether a result depended on such decisions)."""
    b = x
    while isinstance(b, Box):
        if b._trace.decisions is not None:
            note_decision(x, "argsort", np.argsort(primal_value(x), axis=axis, kind="stable"))
            return
        if b.__class__ in CONCRETE:   # a jit trace's box: the lowest (its _inner guards)
            return
        b = b._inner
