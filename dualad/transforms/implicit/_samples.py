"""Rule-checker samples for the implicit primitives (``prim.samples``): small, well
conditioned systems whose rules :func:`dualad.verification.check_registry` checks in both
modes, to order 2, against finite differences."""
from __future__ import annotations

import numpy as np

from ...core.primitive import sample
from ...core.tree import flatten
from .linear_solve import LinearSystem, linear_solve_p
from .root import RootProblem, root_p

__all__ = []   # imported for its effect: the implicit primitives' rule-checker samples

_A = np.array([[4.0, 1.0, -0.5], [0.3, 3.0, 0.8], [-0.2, 0.5, 5.0]])


def _dense_system(method):
    return LinearSystem(lambda v, a: v @ a.T, 3, rmatvec=lambda u, a: u @ a,
                        matrix=lambda a: a, method=method, batched=True)


def _shifted_system(method, symmetric=False):
    """A(k) = 2.5 I + 0.5 (P + Pᵀ) + k I (P the cyclic shift; symmetric positive definite
    for k > −1): a matvec closing over a scalar k (no matrix, no rmatvec), written with
    Python-float constants so that float32 stays float32."""
    return LinearSystem(lambda v, k: (2.5 + k) * v + 0.5 * (np.roll(v, 1) + np.roll(v, -1)),
                        3, method=method, symmetric=symmetric)


def _root_problem(method="direct", nparams=1):
    """x* with x + s·sin(x) = a (elementwise, Newton's method): parameters a, and s (0.3
    when only a is a parameter)."""
    def solve(a, s=0.3):
        x = np.array(a, dtype=float)
        for _ in range(60):
            x = x - (x + s * np.sin(x) - a) / (1.0 + s * np.cos(x))
        return x

    def optimality(x, a, s=0.3):
        return x + s * np.sin(x) - a
    leaves, rebuild = flatten((np.zeros(3), 0.3)[:nparams])
    return RootProblem(solve, optimality, leaves, rebuild, list(range(nparams)), tol=None, has_aux=False,
                       method=method, symmetric=False, options={}, transpose_method=None)


linear_solve_p.samples = [
    sample((3,), _A, system=_dense_system("direct"), role="primal"),
    sample((2, 3), _A, system=_dense_system("direct"), role="primal"),
    sample((3,), np.array(0.5), system=_shifted_system("gmres"), role="primal"),
    sample((3,), np.array(0.5), system=_shifted_system("cg", symmetric=True), role="primal"),
    sample((3,), np.array(0.5), system=_shifted_system("direct"), role="primal"),
    # a batch of primal right-hand sides through a matvec of one vector (looped)
    sample((2, 3), np.array(0.5), system=_shifted_system("direct"), role="primal"),
]
root_p.samples = [
    sample(np.array([0.4, -1.2, 2.0]), problem=_root_problem()),
    sample(np.array([0.4, -1.2, 2.0]), np.array(0.3), problem=_root_problem("gmres", 2)),
]
