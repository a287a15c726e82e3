"""One convention for every helper of ``dualad.jacobians.optimize``: ``helper(f, x0,
*args)`` (issue 30: ``jacobian_fn(f, y0)`` used to pass y0 to f as an extra argument), the
old ``helper(f, a)`` spelling refused with a message saying what to write, and
``ode_jacobian_fn`` for ``scipy.integrate.solve_ivp(jac=...)``."""
import numpy as np
import pytest
import scipy.optimize as so
import scipy.sparse as sp
from scipy.integrate import solve_ivp

from dualad.jacobians import optimize as jo


def residual(y):
    return np.array([y[0] ** 2 - 4.0, y[0] * y[1] - 1.0])


def residual_c(y, c):
    return np.array([y[0] ** 2 - c, y[0] * y[1] - 1.0])


def objective(x):
    return np.sum((x - 1.0) ** 2 * np.arange(1.0, x.size + 1))


def objective_c(x, c):
    return np.sum((x - c) ** 2)


Y0 = np.array([1.0, 1.0])
J_AT_Y0 = np.array([[2.0, 0.0], [1.0, 1.0]])


@pytest.mark.parametrize("helper", ["jacobian_fn", "sparse_jacobian_fn"])
def test_jacobian_helpers_take_the_point(helper):
    jac = getattr(jo, helper)(residual, Y0)           # the call
    j = jac(Y0)
    np.testing.assert_allclose(j.toarray() if sp.issparse(j) else j, J_AT_Y0)
    res = so.least_squares(residual, Y0, jac=jac)
    np.testing.assert_allclose(res.x, [2.0, 0.5], rtol=1e-8)


@pytest.mark.parametrize("helper", ["gradient", "value_and_gradient", "hessian_fn",
                                    "hessp_fn"])
def test_scalar_helpers_take_the_point(helper):
    x0 = np.zeros(3)
    fn = getattr(jo, helper)(objective, x0)
    out = fn(x0, np.ones(3)) if helper == "hessp_fn" else fn(x0)
    want = {"gradient": -2.0 * np.arange(1.0, 4.0),
            "value_and_gradient": (6.0, -2.0 * np.arange(1.0, 4.0)),
            "hessian_fn": np.diag(2.0 * np.arange(1.0, 4.0)),
            "hessp_fn": 2.0 * np.arange(1.0, 4.0)}[helper]
    if helper == "value_and_gradient":
        assert out[0] == want[0]
        out, want = out[1], want[1]
    np.testing.assert_allclose(out, want)


def test_without_a_point_the_old_calls_keep_their_meaning():
    np.testing.assert_allclose(jo.jacobian_fn(residual)(Y0), J_AT_Y0)
    np.testing.assert_allclose(jo.gradient(objective)(np.zeros(2)), [-2.0, -4.0])
    np.testing.assert_allclose(jo.hessian_fn(objective, sparse=True)(np.zeros(2)).toarray(),
                               np.diag([2.0, 4.0]))


@pytest.mark.parametrize("helper", ["gradient", "value_and_gradient", "hessian_fn",
                                    "hessp_fn", "jacobian_fn"])
def test_the_old_extra_argument_spelling_is_refused_clearly(helper):
    f = residual_c if helper == "jacobian_fn" else objective_c
    with pytest.raises(TypeError) as e:
        getattr(jo, helper)(f, 4.0)              # before: 4.0 was c, an extra argument
    msg = str(e.value)
    assert helper in msg and "point x0" in msg and f"{helper}({f.__name__}, x0, a)" in msg


def test_extra_arguments_follow_the_point_and_scipy_args_win():
    jac = jo.jacobian_fn(residual_c, Y0, 4.0)
    np.testing.assert_allclose(jac(Y0), J_AT_Y0)
    res = so.least_squares(residual_c, Y0, jac=jo.jacobian_fn(residual_c, Y0, 9.0),
                           args=(9.0,))
    np.testing.assert_allclose(res.x, [3.0, 1.0 / 3.0], rtol=1e-8)
    g = jo.gradient(objective_c, np.zeros(2), 1.0)
    np.testing.assert_allclose(g(np.zeros(2)), [-2.0, -2.0])
    np.testing.assert_allclose(g(np.zeros(2), 3.0), [-6.0, -6.0])        # SciPy's args
    res = so.minimize(objective_c, np.zeros(2), args=(2.0,), method="trust-exact",
                      jac=jo.gradient(objective_c, np.zeros(2), 2.0),
                      hess=jo.hessian_fn(objective_c, np.zeros(2), 2.0))
    np.testing.assert_allclose(res.x, [2.0, 2.0], rtol=1e-8)


def test_a_point_of_another_size_is_refused():
    with pytest.raises(ValueError, match=r"jacobian_fn\(residual\): prepared for x of shape"):
        jo.jacobian_fn(residual, Y0)(np.ones(3))
    # SciPy passes a scalar point as shape (1,): accepted
    assert jo.gradient(lambda x: np.sum(x ** 2), 0.5)(np.array([0.5]))[0] == 1.0


def test_minimize_and_least_squares_kwargs_with_args():
    kw = jo.minimize_kwargs(objective_c, np.zeros(3), method="trust-exact", args=(2.0,))
    np.testing.assert_allclose(so.minimize(**kw).x, 2.0 * np.ones(3), rtol=1e-8)
    kw = jo.least_squares_kwargs(residual_c, Y0, args=(9.0,))
    np.testing.assert_allclose(so.least_squares(**kw).x, [3.0, 1.0 / 3.0], rtol=1e-8)


# --- solve_ivp -------------------------------------------------------------------------
def robertson(t, y):
    return np.array([-0.04 * y[0] + 1e4 * y[1] * y[2],
                     0.04 * y[0] - 1e4 * y[1] * y[2] - 3e7 * y[1] ** 2,
                     3e7 * y[1] ** 2])


def diffusion(t, u, k):
    """A stiff 1-D reaction-diffusion line, tridiagonal in u; forced in t."""
    up = np.concatenate([u[1:], np.zeros(1)])
    um = np.concatenate([np.zeros(1), u[:-1]])
    return k * (um - 2.0 * u + up) - u ** 3 + np.sin(t) * np.exp(-u ** 2)


@pytest.mark.parametrize("method", ["BDF", "Radau"])
def test_ode_jacobian_in_stiff_solvers_matches_the_finite_difference_solve(method):
    y0 = np.array([1.0, 0.0, 0.0])
    jac = jo.ode_jacobian_fn(robertson, y0)
    opts = dict(method=method, rtol=1e-8, atol=1e-12)
    exact = solve_ivp(robertson, (0.0, 40.0), y0, jac=jac, **opts)
    fd = solve_ivp(robertson, (0.0, 40.0), y0, **opts)
    assert exact.success and fd.success and exact.njev > 0
    np.testing.assert_allclose(exact.y[:, -1], fd.y[:, -1], rtol=1e-5, atol=1e-10)
    y = exact.y[:, -1]      # the Jacobian itself against the closed form
    want = np.array([[-0.04, 1e4 * y[2], 1e4 * y[1]],
                     [0.04, -1e4 * y[2] - 6e7 * y[1], -1e4 * y[1]],
                     [0.0, 6e7 * y[1], 0.0]])
    j = jac(40.0, y)
    np.testing.assert_allclose(j.toarray() if sp.issparse(j) else j, want, rtol=1e-12)


@pytest.mark.parametrize("method", ["BDF", "Radau"])
def test_ode_jacobian_of_a_sparse_system_with_args(method):
    n, k = 60, 400.0
    u0 = np.linspace(0.0, 1.0, n)
    jac = jo.ode_jacobian_fn(diffusion, u0, k, sparse=True)
    j = jac(0.3, u0)
    assert sp.issparse(j) and j.nnz == 3 * n - 2
    opts = dict(method=method, rtol=1e-7, atol=1e-9, args=(k,))
    exact = solve_ivp(diffusion, (0.0, 2.0), u0, jac=jac, **opts)
    fd = solve_ivp(diffusion, (0.0, 2.0), u0, **opts)
    assert exact.success and fd.success
    np.testing.assert_allclose(exact.y[:, -1], fd.y[:, -1], rtol=1e-4, atol=1e-6)
    dense = jo.ode_jacobian_fn(diffusion, u0, k, sparse=False)(0.3, u0)
    assert isinstance(dense, np.ndarray) and dense.shape == (n, n)
    np.testing.assert_allclose(dense, j.toarray(), rtol=1e-13)


def test_ode_jacobian_refuses_bad_shapes():
    with pytest.raises(ValueError, match="y0 must be 1-D"):
        jo.ode_jacobian_fn(robertson, np.ones((3, 1)))
    with pytest.raises(ValueError, match=r"fun\(t0, y0\) has shape \(2,\)"):
        jo.ode_jacobian_fn(lambda t, y: y[:2], np.ones(3))
    with pytest.raises(ValueError, match="planned for y of shape"):
        jo.ode_jacobian_fn(robertson, np.ones(3))(0.0, np.ones(4))


def test_ode_jacobian_refuses_none_complex_and_a_missing_return():
    jac = jo.ode_jacobian_fn(robertson, np.array([1.0, 0.0, 0.0]))
    with pytest.raises(TypeError, match=r"ode_jacobian_fn\(robertson\): y is None"):
        jac(0.0, None)
    # a complex state cast to float would lose its imaginary part without a word
    with pytest.raises(TypeError, match=r"y is complex \(complex128, shape \(3,\)\).*real and "
                                        r"imaginary parts"):
        jac(0.0, np.ones(3) + 1j)
    with pytest.raises(TypeError, match="y0 is complex"):
        jo.ode_jacobian_fn(robertson, np.ones(3) + 0j)

    def forgets(t, y):
        np.sin(y)
    with pytest.raises(TypeError, match=r"ode_jacobian_fn\(forgets\): fun\(t0, y0\) returned "
                                        r"None; did it forget to return"):
        jo.ode_jacobian_fn(forgets, np.ones(3))
    # float32 states are read as float64, as solve_ivp integrates them
    j32 = jac(0.0, np.array([1.0, 1e-4, 1e-2], dtype=np.float32))
    np.testing.assert_allclose(j32, jac(0.0, np.array([1.0, 1e-4, 1e-2], dtype=np.float32)
                                        .astype(float)), rtol=0)
