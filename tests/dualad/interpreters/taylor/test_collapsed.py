"""The collapsed sweep: first derivatives along every direction, second derivatives summed
as they go (the forward Laplacian), against the Hessian's trace."""
import numpy as np
import pytest

import dualad
from dualad import jacobians
from dualad.interpreters.taylor.collapsed import NotCollapsible, second_order_sum

rng = np.random.default_rng(3)
W1, b1, W2 = rng.normal(size=(6, 4)), rng.normal(size=6), rng.normal(size=(2, 6))


def mlp(x):
    h = np.tanh(W1 @ x + b1)
    return W2 @ (h * np.exp(-h ** 2)) / (1.0 + np.sum(x ** 2))


@pytest.mark.parametrize("f", [
    mlp,
    lambda x: np.sum(np.sin(x) * np.log1p(x ** 2)) ** 2,
    lambda x: np.einsum("i,i->", x, np.cos(x)) * np.arctan2(x[0], x[1] + 3.0),
    lambda x: (x @ x) * (np.outer(x, x) @ x)[1],
    lambda x: np.sum(np.abs(x - 0.1) ** 3) + dualad.scipy.special.gammaln(2.0 + x[0] ** 2),
])
def test_the_sum_of_second_derivatives_is_the_hessian_trace(f):
    x = np.array([0.3, -0.7, 1.1, 0.5])
    out = f(x)
    want = np.array([np.trace(jacobians.hessian(lambda v, i=i: np.ravel(f(v))[i])(x))
                     for i in range(np.size(out))]).reshape(np.shape(out))
    got = second_order_sum(f, x, np.eye(4))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(dualad.laplacian(f)(x), want, rtol=1e-12, atol=1e-12)


def test_any_directions_give_the_sum_of_their_second_derivatives():
    x = np.array([0.3, -0.7, 1.1, 0.5])
    V = rng.normal(size=(3, 4))
    H = jacobians.hessian(lambda v: mlp(v)[0])(x)
    np.testing.assert_allclose(second_order_sum(lambda v: mlp(v)[0], x, V),
                               np.einsum("si,ij,sj->", V, H, V), rtol=1e-12)


def test_a_primitive_without_a_collapsed_rule_is_named_and_the_laplacian_still_exact():
    f = lambda x: np.linalg.det(np.outer(x, x) + np.eye(3)) * np.max(x)   # noqa: E731
    x = np.array([0.3, -0.7, 1.1])
    with pytest.raises(NotCollapsible, match="det|max"):
        second_order_sum(f, x, np.eye(3))
    np.testing.assert_allclose(dualad.laplacian(f)(x), np.trace(jacobians.hessian(f)(x)),
                               rtol=1e-12)


def test_jit_and_vmap_of_the_collapsed_laplacian():
    lap = dualad.laplacian(lambda x: mlp(x)[1])
    xs = rng.normal(size=(3, 4))
    want = [np.trace(jacobians.hessian(lambda v: mlp(v)[1])(x)) for x in xs]
    np.testing.assert_allclose(dualad.vmap(lap)(xs), want, rtol=1e-12)
    j = dualad.jit(lap)
    np.testing.assert_allclose([j(x) for x in xs], want, rtol=1e-12)
