"""The benchmark suite: dualad (and dualad.jit) against HIPS autograd, JAX (with and
without jit), PyTorch eager and CasADi, whichever are installed. One run prints
everything: times, spreads, ratios.

    pip install -e ".[bench]"   # autograd, jax, casadi, threadpoolctl; PyTorch: pip install torch
    python bench/run.py [--quick] [--only NAME ...] [--markdown] [--keep-heap]
                        [--threads N] [--rounds R] [--min-time S] [--casadi-sx]
                        [--json PATH]
    python bench/charts.py      # the SVG charts of the run (docs/_static/bench/)

Every run also writes its numbers to bench/results/latest.json (bench/_record.py;
--json PATH elsewhere), which bench/charts.py draws.

How it is measured (honest by construction):
- Threads: every BLAS/OpenMP pool is pinned to the same N (default 1) before NumPy,
  PyTorch or JAX load (OMP/OPENBLAS/MKL_NUM_THREADS, XLA_FLAGS for N = 1; the script
  re-executes itself if a numerical package was loaded earlier), the process is
  restricted to N cores (sched_setaffinity: XLA sizes its pool from it and ignores the
  flags otherwise; --no-affinity to opt out), PyTorch's pools are set
  with torch.set_num_threads / set_num_interop_threads, and threadpoolctl reads every
  native pool back (and limits any that disagrees). The header prints what each reports;
  each row prints each peer's CPU time per wall time (about 1 when one core was used).
- Interleaving: per workload, every peer's callable is built and warmed up first (jitted
  peers compile there), calibrated to a group of calls lasting >= min_time, then timed in
  R rounds; each round times one group of every peer (the plain function included), the
  order rotated by one place per round.
- Each row: the median per-call time over the rounds, its ratio to the plain NumPy
  function (for hvp: to one dualad gradient), and the spread: max/min over the R rounds.
  Each jitted peer (dualad.jit, jax.jit) also has its first call: the wall time of the
  warm-up call, which traces and compiles (one call, in this process after the row's
  un-jitted peers ran, so a library's own imports are mostly not in it).
- Every peer gets its best spelling (bench/_spellings.py: PyTorch's Jacobians, Hessians and
  HVP are the fastest of torch.func's and torch.autograd.functional's, chosen at build
  time and named on the row) and dualad no free work: whatever a peer receives as an
  argument is an input of dualad.jit's program too, not a constant of its trace.
- Each peer's result is compared once with dualad's (dualad.jit's to rtol 1e-10, from
  its second call, a replay; the others' to rtol 1e-8); a disagreement prints MISMATCH on
  the row. A peer that raises
  prints its error on its row; the run goes on.
No timing is asserted anywhere: these are measurements for BENCHMARKS.md and issue notes.
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _pinning  # noqa: E402  (imports nothing numerical)

if __name__ == "__main__":   # before NumPy loads: pin every pool (re-exec if too late)
    _EARLY = _pinning.pin_environment(_pinning.threads_from_argv(sys.argv[1:]), sys.argv,
                                      _pinning.affinity_from_argv(sys.argv[1:]))
else:
    _EARLY = None            # imported (tests): main() pins what it still can

import argparse  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402

import numpy as np  # noqa: E402

from _timing import fmt, interleaved, optional  # noqa: E402
import workloads  # noqa: E402
import workloads_jacobians  # noqa: E402  (registers the Jacobian workloads)
import workloads_casadi  # noqa: E402  (registers CasADi on the Jacobian rows)
from _results import agree, describe_error  # noqa: E402
import _record  # noqa: E402

PEERS = ["dualad", "dualad.jit", "autograd", "jax", "jax.jit", "torch", "casadi"]
JITTED = ["dualad.jit", "jax.jit"]   # peers whose first call traces/compiles: timed too
RTOL = {"dualad.jit": 1e-10}   # every other peer: 1e-8 against dualad's result


def machine():
    import multiprocessing
    return (f"{platform.machine()}, {multiprocessing.cpu_count()} cores, Python "
            f"{platform.python_version()}, NumPy {np.__version__}")


def _dist_version(name):
    from importlib import metadata
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "?"


def load():
    """The machine's load average (1, 5, 15 min): above the core count, other processes
    were taking cores away from this run."""
    try:
        return "load average " + ", ".join(f"{v:.2f}" for v in os.getloadavg())
    except OSError:
        return "load average unknown"


def available(threads=1):
    """Which peers can run, and their versions (imports them: after the pinning). With one
    thread, JAX runs each CPU computation on the calling thread (async dispatch off): with
    it on, a dispatch thread and XLA's worker share the one core and, on a loaded machine,
    took 4x the CPU share of the single-threaded peers (cpu/wall 0.9 against 0.2)."""
    import dualad
    have = {"dualad": True, "dualad.jit": hasattr(dualad, "jit")}
    versions = {"dualad": f"{getattr(dualad, '__version__', '?')} "
                          f"({os.path.dirname(dualad.__file__)})"}
    for peer in ("autograd", "torch", "jax", "casadi"):
        mod = optional(peer)
        have[peer] = mod is not None
        if mod is not None:
            versions[peer] = getattr(mod, "__version__", None) or _dist_version(peer)
    have["jax.jit"] = have["jax"]
    if have["jax"]:
        jax = optional("jax")
        jax.config.update("jax_enable_x64", True)
        if threads == 1 and "jax_cpu_enable_async_dispatch" in jax.config.values:
            jax.config.update("jax_cpu_enable_async_dispatch", False)
            versions["jax"] += " (CPU async dispatch off)"
    return have, versions


def _build(wl, peer, quick):
    """Build and warm up one peer's callable: (fn, result, seconds of the first call) or
    (None, error text, None). A jitted peer's first call traces or compiles; its result is
    taken from the second call, a replay, which is what the timed calls run."""
    try:
        fn = wl.impls[peer](quick)
        t0 = time.perf_counter()
        out = fn()        # the warm-up call (jitted peers trace / compile here)
        first = time.perf_counter() - t0
        return fn, (fn() if peer in JITTED else out), first
    except Exception as exc:  # noqa: BLE001 - the row prints it and the run goes on
        if os.environ.get("DUALAD_BENCH_TRACEBACK"):
            traceback.print_exc()
        return None, describe_error(exc), None


def run_workload(wl, have, quick, rounds, min_time):
    """Build, warm up, check and time every peer of one workload, interleaved.
    Returns (timings: name -> Timing, with "f" for the plain function; problems:
    peer -> text printed on its row; firsts: jitted peer -> seconds of its first call)."""
    fns, results, problems, firsts = {}, {}, {}, {}
    if wl.baseline:
        fns["f"] = wl.baseline(quick)
        fns["f"]()
    for peer in PEERS:
        if have.get(peer) and peer in wl.impls:
            fn, out, first = _build(wl, peer, quick)
            if fn is None:
                problems[peer] = f"ERROR {out}"
                continue
            fns[peer], results[peer] = fn, out
            if peer in JITTED:
                firsts[peer] = first
    ref = results.get("dualad")
    for peer, out in results.items():
        if peer != "dualad" and ref is not None:
            ok, how = agree(out, ref, RTOL.get(peer, 1e-8))
            if not ok:
                problems[peer] = f"MISMATCH with dualad ({how}) !!!"
    timings = {}
    try:
        timings = interleaved(fns, rounds=rounds, min_time=min_time)
    except Exception as exc:  # noqa: BLE001 - one peer raising later than its warm-up
        for name, fn in list(fns.items()):
            try:
                fn()
            except Exception as e:  # noqa: BLE001
                problems[name] = f"ERROR {describe_error(e)}"
                del fns[name]
        timings = interleaved(fns, rounds=rounds, min_time=min_time) if fns else {}
        if not problems:
            raise exc
    return timings, problems, firsts


def run(selected, quick, markdown, rounds, min_time, header, threads=1, json_path=None):
    have, versions = available(threads)
    for line in header(have, versions):
        print(line)
    print()
    rows = []
    for wl in workloads.ALL:
        if selected and wl.name not in selected:
            continue
        timings, problems, firsts = run_workload(wl, have, quick, rounds, min_time)
        rows.append((wl, timings, problems, firsts))
        _print_row(wl, timings, problems, firsts)
    if markdown:
        print()
        print(markdown_table(rows, have, rounds))
    if json_path:
        where = _record.record(json_path, rows, have, versions, machine(), rounds, quick)
        print(f"\nresults: {where} (charts: python bench/charts.py)")
    if not selected or "planner" in selected:
        print("\nplanner: mode='auto' against the faster fixed mode (tall, wide, a grid)")
        print("\n".join(workloads_jacobians.planner_report(quick)), flush=True)
    print(f"\nat the end: {load()}")
    missing = [p for p in PEERS if not have[p]]
    if missing:
        print(f"\nnot available (skipped): {', '.join(missing)}")


def _print_row(wl, timings, problems, firsts=None):
    base = timings["f"].median if "f" in timings else None
    d = timings["dualad"].median if "dualad" in timings else None
    dj = timings["dualad.jit"].median if "dualad.jit" in timings else None
    parts = [f"{wl.name}: {wl.what}"]
    for name, t in timings.items():
        line = (f"  {name:10s} {fmt(t.median):>10s}  spread {t.spread:5.2f}  "
                f"cpu/wall {t.cpu_per_wall:4.2f}")
        if base and name != "f":
            line += f"  ({t.median / base:.2f}x f)"
        rel = [f"{who} {t.median / ref:.2f}x faster" for who, ref in (("dualad", d), ("jit", dj))
               if ref and name not in ("f", "dualad", "dualad.jit")]
        if name == "dualad.jit" and d:
            rel.append(f"{d / t.median:.2f}x faster than dualad")
        line += ("; " + ", ".join(rel)) if rel else ""
        if name in (firsts or {}):
            line += f"; first call {fmt(firsts[name])}"
        if name in problems:
            line += "  " + problems[name]
        parts.append(line)
    for name, text in problems.items():
        if name not in timings:
            parts.append(f"  {name:10s} {text}")
    for name, note in wl.notes.items():
        if name in timings:
            parts.append(f"  ({note})")
    if wl.extra:
        parts.append("  " + wl.extra({k: t.median for k, t in timings.items() if k != "f"},
                                     base))
    print("\n".join(parts), flush=True)


def markdown_table(rows, have, rounds):
    peers = [p for p in PEERS if have[p]]
    jitted = [p for p in JITTED if have[p]]
    heads = peers + [f"first call: {p}" for p in jitted]
    out = ["| workload | f | " + " | ".join(heads) + " |", "|" + "---|" * (len(heads) + 2)]
    for wl, timings, problems, firsts in rows:
        base = timings["f"].median if "f" in timings else None
        cells = []
        for p in peers:
            t = timings.get(p)
            if t is None:
                cells.append("error" if p in problems else "-")
                continue
            ratio = f" ({t.median / base:.2f}x)" if base else ""
            flag = " MISMATCH" if "MISMATCH" in problems.get(p, "") else ""
            cells.append(f"{fmt(t.median)}{ratio} [{t.spread:.2f}]{flag}")
        cells += [fmt(firsts[p]) if p in firsts else "-" for p in jitted]
        f = f"{fmt(base)} [{timings['f'].spread:.2f}]" if base else "-"
        out.append(f"| {wl.name} | {f} | " + " | ".join(cells) + " |")
    out.append(f"\nMachine: {machine()}. Median of {rounds} interleaved rounds; ratios in "
               "parentheses are to the plain NumPy function (hvp: to one dualad gradient); "
               f"[s] is the spread, max/min of the {rounds} rounds; a first call is one "
               "call's wall time, trace and compile included.")
    notes = [f"- {wl.name}: {note}" for wl, timings, _, _ in rows
             for peer, note in wl.notes.items() if peer in timings]
    return "\n".join(out + (["", "Notes:"] + notes if notes else []))


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="smaller sizes, fewer rounds")
    ap.add_argument("--only", nargs="+", help="workload names to run")
    ap.add_argument("--markdown", action="store_true", help="also print a Markdown table")
    ap.add_argument("--keep-heap", action="store_true",
                    help="opt in to dualad.keep_heap() (glibc M_TOP_PAD = 64 MiB for this "
                         "process) before timing; off by default, as in a user's process")
    ap.add_argument("--threads", type=int, default=1,
                    help="threads for every peer's BLAS/OpenMP/XLA/torch pools (default 1)")
    ap.add_argument("--no-affinity", dest="affinity", action="store_false",
                    help="do not restrict the process to N cores (XLA then computes on "
                         "one thread per core whatever XLA_FLAGS says)")
    ap.add_argument("--rounds", type=int, help="interleaved rounds (default 7, quick 5)")
    ap.add_argument("--min-time", type=float, default=0.05,
                    help="seconds one group of calls lasts at least (default 0.05)")
    ap.add_argument("--casadi-sx", action="store_true",
                    help="CasADi's SX graphs instead of MX (the full Hessian stays MX)")
    ap.add_argument("--json", default=_record.DEFAULT, metavar="PATH",
                    help="where the results go, for bench/charts.py (default "
                         "bench/results/latest.json; '' for nowhere)")
    args = ap.parse_args(argv)
    early = (_EARLY if _EARLY is not None else
             _pinning.pin_environment(args.threads, affinity=args.affinity))
    if args.casadi_sx:
        workloads_casadi.MODE[0] = "SX"
    rounds = args.rounds or (5 if args.quick else 7)
    heap = "off"
    if args.keep_heap:
        import dualad
        heap = "on" if dualad.keep_heap() else "requested, not applied (not glibc)"

    def header(have, versions):
        yield f"dualad benchmark suite on {machine()}; at the start: {load()}"
        yield (f"allocator: keep_heap {heap}; rounds {rounds}, groups >= {args.min_time} s; "
               f"spread = max/min over the rounds")
        yield "peers: " + ", ".join(f"{k} {v}" for k, v in versions.items())
        if have.get("casadi"):
            yield f"casadi graphs: {workloads_casadi.MODE[0]} (hessian at full size: MX)"
        yield from _pinning.pin_runtime(args.threads, early)
        import numpy  # the BLAS NumPy itself reports
        cfg = getattr(numpy, "show_config", None)
        blas = ""
        if cfg is not None:
            try:
                blas = cfg(mode="dicts")["Build Dependencies"]["blas"]["name"]
            except Exception:  # noqa: BLE001 - older NumPy: no dict mode
                blas = "?"
        yield f"  numpy BLAS: {blas}"

    run(args.only, args.quick, args.markdown, rounds, args.min_time, header, args.threads,
        args.json)


if __name__ == "__main__":
    main()
