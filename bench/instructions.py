"""Deterministic cost of the hot paths: instructions per call under callgrind.

    python bench/instructions.py                  # every row, prints a table
    python bench/instructions.py --only rosenbrock

Wall time on a shared VM moves 2x between runs; instruction counts do not. Each row
runs dualad's implementation of a ``bench/workloads`` workload under
``valgrind --tool=callgrind`` twice, once with one warm-up call and once with the
warm-up plus ``reps`` timed calls, and reports (I_reps - I_0) / reps: the imports,
data set-up and the first call's caches cancel. BLAS is pinned to one thread and
address-space randomisation is off (``setarch -R``), the hash seed fixed
(``PYTHONHASHSEED=0``: set and dict orders change which code runs) and glibc's mmap and
trim thresholds fixed (``MALLOC_MMAP_THRESHOLD_``, ``MALLOC_TRIM_THRESHOLD_``: left dynamic,
they follow the allocation history), so repeated runs agree to about 0.1%.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile

ROWS = {"scalar-chain": 3, "rosenbrock": 20, "jacfwd": 5, "jacrev": 5, "hessian": 3}
# The "jacobian" workload's mode="auto" chooses its mode from wall-clock timings, so under
# load it may count the other mode: the two fixed modes are counted on its data instead.
FIXED = {"jacfwd", "jacrev"}
HERE = os.path.dirname(os.path.abspath(__file__))


def _child(name, reps):
    sys.path.insert(0, HERE)
    import workloads
    import workloads_jacobians  # noqa: F401  (registers the Jacobian rows)
    if name in FIXED:
        try:   # a checkout from before the planner installed as dualad.jacobians
            import jacobians
        except ImportError:
            from dualad import jacobians
        W, x = workloads_jacobians._jac_data(True)
        f, mode = workloads_jacobians._jac_f(workloads.np, W), getattr(jacobians, name)

        def fn():   # one chunk of all 200 directions: no size chosen from a census
            return mode(f, x, chunk_size=x.size)
    else:
        wl = next(w for w in workloads.ALL if w.name == name)
        fn = wl.impls["dualad"](True)
    fn()
    for _ in range(reps):
        fn()


def callgrind_count(script, child_args):
    """Instructions of ``python script --child *child_args`` under callgrind (BLAS pinned
    to one thread, address-space randomisation off, hash seed fixed); shared by
    bench/jit_instructions.py and bench/eager_instructions.py."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cg.out")
        # glibc's mmap and trim thresholds fixed: left dynamic, they move with the process's
        # allocation history, and the same tree's jacfwd row measured 870k and 987k
        # instructions in two runs (issue 37); fixed, two trees differed by what their
        # code costs (+0.4% for three more calls). Counts from before this setting are not
        # comparable with counts after it.
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", PYTHONHASHSEED="0",
                   MKL_NUM_THREADS="1", MALLOC_MMAP_THRESHOLD_="131072",
                   MALLOC_TRIM_THRESHOLD_="131072")
        cmd = ["setarch", "-R", "valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
               sys.executable, os.path.abspath(script), "--child", *map(str, child_args)]
        subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        with open(out) as fh:
            text = fh.read()
    return int(re.search(r"^summary:\s*(\d+)", text, re.M).group(1))


def per_call_main(script, rows, child, columns):
    """The command line of a per-call instruction table: ``--child NAME REPS`` runs
    ``child(name, reps)`` (under callgrind); otherwise one row per ``rows`` entry (or
    those ``--only`` names), (I_reps - I_0) / reps. ``columns``: the two headers and
    their widths. Shared by bench/eager_instructions.py."""
    ap = argparse.ArgumentParser(description=sys.modules["__main__"].__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child[0], int(args.child[1]))
        return
    (first, w1), (second, w2) = columns
    print(f"{first:<{w1}} {second:>{w2}}")
    for name, reps in rows.items():
        if args.only and name not in args.only:
            continue
        per = (callgrind_count(script, (name, reps)) - callgrind_count(script, (name, 0))) / reps
        print(f"{name:<{w1}} {per:>{w2},.0f}", flush=True)


def main():
    per_call_main(__file__, ROWS, _child, (("workload", 14), ("instructions per call", 22)))


if __name__ == "__main__":
    main()
