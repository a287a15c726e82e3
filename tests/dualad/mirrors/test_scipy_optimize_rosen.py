"""dualad.scipy.optimize's Rosenbrock family: SciPy's values, derivatives against finite
differences, and each closed form against the derivative of the one before it."""
import numpy as np
import pytest
import scipy.optimize as so

import dualad.scipy.optimize as do
from dualad import jacobians
from dualad.verification import check_grads

X = np.array([0.3, -0.7, 1.2, 0.5, -1.1])
P = np.array([1.0, -2.0, 0.5, 3.0, 0.25])


def test_values_are_scipys():
    np.testing.assert_allclose(do.rosen(X), so.rosen(X), rtol=1e-14)
    np.testing.assert_allclose(do.rosen_der(X), so.rosen_der(X), rtol=1e-14)
    np.testing.assert_allclose(do.rosen_hess(X), so.rosen_hess(X), rtol=1e-14)
    np.testing.assert_allclose(do.rosen_hess_prod(X, P), so.rosen_hess_prod(X, P), rtol=1e-14)
    cols = np.random.default_rng(1).normal(size=(4, 3))   # one point per column, as SciPy
    np.testing.assert_allclose(do.rosen(cols), so.rosen(cols), rtol=1e-14)


@pytest.mark.parametrize("f", [do.rosen, do.rosen_der, lambda x: do.rosen_hess_prod(x, P),
                               lambda x: do.rosen_hess(x)[1:3, :]])
def test_derivatives_against_finite_differences(f):
    check_grads(f, (X,), order=2)


def test_each_closed_form_is_the_derivative_of_the_previous():
    np.testing.assert_allclose(jacobians.jacobian(do.rosen, X), so.rosen_der(X), rtol=1e-12)
    np.testing.assert_allclose(jacobians.jacobian(do.rosen_der, X), so.rosen_hess(X),
                               rtol=1e-12)
    np.testing.assert_allclose(jacobians.hessian(do.rosen, X), so.rosen_hess(X), rtol=1e-12)


def test_misuse_names_the_argument():
    with pytest.raises(ValueError, match=r"x of shape \(1,\)"):
        do.rosen(np.ones(1))
    with pytest.raises(TypeError, match="x is None"):
        do.rosen(None)
