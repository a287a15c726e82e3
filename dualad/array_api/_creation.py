"""Creation functions of the array API standard.

Constructors from shapes give plain arrays (constants: no derivative). ``asarray``
keeps traced values, including traced elements of nested lists (stacked, as
:func:`dualad.numpy.array` does). ``*_like`` functions take the shape and dtype of a
traced value and return constants.
"""
from __future__ import annotations

import numpy as np

from .. import numpy as dnp
from ..core.tracer import Box
from ._dtypes import _check_device

__all__ = [
    "asarray", "arange", "empty", "zeros", "ones", "full", "empty_like", "zeros_like",
    "ones_like", "full_like", "eye", "linspace", "meshgrid", "tril", "triu", "from_dlpack"
]


def _contains_box(obj):
    if isinstance(obj, Box):
        return True
    return isinstance(obj, (list, tuple)) and any(_contains_box(o) for o in obj)


def asarray(obj, /, *, dtype=None, device=None, copy=None):
    """``obj`` as an array: a traced value stays traced (cast if ``dtype`` differs,
    a new traced value if ``copy``); a nested list holding traced values is stacked
    differentiably; anything else becomes a constant ``Array`` (the namespace's
    constants, so consumers never mix NumPy's namespace with this one)."""
    _check_device(device)
    if isinstance(obj, Box) and copy:
        # a new traced value with the same primal and derivative: a write into "the
        # copy" (array_api_extra.at does asarray(x, copy=True) then x[idx] = v) can
        # never reach the caller's x
        obj = np.positive(obj)
    if isinstance(obj, Box) or (isinstance(obj, (list, tuple)) and _contains_box(obj)):
        x = dnp.array(obj)
        if dtype is not None and np.dtype(dtype) != x.dtype:
            if copy is False:
                raise ValueError(f"asarray(copy=False, dtype={np.dtype(dtype)}) of a traced "
                                 f"value of dtype {x.dtype} would need a copy")
            x = x.astype(dtype)
        return x
    if hasattr(obj, "__dlpack__") and not isinstance(obj, np.ndarray):
        obj = np.from_dlpack(obj)
    return np.asarray(obj, dtype=dtype, copy=copy)


def arange(start, /, stop=None, step=1, *, dtype=None, device=None):
    _check_device(device)
    return np.arange(start, stop, step, dtype=dtype)


def empty(shape, *, dtype=None, device=None):
    _check_device(device)
    return np.empty(shape, dtype=dtype if dtype is not None else np.float64)


def zeros(shape, *, dtype=None, device=None):
    _check_device(device)
    return np.zeros(shape, dtype=dtype if dtype is not None else np.float64)


def ones(shape, *, dtype=None, device=None):
    _check_device(device)
    return np.ones(shape, dtype=dtype if dtype is not None else np.float64)


def full(shape, fill_value, *, dtype=None, device=None):
    """An array of ``shape`` filled with ``fill_value``; a traced fill value gives a
    traced array (broadcast), so the derivative flows into every element."""
    _check_device(device)
    if isinstance(fill_value, Box):
        x = np.broadcast_to(fill_value, shape if isinstance(shape, tuple) else (shape,))
        return x if dtype is None else x.astype(dtype)
    return np.full(shape, fill_value, dtype=dtype)


def _like(x, dtype):
    return x.dtype if dtype is None else dtype


def empty_like(x, /, *, dtype=None, device=None):
    _check_device(device)
    return np.empty(x.shape, dtype=_like(x, dtype))


def zeros_like(x, /, *, dtype=None, device=None):
    _check_device(device)
    return np.zeros(x.shape, dtype=_like(x, dtype))


def ones_like(x, /, *, dtype=None, device=None):
    _check_device(device)
    return np.ones(x.shape, dtype=_like(x, dtype))


def full_like(x, /, fill_value, *, dtype=None, device=None):
    return full(x.shape, fill_value, dtype=_like(x, dtype), device=device)


def eye(n_rows, n_cols=None, /, *, k=0, dtype=None, device=None):
    _check_device(device)
    return np.eye(n_rows, n_cols, k=k, dtype=dtype if dtype is not None else np.float64)


def linspace(start, stop, /, num, *, dtype=None, device=None, endpoint=True):
    """``num`` evenly spaced values; traced endpoints give traced values."""
    _check_device(device)
    out = np.linspace(start, stop, num, endpoint=endpoint)
    if dtype is not None and np.dtype(dtype) != out.dtype:
        out = out.astype(dtype)
    return out


def meshgrid(*arrays, indexing="xy"):
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing={indexing!r}; expected 'xy' or 'ij'")
    return list(np.meshgrid(*arrays, indexing=indexing))


def tril(x, /, *, k=0):
    return np.tril(x, k=k)


def triu(x, /, *, k=0):
    return np.triu(x, k=k)


def from_dlpack(x, /, *, device=None, copy=None):
    """A plain array from a DLPack producer (traced values are not DLPack producers:
    their derivative cannot travel through a memory buffer)."""
    _check_device(device)
    if isinstance(x, Box):
        raise TypeError(f"from_dlpack of a traced value of shape {x.shape}: DLPack shares "
                        f"memory and cannot carry a derivative; use xp.asarray(x)")
    return np.from_dlpack(x, copy=copy)
