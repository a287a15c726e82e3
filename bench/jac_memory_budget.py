"""jacobians.jacrev and jacobians.hessian under max_memory (issue 36): budget, peak, time.

A 50-layer tanh MLP (width 32) on a batch of 128 samples; ``mlp(x)`` is the batch mean
of its output against a shift ``x`` of its input (n = m = 32), ``loss(x) = ||mlp(x)||²``.
The tape (every layer's values) is ~4.9 MB, the Jacobian 8 KB: the budget is spent on
the sweeps. Budgets are fractions of the modelled store-all peak of one direction
(:class:`jacobians.memory.Footprint`); peak = tracemalloc peak of the whole call
(census, planning, sweeps); each result is asserted equal to the store-all one
(rtol 1e-12 for jacrev, 1e-10 for the Hessian). Run, on one core with BLAS pinned:

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \\
        taskset -c 0 python bench/jac_memory_budget.py
"""
import sys
import time
import tracemalloc

import numpy as np

from dualad import jacobians
from dualad.jacobians import budget
from dualad.jacobians._common import Problem
from dualad.jacobians.memory import Footprint
from dualad.jacobians.sweeps import get_census

rng = np.random.default_rng(0)
W, L, BATCH = 32, 50, 128
WS = [rng.standard_normal((W, W)) / np.sqrt(W) for _ in range(L)]
BS = [rng.standard_normal(W) * 0.1 for _ in range(L)]
DATA = rng.standard_normal((BATCH, W))
X = rng.standard_normal(W) * 0.1


def mlp(x):
    h = DATA + x
    for w, b in zip(WS, BS):
        h = np.tanh(h @ w + b)
    return np.mean(h, axis=0)


def loss(x):
    return np.sum(mlp(x) ** 2)


def store_all(f, kind):
    problem = Problem("jacobian", f, (X,), 0)
    fp = Footprint(problem, get_census(problem), np.dtype(float), kind)
    return fp.reverse(1) if kind == "jacobian" else fp.hessian(1)


def measure(call):
    tracemalloc.start()
    t = time.perf_counter()
    out = call()
    t = time.perf_counter() - t
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return out, peak, t


def main(fractions=(1.0, 0.3, 0.1, 0.03)):
    rows = []
    for api, f, call, rtol in (("jacrev", mlp, jacobians.jacrev, 1e-12),
                               ("hessian", loss, jacobians.hessian, 1e-10)):
        ref, peak, t = measure(lambda: call(f, X))
        rows.append((api, "default (256 MiB)", "-", peak, t, budget.last_choice(f)))
        full = store_all(f, "jacobian" if api == "jacrev" else "hessian")
        for frac in fractions:
            m = int(frac * full)
            try:
                out, peak, t = measure(lambda: call(f, X, max_memory=m))
            except budget.BudgetTooSmall as e:
                rows.append((api, f"{frac:.0%} ({m / 1e6:.2f} MB)", str(e)[:90], 0, 0, None))
                continue
            np.testing.assert_allclose(out, ref, rtol=rtol, atol=1e-14)
            rows.append((api, f"{frac:.0%} ({m / 1e6:.2f} MB)", m, peak, t,
                         budget.last_choice(f)))
    print("| call | max_memory | route, chunk | modelled peak | measured peak | time |")
    print("|---|---|---|---|---|---|")
    for api, label, m, peak, t, ch in rows:
        if ch is None and not peak:
            print(f"| {api} | {label} | refused: {m} | | | |")
            continue
        rec = ""
        if ch is not None and ch.plan is not None:
            pct = 100 * ch.plan.recomputed_flops / max(ch.plan.total_flops, 1)
            rec = f", {pct:.0f}% recomputed"
        print(f"| {api} | {label} | {ch.route}, B={ch.chunk}{rec} | {ch.peak / 1e6:.2f} MB | "
              f"{peak / 1e6:.2f} MB | {t:.2f} s |")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
