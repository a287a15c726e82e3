"""The rest of scipy.linalg that researchers call, and multivariate_normal.entropy:
banded solves, Lyapunov equations, structured matrices, matrix trigonometry,
fractional powers, the polar decomposition. Values against SciPy; derivatives in
both modes to order 2 (``check_grads``), batched tangents and cotangents against a
loop, the SymPy oracle on small cases, and the errors."""
import numpy as np
import pytest
import scipy.linalg as sl
import scipy.stats as ss

import dualad
from dualad.extend import rule_table
import dualad.scipy.linalg as dsl
import dualad.scipy.stats as ds
from dualad.core.primitive import REGISTRY
from dualad.verification import check_grads, check_rule
from dualad.verification.symbolic import compare_at

pytestmark = pytest.mark.slow   # per-primitive rule checks: in the full suite, not the quick subset

JVP = rule_table("jvp", per_argument=True)
JVP_ALL = rule_table("jvp_all")

RNG = np.random.default_rng(7)


def band_of(l, u, n, seed=0, shift=3.0):
    """A diagonally dominant band (well conditioned) with garbage in the unused corners."""
    ab = np.random.default_rng(seed).uniform(-1, 1, (l + u + 1, n))
    ab[u] += shift
    return ab


def dense_of(ab, l, u):
    n = ab.shape[1]
    a = np.zeros((n, n), ab.dtype)
    for i in range(n):
        for j in range(max(0, i - l), min(n, i + u + 1)):
            a[i, j] = ab[u + i - j, j]
    return a


def batched_agrees(f, args):
    """A batch of 3 tangents (per argument) and of 2 cotangents in one sweep each
    equals the loop over them."""
    out, pullback = dualad.vjp(f, *args)
    tb = tuple(RNG.standard_normal((3,) + np.shape(a)) for a in args)
    _, jb = dualad.jvp(f, args, tb)
    for k in range(3):
        _, jk = dualad.jvp(f, args, tuple(t[k] for t in tb))
        np.testing.assert_allclose(jb[k], jk, rtol=1e-10, atol=1e-12)
    cb = RNG.standard_normal((2,) + np.shape(out))
    gb = pullback(cb)
    for k in range(2):
        for g, gk in zip(gb, pullback(cb[k])):
            np.testing.assert_allclose(g[k], gk, rtol=1e-10, atol=1e-12)


# --- banded solves ----------------------------------------------------------------------------
@pytest.mark.parametrize("l,u,bshape", [(1, 1, (5,)), (2, 0, (4, 2)), (0, 3, (5, 1)),
                                        (2, 1, (6, 3))])
def test_solve_banded_values_and_derivatives(l, u, bshape):
    ab = band_of(l, u, bshape[0], seed=l + 3 * u)
    b = RNG.standard_normal(bshape)
    f = lambda ab, b: dsl.solve_banded((l, u), ab, b)  # noqa: E731
    np.testing.assert_allclose(f(ab, b), sl.solve_banded((l, u), ab, b), rtol=1e-13)
    np.testing.assert_allclose(f(ab, b), np.linalg.solve(dense_of(ab, l, u), b), rtol=1e-10)
    check_grads(f, (ab, b), order=2)
    batched_agrees(f, (ab, b))


def test_solve_banded_cotangent_is_the_band_of_the_dense_one():
    l, u, n = 1, 2, 6
    ab, b = band_of(l, u, n), RNG.standard_normal(n)
    w = RNG.standard_normal(n)
    g_ab, g_b = dualad.grad(lambda ab, b: w @ dsl.solve_banded((l, u), ab, b),
                            argnums=(0, 1))(ab, b)
    a = dense_of(ab, l, u)
    x = np.linalg.solve(a, b)
    gb_dense = np.linalg.solve(a.T, w)
    np.testing.assert_allclose(g_b, gb_dense, rtol=1e-12)
    ga_dense = -np.outer(gb_dense, x)
    mask = dense_of(np.ones_like(ab), l, u) != 0
    np.testing.assert_allclose(dense_of(g_ab, l, u), np.where(mask, ga_dense, 0), atol=1e-13)
    for r in range(l + u + 1):              # the corners hold no entry of A: zero cotangent
        for j in range(n):
            if not 0 <= j + r - u < n:
                assert g_ab[r, j] == 0.0


def test_solve_banded_is_linear_cost_in_n():
    # A dense n×n float64 matrix here would be 80 GB: the rules never form one.
    n = 100_000
    ab = band_of(1, 1, n)
    b = np.ones(n)
    g = dualad.grad(lambda ab: np.sum(dsl.solve_banded((1, 1), ab, b) ** 2))(ab)
    assert g.shape == ab.shape and np.all(np.isfinite(g))
    _, t = dualad.jvp(lambda ab: dsl.solve_banded((1, 1), ab, b), (ab,), (ab,))
    assert t.shape == (n,)


def test_solve_banded_complex_holomorphic():
    ab = band_of(1, 1, 4) + 0.4j * band_of(1, 1, 4, seed=5, shift=0.0)
    b = RNG.standard_normal(4) + 1j * RNG.standard_normal(4)
    np.testing.assert_allclose(dsl.solve_banded((1, 1), ab, b),
                               sl.solve_banded((1, 1), ab, b), rtol=1e-13)
    check_grads(lambda ab, b: dsl.solve_banded((1, 1), ab, b), (ab, b), order=1)


def test_banded_stacks_share_the_right_hand_side():
    ab = np.stack([band_of(1, 1, 4), band_of(1, 1, 4, seed=2)])
    b = RNG.standard_normal(4)
    f = lambda ab, b: dsl.solve_banded((1, 1), ab, b)  # noqa: E731
    np.testing.assert_allclose(f(ab, b), sl.solve_banded((1, 1), ab, b), rtol=1e-13)
    check_grads(f, (ab, b), order=1)
    abh = ab[:, :2] * [[0.1], [1.0]]
    np.testing.assert_allclose(dsl.solveh_banded(abh, b), sl.solveh_banded(abh, b), rtol=1e-13)


@pytest.mark.parametrize("lower", [False, True])
@pytest.mark.parametrize("bshape", [(5,), (5, 2)])
def test_solveh_banded(lower, bshape):
    w, n = 2, bshape[0]
    ab = np.random.default_rng(1).uniform(-0.5, 0.5, (w + 1, n))
    ab[0 if lower else w] = 3.0 + np.arange(n) * 0.1
    b = RNG.standard_normal(bshape)
    f = lambda ab, b: dsl.solveh_banded(ab, b, lower=lower)  # noqa: E731
    np.testing.assert_allclose(f(ab, b), sl.solveh_banded(ab, b, lower=lower), rtol=1e-13)
    check_grads(f, (ab, b), order=2)
    batched_agrees(f, (ab, b))
    # The derivative is that of the symmetric matrix the stored triangle defines.
    t = RNG.standard_normal(ab.shape)
    l, u = (w, 0) if lower else (0, w)
    tri = dense_of(t, l, u)
    sym = tri + tri.T - np.diag(np.diag(tri))
    a = dense_of(ab, l, u)
    a = a + a.T - np.diag(np.diag(a))
    x = np.linalg.solve(a, b)
    _, jt = dualad.jvp(lambda ab: f(ab, b), (ab,), (t,))
    np.testing.assert_allclose(jt, -np.linalg.solve(a, sym @ x), rtol=1e-10, atol=1e-12)


def test_banded_sympy_oracle():
    ab, b = band_of(1, 1, 3), RNG.standard_normal(3)
    assert compare_at(lambda ab, b: dsl.solve_banded((1, 1), ab, b), [ab, b])
    abh = np.array([[0.0, 0.4, -0.3], [2.0, 2.5, 3.0]])
    assert compare_at(lambda ab, b: dsl.solveh_banded(ab, b), [abh, b])


@pytest.mark.parametrize("call,exc,pattern", [
    (lambda: dsl.solve_banded((1, 1), np.ones((2, 4)), np.ones(4)), ValueError,
     r"solve_banded: argument ab of shape \(2, 4\) does not fit \(l, u\) = \(1, 1\)"),
    (lambda: dsl.solve_banded((1, -1), np.ones((1, 4)), np.ones(4)), ValueError,
     r"solve_banded: l_and_u must be a pair of non-negative integers"),
    (lambda: dsl.solve_banded((1, 1, 0), np.ones((3, 4)), np.ones(4)), ValueError,
     r"solve_banded: l_and_u"),
    (lambda: dsl.solve_banded((1, 1), np.ones(4), np.ones(4)), ValueError,
     r"solve_banded: argument ab must be band storage .* shape \(4,\)"),
    (lambda: dsl.solve_banded((1, 1), band_of(1, 1, 4), np.ones(3)), ValueError,
     r"solve_banded: argument b of shape \(3,\) does not match argument ab of shape \(3, 4\)"),
    (lambda: dsl.solve_banded((0, 0), np.zeros((1, 3)), np.ones(3)), np.linalg.LinAlgError,
     r"solve_banded: the matrix of argument ab .* singular"),
    (lambda: dsl.solveh_banded(np.ones((2, 4)), np.ones((5, 1))), ValueError,
     r"solveh_banded: argument b of shape \(5, 1\)"),
    (lambda: dsl.solveh_banded(np.ones(4), np.ones(4)), ValueError,
     r"solveh_banded: argument ab must be band storage .* shape \(4,\)"),
    (lambda: dsl.solveh_banded(np.array([[0.0, 1.0], [-1.0, 1.0]]), np.ones(2)),
     np.linalg.LinAlgError, r"solveh_banded: .* not positive definite"),
    (lambda: dsl.solveh_banded(np.ones((2, 3)) * 1j, np.ones(3)), NotImplementedError,
     r"solveh_banded: argument ab \(shape \(2, 3\)\) is complex"),
])
def test_banded_errors_name_function_argument_shape(call, exc, pattern):
    with pytest.raises(exc, match=pattern):
        call()


# --- structured matrices ----------------------------------------------------------------------
def test_structured_values_match_scipy():
    c, r = RNG.standard_normal(4), RNG.standard_normal(3)
    for name, args in [("toeplitz", (c, r)), ("toeplitz", (c,)), ("hankel", (c, r)),
                       ("hankel", (c,)), ("circulant", (c,))]:
        np.testing.assert_array_equal(getattr(dsl, name)(*args), getattr(sl, name)(*args))
    cz = c + 1j * RNG.standard_normal(4)
    np.testing.assert_array_equal(dsl.toeplitz(cz), sl.toeplitz(cz))   # r = conj(c)
    C = RNG.standard_normal((2, 4))
    np.testing.assert_array_equal(dsl.toeplitz(C, r), sl.toeplitz(C, r))  # batches
    np.testing.assert_array_equal(dsl.circulant(C), sl.circulant(C))
    np.testing.assert_array_equal(dsl.hankel(C, r)[1], sl.hankel(C[1], r))
    blocks = (1.5, [2, 3], [[4.0], [5.0]], np.ones((2, 2)))
    np.testing.assert_array_equal(dsl.block_diag(*blocks), sl.block_diag(*blocks))
    np.testing.assert_array_equal(dsl.block_diag(), sl.block_diag())
    np.testing.assert_array_equal(dsl.block_diag(np.ones((0, 2)), [[1.0]]),
                                  sl.block_diag(np.ones((0, 2)), [[1.0]]))
    S = RNG.standard_normal((3, 2, 2))
    np.testing.assert_array_equal(dsl.block_diag(S, np.eye(1)), sl.block_diag(S, np.eye(1)))


def test_structured_derivatives_both_modes_order_2():
    c, r = RNG.standard_normal(4), RNG.standard_normal(3)
    check_grads(lambda c, r: dsl.toeplitz(c, r) ** 2, (c, r), order=2)
    check_grads(lambda c: dsl.toeplitz(c) @ c, (c,), order=2)
    check_grads(lambda c, r: dsl.hankel(c, r) ** 2, (c, r), order=2)
    check_grads(lambda c: np.sin(dsl.circulant(c)), (c,), order=2)
    a, b = RNG.standard_normal((2, 3)), RNG.standard_normal(2)
    check_grads(lambda a, b: dsl.block_diag(a, b, 2.0) ** 2, (a, b), order=2)
    batched_agrees(lambda c, r: dsl.toeplitz(c, r), (c, r))
    # d/dc_k of Σ T∘W is the sum of W along the k-th subdiagonal
    w = RNG.standard_normal((4, 3))
    g = dualad.grad(lambda c: np.sum(dsl.toeplitz(c, r) * w))(c)
    np.testing.assert_allclose(g, [np.trace(w, offset=-k) for k in range(4)], rtol=1e-13)


def test_structured_sympy_oracle():
    c, r = RNG.standard_normal(3), RNG.standard_normal(2)
    assert compare_at(lambda c, r: dsl.toeplitz(c, r), [c, r])
    assert compare_at(lambda c: dsl.circulant(c) @ c, [c])


# --- Lyapunov equations ----------------------------------------------------------------------
A3 = np.array([[-2.0, 0.5, 0.1], [0.3, -1.5, 0.4], [-0.2, 0.1, -1.0]])   # stable (continuous)
D3 = 0.3 * np.array([[1.0, 0.5, -0.4], [0.2, -0.8, 0.3], [0.6, 0.1, 0.5]])  # spectral radius < 1


def test_lyapunov_values_and_residuals():
    q = RNG.standard_normal((3, 3))
    x = dsl.solve_continuous_lyapunov(A3, q)
    np.testing.assert_allclose(x, sl.solve_continuous_lyapunov(A3, q), rtol=1e-12)
    np.testing.assert_allclose(A3 @ x + x @ A3.T, q, atol=1e-13)
    x = dsl.solve_discrete_lyapunov(D3, q)
    np.testing.assert_allclose(x, sl.solve_discrete_lyapunov(D3, q), rtol=1e-12)
    np.testing.assert_allclose(D3 @ x @ D3.T - x + q, 0, atol=1e-13)
    big = 0.05 * RNG.standard_normal((12, 12))       # n > 10: SciPy's bilinear method
    qb = RNG.standard_normal((12, 12))
    np.testing.assert_allclose(dsl.solve_discrete_lyapunov(big, qb),
                               sl.solve_discrete_lyapunov(big, qb), rtol=1e-10, atol=1e-12)
    ac, qc = D3 + 0.2j * D3.T, q + 0.5j * q.T
    np.testing.assert_allclose(dsl.solve_discrete_lyapunov(ac, qc),
                               sl.solve_discrete_lyapunov(ac, qc), rtol=1e-12)
    np.testing.assert_allclose(dsl.solve_continuous_lyapunov(A3 + 0.3j * D3, qc),
                               sl.solve_continuous_lyapunov(A3 + 0.3j * D3, qc), rtol=1e-12)
    stack = np.stack([D3, D3.T])
    np.testing.assert_allclose(dsl.solve_discrete_lyapunov(stack, q),
                               [sl.solve_discrete_lyapunov(m, q) for m in stack], rtol=1e-12)


@pytest.mark.parametrize("fn,a", [(dsl.solve_continuous_lyapunov, A3),
                                  (dsl.solve_discrete_lyapunov, D3)])
def test_lyapunov_derivatives_both_modes_order_2(fn, a):
    q = RNG.standard_normal((3, 3))
    check_grads(fn, (a, q), order=2)
    batched_agrees(fn, (a, q))


def test_lyapunov_implicit_derivative_closed_form():
    # Ẋ solves the same equation with right-hand side Q̇ + Ȧ X Aᵀ + A X Ȧᵀ (discrete).
    q, ta, tq = (RNG.standard_normal((3, 3)) for _ in range(3))
    x, tx = dualad.jvp(dsl.solve_discrete_lyapunov, (D3, q), (ta, tq))
    np.testing.assert_allclose(tx, sl.solve_discrete_lyapunov(
        D3, tq + ta @ x @ D3.T + D3 @ x @ ta.T), rtol=1e-10)
    x, tx = dualad.jvp(dsl.solve_continuous_lyapunov, (A3, q), (ta, tq))
    np.testing.assert_allclose(tx, sl.solve_continuous_lyapunov(
        A3, tq - ta @ x - x @ ta.T), rtol=1e-10)


def test_lyapunov_complex():
    ac = D3 + 0.2j * D3.T
    qc = RNG.standard_normal((3, 3)) + 1j * RNG.standard_normal((3, 3))
    check_grads(dsl.solve_discrete_lyapunov, (ac, qc), order=1)
    check_grads(dsl.solve_continuous_lyapunov, (A3 + 0.3j * D3, qc), order=1)


def test_stein_sympy_oracle():
    # The SymPy translation (cofactor solve of (I - A⊗B) vec X = vec Q) differentiated
    # by SymPy, against the rules: all arguments at 1×1, A of the 2×2 discrete Lyapunov.
    from dualad.ops.linalg.equations import solve_stein
    assert compare_at(solve_stein, [np.array([[0.4]]), np.array([[-0.7]]), np.array([[1.5]])])
    a = np.array([[0.3, 0.1], [-0.2, 0.4]])
    q = np.array([[1.0, 0.5], [-0.3, 2.0]])
    assert compare_at(lambda a: dsl.solve_discrete_lyapunov(a, q), [a])


@pytest.mark.parametrize("call,pattern", [
    (lambda: dsl.solve_continuous_lyapunov(np.ones((2, 3)), np.ones((2, 2))),
     r"solve_continuous_lyapunov: argument a must be a square .* shape \(2, 3\)"),
    (lambda: dsl.solve_discrete_lyapunov(np.eye(2) * 0.5, np.ones((3, 3))),
     r"solve_discrete_lyapunov: argument q has shape \(3, 3\), expected \(..., 2, 2\)"),
    (lambda: dsl.solve_discrete_lyapunov(np.eye(2) * 0.5, np.ones(2)),
     r"solve_discrete_lyapunov: argument q must be a matrix .* shape \(2,\)"),
    (lambda: dsl.solve_discrete_lyapunov(np.eye(2), np.eye(2), method="schur"),
     r"solve_discrete_lyapunov: method must be"),
])
def test_lyapunov_errors(call, pattern):
    with pytest.raises(ValueError, match=pattern):
        call()


# --- matrix trigonometry, fractional powers, polar -------------------------------------------
M3 = 0.6 * np.array([[0.5, -0.4, 0.3], [0.2, 0.1, -0.6], [0.7, 0.3, -0.2]])
SPD3 = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])


def test_matrix_trig_values_match_scipy():
    for name in ("cosm", "sinm", "tanm", "coshm", "sinhm", "tanhm"):
        ours, theirs = getattr(dsl, name), getattr(sl, name)
        np.testing.assert_allclose(ours(M3), theirs(M3), rtol=1e-12, atol=1e-14)
        z = M3 + 0.3j * M3.T
        np.testing.assert_allclose(ours(z), theirs(z), rtol=1e-12, atol=1e-14)
    assert not np.iscomplexobj(dsl.cosm(M3)) and not np.iscomplexobj(dsl.sinm(M3))
    stack = np.stack([M3, M3.T])
    np.testing.assert_allclose(dsl.cosm(stack), [sl.cosm(m) for m in stack], rtol=1e-12)


def test_matrix_trig_derivatives_both_modes_order_2():
    a = M3[:2, :2]
    check_grads(lambda a: dsl.cosm(a) + 2.0 * dsl.sinm(a), (a,), order=2)
    check_grads(lambda a: dsl.coshm(a) - dsl.sinhm(a) + dsl.tanhm(a), (a,), order=2)
    check_grads(dsl.tanm, (M3,), order=1)
    batched_agrees(dsl.sinm, (M3,))
    # d/dt cos(tA) = -A sin(tA): a closed form for the Fréchet derivative along A.
    _, tc = dualad.jvp(dsl.cosm, (M3,), (M3,))
    np.testing.assert_allclose(tc, -M3 @ sl.sinm(M3), rtol=1e-10, atol=1e-13)
    _, ts = dualad.jvp(dsl.tanhm, (M3,), (M3,))
    c = sl.coshm(M3)
    np.testing.assert_allclose(ts, M3 @ np.linalg.inv(c @ c), rtol=1e-10, atol=1e-13)


def test_fractional_matrix_power():
    for p in (0.5, -0.3, 1.7):
        np.testing.assert_allclose(dsl.fractional_matrix_power(SPD3, p),
                                   sl.fractional_matrix_power(SPD3, p), rtol=1e-12)
    a = SPD3[:2, :2]
    check_grads(dsl.fractional_matrix_power, (a, np.array(0.4)), order=2)
    batched_agrees(lambda a: dsl.fractional_matrix_power(a, 0.5), (SPD3,))
    # d/dp A^p = log(A) A^p,  d²/dp² A^p = log(A)² A^p  (forward over reverse),
    # and A^½'s derivative along I is ½ A^-½.
    log_a, root = sl.logm(SPD3), sl.sqrtm(SPD3)
    dp = dualad.grad(lambda p: np.sum(dsl.fractional_matrix_power(SPD3, p)))
    np.testing.assert_allclose(dp(0.5), np.sum(log_a @ root), rtol=1e-10)
    np.testing.assert_allclose(dualad.jvp(dp, (0.5,), (1.0,))[1], np.sum(log_a @ log_a @ root),
                               rtol=1e-9)
    _, t = dualad.jvp(lambda a: dsl.fractional_matrix_power(a, 0.5), (SPD3,), (np.eye(3),))
    np.testing.assert_allclose(t, 0.5 * np.linalg.inv(root), rtol=1e-9)
    with pytest.raises(NotImplementedError, match="fractional_matrix_power: .* complex"):
        dsl.fractional_matrix_power(-np.eye(2), 0.5)
    with pytest.raises(ValueError, match=r"fractional_matrix_power: exponent t .* shape \(2,\)"):
        dsl.fractional_matrix_power(SPD3, np.ones(2))
    with pytest.raises(ValueError, match=r"fractional_matrix_power: argument A .* \(3, 2\)"):
        dsl.fractional_matrix_power(np.ones((3, 2)), 0.5)


@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 4)])
@pytest.mark.parametrize("side", ["right", "left"])
def test_polar(shape, side):
    a = np.random.default_rng(3).standard_normal(shape)
    u, p = dsl.polar(a, side)
    u2, p2 = sl.polar(a, side)
    np.testing.assert_allclose(u, u2, atol=1e-12)
    np.testing.assert_allclose(p, p2, atol=1e-12)
    check_grads(lambda a: dsl.polar(a, side), (a,), order=2 if shape == (3, 3) else 1)


def test_polar_errors():
    with pytest.raises(ValueError, match="polar: side must be"):
        dsl.polar(np.eye(2), "up")
    with pytest.raises(ValueError, match=r"polar: argument a must be a matrix .* \(3,\)"):
        dsl.polar(np.ones(3))
    with pytest.raises(NotImplementedError, match=r"polar: argument a .* complex"):
        dsl.polar(np.eye(2) * 1j)


# --- scipy.stats gaps --------------------------------------------------------------------------
def test_multivariate_normal_entropy():
    m = RNG.standard_normal((3, 3))
    S = m @ m.T + np.eye(3)
    for mean, cov in [(None, S), (np.zeros(3), S), (np.zeros(3), 2.0), (None, 2.0),
                      (np.zeros(3), np.array([1.0, 2.0, 3.0]))]:
        np.testing.assert_allclose(ds.multivariate_normal.entropy(mean, cov),
                                   ss.multivariate_normal.entropy(mean, cov), rtol=1e-13)
    g = dualad.grad(lambda c: ds.multivariate_normal.entropy(cov=c))(S)
    np.testing.assert_allclose(g, 0.5 * np.linalg.inv(S), rtol=1e-12)
    check_grads(lambda c: ds.multivariate_normal.entropy(cov=c), (S,), order=2)
    check_grads(lambda v: ds.multivariate_normal.entropy(np.zeros(3), v),
                (np.array([1.0, 2.0, 3.0]),), order=2)
    with pytest.raises(ValueError, match=r"multivariate_normal.entropy: cov of shape \(2, 2\)"):
        ds.multivariate_normal.entropy(np.zeros(3), np.eye(2))


def test_dirichlet_rvs_is_not_differentiable():
    alpha = np.array([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(ds.dirichlet.rvs(alpha, size=2, random_state=0),
                                  ss.dirichlet.rvs(alpha, size=2, random_state=0))
    with pytest.raises(NotImplementedError, match="dirichlet.rvs: alpha is not differentiable"):
        dualad.grad(lambda a: np.sum(ds.dirichlet.rvs(a)))(alpha)


def test_autograd_scipy_stats_names_all_present():
    autograd_stats = {"beta": ["cdf", "logpdf", "pdf"], "chi2": ["cdf", "logpdf", "pdf"],
                      "dirichlet": ["rvs", "pdf", "logpdf"], "gamma": ["cdf", "logpdf", "pdf"],
                      "multivariate_normal": ["pdf", "logpdf", "entropy"],
                      "norm": ["pdf", "cdf", "sf", "logpdf", "logcdf", "logsf"],
                      "poisson": ["cdf", "logpmf", "pmf"], "t": ["pdf", "cdf", "logpdf", "logcdf"]}
    for dist, names in autograd_stats.items():
        for name in names:
            assert callable(getattr(getattr(ds, dist), name)), f"{dist}.{name}"


# --- the new primitives in the registry -------------------------------------------------------
@pytest.mark.parametrize("name", ["solve_banded", "solveh_banded", "solve_stein",
                                  "fractional_matrix_power"])
def test_new_primitives_pass_the_rule_checker(name):
    prim = REGISTRY[name]
    assert prim.samples and (JVP.get(prim) or JVP_ALL.get(prim))
    assert (prim.sympy is not None) == (name != "fractional_matrix_power")
    report = check_rule(prim, samples=prim.samples[:1 if name == "fractional_matrix_power"
                                                    else 2], order=1)
    assert report.ok, str(report)
