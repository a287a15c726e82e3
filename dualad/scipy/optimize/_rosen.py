"""SciPy's Rosenbrock test functions on traced values (``dualad.scipy.optimize.rosen``, ...).

``rosen(x) = Σ_{i<n-1} 100 (x_{i+1} − x_i²)² + (1 − x_i)²`` (Rosenbrock 1960, SciPy's
convention, summed over axis 0 so that a 2-D x holds one point per column), and its
gradient, Hessian and Hessian-vector product in closed form, as SciPy computes them:
written with NumPy operations, so they differentiate to any order in both modes (the
derivative of ``rosen_der`` is ``rosen_hess``).
"""
from __future__ import annotations

__all__ = ["rosen", "rosen_der", "rosen_hess", "rosen_hess_prod"]

import numpy as np


def rosen(x):
    """The Rosenbrock function, Σ 100 (x_{i+1} − x_i²)² + (1 − x_i)², over axis 0."""
    x = _vector(x)
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2.0) ** 2.0 + (1 - x[:-1]) ** 2.0, axis=0)


def rosen_der(x):
    """∇rosen: ∂/∂x_j = 200 (x_j − x_{j−1}²) − 400 x_j (x_{j+1} − x_j²) − 2 (1 − x_j)."""
    x = _vector(x)
    xm, xm_m1, xm_p1 = x[1:-1], x[:-2], x[2:]
    middle = 200 * (xm - xm_m1 ** 2) - 400 * (xm_p1 - xm ** 2) * xm - 2 * (1 - xm)
    first = -400 * x[0] * (x[1] - x[0] ** 2) - 2 * (1 - x[0])
    last = 200 * (x[-1] - x[-2] ** 2)
    return np.concatenate([np.reshape(first, (1,)), middle, np.reshape(last, (1,))])


def rosen_hess(x):
    """The Hessian: tridiagonal, diagonal 1200 x_j² − 400 x_{j+1} + 202 (ends: 1200 x_0²
    − 400 x_1 + 2 and 200), off-diagonals −400 x_j."""
    x = _vector(x)
    off = -400 * x[:-1]
    diagonal = np.concatenate([
        np.reshape(1200 * x[0] ** 2 - 400 * x[1] + 2, (1,)),
        202 + 1200 * x[1:-1] ** 2 - 400 * x[2:],
        np.full(1, 200.0)])
    return np.diag(diagonal) + np.diag(off, 1) + np.diag(off, -1)


def rosen_hess_prod(x, p):
    """The Hessian times p, without forming the Hessian."""
    x, p = _vector(x), _vector(p, "p")
    first = (1200 * x[0] ** 2 - 400 * x[1] + 2) * p[0] - 400 * x[0] * p[1]
    middle = (-400 * x[:-2] * p[:-2] + (202 + 1200 * x[1:-1] ** 2 - 400 * x[2:]) * p[1:-1]
              - 400 * x[1:-1] * p[2:])
    last = -400 * x[-2] * p[-2] + 200 * p[-1]
    return np.concatenate([np.reshape(first, (1,)), middle, np.reshape(last, (1,))])


def _vector(x, name="x"):
    if x is None:
        raise TypeError(f"rosen: {name} is None; pass a vector of at least 2 entries")
    if not hasattr(x, "shape"):
        x = np.asarray(x, dtype=float)
    if len(x.shape) < 1 or x.shape[0] < 2:
        raise ValueError(f"rosen: {name} of shape {tuple(x.shape)} needs at least 2 entries "
                         f"along axis 0")
    return x
