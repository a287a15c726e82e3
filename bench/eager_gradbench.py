"""GradBench's ``ode`` and ``gmm`` gradients on the eager path: dualad un-jitted vs PyTorch eager.

    python bench/eager_gradbench.py                 # every row, 1 thread, prints a table
    python bench/eager_gradbench.py --only ode --repeats 7
    python bench/eager_gradbench.py --gc-report     # also: collector passes and their time

The objectives are GradBench's (github.com/gradbench/gradbench, evals ``ode`` and ``gmm``)
written here as plain NumPy, and for PyTorch as GradBench's own PyTorch tool writes them:

- ``ode``: fourth-order Runge-Kutta, ``s`` steps to t = 2, of y'_0 = x_0,
  y'_i = x_i y_{i-1}; the gradient of the last entry of y with respect to x;
- ``gmm``: the Gaussian-mixture log-likelihood with a Wishart prior (ADBench's), the
  gradient with respect to (alpha, mu, q, l); N = 1000 points (ADBench's "1k" data set
  size; the data here are random with a fixed seed, not the data files).

Each row times, interleaved within one process (round robin, ``--repeats`` rounds, the
median reported): NumPy's f alone, dualad's un-jitted ``dualad.grad``, PyTorch eager's
``backward``. Thread pools are pinned before NumPy or PyTorch loads (bench/_pinning.py).
The first call of each is reported separately (caches, imports done earlier). With
``--gc-report`` the number of collections and the time spent in them during one dualad
gradient is read from ``gc.callbacks`` (the user's GC settings are left as they are).
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _pinning  # noqa: E402

_THREADS = _pinning.threads_from_argv(sys.argv)
_EARLY = _pinning.pin_environment(_THREADS, sys.argv, _pinning.affinity_from_argv(sys.argv))

import argparse  # noqa: E402
import gc  # noqa: E402
import math  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
from scipy.special import multigammaln  # noqa: E402

import dualad  # noqa: E402

try:
    import torch  # noqa: E402
except ImportError:
    torch = None


# ---------------------------------------------------------------------------- ode
# the objective is bench/gradbench_numpy.py's, over NumPy (through dualad) and torch
from gradbench_numpy import ode_objective  # noqa: E402

ode_numpy = lambda x, s: ode_objective(np, s)(x)  # noqa: E731
ode_torch = lambda x, s: ode_objective(torch, s)(x)  # noqa: E731


def ode_case(n, s):
    x = np.random.default_rng(0).uniform(0.5, 1.5, n)

    def numpy_f():
        return ode_numpy(x, s)
    grad = dualad.grad(lambda v: ode_numpy(v, s))

    def dualad_grad():
        return grad(x)
    torch_grad = None
    if torch is not None:
        def torch_grad():
            xt = torch.tensor(x, requires_grad=True)
            ode_torch(xt, s).backward()
            return xt.grad.numpy()
    return numpy_f, dualad_grad, torch_grad


# ---------------------------------------------------------------------------- gmm
def _tril_indices(d):
    """GradBench's order of the strictly lower triangle: column by column."""
    cols = np.repeat(np.arange(d - 1), np.arange(d - 1, 0, -1))
    rows = np.concatenate([np.arange(c + 1, d) for c in range(d - 1)]) if d > 1 else \
        np.zeros(0, int)
    return rows, cols


def logsumexp(a, axis):
    """log(sum(exp(a), axis)), shifted by the maximum as GradBench's tools do."""
    mx = np.max(a, axis=axis, keepdims=True)
    return np.squeeze(mx, axis) + np.log(np.sum(np.exp(a - mx), axis=axis))


def _tril_gather(d):
    """Flat (d*d) positions into [0, l]: 1 + the position of entry (r, c) in l, 0 above."""
    rows, cols = _tril_indices(d)
    g = np.zeros(d * d, int)
    g[rows * d + cols] = 1 + np.arange(rows.size)
    return g


def gmm_numpy(alpha, mu, q, l, x, gamma, m):
    """ADBench's GMM objective, as GradBench's PyTorch tool writes it, in NumPy."""
    n, d = x.shape
    k = alpha.shape[0]
    Qdiags = np.exp(q)
    sum_qs = np.sum(q, 1)
    # Ls[:, rows, cols] = l as a gather from [0, l] (a plain NumPy array cannot hold a
    # traced l, and np.zeros_like(l, shape=...) is not traced)
    Ls = np.concatenate([np.zeros((k, 1)), l], axis=1)[:, _tril_gather(d)].reshape(k, d, d)
    xcentered = x[:, None, :] - mu[None, ...]
    Lxcentered = Qdiags * xcentered + np.einsum("ijk,mik->mij", Ls, xcentered)
    sqsum = np.sum(Lxcentered ** 2, 2)
    inner = alpha + sum_qs - 0.5 * sqsum
    slse = np.sum(logsumexp(inner, 1))
    const = -n * d * 0.5 * math.log(2 * math.pi)
    nn = d + m + 1
    prior = -np.sum(0.5 * gamma * gamma * (np.sum(Qdiags ** 2, 1) + np.sum(l ** 2, 1))
                    - m * sum_qs)
    C = nn * d * math.log(gamma / math.sqrt(2))
    return (const + slse - n * logsumexp(alpha, 0) + prior
            + k * (C - multigammaln(0.5 * nn, d)))


def gmm_torch(alpha, mu, q, l, x, gamma, m):
    n, d = x.shape
    k = alpha.shape[0]
    Qdiags = torch.exp(q)
    sum_qs = torch.sum(q, 1)
    rows, cols = (torch.as_tensor(a) for a in _tril_indices(d))
    Ls = torch.zeros((k, d, d), dtype=l.dtype)
    Ls[:, rows, cols] = l
    xcentered = x[:, None, :] - mu[None, ...]
    Lxcentered = Qdiags * xcentered + torch.einsum("ijk,mik->mij", Ls, xcentered)
    sqsum = torch.sum(Lxcentered ** 2, 2)
    inner = alpha + sum_qs - 0.5 * sqsum
    slse = torch.sum(torch.logsumexp(inner, 1))
    const = -n * d * 0.5 * math.log(2 * math.pi)
    nn = d + m + 1
    prior = -torch.sum(0.5 * gamma * gamma * (torch.sum(Qdiags ** 2, 1)
                                              + torch.sum(l ** 2, 1)) - m * sum_qs)
    C = nn * d * math.log(gamma / math.sqrt(2))
    return (const + slse - n * torch.logsumexp(alpha, 0) + prior
            + k * (C - torch.special.multigammaln(torch.tensor(0.5 * nn), d)))


def gmm_case(d, k, n):
    rng = np.random.default_rng(0)
    alpha = rng.normal(size=k)
    mu = rng.uniform(size=(k, d))
    q = rng.normal(size=(k, d)) * 0.1
    l = rng.normal(size=(k, d * (d - 1) // 2)) * 0.1
    x = rng.normal(size=(n, d))
    gamma, m = 1.0, 0
    params = (alpha, mu, q, l)

    def numpy_f():
        return gmm_numpy(*params, x, gamma, m)
    grad = dualad.grad(lambda a, b, c, e: gmm_numpy(a, b, c, e, x, gamma, m),
                       argnums=(0, 1, 2, 3))

    def dualad_grad():
        return grad(*params)
    torch_grad = None
    if torch is not None:
        xt = torch.tensor(x)

        def torch_grad():
            ps = [torch.tensor(p, requires_grad=True) for p in params]
            gmm_torch(*ps, xt, gamma, m).backward()
            return tuple(p.grad.numpy() for p in ps)
    return numpy_f, dualad_grad, torch_grad


CASES = {
    "ode n=1000 s=10": lambda: ode_case(1000, 10),
    "ode n=10000 s=10": lambda: ode_case(10000, 10),
    "gmm d=2 k=5 N=1000": lambda: gmm_case(2, 5, 1000),
    "gmm d=20 k=50 N=1000": lambda: gmm_case(20, 50, 1000),
}


# ---------------------------------------------------------------------------- timing
def _time(fn, min_seconds=0.02):
    """Seconds per call: as many calls as fill ``min_seconds``."""
    reps, t0 = 0, time.perf_counter()
    while True:
        fn()
        reps += 1
        t = time.perf_counter() - t0
        if t >= min_seconds:
            return t / reps


def _first(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


class _GCMeter:
    """Collections and their time while installed: read from ``gc.callbacks`` only."""

    def __init__(self):
        self.count = {0: 0, 1: 0, 2: 0}
        self.seconds = 0.0
        self._t = None

    def __call__(self, phase, info):
        if phase == "start":
            self._t = time.perf_counter()
        elif self._t is not None:
            self.seconds += time.perf_counter() - self._t
            self.count[info["generation"]] += 1
            self._t = None

    def measure(self, fn):
        gc.callbacks.append(self)
        try:
            t0 = time.perf_counter()
            fn()
            total = time.perf_counter() - t0
        finally:
            gc.callbacks.remove(self)
        return total


def _check(dualad_grad, torch_grad):
    if torch_grad is None:
        return "-"
    a, b = dualad_grad(), torch_grad()
    a = a if isinstance(a, tuple) else (a,)
    b = b if isinstance(b, tuple) else (b,)
    err = max(float(np.max(np.abs(u - v) / (1 + np.abs(v)))) for u, v in zip(a, b))
    return f"{err:.0e}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=None, help="rows whose name contains this")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--no-affinity", action="store_true")
    parser.add_argument("--gc-report", action="store_true")
    args = parser.parse_args()
    for line in _pinning.pin_runtime(_THREADS, _EARLY):
        print(line)
    print(f"numpy {np.__version__}, torch {getattr(torch, '__version__', 'not installed')}, "
          f"dualad from {os.path.dirname(dualad.__file__)}; median of {args.repeats} "
          "interleaved rounds; ms per call (first call in brackets)")
    head = (f"{'row':24s} {'numpy f':>14s} {'dualad grad':>18s} {'torch grad':>18s} "
            f"{'dualad/torch':>12s} {'dualad/f':>9s} {'max rel diff':>12s}")
    print(head)
    print("-" * len(head))
    for name, make in CASES.items():
        if args.only and args.only not in name:
            continue
        numpy_f, dualad_grad, torch_grad = make()
        fns = [numpy_f, dualad_grad] + ([torch_grad] if torch_grad else [])
        firsts = [_first(fn) for fn in fns]
        times = [[] for _ in fns]
        for _ in range(args.repeats):
            for i, fn in enumerate(fns):
                times[i].append(_time(fn))
        med = [sorted(t)[len(t) // 2] * 1e3 for t in times]
        first = [f * 1e3 for f in firsts]
        cols = [f"{m:8.2f} ({f:.0f})" for m, f in zip(med, first)]
        if torch_grad is None:
            cols.append("-")
        ratio = f"{med[1] / med[2]:.2f}" if torch_grad else "-"
        print(f"{name:24s} {cols[0]:>14s} {cols[1]:>18s} {cols[2]:>18s} {ratio:>12s} "
              f"{med[1] / med[0]:9.1f} {_check(dualad_grad, torch_grad):>12s}")
        if args.gc_report:
            meter = _GCMeter()
            total = meter.measure(dualad_grad)
            print(f"    gc during one dualad gradient: collections by generation "
                  f"{meter.count}, {meter.seconds * 1e3:.2f} ms of {total * 1e3:.2f} ms")


if __name__ == "__main__":
    main()
