"""Issue 31: the prepared derivatives (jacobians.plan, jacobians.optimize.*, ode_jacobian_fn)
trace once and replay through dualad.jit by default; jit=False opts out. A replay is never
stale, and a function jit cannot trace runs without it after one JitFallbackWarning."""
import threading
import warnings

import numpy as np
import pytest
import scipy.optimize
import scipy.sparse as sp

import dualad
from dualad import jacobians
from dualad.jacobians import optimize as O
from dualad.interpreters.staging.default import JitFallbackWarning

X = np.linspace(0.2, 1.1, 6)


def loss(x, c=1.0):
    return np.sum(c * x[1:] ** 2 * x[:-1]) + np.sum(np.sin(x))


def residual(x, c=1.0):
    return np.concatenate([x[1:] - c * x[:-1] ** 2, [x[0] - 1.0]])


def _dense(a):
    return a.toarray() if sp.issparse(a) else np.asarray(a)


HELPERS = {
    "gradient": (lambda jit: O.gradient(loss, X, jit=jit), 1),
    "value_and_gradient": (lambda jit: O.value_and_gradient(loss, X, jit=jit), 1),
    "hessian_fn": (lambda jit: O.hessian_fn(loss, X, jit=jit), 1),
    "hessian_fn_sparse": (lambda jit: O.hessian_fn(loss, X, sparse=True, jit=jit), 1),
    "sparse_hessian_fn": (lambda jit: O.sparse_hessian_fn(loss, X, jit=jit), 1),
    "jacobian_fn": (lambda jit: O.jacobian_fn(residual, X, jit=jit), 1),
    "sparse_jacobian_fn": (lambda jit: O.sparse_jacobian_fn(residual, X, jit=jit), 1),
    "hessp_fn": (lambda jit: O.hessp_fn(loss, X, jit=jit), 2),
    "plan": (lambda jit: jacobians.plan(residual, X, output="dense", jit=jit), 1),  # modes may differ
    "plan_sparse": (lambda jit: jacobians.plan(residual, X, mode="sparse-forward", jit=jit), 1),
}


def _call(h, nargs, x, *more):
    return h(x, np.cos(x), *more) if nargs == 2 else h(x, *more)


def _same(a, b):
    if isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b)
        for u, v in zip(a, b):
            _same(u, v)
        return
    assert type(a) is type(b)
    np.testing.assert_allclose(_dense(a), _dense(b), rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("name", sorted(HELPERS))
def test_replays_the_eager_values(name):
    make, nargs = HELPERS[name]
    jitted, eager = make(True), make(False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", JitFallbackWarning)
        for k in range(4):
            x = X + 0.1 * k
            _same(_call(jitted, nargs, x), _call(eager, nargs, x))


@pytest.mark.parametrize("name", ["gradient", "hessian_fn", "jacobian_fn", "hessp_fn",
                                  "sparse_jacobian_fn", "sparse_hessian_fn"])
def test_extra_arguments_are_arguments_not_baked_in(name):
    make, nargs = HELPERS[name]
    h, e = make(True), make(False)
    for c in (1.0, 2.5, np.float64(-3.0)):
        _same(_call(h, nargs, X, c), _call(e, nargs, X, c))


def test_the_function_runs_once_per_trace_not_per_call():
    calls = []

    def f(x):
        calls.append(1)
        return np.sum(x ** 3)

    jac = O.gradient(f, X)
    for k in range(5):
        np.testing.assert_allclose(jac(X + k), 3 * (X + k) ** 2)
    traced = len(calls)
    for k in range(5):
        jac(X - k)
    assert len(calls) == traced          # replays: f's Python code does not run
    calls.clear()
    jac_eager = O.gradient(f, X, jit=False)
    for k in range(5):
        jac_eager(X + k)
    assert len(calls) == 5


def test_a_closed_over_list_that_changes_is_not_stale():
    coef = [1.0, 2.0]

    def f(x):
        return coef[0] * np.sum(x ** 2) + coef[1] * np.sum(x)

    for h in (O.gradient(f, X), jacobians.plan(lambda x: np.atleast_1d(f(x)), X)):
        first = _dense(h(X)).ravel()
        np.testing.assert_allclose(first, 2 * X + 2.0)
        coef[0], coef[1] = 3.0, -1.0
        np.testing.assert_allclose(_dense(h(X)).ravel(), 6 * X - 1.0)
        coef[0], coef[1] = 1.0, 2.0


def test_a_replayed_sparse_jacobian_where_f_takes_another_branch():
    """The pattern depends on a decision of f: at x[0] > 0 row 0 reads x[1], else x[2]."""
    def r(x):
        head = x[0] * x[1] if x[0] > 0 else x[0] * x[2]
        return np.concatenate([[head], x[1:] ** 2])

    x_pos = np.array([1.0, 2.0, 3.0, 4.0])
    x_neg = np.array([-1.0, 2.0, 3.0, 4.0])
    for jac in (O.sparse_jacobian_fn(r, x_pos), jacobians.plan(r, x_pos, mode="sparse-reverse"),
                O.sparse_jacobian_fn(r, x_pos, mode="sparse-forward")):
        for x in (x_pos, x_neg, x_pos, x_neg):
            np.testing.assert_array_equal(_dense(jac(x)), jacobians.jacobian(r, x))


def test_a_replayed_sparse_hessian_where_f_takes_another_branch():
    def f(x):
        return np.sum(x ** 2) + (x[0] * x[1] if x[0] > 0 else x[0] * x[3])

    x_pos, x_neg = np.array([1.0, 2.0, 3.0, 4.0]), np.array([-1.0, 2.0, 3.0, 4.0])
    hess = O.sparse_hessian_fn(f, x_pos)
    for x in (x_pos, x_neg, x_pos, x_neg):
        np.testing.assert_array_equal(hess(x).toarray(), jacobians.hessian(f, x))


def test_value_and_gradient_returns_a_float_and_an_array():
    vg = O.value_and_gradient(loss, X)
    for k in range(3):
        v, g = vg(X + k)
        assert type(v) is float and isinstance(g, np.ndarray) and g.dtype == np.float64
        np.testing.assert_allclose(v, loss(X + k))


def test_a_scalar_point_as_scipy_passes_it():
    f = lambda x: (x[0] - 2.0) ** 4 + x[0] ** 2   # noqa: E731
    res = [scipy.optimize.minimize(**O.minimize_kwargs(f, np.array([0.5]), method="trust-exact",
                                                       jit=jit)) for jit in (True, False)]
    assert res[0].success and res[0].x.shape == (1,)
    np.testing.assert_array_equal(res[0].x, res[1].x)
    h = O.hessian_fn(f, 0.5)
    np.testing.assert_allclose(h(np.array([1.0])), [[14.0]])


def test_float32_points():
    x32 = X.astype(np.float32)
    for name in ("gradient", "jacobian_fn", "plan", "hessian_fn"):
        h, e = HELPERS[name][0](True), HELPERS[name][0](False)
        _same(h(x32), e(x32))
        _same(h(x32 + 1), e(x32 + 1))


def test_a_returned_jacobian_written_into_does_not_change_later_calls():
    A = np.arange(12.0).reshape(3, 4)
    for jac in (O.jacobian_fn(lambda x: A @ x, np.ones(4)),
                jacobians.plan(lambda x: A @ x, np.ones(4))):
        for _ in range(3):
            J = jac(np.ones(4))
            np.testing.assert_array_equal(J, A)
            J[0, 0] = 99.0


def test_threads_share_one_prepared_jacobian():
    jac = O.jacobian_fn(residual, X)
    points = [X + 0.01 * i for i in range(16)]
    out = [None] * len(points)

    def work(i):
        out[i] = jac(points[i])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(points))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for p, J in zip(points, out):
        np.testing.assert_allclose(J, jacobians.jacobian(residual, p), rtol=1e-14)


def test_grad_through_a_prepared_plan():
    p = jacobians.plan(residual, X, output="dense")   # a sparse mode may be chosen
    p(X)                                           # traced and replayed outside, too

    def objective(x):
        return dualad.numpy.sum(p(x) ** 2)

    p_eager = jacobians.plan(residual, X, jit=False, output="dense")
    expected = dualad.grad(lambda x: dualad.numpy.sum(p_eager(x) ** 2))(X + 0.3)
    np.testing.assert_allclose(dualad.grad(objective)(X + 0.3), expected, rtol=1e-13)
    np.testing.assert_allclose(dualad.jit(dualad.grad(objective))(X + 0.3), expected, rtol=1e-13)


def test_jit_takes_a_bool():
    with pytest.raises(TypeError, match="jit= takes True or False"):
        O.gradient(loss, X, jit="no")
    with pytest.raises(TypeError, match="jit= takes True or False"):
        jacobians.plan(residual, X, jit=1.5)


def test_ode_jacobian_in_bdf_replays():
    def robertson(t, y):
        return np.array([-0.04 * y[0] + 1e4 * y[1] * y[2],
                         0.04 * y[0] - 1e4 * y[1] * y[2] - 3e7 * y[1] ** 2,
                         3e7 * y[1] ** 2])

    from scipy.integrate import solve_ivp
    y0 = np.array([1.0, 0.0, 0.0])
    sols = [solve_ivp(robertson, (0.0, 40.0), y0, method="BDF", rtol=1e-6, atol=1e-10,
                      jac=O.ode_jacobian_fn(robertson, y0, jit=jit)) for jit in (True, False)]
    np.testing.assert_array_equal(sols[0].y[:, -1], sols[1].y[:, -1])
    jac = O.ode_jacobian_fn(robertson, y0)
    jac(0.0, y0)
    assert list(jac.plan.replayed.cache_info().values()) == [1]


def test_a_value_independent_sparse_plan_is_traced_once():
    def bratu(u):
        padded = np.concatenate([np.zeros(1), u, np.zeros(1)])
        return (padded[:-2] - 2 * u + padded[2:]) * 31.0 ** 2 + np.exp(u)

    x0 = np.linspace(0.1, 0.9, 30)
    for mode in ("sparse-forward", "sparse-reverse"):
        p = jacobians.plan(bratu, x0, mode=mode, output="sparse")
        for k in range(4):
            x = np.cos(np.arange(30.0) + k)
            np.testing.assert_allclose(p(x).toarray(), jacobians.jacobian(bratu, x), rtol=1e-12)
        assert list(p.replayed.cache_info().values()) == [1] and p.redetections == 0


def test_where_with_a_changing_mask_replays_right_values():
    def f(v):
        return np.where(v > 0, v ** 2, np.sin(v))

    p = jacobians.plan(f, np.array([1.0, -1.0, 2.0]), mode="sparse-forward", output="sparse")
    for x in [np.array([-1.0, 1.0, 2.0]), np.array([-2.0, 3.0, 1.0]), np.array([1.0, -1.0, 2.0])]:
        np.testing.assert_allclose(p(x).toarray(), jacobians.jacobian(f, x), atol=1e-12)


def test_an_output_whose_length_follows_a_mask_replays_as_dense():
    def f(v):
        return np.sin(v[v > 0])

    p = jacobians.plan(f, np.array([3.0, 1.5, 2.0, -0.5]), mode="sparse-forward", output="dense")
    with warnings.catch_warnings():
        warnings.simplefilter("error", JitFallbackWarning)
        for x in [np.array([1.0, 3.0, 2.0, 0.5]), np.array([-1.0, 2.0, -3.0, 4.0])]:
            np.testing.assert_allclose(p(x), jacobians.jacobian(f, x), atol=1e-12)


def test_an_argument_jit_cannot_take_falls_back_with_one_warning():
    import types

    def f(x, params):
        return params.c * x[0] ** 3 + np.sum(x ** 2)

    x = np.array([1.0, 2.0])
    hp = O.hessp_fn(f, x, types.SimpleNamespace(c=1.0))
    with pytest.warns(JitFallbackWarning, match=r"hessp_fn\(f\).*jit=False") as seen:
        out = [hp(x, np.ones(2), types.SimpleNamespace(c=2.0)) for _ in range(3)]
    assert sum(issubclass(w.category, JitFallbackWarning) for w in seen) == 1
    for o in out:
        np.testing.assert_allclose(o, [14.0, 2.0])
    g = O.gradient(f, x, types.SimpleNamespace(c=1.0))
    with pytest.warns(JitFallbackWarning):
        np.testing.assert_allclose(g(x), [5.0, 4.0])


def test_the_users_own_error_is_raised_as_without_jit():
    def r(x):
        if x[0] > 5:
            raise ValueError("x[0] out of the model's range")
        return x ** 2

    jac = O.jacobian_fn(r, np.ones(2))
    jac(np.ones(2))
    with warnings.catch_warnings():
        warnings.simplefilter("error", JitFallbackWarning)
        with pytest.raises(ValueError, match="out of the model's range"):
            jac(np.array([6.0, 1.0]))
        np.testing.assert_allclose(jac(np.array([2.0, 3.0])), np.diag([4.0, 6.0]))
