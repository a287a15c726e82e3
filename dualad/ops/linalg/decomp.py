"""Decompositions with several outputs: eigh, eig, svd, qr (and eigvalsh, svdvals).

A decomposition is ONE primitive whose value packs its outputs along a last
axis (``pack``/``unpack`` in :mod:`._multi`), so the tape keeps one value per node; the
public function unpacks it with reshape/getitem, which are differentiable. Its rules
see the unpacked outputs and tangents/cotangents (leading batch axes allowed).
With F_ij = 1/(λ_j - λ_i) for i ≠ j (0 on the diagonal and, by convention, 0
where two eigenvalues are exactly equal):

  eigh  A = V Λ Vᵀ:  C = Vᵀ Ȧ V,  λ̇ = diag C,  V̇ = V (F∘C)
                     Ā = sym*(V (diag λ̄ + F∘(Vᵀ V̄)) Vᵀ)
  eig   A V = V Λ (real spectrum, unit columns):  C = V⁻¹ Ȧ V,  λ̇ = diag C,
                     D = V (F∘C),  V̇ = D - V diag(diag(Vᵀ D))
                     Ā = V⁻ᵀ (diag λ̄ + F∘(Vᵀ V̄')) Vᵀ,  V̄' = V̄ - V diag(diag(Vᵀ V̄))
  svd   A = U S Vᵀ (reduced), F_ij = 1/(s_j² - s_i²),  P = Uᵀ Ȧ V:
                     ṡ = diag P
                     U̇ = U (F∘(P S + S Pᵀ)) + (I - U Uᵀ) Ȧ V S⁻¹
                     V̇ = V (F∘(S P + Pᵀ S)) + (I - V Vᵀ) Ȧᵀ U S⁻¹
                     Ā = U [(F∘(UᵀŪ - ŪᵀU)) S + diag s̄ + S (F∘(VᵀV̄ - V̄ᵀV))] Vᵀ
                         + (I - U Uᵀ) Ū S⁻¹ Vᵀ + U S⁻¹ V̄ᵀ (I - V Vᵀ)
  qr    A = Q R (reduced, m ≥ n; a wide A goes through its leading square block):
                     X = Qᵀ Ȧ R⁻¹,  Ω = tril(X,-1) - tril(X,-1)ᵀ,
                     Ṙ = (X - Ω) R,  Q̇ = Ȧ R⁻¹ - Q (X - Ω)
                     Ā = (Q̄ + Q copyltu(R R̄ᵀ - Q̄ᵀ Q)) R⁻ᵀ,  copyltu(M) = tril(M) + tril(M,-1)ᵀ

Caveats (documented conventions, as in every peer system): eigenvectors and
singular vectors are defined only up to sign and have no derivative where
eigenvalues (singular values) coincide — there F's zero entries make a
derivative that is finite but meaningless unless the loss is invariant under
rotations inside the eigenspace; eigenvalues alone (eigvalsh, svdvals) are
differentiable wherever they are simple. The vector terms of svd need s > 0.
eigh, like LAPACK, reads only the ``UPLO`` triangle. Like NumPy, eig returns
eigenvalues in LAPACK's unspecified order, which a perturbation can permute: the
derivative is that of the ordering at the point.

Complex input (eigh/eigvalsh, eig/eigvals, svd/svdvals) and real matrices with complex
spectra (eig): the rules in :mod:`.decomp_complex` (the formulas above with ᵀ → ᴴ, Re/Im
where a value is real, and a phase (gauge) term for LAPACK's convention), called when the
primal value is complex. qr needs full
rank (for m < n: an invertible leading m×m block).

``hermitian=True`` (svd, svdvals): NumPy computes the decomposition from ``eigh``,
which reads the lower triangle only, so the function is that of A_eff = tril(A) +
tril(A, -1)ᵀ (singular values |λ|, U the eigenvectors, V = U sign(λ)). The rules
differentiate through A_eff as eigh's do: the tangent is sym_lower(Ȧ), the
cotangent is folded back onto the lower triangle (sym_lower_T); an entry above
the diagonal has derivative 0, along any direction, symmetric or not.
"""
from __future__ import annotations

import collections

import numpy as np

from ...core.tracer import primal_value, shape_of
from ...core.primitive import Primitive, implements, register, sample
from ..core.complex_numbers import real
from ..core.indexing import index
from ..core.batch_ops import stacked_rule
from ..core.products import diag_embed_p, diagonal_p, tril
from ..core.reductions import sum as sum_
from ..core.shape import cast, concatenate
from .basic import solve_p, solve_triangular_p
from ._common import (check_matrix, check_square, gap_inverse as _gap_inverse,
                      is_complex_value, mm, mT, row as _row, col as _col, sym_lower,
                      sym_lower_T)
from . import decomp_complex as cx
from ._multi import _call_unpacked, multi_output

__all__ = [
    "EighResult", "eigh_p", "eigh", "eigvalsh_p", "eigvalsh", "EigResult", "eig_p", "eig",
    "eigvals", "SVDResult", "svd_p", "svdvals_p", "svdvals", "svd", "QRResult", "qr_p", "qr"
]


def _real_values(x):
    """The real eigenvalues (singular values) of a complex matrix, which the packed value
    carries as complex numbers with zero imaginary part: NumPy's real dtype."""
    return real(x) if is_complex_value(x) else x


def _svd_result(parts):
    u, s, vh = parts
    return SVDResult(u, _real_values(s), vh)


# --- symmetric eigendecomposition ----------------------------------------------------
EighResult = collections.namedtuple("EighResult", ["eigenvalues", "eigenvectors"])


def _eigh_jvp(tangents, outs, a, UPLO):
    (t,) = tangents
    w, v = outs
    if is_complex_value(v):
        return cx.eigh_jvp(t, w, v, UPLO == "L")
    c = mm(mm(mT(v), sym_lower(t, UPLO == "L")), v)
    return [diagonal_p(c, offset=0), mm(v, _gap_inverse(w) * c)]


def _eigh_vjp(cts, outs, a, UPLO):
    gw, gv = cts
    w, v = outs
    if is_complex_value(v):
        return cx.eigh_vjp(gw, gv, w, v, UPLO == "L")
    n = shape_of(w)[-1]
    k = diag_embed_p(gw, offset=0, shape=(n, n)) + _gap_inverse(w) * mm(mT(v), gv)
    return [sym_lower_T(mm(mm(v, k), mT(v)), UPLO == "L")]


eigh_p = multi_output("eigh", lambda a, UPLO: tuple(np.linalg.eigh(a, UPLO=UPLO)),
                      lambda s, UPLO: [s[-1:], s[-2:]], _eigh_jvp, _eigh_vjp)


def _uplo(fname, UPLO):
    if UPLO not in ("L", "U"):
        raise ValueError(f"{fname}: UPLO must be 'L' or 'U', got {UPLO!r}")
    return UPLO


@implements(np.linalg.eigh)
def eigh(a, UPLO="L"):
    """``np.linalg.eigh``: (eigenvalues ascending, eigenvectors as columns). Only the
    ``UPLO`` triangle is read (of a complex Hermitian matrix: that triangle, its conjugate
    mirrored, the real part of the diagonal). Eigenvectors need distinct eigenvalues and
    follow LAPACK's phase convention (see module doc and :mod:`.decomp_complex`)."""
    check_square("eigh", a)
    w, v = _call_unpacked(eigh_p, a, UPLO=_uplo("eigh", UPLO))
    return EighResult(_real_values(w), v)


def _eigvalsh_jvp(t, w, a, UPLO):
    v = eigh(a, UPLO)[1]
    if is_complex_value(v):
        return cx.eigvalsh_jvp(t, v, UPLO == "L")
    return sum_(v * mm(sym_lower(t, UPLO == "L"), v), axis=-2)


def _eigvalsh_vjp(ct, w, a, UPLO):
    v = eigh(a, UPLO)[1]
    if is_complex_value(v):
        return cx.eigvalsh_vjp(ct, v, UPLO == "L")
    return sym_lower_T(mm(v * _row(ct), mT(v)), UPLO == "L")


eigvalsh_p = register(Primitive("eigvalsh", lambda a, UPLO: np.linalg.eigvalsh(a, UPLO=UPLO),
                                  sparsity="matrix"))
eigvalsh_p.defjvp(_eigvalsh_jvp)
eigvalsh_p.defvjp(_eigvalsh_vjp)
eigvalsh_p.defbatch(stacked_rule(eigvalsh_p))   # vmap: the batch axis is one more stack axis


@implements(np.linalg.eigvalsh)
def eigvalsh(a, UPLO="L"):
    """``np.linalg.eigvalsh``: λ̇_i = v_iᵀ Ȧ v_i, Ā = V diag(λ̄) Vᵀ (symmetrized onto UPLO)."""
    check_square("eigvalsh", a)
    return eigvalsh_p(a, UPLO=_uplo("eigvalsh", UPLO))


# --- general eigendecomposition (real spectrum) ---------------------------------------
EigResult = collections.namedtuple("EigResult", ["eigenvalues", "eigenvectors"])


def _eig_impl(a):
    """NumPy's eig; a real matrix with a real spectrum gets real eigenpairs (as NumPy
    before 2.5 returns them), else complex ones."""
    w, v = np.linalg.eig(a)
    if np.iscomplexobj(w) and not np.iscomplexobj(a) and not np.any(w.imag != 0):
        w, v = w.real, v.real
    return w, v


def _eig_jvp(tangents, outs, a):
    (t,) = tangents
    w, v = outs
    if is_complex_value(v):
        return cx.eig_jvp(t, w, v)
    c = solve_p(v, mm(t, v))
    d = mm(v, _gap_inverse(w) * c)
    return [diagonal_p(c, offset=0), d - v * _row(sum_(v * d, axis=-2))]


def _eig_vjp(cts, outs, a):
    gw, gv = cts
    w, v = outs
    if is_complex_value(v):
        return cx.eig_vjp(gw, gv, w, v)
    n = shape_of(w)[-1]
    gv = gv - v * _row(sum_(v * gv, axis=-2))
    k = diag_embed_p(gw, offset=0, shape=(n, n)) + _gap_inverse(w) * mm(mT(v), gv)
    return [solve_p(mT(v), mm(k, mT(v)))]


eig_p = multi_output("eig", _eig_impl, lambda s: [s[-1:], s[-2:]], _eig_jvp, _eig_vjp)


# NumPy >= 2.5 returns complex eigenpairs even for a real spectrum (older NumPy returns
# real arrays there): the traced values take the dtype the plain call gives.
_EIG_ALWAYS_COMPLEX = np.iscomplexobj(np.linalg.eig(np.eye(1))[0])


@implements(np.linalg.eig)
def eig(a):
    """``np.linalg.eig``: eigenvalues and unit-norm eigenvectors, of real and complex
    matrices. A real matrix with a complex spectrum gets complex eigenpairs (as NumPy
    gives them), and a real input's cotangent is real. Eigenvectors follow LAPACK's phase
    convention (the largest component real, :mod:`.decomp_complex`). Where NumPy returns
    complex eigenpairs for a real spectrum (2.5 on), so does this (a real-to-complex
    embedding)."""
    check_square("eig", a)
    w, v = _call_unpacked(eig_p, a)
    if _EIG_ALWAYS_COMPLEX and not is_complex_value(w):
        dtype = np.result_type(primal_value(w), np.complex64)
        w, v = cast(w, dtype, "eig"), cast(v, dtype, "eig")
    return EigResult(w, v)


@implements(np.linalg.eigvals)
def eigvals(a):
    """``np.linalg.eigvals``: λ̇ = diag(V⁻¹ Ȧ V)."""
    return eig(a)[0]


# --- singular value decomposition -------------------------------------------------------
SVDResult = collections.namedtuple("SVDResult", ["U", "S", "Vh"])


def _svd_cores(s, hermitian):
    m, n = s[-2:]
    k = min(m, n)
    return [(m, k), (k,), (k, n)]


def _svd_jvp(tangents, outs, a, hermitian):
    (t,) = tangents
    if hermitian:       # the SVD of A_eff: only the lower triangle is read
        t = sym_lower(t, herm=is_complex_value(a))
    u, s, vh = outs
    if is_complex_value(u):
        return cx.svd_jvp(t, u, s, vh, a)
    v = mT(vh)
    m, n = shape_of(a)[-2:]
    k = min(m, n)
    f = _gap_inverse(s * s)
    tv = mm(t, v)
    p = mm(mT(u), tv)
    sr, sc = _row(s), _col(s)
    du = mm(u, f * (p * sr + sc * mT(p)))
    if m > k:
        du = du + (tv - mm(u, p)) / sr
    dv = mm(v, f * (sc * p + mT(p) * sr))
    if n > k:
        dv = dv + (mm(mT(t), u) - mm(v, mT(p))) / sr
    return [du, diagonal_p(p, offset=0), mT(dv)]


def _svd_vjp(cts, outs, a, hermitian):
    gu, gs, gvh = cts
    u, s, vh = outs
    if is_complex_value(u):
        (ga,) = cx.svd_vjp(gu, gs, gvh, u, s, vh, a)
        return [sym_lower_T(ga, herm=True) if hermitian else ga]
    v, gv = mT(vh), mT(gvh)
    m, n = shape_of(a)[-2:]
    k = min(m, n)
    f = _gap_inverse(s * s)
    sr, sc = _row(s), _col(s)
    utgu = mm(mT(u), gu)
    vtgv = mm(mT(v), gv)
    inner = (f * (utgu - mT(utgu))) * sr + diag_embed_p(gs, offset=0, shape=(k, k)) \
        + sc * (f * (vtgv - mT(vtgv)))
    ga = mm(mm(u, inner), vh)
    if m > k:
        ga = ga + mm((gu - mm(u, utgu)) / sr, vh)
    if n > k:
        ga = ga + mm(u / sr, mT(gv) - mm(mT(vtgv), vh))
    return [sym_lower_T(ga) if hermitian else ga]


svd_p = multi_output("svd", lambda a, hermitian: tuple(
    np.linalg.svd(a, full_matrices=False, hermitian=hermitian)), _svd_cores, _svd_jvp, _svd_vjp)


def _svdvals_jvp(t, s, a, hermitian=False):
    u, _, vh = svd(a, full_matrices=False, hermitian=hermitian)
    herm = is_complex_value(u)
    t = sym_lower(t, herm=herm) if hermitian else t
    if herm:
        return cx.svdvals_jvp(t, u, vh)
    return sum_(u * mm(t, mT(vh)), axis=-2)


def _svdvals_vjp(ct, s, a, hermitian=False):
    u, _, vh = svd(a, full_matrices=False, hermitian=hermitian)
    herm = is_complex_value(u)
    ga = cx.svdvals_vjp(ct, u, vh) if herm else mm(u * _row(ct), vh)
    return sym_lower_T(ga, herm=herm) if hermitian else ga


svdvals_p = register(Primitive("svdvals", lambda a, hermitian=False: np.linalg.svd(
    a, compute_uv=False, hermitian=hermitian), sparsity="matrix"))
svdvals_p.defjvp(_svdvals_jvp)
svdvals_p.defvjp(_svdvals_vjp)
svdvals_p.defbatch(stacked_rule(svdvals_p))


def svdvals(x, /):
    """Singular values, descending: ṡ_i = Re(u_iᴴ Ȧ v_i), Ā = conj(U) diag(s̄) Vᵀ
    (U diag(s̄) Vᵀ for a real matrix)."""
    check_matrix("svdvals", x, "x")
    return svdvals_p(x)


@implements(np.linalg.svd)
def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """``np.linalg.svd``. Differentiable in the reduced form (``full_matrices=False``, or
    any square matrix); ``compute_uv=False`` gives :func:`svdvals`. ``hermitian=True``
    reads the lower triangle only, as NumPy's eigh-based path does (see module doc)."""
    check_matrix("svd", a)
    if hermitian:
        check_square("svd", a)
        return svdvals_p(a, hermitian=True) if not compute_uv else _svd_result(
            _call_unpacked(svd_p, a, hermitian=True))
    if not compute_uv:
        return svdvals_p(a)
    m, n = shape_of(a)[-2:]
    if full_matrices and m != n:
        raise NotImplementedError(
            f"svd: full_matrices=True of a non-square matrix (shape {shape_of(a)}) is not "
            f"differentiable (the extra singular vectors are not unique); pass "
            f"full_matrices=False")
    return _svd_result(_call_unpacked(svd_p, a, hermitian=False))


# --- QR --------------------------------------------------------------------------------
QRResult = collections.namedtuple("QRResult", ["Q", "R"])


def _times_rinv(x, r):
    """X R⁻¹ for upper-triangular R: (R⁻ᵀ Xᵀ)ᵀ."""
    return mT(solve_triangular_p(r, mT(x), trans=1, lower=False, unit_diagonal=False))


def _times_rinvT(x, r):
    """X R⁻ᵀ for upper-triangular R: (R⁻¹ Xᵀ)ᵀ."""
    return mT(solve_triangular_p(r, mT(x), trans=0, lower=False, unit_diagonal=False))


def _qr_jvp(tangents, outs, a):
    (t,) = tangents
    q, r = outs
    tr = _times_rinv(t, r)
    x = mm(mT(q), tr)
    low = tril(x, -1)
    x_minus_omega = x - low + mT(low)
    return [tr - mm(q, x_minus_omega), mm(x_minus_omega, r)]


def _qr_vjp(cts, outs, a):
    gq, gr = cts
    q, r = outs
    m_ = mm(r, mT(gr)) - mm(mT(gq), q)
    copyltu = tril(m_) + mT(tril(m_, -1))
    return [_times_rinvT(gq + mm(q, copyltu), r)]


qr_p = multi_output("qr", lambda a: tuple(np.linalg.qr(a, mode="reduced")),
                    lambda s: [s[-2:], (s[-1], s[-1])], _qr_jvp, _qr_vjp)


@implements(np.linalg.qr)
def qr(a, mode="reduced"):
    """``np.linalg.qr`` (``mode='reduced'`` or ``'r'``; 'complete' when m ≤ n), full rank.

    A wide matrix A = [X | Y] (m < n) is A = Q [U | Qᵀ Y] with X = Q U square: Householder
    QR of the leading columns does not see the rest, so the composite is exact and its
    derivative needs X invertible."""
    check_matrix("qr", a, real=True)
    m, n = shape_of(a)[-2:]
    if mode not in ("reduced", "r") and not (mode == "complete" and m <= n):
        raise NotImplementedError(f"qr: mode={mode!r} of a matrix of shape {shape_of(a)} is "
                                  f"not differentiable; use 'reduced'")
    if m < n:
        q, u = _call_unpacked(qr_p, index(a, (Ellipsis, slice(0, m))))
        res = QRResult(q, concatenate([u, mm(mT(q), index(a, (Ellipsis, slice(m, n))))],
                                      axis=-1))
    else:
        res = QRResult(*_call_unpacked(qr_p, a))
    return res.R if mode == "r" else res


# --- samples for the rule checker ---------------------------------------------------------
_SYM3 = np.array([[2.0, 0.3, -0.4], [0.3, 1.0, 0.2], [-0.4, 0.2, -1.0]])
_REAL3 = np.array([[3.0, 0.4, -0.2], [0.1, 2.0, 0.5], [-0.3, 0.2, 1.0]])
_TALL = np.array([[2.0, 0.5], [-0.3, 1.5], [0.4, 0.1]])

# complex samples: a Hermitian matrix (plus an ignored non-Hermitian part: only the UPLO
# triangle and the real diagonal are read), a general complex matrix, a real matrix with a
# complex-conjugate pair of eigenvalues, complex tall/wide matrices
_SKEW3 = np.array([[0.0, 0.5, -0.2], [-0.5, 0.0, 0.3], [0.2, -0.3, 0.0]])
_HERM3 = _SYM3 + 1j * _SKEW3
_CPLX3 = _REAL3 + 0.4j * _SYM3[::-1]
_ROT3 = np.array([[1.0, -2.0, 0.3], [2.0, 1.2, -0.1], [0.2, 0.1, 3.0]])
_CTALL = _TALL + 0.5j * _TALL[::-1]
eigh_p.samples = [sample(_SYM3, UPLO="L"), sample(np.stack([_SYM3, -_SYM3.T]), UPLO="U"),
                  sample(_HERM3 + 0.2j * np.eye(3) + 0.1 * np.triu(_REAL3, 1), UPLO="L"),
                  sample(np.stack([_HERM3, _HERM3.conj()]) + 0.1j * np.tril(_REAL3),
                         UPLO="U")]
eigvalsh_p.samples = [sample(_SYM3, UPLO="L"), sample(_SYM3 + 0.1 * np.tril(_REAL3), UPLO="U"),
                      sample(_HERM3 + 0.1j * np.triu(_REAL3), UPLO="L"),
                      sample(_HERM3 + 0.1j * np.tril(_REAL3), UPLO="U")]
# LAPACK's eigenvalue order is unspecified and can change under a perturbation (for
# _REAL3.T within 0.007): finite differences need a neighbourhood where it is stable.
eig_p.samples = [sample(_REAL3), sample(np.stack([_REAL3, _REAL3[::-1, ::-1]])),
                 sample(_CPLX3), sample(_ROT3), sample(np.stack([_CPLX3, _CPLX3.T + 0.5]))]
# hermitian=True: the point need not be symmetric (A_eff is built from its lower triangle);
# _SYM3 and A_eff of _HERM_POINT are indefinite, with distinct nonzero |λ|.
_HERM_POINT = _REAL3 - 2.2 * np.eye(3)
svd_p.samples = [sample(_TALL, hermitian=False), sample(_TALL.T, hermitian=False),
                 sample(_REAL3, hermitian=False), sample((3, 2), hermitian=False),
                 sample(_SYM3, hermitian=True), sample(_HERM_POINT, hermitian=True),
                 sample(np.stack([_REAL3, -_SYM3]), hermitian=True),
                 sample(_CTALL, hermitian=False), sample(_CTALL.T, hermitian=False),
                 sample(_CPLX3, hermitian=False), sample(_HERM3 - 1.5 * np.eye(3), hermitian=True)]
svdvals_p.samples = [sample(_TALL), sample(np.stack([_REAL3, _SYM3])), sample((2, 3)),
                     sample(_SYM3, hermitian=True), sample(_HERM_POINT, hermitian=True),
                     sample(np.stack([_REAL3, -_SYM3]), hermitian=True),
                     sample(_CTALL), sample(np.stack([_CPLX3, _HERM3])),
                     sample(_HERM3 - 1.5 * np.eye(3), hermitian=True)]
qr_p.samples = [sample(_TALL), sample(_REAL3), sample((2, 3, 2))]
