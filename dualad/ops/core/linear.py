"""The four linear maps the rules' bookkeeping is written in: reshape, transpose,
broadcast_to and sum, and the helpers built on them (:func:`lift`, :func:`unbroadcast`,
:func:`fit`).

They are closed under transposition, which is why they share a module below every other
family: reshape's VJP is a reshape, transpose's the inverse permutation, and
broadcast_to and sum are each other's transposes (broadcasting copies, its VJP sums the
copies; summing adds, its VJP broadcasts the cotangent back):

    reshape       ṫ ↦ reshape(ṫ)        ū ↦ reshape(ū, x.shape)
    transpose     ṫ ↦ ṫᵀ(axes)          ū ↦ ūᵀ(argsort(axes))
    broadcast_to  ṫ ↦ broadcast(ṫ)      ū ↦ Σ over the broadcast axes of ū
    sum           ṫ ↦ Σ ṫ               ū ↦ broadcast(ū) over the summed axes

Each is declared with :meth:`~dualad.core.primitive.Primitive.def_linear` (its JVP is itself)
or its two rules; the NumPy front-end functions (argument checks, ``-1`` in shapes,
``axis=None``) are in :mod:`.shape` and :mod:`.reductions`. Tangents and cotangents carry
leading batch axes as everywhere (:mod:`dualad.ops._util`).
"""
from __future__ import annotations

import math

import numpy as np

from ...core.tracer import ndim_of, shape_of
from ...core.primitive import Primitive, register, sample
from ...core.batch_axes import batch_ndim, batch_perm, batch_shape, shift_axes

__all__ = [
    "reshape_p", "transpose_p", "broadcast_to_p", "expand_reduced", "sum_p", "lift",
    "unbroadcast", "fit"
]


def _reshape_impl(x, shape):
    return x.reshape(shape) if type(x) is np.ndarray else np.reshape(x, shape)


def _transpose_impl(x, axes):
    return x.transpose(axes) if type(x) is np.ndarray else np.transpose(x, axes)


def _broadcast_impl(x, shape):
    # Small results are materialized (one C-level fill, cheaper than a stride-trick view);
    # large ones stay read-only views, so no memory is spent on them.
    dtype = np.result_type(x)
    if math.prod(shape) <= 65536 and dtype != object:
        out = np.empty(shape, dtype=dtype)
        out[...] = x
        return out
    return np.broadcast_to(x, shape)


reshape_p = register(Primitive("reshape", _reshape_impl, linear=True, sparsity="structural",
                               sympy=lambda sp, x, shape: x.reshape(shape)))
reshape_p.def_linear(lambda ct, ans, x, shape:
                     reshape_p(ct, shape=batch_shape(ct, ans) + shape_of(x)),
                     batched=lambda batch, shape: {"shape": batch + shape})


transpose_p = register(Primitive("transpose", _transpose_impl, linear=True,
                                  sparsity="structural",
                                 sympy=lambda sp, x, axes: np.transpose(x, axes)))
transpose_p.def_linear(lambda ct, ans, x, axes:
                       transpose_p(ct, axes=batch_perm(tuple(np.argsort(axes)),
                                                       batch_ndim(ct, ans))),
                       batched=lambda batch, axes: {"axes": batch_perm(axes, len(batch))})


broadcast_to_p = register(Primitive("broadcast_to", _broadcast_impl, linear=True,
                                    sparsity="structural",
                                    sympy=lambda sp, x, shape: np.broadcast_to(x, shape)))


def _broadcast_jvp(t, ans, x, shape):
    return broadcast_to_p(lift(t, batch_ndim(t, x), len(shape)),
                          shape=batch_shape(t, x) + tuple(shape))


broadcast_to_p.defjvp(_broadcast_jvp)
broadcast_to_p.defvjp(lambda ct, ans, x, shape:
                      unbroadcast(ct, shape_of(x), batch_ndim(ct, ans)))
# vmap: the example's x (right-aligned against ``shape``) gets unit axes behind the batch axis
broadcast_to_p.defbatch(lambda args, batched, shape: broadcast_to_p(
    lift(args[0], 1, len(shape)), shape=shape_of(args[0])[:1] + tuple(shape)))


def expand_reduced(ct, x_shape, axes, keepdims, nb):
    """Re-insert reduced axes into ``ct`` and broadcast it to batch + x_shape."""
    cs = shape_of(ct)
    batch = cs[:nb]
    if not keepdims and not cs:      # a scalar cotangent broadcasts as it is (a full sum)
        return fit(ct, x_shape)
    if not keepdims:
        full = tuple(1 if i in axes else s for i, s in enumerate(x_shape))
        ct = reshape_p(ct, shape=batch + full)
    return fit(ct, batch + tuple(x_shape))


SHORT_AXIS = 7       # a last axis this short is summed by adding its slices
SHORT_MIN_SIZE = 4096


def short_last_axis(shape, dtype, axis):
    """The length ``k`` of the last axis when ``axis`` (a tuple) sums it alone, ``2 <= k <=
    SHORT_AXIS``, in a floating array of at least ``SHORT_MIN_SIZE`` entries; else 0.

    NumPy's reduce pays per row of such an axis (measured 20-40x slower than adding the k
    slices for (31843, 2) and (31843, 3)); for k <= 7 its order is the slices' left to
    right, (x_0 + x_1) + x_2 + ..., which :func:`sum_last` keeps (and eager sums and jit
    programs both use it, so they agree to the bit whatever NumPy does)."""
    nd = len(shape)
    if nd < 2 or len(axis) != 1 or axis[0] not in (nd - 1, -1) or \
            np.dtype(dtype).kind not in "fc":
        return 0
    k = shape[-1]
    return k if 2 <= k <= SHORT_AXIS and math.prod(shape) >= SHORT_MIN_SIZE else 0


def sum_last(x, k, keepdims, out=None):
    """The sum of ``x`` over its last axis of length ``k``: its slices added left to right
    (into ``out``, of the result's shape without the kept axis, when given)."""
    y = np.add(x[..., 0], x[..., 1], out=out)
    for i in range(2, k):
        y += x[..., i]
    return y[..., None] if keepdims else y


def _sum_impl(x, axis, keepdims):
    if type(x) is np.ndarray:
        if axis.__class__ is tuple:
            k = short_last_axis(x.shape, x.dtype, axis)
            if k:
                return sum_last(x, k, keepdims)
        return x.sum(axis=axis, keepdims=keepdims)
    return np.sum(x, axis=axis, keepdims=keepdims)


sum_p = register(Primitive("sum", _sum_impl,
                           linear=True, sparsity="reduction",
                           sympy=lambda sp, x, axis, keepdims: np.sum(x, axis=axis,
                                                                      keepdims=keepdims)))
sum_p.def_linear(lambda ct, ans, x, axis, keepdims:
                 expand_reduced(ct, shape_of(x), axis, keepdims, batch_ndim(ct, ans)),
                 batched=lambda batch, axis, keepdims: {"axis": shift_axes(axis, len(batch)),
                                                        "keepdims": keepdims})


def lift(t, nb: int, out_ndim: int):
    """Insert unit axes after the batch axes so that ``t`` (batch + shape)
    broadcasts against an output of ``out_ndim`` dimensions."""
    k = out_ndim - (ndim_of(t) - nb)
    if nb == 0 or k <= 0:
        return t
    s = shape_of(t)
    return reshape_p(t, shape=s[:nb] + (1,) * k + s[nb:])


def unbroadcast(g, shape, nb: int):
    """Sum a cotangent over the axes broadcasting added: the VJP of broadcasting.

    A primitive whose argument of shape ``shape`` was broadcast to the output's shape
    gets an output cotangent of the broadcast shape; the argument's cotangent is its sum
    over every axis NumPy added (leading) or stretched (from 1), so it has the
    argument's shape. VJP rules call this on their result.

    Parameters
    ----------
    g : array_like or Box
        The cotangent: ``nb`` leading batch axes, then a shape ``shape`` broadcasts to
        (or a scalar-like constant, which is broadcast up instead).
    shape : tuple of int
        The argument's shape.
    nb : int
        The number of leading batch axes of ``g`` (many cotangents at once), kept.

    Returns
    -------
    array_like or Box
        ``g`` summed to shape ``g.shape[:nb] + shape`` (``g`` itself when nothing was
        broadcast), written with registry operations so it differentiates again.

    Examples
    --------
    >>> from dualad.extend import unbroadcast
    >>> print(unbroadcast(np.ones((2, 3)), (1, 3), 0))
    [[2. 2. 2.]]
    >>> unbroadcast(np.ones((4, 2, 3)), (3,), 1).shape
    (4, 3)
    """
    shape = tuple(shape)
    gshape = shape_of(g)
    if gshape[nb:] == shape:
        return g
    if len(gshape) - nb < len(shape):  # g was a scalar-like constant
        return broadcast_to_p(g, shape=gshape[:nb] + shape)
    lead = len(gshape) - nb - len(shape)
    axes = tuple(range(nb, nb + lead)) + tuple(
        nb + lead + i for i, s in enumerate(shape) if s == 1 and gshape[nb + lead + i] != 1)
    if axes:
        g = sum_p(g, axis=axes, keepdims=True)
    g_shape = gshape[:nb] + shape
    return g if shape_of(g) == g_shape else reshape_p(g, shape=g_shape)


def fit(t, shape):
    """Broadcast ``t`` to exactly ``shape`` (a tangent must match its primal)."""
    if shape_of(t) == tuple(shape):
        return t
    return broadcast_to_p(t, shape=tuple(shape))


reshape_p.samples = [sample((2, 3), shape=(3, 2)), sample((6,), shape=(1, 2, 3))]
transpose_p.samples = [sample((2, 3), axes=(1, 0)), sample((2, 3, 4), axes=(2, 0, 1))]
broadcast_to_p.samples = [sample((3,), shape=(2, 3)), sample((1, 3), shape=(4, 3))]
sum_p.samples = [sample((2, 3), axis=(0, 1), keepdims=False), sample((2, 3), axis=(1,), keepdims=True),
                 sample((3,), axis=(0,), keepdims=False)]
