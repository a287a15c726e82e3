"""``symmetric=True`` is a promise the reverse sweep relies on (the transposed solve reuses
A for Aᵀ); a dense A is checked in O(n²) next to its O(n³) solve, a matvec by one random
probe ⟨u, A v⟩ = ⟨A u, v⟩ (one extra pair of matvecs on plain values).

The probe's vectors come from a private generator with a fixed seed: no global random
state is read or changed.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ._util import plain

__all__ = ["check_symmetric", "check_symmetric_matrix"]


def _tolerance(dtype):
    """sqrt(eps) of the working precision: far above rounding (n·eps) of a matrix built
    symmetric, far below any asymmetry that changes a derivative visibly."""
    return float(np.sqrt(np.finfo(np.result_type(dtype, np.float32)).eps))


def _advice(matrix):
    fix = ("pass a symmetric matrix (e.g. (A + A.T) / 2)" if matrix else
           "give rmatvec=u ↦ Aᵀu if A is not symmetric")
    return (f"the transposed solve of reverse mode would use A⁻¹ where A⁻ᵀ is needed (a "
            f"wrong gradient). Drop symmetric=True, or {fix}")


_TILE = 256


def _max_asymmetry(a):
    """max |A − Aᵀ| over square tiles A[I, J] − A[J, I]ᵀ (J ≥ I): ``a - a.T`` in one go
    reads Aᵀ with a stride of a row and is 20-40x slower than the tiles once A outgrows
    the cache (0.5 ms instead of 18 ms at n = 500, where the LU takes 20-35 ms)."""
    n, worst = a.shape[0], 0.0
    for i in range(0, n, _TILE):
        for j in range(i, n, _TILE):
            upper = a[i:i + _TILE, j:j + _TILE]
            d = float(np.max(np.abs(upper - a[j:j + _TILE, i:i + _TILE].T)))
            if not d <= worst:
                worst = d
    return worst


def check_symmetric_matrix(a, name):
    """Raise ValueError when the matrix ``a`` (dense or ``scipy.sparse``, plain) is not
    symmetric to ``sqrt(eps)·max|a|``: O(n²) dense, O(nnz) sparse."""
    if sp.issparse(a):
        a = sp.csr_array(a)
        diff = abs(a - a.T)
        asym = float(diff.max()) if diff.nnz else 0.0
        scale = float(abs(a).max()) if a.nnz else 0.0
    else:
        a = plain(a)
        if a.ndim != 2 or a.shape[0] != a.shape[1]:
            return
        scale = float(np.max(np.abs(a), initial=0.0))
        asym = _max_asymmetry(a)
    if not asym > _tolerance(a.dtype) * scale:      # NaN entries: left to the solve's check
        return
    raise ValueError(f"{name}: symmetric=True but A (shape {tuple(a.shape)}) is not "
                     f"symmetric: max |A − Aᵀ| = {asym:.3g} (max |A| = {scale:.3g}); "
                     + _advice(True))


def check_symmetric(system, consts):
    """Raise ValueError when ``system`` (declared symmetric) is not, at ``consts``."""
    name, n = system.name, system.n
    if system.matrix is not None:
        check_symmetric_matrix(system.matrix(*consts), name)
        return
    dtype = np.result_type(*[plain(c) for c in consts], np.float64)
    mv = system.plain_matvec(consts, dtype)
    rng = np.random.default_rng(20260)
    u, v = rng.standard_normal(n), rng.standard_normal(n)
    au, av = mv(u), mv(v)
    system.stats["matvecs"] -= 2            # the probe is not part of the solve's cost
    lhs, rhs = np.dot(u, av), np.dot(au, v)
    scale = np.linalg.norm(u) * np.linalg.norm(av) + np.linalg.norm(v) * np.linalg.norm(au)
    if not np.all(np.isfinite([lhs, rhs])) or abs(lhs - rhs) <= _tolerance(dtype) * scale:
        return
    raise ValueError(f"{name}: symmetric=True but the matvec (n = {n}) is not symmetric: a "
                     f"random probe gives ⟨u, A v⟩ = {lhs:.6g} and ⟨A u, v⟩ = {rhs:.6g} "
                     f"(difference {abs(lhs - rhs):.3g}); " + _advice(False))
