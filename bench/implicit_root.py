"""The cost of a 1,000-variable root's gradient: implicit (dualad.custom_root) vs unrolled.

F(x, θ) = L x + 0.1 x³ + x − θ = 0, L = tridiag(−1, 2, −1), n = 1000; loss(θ) = Σ w·x*(θ)².
The gradient ∇_θ loss (1000 entries) is computed

- implicitly, linear_solve="gmres" (matrix-free: every iteration one JVP of F, the
  transposed ones one VJP), "direct" (∂_x F dense from one vector-mode sweep of F, one LU)
  and "auto" (gmres here: n > 500);
- by differentiating 8 Newton steps (each with a banded solve, dualad.scipy.linalg.
  solve_banded) with dualad.grad: the unrolled solver.

Counted: evaluations of F (each call of the optimality function, traced or not: a JVP or
VJP of F counts as one), linear solves (calls with their number of right-hand sides,
and matvecs), and wall time of one gradient (best of 3). Run:

    .venv/bin/python bench/implicit_root.py
"""
from __future__ import annotations

import time

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

import dualad
from dualad.transforms.implicit import custom_root
from dualad.transforms.implicit.linear_solve import LinearSystem
from dualad.scipy.linalg import solve_banded

N = 1000
THETA = np.linspace(0.5, 1.5, N)
W = np.cos(np.arange(N))
COUNT = {"F": 0}


def F(x, theta):
    COUNT["F"] += 1
    return residual(x, theta)


def residual(x, theta):
    lap = 2 * x - np.concatenate([x[1:], np.zeros(1)]) - np.concatenate([np.zeros(1), x[:-1]])
    return lap + 0.1 * x ** 3 + x - theta


def newton(theta, steps=8, solve=sla.solve_banded, f=residual):
    """Newton's method with the tridiagonal Jacobian in band storage."""
    x = theta * 0.0
    for _ in range(steps):
        r = f(x, theta)
        diag = 3.0 + 0.3 * x ** 2
        ab = np.stack([np.concatenate([np.zeros(1), -np.ones(N - 1)]), diag,
                       np.concatenate([-np.ones(N - 1), np.zeros(1)])])
        x = x - solve((1, 1), ab, r)
    return x


def sparse_jacobian(x, theta):
    """∂_x F, tridiagonal: scipy.sparse (SuperLU in the implicit solves)."""
    return sp.diags([-np.ones(N - 1), 3.0 + 0.3 * x ** 2, -np.ones(N - 1)], [-1, 0, 1])


def plain_solve(theta):
    return newton(theta, steps=12)


def counted(fn):
    """Linear solves: calls, right-hand sides, matvecs (LinearSystem.solve counted)."""
    real = LinearSystem.solve
    stats = {"solves": 0, "rhs": 0}

    def solve(self, consts, rhs, role):
        stats["solves"] += 1
        stats["rhs"] += rhs.shape[0]
        return real(self, consts, rhs, role)
    LinearSystem.solve = solve
    try:
        COUNT["F"] = 0
        t = time.perf_counter()
        out = fn()
        dt = time.perf_counter() - t
    finally:
        LinearSystem.solve = real
    return out, dt, COUNT["F"], stats


def best(fn, k=3):
    times = []
    for _ in range(k):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main():
    x_star = newton(THETA, steps=12)
    print(f"n = {N}; |F(x*)| = {np.max(np.abs(F(x_star, THETA))):.2e}")
    rows = []
    for method in ("auto", "gmres", "direct", "sparse jac."):
        if method.startswith("sparse"):
            root = custom_root(plain_solve, F, jacobian=sparse_jacobian)
        else:
            root = custom_root(plain_solve, F, linear_solve=method)

        def grad():
            return dualad.grad(lambda th: np.sum(W * root(th) ** 2))(THETA)
        g, _, nf, stats = counted(grad)
        t = best(grad)
        rows.append((f"implicit ({method})", nf, stats, t, g))
    unrolled = lambda th: np.sum(W * newton(th, 8, solve_banded, F) ** 2)  # noqa: E731
    COUNT["F"] = 0
    g_u = dualad.grad(unrolled)(THETA)
    nf_u = COUNT["F"]
    t_u = best(lambda: dualad.grad(unrolled)(THETA))
    t_plain = best(lambda: newton(THETA, steps=12))
    print(f"the solver alone (12 Newton steps, plain NumPy): {t_plain * 1e3:.1f} ms")
    print(f"{'gradient by':24s} {'F evals':>8s} {'solves (rhs)':>13s} {'time':>9s}  max|Δg|")
    for name, nf, stats, t, g in rows:
        print(f"{name:24s} {nf:8d} {stats['solves']:6d} ({stats['rhs']:3d}) {t * 1e3:7.1f} ms"
              f"  {np.max(np.abs(g - g_u)):.1e}")
    print(f"{'unrolled (8 Newton)':24s} {nf_u:8d} {'8 banded':>13s} {t_u * 1e3:7.1f} ms")
    # second order: one Hessian-vector product of the loss (forward over reverse)
    v = np.sin(np.arange(N))
    print(f"{'hvp by':24s} {'F evals':>8s} {'solves (rhs)':>13s} {'time':>9s}  max|Δ|")
    ref = None
    for name, make in (("unrolled (8 Newton)", None),
                       ("implicit (sparse jac.)", dict(jacobian=sparse_jacobian)),
                       ("implicit (auto)", dict())):
        if make is None:
            loss = unrolled
        else:
            root = custom_root(plain_solve, F, **make)
            loss = (lambda r: lambda th: np.sum(W * r(th) ** 2))(root)

        def hvp():
            return dualad.hvp(loss, (THETA,), (v,))[0]
        h, _, nf, stats = counted(hvp)
        t = best(hvp)
        ref = h if ref is None else ref
        print(f"{name:24s} {nf:8d} {stats['solves']:6d} ({stats['rhs']:3d}) {t * 1e3:7.1f} ms"
              f"  {np.max(np.abs(h - ref)):.1e}")


if __name__ == "__main__":
    main()
