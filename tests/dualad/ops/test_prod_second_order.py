"""np.prod's derivatives at every order, where an entry is zero or tiny: its rules divide
(ans / x) only at first order on plain values; the derivatives of that quotient cancel
catastrophically as an entry goes to zero (P/x_i − P/x_i), so a traced argument takes the
division-free product of the other entries."""
import numpy as np
import pytest

import dualad
from dualad import jacobians


def test_the_hessian_of_a_product_with_a_tiny_entry_is_right():
    f = lambda z: np.prod(np.tanh(z))   # noqa: E731
    z = np.array([0.5, 2e-76])
    H = jacobians.hessian(f)(z)
    sech2 = 1 - np.tanh(0.5) ** 2
    np.testing.assert_allclose(H[0, 1], sech2, rtol=1e-14)
    assert abs(H[0, 0]) < 1e-70 and abs(H[1, 1]) < 1e-70      # was -4e59 through ans / x
    np.testing.assert_allclose(dualad.hvp(f, z, np.array([0.0, 1.0])), H[:, 1], rtol=1e-14)


@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)])
def test_second_order_matches_the_expanded_product(axis):
    x = np.array([[1.5, 1e-200, 2.0], [3.0, 0.0, 0.5]])
    g = lambda v: np.sum(np.prod(v, axis=axis) * np.arange(1.0, 1 + np.size(np.prod(x, axis=axis))).reshape(np.shape(np.prod(x, axis=axis))))  # noqa: E501,E731
    H = jacobians.hessian(g)(x).reshape(6, 6)
    # finite differences of the exact gradient (the gradient is a polynomial in x)
    flat = x.ravel()
    eps = 1e-6
    G = lambda u: dualad.grad(g)(u.reshape(2, 3)).ravel()   # noqa: E731
    fd = np.array([(G(flat + eps * e) - G(flat - eps * e)) / (2 * eps) for e in np.eye(6)]).T
    np.testing.assert_allclose(H, fd, rtol=1e-6, atol=1e-6)


def test_taylor_coefficients_of_a_product_through_zero():
    f = lambda t: np.prod(np.array([1.0, 2.0, 3.0]) * t + np.array([0.0, 1e-300, 1.0]))  # noqa: E731
    np.testing.assert_allclose(dualad.derivative(f, 3)(0.5), 36.0, rtol=1e-14)   # 6t³ + 2t²
    np.testing.assert_allclose(dualad.derivative(f, 2)(0.0), 4.0, rtol=1e-14)
