"""jvp, vjp and hvp on the README's function."""
from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

import dualad


def f(x: NDArray[np.float64]) -> NDArray[np.float64]:
    return np.stack([np.log(x[0]) + x[0] * x[1], np.sin(x[1])])


def scalar(x: NDArray[np.float64]) -> np.float64:
    y: np.float64 = np.log(x[0]) + x[0] * x[1] - np.sin(x[1])
    return y


x: NDArray[np.float64] = np.array([2.0, 5.0])
value, tangent = dualad.jvp(f, (x,), (np.array([1.0, 0.0]),))
print(value.shape, tangent.shape)
value, tangents = dualad.jvp(f, (x,), (np.eye(2),))     # both directions in one sweep
print(tangents.T)

out, pullback = dualad.vjp(f, x)
(ct,) = pullback(np.ones(2))
print(out.shape, ct.shape)
(cts,) = pullback(np.eye(2))                            # a batch of cotangents
print(cts.T @ np.ones(2))

hv = dualad.hvp(scalar, x, np.ones(2))
print(hv.shape, np.round(hv, 3))
