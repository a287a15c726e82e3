"""scipy.optimize fed exact derivatives: minimize with jac/hess/hessp, least_squares with
dense and sparse Jacobians and with jac_sparsity."""
import numpy as np
import pytest
import scipy.optimize as so
import scipy.sparse as sp

import dualad
from dualad import jacobians
from dualad.jacobians import optimize as jo


def rosen(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def rosen_residual(x):
    return np.concatenate([10.0 * (x[1:] - x[:-1] ** 2), 1.0 - x[:-1]])


X0 = np.array([1.3, 0.7, 0.8, 1.9, 1.2])   # scipy.optimize tutorial's start


def test_plain_dualad_callables_work_as_jac_and_hess():
    """What a user writes first: the functions themselves, no adapters."""
    res = so.minimize(rosen, X0, method="trust-exact", jac=dualad.grad(rosen),
                      hess=jacobians.hessian(rosen))
    ref = so.minimize(so.rosen, X0, method="trust-exact", jac=so.rosen_der, hess=so.rosen_hess)
    assert res.success and res.nit == ref.nit
    np.testing.assert_allclose(res.x, ref.x, rtol=1e-10)
    np.testing.assert_allclose(res.x, np.ones(5), atol=1e-5)   # trust-exact's gtol=1e-8


@pytest.mark.parametrize("method", ["BFGS", "L-BFGS-B", "CG", "trust-exact", "trust-ncg",
                                    "trust-krylov", "Newton-CG", "trust-constr"])
def test_minimize_kwargs_every_derivative_method(method):
    """Same iterates as SciPy's hand-written rosen_der / rosen_hess / rosen_hess_prod (CG
    amplifies last-bit rounding differences to ~1e-7 over its 47 iterations; Newton-CG
    stops, like SciPy's own run, at its default xtol some 2e-4 from the minimum)."""
    opts = {"maxiter": 5000} if method != "trust-constr" else \
        {"maxiter": 5000, "gtol": 1e-10, "xtol": 1e-12}
    res = so.minimize(**jo.minimize_kwargs(rosen, X0, method=method), options=opts)
    kw = {"jac": so.rosen_der}
    if "hess" in jo.minimize_kwargs(rosen, X0, method=method):
        kw["hess"] = so.rosen_hess
    elif "hessp" in jo.minimize_kwargs(rosen, X0, method=method):
        kw["hessp"] = so.rosen_hess_prod
    ref = so.minimize(so.rosen, X0, method=method, options=opts, **kw)
    np.testing.assert_allclose(res.x, np.ones(5), atol=1e-3 if method == "Newton-CG" else 1e-4)
    assert res.nit == ref.nit
    np.testing.assert_allclose(res.x, ref.x, rtol=1e-6 if method == "CG" else 1e-10)


def test_dogleg_on_a_convex_function():
    def f(x):
        return np.sum(np.exp(x) - x) + np.sum(x ** 4)
    res = so.minimize(**jo.minimize_kwargs(f, np.full(4, 0.7), method="dogleg"))
    assert res.success
    np.testing.assert_allclose(res.x, np.zeros(4), atol=1e-6)


def test_exact_hessian_beats_finite_differences_in_function_evaluations():
    exact = so.minimize(rosen, X0, method="trust-exact", jac=jo.gradient(rosen),
                        hess=jo.hessian_fn(rosen))
    bfgs_fd = so.minimize(rosen, X0, method="BFGS")   # numerical gradient
    assert exact.nfev < bfgs_fd.nfev / 10


def test_hessp_is_the_hessian_times_p():
    hp = jo.hessp_fn(rosen)
    p = np.arange(5.0)
    np.testing.assert_allclose(hp(X0, p), jacobians.hessian(rosen, X0) @ p, rtol=1e-12)


def test_value_and_gradient_for_jac_true():
    res = so.minimize(jo.value_and_gradient(rosen), X0, jac=True, method="L-BFGS-B",
                      options={"maxiter": 5000})
    np.testing.assert_allclose(res.x, np.ones(5), atol=1e-4)


def test_extra_args_are_passed_through():
    def f(x, a, b):
        return np.sum((x - a) ** 2 * b)
    a, b = np.array([1.0, -2.0, 3.0]), np.array([1.0, 2.0, 3.0])
    res = so.minimize(f, np.zeros(3), args=(a, b), method="trust-exact",
                      jac=jo.gradient(f), hess=jo.hessian_fn(f))
    np.testing.assert_allclose(res.x, a, atol=1e-8)
    res = so.minimize(**jo.minimize_kwargs(f, np.zeros(3), method="Newton-CG", args=(a, b)))
    np.testing.assert_allclose(res.x, a, atol=1e-6)


def test_sparse_hessian_for_trust_constr():
    res = so.minimize(rosen, X0, method="trust-constr", jac=jo.gradient(rosen),
                      hess=jo.hessian_fn(rosen, sparse=True),
                      options={"gtol": 1e-10, "xtol": 1e-12, "maxiter": 5000})
    np.testing.assert_allclose(res.x, np.ones(5), atol=1e-5)


def bratu_residual(u, lam=1.0):
    """Bratu's discretized equation scaled by h² (so lsmr, which least_squares uses with
    sparse Jacobians, converges in few iterations): u_{i-1} - 2 u_i + u_{i+1} + h² λ e^{u_i}."""
    n = u.shape[0]
    h2 = 1.0 / (n + 1) ** 2
    z = np.zeros(1)
    return np.concatenate([z, u[:-1]]) - 2.0 * u + np.concatenate([u[1:], z]) \
        + h2 * lam * np.exp(u)


@pytest.mark.parametrize("how", ["dense", "sparse", "jac_sparsity", "kwargs"])
def test_least_squares(how):
    n = 60
    u0 = np.zeros(n)
    if how == "dense":
        kw = dict(jac=jo.jacobian_fn(bratu_residual))
    elif how == "sparse":
        kw = dict(jac=jo.sparse_jacobian_fn(bratu_residual, u0), tr_solver="lsmr")
    elif how == "jac_sparsity":
        kw = dict(jac_sparsity=jacobians.jacobian_sparsity(bratu_residual, u0))
    else:
        kw = {k: v for k, v in jo.least_squares_kwargs(bratu_residual, u0, sparse=True).items()
              if k not in ("fun", "x0", "args")}
    res = so.least_squares(bratu_residual, u0, xtol=1e-12, ftol=1e-12, gtol=1e-12, **kw)
    assert np.max(np.abs(bratu_residual(res.x))) < 1e-8   # h² ≈ 2.7e-4 times the unscaled residual
    if how == "sparse":
        J = kw["jac"](res.x)
        assert sp.issparse(J) and J.nnz == 3 * n - 2
        assert kw["jac"].plan.mode == "sparse-forward"


def test_least_squares_rosenbrock_residual_dense_jacobian_exact():
    res = so.least_squares(rosen_residual, X0, jac=jo.jacobian_fn(rosen_residual))
    np.testing.assert_allclose(res.x, np.ones(5), atol=1e-8)
    np.testing.assert_allclose(res.jac, jacobians.jacobian(rosen_residual, res.x), rtol=1e-12)


def test_minimize_kwargs_rejects_unknown_hessian_choice():
    with pytest.raises(ValueError, match="hessian='exact'"):
        jo.minimize_kwargs(rosen, X0, hessian="exact")
