"""Joining, inserting and selecting entries: atleast_1d/2d/3d, dstack, column_stack,
append, insert, delete, block, broadcast_arrays, extract, compress, trim_zeros.

Compositions of the structural primitives (see :mod:`.arrays`). ``insert``
and ``delete`` obtain their index map from NumPy itself, applied to entry numbers,
so NumPy's semantics (slices, sequences, broadcasting of values) hold exactly.
"""
from __future__ import annotations

import math

import numpy as np

from ...core.tracer import ndim_of, primal_value, shape_of
from ...core.primitive import implements
from .._util import plain_argument
from .arrays import _along, _axis, _gather_flat, _no_out
from ..core.shape import broadcast_to, concatenate, ravel, reshape, swapaxes, transpose
from ..core.scatter import copy as copy_value

__all__ = [
    "atleast_1d", "atleast_2d", "atleast_3d", "dstack", "column_stack", "append", "insert",
    "delete", "block", "broadcast_arrays", "extract", "compress", "trim_zeros",
    "matrix_transpose", "copy"
]


def _atleast(fn):
    def call(*arys):
        out = tuple(fn(a) for a in arys)
        return out[0] if len(out) == 1 else out
    return call


def _3d(x):
    nd, s = ndim_of(x), shape_of(x)
    return reshape(x, (1, 1, 1) if nd == 0 else (1, s[0], 1) if nd == 1 else
                   s + (1,) if nd == 2 else s)


def _1d(x):
    return reshape(x, (1,)) if ndim_of(x) == 0 else x


def _2d(x):
    nd = ndim_of(x)
    return reshape(x, (1, 1)) if nd == 0 else reshape(x, (1,) + shape_of(x)) if nd == 1 else x


atleast_1d, atleast_2d, atleast_3d = _atleast(_1d), _atleast(_2d), _atleast(_3d)


@implements(np.dstack)
def dstack(tup):
    return concatenate([_3d(a) for a in tup], axis=2)


@implements(np.column_stack)
def column_stack(tup):
    """1-d arrays become columns (n, 1); 0-d ones (1, 1); others are joined as they are."""
    cols = []
    for a in tup:
        nd = ndim_of(a)
        cols.append(reshape(a, (shape_of(a)[0], 1)) if nd == 1 else
                    reshape(a, (1, 1)) if nd == 0 else a)
    return concatenate(cols, axis=1)


@implements(np.append)
def append(arr, values, axis=None):
    if axis is None:
        return concatenate([ravel(arr), ravel(values)], axis=0)
    return concatenate([arr, values], axis=axis)


def _tags(a):
    return np.arange(math.prod(shape_of(a))).reshape(shape_of(a))


@implements(np.insert)
def insert(arr, obj, values, axis=None):
    """``np.insert``: NumPy places entry numbers (of arr, and negative ones of values),
    and the result gathers the entries from ``concatenate([ravel(arr), ravel(values)])``."""
    n = math.prod(shape_of(arr))
    tags = np.insert(_tags(arr), primal_value(obj), -1 - _tags(values), axis=axis)
    src = np.where(tags >= 0, tags, n - 1 - tags)
    return _gather_flat(concatenate([ravel(arr), ravel(values)]), src)


@implements(np.delete)
def delete(arr, obj, axis=None):
    return _gather_flat(arr, np.delete(_tags(arr), primal_value(obj), axis=axis))


@implements(np.block)
def block(arrays):
    """``np.block``: nested lists joined along the last axes, innermost list last."""
    def depth(x):
        if isinstance(x, tuple):
            raise TypeError("block: arrays is a tuple; only lists can be used to arrange blocks")
        if isinstance(x, list):
            if not x:
                raise ValueError("block: lists cannot be empty")
            ds = {depth(e) for e in x}
            if len(ds) != 1:
                raise ValueError("block: list depths are mismatched")
            return 1 + ds.pop()
        return 0

    def leaves(x):
        return [v for e in x for v in leaves(e)] if isinstance(x, list) else [x]

    d = depth(arrays)
    nd = max([d] + [ndim_of(v) for v in leaves(arrays)])

    def build(x, level):
        if not isinstance(x, list):
            return reshape(x, (1,) * (nd - ndim_of(x)) + shape_of(x))
        parts = [build(e, level + 1) for e in x]
        return concatenate(parts, axis=nd - d + level) if len(parts) > 1 else parts[0]
    return build(arrays, 0)


@implements(np.broadcast_arrays)
def broadcast_arrays(*args, subok=False):
    shape = np.broadcast_shapes(*[shape_of(a) for a in args])
    return tuple(broadcast_to(a, shape) for a in args)


@implements(np.extract)
def extract(condition, arr):
    return _gather_flat(arr, np.nonzero(np.ravel(plain_argument("extract", "condition",
                                                               condition)))[0])


@implements(np.compress)
def compress(condition, a, axis=None, out=None):
    _no_out("compress", out)
    cond = np.ravel(plain_argument("compress", "condition", condition)).astype(bool)
    if axis is None:
        a, axis = ravel(a), 0
    axis = _axis(axis, ndim_of(a), "compress")
    if cond.size > shape_of(a)[axis]:
        raise IndexError(f"compress: condition of length {cond.size} is longer than axis "
                         f"{axis} of size {shape_of(a)[axis]}")
    return _along(a, axis, np.nonzero(cond)[0])


@implements(np.trim_zeros)
def trim_zeros(filt, trim="fb", axis=None):
    if ndim_of(filt) != 1 or axis not in (None, 0, -1):
        raise NotImplementedError("trim_zeros: only 1-d input is supported on traced values")
    nz = np.nonzero(primal_value(filt))[0]
    if nz.size == 0:
        return _along(filt, 0, slice(0, 0))
    start = nz[0] if "f" in trim.lower() else 0
    stop = nz[-1] + 1 if "b" in trim.lower() else shape_of(filt)[0]
    return _along(filt, 0, slice(int(start), int(stop)))


@implements(np.matrix_transpose)
def matrix_transpose(x, /):
    if ndim_of(x) < 2:
        raise ValueError(f"matrix_transpose: input must be at least 2-d, got shape {shape_of(x)}")
    return swapaxes(x, -1, -2)


@implements(np.copy)
def copy(a, order="K", subok=False):
    return copy_value(a)   # a new value: writing into one in place leaves the other


implements(np.atleast_1d)(atleast_1d)
implements(np.atleast_2d)(atleast_2d)
implements(np.atleast_3d)(atleast_3d)
implements(np.permute_dims)(transpose)
implements(np.concat)(concatenate)
