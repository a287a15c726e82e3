"""Whole Jacobians and Hessians from dualad.jacobians, with .T and .shape on the results."""
from __future__ import annotations

import numpy as np
import scipy.optimize
from numpy.typing import NDArray

from dualad import jacobians
from dualad.jacobians.optimize import (gradient, hessian_fn, least_squares_kwargs, minimize_kwargs,
                                       sparse_jacobian_fn)

W = np.random.default_rng(0).standard_normal((3, 20)) / 10


def scores(x: NDArray[np.float64]) -> NDArray[np.float64]:
    y: NDArray[np.float64] = np.tanh(W @ np.sin(x))
    return y


def energy(x: NDArray[np.float64]) -> np.float64:
    e: np.float64 = np.sum(np.log(np.cosh(W @ x)))
    return e


def bratu(u: NDArray[np.float64]) -> NDArray[np.float64]:
    up = np.concatenate([u[1:], np.zeros(1)])
    um = np.concatenate([np.zeros(1), u[:-1]])
    r: NDArray[np.float64] = (um - 2 * u + up) + np.exp(u) / 101.0 ** 2
    return r


x: NDArray[np.float64] = np.linspace(-1.0, 1.0, 20, dtype=np.float64)
J = jacobians.jacobian(scores, x)
print(J.shape, J.T.shape)
JT = jacobians.jacrev(scores, x).T @ np.ones(3)
print(JT.shape, jacobians.jacfwd(scores, x).shape)
H = jacobians.hessian(energy, x)
print(H.shape, np.allclose(H, H.T))
p = jacobians.plan(scores, x)
print(p.explain().splitlines()[0])
Js = jacobians.sparse_jacobian(bratu, np.zeros(50))
print(Js.shape, Js.nnz)
Hv = jacobians.hvp(energy, x, np.ones(20))
print(Hv.shape)


def rosen(x: NDArray[np.float64]) -> np.float64:
    r: np.float64 = np.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)
    return r


res = scipy.optimize.minimize(rosen, np.zeros(5), method="trust-exact",
                              jac=gradient(rosen), hess=hessian_fn(rosen))
sol = scipy.optimize.least_squares(**least_squares_kwargs(bratu, np.zeros(50), sparse=True))
print(sparse_jacobian_fn(bratu, np.zeros(50))(np.ones(50)).nnz)
res2 = scipy.optimize.minimize(**minimize_kwargs(rosen, np.zeros(5)))
print(np.round(res.x, 3), np.round(res2.x, 3), sol.status)
print(gradient(rosen)(np.ones(5)).shape, hessian_fn(rosen, sparse=True)(np.ones(5)).nnz)
