"""A Hessian of complex inputs is refused, with what to write instead.

Of a complex x, a real f is not holomorphic: its second derivative is linear over the reals
only, not one complex matrix. Before this check, the dense ``hessian`` returned the
symmetrized (H + Hᵀ)/2 of the columns ∂∇f/∂Re x_j and ``sparse_hessian`` one triangle of
them: two different matrices, neither the second derivative (found in issue 35)."""
import numpy as np
import pytest

import dualad
from dualad import jacobians


def chain(x):
    return np.sum(np.abs(x[1:] * x[:-1]) ** 2) + np.sum(np.real(x) ** 3)


X = np.array([1 + 2j, 0.5 - 1j, 2 + 0.25j, -0.3 + 0.7j])


@pytest.mark.parametrize("api", ["hessian", "sparse_hessian"])
def test_plain_and_traced_complex_inputs_are_refused_with_the_split_to_write(api):
    fn = getattr(jacobians, api)
    with pytest.raises(TypeError) as e:
        fn(chain, X)
    msg = str(e.value)
    for needle in (f"{api}(chain)", "complex128", "(4,)", "linear over the reals",
                   "u[:n] + 1j * u[n:]", "np.concatenate([x.real, x.imag])",
                   "jacobians.hvp(chain, x, v)"):
        assert needle in msg, needle
    with pytest.raises(TypeError, match="linear over the reals"):
        dualad.grad(lambda t: fn(chain, t * X).sum().real)(1.0)


def test_the_split_the_message_suggests_is_the_real_second_derivative():
    n = len(X)

    def split(u):
        return chain(u[:n] + 1j * u[n:])
    u = np.concatenate([X.real, X.imag])
    H = jacobians.hessian(split, u)
    assert np.array_equal(H, H.T)
    np.testing.assert_allclose(jacobians.sparse_hessian(split, u).toarray(), H, rtol=1e-12,
                               atol=1e-12)
    # column j of the real Hessian is the derivative of the real gradient along u_j
    g = dualad.grad(split)
    eps = 1e-6
    for j in range(2 * n):
        e = np.zeros(2 * n)
        e[j] = eps
        np.testing.assert_allclose(H[:, j], (g(u + e) - g(u - e)) / (2 * eps), rtol=1e-6,
                                   atol=1e-6)


def test_hvp_of_a_real_function_of_complex_input_still_works():
    v = np.ones(4, complex)
    got = jacobians.hvp(chain, X, v)
    ref = dualad.jvp(dualad.grad(chain), (X,), (v,))[1]
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)
