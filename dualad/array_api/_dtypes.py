"""Data types, constants and the data-type functions of the array API standard.

The dtypes are NumPy's scalar types: a traced value's ``dtype`` is a NumPy dtype,
and ``np.dtype("float64") == np.float64``, so ``x.dtype == xp.float64`` holds for
traced and plain arrays alike.
"""
from __future__ import annotations

import math

import numpy as np

from ..core.tracer import Box

__all__ = [
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float32", "float64", "complex64", "complex128", "e", "pi", "inf", "nan", "newaxis",
    "astype", "can_cast", "FInfo", "finfo", "iinfo", "isdtype", "result_type"
]

bool = np.bool_  # noqa: A001  (the standard's name)
int8, int16, int32, int64 = np.int8, np.int16, np.int32, np.int64
uint8, uint16, uint32, uint64 = np.uint8, np.uint16, np.uint32, np.uint64
float32, float64 = np.float32, np.float64
complex64, complex128 = np.complex64, np.complex128

e, pi, inf, nan = math.e, math.pi, math.inf, math.nan
newaxis = None

_KINDS = {"bool": "b", "signed integer": "i", "unsigned integer": "u",
          "integral": "iu", "real floating": "f", "complex floating": "c",
          "numeric": "iufc"}


def _dtype_of(x):
    """The dtype of an array, a traced value or a dtype."""
    if isinstance(x, (Box, np.ndarray, np.generic)):
        return x.dtype
    return np.dtype(x)


def astype(x, dtype, /, *, copy=True, device=None):
    """``x`` cast to ``dtype``. A traced value keeps its derivative for floating and
    complex targets (see ``Box.astype``); ``copy`` is moot for it (traced values are
    immutable)."""
    _check_device(device)
    if isinstance(x, Box):
        return x.astype(dtype)
    return np.asarray(x).astype(dtype, copy=copy)


def can_cast(from_, to, /):
    """Whether ``from_`` (a dtype or an array) casts safely to ``to``, by the
    standard's promotion lattice (which NumPy's "safe" casting follows for the
    standard's dtypes)."""
    return np.can_cast(_dtype_of(from_), np.dtype(to), casting="safe")


class FInfo:
    """Machine limits of a floating dtype, as the standard has them (Python floats)."""

    def __init__(self, dtype):
        info = np.finfo(dtype)
        self.bits = int(info.bits)
        self.eps, self.max, self.min = float(info.eps), float(info.max), float(info.min)
        self.smallest_normal = float(info.smallest_normal)
        self.dtype = info.dtype

    def __repr__(self):
        return f"finfo(dtype={self.dtype}, eps={self.eps}, max={self.max})"


def finfo(type, /):  # noqa: A002  (the standard's name)
    """Machine limits of a floating dtype (or of an array's dtype)."""
    return FInfo(_dtype_of(type))


def iinfo(type, /):  # noqa: A002
    """Machine limits of an integer dtype (or of an array's dtype)."""
    return np.iinfo(_dtype_of(type))


def isdtype(dtype, kind):
    """Whether ``dtype`` is of ``kind``: a dtype, one of the standard's kind names
    ("bool", "signed integer", "unsigned integer", "integral", "real floating",
    "complex floating", "numeric"), or a tuple of those."""
    if isinstance(kind, tuple):
        return any(isdtype(dtype, k) for k in kind)
    dtype = np.dtype(dtype)
    if isinstance(kind, str):
        if kind not in _KINDS:
            raise ValueError(f"isdtype: unknown kind {kind!r}; expected a dtype or one of "
                             f"{sorted(_KINDS)}")
        return dtype.kind in _KINDS[kind]
    return dtype == np.dtype(kind)


def result_type(*arrays_and_dtypes):
    """The dtype the standard's promotion gives ``arrays_and_dtypes`` (traced values
    count by their dtype; Python scalars are weak, as in NumPy 2)."""
    if not arrays_and_dtypes:
        raise ValueError("result_type needs at least one array or dtype")
    items = [x.dtype if isinstance(x, Box) else x for x in arrays_and_dtypes]
    return np.result_type(*items)


def _check_device(device):
    if device is not None and device != "cpu":
        raise ValueError(f"device={device!r}: dualad.array_api has the one device 'cpu'")
