"""grad(jit(f)) against jit(grad(f)) and against the replay of jit(f)'s program through the
primitives (the route before issue 32), one interleaved run, on GradBench programs (gmm,
lse, ode, kmeans: bench/gradbench) and bench/run.py's logistic-regression and MLP rows.

    OPENBLAS_NUM_THREADS=1 python bench/jit_under_grad.py [--rounds 5] [--only lse,ode]

Columns: per-call median (interleaved rounds) of jit(grad(f)), jit(value_and_grad(f))
(the same work as grad(jit(f)), which computes f's value for the outer tape where
jit(grad(f)) prunes it), grad(jit(f)) (one primitive on the outer tape,
dualad.interpreters.staging.transformed) and grad(jit(f)) replayed
(``dualad.interpreters.staging.transformed.ENABLED[0] = False`` around its calls); first call of each (a
fresh jit: trace and compile). Every gradient is checked against grad(f). No timing is
asserted anywhere.

    python bench/jit_under_grad.py --instructions [--only lse]

counts instructions per call under callgrind instead (BLAS pinned, ``setarch -R``,
``PYTHONHASHSEED=0``, the collector off in the child): each variant runs twice, with one
warm-up call and with the warm-up plus ``reps`` calls; (I_reps - I_0) / reps.
"""
from __future__ import annotations

import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "gradbench"))
for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")

import argparse  # noqa: E402

import numpy as np  # noqa: E402

import dualad  # noqa: E402
from dualad.interpreters.staging import transformed as T  # noqa: E402
from _timing import fmt, interleaved  # noqa: E402
import gb_evals as E  # noqa: E402
import gb_inputs as I  # noqa: E402
import gb_peers  # noqa: E402
import workloads as W  # noqa: E402


def rows(only=()):
    """(label, f, args, argnums) of the rows whose label starts with one of ``only``."""
    numpy = gb_peers.NumPyPeer()
    out = []
    for label, module, inp in [("gmm (2, 5)", "gmm", lambda: I.gmm(2, 5)),
                               ("gmm (20, 50)", "gmm", lambda: I.gmm(20, 50)),
                               ("lse (2500)", "lse", lambda: I.lse(2500)),
                               ("ode (1000, 10)", "ode", lambda: I.ode(1000, 10)),
                               ("kmeans (10, 1000, 8)", "kmeans",
                                lambda: I.kmeans(10, 1000, 8))]:
        if not only or any(label.startswith(o) for o in only):
            f, args, argnums, _ = E._program(module, numpy, inp())
            out.append((label, f, args, argnums))
    for name, data, build in (("logreg (10000, 100)", W._logistic_data, W._logistic),
                              ("mlp (512, 256)", W._mlp_data, W._mlp)):
        if not only or any(name.startswith(o) for o in only):
            *arrays, p = data(False)
            out.append((name, build(np, *arrays), [p], 0))
    return out


def replayed(fn):
    def call():
        T.ENABLED[0] = False
        try:
            return fn()
        finally:
            T.ENABLED[0] = True
    return call


def first_call(make):
    t0 = time.perf_counter()
    out = make()
    return time.perf_counter() - t0, out


def leaves(g):
    return [np.asarray(x) for x in (g if isinstance(g, (tuple, list)) else [g])]


def variants(label, f, xs, argnums):
    jg = dualad.jit(dualad.grad(f, argnums=argnums))
    gj = dualad.grad(dualad.jit(f), argnums=argnums)
    gr_f = dualad.jit(f)
    jvg = dualad.jit(dualad.value_and_grad(f, argnums=argnums))
    one = dualad.grad(lambda *a: np.sum(a[0]) if isinstance(argnums, int) else
                      sum(np.sum(a[i]) for i in argnums), argnums=argnums)
    return {"jit(grad)": lambda: jg(*xs), "grad(jit)": lambda: gj(*xs),
            "replayed": replayed(lambda: dualad.grad(gr_f, argnums=argnums)(*xs)),
            "jit(value_and_grad)": lambda: jvg(*xs),
            # the outer grad's own work for a tape of one node (a sum), for --instructions
            "grad(one node)": lambda: one(*xs)}


def _child(label, variant, reps):
    import gc
    row = next(r for r in rows([label]) if r[0] == label)
    fn = variants(*row)[variant]
    fn()
    gc.disable()
    for _ in range(reps):
        fn()


def instructions(only):
    import re
    import subprocess
    import tempfile
    env = dict(os.environ, PYTHONHASHSEED="0", OPENBLAS_NUM_THREADS="1")
    print(f"{'row':22} {'jit(grad f)':>14} {'jit(v&g f)':>14} {'grad(jit f)':>14} "
          f"{'replayed':>14}  (instructions per call)")
    for label, *_ in rows(only):
        reps = 10
        cells = []
        for variant in ("jit(grad)", "jit(value_and_grad)", "grad(jit)", "replayed"):
            counts = []
            for r in (0, reps):
                with tempfile.TemporaryDirectory() as tmp:
                    out = os.path.join(tmp, "cg.out")
                    cmd = ["setarch", "-R", "valgrind", "--tool=callgrind",
                           f"--callgrind-out-file={out}", sys.executable, __file__,
                           "--child", label, variant, str(r)]
                    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
                    m = re.search(r"Collected : (\d+)", p.stderr)
                    if m is None:
                        raise RuntimeError(p.stderr[-2000:])
                    counts.append(int(m.group(1)))
            cells.append((counts[1] - counts[0]) / reps)
        print(f"{label:22} " + " ".join(f"{c / 1e6:>13.2f}M" for c in cells), flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--min-time", type=float, default=0.05)
    ap.add_argument("--only", default="")
    ap.add_argument("--instructions", action="store_true")
    ap.add_argument("--child", nargs=3)
    args = ap.parse_args(argv)
    only = [s for s in args.only.split(",") if s]
    if args.child:
        return _child(args.child[0], args.child[1], int(args.child[2]))
    if args.instructions:
        return instructions(only)
    print(f"{'row':22} {'jit(grad f)':>12} {'jit(v&g f)':>12} {'grad(jit f)':>12} "
          f"{'replayed':>12} {'new/jit(grad)':>14} {'new/jit(v&g)':>13} {'replay/new':>11} | "
          f"first: {'jit(grad)':>9} {'grad(jit)':>9} {'replayed':>9}")
    for label, f, xs, argnums in rows(only):
        want = leaves(dualad.grad(f, argnums=argnums)(*xs))
        fns = variants(label, f, xs, argnums)
        del fns["grad(one node)"]
        firsts = {k: first_call(fns[k]) for k in ("jit(grad)", "grad(jit)", "replayed")}
        for name, (_, got) in firsts.items():
            for a, b in zip(leaves(got), want):
                np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12, err_msg=name)
        for fn in fns.values():
            fn()
        t = interleaved(fns, rounds=args.rounds, min_time=args.min_time)
        a, v, b, c = (t[k].median for k in ("jit(grad)", "jit(value_and_grad)", "grad(jit)",
                                              "replayed"))
        print(f"{label:22} {fmt(a):>12} {fmt(v):>12} {fmt(b):>12} {fmt(c):>12} "
              f"{b / a:>13.2f}x {b / v:>12.2f}x {c / b:>10.2f}x | "
              f"{fmt(firsts['jit(grad)'][0]):>16} {fmt(firsts['grad(jit)'][0]):>9} "
              f"{fmt(firsts['replayed'][0]):>9}", flush=True)


if __name__ == "__main__":
    main()
