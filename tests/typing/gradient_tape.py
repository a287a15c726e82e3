"""TensorFlow's habits: a GradientTape's gradient, Jacobian and nested second derivative."""
from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

import dualad

x: NDArray[np.float64] = np.array([0.5, 1.0, 2.0])
with dualad.GradientTape(persistent=True) as tape:
    xw = tape.watch(x)
    y = np.sum(np.sin(xw) * xw)
    v = xw ** 2
g: NDArray[np.float64] = tape.gradient(y, x)
J: NDArray[np.float64] = tape.jacobian(v, x)
print(np.allclose(g, np.cos(x) * x + np.sin(x)), J.shape)

s = np.array(3.0)
with dualad.GradientTape() as outer:
    with dualad.GradientTape() as inner:
        sw = inner.watch(outer.watch(s))
        cube = sw * sw * sw
    first = inner.gradient(cube, s)
second = outer.gradient(first, s)
print(float(second))
with dualad.GradientTape() as paused:
    pw = paused.watch(x)
    with paused.stop_recording():
        constant = pw * 2.0
    print(paused.watched_variables()[0] is x)
