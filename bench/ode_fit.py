"""ODE parameter fits: dualad's solve_ivp gradients against finite differences (issue 31).

    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 \
        .venv/bin/python bench/ode_fit.py [--rounds 5] [--no-fit] [--no-stiff]

Not a test: no timing asserts. Everything is interleaved: each round calls every
participant once, in turn; the first call (jit tracing included) is reported apart from
the median of the later rounds.

1. Lotka-Volterra, 4 parameters θ = (α, β, δ, γ): x' = αx − βxy, y' = δxy − γy,
   y₀ = (10, 5), 20 observation times in [0, 15], synthetic data from θ* = (1.1, 0.4,
   0.1, 0.4) with Gaussian noise (σ = 0.5, seed 0); loss = Σ (y(t_i) − data)². RK45 at
   rtol 1e-6, atol 1e-8. Gradients: dualad (default sensitivity, "forward",
   "adjoint") and SciPy's ``approx_fprime`` (forward differences, its default step),
   each against a reference (central differences of DOP853 at rtol = atol = 1e-13,
   step 1e-5·|θ|). Then whole fits: ``minimize(method="L-BFGS-B")`` (dualad: ``fun=value_and_grad(loss), jac=True``) (bounds [0.01, 3]) from θ₀ = (0.9, 0.5,
   0.08, 0.5) with each gradient and with ``jac=None`` (SciPy's differences).
2. Robertson (stiff), 3 rate constants k = exp(p) = (0.04, 3e7, 1e4), y₀ = (1, 0, 0),
   outputs at 10 log-spaced times in [1e-3, 1e3], loss = Σ w·y, BDF and Radau at rtol
   1e-6, atol 1e-10: gradient time (default sensitivity) vs approx_fprime.
"""
from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
import warnings

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import numpy as np                      # noqa: E402
import scipy.integrate as si            # noqa: E402
from scipy.optimize import approx_fprime, minimize   # noqa: E402

import dualad                           # noqa: E402
from dualad.scipy.integrate import solve_ivp   # noqa: E402

# --- Lotka-Volterra -----------------------------------------------------------------------
THETA_TRUE = np.array([1.1, 0.4, 0.1, 0.4])
THETA0 = np.array([0.9, 0.5, 0.08, 0.5])
Y0 = np.array([10.0, 5.0])
T_OBS = np.linspace(0.0, 15.0, 21)[1:]
RTOL, ATOL = 1e-6, 1e-8
BOUNDS = [(0.01, 3.0)] * 4


def lv(t, y, theta):
    a, b, d, g = theta[0], theta[1], theta[2], theta[3]
    return np.array([a * y[0] - b * y[0] * y[1], d * y[0] * y[1] - g * y[1]])


def _data():
    r = si.solve_ivp(lv, (0.0, 15.0), Y0, t_eval=T_OBS, args=(THETA_TRUE,), rtol=1e-12,
                     atol=1e-12, method="DOP853")
    return r.y + np.random.default_rng(0).normal(scale=0.5, size=r.y.shape)


DATA = _data()


def lv_loss(theta, **kw):
    r = solve_ivp(lv, (0.0, 15.0), Y0, t_eval=T_OBS, args=(theta,), rtol=RTOL, atol=ATOL, **kw)
    if r.status != 0:
        raise RuntimeError(r.message)
    return np.sum((r.y - DATA) ** 2)


def lv_plain(theta, rtol=RTOL, atol=ATOL, method="RK45"):
    r = si.solve_ivp(lv, (0.0, 15.0), Y0, t_eval=T_OBS, args=(theta,), rtol=rtol, atol=atol,
                     method=method)
    if r.status != 0:
        raise RuntimeError(r.message)
    return np.sum((r.y - DATA) ** 2)


def central(fn, theta, rel=1e-5):
    g = np.zeros(len(theta))
    for i in range(len(theta)):
        h = rel * max(abs(theta[i]), 1.0)
        e = np.zeros(len(theta))
        e[i] = h
        g[i] = (fn(theta + e) - fn(theta - e)) / (2 * h)
    return g


def lv_reference(theta):
    return central(lambda th: lv_plain(th, 1e-13, 1e-13, "DOP853"), theta)


# --- Robertson ------------------------------------------------------------------------
P_ROB = np.log(np.array([0.04, 3e7, 1e4]))
T_ROB = np.logspace(-3, 3, 10)
W_ROB = np.array([1.0, 1e4, 1.0])


def robertson(t, y, p):
    k1, k2, k3 = np.exp(p[0]), np.exp(p[1]), np.exp(p[2])
    return np.array([-k1 * y[0] + k3 * y[1] * y[2],
                     k1 * y[0] - k3 * y[1] * y[2] - k2 * y[1] ** 2,
                     k2 * y[1] ** 2])


def rob_loss(p, method, **kw):
    r = solve_ivp(robertson, (0.0, 1e3), np.array([1.0, 0.0, 0.0]), method=method,
                  t_eval=T_ROB, args=(p,), rtol=1e-6, atol=1e-10, **kw)
    return np.sum(W_ROB[:, None] * r.y)


def rob_plain(p, method, rtol=1e-6, atol=1e-10):
    r = si.solve_ivp(robertson, (0.0, 1e3), np.array([1.0, 0.0, 0.0]), method=method,
                     t_eval=T_ROB, args=(p,), rtol=rtol, atol=atol)
    return np.sum(W_ROB[:, None] * r.y)


# --- timing -------------------------------------------------------------------------------
def interleaved(parts, rounds):
    """{name: (first call s, median of later rounds s, last value)}."""
    first, later, value = {}, {k: [] for k in parts}, {}
    for r in range(rounds + 1):
        for name, fn in parts.items():
            gc.collect()
            t0 = time.perf_counter()
            value[name] = fn()
            dt = time.perf_counter() - t0
            if r == 0:
                first[name] = dt
            else:
                later[name].append(dt)
    return {k: (first[k], statistics.median(later[k]) if later[k] else first[k], value[k])
            for k in parts}


def rel_err(g, ref):
    return float(np.max(np.abs(g - ref)) / np.max(np.abs(ref)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--no-fit", action="store_true")
    ap.add_argument("--no-stiff", action="store_true")
    ap.add_argument("--only-stiff", action="store_true")
    a = ap.parse_args()
    warnings.simplefilter("ignore", RuntimeWarning)
    print(f"dualad {getattr(dualad, '__version__', '?')} at {os.path.dirname(dualad.__file__)}")
    print(f"threads pinned: OPENBLAS/OMP/MKL = {os.environ['OPENBLAS_NUM_THREADS']}")

    if not a.only_stiff:
        ref = lv_reference(THETA0)
        parts = {
            "primal solve (SciPy, rtol 1e-6)": lambda: lv_plain(THETA0),
            "dualad grad, default": lambda: dualad.grad(lv_loss)(THETA0),
            "dualad grad, forward": lambda: dualad.grad(
                lambda th: lv_loss(th, sensitivity="forward"))(THETA0),
            "dualad grad, adjoint": lambda: dualad.grad(
                lambda th: lv_loss(th, sensitivity="adjoint"))(THETA0),
            "approx_fprime (fwd diff)": lambda: approx_fprime(THETA0, lv_plain),
        }
        res = interleaved(parts, a.rounds)
        prim = res["primal solve (SciPy, rtol 1e-6)"][1]
        print(f"\nLotka-Volterra, 4 parameters, 20 times, RK45 rtol {RTOL:g} atol {ATOL:g}, "
              f"{a.rounds} rounds")
        print(f"{'':34s}{'first':>10s}{'median':>10s}{'x primal':>10s}{'rel err':>10s}")
        for k, (f, m, v) in res.items():
            err = "" if k.startswith("primal") else f"{rel_err(np.asarray(v), ref):10.1e}"
            print(f"{k:34s}{f * 1e3:8.1f}ms{m * 1e3:8.1f}ms{m / prim:10.1f}{err}")

        if not a.no_fit:
            fits = {
                "L-BFGS-B, dualad default": dict(fun=dualad.value_and_grad(lv_loss), jac=True),
                "L-BFGS-B, dualad forward": dict(fun=dualad.value_and_grad(
                    lambda th: lv_loss(th, sensitivity="forward")), jac=True),
                "L-BFGS-B, dualad adjoint": dict(fun=dualad.value_and_grad(
                    lambda th: lv_loss(th, sensitivity="adjoint")), jac=True),
                "L-BFGS-B, jac=None (SciPy FD)": dict(fun=lv_plain, jac=None),
            }
            out = {}
            for name, kw in fits.items():
                out[name] = (lambda kw=kw: minimize(kw["fun"], THETA0, jac=kw["jac"],
                                                    method="L-BFGS-B", bounds=BOUNDS))
            res = interleaved(out, max(1, a.rounds // 3))
            print(f"\nwhole fit, L-BFGS-B from θ0 = {THETA0.tolist()}")
            print(f"{'':30s}{'first':>9s}{'median':>9s}{'nit':>5s}{'nfev':>6s}{'njev':>6s}"
                  f"{'loss':>10s}  success  θ")
            for k, (f, m, r) in res.items():
                print(f"{k:30s}{f:8.2f}s{m:8.2f}s{r.nit:5d}{r.nfev:6d}{getattr(r, 'njev', 0):6d}"
                      f"{r.fun:10.4f}  {str(r.success):7s}  {np.round(r.x, 5).tolist()}")

    if not a.no_stiff:
        for method in ("BDF", "Radau"):
            ref = central(lambda p: rob_plain(p, method, 1e-12, 1e-16), P_ROB, 1e-5)
            parts = {
                f"primal solve ({method}, SciPy)": lambda: rob_plain(P_ROB, method),
                "dualad grad, default": lambda: dualad.grad(
                    lambda p: rob_loss(p, method))(P_ROB),
                "dualad grad, forward": lambda: dualad.grad(
                    lambda p: rob_loss(p, method, sensitivity="forward"))(P_ROB),
                "dualad grad, adjoint": lambda: dualad.grad(
                    lambda p: rob_loss(p, method, sensitivity="adjoint"))(P_ROB),
                "approx_fprime (fwd diff)": lambda: approx_fprime(
                    P_ROB, lambda p: rob_plain(p, method)),
            }
            res = interleaved(parts, max(1, a.rounds // 2))
            prim = res[f"primal solve ({method}, SciPy)"][1]
            print(f"\nRobertson, 3 log-rates, {method} rtol 1e-6 atol 1e-10, 10 times")
            print(f"{'':34s}{'first':>10s}{'median':>10s}{'x primal':>10s}{'rel err':>10s}")
            for k, (f, m, v) in res.items():
                err = "" if k.startswith("primal") else f"{rel_err(np.asarray(v), ref):10.1e}"
                print(f"{k:34s}{f * 1e3:8.1f}ms{m * 1e3:8.1f}ms{m / prim:10.1f}{err}")


if __name__ == "__main__":
    sys.exit(main())
