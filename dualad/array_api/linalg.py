"""The array API standard's ``linalg`` extension over ``numpy.linalg``.

NumPy 2's ``numpy.linalg`` already follows the standard's names and batch
semantics (``diagonal``/``trace`` over the last two axes, ``solve`` with a 1-D
right-hand side, ``matrix_norm``, ``vector_norm``, ``svdvals``); each call reaches
the registry's rule for traced values. The standard's keywords NumPy names
differently are translated here (``cholesky(upper=)``, ``pinv(rtol=)``).
"""
from __future__ import annotations

import numpy as np

from ..core.tracer import Box

__all__ = [
    "matrix_transpose", "cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv",
    "matmul", "matrix_norm", "matrix_power", "matrix_rank", "outer", "pinv", "qr",
    "slogdet", "solve", "svd", "svdvals", "tensordot", "trace", "vecdot", "vector_norm"
]


def matrix_transpose(x, /):
    return np.matrix_transpose(x)


def cholesky(x, /, *, upper=False):
    """The Cholesky factor: lower ``L`` with ``x = L Lᴴ``, or ``U = Lᴴ`` if ``upper``."""
    low = np.linalg.cholesky(x)
    return np.conj(np.matrix_transpose(low)) if upper else low


def cross(x1, x2, /, *, axis=-1):
    return np.cross(x1, x2, axis=axis)


def det(x, /):
    return np.linalg.det(x)


def diagonal(x, /, *, offset=0):
    return np.linalg.diagonal(x, offset=offset)


def eigh(x, /):
    return np.linalg.eigh(x)


def eigvalsh(x, /):
    return np.linalg.eigvalsh(x)


def inv(x, /):
    return np.linalg.inv(x)


def matmul(x1, x2, /):
    return np.matmul(x1, x2)


def matrix_norm(x, /, *, keepdims=False, ord="fro"):  # noqa: A002
    return np.linalg.matrix_norm(x, keepdims=keepdims, ord=ord)


def matrix_power(x, n, /):
    return np.linalg.matrix_power(x, n)


def matrix_rank(x, /, *, rtol=None):
    return np.linalg.matrix_rank(x, rtol=rtol)


def outer(x1, x2, /):
    return np.outer(x1, x2)


def pinv(x, /, *, rtol=None):
    """The pseudo-inverse; singular values below ``rtol``·σ_max are dropped (the
    standard's default ``rtol`` is max(M, N)·eps)."""
    if rtol is None:
        rtol = max(x.shape[-2:]) * np.finfo(x.dtype).eps
    return np.linalg.pinv(x, rcond=rtol)


def qr(x, /, *, mode="reduced"):
    return np.linalg.qr(x, mode=mode)


def slogdet(x, /):
    return np.linalg.slogdet(x)


def solve(x1, x2, /):
    return np.linalg.solve(x1, x2)


def svd(x, /, *, full_matrices=True):
    return np.linalg.svd(x, full_matrices=full_matrices)


def svdvals(x, /):
    return np.linalg.svdvals(x)


def tensordot(x1, x2, /, *, axes=2):
    return np.tensordot(x1, x2, axes=axes)


def trace(x, /, *, offset=0, dtype=None):
    out = np.linalg.trace(x, offset=offset)
    return out if dtype is None or np.dtype(dtype) == out.dtype else out.astype(dtype)


def vecdot(x1, x2, /, *, axis=-1):
    """Σ conj(x1)·x2 along ``axis`` (the standard conjugates the first argument)."""
    if axis != -1 and (isinstance(x1, Box) or isinstance(x2, Box)):
        # dualad's rule contracts the last axis: move the contracted axis there
        x1, x2 = np.broadcast_arrays(x1, x2)
        x1, x2 = np.moveaxis(x1, axis, -1), np.moveaxis(x2, axis, -1)
    if isinstance(x1, Box) or isinstance(x2, Box):
        return np.vecdot(x1, x2)
    return np.vecdot(x1, x2, axis=axis)


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):  # noqa: A002
    return np.linalg.vector_norm(x, axis=axis, keepdims=keepdims, ord=ord)


