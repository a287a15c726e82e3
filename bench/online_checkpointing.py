"""Online checkpointing (dualad.while_loop) against offline binomial checkpointing (revolve,
the length known: dualad.scan(checkpoints="binomial")) and the store-all tape of a plain
Python loop: advances, peak memory and time of a gradient through 10^2, 10^3, 10^4 steps.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python bench/online_checkpointing.py \
        [--steps 100 1000 10000] [--snapshots 5 10 20] [--n 500] [--repeat 3]
    python bench/online_checkpointing.py --counts [--steps ...] [--snapshots ...]

Both online placements are run (``schedule="stumm-walther"`` and ``"wang-moin"``).
``--counts`` prints the schedules' advances and peak slots only (no gradients): the
table of docs/while_loop.md over lengths 10^2..10^4 and 5..20 snapshots. ``--vmap B``
times ``vmap(grad(f))`` over B lanes whose trip counts differ, the batched reverse sweep
against vmap's loop over the lanes (the batch rule switched off), results asserted equal.

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
from dualad.transforms.while_loop.online import online_forward_steps, placement  # noqa: E402

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


SCHEDULES = ("stumm-walther", "wang-moin")
SHORT = {"stumm-walther": "SW", "wang-moin": "WM"}


def online(steps, c, schedule):
    def loss(a, h0):
        h, _ = dualad.while_loop(lambda s: s[1] < steps,
                                 lambda s: (euler(a, s[0]), s[1] + 1), (h0, 0),
                                 snapshots=c, schedule=schedule)
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
    variants = {sch: online(steps, c, sch) for sch in SCHEDULES}
    variants["offline"] = offline(steps, c)
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


def counts(steps_list, snapshots):
    """The schedules alone: advances (revolve's convention) and the most slots held."""
    print("| steps | c | r | revolve (length known) | SW online | SW/revolve | WM online | "
          "WM/revolve | peak slots SW / WM / revolve |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for steps in steps_list:
        for c in snapshots:
            off = forward_steps(steps, c)
            sw, p_sw = online_forward_steps(steps, c, "stumm-walther")
            wm, p_wm = online_forward_steps(steps, c, "wang-moin")
            assert max(p_sw, p_wm) <= c
            print(f"| {steps} | {c} | {repetitions(steps, c)} | {off} | {sw} | "
                  f"{sw / off:.3f} | {wm} | {wm / off:.3f} | {p_sw} / {p_wm} / {c} |")
    lo, hi = min(steps_list), max(steps_list)
    print(f"\nEvery length n in [{lo}, {hi}]: online/revolve advances, worst (at n) and mean")
    print("| c | SW worst | SW mean | WM worst | WM mean |")
    print("|---:|---:|---:|---:|---:|")
    for c in snapshots:
        cells = [every_length(sch, c, lo, hi) for sch in SCHEDULES]
        print(f"| {c} | " + " | ".join(f"{w:.3f} (n = {n}) | {m:.3f}" for w, n, m in cells)
              + " |")


def every_length(schedule, c, lo, hi):
    """Worst and mean online/offline advance ratio over every length in [lo, hi]: one
    sweep, the cost of the placement after ``n - 1`` offers read at every ``n``."""
    slots = placement(schedule, c)
    worst, at, total = 0.0, lo, 0.0
    for n in range(1, hi + 1):
        if n > 1:
            slots.offer(n - 1)
        if n < lo:
            continue
        pos = slots.positions + [n]
        on = n + sum(forward_steps(pos[k + 1] - pos[k], c - k) for k in range(len(pos) - 1))
        ratio = on / forward_steps(n, c)
        total += ratio
        if ratio > worst:
            worst, at = ratio, n
    return worst, at, total / (hi - lo + 1)


def measured(args):
    rng = np.random.default_rng(0)
    a, h0 = 1.0 + 0.1 * rng.standard_normal(args.n), 0.5 * rng.standard_normal(args.n)
    carry_kb = h0.nbytes / 1024
    print(f"n = {args.n} states ({carry_kb:.1f} KiB per carry), dt = {DT}; peak memory "
          f"tracemalloc (MiB), time best of {args.repeat} (s)\n")
    print("| steps | c | advances SW / WM / revolve (measured = schedule) | "
          "peak SW / WM / revolve / store-all | t SW / WM / revolve / store-all |")
    print("|---:|---:|---:|---:|---:|")
    mib = 2.0 ** 20
    for steps in args.steps:
        full = store_all(steps)
        ref, peak_all, _ = peak_and_count(full, a, h0)
        t_all = min(timed(full, a, h0) for _ in range(args.repeat))
        for c in args.snapshots:
            r = row(steps, c, a, h0, ref, args.repeat)
            adv = []
            for sch in SCHEDULES:
                on, held = online_forward_steps(steps, c, sch)
                assert held <= c and r[sch]["measured"] == on, (sch, r, on)
                adv.append(on)
            off = forward_steps(steps, c)
            assert r["offline"]["measured"] == off, (r, off)
            keys = SCHEDULES + ("offline",)
            peaks = " / ".join(f"{r[k]['peak'] / mib:.2f}" for k in keys)
            times = " / ".join(f"{r[k]['time']:.3f}" for k in keys)
            print(f"| {steps} | {c} | {adv[0]} / {adv[1]} / {off} | {peaks} / "
                  f"{peak_all / mib:.2f} | {times} / {t_all:.3f} |", flush=True)


def vmap_bench(lanes, n, repeat):
    """vmap(grad) of a decay h <- h + dt (tanh(a h) - 2h), stopped on each lane's own
    size (|h|² <= 1e-2; lanes start at different sizes, so their trip counts differ):
    one batched sweep against the loop over lanes (the reverse primitive's batch rule
    returning NotImplemented, which is what vmap did before it had one)."""
    from dualad.transforms.while_loop import rules
    rng = np.random.default_rng(1)
    a = 1.0 + 0.1 * rng.standard_normal(n)
    h0s = (0.2 + 5.0 * rng.random((lanes, 1))) * rng.standard_normal((lanes, n)) / np.sqrt(n)

    def decay(h0):
        return dualad.while_loop(lambda s: np.sum(s[0] ** 2) > 1e-2,
                                 lambda s: (s[0] + DT * (np.tanh(a * s[0]) - 2.0 * s[0]),
                                            s[1] + 1), (h0, 0), snapshots=10)
    f = dualad.vmap(dualad.grad(lambda h0: np.sum(decay(h0)[0] ** 2)))
    real = rules._batch_reverse
    variants = {"batched": real, "lane loop": lambda *args: NotImplemented}
    out, times = {}, {k: [] for k in variants}
    for _ in range(repeat):
        for name, rule in variants.items():
            rules._batch_reverse = rule
            t = time.perf_counter()
            out[name] = f(h0s)
            times[name].append(time.perf_counter() - t)
    rules._batch_reverse = real
    np.testing.assert_allclose(out["batched"], out["lane loop"], rtol=1e-12, atol=1e-15)
    trips = [int(decay(h)[1]) for h in h0s]
    print(f"vmap(grad) over {lanes} lanes, n = {n}, trips {min(trips)}..{max(trips)}: "
          + ", ".join(f"{k} {min(v):.3f} s" for k, v in times.items())
          + f" (best of {repeat}, interleaved)")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, nargs="+", default=[100, 1000, 10000])
    p.add_argument("--snapshots", type=int, nargs="+", default=[5, 10, 20])
    p.add_argument("--n", type=int, default=500)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--counts", action="store_true")
    p.add_argument("--vmap", type=int, default=0, metavar="B")
    args = p.parse_args()
    if args.vmap:
        vmap_bench(args.vmap, args.n, args.repeat)
    elif args.counts:
        counts(args.steps, args.snapshots)
    else:
        measured(args)


if __name__ == "__main__":
    main()
