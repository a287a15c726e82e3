"""Griewank and Walther, "Evaluating Derivatives" (2nd ed., SIAM 2008).

- The cheap gradient principle: OPS(∇f) ≤ 4·OPS(f) whatever the number n of
  inputs, measured as operation counts on the tape (the gradient's count
  includes the forward sweep), next to forward mode, whose gradient costs n
  tangent sweeps and so grows with n.
- Speelpenning's product y = Π x_i, n = 7, x_i = (i+1)/(i+2): y = 1/8 and
  ∂y/∂x_i = y / x_i.
- The lighthouse example (Chapter 2): y1 = ν tan(ωt) / (γ − tan(ωt)),
  y2 = γ ν tan(ωt) / (γ − tan(ωt)) at (ν, γ, ω, t) = (3.7, 0.7, 0.5, 0.5), its
  Jacobian against the closed form.

    python -m papers.griewank2008      (exit status 1 on any mismatch)
"""
from __future__ import annotations

import sys

import numpy as np

import dualad
from papers._compare import Report
from dualad.teaching import count_ops


def speelpenning(x):
    y = 1.0
    for i in range(len(x)):
        y = y * x[i]
    return y


def rosenbrock(x):
    total = 0.0
    for i in range(len(x) - 1):
        total = total + 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1.0 - x[i]) ** 2
    return total


def logistic(x):
    A = np.cos(np.arange(3 * x.shape[0], dtype=float)).reshape(3, -1)
    z = A @ x
    return np.sum(np.logaddexp(0.0, z) - 0.5 * z)


def softplus_chain(x):
    return np.sum(np.log1p(np.exp(np.sin(x) * x)) / (1.0 + x * x))


def lighthouse(p):
    nu, gamma, omega, t = p[0], p[1], p[2], p[3]
    u = np.tan(omega * t)
    y1 = nu * u / (gamma - u)
    return dualad.numpy.array([y1, gamma * y1])


def lighthouse_jacobian_closed_form(nu, gamma, omega, t):
    u = np.tan(omega * t)
    d = gamma - u
    sec2 = 1.0 + u * u
    dy1 = np.array([u / d, -nu * u / d ** 2, nu * t * sec2 * gamma / d ** 2,
                    nu * omega * sec2 * gamma / d ** 2])
    dy2 = np.array([gamma * u / d, -nu * u * u / d ** 2, gamma * dy1[2], gamma * dy1[3]])
    return np.stack([dy1, dy2])


def cheap_gradient_rows(report):
    for name, fn in [("Speelpenning", speelpenning), ("Rosenbrock", rosenbrock),
                     ("logistic", logistic), ("softplus chain", softplus_chain)]:
        for n in (10, 100):
            x = np.linspace(0.3, 0.9, n)
            ops_f = count_ops(fn, x)
            ops_grad = count_ops(dualad.grad(fn), x)
            ops_jvp = count_ops(lambda x: dualad.jvp(fn, (x,), (np.ones_like(x),)), x)
            ratio = ops_grad / ops_f
            report.note(f"{name}, n={n}: OPS(grad)/OPS(f)", "<= 4",
                        f"{ratio:.2f}  ({ops_grad}/{ops_f})", ok=ratio <= 4.0)
            report.note(f"{name}, n={n}: forward-mode gradient", "n tangent sweeps",
                        f"{n * ops_jvp / ops_f:.0f} x OPS(f)", ok=n * ops_jvp > ops_grad or n <= 3)


def main() -> int:
    report = Report("Griewank & Walther (2008): cheap gradient principle, Speelpenning, "
                    "lighthouse")
    cheap_gradient_rows(report)
    x = np.array([(i + 1) / (i + 2) for i in range(7)])
    y, g = dualad.value_and_grad(speelpenning)(x)
    report.check("Speelpenning y (n = 7)", 0.125, y, decimals=12)
    report.check("Speelpenning g_i = y/x_i", 0.125 / x, g, decimals=12)
    p = np.array([3.7, 0.7, 0.5, 0.5])
    _, J = dualad.jvp(lighthouse, (p,), (np.eye(4),))
    u = np.tan(p[2] * p[3])
    report.check("lighthouse y (closed form)", [p[0] * u / (p[1] - u), p[1] * p[0] * u / (p[1] - u)],
                 lighthouse(p), decimals=12)
    report.check("lighthouse Jacobian (closed form)", lighthouse_jacobian_closed_form(*p),
                 J.T, decimals=10)
    return report.finish()


if __name__ == "__main__":
    sys.exit(main())
