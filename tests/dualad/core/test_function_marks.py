"""``ctx.mark_non_differentiable`` (PyTorch's marker) makes a Function's output carry no
derivative in every mode, without calling the rules; marking anything but the output is
an error naming the class."""
import numpy as np
import pytest

import dualad
from dualad import jacobians


class Rank(dualad.Function):
    """The ranks of x's entries, as floats: piecewise constant, derivative zero."""

    @staticmethod
    def forward(ctx, x):
        r = np.argsort(np.argsort(x)).astype(float)
        ctx.mark_non_differentiable(r)
        return r

    @staticmethod
    def backward(ctx, g):   # wrong on purpose: it must not be called
        return g * 100.0

    @staticmethod
    def jvp(ctx, t):        # likewise
        return t * 100.0


X = np.array([3.0, 1.0, 2.0])
RANKS = np.array([2.0, 0.0, 1.0])


def f(x):
    return np.sum(Rank.apply(x) * x)


def test_reverse_forward_and_nested_see_a_constant():
    np.testing.assert_array_equal(dualad.grad(f)(X), RANKS)
    _, t = dualad.jvp(f, (X,), (np.ones(3),))
    assert t == RANKS.sum()
    np.testing.assert_array_equal(jacobians.jacrev(Rank.apply, X), np.zeros((3, 3)))
    np.testing.assert_array_equal(jacobians.jacfwd(Rank.apply, X), np.zeros((3, 3)))
    H = jacobians.hessian(lambda x: np.sum(Rank.apply(x) * x ** 2), X)
    np.testing.assert_array_equal(H, np.diag(2.0 * RANKS))


def test_under_vmap_and_jit():
    batch = np.stack([X, X[::-1]])
    np.testing.assert_array_equal(dualad.vmap(dualad.grad(f))(batch),
                                  np.stack([RANKS, RANKS[::-1]]))
    np.testing.assert_array_equal(dualad.jit(dualad.grad(f))(X), RANKS)


def test_marking_a_value_forward_does_not_return_names_the_class():
    class MarksItsInput(dualad.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_non_differentiable(x)
            return 2.0 * x

        @staticmethod
        def backward(ctx, g):
            return 2.0 * g

    with pytest.raises(ValueError, match="MarksItsInput.forward: ctx.mark_non_differentiable"):
        MarksItsInput.apply(X)
