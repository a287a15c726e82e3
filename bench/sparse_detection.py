"""Sparsity detection time against the entries it finds (issue 35, "detection that scales").

    python bench/sparse_detection.py                    # this checkout only
    python bench/sparse_detection.py --before fc8271b   # and a git revision, side by side
    python bench/sparse_detection.py --ba 1-20          # GradBench BA sizes (default 1-14)

Every case runs ``jacobians.jacobian_sparsity`` in a fresh subprocess (so one case's
memory never slows the next, and a revision's code is imported from its own tree) and
reports the least of ``--repeat`` runs (cost.Stopwatch: min(wall, CPU) seconds), the
pattern's nonzeros and the seconds per nonzero. Repeats alternate between the trees.
Every run checks its pattern against the known one (the arrowhead's 3n - 2 nonzeros, BA's
``gb_ba.ba_sparsity``, the Brusselator's 6 per row): "exact" in the table.

Cases:
- the arrowhead y = x**2 + x[0]; f = [sum(sin(x)), y[1:]] at n = 10^3, 10^4, 10^5;
- GradBench's bundle adjustment (bench/gradbench/gb_ba.py) at its shipped sizes;
- the 2-D Brusselator (SparseConnectivityTracer's benchmark problem, periodic 5-point
  Laplacian plus the u^2 v reaction, written with np.roll) at N = 6, 24, 32, 128.

A case that fails (TooDense, out of memory under the ``--memory-gb`` address-space cap,
default 6, over the ``--timeout``) prints its error instead of a time.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tarfile
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


# --- the problems (run inside the worker) -------------------------------------------------
def arrowhead(n):
    import numpy as np

    def arrow(x):
        y = x ** 2 + x[0]
        return np.concatenate([[np.sum(np.sin(x))], y[1:]])
    return arrow, np.linspace(0.1, 1.0, n), 3 * n - 2


def brusselator(N):
    """SciML's brusselator_2d at t = 0 (the forcing term is off), vectorised."""
    import numpy as np
    A, B, alpha = 3.4, 1.0, 10.0 / (1.0 / (N - 1)) ** 2

    def lap(w):
        return (np.roll(w, 1, 0) + np.roll(w, -1, 0) + np.roll(w, 1, 1) + np.roll(w, -1, 1)
                - 4 * w)

    def f(flat):
        u = flat.reshape(N, N, 2)
        a, b = u[:, :, 0], u[:, :, 1]
        du = alpha * lap(a) + B + a * a * b - (A + 1) * a
        dv = alpha * lap(b) + A * a - a * a * b
        return np.stack([du, dv], axis=2).ravel()
    x = np.random.default_rng(0).uniform(0.5, 1.5, N * N * 2)
    # 5 stencil entries per row, plus the other species at the same site
    return f, x, (N * N * 2) * 6 if N > 2 else None


def ba(k):
    sys.path.insert(0, os.path.join(HERE, "gradbench"))
    from gb_ba import SIZES, ba_flat, ba_inputs, ba_point, ba_sparsity
    inputs = ba_inputs(*SIZES[k])
    return ba_flat(inputs), ba_point(inputs), ba_sparsity(*SIZES[k])


def _import_tree(tree):
    """Import dualad and dualad.jacobians from ``tree`` (a source checkout)."""
    sys.path.insert(0, tree)
    import dualad
    dualad.__path__.insert(0, tree)     # dualad.jacobians lives at <tree>/jacobians
    from dualad import jacobians
    assert jacobians.__file__.startswith(tree), jacobians.__file__
    return jacobians


def worker(tree, case, repeat, memory_gb):
    cap = int(memory_gb * 2 ** 30)
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    jacobians = _import_tree(tree)
    from dualad.jacobians.cost import Stopwatch
    kind, size = case.split(":")
    f, x, known = {"arrow": arrowhead, "ba": ba, "bruss": brusselator}[kind](int(size))
    best, pattern = float("inf"), None
    try:
        for _ in range(repeat):
            watch = Stopwatch()
            pattern = jacobians.jacobian_sparsity(f, x)
            best = min(best, watch.seconds())
    except Exception as e:  # noqa: BLE001 - reported, not raised
        print(json.dumps({"error": f"{type(e).__name__}: {str(e)[:90]}"}))
        return
    if known is None:
        exact = None
    elif isinstance(known, int):
        exact = pattern.nnz == known
    else:
        exact = (pattern != known).nnz == 0
    print(json.dumps({"seconds": best, "nnz": int(pattern.nnz), "exact": exact}))


# --- the driver ----------------------------------------------------------------------------
def run_case(tree, case, repeat, timeout, memory_gb):
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", tree, "--case", case,
           "--repeat", str(repeat), "--memory-gb", str(memory_gb)]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"over {timeout} s"}
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        tail = (out.stderr.strip().splitlines() or ["killed"])[-1]
        return {"error": tail[:100]}
    return json.loads(lines[-1])


def checkout(rev):
    """The source tree of git revision ``rev`` in a temporary directory."""
    tmp = tempfile.mkdtemp(prefix="detect-before-")
    archive = subprocess.run(["git", "-C", ROOT, "archive", rev], capture_output=True,
                             check=True).stdout
    with tempfile.TemporaryFile() as fh:
        fh.write(archive)
        fh.seek(0)
        with tarfile.open(fileobj=fh) as tar:
            tar.extractall(tmp, filter="data")
    return tmp


def cell(r):
    if "error" in r:
        return f"{r['error']}"
    mark = {True: "exact", False: "NOT EXACT", None: ""}[r.get("exact")]
    return (f"{r['seconds']:9.4f} s {r['nnz']:>11,d} nnz "
            f"{r['seconds'] / max(r['nnz'], 1) * 1e6:7.3f} us/nnz {mark}")


def ba_range(text):
    lo, _, hi = text.partition("-")
    return [f"ba:{k}" for k in range(int(lo), int(hi or lo) + 1)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", help="a git revision to compare with (e.g. main's commit)")
    ap.add_argument("--ba", default="1-14", help="GradBench BA sizes, e.g. 1-14 or 3")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--memory-gb", type=float, default=6.0)
    ap.add_argument("--only", help="comma-separated cases, e.g. arrow:1000,ba:2")
    ap.add_argument("--worker")
    ap.add_argument("--case")
    args = ap.parse_args()
    if args.worker:
        return worker(args.worker, args.case, args.repeat, args.memory_gb)
    cases = args.only.split(",") if args.only else (
        [f"arrow:{n}" for n in (1000, 10_000, 100_000)] + ba_range(args.ba)
        + [f"bruss:{N}" for N in (6, 24, 32, 128)])
    trees = [("after", ROOT)] + ([("before", checkout(args.before))] if args.before else [])
    print(f"# python bench/sparse_detection.py {' '.join(sys.argv[1:])}")
    for case in cases:
        results = {name: [] for name, _ in trees}
        for _ in range(args.repeat):   # alternate the trees, one run of each per round
            for name, tree in trees:
                results[name].append(run_case(tree, case, 1, args.timeout, args.memory_gb))
        for name, _ in trees:
            ok = [r for r in results[name] if "error" not in r]
            best = min(ok, key=lambda r: r["seconds"]) if ok else results[name][-1]
            print(f"{case:12s} {name:6s} {cell(best)}", flush=True)


if __name__ == "__main__":
    main()
