"""Numerical edge cases: each follows the convention documented in the README."""
import numpy as np
import pytest

import dualad


def test_sqrt_and_norm_at_zero():
    with np.errstate(divide="ignore"):
        assert np.isinf(dualad.grad(np.sqrt)(0.0))          # the true derivative: +inf
    g = dualad.grad(lambda x: np.linalg.norm(x))(np.zeros(3))
    assert np.array_equal(g, np.zeros(3))                  # norm'(0) = 0 by convention


def test_log_at_zero_is_infinite_not_silent():
    with np.errstate(divide="ignore"):
        assert dualad.grad(np.log)(0.0) == np.inf
    with np.errstate(divide="ignore"), dualad.detect_anomaly():
        try:
            dualad.grad(np.log)(0.0)
        except dualad.AnomalyError as e:
            assert "'log'" in str(e)
        else:
            raise AssertionError("detect_anomaly did not flag log at 0")


def test_division_by_zero_propagates_inf_and_nan():
    with np.errstate(all="ignore"):
        gx, gy = dualad.grad(lambda x, y: x / y, argnums=(0, 1))(1.0, 0.0)
    assert np.isinf(gx) and np.isinf(gy)


def test_exp_overflow_gives_inf_value_and_derivative():
    with np.errstate(over="ignore"):
        v, g = dualad.value_and_grad(np.exp)(1000.0)
    assert np.isinf(v) and np.isinf(g)


def test_safe_where_pattern_keeps_gradient_finite():
    x = np.array([-1.0, 0.0, 4.0])
    safe = lambda x: np.sum(np.where(x > 0, np.sqrt(np.where(x > 0, x, 1.0)), 0.0))  # noqa: E731
    assert np.array_equal(dualad.grad(safe)(x), [0.0, 0.0, 0.25])


@pytest.mark.slow   # ~5 s; test_reliability's 100 000-operation chain is the quick subset's
def test_chain_of_a_million_operations():
    def chain(x):
        for _ in range(500_000):
            x = x * 1.0000001 + 1e-12
        return x
    g = dualad.grad(chain)(1.0)
    assert np.isclose(g, 1.0000001 ** 500_000)


def test_astype_between_float_precisions_keeps_the_derivative():
    x = np.array([0.3, 0.7])
    f = lambda x: np.sum(np.sin(x.astype(np.float32)).astype(np.float64) ** 2)  # noqa: E731
    exact = np.sin(2 * x)
    g_rev = dualad.grad(f)(x)
    _, g_fwd = dualad.jvp(f, (x,), (np.eye(2),))
    np.testing.assert_allclose(g_rev, exact, rtol=1e-6)
    np.testing.assert_allclose(g_fwd, exact, rtol=1e-6)
    _, t = dualad.jvp(lambda x: x.astype(np.float32) * 2, (x,), (np.ones(2),))
    assert t.dtype == np.float32
