"""dualad.scipy.optimize: SciPy's solvers with solutions differentiated by the implicit
function theorem (through dualad.custom_root), checked against closed forms: the root
of a polynomial in its coefficients, ridge regression in its penalty, a contraction's
fixed point against unrolled iterations, least squares of a linear model in its data,
a bounded minimum, an equality-constrained quadratic program (the KKT matrix); both
modes and second order (closed-form second derivatives, or finite differences of the
closed-form first derivatives)."""
import warnings

import numpy as np
import pytest
import scipy.optimize as so
from hypothesis import given, settings, strategies as st

import dualad
import dualad.scipy.optimize as do
from dualad import jacobians

# --- the root of p(x) = c0 + c1 x + c2 x² in its coefficients ------------------------------
C = np.array([-2.0, 0.5, 1.0])          # roots -1.69 and 1.19; [0, 3] brackets the latter


def poly(x, c):
    return c[0] + c[1] * x + c[2] * x ** 2


def root_closed_form(c):
    """x, dx/dc = −(1, x, x²)/p'(x) and d²x/dc² = −(p'' ẋẋᵀ + p'_c ẋᵀ + ẋ p'_cᵀ)/p'(x),
    from differentiating p(x(c), c) = 0 twice."""
    x = max(np.roots(c[::-1]).real)
    px, pxx = c[1] + 2 * c[2] * x, 2 * c[2]
    d1 = -np.array([1.0, x, x * x]) / px
    pxc = np.array([0.0, 1.0, 2 * x])          # ∂p'/∂c
    d2 = -(pxx * np.outer(d1, d1) + np.outer(pxc, d1) + np.outer(d1, pxc)) / px
    return x, d1, d2


ROOTS = {
    "brentq": lambda c: do.brentq(poly, 0.0, 3.0, args=(c,)),
    "brenth": lambda c: do.brenth(poly, 0.0, 3.0, args=(c,)),
    "bisect": lambda c: do.bisect(poly, 0.0, 3.0, args=(c,)),
    "ridder": lambda c: do.ridder(poly, 0.0, 3.0, args=(c,)),
    "toms748": lambda c: do.toms748(poly, 0.0, 3.0, args=(c,), k=2),
    "brentq-full_output": lambda c: do.brentq(poly, 0.0, 3.0, args=(c,), full_output=True)[1].root,
    "root_scalar": lambda c: do.root_scalar(poly, args=(c,), bracket=[0.0, 3.0]).root,
    # a closure over the traced coefficients, and fprime for SciPy's Newton
    "root_scalar-newton": lambda c: do.root_scalar(
        lambda x: poly(x, c), x0=1.0, fprime=lambda x: c[1] + 2 * c[2] * x, xtol=1e-14).root,
    "root_scalar-fprime=True": lambda c: do.root_scalar(
        lambda x: (poly(x, c), c[1] + 2 * c[2] * x), x0=1.0, fprime=True,
        method="newton", xtol=1e-14).root,
    "newton": lambda c: do.newton(poly, 1.0, args=(c,), tol=1e-14),
    "newton-halley": lambda c: do.newton(poly, 1.0, args=(c,), fprime=lambda x, c: c[1] + 2 * c[2] * x,
                                         fprime2=lambda x, c: 2 * c[2], tol=1e-14),
    "root-hybr": lambda c: do.root(poly, np.array([1.0]), args=(c,)).x[0],
    "root-lm": lambda c: do.root(poly, np.array([1.0]), args=(c,), method="lm").x[0],
    "root-jac=True": lambda c: do.root(lambda x, c: (poly(x, c), np.reshape(c[1] + 2 * c[2] * x, (1, 1))),
                                       np.array([1.0]), args=(c,), jac=True).x[0],
    "fsolve": lambda c: do.fsolve(poly, 1.0, args=(c,))[0],
}


@pytest.mark.parametrize("name", list(ROOTS))
def test_root_of_a_polynomial_in_its_coefficients(name):
    f = ROOTS[name]
    x, d1, _ = root_closed_form(C)
    assert abs(f(C) - x) < 1e-10
    np.testing.assert_allclose(dualad.grad(f)(C), d1, rtol=1e-8, atol=1e-12)      # reverse
    v = np.array([0.3, -1.0, 0.5])
    np.testing.assert_allclose(dualad.jvp(f, (C,), (v,))[1], d1 @ v, rtol=1e-8)   # forward


@settings(derandomize=True, max_examples=25, deadline=None)
@given(st.lists(st.floats(-2.0, 2.0), min_size=4, max_size=4),
       st.sampled_from(["brentq", "newton", "root-hybr"]))
def test_root_derivatives_for_random_cubics(c, name):
    """p(x) = c0 + c1 x + c2 x² + c3 x³ shifted so that p(1) = 0 with |p'(1)| ≥ 0.5 (a
    simple root): dx/dc_i = −xⁱ/p'(x) at x = 1, i.e. −1/p'(1) for every coefficient."""
    c = np.array(c)
    slope = c[1] + 2 * c[2] + 3 * c[3]
    if abs(slope) < 0.5:
        c[1] += 1.0 if slope >= 0 else -1.0
        slope = c[1] + 2 * c[2] + 3 * c[3]
    c[0] = -(c[1] + c[2] + c[3])                  # the root x = 1
    cubic = lambda x, c: c[0] + c[1] * x + c[2] * x ** 2 + c[3] * x ** 3
    solve = {"brentq": lambda c: do.brentq(cubic, 0.99, 1.01, args=(c,)),
             "newton": lambda c: do.newton(cubic, 1.001, args=(c,), tol=1e-14),
             "root-hybr": lambda c: do.root(cubic, np.array([1.001]), args=(c,)).x[0]}[name]
    np.testing.assert_allclose(dualad.grad(solve)(c), -np.ones(4) / slope, rtol=1e-7)


@pytest.mark.parametrize("name", ["brentq", "root_scalar-newton", "newton", "root-hybr", "fsolve"])
def test_root_second_derivatives_in_both_modes(name):
    f = ROOTS[name]
    _, _, d2 = root_closed_form(C)
    np.testing.assert_allclose(jacobians.hessian(f)(C), d2, rtol=1e-7, atol=1e-10)
    for i in range(3):                                            # grad of grad, jvp of grad
        np.testing.assert_allclose(dualad.grad(lambda c: dualad.grad(f)(c)[i])(C), d2[i],
                                   rtol=1e-7, atol=1e-10)
    e = np.eye(3)[1]
    np.testing.assert_allclose(dualad.jvp(dualad.grad(f), (C,), (e,))[1], d2[1], rtol=1e-7,
                               atol=1e-10)


def test_vectorized_newton_solves_each_root_by_a_division():
    cs = np.stack([C, [-3.0, 1.0, 1.0], [-1.0, -0.2, 2.0]], axis=1)     # three polynomials
    f = lambda cs: do.newton(lambda x, cs: poly(x, cs), np.ones(3), args=(cs,), tol=1e-14)
    J = jacobians.jacrev(f)(cs)                                           # (3, 3, 3)
    for j in range(3):
        _, d1, _ = root_closed_form(cs[:, j])
        np.testing.assert_allclose(J[j, :, j], d1, rtol=1e-8)
        assert np.all(J[j, :, [k for k in range(3) if k != j]] == 0)
    np.testing.assert_allclose(jacobians.jacfwd(f)(cs), J, rtol=1e-10, atol=1e-14)


# --- ridge regression: dw/dλ = −(XᵀX + λI)⁻¹ w, d²w/dλ² = 2 (XᵀX + λI)⁻² w -------------------
RNG = np.random.default_rng(0)
X = RNG.normal(size=(20, 4))
Y = RNG.normal(size=20)
LAM = 0.7


def ridge_loss(w, lam, X=X, y=Y):
    return 0.5 * np.sum((X @ w - y) ** 2) + 0.5 * lam * np.sum(w * w)


RIDGE = {
    "BFGS": dict(method="BFGS"),
    "L-BFGS-B": dict(method="L-BFGS-B", options=dict(gtol=1e-10)),
    "CG": dict(method="CG"),
    "Newton-CG+jac=True": dict(method="Newton-CG", jac=True),
    "trust-krylov+hessp": dict(method="trust-krylov", jac=True),
    "SLSQP": dict(method="SLSQP", options=dict(ftol=1e-14)),
    "trust-constr": dict(method="trust-constr", options=dict(gtol=1e-12, xtol=1e-14)),
}


def _ridge_fun(kw):
    if kw.get("jac") is True:
        def fun(w, lam):
            return ridge_loss(w, lam), X.T @ (X @ w - Y) + lam * w
        if kw["method"] == "trust-krylov":
            kw = dict(kw, hessp=lambda w, p, lam: X.T @ (X @ p) + lam * p)
        return fun, kw
    return ridge_loss, kw


def ridge(lam, kw):
    fun, kw = _ridge_fun(dict(kw))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # precision-loss notes
        return do.minimize(fun, np.zeros(4), args=(lam,), **kw).x


def ridge_closed_form(lam):
    A = X.T @ X + lam * np.eye(4)
    w = np.linalg.solve(A, X.T @ Y)
    dw = -np.linalg.solve(A, w)
    return w, dw, -2 * np.linalg.solve(A, dw)


@pytest.mark.parametrize("name", list(RIDGE))
def test_ridge_solution_in_its_penalty(name):
    w, dw, _ = ridge_closed_form(LAM)
    f = lambda lam: ridge(lam, RIDGE[name])
    np.testing.assert_allclose(f(LAM), w, atol=1e-5)
    tol = dict(rtol=1e-4, atol=1e-7)          # the solvers' own accuracy at x*
    np.testing.assert_allclose(dualad.jvp(f, (LAM,), (1.0,))[1], dw, **tol)
    np.testing.assert_allclose(jacobians.jacrev(f)(LAM), dw, **tol)


def test_ridge_second_derivative_in_both_modes():
    _, _, d2 = ridge_closed_form(LAM)
    f = lambda lam: ridge(lam, RIDGE["L-BFGS-B"])
    fwd_fwd = dualad.jvp(lambda l: dualad.jvp(f, (l,), (1.0,))[1], (LAM,), (1.0,))[1]
    np.testing.assert_allclose(fwd_fwd, d2, rtol=1e-6)
    for i in range(4):
        rev_rev = dualad.grad(lambda l: dualad.grad(lambda m: f(m)[i])(l))(LAM)
        np.testing.assert_allclose(rev_rev, d2[i], rtol=1e-6)


def test_ridge_in_closed_over_data_and_res_fun():
    """y closed over (not in args): dw/dy = (XᵀX + λI)⁻¹ Xᵀ; res.fun is differentiable
    (its gradient in y is the envelope theorem's ∂f/∂y = −(y − Xw))."""
    A = X.T @ X + LAM * np.eye(4)

    def fit(y):
        return do.minimize(lambda w: ridge_loss(w, LAM, y=y), np.zeros(4), method="L-BFGS-B",
                           options=dict(gtol=1e-10))
    np.testing.assert_allclose(jacobians.jacfwd(lambda y: fit(y).x)(Y), np.linalg.solve(A, X.T),
                               rtol=1e-6, atol=1e-9)
    w = np.linalg.solve(A, X.T @ Y)
    np.testing.assert_allclose(dualad.grad(lambda y: fit(y).fun)(Y), Y - X @ w, rtol=1e-6,
                               atol=1e-9)


# --- a fixed point: x = tanh(Ax + b), against unrolled iterations ---------------------------
A_FP = 0.3 * np.random.default_rng(1).normal(size=(3, 3))
B_FP = np.random.default_rng(2).normal(size=3)


def unrolled(b, A=A_FP):
    x = np.zeros(3)
    for _ in range(100):                    # a contraction: 100 steps reach machine precision
        x = np.tanh(A @ x + b)
    return x


@pytest.mark.parametrize("method", ["del2", "iteration"])
def test_fixed_point_against_unrolled_iterations(method):
    fp = lambda b: do.fixed_point(lambda x, b: np.tanh(A_FP @ x + b), np.zeros(3), args=(b,),
                                  method=method, xtol=1e-14)
    np.testing.assert_allclose(fp(B_FP), unrolled(B_FP), atol=1e-12)
    np.testing.assert_allclose(jacobians.jacfwd(fp)(B_FP), jacobians.jacfwd(unrolled)(B_FP),
                               rtol=1e-9, atol=1e-12)
    loss = lambda b: np.sum(fp(b) ** 2)
    np.testing.assert_allclose(dualad.grad(loss)(B_FP),
                               dualad.grad(lambda b: np.sum(unrolled(b) ** 2))(B_FP), rtol=1e-9)
    np.testing.assert_allclose(jacobians.hessian(loss)(B_FP),
                               jacobians.hessian(lambda b: np.sum(unrolled(b) ** 2))(B_FP),
                               rtol=1e-8, atol=1e-12)


def test_fixed_point_in_a_closed_over_matrix():
    fp = lambda A: do.fixed_point(lambda x: np.tanh(A @ x + B_FP), np.zeros(3), xtol=1e-14)
    np.testing.assert_allclose(jacobians.jacrev(fp)(A_FP),
                               jacobians.jacrev(lambda A: unrolled(B_FP, A))(A_FP),
                               rtol=1e-9, atol=1e-12)


# --- least squares ----------------------------------------------------------------------
def test_least_squares_linear_model_in_its_data():
    """w = (XᵀX)⁻¹Xᵀy: dw/dy = (XᵀX)⁻¹Xᵀ and, in the design matrix along V,
    dw = (XᵀX)⁻¹ (Vᵀ r − Xᵀ V w) with r = y − Xw ≠ 0 (an overdetermined fit)."""
    fit = lambda X_, y: do.least_squares(lambda w, X_, y: X_ @ w - y, np.zeros(4),
                                         args=(X_, y)).x
    G = X.T @ X
    w = np.linalg.solve(G, X.T @ Y)
    r = Y - X @ w
    np.testing.assert_allclose(jacobians.jacrev(lambda y: fit(X, y))(Y), np.linalg.solve(G, X.T),
                               rtol=1e-8, atol=1e-12)
    V = np.random.default_rng(3).normal(size=X.shape)
    dw = np.linalg.solve(G, V.T @ r - X.T @ V @ w)
    np.testing.assert_allclose(dualad.jvp(lambda X_: fit(X_, Y), (X,), (V,))[1], dw, rtol=1e-7)
    np.testing.assert_allclose(dualad.vjp(lambda X_: fit(X_, Y), X)[1](np.eye(4)[2])[0].ravel()
                               @ V.ravel(), dw[2], rtol=1e-7)


T_EXP = np.linspace(0.0, 2.0, 12)
Y_EXP = 2.0 * np.exp(-1.3 * T_EXP) + 0.05 * np.random.default_rng(4).normal(size=12)


def _fd(solve, y, h=1e-3):
    """Five-point central differences of the re-solved plain problem: truncation O(h⁴),
    the solver's own error (~1e-10) divided by h."""
    y = np.atleast_1d(np.asarray(y, dtype=float))
    cols = []
    for i in range(y.size):
        e = np.zeros_like(y)
        e[i] = h
        s = lambda k: solve(y + k * e if y.size > 1 else float(y[0] + k * h))   # noqa: E731
        cols.append((8 * (s(1) - s(-1)) - (s(2) - s(-2))) / (12 * h))
    return np.stack(cols, axis=1)


RHO_PRIME = {      # ρ'(z) of SciPy's losses (its documentation), for the oracle
    "linear": lambda z: np.ones_like(z), "soft_l1": lambda z: (1 + z) ** -0.5,
    "huber": lambda z: np.where(z <= 1, 1.0, np.maximum(z, 1) ** -0.5),
    "cauchy": lambda z: 1 / (1 + z), "arctan": lambda z: 1 / (1 + z ** 2)}


def exp_fit_polished(y, loss, s, bounds=None):
    """The plain fit, polished by hybr on the cost's gradient Jᵀ(ρ'(z) r) written out by
    hand (J of the model in closed form): an oracle solution to ~1e-15."""
    model = lambda p: p[0] * np.exp(-p[1] * T_EXP) - y
    p = so.least_squares(model, np.array([1.0, 1.0]), loss=loss, f_scale=s, xtol=1e-15,
                         ftol=1e-15, gtol=1e-15).x

    def gradient(p):
        e = np.exp(-p[1] * T_EXP)
        J = np.stack([e, -T_EXP * p[0] * e], axis=1)
        r = model(p)
        return J.T @ (RHO_PRIME[loss]((r / s) ** 2) * r)
    return so.fsolve(gradient, p, xtol=1e-15)


@pytest.mark.parametrize("loss", ["linear", "soft_l1", "cauchy", "huber", "arctan"])
def test_least_squares_nonlinear_with_residuals_uses_the_full_hessian(loss):
    """An exponential fit with nonzero residuals: the derivative in the data matches finite
    differences of polished re-solved fits (Gauss–Newton's JᵀJ alone would not)."""
    model = lambda p, y: p[0] * np.exp(-p[1] * T_EXP) - y
    kw = dict(loss=loss, f_scale=0.1, xtol=1e-15, ftol=1e-15, gtol=1e-15)
    solve = lambda y: do.least_squares(model, np.array([1.0, 1.0]), args=(y,), **kw).x
    J = jacobians.jacrev(solve)(Y_EXP)
    np.testing.assert_allclose(J, _fd(lambda y: exp_fit_polished(y, loss, 0.1), Y_EXP),
                               rtol=1e-6, atol=1e-8)        # SciPy's x* is good to ~1e-8
    np.testing.assert_allclose(jacobians.jacfwd(solve)(Y_EXP), J, rtol=1e-10, atol=1e-13)
    if loss == "linear":      # Gauss–Newton's derivative differs measurably here
        a, k = solve(Y_EXP)
        Jr = np.stack([np.exp(-k * T_EXP), -T_EXP * a * np.exp(-k * T_EXP)], axis=1)
        gauss_newton = np.linalg.solve(Jr.T @ Jr, Jr.T)
        assert np.max(np.abs(gauss_newton - J)) > 1e-3


def test_least_squares_traced_f_scale_bounds_and_res_fun():
    model = lambda p, y: p[0] * np.exp(-p[1] * T_EXP) - y
    kw = dict(loss="soft_l1", xtol=1e-15, ftol=1e-15, gtol=1e-15)
    solve = lambda s: do.least_squares(model, np.array([1.0, 1.0]), args=(Y_EXP,), f_scale=s,
                                       **kw).x
    np.testing.assert_allclose(dualad.jvp(solve, (0.1,), (1.0,))[1],
                               _fd(lambda s: exp_fit_polished(Y_EXP, "soft_l1", s), 0.1)[:, 0],
                               rtol=1e-7)
    # an active upper bound on the rate holds it: zero derivative, the amplitude refits
    bounded = lambda y: do.least_squares(model, np.array([1.0, 0.5]), args=(y,),
                                         bounds=([0.0, 0.0], [10.0, 1.0]), **kw).x
    Jb = jacobians.jacrev(bounded)(Y_EXP)
    assert abs(bounded(Y_EXP)[1] - 1.0) < 1e-12 and np.all(Jb[1] == 0)
    np.testing.assert_allclose(Jb[0], _fd(bounded, Y_EXP)[0], rtol=1e-5, atol=1e-7)
    # res.cost: ∂cost/∂y = −r at the solution (envelope theorem), r = res.fun
    fit = lambda y: do.least_squares(model, np.array([1.0, 1.0]), args=(y,), xtol=1e-15,
                                     ftol=1e-15, gtol=1e-15)
    np.testing.assert_allclose(dualad.grad(lambda y: fit(y).cost)(Y_EXP), -fit(Y_EXP).fun,
                               rtol=1e-6, atol=1e-8)     # ∇ₓcost(x*) ≈ 1e-9, not 0
    polished_fun = lambda y: model(exp_fit_polished(y, "linear", 1.0), y)   # noqa: E731
    np.testing.assert_allclose(jacobians.jacrev(lambda y: fit(y).fun)(Y_EXP),
                               _fd(polished_fun, Y_EXP), rtol=1e-6, atol=1e-8)


# --- bounds: an active bound has derivative 0 --------------------------------------------
Q = np.array([[2.0, 0.5, 0.0], [0.5, 1.0, 0.2], [0.0, 0.2, 3.0]])


@pytest.mark.parametrize("method", ["L-BFGS-B", "TNC", "SLSQP", "trust-constr", "Powell"])
def test_bounded_minimum_holds_active_components(method):
    """min ½xᵀQx − aᵀx on [0, 1]³: x₁ at its upper bound, x₂ at its lower bound (their
    derivative 0), x₀ = (a₀ − Q₀₁)/Q₀₀ free with dx₀/da₀ = 1/Q₀₀ (the free block's inverse)."""
    a = np.array([1.5, 4.0, -1.0])
    opts = {"L-BFGS-B": dict(gtol=1e-12, ftol=1e-15), "TNC": dict(gtol=1e-12, xtol=1e-14),
            "SLSQP": dict(ftol=1e-15), "trust-constr": dict(gtol=1e-12, xtol=1e-15),
            "Powell": dict(xtol=1e-12, ftol=1e-15)}[method]
    f = lambda a: do.minimize(lambda x, a: 0.5 * x @ Q @ x - a @ x, np.full(3, 0.5), args=(a,),
                              method=method, bounds=[(0.0, 1.0)] * 3, options=opts).x
    x = f(a)
    np.testing.assert_allclose(x, [(a[0] - Q[0, 1]) / Q[0, 0], 1.0, 0.0],
                               atol=1e-4 if method == "TNC" else 1e-6)
    expect = np.zeros((3, 3))
    expect[0, 0] = 1 / Q[0, 0]
    np.testing.assert_allclose(jacobians.jacfwd(f)(a), expect, atol=1e-6)
    np.testing.assert_allclose(jacobians.jacrev(f)(a), expect, atol=1e-6)


def test_a_traced_bound_moves_its_component():
    """x = clip(a, lo, u): dx/du = 1 where the upper bound is active (Bounds pairs with a
    traced entry), and the derivative in a is 0 there; second order: all zero."""
    a = np.array([0.5, 2.0, -1.0])
    f = lambda a, u: do.minimize(lambda x: 0.5 * np.sum((x - a) ** 2), np.zeros(3),
                                 method="L-BFGS-B", bounds=[(0.0, u), (0.0, u), (0.0, 1.0)]).x
    np.testing.assert_allclose(f(a, 1.2), [0.5, 1.2, 0.0], atol=1e-8)
    np.testing.assert_allclose(jacobians.jacfwd(lambda u: f(a, u))(1.2), [0.0, 1.0, 0.0], atol=1e-8)
    np.testing.assert_allclose(jacobians.jacrev(lambda a: f(a, 1.2))(a), np.diag([1.0, 0, 0]),
                               atol=1e-8)
    np.testing.assert_allclose(jacobians.hessian(lambda u: np.sum(f(a, u) ** 2))(1.2), 2.0,
                               atol=1e-7)         # d²/du² (u²) at the active component


def test_degenerate_active_set_is_reported():
    """a₁ = 1 exactly at the bound: zero gradient there, not differentiable."""
    a = np.array([0.5, 1.0, 0.2])
    f = lambda a: do.minimize(lambda x: 0.5 * np.sum((x - a) ** 2), np.zeros(3),
                              method="L-BFGS-B", bounds=[(0.0, 1.0)] * 3).x
    with pytest.warns(do.DegenerateSolutionWarning, match=r"minimize: degenerate .*x\[\[1\]\]"):
        J = jacobians.jacrev(f)(a)
    np.testing.assert_allclose(J, np.diag([1.0, 0.0, 1.0]), atol=1e-8)   # one-sided: held


def test_degenerate_inequality_is_reported():
    """x₀ ≤ 1 with a₀ = 1: the constraint is active with a zero multiplier."""
    f = lambda a: do.minimize(lambda x: 0.5 * np.sum((x - a) ** 2), np.zeros(2), method="SLSQP",
                              options=dict(ftol=1e-15),
                              constraints={"type": "ineq", "fun": lambda x: 1.0 - x[0]}).x
    with pytest.warns(do.DegenerateSolutionWarning, match="active inequality rows \\[0\\]"):
        J = jacobians.jacrev(f)(np.array([1.0, 2.0]))
    np.testing.assert_allclose(J, np.diag([0.0, 1.0]), atol=1e-8)


# --- an equality-constrained quadratic program: the KKT matrix ---------------------------
A_EQ = np.array([[1.0, 1.0, 1.0]])
K = np.block([[Q, A_EQ.T], [A_EQ, np.zeros((1, 1))]])     # [x; ν] = K⁻¹ [b; d]


def qp(b, d, how):
    obj = lambda x: 0.5 * x @ Q @ x - b @ x
    if how == "SLSQP-dict":
        return do.minimize(obj, np.zeros(3), method="SLSQP", options=dict(ftol=1e-15),
                           constraints={"type": "eq", "fun": lambda x: A_EQ @ x - d}).x
    if how == "SLSQP-ineq-active":        # A x ≤ d binds at the minimum: the same solution
        return do.minimize(obj, np.zeros(3), method="SLSQP", options=dict(ftol=1e-15),
                           constraints=[{"type": "ineq", "fun": lambda x, d: d - A_EQ @ x,
                                         "args": (d,)},
                                        {"type": "ineq", "fun": lambda x: 10.0 - x}]).x
    if how == "trust-constr-nonlinear":   # traced lb = ub of a NonlinearConstraint
        return do.minimize(obj, np.zeros(3), method="trust-constr",
                           options=dict(gtol=1e-12, xtol=1e-15),
                           constraints=so.NonlinearConstraint(lambda x: A_EQ @ x, d, d)).x
    raise ValueError(how)


@pytest.mark.parametrize("how", ["SLSQP-dict", "SLSQP-ineq-active", "trust-constr-nonlinear"])
def test_equality_constrained_qp_against_the_kkt_matrix(how):
    b, d = np.array([1.0, 0.0, 2.0]), np.array([0.5])
    Kinv = np.linalg.inv(K)
    np.testing.assert_allclose(qp(b, d, how), (Kinv @ np.r_[b, d])[:3], atol=1e-6)
    np.testing.assert_allclose(jacobians.jacfwd(lambda b: qp(b, d, how))(b), Kinv[:3, :3],
                               atol=1e-6)
    np.testing.assert_allclose(jacobians.jacrev(lambda d: qp(b, d, how))(d), Kinv[:3, 3:],
                               atol=1e-6)


def test_linear_constraint_and_an_inactive_inequality():
    """A LinearConstraint (plain) binding as an equality, and an inactive inequality that
    leaves the derivative as without it."""
    b = np.array([1.0, 0.0, 2.0])
    f = lambda b: do.minimize(lambda x: 0.5 * x @ Q @ x - b @ x, np.zeros(3),
                              method="trust-constr", options=dict(gtol=1e-12, xtol=1e-15),
                              constraints=[so.LinearConstraint(A_EQ, 0.5, 0.5),
                                           so.NonlinearConstraint(lambda x: x @ x, -np.inf, 100.0)]).x
    np.testing.assert_allclose(jacobians.jacrev(f)(b), np.linalg.inv(K)[:3, :3], atol=1e-6)


def test_constraint_and_active_bound_together():
    """Σx = d with x ≥ 0, x₂ held at 0: the KKT system with the bound as a row x₂ = 0,
    [x; ν] = K₂⁻¹ [b; d; 0]; derivatives in b and in d. trust-constr stalls on this
    problem (SciPy: success False, x₂ = 0.011): differentiating it raises."""
    b, d = np.array([1.0, 1.0, -2.0]), np.array([1.0])
    A2 = np.array([[1.0, 1.0, 1.0], [0.0, 0.0, 1.0]])
    K2inv = np.linalg.inv(np.block([[Q, A2.T], [A2, np.zeros((2, 2))]]))

    def f(b, d, method="SLSQP", opts=dict(ftol=1e-15)):
        return do.minimize(lambda x: 0.5 * x @ Q @ x - b @ x, np.full(3, 0.3), method=method,
                           bounds=[(0.0, None)] * 3, options=opts,
                           constraints={"type": "eq", "fun": lambda x: np.sum(x) - d}).x
    np.testing.assert_allclose(f(b, d), [0.25, 0.75, 0.0], atol=1e-6)
    np.testing.assert_allclose(jacobians.jacrev(lambda b: f(b, d))(b), K2inv[:3, :3], atol=1e-6)
    np.testing.assert_allclose(jacobians.jacfwd(lambda d: f(b, d))(d), K2inv[:3, 3:4], atol=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(do.ConvergenceError, match="maximum number of function evaluations"):
            dualad.grad(lambda b: np.sum(f(b, d, "trust-constr", dict(maxiter=200))))(b)


def test_sphere_constraint_second_order():
    """min ½‖x − a‖² on the unit sphere: x = a/‖a‖, dx/da = (I − xxᵀ)/‖a‖; the Hessian of
    a scalar of x against finite differences of that closed-form gradient."""
    a = np.array([0.6, -1.2, 0.9])
    w = np.array([1.0, 2.0, -0.5])
    f = lambda a: do.minimize(lambda x: 0.5 * np.sum((x - a) ** 2), np.array([0.5, -0.5, 0.5]),
                              method="SLSQP", options=dict(ftol=1e-15),
                              constraints={"type": "eq", "fun": lambda x: x @ x - 1.0}).x
    x = a / np.linalg.norm(a)
    np.testing.assert_allclose(f(a), x, atol=1e-7)
    grad_closed = lambda a: (np.eye(3) - np.outer(a, a) / (a @ a)) @ w / np.linalg.norm(a)
    np.testing.assert_allclose(dualad.grad(lambda a: w @ f(a))(a), grad_closed(a), atol=1e-7)
    h = 1e-5
    fd = np.stack([(grad_closed(a + h * e) - grad_closed(a - h * e)) / (2 * h) for e in np.eye(3)])
    np.testing.assert_allclose(jacobians.hessian(lambda a: w @ f(a))(a), fd, atol=1e-6)


# --- what users get wrong ------------------------------------------------------------------
def test_unconverged_solves_raise_when_differentiated_and_return_when_plain():
    fun = lambda x, a: np.sum((x - a) ** 4) + np.sum(x ** 2)
    res = do.minimize(fun, np.zeros(3), args=(np.ones(3),), options=dict(maxiter=1))
    assert not res.success                                        # plain: SciPy's result
    with pytest.raises(do.ConvergenceError, match=r"minimize: the solver did not converge"):
        dualad.grad(lambda a: np.sum(do.minimize(fun, np.zeros(3), args=(a,),
                                                 options=dict(maxiter=1)).x))(np.ones(3))
    with pytest.raises(do.ConvergenceError, match="brentq"):
        dualad.grad(lambda c: do.brentq(poly, 0.0, 3.0, args=(c,), maxiter=2, disp=False))(C)
    with pytest.raises(do.ConvergenceError, match="fsolve"):
        dualad.grad(lambda c: do.fsolve(poly, 1.0, args=(c,), maxfev=2)[0])(C)
    with pytest.raises(do.ConvergenceError, match="least_squares"):
        dualad.grad(lambda y: do.least_squares(lambda p, y: p[0] * np.exp(-p[1] * T_EXP) - y,
                                               np.ones(2), args=(y,), max_nfev=2).x[0])(Y_EXP)
    with pytest.raises(RuntimeError, match="Failed to converge"):          # SciPy's own
        dualad.grad(lambda b: np.sum(do.fixed_point(lambda x: np.tanh(A_FP @ x + b),
                                                    np.zeros(3), maxiter=2)))(B_FP)


def test_a_non_isolated_solution_is_refused():
    """A triple root (f' = 0) and a minimum flat in x₁: ∂F/∂x is singular there."""
    with pytest.raises(np.linalg.LinAlgError, match="brentq: at SciPy's solution, .* singular"):
        dualad.grad(lambda a: do.brentq(lambda x, a: x ** 3 - a, -1.0, 1.0, args=(a,)))(0.0)
    with pytest.raises(np.linalg.LinAlgError, match="minimize: at SciPy's solution"):
        dualad.jvp(lambda a: do.minimize(lambda x, a: (x[0] - a) ** 2 + 0 * x[1], np.zeros(2),
                                         args=(a,)).x, (1.0,), (1.0,))


def test_a_loose_scipy_success_is_refused_by_the_newton_check():
    """Nelder–Mead's default tolerance stops 1e-4 away: not a root of ∇f to 1e-4."""
    f = lambda a: do.minimize(lambda x: np.sum((x - a) ** 2) * 1e-3, np.zeros(2),
                              method="Nelder-Mead", options=dict(xatol=1e-1, fatol=1e-1)).x
    with pytest.raises(do.ConvergenceError, match="minimize: SciPy's solution is not a root"):
        dualad.grad(lambda a: np.sum(f(a)))(np.array([1.0, 2.0]))


def test_without_traced_values_the_result_is_scipys():
    fun = lambda x, a: np.sum((x - a) ** 2)
    ours = do.minimize(fun, np.zeros(2), args=(np.ones(2),), method="BFGS")
    theirs = so.minimize(fun, np.zeros(2), args=(np.ones(2),), method="BFGS")
    assert np.array_equal(ours.x, theirs.x) and ours.nit == theirs.nit
    assert do.brentq(poly, 0.0, 3.0, args=(C,)) == so.brentq(poly, 0.0, 3.0, args=(C,))
    assert np.array_equal(do.fsolve(poly, 1.0, args=(C,)), so.fsolve(poly, 1.0, args=(C,)))


def test_a_traced_start_has_zero_derivative():
    f = lambda x0: do.brentq(poly, x0 - 1.0, 3.0, args=(C,)) + \
        do.minimize(lambda x: np.sum((x - 1.0) ** 2), x0 * np.ones(2)).x[0]
    assert dualad.grad(f)(1.0) == 0.0


_STORE = {}     # a module global: closure conversion does not search globals


def _reads_a_global(x, _unused):
    return x ** 2 - _STORE["a"]


def test_a_traced_global_is_refused_naming_args():
    def outer(a):
        _STORE["a"] = a
        return do.brentq(_reads_a_global, 0.0, 3.0, args=(a,))
    with pytest.raises(TypeError, match=r"brentq: f returned a traced value .*args=\(\.\.\.\)"):
        dualad.grad(outer)(2.0)
    _STORE.clear()


def test_a_traced_value_in_a_closed_over_container_is_found():
    store = {}

    def outer(a):
        store["a"] = a
        return do.brentq(lambda x: x ** 2 - store["a"], 0.0, 3.0)
    np.testing.assert_allclose(dualad.grad(outer)(2.0), 0.5 / np.sqrt(2.0), rtol=1e-10)


@pytest.mark.parametrize("call", [
    lambda a: do.minimize(lambda x: np.sum(x * a), np.zeros(2), no_such=1),
    lambda a: do.root(lambda x: x - a, np.zeros(2), no_such=1),
    lambda a: do.least_squares(lambda x: x - a, np.zeros(2), no_such=1),
    lambda a: do.brentq(lambda x: x - a, 0.0, 3.0, no_such=1),
])
def test_unknown_keywords_name_the_function(call):
    with pytest.raises(TypeError, match=r"\(\) got an unexpected keyword argument 'no_such'"):
        dualad.grad(lambda a: np.sum(call(a)))(np.ones(2))


def test_bad_bounds_and_constraints_say_what_to_write():
    fun = lambda x, a: np.sum((x - a) ** 2)
    with pytest.raises(ValueError, match=r"minimize: bounds must be a Bounds or 3 \(min, max\)"):
        dualad.grad(lambda a: np.sum(do.minimize(fun, np.zeros(3), args=(a,),
                                                 bounds=[(0, 1)] * 2).x))(np.ones(3))
    with pytest.raises(ValueError, match=r"minimize: constraints\[0\] must have 'type'"):
        dualad.grad(lambda a: np.sum(do.minimize(fun, np.zeros(3), args=(a,),
                                                 constraints={"fun": np.sum}).x))(np.ones(3))
    with pytest.raises(ValueError, match=r"must return a scalar"):              # SciPy's check
        dualad.grad(lambda a: np.sum(do.minimize(lambda x, a: x - a, np.zeros(3), args=(a,),
                                                 method="Nelder-Mead").x))(np.ones(3))


@pytest.mark.parametrize("x0, err, match", [
    (None, TypeError, "minimize: x0 is None"),
    (np.zeros(0), ValueError, r"minimize: x0 is empty \(shape \(0,\)\)"),
    (np.zeros(2, complex), TypeError, "minimize: x0 is complex"),
    (np.zeros((1, 2)), ValueError, r"minimize: x0 has shape \(1, 2\)"),
])
def test_bad_starting_points_are_refused(x0, err, match):
    with pytest.raises(err, match=match):
        dualad.grad(lambda a: np.sum(do.minimize(lambda x, a: np.sum((x - a) ** 2), x0,
                                                 args=(a,)).x))(np.ones(2))


def test_a_complex_traced_argument_is_refused():
    with pytest.raises(TypeError, match=r"root: a traced argument of shape \(2,\) is complex"):
        dualad.jvp(lambda a: do.root(lambda x, a: x - a.real, np.zeros(2), args=(a,)).x,
                   (np.ones(2) + 0j,), (np.ones(2) + 0j,))


def test_float32_and_list_inputs():
    f = lambda c: do.root(lambda x, c: [poly(x[0], c)], [np.float32(1.0)], args=(c,)).x[0]
    _, d1, _ = root_closed_form(C)
    np.testing.assert_allclose(dualad.grad(f)(C), d1, rtol=1e-8)


def test_plain_scipy_calls_name_the_replacement(capsys):
    """scipy.optimize's own functions on traced values fail inside SciPy; the error (or the
    one it chains, or MINPACK's printed one) names the dualad.scipy.optimize function."""
    with pytest.raises(Exception) as info:
        dualad.grad(lambda a: so.brentq(lambda x: x ** 2 - a, 0.0, 3.0))(2.0)
    assert "Call dualad.scipy.optimize.brentq instead" in str(info.value.__cause__)
    with pytest.raises(Exception) as info:
        dualad.grad(lambda a: so.minimize(lambda x: np.sum((x - a) ** 2), np.zeros(2)).x[0])(2.0)
    assert "Call dualad.scipy.optimize.minimize instead" in str(info.value.__cause__)
    with pytest.raises(TypeError, match="Call dualad.scipy.optimize.least_squares instead"):
        dualad.grad(lambda a: so.least_squares(lambda x: x - a, np.zeros(2)).x[0])(2.0)
    with pytest.raises(Exception):
        dualad.grad(lambda a: so.root(lambda x: x ** 2 - a, 1.0).x[0])(2.0)
    assert "Call dualad.scipy.optimize.root instead" in capsys.readouterr().err


# --- the cost of a derivative: linear solves, not a differentiated solver ----------------
def test_a_1000_variable_minimum_costs_a_few_linear_solves():
    """n = 1000: the reverse-mode gradient of a loss of x* in b is one adjoint solve
    (matrix-free minres, each iteration one Hessian-vector product, i.e. one evaluation
    of fun on traced values), whatever SciPy's iterations; checked against the closed
    form (∇²f)⁻¹ 2x*. bench/implicit_optimize.py compares with unrolling."""
    n = 1000
    calls = {"plain": 0, "traced": 0}

    def fun(x, b):
        calls["traced" if isinstance(b, dualad.extend.Box) or
              isinstance(x, dualad.extend.Box) else "plain"] += 1
        return 0.5 * np.sum(np.diff(x) ** 2) + 0.5 * np.sum(x ** 2) + 0.25 * np.sum(x ** 4) - b @ x

    def grad_fun(x, b):
        d = np.diff(x)
        return x + x ** 3 - b + np.concatenate([-d[:1], d[:-1] - d[1:], d[-1:]])

    b = np.sin(np.arange(n)) + 0.5
    solve = lambda b: do.minimize(fun, np.zeros(n), args=(b,), method="L-BFGS-B", jac=grad_fun,
                                  options=dict(gtol=1e-10, ftol=1e-15))
    g = dualad.grad(lambda b: np.sum(solve(b).x ** 2))(b)
    x = solve(b).x
    H = np.diag(1 + 3 * x ** 2) + 2 * np.eye(n) - np.eye(n, k=1) - np.eye(n, k=-1)
    H[0, 0] -= 1
    H[-1, -1] -= 1
    np.testing.assert_allclose(g, np.linalg.solve(H, 2 * x), rtol=1e-7, atol=1e-9)
    assert calls["traced"] <= 40       # 22 measured: minres iterations + res.fun + x* check


def test_astype_to_the_same_dtype_copies():
    """x.astype(x.dtype) is a copy (NumPy's copy=True default), so a write into it leaves
    x alone: SciPy's apply_where (in scipy.optimize.fixed_point's own loop) relies on it."""
    def f(a):
        x = a * np.array([1.0, 2.0])
        y = x.astype(x.dtype)
        y[0] = 7.0
        assert x.astype(x.dtype, copy=False) is x
        return x[0] + 10 * y[1]
    np.testing.assert_allclose(dualad.grad(f)(1.0), 21.0)
    # differentiating through SciPy's own fixed-point loop then agrees with the implicit one
    g = lambda a: so.fixed_point(lambda x: 0.5 * np.cos(a * x), np.array([0.5]))[0]
    h = lambda a: do.fixed_point(lambda x: 0.5 * np.cos(a * x), np.array([0.5]))[0]
    np.testing.assert_allclose(dualad.grad(g)(1.0), dualad.grad(h)(1.0), rtol=1e-6)


def test_a_method_that_ignores_bounds_or_constraints_is_refused():
    fun = lambda x, a: np.sum((x - a) ** 2)
    with pytest.raises(ValueError, match="minimize: method='BFGS' ignores bounds"):
        dualad.grad(lambda a: np.sum(do.minimize(fun, np.zeros(2), args=(a,), method="BFGS",
                                                 bounds=[(0, 1)] * 2).x))(np.ones(2))
    with pytest.raises(ValueError, match="minimize: method='L-BFGS-B' ignores constraints"):
        dualad.grad(lambda a: np.sum(do.minimize(
            fun, np.zeros(2), args=(a,), method="L-BFGS-B",
            constraints={"type": "eq", "fun": lambda x: x[0]}).x))(np.ones(2))


def test_least_squares_second_order_against_differences_of_first_derivatives():
    """The Hessian (reverse over forward, by jacobians.hessian) of a loss of the fitted
    parameters in the data, against central differences of its gradient (the gradient is
    checked against polished re-solves above)."""
    model = lambda p, y: p[0] * np.exp(-p[1] * T_EXP) - y
    kw = dict(xtol=1e-15, ftol=1e-15, gtol=1e-15)
    loss = lambda y: np.sum(do.least_squares(model, np.array([1.0, 1.0]), args=(y,), **kw).x ** 2)
    gradient = lambda y: dualad.grad(loss)(y)
    H = jacobians.hessian(loss)(Y_EXP)
    np.testing.assert_allclose(H, H.T, atol=1e-9)
    h = 1e-2          # five-point differences: truncation ~h⁴, SciPy's x* error (~1e-8) / h
    for i in (0, 5, 11):
        e = np.zeros(12)
        e[i] = h
        g = lambda k: gradient(Y_EXP + k * e)     # noqa: E731
        np.testing.assert_allclose(H[i], (8 * (g(1) - g(-1)) - (g(2) - g(-2))) / (12 * h),
                                   rtol=1e-5, atol=1e-6)
    v = np.linspace(-1, 1, 12)
    hv = dualad.jvp(gradient, (Y_EXP,), (v,))[1]                       # forward over reverse
    np.testing.assert_allclose(hv, H @ v, rtol=1e-8, atol=1e-10)
