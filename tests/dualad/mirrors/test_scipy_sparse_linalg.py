"""``dualad.scipy.sparse.linalg``: spsolve, cg, gmres, bicgstab, minres, differentiable in b
and in A's stored values. Oracles: the dense closed forms (x = A⁻¹b, b̄ = A⁻ᵀ x̄,
Ā = −b̄ xᵀ read at the stored positions) and finite differences (``check_grads``)."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from hypothesis import given, settings, strategies as st

import dualad
import dualad.scipy.sparse as dsp
from dualad.scipy.sparse import linalg as dla
from dualad.verification import check_grads, check_rule

RNG = np.random.default_rng(1)
N = 6
A = (sp.random(N, N, density=0.4, format="csr", random_state=2) + 4 * sp.eye(N)).tocsr()
A.sum_duplicates()
A.sort_indices()
SPD = (A @ A.T + sp.eye(N)).tocsr()
SPD.sort_indices()
B1, B2 = RNG.normal(size=N), RNG.normal(size=(N, 3))


def _csr(M):
    return lambda d: dsp.csr_array((d, M.indices, M.indptr), shape=M.shape)


def test_spsolve_matches_scipy_and_the_closed_form_gradients():
    for b in (B1, B2):
        np.testing.assert_allclose(dla.spsolve(A, b), spla.spsolve(A, b), rtol=1e-12)
        check_grads(lambda b: dla.spsolve(A, b), (b,))
        check_grads(lambda d, b: dla.spsolve(_csr(A)(d), b), (A.data.copy(), b))
    # closed form: loss = w·x, b̄ = A⁻ᵀ w, Ā_k = −b̄[row_k] x[col_k]
    w = RNG.normal(size=N)
    Ad = A.toarray()
    x = np.linalg.solve(Ad, B1)
    gb_ref = np.linalg.solve(Ad.T, w)
    coo = sp.coo_array(A)
    gd, gb = dualad.grad(lambda d, b: dla.spsolve(_csr(A)(d), b) @ w, argnums=(0, 1))(
        A.data.copy(), B1)
    np.testing.assert_allclose(gb, gb_ref, rtol=1e-10)
    np.testing.assert_allclose(gd, -gb_ref[coo.row] * x[coo.col], rtol=1e-10)


def test_spsolve_shapes_formats_and_dtypes_as_scipy():
    col = B1[:, None]                      # (n, 1): SciPy returns (n,)
    assert dla.spsolve(A, col).shape == spla.spsolve(A, col).shape == (N,)
    y = dualad.jvp(lambda b: dla.spsolve(A, b), (col,), (np.ones((N, 1)),))[1]
    np.testing.assert_allclose(y, np.linalg.solve(A.toarray(), np.ones(N)), rtol=1e-10)
    for fmt in ("csc", "coo", "bsr", "dia", "lil"):
        for M in (A.asformat(fmt), sp.csr_matrix(A).asformat(fmt)):
            g = dualad.grad(lambda b: dla.spsolve(M, b).sum())(B1)
            np.testing.assert_allclose(g, np.linalg.solve(A.toarray().T, np.ones(N)), rtol=1e-10)
    Ac = (A * (1 + 0.5j)).tocsc()
    z = B1 + 1j * B2[:, 0]
    check_grads(lambda z: dla.spsolve(Ac, z), (z,))
    check_grads(lambda b: dla.spsolve(Ac, b), (B1,))    # a real b, a complex matrix


def test_float32_stays_float32_and_integer_matrices_solve_in_float64():
    A32, b32 = SPD.astype(np.float32).tocsc(), B1.astype(np.float32)
    for solve in (lambda b: dla.spsolve(A32, b), lambda b: dla.cg(A32, b)[0]):
        x, t = dualad.jvp(solve, (b32,), (b32,))
        assert x.dtype == t.dtype == np.float32
        np.testing.assert_allclose(t, spla.spsolve(SPD.tocsc(), B1), rtol=1e-3)
    assert dualad.grad(lambda b: dla.spsolve(A32, b).sum())(b32).dtype == np.float32
    Ai = sp.csc_array(np.array([[2, 1], [0, 3]]))
    np.testing.assert_allclose(dualad.grad(lambda b: dla.spsolve(Ai, b).sum())(np.ones(2)),
                               [0.5, 1 / 6], rtol=1e-14)


def test_one_factorization_serves_the_primal_and_every_rule_solve(monkeypatch):
    calls = []
    real_splu = spla.splu
    monkeypatch.setattr(spla, "splu", lambda *a, **k: calls.append(1) or real_splu(*a, **k))
    dualad.grad(lambda d, b: dla.spsolve(_csr(A)(d), b).sum(), argnums=(0, 1))(
        A.data.copy(), B1)
    assert len(calls) == 1


def test_singular_matrix_warns_as_scipy_and_a_rule_solve_raises():
    S = sp.csr_array(np.array([[1.0, 2.0], [2.0, 4.0]]))
    with pytest.warns(spla.MatrixRankWarning):
        x = dla.spsolve(S, dualad.numpy.array([1.0, 1.0]))
    assert np.isnan(x).all()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", spla.MatrixRankWarning)
        with pytest.raises(np.linalg.LinAlgError, match="singular"):
            dualad.grad(lambda b: dla.spsolve(S, b).sum())(np.ones(2))


@pytest.mark.parametrize("method, M", [("cg", SPD), ("minres", SPD), ("gmres", A),
                                       ("bicgstab", A)])
def test_iterative_solvers_in_b_and_in_the_stored_values(method, M):
    solve = getattr(dla, method)
    x, info = solve(M, B1, rtol=1e-12)
    assert info == 0
    np.testing.assert_allclose(x, spla.spsolve(M.tocsc(), B1), rtol=1e-8)
    check_grads(lambda b: solve(M, b, rtol=1e-12)[0], (B1,), rtol=1e-5)
    check_grads(lambda d, b: solve(_csr(M)(d), b, rtol=1e-12)[0], (M.data.copy(), B1),
                rtol=1e-5)


def test_iterative_preconditioner_and_nonconvergence():
    Minv = sp.diags(1.0 / A.diagonal())
    check_grads(lambda b: dla.gmres(A, b, rtol=1e-12, M=Minv)[0], (B1,), rtol=1e-5)
    hard = sp.diags(np.linspace(1, 1e4, 50)).tocsr()
    b = np.ones(50)
    # reverse: the primal returns SciPy's (x, info > 0) with a warning, the adjoint raises
    with pytest.warns(RuntimeWarning, match="did not converge"):
        with pytest.raises(RuntimeError, match="cg: the adjoint solve .* did not converge"):
            dualad.grad(lambda b: dla.cg(hard, b, maxiter=2)[0].sum())(b)
    # forward: the tangent solve runs with the primal's and raises
    with pytest.raises(RuntimeError, match="cg: the tangent solve .* did not converge"):
        dualad.jvp(lambda b: dla.cg(hard, b, maxiter=2)[0], (b,), (b,))
    # plain values: SciPy's (x, info), nothing raised
    assert dla.cg(hard, b, maxiter=2)[1] == spla.cg(hard, b, maxiter=2)[1]


def test_the_primitive_passes_the_rule_checker():
    report = check_rule(dualad.REGISTRY["sparse_solve"])
    assert report.ok, str(report)


def test_misuse_names_the_function_and_shapes():
    with pytest.raises(ValueError, match=r"spsolve: b of shape \(5,\) does not match A"):
        dualad.grad(lambda b: dla.spsolve(A, b).sum())(np.ones(5))
    with pytest.raises(ValueError, match="square"):
        dualad.grad(lambda b: dla.spsolve(sp.csr_array(np.ones((2, 3))), b).sum())(np.ones(2))
    with pytest.raises(TypeError, match="dense"):
        dualad.grad(lambda b: dla.spsolve(A.toarray(), b).sum())(B1)
    with pytest.raises(ValueError, match="b must be a vector"):
        dualad.grad(lambda b: dla.cg(SPD, b)[0].sum())(B2)
    with pytest.raises(NotImplementedError, match="shift"):
        dla.minres(SPD, B1, shift=1.0)


def test_second_order_through_spsolve():
    """Hessian-vector product of ½|A(d)⁻¹b|² in the stored values (forward over reverse)
    against finite differences of the gradient."""
    d0 = A.data.copy()

    def loss(d):
        return 0.5 * (dla.spsolve(_csr(A)(d), B1) ** 2).sum()
    check_grads(loss, (d0,), order=2)


@settings(derandomize=True, max_examples=12, deadline=None)
@given(n=st.integers(1, 7), seed=st.integers(0, 10_000), k=st.integers(0, 2))
def test_property_spsolve_cotangents_match_the_dense_solve(n, seed, k):
    M = (sp.random(n, n, density=0.5, format="csr", random_state=seed) + 3 * sp.eye(n)).tocsr()
    rng = np.random.default_rng(seed)
    b = rng.normal(size=(n,) if k == 0 else (n, k + 1))
    ct = rng.normal(size=b.shape)
    x, pullback = dualad.vjp(lambda b: dla.spsolve(M, b), b)
    np.testing.assert_allclose(x, np.linalg.solve(M.toarray(), b), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(pullback(ct)[0], np.linalg.solve(M.toarray().T, ct),
                               rtol=1e-9, atol=1e-12)


def test_assembled_parametric_matrix_solve():
    """A(θ) = θ₀ I − K + θ₁ S assembled from traced pieces (sums of traced and constant
    sparse matrices): dx/dθ₀ = −A⁻¹ x, dx/dθ₁ = −A⁻¹ S x."""
    n = 6
    K = sp.diags([np.ones(n - 1), -2 * np.ones(n), np.ones(n - 1)], [-1, 0, 1], format="csr")
    eye = sp.identity(n, format="csr")
    rows, cols = np.arange(n - 1), np.arange(1, n)
    b = np.linspace(0, 1, n)

    def x_of(theta):
        A = dsp.csr_array((theta[0] * eye.data, eye.indices, eye.indptr), shape=(n, n)) - K
        A = A + dsp.coo_array((theta[1] * np.ones(n - 1), (rows, cols)), shape=(n, n))
        return dla.spsolve(A, b)
    theta = np.array([3.0, 0.2])
    check_grads(x_of, (theta,))
    S = np.eye(n, k=1)
    Ad = 3.0 * np.eye(n) - K.toarray() + 0.2 * S
    x = np.linalg.solve(Ad, b)
    from dualad import jacobians
    J = jacobians.jacobian(x_of)(theta)
    np.testing.assert_allclose(J[:, 0], -np.linalg.solve(Ad, x), rtol=1e-10)
    np.testing.assert_allclose(J[:, 1], -np.linalg.solve(Ad, S @ x), rtol=1e-10)
    with pytest.raises(ValueError, match=r"shapes \(6, 6\) and \(5, 5\) differ"):
        dualad.grad(lambda t: dla.spsolve(
            dsp.csr_array((t * eye.data, eye.indices, eye.indptr), shape=(n, n))
            + sp.identity(5), b).sum())(1.0)


@pytest.mark.parametrize("method", ["cg", "gmres", "bicgstab", "minres"])
def test_matrix_free_linear_operator_in_b(method):
    """A constant LinearOperator (matvec, rmatvec): differentiable in b; the adjoint of the
    nonsymmetric methods runs on the operator's transpose (rmatvec)."""
    M = SPD if method in ("cg", "minres") else A
    op = spla.LinearOperator(M.shape, matvec=lambda v: M @ v, rmatvec=lambda v: M.T @ v,
                             dtype=float)
    solve = getattr(dla, method)
    check_grads(lambda b: solve(op, b, rtol=1e-12)[0], (B1,), rtol=1e-5)
    g = dualad.grad(lambda b: solve(op, b, rtol=1e-12)[0].sum())(B1)
    np.testing.assert_allclose(g, np.linalg.solve(M.toarray().T, np.ones(N)), rtol=1e-8)
    from dualad import jacobians
    pat = jacobians.jacobian_sparsity(lambda b: solve(op, b, rtol=1e-12)[0], B1)
    assert pat.nnz == N * N                      # no pattern known: taken as connected


def test_linear_operator_without_rmatvec_names_what_is_missing():
    op = spla.LinearOperator(A.shape, matvec=lambda v: A @ v, dtype=float)
    assert dla.gmres(op, B1, rtol=1e-12)[1] == 0          # the primal needs no transpose
    with pytest.raises(NotImplementedError, match="gmres: the adjoint solve needs Aᵀ"):
        dualad.grad(lambda b: dla.gmres(op, b, rtol=1e-12)[0].sum())(B1)
    with pytest.raises(TypeError, match="spsolve: A must be a sparse matrix, got"):
        dla.spsolve(op, B1)
