"""Pearlmutter, "Fast exact multiplication by the Hessian", Neural Computation 6(1), 1994.

The R{·} technique is forward mode applied to the gradient computation:
H v = ∂/∂r ∇f(x + r v) at r = 0, exact, at a cost that is a small constant
multiple of one gradient, independent of n (where the full Hessian costs n
such products). Checked here:

- H v from ``dualad.hvp`` (forward-over-reverse) equals the full Hessian times
  v to rounding, for several test functions;
- the cost, as operation counts on the tape: OPS(Hv) / OPS(∇f) stays a small
  constant (<= 4) as n grows, while building H costs n Hessian-vector products;
- timing, reported (not asserted): Hv against one gradient.

    python -m papers.pearlmutter1994      (exit status 1 on any mismatch)
"""
from __future__ import annotations

import sys

import numpy as np

import dualad
from papers._compare import Report
from dualad.jacobians.cost import best_of
from dualad.teaching import count_ops


def make_functions(n):
    rng = np.random.default_rng(1994)
    A = rng.standard_normal((n, n)) / np.sqrt(n)

    def logcosh(x):
        return np.sum(np.log(np.cosh(A @ x))) + 0.5 * np.sum(x ** 4)

    def rosenbrock(x):
        return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)

    def mlp(x):
        h = np.tanh(A @ x)
        return np.sum(np.tanh(A.T @ h) ** 2)

    return {"log-cosh + quartic": logcosh, "Rosenbrock (vectorized)": rosenbrock,
            "two-layer tanh": mlp}


def full_hessian(f, x):
    """All n Hessian-vector products in one vector-mode forward-over-reverse sweep."""
    return dualad.jvp(dualad.grad(f), (x,), (np.eye(x.size),))[1]


def main() -> int:
    report = Report("Pearlmutter (1994): exact Hessian-vector products at the cost of a gradient")
    for n in (20, 200):
        rng = np.random.default_rng(n)
        x = rng.uniform(-0.8, 0.8, n)
        v = rng.standard_normal(n)
        for name, f in make_functions(n).items():
            hv = dualad.hvp(f, x, v)
            H = full_hessian(f, x)
            err = np.max(np.abs(hv - H @ v)) / max(1.0, np.max(np.abs(H @ v)))
            report.note(f"{name}, n={n}: |Hv - H v| (relative)", "exact (rounding)",
                        f"{err:.1e}", ok=err < 1e-12)
            g = dualad.grad(f)
            h = 1e-5
            fd = (g(x + h * v) - g(x - h * v)) / (2 * h)
            fd_err = np.max(np.abs(hv - fd)) / max(1.0, np.max(np.abs(fd)))
            report.note(f"{name}, n={n}: Hv vs central difference of grad", "agree (~h^2)",
                        f"{fd_err:.1e}", ok=fd_err < 1e-6)
            ops_g = count_ops(dualad.grad(f), x)
            ops_hv = count_ops(lambda x: dualad.hvp(f, x, v), x)
            report.note(f"{name}, n={n}: OPS(Hv)/OPS(grad)", "small constant (<= 4)",
                        f"{ops_hv / ops_g:.2f}", ok=ops_hv / ops_g <= 4.0)
    n = 300
    x = np.random.default_rng(0).uniform(-0.8, 0.8, n)
    f = make_functions(n)["log-cosh + quartic"]
    g = dualad.grad(f)
    t_g = best_of(lambda: g(x), repeat=5)
    t_hv = best_of(lambda: dualad.hvp(f, x, np.ones(n)), repeat=5)
    t_h = best_of(lambda: full_hessian(f, x), repeat=2)
    report.note(f"time Hv / time grad (n={n}, measured)", "O(1)", f"{t_hv / t_g:.1f}")
    report.note(f"time H / time Hv (n={n}, measured)", "~n for a loop of products",
                f"{t_h / t_hv:.1f} (one vectorized sweep)")
    return report.finish()


if __name__ == "__main__":
    sys.exit(main())
