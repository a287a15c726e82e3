"""Gradient of a solve_ivp loss w.r.t. 50 parameters: forward sensitivities vs the adjoint
method vs central differences of SciPy's solve_ivp (not a test: no timing asserts).

    .venv/bin/python bench/solve_ivp_sensitivities.py

The ODE: n = 10 states, y' = 0.5·tanh(Aᵀ tanh(A y)) − y + 0.1·b, A = p[:40] as 4×10,
b = p[40:], t ∈ [0, 5], 20 output times, RK45, rtol 1e-6, atol 1e-8 (sweeps 1e-8/1e-10).
"""
import time

import numpy as np
import scipy.integrate as si

import dualad
from dualad.scipy.integrate import solve_ivp

N, P = 10, 50
T_EVAL = np.linspace(0.0, 5.0, 20)
rng = np.random.default_rng(0)
P0 = rng.normal(scale=0.5, size=P)
Y0 = rng.normal(size=N)
W = rng.normal(size=(N, len(T_EVAL)))


def rhs(t, y, p):
    A = np.reshape(p[:40], (4, N))
    return 0.5 * np.tanh(A.T @ np.tanh(A @ y)) - y + 0.1 * p[40:]


def loss(p, sensitivity="auto"):
    r = solve_ivp(rhs, (0.0, 5.0), Y0, t_eval=T_EVAL, args=(p,), rtol=1e-6, atol=1e-8,
                  sensitivity=sensitivity)
    return np.sum(W * r.y)


def plain_loss(p, rtol=1e-6, atol=1e-8):
    r = si.solve_ivp(rhs, (0.0, 5.0), Y0, t_eval=T_EVAL, args=(p,), rtol=rtol, atol=atol)
    return np.sum(W * r.y)


def fd_grad(rtol, atol, h):
    g = np.zeros(P)
    for i in range(P):
        e = np.zeros(P)
        e[i] = h
        g[i] = (plain_loss(P0 + e, rtol, atol) - plain_loss(P0 - e, rtol, atol)) / (2 * h)
    return g


def best_of(fn, repeat=3):
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


if __name__ == "__main__":
    t_primal, _ = best_of(lambda: plain_loss(P0))
    t_fwd, g_fwd = best_of(lambda: dualad.grad(lambda p: loss(p, "forward"))(P0))
    t_adj, g_adj = best_of(lambda: dualad.grad(lambda p: loss(p, "adjoint"))(P0))
    t_fd, g_fd = best_of(lambda: fd_grad(1e-6, 1e-8, 1e-4), 1)
    t_fd_tight, g_fd_tight = best_of(lambda: fd_grad(1e-10, 1e-12, 1e-4), 1)
    ref = g_fd_tight
    err = lambda g: np.max(np.abs(g - ref)) / np.max(np.abs(ref))  # noqa: E731
    print(f"n = {N} states, {P} parameters, {len(T_EVAL)} output times, RK45")
    print(f"primal solve (SciPy)            {t_primal * 1e3:9.1f} ms")
    print(f"grad, forward sensitivities     {t_fwd * 1e3:9.1f} ms   max rel. err {err(g_fwd):.1e}")
    print(f"grad, adjoint                   {t_adj * 1e3:9.1f} ms   max rel. err {err(g_adj):.1e}")
    print(f"central differences, rtol 1e-6  {t_fd * 1e3:9.1f} ms   max rel. err {err(g_fd):.1e}")
    print(f"central differences, rtol 1e-10 {t_fd_tight * 1e3:9.1f} ms   (the reference)")
    diff = np.max(np.abs(g_fwd - g_adj)) / np.max(np.abs(g_adj))
    print(f"forward vs adjoint: max rel. diff {diff:.1e}")
