"""Primal values of ``logaddexp`` and ``logaddexp2`` in whole-array passes.

NumPy evaluates ``logaddexp(x, y) = max(x, y) + log1p(exp(-|x - y|))`` (and the
base-2 twin ``max(x, y) + log2(1 + 2^{-|x - y|})``) element by element, calling
scalar ``exp`` and ``log1p`` in its inner loop: about 16 ns an element, where the
vectorized ``exp`` and ``log1p`` ufuncs take under 1 ns. The same formula in six
array passes gives the same values (to the last bit or one ulp) several times faster
on large arrays, which matters because softplus, ``logaddexp(0, z)``, is the loss of
logistic regression.

Where NumPy's formula needs care it is followed exactly: ``x == y`` gives
``x + log 2`` (``1`` for base 2), so two equal infinities give that infinity where
the difference would be nan; a nan in either argument gives nan.
"""
from __future__ import annotations

import numpy as np

__all__ = ["logaddexp", "logaddexp2"]

_FAST_DTYPES = (np.dtype(np.float64), np.dtype(np.float32))
_SMALL = 256  # below this many elements NumPy's one ufunc call is cheaper
_LOG2_E = float(1.0 / np.log(2.0))


def _fast(x, y, ufunc, exp, log1p, tie):
    xa, ya = np.asarray(x), np.asarray(y)
    dtype = np.result_type(x, y)
    if dtype not in _FAST_DTYPES or max(xa.size, ya.size) < _SMALL:
        return ufunc(x, y)
    out = np.maximum(x, y)
    if out.dtype != dtype:  # maximum of two weak Python scalars, or similar corner cases
        return ufunc(x, y)
    with np.errstate(invalid="ignore", over="ignore"):
        t = np.subtract(x, y, dtype=dtype)
        if t.shape != out.shape:
            return ufunc(x, y)
        np.abs(t, out=t)
        np.negative(t, out=t)
        exp(t, out=t)
        log1p(t, out=t)
        out += t
    if np.isnan(t).any():  # equal infinities (nan from inf - inf), or a nan argument
        ties = np.broadcast_to(xa == ya, out.shape)
        np.copyto(out, np.broadcast_to(xa, out.shape) + tie, where=ties)
    return out


def _log2_1p(t, out):
    np.log1p(t, out=out)
    out *= _LOG2_E
    return out


def logaddexp(x, y):
    """``log(exp(x) + exp(y))``, NumPy's value, computed in array passes."""
    return _fast(x, y, np.logaddexp, np.exp, np.log1p, float(np.log(2.0)))


def logaddexp2(x, y):
    """``log2(2**x + 2**y)``, NumPy's value, computed in array passes."""
    return _fast(x, y, np.logaddexp2, np.exp2, _log2_1p, 1.0)
