import numpy as np

import dualad


def test_seed_polynomial_derivatives():
    f = lambda x: x ** 2 + 3 * x + 1  # noqa: E731
    assert dualad.derivative(f, 1)(2.0) == 7.0
    assert dualad.derivative(f, 2)(2.0) == 2.0


def test_third_derivative_of_sin():
    assert np.isclose(dualad.derivative(np.sin, 3)(1.0), -np.cos(1.0), rtol=1e-14)
