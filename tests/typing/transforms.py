"""jit of a gradient, vmap over examples, scan over steps, checkpoint."""
from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

import dualad


def loss(w: NDArray[np.float64], x: NDArray[np.float64]) -> np.float64:
    s: np.float64 = np.sum(np.tanh(x @ w) ** 2)
    return s


w: NDArray[np.float64] = np.array([0.5, -0.25])
xs = np.random.default_rng(1).standard_normal((8, 2))

fast_grad = dualad.jit(dualad.grad(loss))
g = fast_grad(w, xs)
print(g.shape, fast_grad.cache_info())

per_example = dualad.vmap(dualad.grad(loss), in_axes=(None, 0))
gs = per_example(w, xs[:, None, :])
print(np.shape(gs))


def step(carry: NDArray[np.float64],
         x: NDArray[np.float64]) -> tuple[NDArray[np.float64], np.float64]:
    carry = np.tanh(carry + x)
    return carry, np.sum(carry)


def total(c0: NDArray[np.float64]) -> np.float64:
    carry, ys = dualad.scan(step, c0, xs)
    total: np.float64 = ys.sum()
    return total


print(dualad.grad(total)(np.zeros(2)).shape)
smooth = dualad.checkpoint(lambda v: np.sin(v) * v)
print(dualad.grad(lambda v: np.sum(smooth(v)))(w))


@dualad.jit
def model(v: NDArray[np.float64]) -> NDArray[np.float64]:
    return np.sin(v) ** 2


print(model(w).shape)

with dualad.detect_anomaly():                       # NaN or inf raises inside
    frozen = dualad.stop_gradient(w) * 2
print(frozen.shape)
sqrt = dualad.custom_root(lambda a: np.sqrt(a), lambda z, a: z ** 2 - a)
print(dualad.grad(lambda a: np.sum(sqrt(a)))(np.array([4.0, 9.0])))
t = dualad.trace(lambda x1, x2: np.log(x1) + x1 * x2 - np.sin(x2), 2.0, 5.0, mode="reverse")
print(t.to_text().splitlines()[0])
