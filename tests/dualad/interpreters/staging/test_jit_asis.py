"""jit(f)(x) == f(x) for code as users write it: NumPy functions jitted directly, lists
of traced scalars, in-place writes, functions without a rule, non-differentiable
parameters; and grad(jit(f)) never silently different from grad(f). (Found by running
autograd's own test suite under jit: bench/outside/autograd_suite.py --jit.)"""
import warnings

import numpy as np
import pytest
import scipy.stats

import dualad
from dualad import grad, jit
from dualad.verification import check_grads


def traces(jitted):
    return sum(jitted.cache_info().values())


def test_numpy_functions_jitted_directly_and_a_function_named_like_a_primitive():
    x = np.arange(6.0).reshape(2, 3)
    s = jit(np.sum)
    for _ in range(2):
        np.testing.assert_array_equal(s(x, axis=0), [3.0, 5.0, 7.0])

    def sum(a):     # noqa: A001 - the point: the generated function is called `sum` too
        return np.sum(a * 2.0, axis=1)
    j = jit(sum)
    for _ in range(2):
        np.testing.assert_array_equal(j(x), [6.0, 24.0])
    m = jit(np.matmul)
    np.testing.assert_array_equal(m(x, x.T), x @ x.T)
    np.testing.assert_array_equal(m(x, x.T), x @ x.T)


def test_lists_of_traced_scalars_come_back_as_arrays():
    def f(x):
        return np.array([x, x * 2.0, x + 2.5]), np.r_[x, 1.0]
    j = jit(f)
    for x in (3.0, 3.0, 4.0):
        a, b = j(x)
        assert a.dtype == np.float64 and b.dtype == np.float64
        np.testing.assert_array_equal(a, [x, 2 * x, x + 2.5])
        np.testing.assert_array_equal(b, [x, 1.0])
    assert grad(lambda x: np.sum(j(x)[0]))(3.0) == 4.0


def test_object_array_of_plain_entries_is_numeric():
    def f(x):
        return np.min(np.array([[x, x, x], [x, 0.5, 0.5], [0.5, 0.5, 0.5]]), axis=0)
    j = jit(f)
    for x in (1.0, 1.0, -1.0):
        got = j(x)
        assert got.dtype == np.float64
        np.testing.assert_array_equal(got, [min(x, 0.5)] * 3)
    check_grads(j, (np.array(-1.0),))


def test_in_place_write_into_an_argument_is_refused_copy_works():
    def writes(a, b):
        a[1] = b
        return a
    with pytest.raises(TypeError, match=r"traced argument 0 \(shape \(5,\)\) was written in "
                                         r"place.*x\.copy\(\)"):
        jit(writes)(np.ones(5), 3.0)

    def copies(a, b):
        a = a.copy()
        a[1] = b
        a += 1.0
        return a
    j = jit(copies)
    np.testing.assert_array_equal(j(np.ones(3), 3.0), [2.0, 4.0, 2.0])
    np.testing.assert_array_equal(j(np.ones(3), 5.0), [2.0, 6.0, 2.0])
    assert traces(j) == 1
    assert grad(lambda b: np.sum(j(np.ones(3), b) ** 2))(3.0) == 8.0    # d/db (b + 1)^2


def test_grad_of_jit_never_drops_the_derivative_of_a_value_read():
    f = lambda x: x * float(x)          # grad(f) refuses float(); jit(f) guards it
    assert jit(f)(2.0) == 4.0
    with pytest.raises(TypeError, match="float"):
        grad(f)(2.0)
    with pytest.raises(TypeError, match="float"):
        grad(jit(f))(2.0)               # not 2.0: the derivative through float(x) is lost
    with pytest.raises(TypeError, match="float"):
        dualad.jvp(jit(f), (2.0,), (1.0,))
    g = lambda x: np.sum(x * x.item())
    with pytest.raises(TypeError):
        grad(jit(g))(np.array(2.0))


def test_grad_of_jit_follows_rebound_globals_and_attributes():
    scale = {"k": 0.1}

    class Box:
        def __init__(self, w):
            self.w = w

        @jit
        def f(self, x):
            return x * x * self.w
    b = Box(1.0)
    assert grad(lambda x: b.f(x))(1.0) == 2.0
    b.w = 3.0
    assert grad(lambda x: b.f(x))(1.0) == 6.0
    j = jit(lambda x: x * x * LR)
    assert grad(j)(1.0) == pytest.approx(2 * LR)
    globals()["LR"] = 0.4
    try:
        assert grad(j)(1.0) == pytest.approx(0.8)
    finally:
        globals()["LR"] = 0.1
    assert scale


LR = 0.1


def test_function_without_a_rule_runs_on_jit_values_and_raises_under_grad():
    y = np.array([0.0, np.nan, np.inf, -np.inf])

    def f(x):
        return np.sum(np.sin(np.nan_to_num(x + y)))    # nan_to_num uses isinf(x) & (x > 0)
    x = np.array([0.3, -0.2, 1.0, 2.0])
    j = jit(f)
    want = np.sin(0.3) + np.sin(np.finfo(float).max) + np.sin(np.finfo(float).min)
    assert j(x) == pytest.approx(want) and j(x) == pytest.approx(want)
    g = np.array([np.cos(0.3), 0.0, 0.0, 0.0])
    np.testing.assert_allclose(grad(j)(x), g)
    np.testing.assert_allclose(jit(grad(f))(x), g)
    counts = jit(lambda i: np.bincount(i))
    np.testing.assert_array_equal(counts(np.array([0, 1, 1, 3])), [1, 2, 0, 1])
    np.testing.assert_array_equal(counts(np.array([2, 2])), [0, 0, 2])        # guarded
    h = lambda x: np.sum(np.bitwise_and(x.astype(int), 1) * x)
    with pytest.raises(NotImplementedError, match="no derivative rule for numpy.bitwise_and"):
        grad(lambda x: np.sum(np.bitwise_and(x, 1)))(np.ones(2))
    assert jit(h)(np.array([1.0, 2.0, 3.0])) == 4.0


def test_non_differentiable_parameter_of_a_scipy_function():
    from dualad.scipy import stats
    j = jit(lambda k, mu: stats.poisson.logpmf(k, mu))
    k = np.array([1.0, 2.0, 3.0])
    for kk, mu in ((k, 2.0), (k, 3.0), (k + 1, 2.0)):
        np.testing.assert_allclose(j(kk, mu), scipy.stats.poisson.logpmf(kk, mu), rtol=1e-13)
    assert grad(lambda mu: np.sum(j(k, mu)))(2.0) == pytest.approx(np.sum(k / 2.0 - 1.0))
    with pytest.raises(NotImplementedError, match="k is not differentiable"):
        jit(grad(lambda k: np.sum(stats.poisson.logpmf(k, 2.0))))(k)


def test_after_thrashing_values_stay_right_and_grad_says_what_grad_of_f_says():
    def f(x):
        return np.sum(x ** 2) * (1.0 if float(np.sum(x)) > 0 else -1.0)
    j = jit(f, max_traces=2)
    with pytest.warns(dualad.JitRetraceWarning, match="traced 2 times"):
        for k in range(1, 5):
            np.testing.assert_allclose(j(np.full(2, float(k))), 2 * k * k)
    np.testing.assert_allclose(j(np.full(2, -3.0)), -18.0)
    with pytest.raises(TypeError, match="float"):
        grad(f)(np.ones(2))
    with pytest.raises(TypeError, match="float"):
        grad(j)(np.ones(2))
