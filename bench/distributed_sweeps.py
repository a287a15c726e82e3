"""Jacobian sweeps on worker processes: speedup with 2 workers against 1, overhead per task.

The expensive function is an ODE solve per evaluation: an explicit RK4 loop of a
stiff-ish reaction-diffusion system with n = 200 parameters,

    y' = 40 L y - 5 y + p * tanh(y),   y(0) = cos(0.1 i),   F(p) = y(T)

(L the 1-D Laplacian stencil, 1200 steps of dt = 1e-3), ~50 ms per plain evaluation
here. Its 200 x 200 Jacobian is timed

    locally                      jacobians.jacobian(F, p, mode=...)
    ProcessPoolExecutor(1), (2)  executor=pool
    LocalCluster 1 and 2 worker processes (threads_per_worker=1), executor=client

in forward and reverse mode with ``chunk_size=25`` (``--chunk``): 8 chunks of 25 directions,
the same chunks locally (8 sweeps) and on the workers (8 tasks, 4 per worker with 2), so
the results are bitwise equal (checked). (Without ``chunk_size`` the max_memory chunk of
this function is 2 directions: its census counts every intermediate of the 1200 steps as
live, so both the local loop and the executor would run 100 chunks.) Best of
``--repeat`` (default 2) after one checked warm-up call.
Every distributed result is checked bitwise against the local one with the same
chunking. The overhead per task is measured on a near-free function (sin of 64 inputs,
``chunk_size=1``: 64 tasks): (wall on the executor - wall locally) / tasks.

BLAS and OpenMP pools are pinned to ONE thread, in this process and in every worker:
the variables are set at the top of this script, before NumPy loads, and the workers
(forkserver processes, Dask's spawned workers) inherit the environment when they start.
So "2 workers" is two cores, not two BLAS pools fighting over them.

Usage: ``python bench/distributed_sweeps.py [--repeat 2] [--steps 1200] [--chunk 25]``

(Not ``bench/distributed.py``: ``tests/test_bench_run.py`` puts bench/ on ``sys.path``, where a
module of that name would shadow Dask's ``distributed`` package, in the test process and in
every Dask worker it starts.)
"""
from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
             "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ[_var] = "1"      # before NumPy is imported, here and in the workers

import argparse  # noqa: E402
import multiprocessing  # noqa: E402
import time  # noqa: E402
from concurrent.futures import ProcessPoolExecutor  # noqa: E402

import numpy as np  # noqa: E402

from dualad import jacobians  # noqa: E402

STEPS = 1200


def rhs(y, p):
    lap = np.concatenate([y[:1] * 0, y[2:] - 2 * y[1:-1] + y[:-2], y[:1] * 0])
    return 40.0 * lap - 5.0 * y + p * np.tanh(y)


def ode(p, steps=STEPS, dt=1e-3):
    """y(T) of the RK4 loop (module docstring)."""
    y = np.cos(np.arange(p.size) * 0.1)
    for _ in range(steps):
        k1 = rhs(y, p)
        k2 = rhs(y + 0.5 * dt * k1, p)
        k3 = rhs(y + 0.5 * dt * k2, p)
        k4 = rhs(y + dt * k3, p)
        y = y + dt / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
    return y


def cheap(x):
    return np.sin(x)


def best(fn, repeat, warm=True):
    if warm:
        fn()                               # warm-up: census, worker caches, imports
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--steps", type=int, default=STEPS)
    ap.add_argument("--chunk", type=int, default=25)
    args = ap.parse_args(argv)
    p = np.linspace(0.5, 1.5, 200)
    steps = args.steps
    t_eval = best(lambda: ode(p, steps), 3)
    print(f"F: RK4, {steps} steps, n = m = 200; one plain evaluation {t_eval * 1e3:.1f} ms; "
          f"chunk_size={args.chunk} ({-(-200 // args.chunk)} chunks); BLAS/OpenMP threads "
          f"pinned to 1 here and in the workers", flush=True)
    xs = np.linspace(0.1, 1.0, 64)

    chunk = args.chunk
    reference = {mode: jacobians.jacobian(ode, p, steps, mode=mode, chunk_size=chunk)
                 for mode in ("forward", "reverse")}

    def row(label, ex):
        out = {}
        kw = {} if ex is None else {"executor": ex}
        for mode in ("forward", "reverse"):
            def run():
                return jacobians.jacobian(ode, p, steps, mode=mode, chunk_size=chunk, **kw)
            # the warm-up call is checked bitwise (ode is elementwise: no BLAS product)
            assert np.array_equal(run(), reference[mode]), (label, mode)
            out[mode] = best(run, args.repeat, warm=False)
        if ex is None:
            over = None
        else:
            t_local = best(lambda: jacobians.jacfwd(cheap, xs, chunk_size=1), args.repeat)
            t_ex = best(lambda: jacobians.jacfwd(cheap, xs, chunk_size=1, executor=ex),
                        args.repeat)
            over = (t_ex - t_local) / xs.size
        print(f"  {label}: forward {out['forward']:.2f} s, reverse {out['reverse']:.2f} s",
              flush=True)
        return out, over

    results = {}
    results["local"] = row("local", None)
    ctx = multiprocessing.get_context("forkserver")
    for w in (1, 2):
        with ProcessPoolExecutor(w, mp_context=ctx) as ex:
            results[f"ProcessPoolExecutor({w})"] = row(f"pool {w}", ex)
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        print("(dask.distributed not installed: LocalCluster rows skipped; "
              "pip install \"dualad[distributed]\")")
    else:
        for w in (1, 2):
            with LocalCluster(n_workers=w, threads_per_worker=1, processes=True,
                              dashboard_address=None) as cluster, Client(cluster) as c:
                results[f"LocalCluster({w} workers)"] = row(f"dask {w}", c)

    print(f"\n{'where':<28}{'forward':>10}{'reverse':>10}   overhead per task")
    for label, (t, over) in results.items():
        o = "" if over is None else f"{over * 1e3:.2f} ms"
        print(f"{label:<28}{t['forward']:>9.2f}s{t['reverse']:>9.2f}s   {o}")
    for kind in ("ProcessPoolExecutor", "LocalCluster"):
        one = next((v for k, v in results.items() if k.startswith(kind) and "1" in k), None)
        two = next((v for k, v in results.items() if k.startswith(kind) and "2" in k), None)
        if one and two:
            print(f"speedup 2 vs 1 worker, {kind}: forward "
                  f"{one[0]['forward'] / two[0]['forward']:.2f}x, reverse "
                  f"{one[0]['reverse'] / two[0]['reverse']:.2f}x")


if __name__ == "__main__":
    main()
