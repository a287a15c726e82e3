"""dualad.scipy.optimize: SciPy's solvers with solutions differentiated by the implicit
function theorem (through dualad.custom_root), checked against closed forms: the root
of a polynomial in its coefficients (every root finder), a contraction's fixed point
against unrolled iterations, least squares of a linear model in its data and of a
nonlinear one against polished re-solves; both modes and second order (closed-form
second derivatives, or finite differences of first derivatives); and what users get
wrong. ``minimize`` (ridge, bounds, KKT) is in test_scipy_optimize_implicit_minimize.py."""
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
    "newton-halley": lambda c: do.newton(poly, 1.0, args=(c,), tol=1e-14,
                                         fprime=lambda x, c: c[1] + 2 * c[2] * x,
                                         fprime2=lambda x, c: 2 * c[2]),
    "root-hybr": lambda c: do.root(poly, np.array([1.0]), args=(c,)).x[0],
    "root-lm": lambda c: do.root(poly, np.array([1.0]), args=(c,), method="lm").x[0],
    "root-jac=True": lambda c: do.root(
        lambda x, c: (poly(x, c), np.reshape(c[1] + 2 * c[2] * x, (1, 1))),
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


def test_nash_equilibrium_of_a_quadratic_game():
    """Player i minimises ½aᵢxᵢ² + b xᵢxⱼ − cᵢxᵢ; the best responses xᵢ = (cᵢ − b xⱼ)/aᵢ
    meet at M x = c, M = [[a₀, b], [b, a₁]] (a contraction for |b| < aᵢ): dx/dc = M⁻¹,
    dx/db = −M⁻¹E x and d²x/db² = 2 M⁻¹E M⁻¹E x (E the swap), the game's coupling b
    closed over by the best-response map."""
    a, c, E = np.array([2.0, 3.0]), np.array([1.0, -0.5]), np.array([[0.0, 1.0], [1.0, 0.0]])

    def equilibrium(b, c):
        best = lambda x: (c - b * x[::-1]) / a
        return do.fixed_point(best, np.zeros(2), xtol=1e-14)
    b = 0.8
    M = np.diag(a) + b * E
    x = np.linalg.solve(M, c)
    np.testing.assert_allclose(equilibrium(b, c), x, atol=1e-12)
    np.testing.assert_allclose(jacobians.jacrev(lambda c: equilibrium(b, c))(c), np.linalg.inv(M),
                               rtol=1e-9)
    dx = -np.linalg.solve(M, E @ x)
    np.testing.assert_allclose(dualad.jvp(lambda b: equilibrium(b, c), (b,), (1.0,))[1], dx,
                               rtol=1e-9)
    d2 = 2 * np.linalg.solve(M, E @ np.linalg.solve(M, E @ x))
    for i in range(2):
        np.testing.assert_allclose(
            dualad.grad(lambda b: dualad.grad(lambda b: equilibrium(b, c)[i])(b))(b), d2[i],
            rtol=1e-8)


# --- least squares ----------------------------------------------------------------------
X = np.random.default_rng(0).normal(size=(20, 4))
Y = np.random.default_rng(5).normal(size=20)


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
                               rtol=1e-6)        # SciPy's x* is good to ~1e-8 (SciPy 1.18: 1.3e-7)
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
    with pytest.raises(TypeError) as info:   # SciPy's "must return a scalar": dualad's again
        dualad.grad(lambda a: so.minimize(lambda x: np.sum((x - a) ** 2), np.zeros(2)).x[0])(2.0)
    assert "Call dualad.scipy.optimize.minimize instead" in str(info.value)
    with pytest.raises(TypeError, match="Call dualad.scipy.optimize.least_squares instead"):
        dualad.grad(lambda a: so.least_squares(lambda x: x - a, np.zeros(2)).x[0])(2.0)
    with pytest.raises(Exception):
        dualad.grad(lambda a: so.root(lambda x: x ** 2 - a, 1.0).x[0])(2.0)
    assert "Call dualad.scipy.optimize.root instead" in capsys.readouterr().err


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


def test_least_squares_callable_loss():
    """A callable loss written with NumPy operations works (here soft_l1's formulas); one
    that assigns traced values into np.empty (SciPy's documentation style) is refused
    with a message saying how to write it."""
    model = lambda p, y: p[0] * np.exp(-p[1] * T_EXP) - y

    def stacked(z):
        t = 1 + z
        return np.stack([2 * (t ** 0.5 - 1), t ** -0.5, -0.5 * t ** -1.5])

    def assigned(z):
        rho = np.empty((3, z.size))
        rho[0] = 2 * ((1 + z) ** 0.5 - 1)
        rho[1] = (1 + z) ** -0.5
        rho[2] = -0.5 * (1 + z) ** -1.5
        return rho
    kw = dict(f_scale=0.1, xtol=1e-15, ftol=1e-15, gtol=1e-15)
    fit = lambda y, loss: do.least_squares(model, np.ones(2), args=(y,), loss=loss, **kw).x
    np.testing.assert_allclose(jacobians.jacrev(lambda y: fit(y, stacked))(Y_EXP),
                               jacobians.jacrev(lambda y: fit(y, "soft_l1"))(Y_EXP), rtol=1e-6,
                               atol=1e-9)
    with pytest.raises(TypeError, match=r"least_squares: the callable loss .*np\.stack"):
        dualad.grad(lambda y: fit(y, assigned)[0])(Y_EXP)


def test_least_squares_traced_kwargs_and_a_jac():
    """A traced value in ``kwargs``, and the user's ``jac`` (SciPy's solve only, called with
    the same args and kwargs on plain values): dw/dy = (XᵀX)⁻¹Xᵀ."""
    fit = lambda y: do.least_squares(lambda w, y: X @ w - y, np.zeros(4), kwargs={"y": y},
                                     jac=lambda w, y: X, method="lm").x
    np.testing.assert_allclose(jacobians.jacfwd(fit)(Y), np.linalg.solve(X.T @ X, X.T),
                               rtol=1e-8, atol=1e-12)


def test_least_squares_loss_closing_over_a_traced_value():
    """A callable loss reading a traced scale c (ρ(z) = c·log1p(z/c), Cauchy's with its
    own scale): the fit depends on c through the loss alone; against differences."""
    model = lambda p, y: p[0] * np.exp(-p[1] * T_EXP) - y
    kw = dict(f_scale=0.1, xtol=1e-15, ftol=1e-15, gtol=1e-15)

    def fit(c):
        loss = lambda z: np.stack([c * np.log1p(z / c), 1 / (1 + z / c),
                                   -1 / (c * (1 + z / c) ** 2)])
        return do.least_squares(model, np.ones(2), args=(Y_EXP,), loss=loss, **kw).x
    def polished_fit(c):
        """SciPy's plain fit polished by fsolve on the cost's gradient Jᵀ(ρ'(z) r), z =
        (r/f_scale)², written out by hand: SciPy 1.18's least_squares stops ~4e-4 short in
        these derivatives' terms with a callable loss, the polished fit to ~1e-15."""
        p = so.least_squares(lambda p: model(p, Y_EXP), np.ones(2), **kw,
                             loss=lambda z: np.stack([c * np.log1p(z / c), 1 / (1 + z / c),
                                                      -1 / (c * (1 + z / c) ** 2)])).x

        def gradient(p):
            e = np.exp(-p[1] * T_EXP)
            J = np.stack([e, -T_EXP * p[0] * e], axis=1)
            r = model(p, Y_EXP)
            return J.T @ (r / (1 + (r / 0.1) ** 2 / c))
        return so.fsolve(gradient, p, xtol=1e-15)
    np.testing.assert_allclose(dualad.jvp(fit, (2.0,), (1.0,))[1], _fd(polished_fit, 2.0)[:, 0],
                               rtol=1e-6, atol=1e-9)


def test_under_vmap_each_solver_refuses_clearly_instead_of_solving_the_wrong_problem():
    """Under vmap a primal value holds the whole batch, which SciPy would take for one
    problem: a batched argument, closed-over value or starting point is refused, naming
    the solver and the loop to write (also under grad inside vmap)."""
    import dualad.scipy.optimize as dso
    cs = np.array([0.5, 1.0, 2.0])

    def by_args(c):
        return dso.brentq(lambda x, c: x ** 3 + c * x - 1.0, 0.0, 2.0, args=(c,))

    def by_closure(c):
        return dso.root_scalar(lambda x: x ** 3 + c * x - 1.0, bracket=(0.0, 2.0)).root

    def by_start(x0):
        return dso.minimize(lambda x: np.sum((x - 1.0) ** 2), x0).x

    for fn, xs in ((by_args, cs), (dualad.grad(by_args), cs), (by_closure, cs),
                   (by_start, np.ones((3, 2)))):
        with pytest.raises(NotImplementedError, match=r"optimize\.\w+ under dualad\.vmap.*Loop"):
            dualad.vmap(fn)(xs)
    # the loop the message asks for: exact, against −x / (3x² + c)
    xs = np.array([by_args(c) for c in cs])
    grads = np.array([dualad.grad(by_args)(c) for c in cs])
    np.testing.assert_allclose(grads, -xs / (3 * xs ** 2 + cs), rtol=1e-9)
