"""The pieces of :mod:`dualad.interpreters.staging.numba_whole` shared by its writers: what it refuses
(:class:`Unsupported`), how an atom's type reads, how numbers and shapes are written."""
from __future__ import annotations

import math

import numpy as np

__all__ = ["MIN_ROLLED", "Unsupported", "F64", "BOOL", "I64", "literal", "n_arg", "dims",
           "slice_source", "scalar_aval", "check_aval", "stacked_constants"]

F64, BOOL, I64 = np.dtype(np.float64), np.dtype(np.bool_), np.dtype(np.int64)
# Runs of at least this many items are rolled into loops by both whole-program writers
# (the NumPy backend: 256): Numba's compile time grows by milliseconds per line.
MIN_ROLLED = 24
_SCALARS = (float, np.float64, bool, np.bool_, np.int64)


class Unsupported(Exception):
    """The program has something the whole-program mode does not write (the reason)."""


def literal(v):
    if v.__class__ in (bool, np.bool_):
        return repr(bool(v))
    if v.__class__ is int and abs(v) < 2 ** 53:
        return repr(v)
    if v.__class__ in (float, np.float64):
        f = float(v)
        if math.isnan(f):
            return "np.nan"
        if math.isinf(f):
            return "np.inf" if f > 0 else "(-np.inf)"
        return f"({f!r})" if math.copysign(1.0, f) < 0 else repr(f)
    return None


def n_arg(k):
    """An int for a compiled callee: ``np.int64(k)``, not the literal (Numba would compile
    the callee again for every literal value)."""
    return f"np.int64({k})"


def dims(shape):
    return f"({''.join(n_arg(d) + ', ' for d in shape)})"


def slice_source(i):
    """Source of a slice of ints (no step written when None: Numba keeps a 1-d slice of a
    C-contiguous array C-contiguous, one compiled signature less)."""
    a = "" if i.start is None else repr(i.start)
    b = "" if i.stop is None else repr(i.stop)
    return f"{a}:{b}" if i.step is None else f"{a}:{b}:{i.step!r}"


def scalar_aval(aval):
    kind, shape, dtype = aval
    return kind in _SCALARS or kind is np.ndarray and tuple(shape) == ()


def check_aval(v, aval):
    kind, shape, dtype = aval
    if kind in _SCALARS:
        return
    if kind is np.ndarray and dtype is not None and np.dtype(dtype) in (F64, BOOL, I64):
        if 0 not in tuple(shape):
            return
    raise Unsupported(f"v{v} is {getattr(kind, '__name__', kind)} {dtype} {shape}")


def stacked_constants(values, dtypes):
    """The per-block constants ``values`` of a rolled loop as one array, the blocks along
    its first axis (scalars: a 1-d array), or :class:`Unsupported` when they differ in
    shape or dtype or their dtype is not one of ``dtypes``."""
    if all(np.ndim(v) == 0 for v in values):
        stacked = np.asarray(values)
    elif len({(np.shape(v), np.result_type(v)) for v in values}) == 1:
        stacked = np.stack(values)
    else:
        stacked = None
    if stacked is None or stacked.dtype not in dtypes:
        raise Unsupported("per-block constants of several shapes or dtypes")
    return stacked
