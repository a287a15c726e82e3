"""Issue 31: what a prepared derivative costs per call, replayed through dualad.jit (the
default) and eager (jit=False), against the hand-written NumPy derivative and SciPy's finite
differences (``scipy.optimize._numdiff.approx_derivative``), and what its first call costs.

    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 python bench/prepared_calls.py

Per-call figures are CPU time of this process (``time.process_time``: a shared VM's other
load does not count), the best of interleaved repeats, the garbage collector off while
timing. The first call (trace and compile) is wall time of one call on a fresh helper.
"""
from __future__ import annotations

import gc
import sys
import time
import warnings

import numpy as np
import scipy.optimize
from scipy.integrate import solve_ivp
from scipy.optimize._numdiff import approx_derivative

from dualad.jacobians import optimize as O


def best_of(fns, reps=7, budget=0.02):
    """Interleaved repeats; per-call CPU seconds, the best repeat of each."""
    inner = {}
    for k, fn in fns.items():
        t = time.process_time()
        fn()
        inner[k] = max(1, int(budget / max(time.process_time() - t, 1e-6)))
    best = dict.fromkeys(fns, float("inf"))
    gc.disable()
    try:
        for _ in range(reps):
            for k, fn in fns.items():
                t = time.process_time()
                for _ in range(inner[k]):
                    fn()
                best[k] = min(best[k], (time.process_time() - t) / inner[k])
    finally:
        gc.enable()
    return best


def first_call(make, *args):
    h = make()
    t = time.perf_counter()
    h(*args)
    return h, time.perf_counter() - t


def kinetics(n, seed=0):
    """Mass action on a ring: S_i + S_i+1 -> S_i+2 (k_i), S_i -> S_i-1 (q_i)."""
    rng = np.random.default_rng(seed)
    k, q = rng.uniform(0.5, 2.0, n), rng.uniform(0.1, 1.0, n)
    idx = np.arange(n)
    i1, im = (idx + 1) % n, (idx - 1) % n

    def rhs(x):
        r1, r2 = k * x * x[i1], q * x
        return -r1 - np.roll(r1, 1) + np.roll(r1, 2) - r2 + np.roll(r2, -1)

    def jac(x):
        J = np.zeros((n, n))
        a, b = k * x[i1], k * x
        for sign, shift in ((-1, 0), (-1, 1), (1, 2)):
            rows = (idx + shift) % n
            np.add.at(J, (rows, idx), sign * a)
            np.add.at(J, (rows, i1), sign * b)
        J[idx, idx] -= q
        J[im, idx] += q
        return J
    return rhs, jac


def logistic(N, d, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, d))
    y = (rng.random(N) < 0.5).astype(float)

    def loss(w):
        z = X @ w
        return np.sum(np.logaddexp(0.0, z) - y * z) / N + 0.5e-3 * (w @ w)

    def grad(w):
        s = 1 / (1 + np.exp(-(X @ w)))
        return X.T @ (s - y) / N + 1e-3 * w

    def hess(w):
        s = 1 / (1 + np.exp(-(X @ w)))
        return X.T @ ((s * (1 - s) / N)[:, None] * X) + 1e-3 * np.eye(d)
    return loss, grad, hess


def robertson(t, y):
    return np.array([-0.04 * y[0] + 1e4 * y[1] * y[2],
                     0.04 * y[0] - 1e4 * y[1] * y[2] - 3e7 * y[1] ** 2, 3e7 * y[1] ** 2])


def robertson_jac(t, y):
    return np.array([[-0.04, 1e4 * y[2], 1e4 * y[1]],
                     [0.04, -1e4 * y[2] - 6e7 * y[1], -1e4 * y[1]],
                     [0.0, 6e7 * y[1], 0.0]])


def row(task, first, t):
    cells = "  ".join(f"{k} {v * 1e3:9.3f}" for k, v in t.items())
    ratio = t["jit"] / t["hand"] if "hand" in t else float("nan")
    print(f"{task:44s} first {first * 1e3:7.1f} ms | {cells} | jit/hand {ratio:5.2f}",
          flush=True)


def main():
    warnings.simplefilter("error")      # a JitFallbackWarning would be a finding
    print("per call, ms of CPU time (best of interleaved repeats); first call: wall ms")
    for n in (20, 200, 2000):
        rhs, hand = kinetics(n)
        x = np.random.default_rng(1).uniform(0.5, 1.5, n)
        jit, first = first_call(lambda: O.jacobian_fn(rhs, x), x)
        eager = O.jacobian_fn(rhs, x, jit=False)
        assert np.allclose(jit(x), hand(x), rtol=1e-12) and np.allclose(eager(x), hand(x))
        row(f"kinetics jacobian_fn n={n}", first, best_of(
            {"jit": lambda: jit(x), "eager": lambda: eager(x), "hand": lambda: hand(x),
             "FD": lambda: approx_derivative(rhs, x)}))
    for name, sizes in (("gradient", ((200, 20), (2000, 200), (2000, 2000))),
                        ("hessian_fn", ((200, 20), (2000, 50), (2000, 200)))):
        helper = getattr(O, name)
        for N, d in sizes:
            loss, grad, hess = logistic(N, d)
            # the hand-written derivative, and the function finite differences differentiate
            hand, fd_of = (grad, loss) if name == "gradient" else (hess, grad)
            w = np.random.default_rng(2).standard_normal(d) * 0.1
            jit, first = first_call(lambda: helper(loss, w), w)
            eager = helper(loss, w, jit=False)
            assert np.allclose(jit(w), hand(w), rtol=1e-10, atol=1e-14)
            row(f"logistic {name} N={N} d={d}", first, best_of(
                {"jit": lambda: jit(w), "eager": lambda: eager(w), "hand": lambda: hand(w),
                 "FD": lambda: approx_derivative(fd_of, w)}))
    loss, grad, hess = logistic(2000, 50)
    w0 = np.zeros(50)

    def solve(jit):
        return scipy.optimize.minimize(**O.minimize_kwargs(loss, w0, method="trust-exact",
                                                           jit=jit))
    t = best_of({"jit": lambda: solve(True), "eager": lambda: solve(False),
                 "hand": lambda: scipy.optimize.minimize(loss, w0, jac=grad, hess=hess,
                                                         method="trust-exact")}, reps=3)
    row("trust-exact N=2000 d=50, whole solve", float("nan"), t)
    y0 = np.array([1.0, 0.0, 0.0])
    jit, first = first_call(lambda: O.ode_jacobian_fn(robertson, y0), 0.0, y0)
    eager = O.ode_jacobian_fn(robertson, y0, jit=False)
    row("Robertson jac(t, y) call", first, best_of(
        {"jit": lambda: jit(0.0, y0), "eager": lambda: eager(0.0, y0),
         "hand": lambda: robertson_jac(0.0, y0),
         "FD": lambda: approx_derivative(lambda y: robertson(0.0, y), y0)}))

    def bdf(jac):
        return solve_ivp(robertson, (0.0, 40.0), y0, method="BDF", rtol=1e-6, atol=1e-10,
                         jac=jac)
    row("Robertson BDF solve (0, 40)", float("nan"), best_of(
        {"jit": lambda: bdf(jit), "eager": lambda: bdf(eager), "hand": lambda: bdf(robertson_jac),
         "FD": lambda: bdf(None)}, reps=3))


if __name__ == "__main__":
    sys.exit(main())
