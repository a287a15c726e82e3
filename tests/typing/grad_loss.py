"""A least-squares loss: its gradient, value and gradient, several arguments, an auxiliary."""
from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

import dualad

rng = np.random.default_rng(0)
X = rng.standard_normal((20, 3))
y = X @ np.array([1.0, -2.0, 0.5])


def loss(w: NDArray[np.float64], X: NDArray[np.float64],
         y: NDArray[np.float64]) -> np.floating[Any]:
    r = X @ w - y
    return np.mean(r ** 2)


def loss_aux(w: NDArray[np.float64]) -> tuple[np.floating[Any], dict[str, np.float64]]:
    r = X @ w - y
    return np.mean(r ** 2), {"max": np.max(np.abs(r))}


w: NDArray[np.float64] = np.zeros(3)
for _ in range(200):
    g = dualad.grad(loss)(w, X, y)
    assert g.shape == (3,)
    w = w - 0.1 * g
print(np.round(w, 3))

value, g = dualad.value_and_grad(loss)(w, X, y)
print(float(value), g.dtype, np.linalg.norm(g))

dw, dX = dualad.grad(loss, argnums=(0, 1))(w, X, y)
print(dw.shape, dX.shape)

g2, aux = dualad.grad(loss_aux, has_aux=True)(w)
print(g2.T, float(aux["max"]))
(v, aux2), g3 = dualad.value_and_grad(loss_aux, has_aux=True)(w)
print(float(v), aux2["max"] >= 0, g3.shape)

second = dualad.derivative(np.sin, 2)(1.0)
print(np.isclose(second, -np.sin(1.0)))

dX_only = dualad.grad(loss, argnums=1)(w, X, y)     # another argument: its gradient
print(np.shape(dX_only))
