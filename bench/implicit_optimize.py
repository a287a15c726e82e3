"""The cost of differentiating a 1,000-variable minimum: implicit (dualad.scipy.optimize)
against unrolling a solver written in NumPy and differentiating through its iterations.

    python bench/implicit_optimize.py [n] [stiffness]

Problem: x*(b) = argmin ½s‖Dx‖² + ½‖x‖² + ¼Σx⁴ − bᵀx (D the first-difference matrix, s
the stiffness: the Hessian's condition number grows like 4s),
loss L(b) = ‖x*(b)‖². Reported: SciPy's L-BFGS-B solve (iterations, function
evaluations, time); the implicit gradient dL/db (reverse: one adjoint solve, matrix-free
minres since n > 500, each iteration one Hessian-vector product = one evaluation of fun
on traced values) and one JVP (forward); and the unrolled alternative: gradient descent
with step 1/L run to the same accuracy, differentiated by dualad.grad (its tape holds
every iteration). No timing asserts (a benchmark, not a test).
"""
from __future__ import annotations

import sys
import time

import numpy as np
import scipy.optimize as so

import dualad
import dualad.scipy.optimize as do
from dualad.extend import Box

COUNT = {"plain": 0, "traced": 0}


S = [1.0]


def fun(x, b):
    COUNT["traced" if isinstance(x, Box) or isinstance(b, Box) else "plain"] += 1
    return (0.5 * S[0] * np.sum(np.diff(x) ** 2) + 0.5 * np.sum(x ** 2) + 0.25 * np.sum(x ** 4)
            - b @ x)


def grad_fun(x, b):
    """∇f written out (SciPy's jac, and the unrolled solver): sDᵀDx + x + x³ − b."""
    d = np.diff(x)
    return x + x ** 3 - b + S[0] * np.concatenate([-d[:1], d[:-1] - d[1:], d[-1:]])


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def main(n=1000, stiffness=1.0):
    S[0] = stiffness
    b = np.sin(np.arange(n)) + 0.5
    opts = dict(gtol=1e-10, ftol=1e-15)
    solve = lambda b: do.minimize(fun, np.zeros(n), args=(b,), method="L-BFGS-B",   # noqa
                                  jac=grad_fun, options=opts)
    res, t_solve = timed(lambda: solve(b))
    print(f"n = {n}, stiffness {stiffness:g}: SciPy L-BFGS-B with the gradient written out: "
          f"{res.nit} iterations, {res.nfev} evaluations, {t_solve:.3f} s")
    loss = lambda b: np.sum(solve(b).x ** 2)   # noqa: E731
    COUNT.update(plain=0, traced=0)
    g, t_rev = timed(lambda: dualad.grad(loss)(b))
    print(f"  implicit reverse (dualad.grad): {t_rev:.3f} s with the solve "
          f"({t_rev - t_solve:+.3f} s over the solve alone); one adjoint "
          f"solve (matrix-free minres): {COUNT['traced']} evaluations of fun on traced values "
          f"(one per Hessian-vector product, plus res.fun and the check at x*)")
    COUNT.update(plain=0, traced=0)
    (_, tangent), t_fwd = timed(lambda: dualad.jvp(loss, (b,), (np.ones(n),)))
    print(f"  implicit forward (dualad.jvp): {t_fwd:.3f} s ({t_fwd - t_solve:+.3f} s); one "
          f"tangent solve: "
          f"{COUNT['traced']} traced evaluations; |jvp·1 − grad·1| = {abs(tangent - g.sum()):.1e}")

    x_star = res.x
    step = 1.0 / (4 * stiffness + 1 + 3 * np.max(x_star ** 2))   # 1/L, L bounds ∇²f near x*
    x, iters = np.zeros(n), 0
    while np.max(np.abs(grad_fun(x, b))) >= 1e-10 and iters < 200_000:
        x, iters = x - step * grad_fun(x, b), iters + 1

    def unrolled(b):
        x = np.zeros(n)
        for _ in range(iters):
            x = x - step * grad_fun(x, b)
        return np.sum(x ** 2)
    g_unrolled, t_unrolled = timed(lambda: dualad.grad(unrolled)(b))
    print(f"  unrolled gradient descent to |∇f| < 1e-10: {iters} iterations, each a taped "
          f"gradient evaluation, differentiated by dualad.grad: {t_unrolled:.3f} s; "
          f"max |implicit − unrolled| / max |implicit| = "
          f"{np.max(np.abs(g - g_unrolled)) / np.max(np.abs(g)):.1e}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000,
         float(sys.argv[2]) if len(sys.argv) > 2 else 1.0)
