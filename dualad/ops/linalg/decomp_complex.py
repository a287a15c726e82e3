"""The rules of eigh, eig and svd for complex matrices (and eig's complex spectra).

The decompositions are not holomorphic (eigenvalues of a Hermitian matrix, singular
values and unit-norm vectors are real-valued or normalized with |·|), so the rules are
the R-linear derivative and its transpose for the pairing ⟨ū, v⟩ = Re Σ ū·v
(docs/complex.md); Xᴴ = conj(X)ᵀ. :mod:`.decomp` calls them when the primal value is
complex (and eig also for a real matrix with a complex spectrum).

Gauge. A column of V (or the pair u_i, v_i of the SVD) times e^{iθ} is as good a result,
so the vectors' derivative needs a convention. LAPACK fixes the phase of one component
per column, and these rules differentiate exactly that choice, so the derivative is the
derivative of the value NumPy returns (finite differences of V itself agree):

- eigh, UPLO="L": the first row of V is real (zhetrd's Q has first row e₁); "U": the last;
- svd: the first row of V (of U when m < n) is real (zgebrd);
- eig: each column has unit norm and its largest-magnitude component real (zgeev).

Gauge-free tangents D are corrected by V diag(iφ), φ_i = −Im(D_{r i}/V_{r i}) for the
fixed row r, which keeps arg V_{r i} constant. Where V_{r i} = 0 exactly (a block-diagonal
matrix) the phase is not fixed by that row and φ_i = 0: right for every gauge-invariant
function (|v_i|², v_i v_iᴴ, U diag(s) Vᴴ, ...), the functions the derivative is meant for.

Formulas (F_ij = 1/(λ_j − λ_i), 0 on the diagonal and on exact ties, as for real input):

  eigh  C = Vᴴ Ȧ_eff V,  λ̇ = Re diag C,  V̇ = V (F∘C) + gauge
        Ā = sym_lower_T(conj(V) (diag Re λ̄ + F∘(Vᵀ V̄₀)) Vᵀ)
  eig   C = V⁻¹ Ȧ V,  λ̇ = diag C,  D = V (F∘C),  D₁ = D − V diag(Re diag(Vᴴ D)),
        V̇ = D₁ + gauge;  Ā = V⁻ᵀ (diag λ̄ + F∘(Vᵀ D̄)) Vᵀ,  D̄ = V̄₀ + conj(V) diag(ν̄),
        ν̄ = −Re diag(Vᵀ V̄₀)
  svd   P = Uᴴ Ȧ V,  ṡ = Re diag P,  F_ij = 1/(s_j² − s_i²)
        U̇ = U (F∘(P S + S Pᴴ) + i diag(Im P_ii / s_i)) + (I − U Uᴴ) Ȧ V S⁻¹ + gauge
        V̇ = V (F∘(S P + Pᴴ S)) + (I − V Vᴴ) Ȧᴴ U S⁻¹ + gauge
        Ā = conj of the Hermitian adjoint at conj(Ū), conj(V̄₀):
        U [(F∘(J − Jᴴ)) S + diag s̄ + S (F∘(K − Kᴴ)) + i diag(Im J_ii / s_i)] Vᴴ
          + (I − U Uᴴ) Ḡ_U S⁻¹ Vᴴ + U S⁻¹ Ḡ_Vᴴ (I − V Vᴴ),  J = Uᴴ Ḡ_U, K = Vᴴ Ḡ_V

Zero singular values: the phase term i Im P_ii / s_i is taken as 0 where s_i = 0 (the
relative phase of u_i and v_i is undefined there); the terms (I − U Uᴴ) Ȧ V S⁻¹ of a
non-square matrix need s > 0, as for real input. Near-ties of the largest component in
eig's columns make LAPACK's phase jump: V itself is then not differentiable, gauge-invariant
functions of it are.

V̄₀ is the vectors' cotangent with the gauge's transpose added: the phase gets
φ̄ = −Im diag(Vᵀ V̄) (− Im diag(Uᵀ Ū) for svd) and V̄₀ = V̄ + e_r ⊗ (i φ̄ / V_r).
"""
from __future__ import annotations

import numpy as np

from ...core.values import is_batched, map_value, staged_unbatched, staged_value
from ...core.tracer import shape_of, unguarded_value
from ..core.complex_numbers import conj, imag, real
from ..core.elementwise import equal, logical_and, where
from ..core.products import diag_embed_p, diagonal_p
from ..core.reductions import sum as sum_
from .basic import solve_p
from ._common import col, gap_inverse, mm, mT, row, sym_lower, sym_lower_T

__all__ = [
    "H", "fixed_rows", "gauge_phase", "gauge_phase_T", "phase_ct", "eigh_jvp", "eigh_vjp",
    "eigvalsh_jvp", "eigvalsh_vjp", "eig_jvp", "eig_vjp", "svd_jvp", "svd_vjp",
    "svdvals_jvp", "svdvals_vjp"
]


def H(x):
    """The conjugate transpose of (a stack of) matrices."""
    return conj(mT(x))


# --- the phase (gauge) convention --------------------------------------------------------
def fixed_rows(v, rule):
    """A constant boolean mask, shape of ``v``: True at the component (r_i, i) whose phase
    LAPACK fixes in column i (``rule`` "first", "last" or "largest")."""
    if rule != "largest":   # the mask depends on the shape only
        return _fixed_rows_plain(unguarded_value(v), rule) if not is_batched(v) \
            else map_value(v, lambda pv: _fixed_rows_plain(pv, rule))
    if staged_unbatched(v):
        # dualad.jit: the first row of largest |v| per column, recorded (argmax has no
        # primitive): the maxima, and of tied ones the first (a running count of 1)
        a = np.abs(staged_value(v))
        hit = a == np.max(a, axis=-2, keepdims=True)
        return logical_and(hit, np.cumsum(hit, axis=-2) == 1)
    return map_value(v, lambda pv: _fixed_rows_plain(pv, rule))   # per example under vmap


def _fixed_rows_plain(pv, rule):
    n = pv.shape[-2]
    mask = np.zeros(pv.shape, dtype=bool)
    if rule == "largest":
        r = np.argmax(np.abs(pv), axis=-2)
        np.put_along_axis(mask, r[..., None, :], True, axis=-2)
    else:
        mask[..., 0 if rule == "first" else n - 1, :] = True
    return mask


def _picked(x, mask):
    return sum_(where(mask, x, 0.0), axis=-2)


def _safe_ratio(num, den):
    zero = equal(den, 0.0)
    return where(zero, 0.0, num / where(zero, 1.0, den)), zero


def gauge_phase(v, d, mask):
    """φ with Im((D + V diag(iφ))_{r i} / V_{r i}) = 0: the phase keeping arg V_{r i}."""
    ratio, _ = _safe_ratio(_picked(d, mask), _picked(v, mask))
    return -imag(ratio)


def gauge_phase_T(v, phi_bar, mask):
    """The transpose of ``d ↦ gauge_phase(v, d, mask)``: e_r ⊗ (i φ̄ / V_r)."""
    vr = _picked(v, mask)
    zero = equal(vr, 0.0)
    return where(mask, row(where(zero, 0.0, 1j * phi_bar / where(zero, 1.0, vr))), 0.0)


def phase_ct(ct, v):
    """φ̄ contributed by the term V diag(iφ) of a tangent, for the cotangent ``ct`` of V."""
    return -imag(sum_(ct * v, axis=-2))


# --- eigh ----------------------------------------------------------------------------------
def eigh_jvp(t, w, v, lower):
    c = mm(mm(H(v), sym_lower(t, lower, herm=True)), v)
    d = mm(v, gap_inverse(w) * c)
    phi = gauge_phase(v, d, fixed_rows(v, "first" if lower else "last"))
    return [real(diagonal_p(c, offset=0)), d + v * row(1j * phi)]


def eigh_vjp(gw, gv, w, v, lower):
    n = shape_of(w)[-1]
    gv0 = gv + gauge_phase_T(v, phase_ct(gv, v), fixed_rows(v, "first" if lower else "last"))
    k = diag_embed_p(real(gw), offset=0, shape=(n, n)) + gap_inverse(w) * mm(mT(v), gv0)
    return [sym_lower_T(mm(mm(conj(v), k), mT(v)), lower, herm=True)]


def eigvalsh_jvp(t, v, lower):
    return real(sum_(conj(v) * mm(sym_lower(t, lower, herm=True), v), axis=-2))


def eigvalsh_vjp(ct, v, lower):
    return sym_lower_T(mm(conj(v) * row(real(ct)), mT(v)), lower, herm=True)


# --- eig -----------------------------------------------------------------------------------
def eig_jvp(t, w, v):
    c = solve_p(v, mm(t, v))
    d = mm(v, gap_inverse(w) * c)
    d1 = d - v * row(real(sum_(conj(v) * d, axis=-2)))
    phi = gauge_phase(v, d1, fixed_rows(v, "largest"))
    return [diagonal_p(c, offset=0), d1 + v * row(1j * phi)]


def eig_vjp(gw, gv, w, v):
    n = shape_of(w)[-1]
    gd1 = gv + gauge_phase_T(v, phase_ct(gv, v), fixed_rows(v, "largest"))
    gd = gd1 + conj(v) * row(-real(sum_(gd1 * v, axis=-2)))
    k = diag_embed_p(gw, offset=0, shape=(n, n)) + gap_inverse(w) * mm(mT(v), gd)
    return [solve_p(mT(v), mm(k, mT(v)))]


# --- svd -----------------------------------------------------------------------------------
def _svd_gauge_on_v(a):
    m, n = shape_of(a)[-2:]
    return m >= n


def _over_s(x, s):
    """x / s, and 0 where s = 0: the relative phase of u_i and v_i is not defined for a
    zero singular value, and no gauge-invariant function depends on it (as F's ties)."""
    zero = equal(s, 0.0)
    return where(zero, 0.0, x / where(zero, 1.0, s))


def svd_jvp(t, u, s, vh, a):
    v = H(vh)
    m, n = shape_of(a)[-2:]
    k = min(m, n)
    f = gap_inverse(s * s)
    tv = mm(t, v)
    p = mm(H(u), tv)
    sr, sc = row(s), col(s)
    ph = H(p)
    du = mm(u, f * (p * sr + sc * ph)) + u * row(1j * _over_s(imag(diagonal_p(p, offset=0)), s))
    if m > k:
        du = du + (tv - mm(u, p)) / sr
    dv = mm(v, f * (sc * p + ph * sr))
    if n > k:
        dv = dv + (mm(H(t), u) - mm(v, ph)) / sr
    if _svd_gauge_on_v(a):
        phi = gauge_phase(v, dv, fixed_rows(v, "first"))
    else:
        phi = gauge_phase(u, du, fixed_rows(u, "first"))
    rot = row(1j * phi)
    du, dv = du + u * rot, dv + v * rot
    return [du, real(diagonal_p(p, offset=0)), H(dv)]


def svd_vjp(gu, gs, gvh, u, s, vh, a):
    v = H(vh)
    m, n = shape_of(a)[-2:]
    k = min(m, n)
    gv = H(gvh)
    phi_bar = phase_ct(gu, u) + phase_ct(gv, v)
    if _svd_gauge_on_v(a):
        gv = gv + gauge_phase_T(v, phi_bar, fixed_rows(v, "first"))
    else:
        gu = gu + gauge_phase_T(u, phi_bar, fixed_rows(u, "first"))
    # the Hermitian adjoint at the conjugated cotangents, conjugated back
    gu_h, gv_h = conj(gu), conj(gv)
    f = gap_inverse(s * s)
    sr, sc = row(s), col(s)
    j = mm(H(u), gu_h)
    kk = mm(H(v), gv_h)
    inner = (f * (j - H(j))) * sr + sc * (f * (kk - H(kk))) \
        + diag_embed_p(1j * _over_s(imag(diagonal_p(j, offset=0)), s) + real(gs), offset=0,
                       shape=(k, k))
    ga = mm(mm(u, inner), vh)
    if m > k:
        ga = ga + mm((gu_h - mm(u, j)) / sr, vh)
    if n > k:
        ga = ga + mm(u / sr, H(gv_h) - mm(H(kk), vh))
    return [conj(ga)]


def svdvals_jvp(t, u, vh):
    return real(sum_(conj(u) * mm(t, H(vh)), axis=-2))


def svdvals_vjp(ct, u, vh):
    return conj(mm(u * row(real(ct)), vh))
