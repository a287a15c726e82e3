"""GradBench's evals, dualad against the Python AD tools, in one interleaved run.

    python bench/gradbench/run.py [--quick] [--only gmm,lse,...] [--peers dualad,torch,...]
                                  [--functions rr,ff] [--rounds R] [--min-time S] [--threads N] [--try-all]
                                  [--lstm-text PATH]

Without GradBench's CLI or Docker: each row makes the ``input`` GradBench's eval sends at
that size (bench/gradbench/gb_inputs.py: the eval's seed and draw order), builds every
peer's derivative function on it (bench/gradbench/gb_evals.py, the same calls the tool
answers ``evaluate`` with) and times them side by side: the plain NumPy primal (the
reference of ``x f``), dualad eager, dualad.jit, dualad.jit+numba (``backend="numba"``), autograd, jax.jit, PyTorch
(bench/gradbench/gb_peers.py says each one's spelling). A peer whose package does not
import is skipped and the header says so.

How it is measured: BLAS/OpenMP pools pinned to N (default 1) before NumPy loads, XLA's
flags and the CPU affinity too (bench/_pinning.py, as bench/fast_by_default.py); per row,
each participant is built and called once (``first call``: building + the first call, so a
jitted peer's tracing and compiling; dualad.jit+numba's first call runs the NumPy program
while Numba compiles on a background thread: the runner then waits for every compilation
and reports "numba ready after" (from the start of the first call), and its rounds time the
Numba replay, or the fallback the cell names), called again, then all are timed in R rounds, one
group of calls each per round, the order rotated (bench/_timing.py); cells are medians. A
participant whose second call took over ``--slow`` seconds (default 5) is not in the rounds:
that second call is its time ("one call").
``x f`` is the per-call time over the NumPy primal's. ``dualad.jit / best`` is dualad.jit's
time over the fastest of the other tools (autograd, jax.jit, torch).

Every output is checked: each peer's derivative against dualad eager's (max abs difference
over the max abs entry, ``err``; above 1e-8 the cell is an ERROR, not a time), each peer's
primal against NumPy's, and dualad eager's derivative against an independent value: a
central finite difference of the NumPy primal along a random direction (kmeans ``dir``: its
closed form, gradient 2 sum (C_j - P_i) over the points nearest C_j over the Hessian
diagonal 2 |S_j|). jax.jit is not run on det with ell >= 7 (the unrolled program does not
compile in reasonable time; GradBench's JAX tool has no det), unless ``--try-all``;
jax.jit's and dualad.jit's ode
and lstm time steps are a ``jax.lax.scan`` / ``dualad.scan`` (bench/gradbench/gb_peers.py;
dualad eager and dualad.jit+numba run the Python loop as written: for the Numba backend
the unrolled program replays faster). Under jit ``dualad.scan`` is one loop equation whose
step is traced once: lstm (4, 1024)'s first call 0.9 s instead of 18 s (the Python loop's
trace), its replay within 5% (bench/gradbench/gb_peers.py says more); the outputs are the
Python loop's, bit for bit, and are checked like every other. XLA's one-time
start-up is done before the first row (no row's first call). No timing is asserted anywhere.

The nested evals (particle, saddle; a row per function ff, fr, rf, rr; no quick rows: the
solve has no size to shrink): ``NumPy f`` is the solve with its derivatives written by hand
(bench/gradbench/gb_nested.py), and every peer's output is checked against it (``err``), and
that reference against GradBench's golden output (its validator, tolerance 1e-4). An eager
peer whose first call took over ``--slow`` seconds is timed by that call alone. dualad.jit
jits the solver's objective and gradient (the solver is Python); jax.jit the whole solve.
"""
from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(1, os.path.dirname(HERE))
import _pinning  # noqa: E402  (imports nothing numerical)

if __name__ == "__main__":
    _EARLY = _pinning.pin_environment(_pinning.threads_from_argv(sys.argv[1:]), sys.argv,
                                      _pinning.affinity_from_argv(sys.argv[1:]))
else:
    _EARLY = None

import argparse  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from _timing import fmt, interleaved  # noqa: E402
import gb_evals as E  # noqa: E402
import gb_inputs as I  # noqa: E402
import gb_nested as N  # noqa: E402
import gb_peers  # noqa: E402

TOOLS = ("dualad", "dualad.jit", "dualad.jit+numba", "autograd", "jax.jit", "torch")
PEERS = ("autograd", "jax.jit", "torch")
TOL = 1e-8


def rows(quick, lstm_text=None):
    """(label, module, input, function) of every row (function None: the module's
    derivative; the nested evals have no size to shrink, so no quick row)."""
    if quick:
        return [(*r, None) for r in [
                ("gmm (2, 3), n=20", "gmm", I.gmm(2, 3, 20)),
                ("lse (100)", "lse", I.lse(100, standard=False)),
                ("ode (8, 4)", "ode", I.ode(8, 4, standard=False)),
                ("kmeans (3, 30, 2)", "kmeans", I.kmeans(3, 30, 2, standard=False)),
                ("det (3)", "det", I.det(3, standard=False)),
                ("llsq (16, 4)", "llsq", I.llsq(16, 4, standard=False)),
                ("lstm (1, 6)", "lstm", I.lstm(1, 6, lstm_text))]]
    nested = [(f"{m} {v}", m, inp, v) for m, inp in (("particle", I.particle()),
                                                        ("saddle", I.saddle()))
              for v in N.VARIANTS]
    return [(*r, None) for r in [("gmm (2, 5), n=1000", "gmm", I.gmm(2, 5)),
            ("gmm (20, 50), n=1000", "gmm", I.gmm(20, 50)),
            ("lse (2500)", "lse", I.lse(2500)),
            ("lse (1.28e6)", "lse", I.lse(1280000)),
            ("ode (1000, 10)", "ode", I.ode(1000, 10)),
            ("ode (1e4, 100)", "ode", I.ode(10000, 100)),
            ("kmeans (10, 1000, 8)", "kmeans", I.kmeans(10, 1000, 8)),
            ("det (5)", "det", I.det(5)),
            ("det (8)", "det", I.det(8)),
            ("llsq (1024, 128)", "llsq", I.llsq(1024, 128)),
            ("lstm (4, 1024)", "lstm", I.lstm(4, 1024, lstm_text))]] + nested


def flat(out):
    """A JSON output (number, list, {alpha, mu, q, l}) as one float vector."""
    if isinstance(out, dict):
        return np.concatenate([flat(out[k]) for k in sorted(out)])
    return np.ravel(np.asarray(out, dtype=np.float64))


def rel_err(a, b):
    a, b = flat(a), flat(b)
    if a.shape != b.shape:
        return float("inf")
    return float(np.max(np.abs(a - b), initial=0.0) / max(np.max(np.abs(b), initial=0.0),
                                                          1e-300))


def independent_check(module, inp, out):
    """dualad eager's derivative output against a finite difference / closed form."""
    if module == "kmeans":
        P, C = np.asarray(inp["points"]), np.asarray(inp["centroids"])
        near = np.argmin(((P[:, None, :] - C[None]) ** 2).sum(2), 1)
        g = np.stack([2 * (np.sum(near == j) * C[j] - P[near == j].sum(0))
                      for j in range(len(C))])
        h = np.stack([np.full(C.shape[1], 2.0 * np.sum(near == j)) for j in range(len(C))])
        return "closed form", rel_err(out, g / h)
    numpy = gb_peers.NumPyPeer()
    f, args, _, _ = E._program(module, numpy, inp)
    rng = np.random.default_rng(1)
    dirs = [rng.standard_normal(np.shape(a)) for a in args]
    g = flat(out) if module != "gmm" else np.concatenate(
        [flat(out[k]) for k in ("alpha", "mu", "q", "l")])
    h = 1e-6
    fd = (f(*[a + h * v for a, v in zip(args, dirs)])
          - f(*[a - h * v for a, v in zip(args, dirs)])) / (2 * h)
    exact = float(g @ np.concatenate([np.ravel(v) for v in dirs]))
    return "central FD", abs(fd - exact) / max(abs(exact), 1e-300)


def _err_cell(exc):
    return f"ERROR {type(exc).__name__}: {' '.join(str(exc).split())[:80]}"


def skip_reason(name, module, inp, try_all):
    if name == "jax.jit" and not try_all:
        if module == "det" and int(inp["ell"]) >= 7:
            return "not run: does not compile in reasonable time (--try-all)"
    return ""


def run_row(label, module, inp, peers, args, function=None):
    """-> dict peer -> {time, spread, first, err, note}; plus the row's check text.
    ``function``: the derivative timed (default the module's; a nested eval's variant)."""
    res, calls, outs = {}, {}, {}
    nested = module in E.NESTED
    function = function or E.DERIVATIVE[module]
    numpy = gb_peers.NumPyPeer()
    fcall, fpost = E.build(module, E.PRIMAL[module], numpy, inp)
    primal_ref = fpost(fcall())
    calls["numpy"] = fcall
    res["numpy"] = {"note": ""}
    for name, peer in peers.items():
        why = skip_reason(name, module, inp, args.try_all)
        if why:
            res[name] = {"error": why}
            continue
        try:
            t0 = time.perf_counter()
            call, post = E.build(module, function, peer, inp)
            outs[name] = post(call())
            first = time.perf_counter() - t0
            tiered = {}
            if getattr(peer, "backend", None) == "numba":   # compiled in the background
                ready, fallbacks = peer.compiled()
                tiered = {"ready": time.perf_counter() - t0, "fallbacks": fallbacks}
                if not ready:
                    raise RuntimeError("numba compilation did not finish")
            if nested and not peer.jitted and first > args.slow:
                res[name] = {"one": first, "first": first}   # nothing compiled: one call
                continue
            if tiered:
                res[name] = tiered
            t1 = time.perf_counter()
            call()
            second = time.perf_counter() - t1
            if second > args.slow:     # one more call is its time (not in the rounds)
                res[name] = res.get(name, {}) | {"one": second}
            else:
                calls[name] = call
            if nested:      # no primal: the reference below checks the output itself
                res[name] = res.get(name, {}) | {"first": first} | tiered
                continue
            pcall, ppost = E.build(module, E.PRIMAL[module], peer, inp)
            perr = rel_err(ppost(pcall()), primal_ref)
            if tiered:      # nothing compiles in the background while others are timed
                peer.compiled()
            res[name] = res.get(name, {}) | {"first": first, "perr": perr} | tiered
            if perr > TOL:
                res[name]["error"] = f"ERROR primal mismatch, err {perr:.1e}"
        except Exception as exc:  # noqa: BLE001 - the cell says what went wrong
            res[name] = {"error": _err_cell(exc)}
    check = ""
    if nested:      # every output against the solve with hand-written derivatives
        for name, out in outs.items():
            if "error" not in res[name]:
                err = rel_err(out, primal_ref)
                res[name]["err"] = err
                if err > TOL:
                    res[name]["error"] = f"ERROR mismatch vs by hand, err {err:.1e}"
        gold = N.golden_mismatch(module, primal_ref)
        check = f"by hand; GradBench's golden {gold:.0e}" + (" (ERROR)" if gold > N.GOLDEN_TOL
                                                             else "")
    elif "dualad" in outs:
        how, e = independent_check(module, inp, outs["dualad"])
        check = f"{how} {e:.0e}" + (" (ERROR)" if e > 1e-5 else "")
        for name, out in outs.items():
            if name != "dualad" and "error" not in res[name]:
                err = rel_err(out, outs["dualad"])
                res[name]["err"] = err
                if err > TOL:
                    res[name]["error"] = f"ERROR mismatch vs dualad, err {err:.1e}"
    timed = {n: c for n, c in calls.items() if "error" not in res[n]}
    rounds = args.rounds if module not in ("lstm", "det") or args.quick else \
        min(args.rounds, 3)
    for n, t in interleaved(timed, rounds=rounds, min_time=args.min_time).items():
        res[n].update(time=t.median, spread=t.spread)
    for r in res.values():
        if "one" in r and "error" not in r:
            r.update(time=r["one"], spread=float("nan"))
    return res, check


def x_f(res, name, tf):
    r = res.get(name)
    if r is None:
        return "–"
    if "error" in r:
        return r["error"]
    fell = f" (numba fell back: {'; '.join(r['fallbacks'])})" if r.get("fallbacks") else ""
    return f"{r['time'] / tf:.2f}x{fell}"


def render(results, header, peers_missing):
    head = ["eval (size)", "NumPy f", *[f"{t} ×f" for t in TOOLS],
            "best dualad.jit backend / best peer",
            "first call: dualad.jit / jax.jit", "max err vs dualad (nested: vs by hand)", "dualad checked by"]
    out = ["```", *header, "```", "", "| " + " | ".join(head) + " |",
           "|" + "---|" * len(head)]
    detail = []
    for label, res, check in results:
        tf = res["numpy"]["time"]
        cells = [label, fmt(tf)]
        for t in TOOLS:
            cells.append(peers_missing.get(t, "") and "not importable" or x_f(res, t, tf))
        best = [res[p]["time"] for p in PEERS if p in res and "time" in res[p]]
        # dualad.jit's own best backend on the row: the default (NumPy) one, or Numba's
        # once it is compiled (both are `dualad.jit`; the columns before give each)
        mine = [(res[p]["time"], "default" if p == "dualad.jit" else "numba")
                for p in ("dualad.jit", "dualad.jit+numba") if "time" in res.get(p, {})]
        cells.append(f"{min(mine)[0] / min(best):.2f}x ({min(mine)[1]})" if best and mine
                     else "–")
        firsts = [fmt(res[p]["first"]) if p in res and "first" in res[p] else "–"
                  for p in ("dualad.jit", "jax.jit")]
        nb = res.get("dualad.jit+numba", {})
        if "first" in nb:
            ready = f", numba ready after {fmt(nb['ready'])}" if "ready" in nb else ""
            firsts[0] += f" (+numba {fmt(nb['first'])}{ready})"
        cells.append(" / ".join(firsts))
        errs = [f"{p} {res[p]['err']:.0e}" for p in TOOLS if "err" in res.get(p, {})]
        cells.append(", ".join(errs) or "–")
        cells.append(check)
        out.append("| " + " | ".join(c.replace("|", "/") for c in cells) + " |")
        for p in ("numpy", *TOOLS):
            r = res.get(p)
            if r and "time" in r:
                spread = "(one call)" if "one" in r else f"spread {r['spread']:.2f}"
                detail.append(f"  {label:<22} {p:<11} {fmt(r['time']):>10}  {spread:<12}"
                              f"  first call "
                              f"{fmt(r['first']) if 'first' in r else '-':>9}"
                              + (f"  numba ready after {fmt(r['ready'])}" if "ready" in r
                                 else ""))
    return "\n".join(out + ["", "per call (medians), spread = max/min over the rounds:"]
                     + detail)


def header(args, early, peers, missing):
    import dualad
    lines = [f"date (UTC): {time.strftime('%Y-%m-%d %H:%M', time.gmtime())}",
             f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
             f"{platform.python_version()}, NumPy {np.__version__}",
             "load average at the start: " + " ".join(f"{v:.2f}" for v in os.getloadavg())]
    from importlib import metadata
    vers = []
    for name in ("jax", "torch", "autograd"):
        if name in sys.modules:
            try:
                vers.append(f"{name} {metadata.version(name)}")
            except metadata.PackageNotFoundError:
                vers.append(f"{name} {getattr(sys.modules[name], '__version__', '?')}")
        else:
            vers.append(f"{name}: skipped")
    lines.append(", ".join(vers))
    lines += [f"  {p}: {why}" for p, why in missing.items()]
    lines.append(f"dualad: {os.path.dirname(dualad.__file__)}")
    lines += _pinning.pin_runtime(args.threads, early or ())
    lines.append(f"rounds {args.rounds} (det, lstm: {min(args.rounds, 3)}), min time per "
                 f"group {args.min_time} s" + (" (--quick: tiny sizes)" if args.quick else ""))
    if not args.quick and not args.lstm_text:
        lines.append("lstm: GradBench's text file is not in the offline mirror; the "
                     "sequence is random printable ASCII (seed 31337), 7 bits a character")
    return lines


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="tiny sizes (smoke test)")
    p.add_argument("--only", default="", help="comma-separated evals: "
                   + ",".join(E.FUNCTIONS))
    p.add_argument("--peers", default=",".join(TOOLS))
    p.add_argument("--functions", default="", help="the nested evals' functions to run "
                   "(comma-separated, of " + ",".join(N.VARIANTS) + "; default all)")
    p.add_argument("--rounds", type=int, default=None)
    p.add_argument("--min-time", type=float, default=None)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--no-affinity", action="store_true")
    p.add_argument("--try-all", action="store_true")
    p.add_argument("--slow", type=float, default=5.0,
                   help="a participant whose second call takes longer is timed by one more "
                   "call, not in the rounds")
    p.add_argument("--lstm-text", default=None)
    args = p.parse_args(argv)
    args.rounds = args.rounds or (2 if args.quick else 5)
    args.min_time = args.min_time or (0.002 if args.quick else 0.05)
    return args


def main(argv=None):
    args = parse(sys.argv[1:] if argv is None else argv)
    if _EARLY is None:
        os.environ.update(_pinning.pinned_environ(args.threads, os.environ))
    peers, missing = {}, {}
    for name in [p for p in args.peers.split(",") if p]:
        peer, why = gb_peers.make(name)
        if peer is None:
            missing[name] = why
        else:
            peers[name] = peer
    if "jax.jit" in peers:      # XLA's one-time start-up is no row's first call
        peers["jax.jit"].jit(lambda v: v + 1.0)(peers["jax.jit"].arr(1.0))
    startup = None
    if "dualad.jit+numba" in peers:   # nor Numba's (its import and LLVM's first compile)
        t0 = time.perf_counter()
        warm = peers["dualad.jit+numba"].jit(lambda v: (v * 2.0 + 1.0) * v - 3.0)
        warm(np.ones(2))
        peers["dualad.jit+numba"].compiled()
        startup = time.perf_counter() - t0
    lines = header(args, _EARLY, peers, missing)
    if startup is not None:
        lines.append(f"Numba's one-time start-up (import, first kernel), before the first "
                     f"row as XLA's: {startup:.2f} s")
    only = [m for m in args.only.split(",") if m]
    results = []
    for label, module, inp, function in rows(args.quick, args.lstm_text):
        if only and module not in only:
            continue
        if function and args.functions and function not in args.functions.split(","):
            continue
        t0 = time.perf_counter()
        res, check = run_row(label, module, inp, peers, args, function)
        results.append((label, res, check))
        print(f"[{time.perf_counter() - t0:6.1f} s] {label}: " + ", ".join(
            f"{p} {fmt(r['time']) if 'time' in r else r.get('error', '?')}"
            for p, r in res.items()), file=sys.stderr, flush=True)
    lines.append("load average at the end: " + " ".join(f"{v:.2f}" for v in
                                                        os.getloadavg()))
    text = render(results, lines, missing)
    print(text)
    return results, text


if __name__ == "__main__":
    main()
