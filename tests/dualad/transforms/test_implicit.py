"""Implicit differentiation: dualad.custom_linear_solve and dualad.custom_root.

Every derivative is compared with an independent oracle: a closed form (the root of a
polynomial in its coefficients, ridge regression in its penalty, a linear system in A
and b), finite differences (dualad.verification.check_grads, or central differences of
first derivatives for Hessians), or an unrolled solver differentiated step by step.
"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
import scipy.optimize as so
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import dualad
from dualad import jacobians
from dualad.transforms.implicit import custom_linear_solve, custom_root, lax
from dualad.verification import check_grads

RNG = np.random.default_rng(18)


def fd_jacobian(f, x, eps=1e-6):
    """Central differences of a vector function (the oracle for Hessians: f a gradient)."""
    x = np.asarray(x, float)
    cols = []
    for e in np.eye(x.size):
        e = e.reshape(x.shape)
        cols.append((np.asarray(f(x + eps * e)) - np.asarray(f(x - eps * e))) / (2 * eps))
    return np.stack(cols, axis=-1)


# --- the root of a polynomial in its coefficients ---------------------------------------
def poly(x, a):
    return a[0] + a[1] * x + a[2] * x ** 2 + a[3] * x ** 3


def poly_root(a):
    return so.brentq(lambda x: poly(x, a), 0.0, 3.0, xtol=1e-15)


A_POLY = np.array([-2.0, 1.0, 0.5, 0.3])
poly_root_ad = custom_root(poly_root, poly)


def poly_closed_forms(a):
    """x, dx/da_i = −x^i/p'(x), and d²x/da_i da_j (differentiating that again)."""
    x = poly_root(a)
    i = np.arange(4.0)
    dp = a[1] + 2 * a[2] * x + 3 * a[3] * x ** 2
    ddp = 2 * a[2] + 6 * a[3] * x
    g = -x ** i / dp
    dxi = np.where(i > 0, i * x ** np.maximum(i - 1, 0), 0.0)       # d(x^i)/dx
    # d/da_j of −x^i / p'(x, a), with dp'/da_j = ∂p'/∂x g_j + j x^{j−1}
    dp_da = ddp * g + dxi
    h = -(dxi[:, None] * g[None, :] * dp - (x ** i)[:, None] * dp_da[None, :]) / dp ** 2
    return x, g, h


def test_polynomial_root_value_and_gradient_closed_form():
    x, g, _ = poly_closed_forms(A_POLY)
    assert poly_root_ad(A_POLY) == pytest.approx(x, abs=1e-14)
    np.testing.assert_allclose(dualad.grad(poly_root_ad)(A_POLY), g, rtol=1e-12)
    _, fwd = dualad.jvp(poly_root_ad, (A_POLY,), (np.eye(4),))        # vector mode
    np.testing.assert_allclose(fwd, g, rtol=1e-12)


def test_polynomial_root_hessian_closed_form_and_finite_differences():
    _, _, h = poly_closed_forms(A_POLY)
    np.testing.assert_allclose(jacobians.hessian(poly_root_ad)(A_POLY), h, rtol=1e-10)
    np.testing.assert_allclose(h, h.T, atol=1e-12)
    fd = fd_jacobian(dualad.grad(poly_root_ad), A_POLY)
    np.testing.assert_allclose(h, fd, rtol=1e-6, atol=1e-9)
    # jvp of grad, grad of grad, hvp: all the same second derivative
    v = np.array([0.3, -1.0, 0.5, 2.0])
    _, jg = dualad.jvp(dualad.grad(poly_root_ad), (A_POLY,), (v,))
    np.testing.assert_allclose(jg, h @ v, rtol=1e-10)
    np.testing.assert_allclose(dualad.hvp(poly_root_ad, (A_POLY,), (v,))[0], h @ v, rtol=1e-10)
    gg = dualad.grad(lambda a: dualad.grad(poly_root_ad)(a) @ v)(A_POLY)
    np.testing.assert_allclose(gg, h @ v, rtol=1e-10)


def test_polynomial_root_check_grads_order_2():
    assert check_grads(poly_root_ad, (A_POLY,), order=2) > 0


def test_root_differentiable_in_closed_over_values():
    """optimality and solve close over a traced array; solve runs on its plain value."""
    def f(s):
        a = A_POLY + np.array([0.0, 0.0, 0.0, 1.0]) * s
        return custom_root(lambda: poly_root(a), lambda x: poly(x, a))()
    assert check_grads(f, (np.array(0.3),), order=2) > 0


def dualad_plain(x):
    from dualad.extend import primal_value
    return np.asarray(primal_value(x))


# --- ridge regression in its penalty ------------------------------------------------------
X = RNG.normal(size=(12, 4))
Y = RNG.normal(size=12)
G = X.T @ X


def ridge(lam, method="auto"):
    root = custom_root(lambda lam: np.linalg.solve(G + lam * np.eye(4), X.T @ Y),
                       lambda w, lam: (G + lam * np.eye(4)) @ w - X.T @ Y,
                       linear_solve=method, symmetric=method in ("cg", "minres"))
    return root(lam)


@pytest.mark.parametrize("method", ["direct", "gmres", "cg", "minres"])
def test_ridge_derivative_in_the_penalty_closed_form(method):
    lam = 0.7
    H = G + lam * np.eye(4)
    w = np.linalg.solve(H, X.T @ Y)
    dw = -np.linalg.solve(H, w)                   # dw/dλ = −H⁻¹ w
    d2w = 2 * np.linalg.solve(H, np.linalg.solve(H, w))    # d²w/dλ² = 2 H⁻² w
    np.testing.assert_allclose(ridge(lam, method), w, rtol=1e-12)
    np.testing.assert_allclose(jacobians.jacfwd(lambda l: ridge(l, method))(lam), dw, rtol=1e-8)
    np.testing.assert_allclose(jacobians.jacrev(lambda l: ridge(l, method))(lam), dw, rtol=1e-8)
    np.testing.assert_allclose(dualad.derivative(lambda l: ridge(l, method), 2)(lam), d2w,
                               rtol=1e-7)
    loss = lambda l: np.sum(ridge(l, method) ** 2)     # noqa: E731
    np.testing.assert_allclose(dualad.grad(dualad.grad(loss))(lam),
                               2 * (dw @ dw + w @ d2w), rtol=1e-7)


def test_ridge_as_a_linear_solve_with_a_matvec_closing_over_the_penalty():
    lam = 0.7
    H = G + lam * np.eye(4)
    w = np.linalg.solve(H, X.T @ Y)

    def fit(lam, method):
        return custom_linear_solve(lambda v: G @ v + lam * v, X.T @ Y, method=method,
                                   symmetric=True)
    for method in ("direct", "cg", "gmres", "minres"):
        np.testing.assert_allclose(jacobians.jacrev(lambda l: fit(l, method))(lam),
                                   -np.linalg.solve(H, w), rtol=1e-8)
        np.testing.assert_allclose(dualad.derivative(lambda l: fit(l, method), 2)(lam),
                                   2 * np.linalg.solve(H, np.linalg.solve(H, w)), rtol=1e-7)


# --- a linear system in A and b ------------------------------------------------------------
A3 = np.array([[4.0, 1.0, -0.5], [0.3, 3.0, 0.8], [-0.2, 0.5, 5.0]])
B3 = np.array([1.0, -2.0, 0.5])


def test_linear_system_derivatives_closed_form():
    x = np.linalg.solve(A3, B3)
    dA, db = RNG.normal(size=(3, 3)), RNG.normal(size=3)
    _, xdot = dualad.jvp(custom_linear_solve, (A3, B3), (dA, db))
    np.testing.assert_allclose(xdot, np.linalg.solve(A3, db - dA @ x), rtol=1e-12)
    xbar = RNG.normal(size=3)
    _, pullback = dualad.vjp(custom_linear_solve, A3, B3)
    gA, gb = pullback(xbar)
    bbar = np.linalg.solve(A3.T, xbar)
    np.testing.assert_allclose(gb, bbar, rtol=1e-12)
    np.testing.assert_allclose(gA, -np.outer(bbar, x), rtol=1e-12)


@pytest.mark.parametrize("method", ["direct", "gmres", "bicgstab"])
def test_linear_system_check_grads_order_2(method):
    assert check_grads(lambda A, b: custom_linear_solve(A, b, method=method), (A3, B3),
                       order=2) > 0


def test_matrix_right_hand_side_and_batched_tangents_one_factorization():
    B = RNG.normal(size=(3, 2))
    np.testing.assert_allclose(custom_linear_solve(A3, B), np.linalg.solve(A3, B), rtol=1e-12)
    assert check_grads(lambda A, B: custom_linear_solve(A, B), (A3, B), order=1) > 0
    # jacfwd sweeps 9 directions of A at once: the value, tangents and one LU
    J = jacobians.jacfwd(lambda A: custom_linear_solve(A, B3))(A3)
    x = np.linalg.solve(A3, B3)
    expected = -np.einsum("ij,k->ijk", np.linalg.inv(A3), x)     # ∂x_i/∂A_jk = −A⁻¹_ij x_k
    np.testing.assert_allclose(J, expected, rtol=1e-10)


def test_one_factorization_serves_the_value_tangents_and_adjoints():
    """A batch of cotangents (tangents) is one solve with many right-hand sides, and the
    primal's LU factorization serves them (Aᵀ by trans=1)."""
    from dualad.transforms.implicit import LinearSystem, linear_solve_p

    def system():
        return LinearSystem(lambda v, a: a @ v, 3, rmatvec=lambda u, a: u @ a,
                            matrix=lambda a: a, method="direct")
    s = system()
    _, pullback = dualad.vjp(lambda b: linear_solve_p(b, A3, system=s, role="primal"), B3)
    gb, = pullback(np.eye(3))
    np.testing.assert_allclose(gb, np.linalg.inv(A3), rtol=1e-12)     # rows: A⁻ᵀ e_i
    assert s.stats == {"solves": 2, "rhs": 1 + 3, "matvecs": 0, "factorizations": 1}
    s = system()
    _, xdot = dualad.jvp(lambda A: linear_solve_p(B3, A, system=s, role="primal"), (A3,),
                         (np.eye(9).reshape(9, 3, 3),))
    assert xdot.shape == (9, 3)
    assert s.stats == {"solves": 2, "rhs": 1 + 9, "matvecs": 0, "factorizations": 1}


def test_matvec_closure_hessian_against_finite_differences():
    M = np.array([[3.0, 1.0, 0.0], [1.0, 2.5, 0.4], [0.0, 0.4, 2.0]])

    def loss(theta, method):
        x = custom_linear_solve(lambda v: M @ v + theta[0] * v + theta[1] * np.roll(v, 1),
                                B3, method=method)
        return np.sum(np.sin(x)) + x[0] * x[2]
    theta = np.array([0.4, 0.2])
    for method in ("direct", "gmres"):
        H = jacobians.hessian(lambda t: loss(t, method))(theta)
        fd = fd_jacobian(dualad.grad(lambda t: loss(t, method)), theta)
        np.testing.assert_allclose(H, fd, rtol=1e-6, atol=1e-9)


def test_pytree_right_hand_side():
    def matvec(v):
        return {"a": 2.0 * v["a"] + v["b"][0], "b": v["b"] * 3.0}
    b = {"a": np.array(1.0), "b": np.array([2.0, 1.0])}
    x = custom_linear_solve(matvec, b)
    assert x["a"].shape == () and x["b"].shape == (2,)
    np.testing.assert_allclose(x["b"], [2 / 3, 1 / 3])
    np.testing.assert_allclose(x["a"], (1.0 - 2 / 3) / 2)
    g = dualad.grad(lambda s: np.sum(custom_linear_solve(
        lambda v: {"a": s * v["a"], "b": v["b"]}, b)["a"]))(2.0)
    assert g == pytest.approx(-1.0 / 4.0)


# --- sparse matrices, LinearOperators -----------------------------------------------------
def _tridiagonal(n, d=4.0):
    return sp.diags([-np.ones(n - 1), d * np.ones(n), -np.ones(n - 1)], [-1, 0, 1]).tocsr()


@pytest.mark.parametrize("method", ["auto", "direct", "cg", "gmres"])
def test_constant_sparse_matrix(method):
    A = _tridiagonal(6)
    b = RNG.normal(size=6)
    x = custom_linear_solve(A, b, method=method)
    np.testing.assert_allclose(x, spla.spsolve(A.tocsc(), b), rtol=1e-9)
    J = jacobians.jacrev(lambda b: custom_linear_solve(A, b, method=method))(b)
    np.testing.assert_allclose(J, np.linalg.inv(A.toarray()), rtol=1e-8, atol=1e-12)


def test_traced_sparse_matrix_second_order():
    from dualad.scipy import sparse as dsp
    A = _tridiagonal(5)
    coo = A.tocoo()
    b = np.linspace(1.0, 2.0, 5)

    def f(data):
        M = dsp.coo_array((data, (coo.row, coo.col)), shape=A.shape)
        return np.sum(custom_linear_solve(M, b) ** 2)
    assert check_grads(f, (coo.data,), order=2) > 0


def test_linear_operator():
    A = _tridiagonal(6).toarray() + 0.3 * np.eye(6, k=2)
    op = spla.LinearOperator(A.shape, matvec=lambda v: A @ v, rmatvec=lambda u: A.T @ u)
    b = RNG.normal(size=6)
    for method in ("auto", "gmres", "direct"):
        J = jacobians.jacrev(lambda b: custom_linear_solve(op, b, method=method))(b)
        np.testing.assert_allclose(J, np.linalg.inv(A), rtol=1e-8, atol=1e-12)


# --- against an unrolled solver --------------------------------------------------------------
def newton_unrolled(theta, steps=30):
    """A nonlinear system F(x, θ) = x + 0.5 tanh(Bx) − θ solved by a fixed number of Newton
    steps, written with NumPy operations: dualad differentiates the iterations."""
    x = theta * 1.0
    for _ in range(steps):
        J = np.eye(3) + 0.5 * (1 - np.tanh(BN @ x) ** 2)[:, None] * BN
        x = x - np.linalg.solve(J, x + 0.5 * np.tanh(BN @ x) - theta)
    return x


BN = np.array([[1.0, 0.5, 0.0], [0.2, 1.0, 0.3], [0.0, -0.4, 1.0]])
newton_root = custom_root(lambda th: newton_unrolled(th),
                          lambda x, th: x + 0.5 * np.tanh(BN @ x) - th)


def test_custom_root_matches_the_unrolled_solver_in_both_modes_and_second_order():
    theta = np.array([0.3, -0.8, 1.1])
    np.testing.assert_allclose(jacobians.jacfwd(newton_root)(theta),
                               jacobians.jacfwd(newton_unrolled)(theta), rtol=1e-10)
    np.testing.assert_allclose(jacobians.jacrev(newton_root)(theta),
                               jacobians.jacrev(newton_unrolled)(theta), rtol=1e-10)
    loss = lambda f: (lambda t: np.sum(f(t) ** 3))      # noqa: E731
    np.testing.assert_allclose(jacobians.hessian(loss(newton_root))(theta),
                               jacobians.hessian(loss(newton_unrolled))(theta), rtol=1e-8)


def test_custom_root_pytree_solution_and_parameters():
    """x = (u, v) solving u = a·cos(v), v = b + 0.1 u, params {'a': .., 'b': ..}."""
    def solve(p):
        u, v = 0.0, 0.0
        for _ in range(200):
            u, v = p["a"] * np.cos(v), p["b"] + 0.1 * u
        return (np.array(u), np.array(v))

    def optimality(x, p):
        u, v = x
        return (u - p["a"] * np.cos(v), v - p["b"] - 0.1 * u)
    root = custom_root(solve, optimality)

    def f(ab):
        u, v = root({"a": ab[0], "b": ab[1]})
        return np.stack([u, v])
    assert check_grads(f, (np.array([0.7, 0.2]),), order=2) > 0


def test_matrix_free_root_of_a_large_system_matches_dense():
    n = 600      # over DENSE_MAX: gmres with JVPs of F
    c = np.linspace(0.5, 1.5, n)

    def F(x, c):
        lap = 2 * x - np.concatenate([x[1:], np.zeros(1)]) - np.concatenate([np.zeros(1), x[:-1]])
        return lap + 0.1 * x ** 3 + x - c

    def solve(c):
        return so.root(lambda x: F(x, c), np.zeros(n), method="krylov",
                       tol=1e-13).x
    auto = custom_root(solve, F)
    direct = custom_root(solve, F, linear_solve="direct")
    w = np.cos(np.arange(n))
    g1 = dualad.grad(lambda c: auto(c) @ w)(c)
    g2 = dualad.grad(lambda c: direct(c) @ w)(c)
    np.testing.assert_allclose(g1, g2, rtol=1e-7, atol=1e-11)


# --- JAX's spellings ----------------------------------------------------------------------
def test_lax_custom_root_sqrt_both_orders():
    def sqrt(c):
        def solve(f, x):
            for _ in range(60):
                x = x - f(x) / (2 * x)
            return x
        return lax.custom_root(lambda x: x ** 2 - c, 1.0, solve, lambda g, y: y / g(1.0))
    assert sqrt(2.0) == pytest.approx(np.sqrt(2.0), rel=1e-15)
    assert dualad.grad(sqrt)(2.0) == pytest.approx(0.5 / np.sqrt(2.0), rel=1e-12)
    assert dualad.derivative(sqrt, 2)(2.0) == pytest.approx(-0.25 * 2.0 ** -1.5, rel=1e-10)
    assert dualad.grad(dualad.grad(sqrt))(2.0) == pytest.approx(-0.25 * 2.0 ** -1.5, rel=1e-10)


def test_lax_custom_linear_solve_with_solve_and_transpose_solve():
    def f(A, b):
        return lax.custom_linear_solve(lambda v: A @ v, b,
                                       lambda mv, r: np.linalg.solve(dualad_plain(A), r),
                                       lambda vm, r: np.linalg.solve(dualad_plain(A).T, r))
    assert check_grads(f, (A3, B3), order=2) > 0


def test_has_aux():
    root = custom_root(lambda a: (poly_root(a), {"iterations": 7}), poly, has_aux=True)
    x, aux = root(A_POLY)
    assert aux == {"iterations": 7}
    g = dualad.grad(lambda a: root(a)[0])(A_POLY)
    np.testing.assert_allclose(g, poly_closed_forms(A_POLY)[1], rtol=1e-12)


# --- what users get wrong -----------------------------------------------------------------
def test_a_non_root_is_refused_with_the_residual():
    bad = custom_root(lambda a: poly_root(a) + 1e-3, poly)
    with pytest.raises(RuntimeError, match="did not converge.*Newton step"):
        dualad.grad(bad)(A_POLY)
    # explicitly accepted
    ok = custom_root(lambda a: poly_root(a) + 1e-3, poly, tol=1e-2)
    assert np.all(np.isfinite(dualad.grad(ok)(A_POLY)))


def test_a_singular_jacobian_is_refused():
    root = custom_root(lambda a: np.zeros(2), lambda x, a: np.array([1.0, 1.0]) * x[0] ** 2 * a)
    with pytest.raises(np.linalg.LinAlgError, match="singular.*Regularise"):
        dualad.grad(lambda a: np.sum(root(a)))(1.0)


@pytest.mark.parametrize("ret, match", [
    (lambda a: None, "returned None"),
    (lambda a: np.array([1.0, 2.0]), r"returned 1 value\(s\) for 2 unknown"),
    (lambda a: "x", "dtype"),
    (lambda a: np.array([np.nan]), "non-finite"),
])
def test_bad_solve_results(ret, match):
    root = custom_root(ret, lambda x, a: np.sum(poly(x, a)))
    with pytest.raises((TypeError, ValueError, FloatingPointError), match=match):
        dualad.grad(root)(A_POLY)


_LEAK = {}


def test_keyword_parameters_are_refused_by_name():
    with pytest.raises(TypeError, match="custom_root: root.*positionally.*'?a'?"):
        poly_root_ad(a=A_POLY)
    with pytest.raises(ValueError, match="unknown linear_solve"):
        custom_root(poly_root, poly, linear_solve="lu")
    with pytest.raises(TypeError, match="optimality must be a callable"):
        custom_root(poly_root, None)


def test_solve_returning_a_traced_value():
    """A traced value solve reaches through a global (closure conversion cannot see it)."""
    def f(a):
        _LEAK["a"] = a
        return custom_root(lambda a: _LEAK["a"][0] * 0 + poly_root(dualad_plain(a)), poly)(a)
    try:
        with pytest.raises(TypeError, match="solve returned a traced value"):
            dualad.grad(f)(A_POLY)
    finally:
        _LEAK.clear()


def test_linear_solve_errors():
    with pytest.raises(ValueError, match=r"b has shape \(4,\).*\(3,\)"):
        custom_linear_solve(A3, np.ones(4))
    with pytest.raises(ValueError, match="unknown method"):
        custom_linear_solve(A3, B3, method="lu")
    with pytest.raises(TypeError, match="b is None"):
        custom_linear_solve(A3, None)
    with pytest.raises(ValueError, match="square"):
        custom_linear_solve(np.ones((3, 2)), B3)
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    with pytest.raises(np.linalg.LinAlgError, match="singular"):
        dualad.grad(lambda b: np.sum(custom_linear_solve(singular, b)))(np.ones(2))
    with pytest.raises(RuntimeError, match="cg did not converge"):
        dualad.grad(lambda b: np.sum(custom_linear_solve(A3 - 6 * np.eye(3), b, method="cg",
                                                         maxiter=2)))(B3)
    with pytest.raises(RuntimeError, match="does not solve"):
        dualad.grad(lambda b: np.sum(custom_linear_solve(lambda v: A3 @ v, b,
                                                         lambda mv, r: r)))(B3)
    with pytest.raises(ValueError, match="matvec"):
        dualad.grad(lambda b: np.sum(custom_linear_solve(lambda v: np.ones(2), b)))(B3)
    with pytest.raises(ValueError, match=r"matvec\(0\) is not 0.*linear"):
        custom_linear_solve(lambda v: A3 @ v + 1.0, B3)
    assert custom_linear_solve(np.zeros((0, 0)), np.zeros(0)).shape == (0,)


def test_float32_stays_float32():
    A = A3.astype(np.float32)
    b = B3.astype(np.float32)
    x = custom_linear_solve(A, b)
    g = dualad.grad(lambda b: np.sum(custom_linear_solve(A, b)))(b)
    np.testing.assert_allclose(x, np.linalg.solve(A3, B3), rtol=1e-5)
    np.testing.assert_allclose(g, np.linalg.solve(A3.T, np.ones(3)), rtol=1e-5)
    assert x.dtype == g.dtype == np.float32
    root32 = custom_root(lambda a: np.float32(poly_root(a.astype(float))), poly)
    g32 = dualad.grad(root32)(A_POLY.astype(np.float32))
    assert g32.dtype == np.float32
    np.testing.assert_allclose(g32, poly_closed_forms(A_POLY)[1], rtol=1e-4)


@pytest.mark.parametrize("kind", ["sparse", "dense"])
def test_user_jacobian_dense_or_sparse(kind):
    """jacobian= gives ∂_x F (plain values): SuperLU for a sparse one, LU for a dense one;
    the derivatives equal those through the Jacobian dualad builds itself, to order 2."""
    n = 7
    c = np.linspace(0.5, 1.5, n)
    L = _tridiagonal(n, 3.0)

    def F(x, c):
        return L @ x + 0.1 * x ** 3 - c

    def jac(x, c):
        J = L + sp.diags(0.3 * x ** 2)
        return J if kind == "sparse" else J.toarray()

    def solve(c):
        return so.fsolve(lambda x: F(x, c), np.zeros(n), fprime=lambda x: jac(x, c).toarray()
                         if kind == "sparse" else jac(x, c), xtol=1e-13)
    with_jac = custom_root(solve, F, jacobian=jac)
    built = custom_root(solve, F)
    loss = lambda r: (lambda c: np.sum(np.sin(r(c))))     # noqa: E731
    np.testing.assert_allclose(dualad.grad(loss(with_jac))(c), dualad.grad(loss(built))(c),
                               rtol=1e-10)
    np.testing.assert_allclose(jacobians.hessian(loss(with_jac))(c),
                               jacobians.hessian(loss(built))(c), rtol=1e-8, atol=1e-12)


def test_lax_custom_linear_solve_positional_symmetric_and_has_aux():
    M = np.array([[3.0, 1.0, 0.0], [1.0, 2.5, 0.4], [0.0, 0.4, 2.0]])

    def f(s):
        def solve(mv, r):
            return np.linalg.solve(M + dualad_plain(s) * np.eye(3), r), "lu"
        return lax.custom_linear_solve(lambda v: M @ v + s * v, B3, solve, None, True, True)
    x, aux = f(0.5)
    assert aux == "lu"
    H = M + 0.5 * np.eye(3)
    np.testing.assert_allclose(dualad.derivative(lambda s: f(s)[0], 1)(0.5),
                               -np.linalg.solve(H, np.linalg.solve(H, B3)), rtol=1e-10)


def test_argmin_through_the_stationarity_condition_to_second_order():
    """x*(θ) = argmin f(x, θ): the optimality condition is ∇_x f (a nested grad), J the
    Hessian (symmetric: cg), second order needs third derivatives of f."""
    def f(x, th):
        return np.sum((x - th) ** 2) + 0.25 * np.sum(x ** 4) + th[0] * x[1] * x[2]

    def solve(th):
        return so.minimize(lambda x: f(x, th), np.zeros(3), method="BFGS", tol=1e-14,
                           jac=lambda x: dualad.grad(f)(x, th)).x
    for method in ("direct", "cg"):
        argmin = custom_root(solve, dualad.grad(f), linear_solve=method, symmetric=True,
                             tol=1e-5)
        assert check_grads(argmin, (np.array([0.5, -0.3, 0.8]),), order=2) > 0


@settings(derandomize=True, max_examples=15, deadline=None)
@given(st.integers(2, 5), st.floats(-1.0, 1.0), st.floats(0.5, 2.0))
def test_property_linear_solve_matches_the_closed_form(n, shift, scale):
    """Diagonally dominant A (well conditioned) and b drawn from the parameters: the VJP
    in (A, b) equals (−b̄ xᵀ, A⁻ᵀ x̄) for every method."""
    rng = np.random.default_rng(n)
    A = rng.normal(size=(n, n)) + (n + 2.0) * scale * np.eye(n)
    b = rng.normal(size=n) + shift
    x = np.linalg.solve(A, b)
    xbar = np.cos(np.arange(n) + shift)
    bbar = np.linalg.solve(A.T, xbar)
    for method in ("direct", "gmres", "bicgstab"):
        _, pullback = dualad.vjp(lambda A, b: custom_linear_solve(A, b, method=method), A, b)
        gA, gb = pullback(xbar)
        np.testing.assert_allclose(gb, bbar, rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(gA, -np.outer(bbar, x), rtol=1e-8, atol=1e-10)


def test_nash_equilibrium_of_a_quadratic_game_closed_form():
    """Two players, f_i(x) = ½ m_ii x_i² + m_ij x_i x_j − θ_i x_i; the equilibrium (both
    first-order conditions: M x = θ) found by best-response iteration (a fixed point).
    Closed forms: ∂x/∂θ = M⁻¹, ∂x/∂m_00 = −M⁻¹ (x_0, 0)."""
    def best_responses(x, p):
        m, th = p[:4].reshape(2, 2), p[4:]
        return np.stack([(th[0] - m[0, 1] * x[1]) / m[0, 0], (th[1] - m[1, 0] * x[0]) / m[1, 1]])

    def solve(p):
        x = np.zeros(2)
        for _ in range(200):
            x = best_responses(x, p)
        return x
    equilibrium = custom_root(solve, lambda x, p: x - best_responses(x, p))
    p = np.array([2.0, 0.5, -0.3, 1.5, 1.0, -0.4])
    M = p[:4].reshape(2, 2)
    x = np.linalg.solve(M, p[4:])
    np.testing.assert_allclose(equilibrium(p), x, rtol=1e-12)
    J = jacobians.jacrev(equilibrium)(p)
    np.testing.assert_allclose(J[:, 4:], np.linalg.inv(M), rtol=1e-10)
    np.testing.assert_allclose(J[:, 0], -np.linalg.solve(M, [x[0], 0.0]), rtol=1e-10)
    assert check_grads(equilibrium, (p,), order=2) > 0


@pytest.mark.parametrize("method", ["direct", "cg", "gmres"])
def test_vmap_over_right_hand_sides_and_operators(method):
    """vmap of a solve: a batch of b is one call (multiple right-hand sides), a batch of
    operators one solve per example; both against NumPy's solve, and vmap(grad) against
    the closed form ∇_b ‖A⁻¹b‖² = 2 A⁻ᵀ A⁻¹ b."""
    a = np.array([[4.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 2.0]])
    bs = np.random.default_rng(3).normal(size=(5, 3))
    got = dualad.vmap(lambda b: dualad.custom_linear_solve(a, b, method=method))(bs)
    np.testing.assert_allclose(got, np.linalg.solve(a, bs.T).T, rtol=1e-8, atol=1e-10)
    g = dualad.vmap(dualad.grad(
        lambda b: np.sum(dualad.custom_linear_solve(a, b, method=method) ** 2)))(bs)
    ref = np.stack([2 * np.linalg.solve(a.T, np.linalg.solve(a, b)) for b in bs])
    np.testing.assert_allclose(g, ref, rtol=1e-7, atol=1e-9)
    shifts = np.linspace(1.0, 2.0, 4)
    per_op = dualad.vmap(lambda t: dualad.custom_linear_solve(a + t * np.eye(3), bs[0],
                                                              method=method))(shifts)
    np.testing.assert_allclose(per_op, np.stack([np.linalg.solve(a + t * np.eye(3), bs[0])
                                                 for t in shifts]), rtol=1e-8, atol=1e-10)


def test_custom_root_under_vmap_solves_each_example():
    """custom_root under vmap: the user's solver runs once per example (the primitive's
    loop), and vmap(grad) gives each root's derivative, −x / (3x² + c) for x³ + cx − 1."""
    def solve(c):
        return so.brentq(lambda x: x ** 3 + c * x - 1.0, 0.0, 2.0, xtol=1e-14)
    root = custom_root(solve, lambda x, c: x ** 3 + c * x - 1.0)
    cs = np.array([0.5, 1.0, 2.0])
    xs = dualad.vmap(root)(cs)
    np.testing.assert_allclose(xs, [solve(c) for c in cs], rtol=1e-12)
    np.testing.assert_allclose(dualad.vmap(dualad.grad(root))(cs), -xs / (3 * xs ** 2 + cs),
                               rtol=1e-9)
