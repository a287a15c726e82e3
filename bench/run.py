"""The benchmark suite: dualad against HIPS autograd, JAX (with and without jit) and
PyTorch eager, whichever are installed. One run, median times, ratios.

    pip install -e ".[bench]"   # autograd, jax; for PyTorch: pip install torch (CPU)
    python bench/run.py [--quick] [--only NAME ...] [--markdown] [--keep-heap]

Each workload prints the plain-NumPy function's time (where it has one), each
system's time and its ratio to the function (or to one gradient). No timing is
asserted anywhere: these are measurements for BENCHMARKS.md and issue notes.
"""
from __future__ import annotations

import argparse
import os
import platform
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import fmt, median_time, optional  # noqa: E402
import workloads  # noqa: E402
import workloads_jacobians  # noqa: E402  (registers the Jacobian workloads)

PEERS = ["dualad", "autograd", "jax", "jax.jit", "torch"]


def machine():
    import multiprocessing
    return (f"{platform.machine()}, {multiprocessing.cpu_count()} cores, Python "
            f"{platform.python_version()}, NumPy {np.__version__}")


def available():
    have = {"dualad": True, "autograd": optional("autograd") is not None,
            "torch": optional("torch") is not None}
    jax = optional("jax")
    have["jax"] = have["jax.jit"] = jax is not None
    if jax is not None:
        jax.config.update("jax_enable_x64", True)
    return have


def run(selected, quick, markdown):
    have = available()
    rows = []
    for wl in workloads.ALL:
        if selected and wl.name not in selected:
            continue
        base = median_time(wl.baseline(quick)) if wl.baseline else None
        times = {}
        for peer in PEERS:
            if not have[peer]:
                continue
            make = wl.impls.get(peer)
            if make is None:
                continue
            fn = make(quick)
            times[peer] = median_time(fn, repeat=5 if quick else 7)
        rows.append((wl, base, times))
        _print_row(wl, base, times, have)
    if markdown:
        print()
        print(markdown_table(rows, have))
    if not selected or "planner" in selected:
        print("\nplanner: mode='auto' against the faster fixed mode (tall, wide, a grid)")
        print("\n".join(workloads_jacobians.planner_report(quick)), flush=True)
    missing = [p for p in PEERS if not have[p]]
    if missing:
        print(f"\nnot installed (skipped): {', '.join(missing)}")


def _print_row(wl, base, times, have):
    d = times.get("dualad")
    parts = [f"{wl.name}: {wl.what}"]
    if base is not None:
        parts.append(f"  f = {fmt(base)}")
    for peer, t in times.items():
        r = f" ({t / base:.2f}x f)" if base else ""
        rel = f", dualad {t / d:.2f}x faster" if peer != "dualad" and d else ""
        parts.append(f"  {peer:9s} {fmt(t):>10s}{r}{rel}")
    if wl.extra:
        parts.append("  " + wl.extra(times, base))
    print("\n".join(parts), flush=True)


def markdown_table(rows, have):
    peers = [p for p in PEERS if have[p]]
    head = "| workload | f | " + " | ".join(peers) + " |"
    out = [head, "|" + "---|" * (len(peers) + 2)]
    for wl, base, times in rows:
        cells = []
        for p in peers:
            t = times.get(p)
            if t is None:
                cells.append("-")
            elif base:
                cells.append(f"{fmt(t)} ({t / base:.2f}x)")
            else:
                cells.append(fmt(t))
        out.append(f"| {wl.name} | {fmt(base) if base else '-'} | " + " | ".join(cells) + " |")
    out.append(f"\nMachine: {machine()}. Ratios in parentheses are to the plain NumPy function.")
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="smaller sizes, fewer repeats")
    ap.add_argument("--only", nargs="+", help="workload names to run")
    ap.add_argument("--markdown", action="store_true", help="also print a Markdown table")
    ap.add_argument("--keep-heap", action="store_true",
                    help="opt in to dualad.keep_heap() (glibc M_TOP_PAD = 64 MiB for this "
                         "process) before timing; off by default, as in a user's process")
    args = ap.parse_args(argv)
    heap = "off"
    if args.keep_heap:
        import dualad
        heap = "on" if dualad.keep_heap() else "requested, not applied (not glibc)"
    print(f"dualad benchmark suite on {machine()}; keep_heap {heap}\n")
    run(args.only, args.quick, args.markdown)


if __name__ == "__main__":
    main()
