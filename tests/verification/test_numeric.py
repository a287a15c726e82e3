import numpy as np

from dualad.verification.numeric import (central_difference, complex_step, numerical_jacobian,
                                  richardson, taylor_test)

x = np.array([0.3, -1.2, 2.0])
v = np.array([1.0, 0.5, -0.25])
f = lambda x: np.sin(x) * np.exp(0.3 * x)  # noqa: E731
Jv = (np.cos(x) * np.exp(0.3 * x) + 0.3 * np.sin(x) * np.exp(0.3 * x)) * v


def test_central_difference_principled_step():
    assert np.allclose(central_difference(f, x, v), Jv, rtol=1e-9, atol=1e-10)


def test_richardson_is_more_accurate_and_estimates_its_error():
    est, err = richardson(f, x, v)
    assert np.max(np.abs(est - Jv)) < 1e-11
    assert err < 1e-8
    crude = central_difference(f, x, v, h=1e-2)
    assert np.max(np.abs(est - Jv)) < np.max(np.abs(crude - Jv)) / 1e4


def test_complex_step_machine_precision():
    assert np.allclose(complex_step(f, x, v), Jv, rtol=1e-15, atol=1e-16)


def test_numerical_jacobian_shape_and_value():
    A = np.arange(6.0).reshape(2, 3)
    J = numerical_jacobian(lambda x: A @ x, x)
    assert J.shape == (2, 3) and np.allclose(J, A, atol=1e-8)


def test_taylor_test_order_two_right_one_wrong():
    g = lambda x: np.sum(np.sin(x) ** 2)  # noqa: E731
    right = lambda x: 2 * np.sin(x) * np.cos(x)  # noqa: E731
    wrong = lambda x: 2 * np.sin(x) * np.cos(x) * 1.01  # noqa: E731
    order_right, _, _ = taylor_test(g, right, x)
    order_wrong, _, _ = taylor_test(g, wrong, x)
    assert 1.8 < order_right < 2.2
    assert 0.8 < order_wrong < 1.2
