"""Shape primitives: reshape, transpose, broadcast_to, concatenate.

All are linear, so each rule is the primitive itself (or its adjoint) applied
to the tangent or cotangent with the batch axes kept in front:

    reshape:      ṫ ↦ reshape(ṫ)          ū ↦ reshape(ū, x.shape)
    transpose:    ṫ ↦ transpose(ṫ, p)     ū ↦ transpose(ū, p⁻¹)
    broadcast_to: ṫ ↦ broadcast_to(ṫ)     ū ↦ unbroadcast(ū, x.shape)
    concatenate:  ṫ ↦ concatenate(ṫ_i)    ū ↦ the slices of ū
    cast:         ṫ ↦ cast(ṫ, dtype)      ū ↦ cast(ū, x.dtype)   (between floating
                  dtypes, or between complex ones: a rounding, derivative 1)

Everything else here (ravel, squeeze, stack, ...) is composed from them. The
joining functions take NumPy's ``dtype=`` and ``casting=``: every operand is cast
to ``dtype`` (default: their result type) if ``casting`` allows it, as NumPy
does; a floating or complex ``dtype`` keeps the derivatives, any other raises.
"""
from __future__ import annotations

import math

import numpy as np

from ...core.tracer import CONCRETE, Box, ndim_of, shape_of, unguarded_value
from ...core.primitive import Primitive, implements, register, sample
from .._batch import axis_in_batch, batch_size, example_ndim
from ...core.batch_axes import batch_shape, batched_axis
from .._util import normalize_axes
from .linear import broadcast_to_p, lift, reshape_p, transpose_p, unbroadcast

__all__ = [
    "reshape", "ravel", "expand_dims", "squeeze", "transpose", "swapaxes", "moveaxis",
    "broadcast_to", "concatenate_p", "cast_p", "cast", "concatenate", "stack", "atleast_1d",
    "atleast_2d", "hstack", "vstack", "flip"
]


def _resolve_shape(shape, size):
    if type(shape) is tuple and -1 not in shape and math.prod(shape) == size:
        return shape
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    shape = tuple(int(s) for s in shape)
    if -1 in shape:
        known = math.prod(s for s in shape if s != -1)
        if shape.count(-1) > 1 or known == 0 or size % known:
            raise ValueError(f"reshape: cannot reshape an array of size {size} into shape {shape}")
        shape = tuple(size // known if s == -1 else s for s in shape)
    if math.prod(shape) != size:
        raise ValueError(f"reshape: cannot reshape an array of size {size} into shape {shape}")
    return shape


@implements(np.reshape)
def reshape(x, shape=None, order="C", *, newshape=None):
    if order != "C":
        raise NotImplementedError("reshape: only order='C' is differentiable")
    shape = newshape if shape is None else shape
    xs = shape_of(x)
    shape = _resolve_shape(shape, math.prod(xs))
    return x if shape == xs else reshape_p(x, shape=shape)


@implements(np.ravel)
def ravel(x, order="C"):
    return reshape(x, (-1,), order)


@implements(np.expand_dims)
def expand_dims(x, axis):
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    nd = ndim_of(x) + len(axes)
    axes = normalize_axes(axes, nd)
    shape = iter(shape_of(x))
    return reshape(x, tuple(1 if i in axes else next(shape) for i in range(nd)))


@implements(np.squeeze)
def squeeze(x, axis=None):
    xs = shape_of(x)
    if axis is None:
        axes = tuple(i for i, s in enumerate(xs) if s == 1)
    else:
        axes = normalize_axes(axis, len(xs))
        for a in axes:
            if xs[a] != 1:
                raise ValueError(f"squeeze: cannot select axis {a} of shape {xs}: its size is not 1")
    return reshape(x, tuple(s for i, s in enumerate(xs) if i not in axes))


# --- transpose ---------------------------------------------------------------------
@implements(np.transpose)
def transpose(x, axes=None):
    nd = ndim_of(x)
    if axes is None:
        axes = tuple(range(nd))[::-1]
    else:
        axes = tuple(int(a) % nd for a in axes)
        if sorted(axes) != list(range(nd)):
            raise ValueError(f"transpose: axes {axes} do not permute the {nd} axes of shape "
                             f"{shape_of(x)}")
    return x if axes == tuple(range(nd)) else transpose_p(x, axes=axes)


@implements(np.swapaxes)
def swapaxes(x, axis1, axis2):
    nd = ndim_of(x)
    perm = list(range(nd))
    a, b = int(axis1) % nd, int(axis2) % nd
    perm[a], perm[b] = perm[b], perm[a]
    return transpose(x, perm)


@implements(np.moveaxis)
def moveaxis(x, source, destination):
    nd = ndim_of(x)
    src = tuple(int(s) % nd for s in (source if isinstance(source, (tuple, list))
                                      else (source,)))
    dst = tuple(int(d) % nd for d in (destination if isinstance(destination, (tuple, list))
                                      else (destination,)))
    order = [n for n in range(nd) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(x, order)


# --- broadcast_to --------------------------------------------------------------------
@implements(np.broadcast_to)
def broadcast_to(x, shape):
    shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
    return x if shape_of(x) == shape else broadcast_to_p(x, shape=shape)


# --- concatenate ------------------------------------------------------------------------
def _concat_impl(*xs, axis):
    return np.concatenate(xs, axis=axis)


concatenate_p = register(Primitive("concatenate", _concat_impl, linear=True, sparsity="structural",
                                   sympy=lambda sp, *xs, axis: np.concatenate(xs, axis=axis)))


def _concat_jvp_all(tangents, ans, *xs, axis):
    i = next(k for k, t in enumerate(tangents) if t is not None)  # not .index: arrays' ==
    ref = tangents[i]
    batch = batch_shape(ref, xs[i])
    parts = [t if t is not None else np.zeros(batch + shape_of(x), dtype=ans.dtype
                                               if hasattr(ans, "dtype") else float)
             for t, x in zip(tangents, xs)]
    return concatenate_p(*parts, axis=axis + len(batch))


def _concat_vjp_all(ct, ans, *xs, axis):
    from .indexing import getitem
    ax = batched_axis(axis, ct, ans)
    out, start = [], 0
    for x in xs:
        n = shape_of(x)[axis]
        idx = (slice(None),) * ax + (slice(start, start + n),)
        out.append(getitem(ct, idx=idx))
        start += n
    return out


concatenate_p.def_all(jvp=_concat_jvp_all, vjp=_concat_vjp_all)


def _concat_batch(args, batched, axis):
    """vmap: the operands shared by every example are broadcast along the batch axis (the
    result holds a copy of them per example), then joined along the example's axis + 1."""
    size = batch_size(args, batched)
    nd = example_ndim(args[0], batched[0])
    parts = [x if b else broadcast_to_p(x, shape=(size,) + tuple(shape_of(x)))
             for x, b in zip(args, batched)]
    return concatenate_p(*parts, axis=axis_in_batch(axis, nd))


concatenate_p.defbatch(_concat_batch)


# --- cast between floating (or between complex) dtypes ---------------------------------
def _cast_impl(x, dtype):
    return np.asarray(x).astype(dtype)[()] if np.ndim(x) == 0 else np.asarray(x, dtype=dtype)


def _dtype(x):
    return np.result_type(unguarded_value(x))


def _cast_vjp(ct, ans, x, dtype):
    back = _dtype(x)
    if back.kind == "f" and _dtype(ct).kind == "c":
        # a complex cotangent of a real value (an imaginary part riding along, see
        # complex_numbers): keep it, at x's precision
        back = np.result_type(back, np.complex64)
    return cast(ct, back)


cast_p = register(Primitive("cast", _cast_impl, linear=True, sympy=lambda sp, x, dtype: x))
cast_p.defjvp(lambda t, ans, x, dtype: cast(t, dtype))
cast_p.defvjp(_cast_vjp)
cast_p.elementwise = True


def cast(x, dtype, fname="astype"):
    """``x`` as ``dtype``, keeping its derivative: float to float (or complex to complex)
    rounds, real to complex embeds (cotangent Re ū); anything else raises."""
    dtype, src = np.dtype(dtype), _dtype(x)
    if dtype == src:
        return x
    if not isinstance(x, Box):
        return _cast_impl(x, dtype)
    if dtype.kind == src.kind and dtype.kind in "fc":
        return cast_p(x, dtype=dtype)
    if src.kind in "iub" and dtype.kind in "fc" and x.__class__ in CONCRETE:
        return cast_p(x, dtype=dtype)   # a dualad.jit value of no derivative (a mask): recorded
    if dtype.kind == "c" and src.kind == "f":
        from .complex_numbers import to_complex
        return to_complex(x, dtype)
    raise TypeError(f"{fname}: casting a traced value of shape {shape_of(x)} from {src} to "
                    f"{dtype} would drop its derivative; only floating and complex dtypes "
                    f"are differentiable" + ("" if src.kind != "c" else
                                             " (take np.real or np.abs explicitly)"))


def _join_dtype(fname, arrays, dtype, casting):
    """NumPy's ``dtype=``/``casting=`` of the joining functions: each operand cast to
    ``dtype`` (default: the operands' result type) if ``casting`` allows it."""
    if not arrays or (dtype is None and casting == "same_kind"):   # promotion never fails
        return arrays
    dts = [_dtype(a) for a in arrays]
    target = np.result_type(*dts) if dtype is None else np.dtype(dtype)
    for k, (a, d) in enumerate(zip(arrays, dts)):
        if not np.can_cast(d, target, casting):
            raise TypeError(f"{fname}: cannot cast array {k} (shape {shape_of(a)}) from "
                            f"dtype('{d}') to dtype('{target}') according to the rule "
                            f"{casting!r}")
    if target.kind not in "fc":
        for k, a in enumerate(arrays):
            if isinstance(a, Box):
                raise TypeError(f"{fname}: dtype={target} would drop the derivative of the "
                                f"traced array {k} (shape {shape_of(a)}); only floating and "
                                f"complex dtypes are differentiable")
    return [cast(a, target, fname) for a in arrays]


def _no_out(fname, out):
    if out is not None:
        raise TypeError(f"{fname}: out= writes in place into an array and cannot be traced; "
                        f"use the returned value")


@implements(np.concatenate)
def concatenate(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    _no_out("concatenate", out)
    arrays = _join_dtype("concatenate", list(arrays), dtype, casting)
    if axis is None:
        arrays, axis = [ravel(a) for a in arrays], 0
    if not arrays:
        raise ValueError("concatenate: need at least one array to concatenate")
    nd = ndim_of(arrays[0])
    if nd == 0:
        raise ValueError("concatenate: zero-dimensional arrays cannot be concatenated")
    return concatenate_p(*arrays, axis=int(axis) % nd)


@implements(np.stack)
def stack(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    _no_out("stack", out)
    arrays = _join_dtype("stack", list(arrays), dtype, casting)
    if not arrays:
        raise ValueError("stack: need at least one array to stack")
    shapes = {shape_of(a) for a in arrays}
    if len(shapes) != 1:
        raise ValueError(f"stack: all input arrays must have the same shape, got {sorted(shapes)}")
    nd = ndim_of(arrays[0]) + 1
    axis = int(axis) % nd
    return concatenate_p(*[expand_dims(a, axis) for a in arrays], axis=axis)


def atleast_1d(x):
    return reshape(x, (1,)) if ndim_of(x) == 0 else x


def atleast_2d(x):
    nd = ndim_of(x)
    return reshape(x, (1, 1)) if nd == 0 else (reshape(x, (1,) + shape_of(x)) if nd == 1 else x)


@implements(np.hstack)
def hstack(tup, *, dtype=None, casting="same_kind"):
    arrays = [atleast_1d(a) for a in _join_dtype("hstack", list(tup), dtype, casting)]
    return concatenate(arrays, axis=0 if ndim_of(arrays[0]) == 1 else 1)


@implements(np.vstack)
def vstack(tup, *, dtype=None, casting="same_kind"):
    """``np.vstack`` (and ``np.row_stack``, which NumPy 2 forwards here with
    ``dtype`` and ``casting``)."""
    return concatenate([atleast_2d(a) for a in _join_dtype("vstack", list(tup), dtype,
                                                           casting)], axis=0)


@implements(np.flip)
def flip(x, axis=None):
    from .indexing import getitem
    axes = normalize_axes(axis, ndim_of(x))
    idx = tuple(slice(None, None, -1) if i in axes else slice(None) for i in range(ndim_of(x)))
    return getitem(x, idx=idx)

concatenate_p.samples = [sample((2,), (3,), axis=0), sample((2, 3), (2, 1), axis=1)]
# Widening casts (exact, so the checker's float64 tolerances apply); narrowing ones round
# to float32 and are tested with float32 tolerances in tests/dualad.
cast_p.samples = [sample((2, 3), dtype=np.dtype(np.longdouble)),
                  sample(np.array([0.5 - 1j, 2j]), dtype=np.dtype(np.clongdouble))]
