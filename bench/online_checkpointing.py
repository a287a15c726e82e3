"""Online checkpointing (dualad.while_loop) against offline binomial checkpointing (revolve,
the length known: dualad.scan(checkpoints="binomial")) and the store-all tape of a plain
Python loop: advances, peak memory and time of a gradient through 10^2, 10^3, 10^4 steps.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python bench/online_checkpointing.py \
        [--steps 100 1000 10000] [--snapshots 5 10 20] [--n 500] [--repeat 3]

The loop is an explicit Euler integration on n states, stopped by a counter the engine
cannot see in advance (the predicate ``i < steps`` is a traced comparison):

    h_{k+1} = h_k + dt·(tanh(a ⊙ h_k) − h_k³),   loss = Σ h_l²,

differentiated with respect to the closed-over rates ``a`` and the initial state ``h0``.

Advances (untaped step evaluations, revolve's convention: the ``l`` taped ones excluded)
are counted twice: by the schedule (:func:`online_forward_steps`,
:func:`dualad.revolve.forward_steps`) and by an identity primitive inside the step that
counts its evaluations (``measured``): for while_loop, measured = count − 1 (the trace) −
l (the value) − l (taped); for scan, the same. Peak memory is tracemalloc's around the
gradient call alone; time is wall time without tracemalloc, the three variants
interleaved, best of --repeat. Every gradient is asserted equal to the store-all one.
"""
from __future__ import annotations

import argparse
import os
import time
import tracemalloc

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import numpy as np  # noqa: E402

import dualad  # noqa: E402
from dualad.revolve import forward_steps, repetitions  # noqa: E402
from dualad.transforms.while_loop.online import online_forward_steps  # noqa: E402

COUNT = [0]
DT = 0.01


@dualad.primitive
def counted(h):
    """The identity, counting its evaluations (whatever runs it)."""
    COUNT[0] += 1
    return h


counted.defvjp(lambda ct, ans, h: ct)
counted.defjvp(lambda t, ans, h: t)


def euler(a, h):
    h = counted(h)
    return h + DT * (np.tanh(a * h) - h ** 3)


def online(steps, c):
    def loss(a, h0):
        h, _ = dualad.while_loop(lambda s: s[1] < steps,
                                 lambda s: (euler(a, s[0]), s[1] + 1), (h0, 0),
                                 snapshots=c)
        return np.sum(h ** 2)
    return loss


def offline(steps, c):
    def loss(a, h0):
        h, _ = dualad.scan(lambda h, _: (euler(a, h), None), h0, None, length=steps,
                           checkpoints="binomial", snapshots=c)
        return np.sum(h ** 2)
    return loss


def store_all(steps):
    def loss(a, h0):
        h = h0
        for _ in range(steps):
            h = euler(a, h)
        return np.sum(h ** 2)
    return loss


def peak_and_count(loss, a, h0):
    tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    COUNT[0] = 0
    g = dualad.grad(loss, argnums=(0, 1))(a, h0)
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    return g, peak, COUNT[0]


def timed(loss, a, h0):
    t = time.perf_counter()
    dualad.grad(loss, argnums=(0, 1))(a, h0)
    return time.perf_counter() - t


def row(steps, c, a, h0, ref, repeat):
    variants = {"online": online(steps, c), "offline": offline(steps, c)}
    out = {}
    for name, loss in variants.items():
        g, peak, count = peak_and_count(loss, a, h0)
        for x, y in zip(g, ref):
            np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-14)
        out[name] = {"peak": peak, "measured": count - 1 - 2 * steps}
    times = {k: [] for k in variants}
    for _ in range(repeat):
        for name, loss in variants.items():
            times[name].append(timed(loss, a, h0))
    for name in variants:
        out[name]["time"] = min(times[name])
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, nargs="+", default=[100, 1000, 10000])
    p.add_argument("--snapshots", type=int, nargs="+", default=[5, 10, 20])
    p.add_argument("--n", type=int, default=500)
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    rng = np.random.default_rng(0)
    a, h0 = 1.0 + 0.1 * rng.standard_normal(args.n), 0.5 * rng.standard_normal(args.n)
    carry_kb = h0.nbytes / 1024
    print(f"n = {args.n} states ({carry_kb:.1f} KiB per carry), dt = {DT}; peak memory "
          f"tracemalloc (MiB), time best of {args.repeat} (s)\n")
    print("| steps | c | online advances (schedule / measured) | offline advances "
          "(revolve) | online/offline | r offline | peak online | peak offline | "
          "peak store-all | t online | t offline | t store-all |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for steps in args.steps:
        full = store_all(steps)
        ref, peak_all, _ = peak_and_count(full, a, h0)
        t_all = min(timed(full, a, h0) for _ in range(args.repeat))
        for c in args.snapshots:
            r = row(steps, c, a, h0, ref, args.repeat)
            on, held = online_forward_steps(steps, c)
            off = forward_steps(steps, c)
            assert held <= c and r["online"]["measured"] == on, (r, on)
            assert r["offline"]["measured"] == off, (r, off)
            mib = 2.0 ** 20
            print(f"| {steps} | {c} | {on} / {r['online']['measured']} | {off} | "
                  f"{on / off:.3f} | {repetitions(steps, c)} | "
                  f"{r['online']['peak'] / mib:.2f} | {r['offline']['peak'] / mib:.2f} | "
                  f"{peak_all / mib:.2f} | {r['online']['time']:.3f} | "
                  f"{r['offline']['time']:.3f} | {t_all:.3f} |", flush=True)


if __name__ == "__main__":
    main()
