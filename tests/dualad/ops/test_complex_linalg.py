"""Complex linear algebra: eigh/eigvalsh, eig/eigvals (complex matrices and real matrices
with complex spectra), svd/svdvals, norm, sqrtm and complex erf/erfc, in both modes, to
order 2, against finite differences (dualad.verification.check_grads) and closed forms.

Eigenvectors and singular vectors carry LAPACK's phase convention (dualad/ops/linalg/
decomp_complex.py); finite differences of the vectors themselves check that the rules
differentiate that convention, and gauge-invariant functions check what users rely on.
"""
import numpy as np
import pytest
import scipy.special as sc
from hypothesis import given, settings, strategies as st

import dualad
import dualad.scipy.linalg as dsl
from dualad import jacobians
from dualad.ops.core.products import einsum_p
from dualad.ops.linalg import decomp
from dualad.ops.linalg.func import sqrtm_p
from dualad.ops.special.erf import erf as erf_p, erfc as erfc_p
from dualad.verification import check_grads, check_rule

RNG = np.random.default_rng(17)


def cplx(*shape, seed=None):
    rng = RNG if seed is None else np.random.default_rng(seed)
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def herm(n, seed=0):
    a = cplx(n, n, seed=seed)
    return a + a.conj().T


# --- the rule checker, both modes, order 2, on every changed primitive ----------------------
@pytest.mark.parametrize("prim", [decomp.eigh_p, decomp.eigvalsh_p, decomp.eig_p, decomp.svd_p,
                                  decomp.svdvals_p, sqrtm_p, erf_p, erfc_p, einsum_p],
                         ids=lambda p: p.name)
def test_rule_checker(prim):
    report = check_rule(prim)
    assert report.ok, report
    if prim in (erf_p, erfc_p):    # sampled at complex points too
        assert prim.complex_domain is not None
    elif prim is not einsum_p:     # the complex samples are among those checked
        assert any(np.iscomplexobj(a) for s in prim.samples for a in s["args"]
                   if isinstance(a, np.ndarray))


# --- eigh -----------------------------------------------------------------------------------
@pytest.mark.parametrize("uplo", ["L", "U"])
@pytest.mark.parametrize("shape", [(3, 3), (2, 3, 3)])
def test_eigh_complex(uplo, shape):
    a = cplx(*shape)          # not Hermitian: only the UPLO triangle and Re diag are read
    check_grads(lambda a: np.linalg.eigh(a, UPLO=uplo)[0], a, order=2)
    check_grads(lambda a: np.linalg.eigvalsh(a, UPLO=uplo), a, order=2)
    check_grads(lambda a: np.linalg.eigh(a, UPLO=uplo)[1], a, order=2)   # LAPACK's gauge
    def projector(a):      # v₀ v₀ᴴ: gauge-invariant
        v0 = np.linalg.eigh(a, UPLO=uplo)[1][..., 0]
        return np.einsum("...i,...j->...ij", v0, np.conj(v0))
    check_grads(projector, a, order=2)


def test_eigh_reads_one_triangle_and_real_diagonal():
    a = herm(3, seed=1)
    g = dualad.grad(lambda a: np.sum(np.linalg.eigvalsh(a) ** 3))(a)
    assert np.all(np.triu(g, 1) == 0)                 # the upper triangle is not read
    assert np.all(np.imag(np.diag(g)) == 0)           # nor the diagonal's imaginary part
    # closed form: λ_i = Re v_iᴴ A_eff v_i; grad (= ∂/∂Re − i ∂/∂Im) of Σλ³ on the lower
    # triangle is conj of 3 Σ λ_i² v_i v_iᴴ, folded: 2× below the diagonal
    w, v = np.linalg.eigh(a)
    m = np.conj((v * 3 * w ** 2) @ v.conj().T)
    want = np.tril(2 * m, -1) + np.diag(np.real(np.diag(m)))
    np.testing.assert_allclose(g, want, rtol=1e-10, atol=1e-12)


def test_eigh_degenerate_eigenvalues_stay_finite():
    """Exactly repeated eigenvalues: F's tie entries are 0 (as for real input); the trace
    and other gauge-invariant functions of the whole spectrum differentiate correctly."""
    a = np.diag([1.0, 1.0, 2.0]).astype(complex)
    g = dualad.grad(lambda a: np.sum(np.linalg.eigh(a)[0])
                    + np.sum(np.abs(np.linalg.eigh(a)[1])))(a)
    assert np.all(np.isfinite(g))
    np.testing.assert_allclose(dualad.grad(lambda a: np.sum(np.linalg.eigvalsh(a)))(a),
                               np.eye(3))


# --- eig ------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4)])
def test_eig_complex(shape):
    a = cplx(*shape)
    check_grads(lambda a: np.linalg.eigvals(a), a, order=2)
    check_grads(lambda a: np.linalg.eig(a)[1], a, order=2)   # unit norm, largest component real
    check_grads(lambda a: np.abs(np.linalg.eig(a)[1]) ** 2, a, order=2)


def test_eig_real_matrix_complex_spectrum():
    rot = np.array([[0.5, -2.0, 0.3], [2.0, 0.7, -0.1], [0.2, 0.1, 3.0]])
    w = np.linalg.eigvals(rot)
    assert np.any(np.imag(w) != 0)
    check_grads(lambda a: np.linalg.eigvals(a), rot, order=2)
    check_grads(lambda a: np.linalg.eig(a)[1], rot, order=2)
    g = dualad.grad(lambda a: np.sum(np.imag(np.linalg.eigvals(a)) ** 2))(rot)
    assert g.dtype == np.float64                      # a real input's cotangent is real
    # closed form: dλ_i = (V⁻¹ dA V)_ii, so ∂L/∂A_ab = Σ_i 2 Im λ_i Im(V⁻¹_ia V_bi)
    wv, vv = np.linalg.eig(rot)
    vinv = np.linalg.inv(vv)
    want = sum(2 * np.imag(wv[i]) * np.imag(np.outer(vinv[i], vv[:, i])) for i in range(3))
    np.testing.assert_allclose(g, want, rtol=1e-8, atol=1e-12)
    rot2 = np.array([[0.0, -1.0], [1.0, 0.0]])    # the matrix that used to raise
    np.testing.assert_allclose(dualad.grad(lambda x: np.real(np.sum(np.linalg.eigvals(x))))(rot2),
                               np.eye(2), atol=1e-12)


def test_eig_jacobians_both_modes_batched_tangents():
    """Dense Jacobians push many tangents (cotangents) at once: leading batch axes."""
    rot = np.array([[0.5, -2.0, 0.3], [2.0, 0.7, -0.1], [0.2, 0.1, 3.0]])
    f = lambda x: np.abs(np.linalg.eigvals(x.reshape(3, 3))) ** 2  # noqa: E731
    x = rot.ravel()
    h = 1e-6
    want = np.stack([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(9)], -1)
    np.testing.assert_allclose(jacobians.jacfwd(f)(x), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(jacobians.jacrev(f)(x), want, rtol=1e-6, atol=1e-8)


# --- svd ------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (3, 3), (2, 4, 3), (2, 3, 4)])
def test_svd_complex(shape):
    a = cplx(*shape)
    check_grads(lambda a: np.linalg.svd(a, compute_uv=False), a, order=2)
    check_grads(lambda a: np.linalg.svd(a, full_matrices=False), a, order=2)
    recon = lambda a: (lambda u, s, vh: (u * s[..., None, :]) @ vh)(  # noqa: E731
        *np.linalg.svd(a, full_matrices=False))
    check_grads(recon, a, order=2)                    # = A: its derivative is the identity
    s = dualad.jvp(lambda a: np.linalg.svd(a, full_matrices=False)[1], (a,), (a,))
    assert s[0].dtype == s[1].dtype == np.float64     # singular values are real, as NumPy's


def test_svd_complex_square_full_matrices_and_hermitian():
    a = cplx(3, 3)
    check_grads(lambda a: np.linalg.svd(a), a, order=2)
    check_grads(lambda a: np.linalg.svd(a, hermitian=True), a, order=2)
    check_grads(lambda a: np.linalg.svd(a, hermitian=True, compute_uv=False), a, order=2)
    with pytest.raises(NotImplementedError, match="full_matrices=True of a non-square"):
        dualad.grad(lambda a: np.sum(np.abs(np.linalg.svd(a)[0])))(cplx(4, 3))


def test_svd_closed_form_nuclear_norm():
    """∂‖A‖_*/∂Re A + i ∂‖A‖_*/∂Im A = U Vᴴ, and grad is its conjugate (docs/complex.md)."""
    a = cplx(4, 3)
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    want = np.conj(u @ vh)
    for f in (lambda a: np.sum(np.linalg.svd(a, compute_uv=False)),
              lambda a: np.linalg.norm(a, "nuc"),
              lambda a: np.sum(np.linalg.svd(a, full_matrices=False)[1])):
        np.testing.assert_allclose(dualad.grad(f)(a), want, rtol=1e-10)
        t = cplx(4, 3)       # a real function's JVP is Re Σ grad·ṫ
        np.testing.assert_allclose(dualad.jvp(f, (a,), (t,))[1], np.real(np.sum(want * t)),
                                   rtol=1e-10)


# --- norm -----------------------------------------------------------------------------------
@pytest.mark.parametrize("ord", [None, 1, 2, 3, -1.5, np.inf, -np.inf])
def test_vector_norm_complex(ord):
    x = cplx(5)
    check_grads(lambda x: np.linalg.norm(x, ord=ord), x, order=2)
    assert np.linalg.norm(x, 0) == 5
    assert dualad.jvp(lambda x: np.linalg.norm(x, 0), (x,), (x,))[1] == 0


@pytest.mark.parametrize("ord", [None, "fro", "nuc", 2, -2, 1, -1, np.inf, -np.inf])
def test_matrix_norm_complex(ord):
    a = cplx(3, 4)
    check_grads(lambda a: np.linalg.norm(a, ord=ord), a, order=2)
    check_grads(lambda a: np.linalg.norm(np.stack([a, 2 * a[::-1]]), ord=ord, axis=(2, 1),
                                         keepdims=True), a, order=1)


def test_norm_complex_axis_keepdims_and_zero():
    a = cplx(3, 4)
    for axis in (0, 1, -1):
        check_grads(lambda a: np.linalg.norm(a, axis=axis, keepdims=True), a, order=2)
    fro = dualad.grad(lambda a: np.linalg.norm(a))(a)
    np.testing.assert_allclose(fro, np.conj(a) / np.linalg.norm(a), rtol=1e-12)  # closed form
    z = np.zeros(3, complex)
    assert np.all(dualad.grad(np.linalg.norm)(z) == 0)      # the subgradient 0 at 0
    check_grads(lambda x: np.linalg.vector_norm(x, ord=3), cplx(4), order=2)
    check_grads(lambda x: np.linalg.matrix_norm(x, ord="nuc"), cplx(2, 3, 3), order=1)


@settings(derandomize=True, max_examples=15, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from([(2, 2), (3, 2), (2, 3)]))
def test_frobenius_and_spectral_norm_properties(seed, shape):
    a = cplx(*shape, seed=seed)
    g = dualad.grad(lambda a: np.linalg.norm(a, 2))(a)
    u, s, vh = np.linalg.svd(a)
    if s[0] - s[1] > 1e-3:        # the spectral norm is smooth where the top s is simple
        np.testing.assert_allclose(g, np.conj(np.outer(u[:, 0], vh[0])), rtol=1e-8, atol=1e-10)


# --- sqrtm ----------------------------------------------------------------------------------
def test_sqrtm_complex_result_of_real_matrix():
    a = np.random.default_rng(3).standard_normal((3, 3))
    a = a + a.T                                        # indefinite: a complex square root
    assert np.any(np.linalg.eigvalsh(a) < 0)
    x = dsl.sqrtm(a)
    assert np.iscomplexobj(x)
    np.testing.assert_allclose(x @ x, a, atol=1e-12)
    check_grads(dsl.sqrtm, a, order=2)
    g = dualad.grad(lambda a: np.sum(np.abs(dsl.sqrtm(a)) ** 2))(a)
    assert g.dtype == np.float64                       # a real input's cotangent is real
    # autograd's test_sqrtm: a symmetrized argument
    check_grads(lambda a: dsl.sqrtm(a + a.T), np.random.default_rng(4).standard_normal((3, 3)),
                order=2)


def test_sqrtm_complex_matrix():
    a = cplx(3, 3) + 3 * np.eye(3)
    check_grads(dsl.sqrtm, a, order=2)
    # holomorphic: the JVP is complex-linear
    t = cplx(3, 3)
    j1 = dualad.jvp(dsl.sqrtm, (a,), (t,))[1]
    j2 = dualad.jvp(dsl.sqrtm, (a,), (1j * t,))[1]
    np.testing.assert_allclose(j2, 1j * j1, rtol=1e-10, atol=1e-12)


# --- erf / erfc -----------------------------------------------------------------------------
def test_erf_erfc_complex():
    z = np.array([0.3 + 0.5j, -1.2 + 0.2j, 0.8 - 1.1j])
    check_grads(sc.erf, z, order=2)
    check_grads(sc.erfc, z, order=2)
    want = 2 / np.sqrt(np.pi) * np.exp(-z ** 2)         # closed form, holomorphic
    np.testing.assert_allclose(dualad.jvp(sc.erf, (z,), (np.ones_like(z),))[1], want, rtol=1e-12)
    np.testing.assert_allclose(dualad.vjp(sc.erfc, z)[1](np.ones_like(z))[0], -want, rtol=1e-12)
    np.testing.assert_allclose(dualad.grad(sc.erf, holomorphic=True)(0.3 + 0.5j), want[0])
    with pytest.raises(TypeError, match="erfinv: complex argument"):
        dualad.grad(lambda z: np.real(sc.erfinv(z)))(0.1 + 0.1j)


# --- what stays refused ---------------------------------------------------------------------
@pytest.mark.parametrize("fn", [np.linalg.cholesky, np.linalg.qr, np.linalg.pinv,
                                lambda x: np.linalg.slogdet(x)[1], np.linalg.cond])
def test_other_non_holomorphic_still_refused(fn):
    a = herm(2) + 4 * np.eye(2)
    with pytest.raises(NotImplementedError, match="is complex; .* not holomorphic"):
        dualad.jvp(fn, (a,), (a,))
