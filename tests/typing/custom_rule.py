"""A custom primitive with its VJP, checked by the rule checker and by check_grads; JAX-style
custom_jvp and custom_vjp for closures."""
from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

import dualad
from dualad.transforms.custom import FunctionCtx
from dualad.verification import central_difference, check_grads, check_rule, taylor_test


@dualad.primitive
def softplus(x: NDArray[np.float64]) -> NDArray[np.float64]:
    return np.logaddexp(0.0, x)


softplus.defvjp(lambda g, ans, x: g / (1.0 + np.exp(-x)))
softplus.defjvp(lambda t, ans, x: t / (1.0 + np.exp(-x)))


@dualad.primitive
def cube(x: NDArray[np.float64]) -> NDArray[np.float64]:
    return x ** 3


cube.defderiv(lambda ans, x: 3 * x ** 2)

report = check_rule(softplus)
print(report.ok, check_rule(cube).ok)
x: NDArray[np.float64] = np.array([0.3, -1.2])
check_grads(lambda v: softplus(v) * cube(v), x, order=2)
print(dualad.grad(lambda v: np.sum(softplus(v)))(x).shape)


class Square(dualad.Function):
    """The PyTorch-style spelling: forward and backward as static methods."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: NDArray[np.float64]) -> NDArray[np.float64]:
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx: FunctionCtx, g: NDArray[np.float64]) -> NDArray[np.float64]:
        (x,) = ctx.saved_tensors
        result: NDArray[np.float64] = 2 * x * g
        return result


print(dualad.grad(lambda v: np.sum(Square.apply(v)))(x))
order, steps, residuals = taylor_test(lambda v: np.sum(v ** 2), lambda v: 2 * v, x)
print(order > 1.5, central_difference(np.sin, x, np.ones(2)).shape)


@dualad.custom_jvp
def logistic(x: NDArray[np.float64]) -> NDArray[np.float64]:
    return 1.0 / (1.0 + np.exp(-x))


@logistic.defjvp
def _logistic_jvp(primals: tuple[NDArray[np.float64]],
                  tangents: tuple[NDArray[np.float64]]
                  ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    (v,), (t,) = primals, tangents
    y = logistic(v)
    return y, y * (1.0 - y) * t


@dualad.custom_vjp
def clipped(x: NDArray[np.float64]) -> NDArray[np.float64]:
    return x * 1.0


def _clipped_fwd(x: NDArray[np.float64]) -> tuple[NDArray[np.float64], None]:
    return x * 1.0, None


def _clipped_bwd(res: None, ct: NDArray[np.float64]) -> tuple[NDArray[np.float64]]:
    return (np.clip(ct, -1.0, 1.0),)


clipped.defvjp(_clipped_fwd, _clipped_bwd)
print(check_rule(logistic).ok, check_rule(clipped, args=(x,)).ok)
y: NDArray[np.float64] = logistic(x)
print(y.shape, dualad.grad(lambda v: np.sum(3.0 * clipped(logistic(v))))(x).shape)
