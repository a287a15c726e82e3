"""``dualad.scipy.linalg``: scipy.linalg functions with derivative rules, both modes.

SciPy's own functions do not dispatch on traced values; call these instead.
The rules live with their primitives in :mod:`dualad.ops.linalg.basic`,
:mod:`~dualad.ops.linalg.decomp`, :mod:`~dualad.ops.linalg.func` and
:mod:`~dualad.ops.linalg.norm`:

    solve_triangular  X = op(T)⁻¹ B         (only the triangle read is differentiated)
    cho_factor / cho_solve   A = L Lᵀ, X = L⁻ᵀ L⁻¹ B as two triangular solves
    expm, logm        Ė = L(A, Ȧ), the Fréchet derivative (block-triangular trick)
    sqrtm             X Ẋ + Ẋ X = Ȧ (a Sylvester equation)
    solve_sylvester   A X + X B = Q
    lu, lu_factor, lu_solve   A = P L U (square; the pivots have zero derivative)
    solve_banded, solveh_banded   band storage in, O(n·bandwidth) rules
                      (:mod:`~dualad.ops.linalg.banded`)
    solve_continuous_lyapunov, solve_discrete_lyapunov   A X + X Aᴴ = Q and
                      A X Aᴴ - X + Q = 0 (:mod:`~dualad.ops.linalg.equations`)
    fractional_matrix_power, cosm, sinm, tanm, coshm, sinhm, tanhm, polar
                      (:mod:`~dualad.ops.linalg.func_extra`)
    block_diag, toeplitz, circulant, hankel   gathers and concatenations (below)

See ``docs/linalg.md`` for the list of functions, their rules and conventions.

``cho_factor`` returns the factor with zeros (not LAPACK's leftover entries)
in the unused triangle. Differences from SciPy's signatures: ``overwrite_*``
and ``check_finite`` are accepted and ignored.
"""
from __future__ import annotations

import numpy as np

from ..ops.core.complex_numbers import conj as _conj
from ..ops.core.elementwise import where
from ..ops.core.indexing import index as _index
from ..ops.core.shape import (atleast_1d as _atleast_1d, atleast_2d as _atleast_2d,
                              broadcast_to as _broadcast_to, concatenate as _concatenate,
                              flip as _flip)
from ..ops.linalg._common import mT, sym_lower  # noqa: F401  (mT re-exported)
from ..ops.linalg.banded import solve_banded, solveh_banded  # noqa: F401
from ..ops.linalg.basic import cholesky as _np_cholesky, solve as _np_solve
from ..ops.linalg.basic import inv, solve_triangular  # noqa: F401  (re-exported)
from ..ops.linalg.decomp import (eigh as _np_eigh, eigvalsh as _np_eigvalsh, qr as _np_qr,
                                 svd as _np_svd, svdvals)
from ..ops.linalg.det import det  # noqa: F401  (re-exported)
from ..ops.linalg.equations import solve_continuous_lyapunov, solve_discrete_lyapunov
from ..ops.linalg.func import expm, logm, solve_sylvester, sqrtm  # noqa: F401
from ..ops.linalg.func import expm_frechet as _frechet
from ..ops.linalg.func_extra import (cosm, coshm, fractional_matrix_power, polar, sinhm, sinm,
                                     tanhm, tanm)
from ..ops.linalg.lu import lu, lu_factor, lu_solve  # noqa: F401
from ..ops.linalg.norm import norm, pinv as _np_pinv  # noqa: F401
from ..core.tracer import Box as _Box, primal_value as _primal, shape_of as _shape_of

__all__ = [
    "block_diag", "cho_factor", "cho_solve", "cholesky", "circulant", "coshm", "cosm",
    "det", "eigh", "eigvalsh", "expm", "expm_frechet", "fractional_matrix_power", "hankel",
    "inv", "logm", "lu", "lu_factor", "lu_solve", "mT", "norm", "pinv", "polar", "qr",
    "sinhm", "sinm", "solve", "solve_banded", "solve_continuous_lyapunov",
    "solve_discrete_lyapunov", "solve_lyapunov", "solve_sylvester", "solve_triangular",
    "solveh_banded", "sqrtm", "svd", "svdvals", "tanhm", "tanm", "toeplitz"
]

solve_lyapunov = solve_continuous_lyapunov   # SciPy's alias


def expm_frechet(A, E, method=None, compute_expm=True, check_finite=True):
    """``scipy.linalg.expm_frechet``: (expm(A), L(A, E)), or L(A, E) alone; both
    differentiable in A and E (the block-triangular trick, whatever ``method``)."""
    frechet = _frechet(A, E)
    return (expm(A), frechet) if compute_expm else frechet


def cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    """``scipy.linalg.cholesky``: upper U with A = UᵀU by default, lower L if asked.
    As LAPACK, it reads only the triangle it returns; the other has zero derivative."""
    return _np_cholesky(a, upper=not lower)


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    """``scipy.linalg.cho_factor``: ``(c, lower)`` for :func:`cho_solve`."""
    return cholesky(a, lower=lower), bool(lower)


def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    """``scipy.linalg.cho_solve``: X = A⁻¹B from the Cholesky factor, differentiable in
    the factor (its triangle) and in ``b``."""
    c, lower = c_and_lower
    if lower:      # L Lᵀ x = b
        y = solve_triangular(c, b, trans=0, lower=True)
        return solve_triangular(c, y, trans=1, lower=True)
    y = solve_triangular(c, b, trans=1, lower=False)   # Uᵀ U x = b
    return solve_triangular(c, y, trans=0, lower=False)


def solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, check_finite=True,
          assume_a=None, transposed=False):
    """``scipy.linalg.solve``: ``transposed`` solves Aᵀ x = b; a 1-D ``b`` is a vector.

    The derivative is that of the matrix SciPy's chosen solver actually reads:
    the ``lower`` (else upper) triangle mirrored for 'sym'/'her'/'pos', the
    triangle for 'lower/upper triangular', the diagonal(s) for 'diagonal' and
    'tridiagonal'; 'banded', 'general' and None differentiate all of ``a``."""
    kind = _ASSUME.get(assume_a, assume_a)
    if kind == "sym":
        a = sym_lower(a, bool(lower))
    elif kind in ("lower triangular", "upper triangular"):
        return solve_triangular(a, b, trans=1 if transposed else 0,
                                lower=kind == "lower triangular")
    elif kind in ("diagonal", "tridiagonal"):
        n = a.shape[-1]
        band = np.eye(n, dtype=bool) if kind == "diagonal" else np.abs(
            np.subtract.outer(np.arange(n), np.arange(n))) <= 1
        a = where(band, a, 0.0)
    elif kind not in (None, "gen", "general", "banded"):
        raise ValueError(f"solve: unknown assume_a={assume_a!r}")
    return _np_solve(mT(a) if transposed else a, b)


_ASSUME = {"sym": "sym", "symmetric": "sym", "her": "sym", "hermitian": "sym", "pos": "sym",
           "positive definite": "sym"}


def eigh(a, b=None, lower=True, eigvals_only=False, overwrite_a=False, overwrite_b=False,
         check_finite=True, **kwargs):
    """``scipy.linalg.eigh``: A v = λ v, or with ``b`` the symmetric-definite pencil
    A v = λ B v, reduced with B = L Lᵀ to C = L⁻¹ A L⁻ᵀ, C u = λ u, v = L⁻ᵀ u (so
    Vᵀ B V = I as in SciPy). Reads the ``lower`` (else upper) triangles of a and b.
    Eigenvector caveats as for numpy.linalg.eigh (distinct eigenvalues, sign)."""
    for key in ("subset_by_index", "subset_by_value", "eigvals", "type"):
        if kwargs.get(key) not in (None, 1):
            raise NotImplementedError(f"eigh: {key}={kwargs[key]!r} is not supported")
    uplo = "L" if lower else "U"
    if b is None:
        if eigvals_only:
            return _np_eigvalsh(a, UPLO=uplo)
        return tuple(_np_eigh(a, UPLO=uplo))
    L = _np_cholesky(b, upper=not lower)
    L = L if lower else mT(L)
    y = solve_triangular(L, sym_lower(a, bool(lower)), lower=True)        # L⁻¹ A
    c = solve_triangular(L, mT(y), lower=True)                             # L⁻¹ A L⁻ᵀ
    if eigvals_only:
        return _np_eigvalsh(c)
    w, u = _np_eigh(c)
    return w, solve_triangular(L, u, trans=1, lower=True)


def eigvalsh(a, b=None, lower=True, **kwargs):
    return eigh(a, b, lower=lower, eigvals_only=True)


def svd(a, full_matrices=True, compute_uv=True, overwrite_a=False, check_finite=True,
        lapack_driver="gesdd"):
    out = _np_svd(a, full_matrices=full_matrices, compute_uv=compute_uv)
    return out if not compute_uv else tuple(out)


def qr(a, overwrite_a=False, lwork=None, mode="full", pivoting=False, check_finite=True):
    """``scipy.linalg.qr``; differentiable for ``mode='economic'`` (or square 'full') and
    ``mode='r'``, without pivoting."""
    if pivoting:
        raise NotImplementedError("qr: pivoting=True is not differentiable")
    m, n = a.shape[-2:]
    if mode == "economic" or (mode == "full" and m == n):
        return tuple(_np_qr(a))
    if mode == "r":
        return (_np_qr(a, mode="r"),)
    raise NotImplementedError(f"qr: mode={mode!r} of a matrix of shape {a.shape} is not "
                              f"differentiable; use mode='economic'")


def pinv(a, *, atol=None, rtol=None, return_rank=False, check_finite=True):
    out = _np_pinv(a, rcond=rtol)
    if return_rank:
        raise NotImplementedError("pinv: return_rank=True is not supported")
    return out


# --- structured matrices: gathers from a vector of values, or concatenations -------------
def _array(x):
    return x if isinstance(x, _Box) else np.asarray(x)


def _batched(fname, what, arrs, core):
    """``arrs`` broadcast over their batch axes (all but the last ``core``)."""
    try:
        lead = np.broadcast_shapes(*[_shape_of(a)[:-core] for a in arrs])
    except ValueError as e:
        raise ValueError(f"{fname}: the batch shapes of the {what} "
                         f"{[_shape_of(a) for a in arrs]} do not broadcast") from e
    return [_broadcast_to(a, lead + _shape_of(a)[-core:]) for a in arrs]


def _vectors(fname, *vs):
    """1-D (or batches of 1-D) arrays, broadcast over their leading axes."""
    return _batched(fname, "arguments", [_atleast_1d(_array(v)) for v in vs], 1)


def _tail(v):
    return _index(v, (Ellipsis, slice(1, None)))


def toeplitz(c, r=None):
    """``scipy.linalg.toeplitz``: T[i, j] = c[i - j] (i ≥ j), r[j - i] (j > i); ``r``
    defaults to conj(c) and r[0] is ignored. One gather from [c reversed, r[1:]], so
    differentiable in c and r. Leading axes are batches (as SciPy ≥ 1.17)."""
    c, r = _vectors("toeplitz", c, _conj(_array(c)) if r is None else r)
    nc, nr = _shape_of(c)[-1], _shape_of(r)[-1]
    vals = _concatenate([_flip(c, -1), _tail(r)], axis=-1)
    return _index(vals, (Ellipsis, (nc - 1) - np.arange(nc)[:, None] + np.arange(nr)))


def hankel(c, r=None):
    """``scipy.linalg.hankel``: H[i, j] = c[i + j] (i + j < len(c)), else r[i + j - len(c)
    + 1]; ``r`` defaults to zeros and r[0] is ignored. One gather from [c, r[1:]].
    Leading axes are batches (SciPy 1.17 ravels them with a FutureWarning; SciPy 1.19
    batches them, as here)."""
    c = _array(c)
    r = np.zeros(_shape_of(c), np.result_type(_primal(c))) if r is None else r
    c, r = _vectors("hankel", c, r)
    nc, nr = _shape_of(c)[-1], _shape_of(r)[-1]
    vals = _concatenate([c, _tail(r)], axis=-1)
    return _index(vals, (Ellipsis, np.arange(nc)[:, None] + np.arange(nr)))


def circulant(c):
    """``scipy.linalg.circulant``: C[i, j] = c[(i - j) mod n]; a gather, differentiable in
    c. Leading axes are batches."""
    (c,) = _vectors("circulant", c)
    n = _shape_of(c)[-1]
    return _index(c, (Ellipsis, (np.arange(n)[:, None] - np.arange(n)) % n))


def block_diag(*arrs):
    """``scipy.linalg.block_diag``: the arguments (scalars and 1-D arrays as rows, 2-D
    blocks, higher dimensions as batches) on the diagonal of a zero matrix, by
    concatenation; differentiable in every block."""
    if not arrs:
        arrs = ([],)
    arrs = _batched("block_diag", "blocks", [_atleast_2d(_array(a)) for a in arrs], 2)
    lead = _shape_of(arrs[0])[:-2]           # the batch shape they now share
    dtype = np.result_type(*[_primal(a) for a in arrs])
    widths = [_shape_of(a)[-1] for a in arrs]
    total, col, rows = sum(widths), 0, []
    for a, w in zip(arrs, widths):
        h = _shape_of(a)[-2]
        if h:
            parts = ([np.zeros(lead + (h, col), dtype)] if col else []) + [a] + (
                [np.zeros(lead + (h, total - col - w), dtype)] if total - col - w else [])
            rows.append(_concatenate(parts, axis=-1) if len(parts) > 1 else a)
        col += w
    if not rows:
        return np.zeros(lead + (0, total), dtype)
    return _concatenate(rows, axis=-2) if len(rows) > 1 else rows[0]
