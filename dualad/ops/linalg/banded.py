"""Banded solves in LAPACK's band storage, at O(n·bandwidth) cost in every rule.

Band storage (SciPy's ``solve_banded``): A (n×n, l sub- and u superdiagonals)
is held in ``ab`` of shape (l + u + 1, n) with ``ab[u + i - j, j] = A[i, j]``;
the corners of ``ab`` that hold no entry of A are ignored (zero derivative).

    solve_banded   X = A⁻¹B       Ẋ = A⁻¹(Ḃ - Ȧ X)       B̄ = A⁻ᵀ X̄,   āb = band(-B̄ Xᵀ)
    solveh_banded  X = A⁻¹B,  A symmetric positive definite from one stored triangle:
                   Ẋ = A⁻¹(Ḃ - Ȧ X)       B̄ = A⁻¹ X̄,
                   āb = band(-B̄ Xᵀ) + band(-X B̄ᵀ) off the diagonal, band(-B̄ Xᵀ) on it

band(M) keeps the entries of M inside the band, in band storage; Aᵀ is
banded with (u, l) diagonals (:func:`band_transpose`). No rule forms an n×n
matrix: products with a banded matrix and band-restricted outer products are
gathers of shifted rows (:func:`band_matmul`, :func:`band_matmul_T`,
:func:`band_outer`), and every solve is a banded LAPACK solve, so the rules
are written with registry operations and differentiate again. ``ab`` may be a
stack (..., l + u + 1, n) and ``b`` (..., n, k); a batch of right-hand sides
against one ``ab`` is one LAPACK call.

solveh_banded differentiates the symmetric matrix its stored triangle (the
``lower`` one, else the upper) defines, as LAPACK's ``pbsv`` reads it; it is
real-only (a Hermitian complex one is not holomorphic). solve_banded takes
complex matrices with the codebase's convention (holomorphic: no conjugates).
"""
from __future__ import annotations

import numpy as np

from ...core.tracer import shape_of, unguarded_value
from ...core.primitive import Primitive, register, sample
from ...core.batch_axes import batch_ndim
from ..core.batch_ops import stacked_rule
from ..core.linear import unbroadcast
from ..core.indexing import index
from ._common import _sym_solve, check_real, sym_map, tangent_rhs, scipy_linalg
from ..core.reductions import sum as sum_
from ..core.shape import concatenate, expand_dims, reshape

__all__ = [
    "band_matmul", "band_matmul_T", "band_outer", "band_transpose", "solve_banded_p",
    "sym_band_matmul", "solveh_banded_p", "solve_banded", "solveh_banded"
]

# --- band-storage helpers (registry operations, O(n·bandwidth·k)) -------------------------
def _pad(x, before, after, axis):
    """Zeros around ``x`` along ``axis`` (negative)."""
    s = shape_of(x)
    ax = axis % len(s)
    dtype = np.result_type(unguarded_value(x))
    parts = ([np.zeros(s[:ax] + (before,) + s[ax + 1:], dtype)] if before else []) + [x] + (
        [np.zeros(s[:ax] + (after,) + s[ax + 1:], dtype)] if after else [])
    return concatenate(parts, axis=ax) if len(parts) > 1 else x


def _rows_of(v, l, u):
    """V[..., r, j, k] = v[..., j + r - u, k], zero where j + r - u is outside 0..n-1:
    row r of the band holds the entries A[j + r - u, j]."""
    n = shape_of(v)[-2]
    cols = np.arange(l + u + 1)[:, None] + np.arange(n)[None, :]
    return index(_pad(v, u, l, -2), (Ellipsis, cols, slice(None)))


def _diagonals_of(p, l, u):
    """Y[..., r, i, k] = p[..., r, i + u - r, k], zero outside: the band's rows, shifted
    so that column j of row r lands in the row i = j + r - u of A it belongs to."""
    n = shape_of(p)[-2]
    r = np.arange(l + u + 1)[:, None]
    cols = np.arange(n)[None, :] + (l + u) - r
    return index(_pad(p, l, u, -2), (Ellipsis, r, cols, slice(None)))


def band_matmul(ab, x, l, u):
    """A X for A in band storage (..., l + u + 1, n) and X (..., n, k)."""
    return sum_(_diagonals_of(expand_dims(ab, -1) * expand_dims(x, -3), l, u), axis=-3)


def band_matmul_T(ab, x, l, u):
    """Aᵀ X for A in band storage: (Aᵀ X)_j = Σ_r ab[r, j] X[j + r - u]."""
    return sum_(expand_dims(ab, -1) * _rows_of(x, l, u), axis=-3)


def band_outer(g, x, l, u):
    """band(G Xᵀ): entry (r, j) is Σ_k G[j + r - u, k] X[j, k] (the (i, j) = (j + r - u, j)
    entry of G Xᵀ), zero in the unused corners."""
    return sum_(_rows_of(g, l, u) * expand_dims(x, -3), axis=-1)


def band_transpose(ab, l, u):
    """The band storage (u + l + 1, n) of Aᵀ: abᵀ[r, j] = ab[l + u - r, j + r - l]."""
    n = shape_of(ab)[-1]
    r = np.arange(l + u + 1)[:, None]
    return index(_pad(ab, l, u, -1), (Ellipsis, (l + u) - r, np.arange(n)[None, :] + r))


def _lapack_stacked(solve_one, ab, b):
    """``solve_one(ab2d, b2d)`` over broadcast leading axes; with one ``ab`` every
    right-hand side goes to one LAPACK call as columns."""
    ab, b = np.asarray(ab), np.asarray(b)
    n, k = b.shape[-2:]
    if ab.ndim == 2:
        lead = b.shape[:-2]
        cols = np.moveaxis(b, -2, 0).reshape(n, -1)
        x = solve_one(ab, cols) if cols.shape[1] else cols.astype(np.result_type(ab, b, 1.0))
        return np.moveaxis(x.reshape((n,) + lead + (k,)), 0, -2)
    lead = np.broadcast_shapes(ab.shape[:-2], b.shape[:-2])
    ab = np.broadcast_to(ab, lead + ab.shape[-2:])
    b = np.broadcast_to(b, lead + b.shape[-2:])
    out = np.empty(lead + (n, k), np.result_type(ab, b, 1.0))
    for idx in np.ndindex(*lead):
        out[idx] = solve_one(ab[idx], b[idx])
    return out


# --- solve_banded ---------------------------------------------------------------------------
def _dense_from_band(sp, m, l, u):
    n = m.shape[1]
    return sp.Matrix(n, n, lambda i, j: m[u + i - j, j] if -u <= i - j <= l else 0)


solve_banded_p = register(Primitive(
    "solve_banded",
    lambda ab, b, l, u: _lapack_stacked(
        lambda a2, b2: scipy_linalg().solve_banded((l, u), a2, b2), ab, b), sparsity="matrix",
    sympy=lambda sp, ab, b, l, u: sym_map(
        sp, lambda m, r: _sym_solve(_dense_from_band(sp, m, l, u), r), ab, b)))


def _solve_banded_jvp_all(tangents, x, ab, b, l, u):
    tab, tb = tangents
    rhs = tangent_rhs(x, (tb, b, None), (tab, ab, lambda t: -band_matmul(t, x, l, u)))
    return solve_banded_p(ab, rhs, l=l, u=u)


def _solve_banded_vjp_all(ct, x, ab, b, l, u):
    nb = batch_ndim(ct, x)
    gb = solve_banded_p(band_transpose(ab, l, u), ct, l=u, u=l)      # A⁻ᵀ X̄
    gab = -band_outer(gb, x, l, u)
    return [unbroadcast(gab, shape_of(ab), nb), unbroadcast(gb, shape_of(b), nb)]


solve_banded_p.def_all(jvp=_solve_banded_jvp_all, vjp=_solve_banded_vjp_all)
# vmap: band storage (rows, n) and right-hand sides (n, k) are matrices of broadcast stacks
solve_banded_p.defbatch(stacked_rule(solve_banded_p, (2, 2)))


# --- solveh_banded --------------------------------------------------------------------------
def _lu_of(lower, w):
    """(l, u) of the stored triangle: the lower one has w subdiagonals, the upper w super."""
    return (w, 0) if lower else (0, w)


def _strict(ab, lower):
    """The stored band without its diagonal row (row 0 if lower, else the last)."""
    w = shape_of(ab)[-2] - 1
    dt = np.result_type(unguarded_value(ab))
    mask = np.ones((w + 1, 1), dtype=dt if dt.kind == "f" else np.float64)  # float32 stays
    mask[0 if lower else w] = 0.0
    return ab * mask


def sym_band_matmul(ab, x, lower):
    """A X for the symmetric A whose ``lower`` (else upper) band is stored in ``ab``:
    the stored triangle T times X plus the strict triangle's transpose times X."""
    l, u = _lu_of(lower, shape_of(ab)[-2] - 1)
    return band_matmul(ab, x, l, u) + band_matmul_T(_strict(ab, lower), x, l, u)


def _solveh_impl(ab, b, lower):
    return _lapack_stacked(lambda a2, b2: scipy_linalg().solveh_banded(a2, b2, lower=lower), ab, b)


def _solveh_sympy(sp, ab, b, lower):
    def one(m, r):
        w = m.shape[0] - 1
        l, u = _lu_of(lower, w)
        t = _dense_from_band(sp, m, l, u)
        return _sym_solve(t + (t.T - sp.diag(*[t[i, i] for i in range(t.shape[0])])), r)
    return sym_map(sp, lambda m, r: one(m, r), ab, b)


solveh_banded_p = register(Primitive("solveh_banded", _solveh_impl, sympy=_solveh_sympy,
                                     sparsity="matrix"))


def _solveh_jvp_all(tangents, x, ab, b, lower):
    tab, tb = tangents
    rhs = tangent_rhs(x, (tb, b, None), (tab, ab, lambda t: -sym_band_matmul(t, x, lower)))
    return solveh_banded_p(ab, rhs, lower=lower)


def _solveh_vjp_all(ct, x, ab, b, lower):
    nb = batch_ndim(ct, x)
    gb = solveh_banded_p(ab, ct, lower=lower)                         # A⁻¹ X̄ (A = Aᵀ)
    l, u = _lu_of(lower, shape_of(ab)[-2] - 1)
    gab = -(band_outer(gb, x, l, u) + _strict(band_outer(x, gb, l, u), lower))
    return [unbroadcast(gab, shape_of(ab), nb), unbroadcast(gb, shape_of(b), nb)]


solveh_banded_p.def_all(jvp=_solveh_jvp_all, vjp=_solveh_vjp_all)
solveh_banded_p.defbatch(stacked_rule(solveh_banded_p, (2, 2)))


# --- public functions ---------------------------------------------------------------------
def _check_rhs(fname, ab, b):
    n = shape_of(ab)[-1]
    bs = shape_of(b)
    if len(bs) not in (1, 2) or bs[0] != n:
        raise ValueError(f"{fname}: argument b of shape {bs} does not match argument ab of "
                         f"shape {shape_of(ab)}: expected b of shape ({n},) or ({n}, k)")
    return n, len(bs) == 1


def _solve_vector_or_matrix(prim, ab, b, vector, n, **params):
    if vector:
        x = prim(ab, reshape(b, (n, 1)), **params)
        return reshape(x, shape_of(x)[:-1])
    return prim(ab, b, **params)


def solve_banded(l_and_u, ab, b, overwrite_ab=False, overwrite_b=False, check_finite=True):
    """``scipy.linalg.solve_banded``: x with A x = b, A given by its (l, u) band ``ab``
    of shape (l + u + 1, n) (or a stack (..., l + u + 1, n), as SciPy ≥ 1.17); ``b`` is
    (n,) or (n, k), shared by a stack. Differentiable in ab and b."""
    try:
        l, u = (int(v) for v in l_and_u)
        ok = (l, u) == tuple(l_and_u) and l >= 0 and u >= 0
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise ValueError(f"solve_banded: l_and_u must be a pair of non-negative integers "
                         f"(l, u), got {l_and_u!r}")
    s = shape_of(ab)
    if len(s) < 2:
        raise ValueError(f"solve_banded: argument ab must be band storage of shape "
                         f"(l + u + 1, n) (or a stack of them), got shape {s}")
    if s[-2] != l + u + 1:
        raise ValueError(f"solve_banded: argument ab of shape {s} does not fit (l, u) = "
                         f"({l}, {u}): band storage needs l + u + 1 = {l + u + 1} rows")
    n, vector = _check_rhs("solve_banded", ab, b)
    try:
        return _solve_vector_or_matrix(solve_banded_p, ab, b, vector, n, l=l, u=u)
    except np.linalg.LinAlgError as e:
        raise np.linalg.LinAlgError(f"solve_banded: the matrix of argument ab (shape {s}, "
                                    f"(l, u) = ({l}, {u})) is singular: {e}") from e


def solveh_banded(ab, b, overwrite_ab=False, overwrite_b=False, lower=False,
                  check_finite=True):
    """``scipy.linalg.solveh_banded``: x with A x = b, A symmetric positive definite
    given by its upper (``lower=False``) or lower band ``ab`` of shape (w + 1, n) (or a
    stack of them). Differentiable in ab (the symmetric matrix it defines) and b; real
    only."""
    s = shape_of(ab)
    if len(s) < 2 or s[-2] < 1:
        raise ValueError(f"solveh_banded: argument ab must be band storage of shape "
                         f"(w + 1, n) (or a stack of them), got shape {s}")
    check_real("solveh_banded", ab, "ab")
    check_real("solveh_banded", b, "b")
    n, vector = _check_rhs("solveh_banded", ab, b)
    if s[-2] > n > 0:
        raise ValueError(f"solveh_banded: argument ab of shape {s} has more diagonals "
                         f"({s[-2]}) than the matrix has rows ({n})")
    try:
        return _solve_vector_or_matrix(solveh_banded_p, ab, b, vector, n, lower=bool(lower))
    except np.linalg.LinAlgError as e:
        raise np.linalg.LinAlgError(f"solveh_banded: the matrix of argument ab (shape {s}, "
                                    f"lower={bool(lower)}) is not positive definite: "
                                    f"{e}") from e


# --- samples for the rule checker (diagonally dominant, so well conditioned) ------------
_AB11 = np.array([[0.0, 0.5, -0.3, 0.2], [3.0, 2.5, 2.0, 3.2], [0.4, -0.2, 0.6, 0.0]])
_AB20 = np.array([[2.5, 3.0, 2.0], [0.3, -0.4, 0.0], [0.5, 0.0, 0.0]])
_AB12 = np.array([[0.0, 0.0, 0.3, -0.2], [0.0, 0.4, 0.1, 0.5], [2.0, 3.0, 2.5, 2.2],
                  [-0.3, 0.2, 0.6, 0.0]])
_ABH_U = np.array([[0.0, 0.5, -0.4, 0.3], [2.0, 2.5, 3.0, 2.2]])
_ABH_L = np.array([[3.0, 2.0, 2.5], [0.6, -0.5, 0.0], [0.2, 0.0, 0.0]])

solve_banded_p.samples = [
    sample(np.array([[2.0, 1.5]]), (2, 1), l=0, u=0),
    sample(_AB11, (4, 2), l=1, u=1), sample(_AB20, (3, 1), l=2, u=0),
    sample(_AB12, (4, 2), l=1, u=2),
    sample(_AB11 + 0.3j * _AB11[::-1], np.array([[1.0 - 0.5j], [0.2j], [0.3], [-1.0]]),
           l=1, u=1)]
solve_banded_p.holomorphic = True
solveh_banded_p.samples = [
    sample(np.array([[1.5, 2.0]]), (2, 1), lower=False),
    sample(_ABH_U, (4, 2), lower=False), sample(_ABH_L, (3, 1), lower=True)]
