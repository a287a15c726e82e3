"""Issue 31's table ("Fast by default"): the calls a researcher makes, dualad's default
public spelling against the alternatives they have, in one interleaved run.

    python bench/fast_by_default.py [--quick] [--markdown] [--only jac,hess,...]
                                    [--rounds R] [--min-time S] [--threads N]

Rows (``--only`` names in brackets): [jac] a prepared ``jacobian_fn`` per call on a
mass-action kinetics right-hand side (n = 20, 200, 2000) and Robertson, vs SciPy's finite
differences (``approx_derivative``), the hand-written Jacobian, jax.jit(jax.jacfwd),
torch.func.jacfwd; [hess] ``hessian_fn`` of a logistic loss (n = 2000, d = 50) and the
``trust-exact`` solve with ``minimize_kwargs`` vs hand-written derivatives; [lv] the gradient
of a 4-parameter Lotka-Volterra fit through ``dualad.scipy.integrate.solve_ivp`` vs
``approx_fprime`` (time per gradient, error against a tight-tolerance reference, whole BFGS
fit); [bdf] Robertson (and the 20-species network) in ``solve_ivp(method="BDF", jac=...)``;
[gradbench] GradBench's ode, det, kmeans and lse gradients (bench/gradbench_numpy.py);
[import] ``import dualad`` vs ``import numpy, scipy`` (fresh interpreters); [tests] a row
the lead fills by hand.

How it is measured: BLAS/OpenMP pools pinned to N (default 1) before NumPy loads and read
back with threadpoolctl (bench/_pinning.py; XLA flags and CPU affinity too); per row, every
participant is built and called once (``first call`` = building the prepared object + its
first call: tracing, compiling), called a second time, then all are timed in R rounds,
each round one group of calls per participant, the order rotated (bench/_timing.py). The
cell is the median per call; ``vs`` is the ratio to the row's reference (marked ``ref``);
``spread`` is max/min over the rounds. Whole solves and fits are timed once each
(``rounds 0``), one after the other. A participant that raises prints its error in its cell
and the run goes on. The dualad measured is whatever ``import dualad`` finds (PYTHONPATH
picks the tree); the header prints its path. No timing is asserted anywhere.
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _pinning  # noqa: E402  (imports nothing numerical)

if __name__ == "__main__":
    _EARLY = _pinning.pin_environment(_pinning.threads_from_argv(sys.argv[1:]), sys.argv,
                                      _pinning.affinity_from_argv(sys.argv[1:]))
else:
    _EARLY = None

import argparse  # noqa: E402
import platform  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from _timing import fmt, interleaved, optional  # noqa: E402
import fast_by_default_tasks as tasks_mod  # noqa: E402


def _as_array(r):
    if r is None:
        return None
    if hasattr(r, "detach"):
        return r.detach().numpy()
    if isinstance(r, (tuple, list)) and len(r) == 1:
        return _as_array(r[0])
    try:
        return np.asarray(r, dtype=float)
    except (TypeError, ValueError):
        return None


def _err_cell(exc):
    msg = " ".join(str(exc).split())
    return f"error: {type(exc).__name__}: {msg[:90]}"


def run_task(task, rounds, min_time):
    """-> list of (participant, per-call cell, first-call cell, ratio cell, note)."""
    if task.manual:
        return [(name, "(fill by hand)", "-", "-", task.manual) for name in task.participants]
    built, rows, results = {}, {}, {}
    for name, build in task.participants.items():
        try:
            t0 = time.perf_counter()
            call = build()
            t1 = time.perf_counter()
            out = call()
            t2 = time.perf_counter()
            results[name] = out
            built[name] = (call, t2 - t0, t2 - t1)
        except Exception as exc:  # noqa: BLE001 - the cell says what went wrong
            rows[name] = (_err_cell(exc), "-", "-", "")
    r = task.rounds if task.rounds is not None else rounds
    timed = {}
    if r > 0:
        calls = {}
        for name, (call, _, _) in built.items():
            try:
                call()                      # second call: a jitted helper replays from here
                calls[name] = call
            except Exception as exc:  # noqa: BLE001
                rows[name] = (_err_cell(exc) + " (second call)", fmt(built[name][1]), "-", "")
        try:
            timed = interleaved(calls, rounds=r, min_time=min_time)
        except Exception as exc:  # noqa: BLE001
            for name in calls:
                rows[name] = (_err_cell(exc) + " (timing)", fmt(built[name][1]), "-", "")
    per_call = {n: (timed[n].median if n in timed else built[n][2]) for n in built
                if n not in rows}
    truth = next((t for t in task.truth if t in results and t not in rows), None)
    conv = task.result or _as_array
    truth_val = conv(results[truth]) if truth else None
    ref_t = per_call.get(task.ref)
    for name in task.participants:
        if name in rows:
            continue
        note = []
        if name in timed:
            note.append(f"spread {timed[name].spread:.2f}")
        elif r == 0:
            note.append("one run")
        if truth_val is not None and name != truth:
            val = conv(results[name])
            if val is not None and np.shape(val) == np.shape(truth_val):
                scale = max(np.max(np.abs(truth_val)), 1e-300)
                note.append(f"err vs {truth} {np.max(np.abs(val - truth_val)) / scale:.1e}")
            elif val is not None:
                note.append(f"MISMATCH shape {np.shape(val)} vs {np.shape(truth_val)}")
        if task.describe is not None:
            try:
                note.append(task.describe(results[name]))
            except Exception:  # noqa: BLE001
                pass
        if name in task.notes:
            note.append(task.notes[name])
        t = per_call[name]
        ratio = "ref" if name == task.ref else (f"{t / ref_t:.2f}x" if ref_t else "-")
        rows[name] = (fmt(t), fmt(built[name][1]), ratio, "; ".join(note))
    return [(name, *rows[name]) for name in task.participants]


def _uptime():
    """``uptime``'s line (the load average: above the core count, other processes took
    cores from this run)."""
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True,
                              timeout=5).stdout.strip()
    except Exception:  # noqa: BLE001
        return "load average " + ", ".join(f"{v:.2f}" for v in os.getloadavg())


def header(args, early):
    import dualad
    lines = [f"date (UTC): {time.strftime('%Y-%m-%d %H:%M', time.gmtime())}",
             f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
             f"{platform.python_version()}, NumPy {np.__version__}"]
    lines.append("at the start: " + _uptime())
    import scipy
    vers = [f"SciPy {scipy.__version__}"]
    for peer in ("jax", "torch"):
        mod = sys.modules.get(peer)
        vers.append(f"{peer} {mod.__version__}" if mod else f"{peer} not installed (skipped)")
    lines.append(", ".join(vers))
    jac_file = "?"
    try:
        import dualad.jacobians
        jac_file = dualad.jacobians.__file__
    except Exception as exc:  # noqa: BLE001
        jac_file = _err_cell(exc)
    root = os.path.dirname(os.path.dirname(os.path.abspath(dualad.__file__)))
    rev = subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"],
                         capture_output=True, text=True).stdout.strip() or "no git"
    lines.append(f"dualad: {dualad.__file__} (git {rev}); dualad.jacobians: {jac_file}")
    lines += _pinning.pin_runtime(args.threads, early or ())
    lines.append(f"rounds {args.rounds}, min time per group {args.min_time} s"
                 + (" (--quick: tiny sizes)" if args.quick else ""))
    return lines


def render(results, lines, markdown):
    head = ("task", "participant", "per call", "first call", "vs ref", "note")
    out = []
    if markdown:
        out += ["```"] + lines + ["```", "", "| " + " | ".join(head) + " |",
                                   "|" + "---|" * len(head)]
        for task, rows in results:
            for i, row in enumerate(rows):
                cells = [task if i == 0 else ""] + [str(c).replace("|", "/") for c in row]
                out.append("| " + " | ".join(cells) + " |")
        return "\n".join(out)
    out += lines + [""]
    for task, rows in results:
        out.append(task)
        for row in rows:
            out.append(f"  {row[0]:<34} {row[1]:>12} {row[2]:>12} {row[3]:>8}  {row[4]}")
    return "\n".join(out)


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="tiny sizes, few rounds (smoke test)")
    p.add_argument("--markdown", action="store_true")
    p.add_argument("--only", default="", help="comma-separated groups: " + ",".join(
        tasks_mod.GROUPS))
    p.add_argument("--rounds", type=int, default=None)
    p.add_argument("--min-time", type=float, default=None)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--no-affinity", action="store_true")
    args = p.parse_args(argv)
    if args.rounds is None:
        args.rounds = 2 if args.quick else 5
    if args.min_time is None:
        args.min_time = 0.002 if args.quick else 0.05
    return args


def main(argv=None):
    args = parse(sys.argv[1:] if argv is None else argv)
    if _EARLY is None:                    # imported (tests): pin what can still be pinned
        os.environ.update(_pinning.pinned_environ(args.threads, os.environ))
    peers = {name: optional(name) for name in ("jax", "torch")}
    if peers["jax"] is not None:
        peers["jax"].config.update("jax_enable_x64", True)
    lines = header(args, _EARLY)
    groups = [g for g in args.only.split(",") if g] or list(tasks_mod.GROUPS)
    results = []
    for group in groups:
        try:
            made = tasks_mod.GROUPS[group](args.quick, peers)
        except Exception as exc:  # noqa: BLE001
            results.append((group, [("(building the row)", _err_cell(exc), "-", "-", "")]))
            continue
        for task in made:
            t0 = time.perf_counter()
            rows = run_task(task, args.rounds, args.min_time)
            results.append((task.name, rows))
            print(f"[{time.perf_counter() - t0:6.1f} s] " + render([(task.name, rows)], [],
                                                                   False).strip(),
                  file=sys.stderr, flush=True)    # progress, and the rows if a run is cut
    lines.append("at the end: " + _uptime())
    print(render(results, lines, args.markdown))
    return results


if __name__ == "__main__":
    main()
