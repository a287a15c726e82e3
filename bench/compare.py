"""Before/after wall time of dualad's own rows, two checkouts interleaved in one run.

    python bench/compare.py OLD_CHECKOUT [NEW_CHECKOUT] [--rounds 5] [--only NAME ...]

Each round times every row once in a fresh interpreter per checkout (OLD then NEW, then
NEW then OLD in the next round, so drift on this VM falls on both alike) with BLAS pinned
to one thread. The table gives each side's median over rounds, the ratio NEW/OLD and the
spread (max/min over rounds) of each side. A checkout is put first on ``sys.path``; a
checkout whose planner installs as ``dualad.jacobians`` needs its own editable install
(``pip install -e``) for the new side, as the benchmark suite does.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROWS = ["scalar-chain", "rosenbrock", "jacobian", "hessian", "hvp", "logreg", "mlp",
        "jacobian-tall", "jacobian-wide", "sparse-jacobian"]


def _child(bench, names):
    """In a fresh interpreter: time dualad's implementation of each row of the checkout
    whose bench/ folder is ``bench``; print {row: seconds} as JSON."""
    sys.path.insert(0, bench)
    from _timing import median_time
    import workloads
    import workloads_jacobians  # noqa: F401  (registers the Jacobian rows)
    out = {}
    for wl in workloads.ALL:
        if wl.name in names and "dualad" in wl.impls:
            out[wl.name] = median_time(wl.impls["dualad"](False), repeat=5)
    print(json.dumps(out))


def _time(checkout, names):
    env = dict(os.environ, PYTHONPATH=checkout, OPENBLAS_NUM_THREADS="1",
               OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    res = subprocess.run([sys.executable, os.path.abspath(__file__), "--child",
                          os.path.join(checkout, "bench"), *names], env=env,
                         capture_output=True, text=True, cwd=checkout)
    if res.returncode:
        raise SystemExit(f"{checkout}: {res.stderr[-1500:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old", nargs="?")
    ap.add_argument("new", nargs="?", default=os.path.dirname(HERE))
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--only", nargs="*")
    args = ap.parse_args()
    if args.child:
        _child(args.child[0], args.child[1:])
        return
    names = args.only or ROWS
    runs = {"old": [], "new": []}
    for r in range(args.rounds):
        order = ["old", "new"] if r % 2 == 0 else ["new", "old"]
        for side in order:
            runs[side].append(_time(os.path.abspath(getattr(args, side)), names))
        print(f"round {r + 1}/{args.rounds} done", file=sys.stderr, flush=True)
    print(f"{'workload':<16} {'old':>10} {'new':>10} {'new/old':>8} {'spread old':>11} "
          f"{'spread new':>11}")
    for name in names:
        old = [t[name] for t in runs["old"] if name in t]
        new = [t[name] for t in runs["new"] if name in t]
        if not old or not new:
            continue
        mo, mn = statistics.median(old), statistics.median(new)
        print(f"{name:<16} {mo * 1e3:>8.3f}ms {mn * 1e3:>8.3f}ms {mn / mo:>8.3f} "
              f"{max(old) / min(old):>11.2f} {max(new) / min(new):>11.2f}")


if __name__ == "__main__":
    main()
