"""LU factorization with partial pivoting, A = P L U, as LAPACK's packed ``lu_factor``.

One primitive, ``lu_packed``, returns LAPACK's packed factor M = tril(L, -1) + U
of A = P L U (L unit lower, U upper, P a permutation: piecewise constant, zero
derivative). With X = L⁻¹ Pᵀ Ȧ U⁻¹ (strictly lower part from L̇, upper from U̇):

    L̇ = L tril(X, -1),   U̇ = triu(X) U,   Ṁ = L̇ + U̇
    Ā = P L⁻ᵀ (tril(Lᵀ M̄, -1) + triu(M̄ Uᵀ)) U⁻ᵀ

Square matrices (and stacks) only; the derivative exists while the pivot
order is locally constant and U is invertible.
"""
from __future__ import annotations

import numpy as np

from ...core.tracer import shape_of, unguarded_value
from ...core.primitive import Primitive, register, sample
from ..core.batch_ops import stacked_rule
from ..core.products import matmul, tril, triu
from ...core.values import map_value
from .basic import solve_triangular, solve_triangular_p
from ._common import _A3, check_square, mm, mT, scipy_linalg

__all__ = ["lu_pivots_p", "lu_packed_p", "lu_factor", "lu", "lu_solve"]


def _perm_matrix(piv):
    """P with A = P L U from LAPACK's sequential row interchanges ``piv``."""
    n = piv.shape[-1]
    lead = piv.shape[:-1]
    out = np.empty(lead + (n, n))
    for idx in np.ndindex(*lead):
        perm = np.arange(n)
        for i, q in enumerate(piv[idx]):
            perm[i], perm[q] = perm[q], perm[i]
        out[idx] = np.eye(n)[perm].T
    return out


# LAPACK's pivot indices, a primitive of zero derivative: under dualad.jit the pivots are
# computed in the program and only they are guarded (a new matrix with the same pivot
# order replays), not the whole matrix
lu_pivots_p = register(Primitive("lu_pivots", lambda a: scipy_linalg().lu_factor(a)[1],
                                 zero_derivative=True, sparsity="matrix"))
lu_pivots_p.defbatch(stacked_rule(lu_pivots_p))   # vmap: one more stack axis


def _pivots(a):
    # P in a's floating dtype (a 0/1 matrix: exact in any), so float32 stays float32
    # (under vmap one P per example: map_value keeps the batch axes of a BatchTracer)
    dtype = _float_dtype(a)
    return map_value(lu_pivots_p(a), lambda v: _perm_matrix(v).astype(dtype))


def _unpack(m):
    n = shape_of(m)[-1]
    # the unit diagonal in m's dtype: a float64 eye would promote a float32 L
    return tril(m, -1) + np.eye(n, dtype=_float_dtype(m)), triu(m)


def _float_dtype(x):
    dt = np.result_type(unguarded_value(x))
    return dt if dt.kind in "fc" else np.dtype(np.float64)


def _lu_jvp(t, m, a):
    p = _pivots(a)
    low, up = _unpack(m)
    y = solve_triangular_p(low, mm(mT(p), t), trans=0, lower=True, unit_diagonal=True)
    x = mT(solve_triangular_p(up, mT(y), trans=1, lower=False, unit_diagonal=False))
    return mm(low, tril(x, -1)) + mm(triu(x), up)


def _lu_vjp(ct, m, a):
    p = _pivots(a)
    low, up = _unpack(m)
    k = tril(mm(mT(low), ct), -1) + triu(mm(ct, mT(up)))
    z = solve_triangular_p(low, k, trans=1, lower=True, unit_diagonal=True)          # L⁻ᵀ K
    z = mT(solve_triangular_p(up, mT(z), trans=0, lower=False, unit_diagonal=False))  # · U⁻ᵀ
    return mm(p, z)


lu_packed_p = register(Primitive("lu_packed", lambda a: scipy_linalg().lu_factor(a)[0],
                                     sparsity="matrix"))
lu_packed_p.defjvp(_lu_jvp)
lu_packed_p.defvjp(_lu_vjp)
lu_packed_p.defbatch(stacked_rule(lu_packed_p))   # vmap: the batch axis is one more stack axis
lu_packed_p.samples = [sample(_A3), sample(_A3[::-1].copy()),
                       sample(np.stack([_A3, _A3.T[::-1]]))]
lu_pivots_p.samples = lu_packed_p.samples


def lu_factor(a, overwrite_a=False, check_finite=True):
    """``scipy.linalg.lu_factor``: (packed LU, pivot indices); the pivots are integers."""
    check_square("lu_factor", a, real=True)
    return lu_packed_p(a), map_value(lu_pivots_p(a), lambda v: v)


def lu(a, permute_l=False, overwrite_a=False, check_finite=True, p_indices=False):
    """``scipy.linalg.lu`` of a square matrix: (P, L, U) with A = P L U, or (P L, U)."""
    check_square("lu", a, real=True)
    if p_indices:
        raise NotImplementedError("lu: p_indices=True is not supported; use the matrix P")
    p = _pivots(a)
    low, up = _unpack(lu_packed_p(a))
    return (mm(p, low), up) if permute_l else (p, low, up)


def lu_solve(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    """``scipy.linalg.lu_solve``: x with op(A) x = b from ``lu_factor``'s output,
    differentiable in the packed factor and in ``b``."""
    m, piv = lu_and_piv
    p = map_value(piv, lambda v: _perm_matrix(np.asarray(v)))   # per example under vmap
    low, up = _unpack(m)
    if trans in (0, "N"):          # P L U x = b:  x = U⁻¹ L⁻¹ Pᵀ b
        y = matmul(np.swapaxes(p, -1, -2), b)
        y = solve_triangular(low, y, lower=True, unit_diagonal=True)
        return solve_triangular(up, y, lower=False)
    if trans in (1, 2, "T", "C"):  # Uᵀ Lᵀ Pᵀ x = b:  x = P L⁻ᵀ U⁻ᵀ b
        y = solve_triangular(up, b, trans=1, lower=False)
        y = solve_triangular(low, y, trans=1, lower=True, unit_diagonal=True)
        return matmul(p, y)
    raise ValueError(f"lu_solve: trans must be 0, 1, 2, 'N', 'T' or 'C', got {trans!r}")
