"""Statistical, searching and utility functions of the array API standard.

The standard's keywords are translated into NumPy's (``correction`` is NumPy's
``ddof``; ``cumulative_sum``'s ``include_initial`` prepends the zero) and the
NumPy call reaches the registry for traced values.
"""
from __future__ import annotations

import numpy as np

from ..core.tracer import Box

__all__ = [
    "max", "min", "mean", "sum", "prod", "var", "std", "cumulative_sum", "cumulative_prod",
    "argmax", "argmin", "count_nonzero", "nonzero", "searchsorted", "isin", "where", "all",
    "any", "diff", "FUNCTIONS"
]


def _axis(axis):
    return tuple(axis) if isinstance(axis, list) else axis


def _cast(x, dtype):
    return x if dtype is None or np.dtype(dtype) == x.dtype else x.astype(dtype)


def _acc_dtype(x, dtype):
    """The standard's accumulation dtype: ``dtype`` if given, else the input's
    (integers widen to the default integer, as NumPy does on 64-bit)."""
    if dtype is not None:
        return np.dtype(dtype)
    kind = x.dtype.kind
    if kind == "b" or kind == "i":
        return np.dtype(np.int64)
    if kind == "u":
        return np.dtype(np.uint64)
    return x.dtype


def max(x, /, *, axis=None, keepdims=False):  # noqa: A001
    return np.max(x, axis=_axis(axis), keepdims=keepdims)


def min(x, /, *, axis=None, keepdims=False):  # noqa: A001
    return np.min(x, axis=_axis(axis), keepdims=keepdims)


def mean(x, /, *, axis=None, keepdims=False):
    return np.mean(x, axis=_axis(axis), keepdims=keepdims)


def sum(x, /, *, axis=None, dtype=None, keepdims=False):  # noqa: A001
    """Σ over ``axis`` in ``dtype`` (the input's floating dtype by default)."""
    x = _as(x)
    acc = _acc_dtype(x, dtype)
    if isinstance(x, Box):   # traced values are floating: accumulate in the cast dtype
        return np.sum(_cast(x, acc), axis=_axis(axis), keepdims=keepdims)
    return np.sum(x, axis=_axis(axis), dtype=acc, keepdims=keepdims)


def prod(x, /, *, axis=None, dtype=None, keepdims=False):
    x = _as(x)
    acc = _acc_dtype(x, dtype)
    if isinstance(x, Box):
        return np.prod(_cast(x, acc), axis=_axis(axis), keepdims=keepdims)
    return np.prod(x, axis=_axis(axis), dtype=acc, keepdims=keepdims)


def var(x, /, *, axis=None, correction=0.0, keepdims=False):
    """Σ(x − mean)² / (N − correction)."""
    return np.var(x, axis=_axis(axis), ddof=correction, keepdims=keepdims)


def std(x, /, *, axis=None, correction=0.0, keepdims=False):
    """√var(x, correction)."""
    return np.std(x, axis=_axis(axis), ddof=correction, keepdims=keepdims)


def _as(x):
    return x if isinstance(x, Box) else np.asarray(x)


def _cumulative(np_fn, identity, name):
    def f(x, /, *, axis=None, dtype=None, include_initial=False):
        x = _as(x)
        if axis is None:
            if x.ndim > 1:
                raise ValueError(f"{name}: axis is required for an array of shape {x.shape}")
            axis = 0
        x = _cast(x, _acc_dtype(x, dtype))
        out = np_fn(x, axis=axis)
        if include_initial:   # the empty sum/product first: shape n+1 along axis
            shape = list(x.shape)
            shape[axis] = 1
            out = np.concatenate([np.full(shape, identity, dtype=out.dtype), out],
                                 axis=axis)
        return out
    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"The running {'sum' if identity == 0 else 'product'} along ``axis``; "
                 f"``include_initial`` prepends {identity}.")
    return f


cumulative_sum = _cumulative(np.cumsum, 0, "cumulative_sum")
cumulative_prod = _cumulative(np.cumprod, 1, "cumulative_prod")


def argmax(x, /, *, axis=None, keepdims=False):
    return np.argmax(x, axis=axis, keepdims=keepdims)


def argmin(x, /, *, axis=None, keepdims=False):
    return np.argmin(x, axis=axis, keepdims=keepdims)


def count_nonzero(x, /, *, axis=None, keepdims=False):
    return np.asarray(np.count_nonzero(x, axis=_axis(axis), keepdims=keepdims))


def nonzero(x, /):
    if x.ndim == 0:
        raise ValueError("nonzero of a 0-d array: the standard leaves it undefined")
    return np.nonzero(x)


def searchsorted(x1, x2, /, *, side="left", sorter=None):
    return np.searchsorted(x1, x2, side=side, sorter=sorter)


def isin(x1, x2, /, *, invert=False):
    """Whether each element of ``x1`` is in ``x2`` (2024.12; a boolean: no derivative)."""
    return np.isin(x1, x2, invert=invert)


def where(condition, x1, x2, /):
    return np.where(condition, x1, x2)


def all(x, /, *, axis=None, keepdims=False):  # noqa: A001
    return np.asarray(np.all(x, axis=_axis(axis), keepdims=keepdims))


def any(x, /, *, axis=None, keepdims=False):  # noqa: A001
    return np.asarray(np.any(x, axis=_axis(axis), keepdims=keepdims))


def diff(x, /, *, axis=-1, n=1, prepend=None, append=None):
    """The ``n``-th forward difference along ``axis`` (linear)."""
    if prepend is not None or append is not None:
        parts = [p for p in (prepend, x, append) if p is not None]
        x = np.concatenate(parts, axis=axis)
    return np.diff(x, n=n, axis=axis)


FUNCTIONS = {f.__name__: f for f in (
    max, min, mean, sum, prod, var, std, cumulative_sum, cumulative_prod, argmax, argmin,
    count_nonzero, nonzero, searchsorted, isin, where, all, any, diff)}
