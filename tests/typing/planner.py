"""Whole Jacobians and Hessians from dualad.jacobians, with .T and .shape on the results."""
from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from dualad import jacobians

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


x = np.linspace(-1, 1, 20)
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
