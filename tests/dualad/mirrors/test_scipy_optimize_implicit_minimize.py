"""dualad.scipy.optimize.minimize: the minimizer differentiated by the implicit function
theorem on its optimality condition (stationarity, active bounds held, the KKT system
for active constraints), against closed forms: ridge regression in its penalty (to
second order), bounded minima (an active bound has derivative 0, a traced bound moves its
component), quadratic programs through the KKT matrix, a sphere constraint to second
order; and the cost of a 1,000-variable minimum's derivative."""
import warnings

import numpy as np
import pytest
import scipy.optimize as so

import dualad
import dualad.scipy.optimize as do
from dualad import jacobians

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
                                           so.NonlinearConstraint(lambda x: x @ x, -np.inf,
                                                                  100.0)]).x
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


def test_a_method_that_ignores_bounds_or_constraints_is_refused():
    fun = lambda x, a: np.sum((x - a) ** 2)
    with pytest.raises(ValueError, match="minimize: method='BFGS' ignores bounds"):
        dualad.grad(lambda a: np.sum(do.minimize(fun, np.zeros(2), args=(a,), method="BFGS",
                                                 bounds=[(0, 1)] * 2).x))(np.ones(2))
    with pytest.raises(ValueError, match="minimize: method='L-BFGS-B' ignores constraints"):
        dualad.grad(lambda a: np.sum(do.minimize(
            fun, np.zeros(2), args=(a,), method="L-BFGS-B",
            constraints={"type": "eq", "fun": lambda x: x[0]}).x))(np.ones(2))
