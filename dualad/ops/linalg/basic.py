"""Inverse, solves and Cholesky (determinants: :mod:`.det`).

Rules (Giles 2008, "An extended collection of matrix derivative results"),
for one matrix or a stack (``...`` leading axes, NumPy's stacked-matrix
broadcasting), with ``Y``/``X`` the primal output:

    inv        Y = A⁻¹          Ẏ = -Y Ȧ Y                Ā = -Yᵀ Ȳ Yᵀ
    solve      X = A⁻¹B         Ẋ = A⁻¹(Ḃ - Ȧ X)          B̄ = A⁻ᵀ X̄,  Ā = -B̄ Xᵀ
    cholesky   A = L Lᵀ         L̇ = L Φ(L⁻¹ Ȧ L⁻ᵀ)        Ā = sym*(L⁻ᵀ Φ(Lᵀ L̄) L⁻¹)
    solve_triangular  op(T) X = B   Ẋ = op(T)⁻¹(Ḃ - op(Ṫ) X)   B̄ = op(T)⁻ᵀ X̄,  op(T)‾ = -B̄ Xᵀ

Φ(M) keeps the lower triangle of M and halves its diagonal. Like LAPACK,
``cholesky`` reads only the lower triangle of A: the matrix differentiated is
A_eff = tril(A) + tril(A, -1)ᵀ, so an upper entry has zero derivative and
``sym*`` maps a cotangent G of A_eff to tril(G) + tril(Gᵀ, -1).
At singular A, the derivatives of inv and solve do not exist: LinAlgError is raised.
(det's derivative there is the adjugate: :mod:`.det`.)

Every rule is written with registry operations (including these primitives
applied to traced outputs), so the rules differentiate again. The rest of
numpy.linalg / scipy.linalg: eigen, singular value and QR decompositions in
:mod:`.decomp`; expm, sqrtm, solve_sylvester in :mod:`.func`;
pinv, lstsq and norms in :mod:`.norm`. The package's ``NUMPY_FUNCTIONS``
(:mod:`dualad.ops.linalg`) routes every one of them from the NumPy front end.

Complex inputs: the holomorphic ones (inv, solve, det, solve_triangular,
matrix_power, multi_dot, expm, logm, sqrtm, solve_sylvester) take complex matrices in
both modes with JAX's convention (cotangents are not conjugated: ū ↦ ū J).
eigh, eig, svd and the norms take complex matrices by their R-linear rules
(:mod:`.decomp_complex`, docs/linalg.md); qr, lu, cholesky, slogdet, pinv, lstsq and
cond are real-only: a complex argument raises NotImplementedError.

Coverage (F = forward, R = reverse, both to any order; S = SymPy translation):

    numpy.linalg  inv FRS, solve FRS, det FRS (stacks), slogdet FRS (sign: zero
                  derivative), cholesky FRS, eigh FR, eigvalsh FR, eig FR (complex
                  spectra too), eigvals FR, svd FR (reduced), svdvals FR, qr FR, pinv FR,
                  lstsq FR (x, residuals, s), norm FR (every ord/axis), matrix_norm FR,
                  vector_norm FR, cond FR, matrix_power FR, multi_dot FR, tensorinv FR,
                  tensorsolve FR, matrix_transpose/diagonal/trace/matmul/outer/vecdot/
                  tensordot FR (NumPy 2 names), matrix_rank (zero derivative)
    scipy.linalg  solve_triangular FRS, cho_factor FRS, cho_solve FRS, solve FRS (every
                  assume_a), lu FR, lu_factor FR, lu_solve FR, expm FR, expm_frechet FR,
                  logm FR, sqrtm FR, solve_sylvester FRS, eigh FR (also generalized),
                  inv, det, cholesky, svd, qr, pinv, norm (in dualad.scipy.linalg)
"""
from __future__ import annotations

import numpy as np

from ...core.tracer import ndim_of, shape_of, unguarded_value
from ...core.primitive import Primitive, implements, register, sample
from ...core.batch_axes import batch_ndim
from ..core.batch_ops import align_stacks, stacked_rule
from ..core.linear import unbroadcast
from ..core.products import tril, triu
from ..core.shape import reshape
from ._common import scipy_linalg
from ._common import (_A2, _A3, _SPD3, _STACK, _sym_solve, check_square, mm, mT,
                      sym_lower, sym_lower_T, sym_map, tangent_rhs)

__all__ = [
    "inv_p", "inv", "solve_p", "solve", "solve_triangular_p", "solve_triangular",
    "cholesky_p", "cholesky"
]

# --- inverse ------------------------------------------------------------------------------
inv_p = register(Primitive("inv", np.linalg.inv, sparsity="matrix",
                           sympy=lambda sp, a: sym_map(sp, lambda m: m.adjugate() / m.det(), a)))
inv_p.defjvp(lambda t, ans, a: -mm(mm(ans, t), ans))
inv_p.defvjp(lambda ct, ans, a: -mm(mm(mT(ans), ct), mT(ans)))
inv_p.defbatch(stacked_rule(inv_p))   # vmap: the batch axis is one more stack axis


@implements(np.linalg.inv)
def inv(a):
    """``np.linalg.inv``: Ẏ = -Y Ȧ Y, Ā = -Yᵀ Ȳ Yᵀ."""
    check_square("inv", a)
    return inv_p(a)


# --- solve ----------------------------------------------------------------------------------
solve_p = register(Primitive("solve", np.linalg.solve, sparsity="matrix",
                             sympy=lambda sp, a, b: sym_map(sp, _sym_solve, a, b)))


def _solve_jvp_all(tangents, ans, a, b):
    ta, tb = tangents
    return solve_p(a, tangent_rhs(ans, (tb, b, None), (ta, a, lambda t: -mm(t, ans))))


def _solve_vjp_all(ct, ans, a, b):
    nb = batch_ndim(ct, ans)
    gb = solve_p(mT(a), ct)
    return [unbroadcast(-mm(gb, mT(ans)), shape_of(a), nb), unbroadcast(gb, shape_of(b), nb)]


solve_p.def_all(jvp=_solve_jvp_all, vjp=_solve_vjp_all)


def _solve_batch(args, batched):
    """vmap: NumPy 2's solve per example (a 1-D b is one vector: made a column, and the
    column squeezed from the result; otherwise b is a stack of matrices), the batch axis
    one more stack axis, lined up in front of both operands' stacks."""
    a, b = args
    vector = ndim_of(b) - batched[1] == 1
    if vector:
        b = reshape(b, shape_of(b) + (1,))
    x = solve_p(*align_stacks((a, b), batched, (2, 2)))
    return reshape(x, shape_of(x)[:-1]) if vector else x


solve_p.defbatch(_solve_batch)


@implements(np.linalg.solve)
def solve(a, b):
    """``np.linalg.solve(a, b)``: X = A⁻¹B. As in NumPy 2, ``b`` is a vector only when
    it is 1-D; otherwise it is (a stack of) matrices (..., n, k)."""
    check_square("solve", a)
    n = shape_of(a)[-1]
    vector = ndim_of(b) == 1
    bs = shape_of(b)
    if (bs[0] if vector else (bs[-2] if len(bs) >= 2 else None)) != n:
        raise ValueError(f"solve: argument b of shape {bs} does not match argument a of "
                         f"shape {shape_of(a)}: expected b of shape ({n},) or (..., {n}, k)")
    if vector:
        return reshape(solve_p(a, reshape(b, (n, 1))), shape_of(a)[:-2] + (n,))
    return solve_p(a, b)



# --- triangular solves -------------------------------------------------------------------
def _tri(x, lower, unit_diagonal):
    """The triangle of ``x`` a triangular solve reads (strict when the diagonal is unit)."""
    k = -1 if unit_diagonal else 0
    return tril(x, k) if lower else triu(x, -k)


def _op(x, trans):
    return mT(x) if trans else x


def _solve_tri_impl(a, b, trans, lower, unit_diagonal):
    # LAPACK's ?trtrs per matrix: scipy.linalg.solve_triangular's own batching costs
    # milliseconds per call, and the rules call this many times.
    a, b = np.asarray(a), np.asarray(b)
    dtype = np.result_type(a, b, np.float32)
    a, b = a.astype(dtype, copy=False), b.astype(dtype, copy=False)
    (trtrs,) = scipy_linalg().lapack.get_lapack_funcs(("trtrs",), (a, b))
    lead = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = np.broadcast_to(a, lead + a.shape[-2:])
    b = np.broadcast_to(b, lead + b.shape[-2:])
    out = np.empty(lead + b.shape[-2:], dtype)
    for idx in np.ndindex(*lead):
        x, info = trtrs(a[idx], b[idx], lower=int(lower), trans=int(trans),
                        unitdiag=int(unit_diagonal))
        if info > 0:
            raise np.linalg.LinAlgError(
                f"solve_triangular: singular matrix: diagonal entry {info - 1} of argument "
                f"a (shape {a.shape}) is zero")
        out[idx] = x
    return out


def _solve_tri_sympy(sp, a, b, trans, lower, unit_diagonal):
    a = np.asarray(a, dtype=object)
    t = np.tril(a, -1 if unit_diagonal else 0) if lower else np.triu(a, 1 if unit_diagonal else 0)
    if unit_diagonal:
        t = t + np.eye(a.shape[-1], dtype=int)
    return sym_map(sp, lambda m, r: _sym_solve(m.T if trans else m, r), t, b)


solve_triangular_p = register(Primitive("solve_triangular", _solve_tri_impl, sparsity="matrix",
                                        sympy=_solve_tri_sympy))


def _solve_tri_jvp_all(tangents, ans, a, b, trans, lower, unit_diagonal):
    ta, tb = tangents
    rhs = tangent_rhs(ans, (tb, b, None),
                      (ta, a, lambda t: -mm(_op(_tri(t, lower, unit_diagonal), trans), ans)))
    return solve_triangular_p(a, rhs, trans=trans, lower=lower, unit_diagonal=unit_diagonal)


def _solve_tri_vjp_all(ct, ans, a, b, trans, lower, unit_diagonal):
    nb = batch_ndim(ct, ans)
    gb = solve_triangular_p(a, ct, trans=1 - trans, lower=lower, unit_diagonal=unit_diagonal)
    g_op = -mm(gb, mT(ans))
    ga = _tri(_op(g_op, trans), lower, unit_diagonal)
    return [unbroadcast(ga, shape_of(a), nb), unbroadcast(gb, shape_of(b), nb)]


solve_triangular_p.def_all(jvp=_solve_tri_jvp_all, vjp=_solve_tri_vjp_all)
solve_triangular_p.defbatch(stacked_rule(solve_triangular_p, (2, 2)))

_TRANS = {0: 0, 1: 1, 2: 1, "N": 0, "T": 1, "C": 1}


def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
                     check_finite=True):
    """``scipy.linalg.solve_triangular``: X = op(T)⁻¹ B with T the ``lower`` (or upper)
    triangle of ``a`` (unit diagonal if asked) and op = identity or transpose
    (``trans`` 0/'N', 1/'T', 2/'C'; real matrices, so 'C' is 'T'). Only the triangle
    read has a derivative. ``b`` is a vector when 1-D, else (..., n, k)."""
    check_square("solve_triangular", a)
    if trans not in _TRANS:
        raise ValueError(f"solve_triangular: trans must be 0, 1, 2, 'N', 'T' or 'C', got {trans!r}")
    if trans in (2, "C") and any(np.iscomplexobj(unguarded_value(x)) for x in (a, b)):
        raise NotImplementedError(f"solve_triangular: trans={trans!r} (conjugate transpose) "
                                  f"of complex matrices (a of shape {shape_of(a)}) is not "
                                  f"implemented; conjugate a first and pass trans='T'")
    n = shape_of(a)[-1]
    bs = shape_of(b)
    vector = len(bs) == 1
    if (bs[0] if vector else (bs[-2] if len(bs) >= 2 else None)) != n:
        raise ValueError(f"solve_triangular: argument b of shape {bs} does not match argument "
                         f"a of shape {shape_of(a)}: expected ({n},) or (..., {n}, k)")
    params = dict(trans=_TRANS[trans], lower=bool(lower), unit_diagonal=bool(unit_diagonal))
    if vector:
        x = solve_triangular_p(a, reshape(b, (n, 1)), **params)
        return reshape(x, shape_of(x)[:-1])
    return solve_triangular_p(a, b, **params)


# --- Cholesky ------------------------------------------------------------------------------

def _phi_mask(n, like):
    """Φ as a mask, in ``like``'s floating dtype (a float32 L keeps float32 tangents)."""
    dt = np.result_type(unguarded_value(like))
    dt = dt if dt.kind in "fc" else np.dtype(np.float64)
    return (np.tril(np.ones((n, n))) - 0.5 * np.eye(n)).astype(dt.type(0).real.dtype)


def _cholesky_jvp(t, L, a):
    da = sym_lower(t)
    y = solve_triangular_p(L, da, trans=0, lower=True, unit_diagonal=False)        # L⁻¹ Ȧ
    m = mT(solve_triangular_p(L, mT(y), trans=0, lower=True, unit_diagonal=False))  # L⁻¹ Ȧ L⁻ᵀ
    return mm(L, m * _phi_mask(shape_of(a)[-1], L))


def _cholesky_vjp(ct, L, a):
    p = mm(mT(L), ct) * _phi_mask(shape_of(a)[-1], L)
    z = solve_triangular_p(L, p, trans=1, lower=True, unit_diagonal=False)         # L⁻ᵀ P
    g = mT(solve_triangular_p(L, mT(z), trans=1, lower=True, unit_diagonal=False))  # L⁻ᵀ P L⁻¹
    return sym_lower_T(g)


def _cholesky_sympy(sp, a):
    a = np.asarray(a, dtype=object)
    a_eff = np.tril(a) + np.swapaxes(np.tril(a, -1), -1, -2)   # the lower triangle, as LAPACK
    return sym_map(sp, lambda m: m.cholesky(hermitian=False), a_eff)


cholesky_p = register(Primitive("cholesky", np.linalg.cholesky, sympy=_cholesky_sympy,
                                sparsity="matrix"))
cholesky_p.defjvp(_cholesky_jvp)
cholesky_p.defvjp(_cholesky_vjp)
cholesky_p.defbatch(stacked_rule(cholesky_p))


@implements(np.linalg.cholesky)
def cholesky(a, /, *, upper=False):
    """``np.linalg.cholesky``: lower L with A = L Lᵀ (``upper=True``: Lᵀ). Reads the
    lower triangle of A only (``upper=True``: the upper one), as LAPACK does; A must be
    positive definite."""
    check_square("cholesky", a, real=True)
    return mT(cholesky_p(mT(a))) if upper else cholesky_p(a)

# --- samples for the rule checker (well-conditioned concrete matrices: ._common) --------
inv_p.samples = [sample(_A2), sample(_A3), sample(_STACK)]
solve_p.samples = [sample(_A2, (2, 3)), sample(_A3, (2, 3, 1)), sample(_STACK, (2, 2))]
cholesky_p.samples = [sample(np.array([[2.0, 0.6], [0.6, 1.5]])), sample(_SPD3),
                      sample(np.stack([_SPD3, _SPD3 + np.eye(3)]))]
solve_triangular_p.samples = [
    sample(_A3, (3, 2), trans=0, lower=True, unit_diagonal=False),
    sample(_A3, (3, 1), trans=1, lower=False, unit_diagonal=False),
    sample(_A3, (2, 3, 2), trans=0, lower=False, unit_diagonal=True),
    sample((3, 3), (3, 2), trans=1, lower=True, unit_diagonal=False, domain=[(1.0, 2.0), None])]
