"""Peak memory and time of a gradient through a 10^4-step loop: dualad.scan storing every
step against the binomial schedule (revolve) with s snapshots.

    python bench/scan_memory.py [--steps 10000] [--n 2000] [--snapshots 10 32 100 316]

The loop is an explicit Euler integration of a nonlinear ODE on n states,

    h_{k+1} = h_k + dt·(tanh(a ⊙ h_k) − h_k³ + x_k),   loss = Σ h_l²,

differentiated with respect to the closed-over rates ``a`` and the initial state. Peak
memory is tracemalloc's (NumPy reports its array buffers to it), measured around the
gradient call alone; time is wall time without tracemalloc (best of --repeat). The step
evaluations are counted by an identity primitive inside the step, so the advances are
counted, not assumed: total = 1 (the trace) + l (the value) + advances + l (taped steps).
"""
from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np

import dualad
from dualad import grad, scan
from dualad.revolve import forward_steps

COUNT = [0]


@dualad.primitive
def counted(h):
    """The identity, counting its evaluations (whatever runs it)."""
    COUNT[0] += 1
    return h


counted.defvjp(lambda ct, ans, h: ct)
counted.defjvp(lambda t, ans, h: t)


def make_loss(xs, dt, **kw):
    def loss(a, h0):
        def step(h, x):
            h = counted(h)
            return h + dt * (np.tanh(a * h) - h ** 3 + x), None
        h, _ = scan(step, h0, xs, **kw)
        return np.sum(h ** 2)
    return loss


def measure(loss, a, h0, repeat):
    tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    COUNT[0] = 0
    g = grad(loss, argnums=(0, 1))(a, h0)
    peak = tracemalloc.get_traced_memory()[1] - base
    evaluations = COUNT[0]
    tracemalloc.stop()
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        grad(loss, argnums=(0, 1))(a, h0)
        best = min(best, time.perf_counter() - t0)
    return g, peak, best, evaluations


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=10_000)
    p.add_argument("--n", type=int, default=2000)
    p.add_argument("--snapshots", type=int, nargs="*", default=[10, 32, 100, 316])
    p.add_argument("--repeat", type=int, default=1)
    args = p.parse_args(argv)
    l, n = args.steps, args.n
    rng = np.random.default_rng(0)
    a = rng.uniform(0.5, 1.5, n)
    h0 = rng.uniform(-0.5, 0.5, n)
    xs = 0.1 * rng.normal(size=(l, n))
    dt = 0.01
    carry_mb = h0.nbytes / 2 ** 20
    print(f"{l} steps, carry {n} floats ({carry_mb:.3f} MB), xs {xs.nbytes / 2 ** 20:.0f} MB "
          f"(an input, not counted)\n")
    print("| checkpoints | snapshots s | peak memory (MB) | time (s) | advances (counted) "
          "| forward_steps(l, s) |")
    print("|---|---|---|---|---|---|")
    ref = None
    for s in [None] + list(args.snapshots):
        kw = {} if s is None else dict(checkpoints="binomial", snapshots=s)
        g, peak, t, evals = measure(make_loss(xs, dt, **kw), a, h0, args.repeat)
        if ref is None:
            ref = g
            advances, bound = "0", "-"
        else:
            err = max(np.max(np.abs(u - v)) / np.max(np.abs(v)) for u, v in zip(g, ref))
            assert err < 1e-12, f"s={s}: gradient differs from storing every step by {err:.1e}"
            adv = evals - 1 - 2 * l
            bound = forward_steps(l, s)
            assert adv == bound, (s, adv, bound)
            advances = str(adv)
        print(f"| {'None' if s is None else 'binomial'} | {'-' if s is None else s} "
              f"| {peak / 2 ** 20:.1f} | {t:.2f} | {advances} | {bound} |", flush=True)


if __name__ == "__main__":
    main()
