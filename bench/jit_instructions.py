"""Instructions per replay of jitted derivatives under callgrind: the program as recorded
(``codegen.generate_plain``: one primitive call per line, the first codegen) against the
optimized source (``codegen.generate``: passes, Python floats, scatter chains).

    python bench/jit_instructions.py [--only rosenbrock chain-quad ...]

As bench/instructions.py: each row runs under ``valgrind --tool=callgrind`` with 0 and
with ``reps`` replays after the trace and compile, BLAS on one thread, no address-space
randomisation, a fixed hash seed; the difference divided by ``reps`` is printed. The
replays call the compiled function directly (no argument handling of ``Jitted``).
"""
from __future__ import annotations

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def _rows():
    sys.path.insert(0, HERE)
    import numpy as np
    import dualad
    import workloads as W

    def quad(x):
        for _ in range(2_000):
            x = x * (1.0 + 1e-7 * x)
        return x

    def sine(x):
        for _ in range(2_000):
            x = np.sin(x) + 0.5
        return x
    return {
        "rosenbrock": (dualad.grad(W.rosenbrock), (W._X100,), 20),
        "chain-quad": (dualad.grad(quad), (1.0,), 3),
        "chain-sin": (dualad.grad(sine), (1.0,), 3),
    }


def _child(name, mode, reps):
    from dualad.interpreters.staging.codegen import compile_program
    import dualad
    f, args, _ = _rows()[name]
    prog = dualad.jit(f).program(*args)
    fn, _ = compile_program(prog, optimize=(mode == "optimized"))
    fn(*args)
    for _ in range(reps):
        fn(*args)


def _count(name, mode, reps):
    from instructions import callgrind_count   # bench/instructions.py: the same counting
    return callgrind_count(__file__, (name, mode, reps))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        _child(args.child[0], args.child[1], int(args.child[2]))
        return
    print(f"{'workload':<12} {'as recorded':>14} {'optimized':>14} {'ratio':>7}")
    for name, (_, _, reps) in _rows().items():
        if args.only and name not in args.only:
            continue
        per = {}
        for mode in ("plain", "optimized"):
            per[mode] = (_count(name, mode, reps) - _count(name, mode, 0)) / reps
        print(f"{name:<12} {per['plain']:>14,.0f} {per['optimized']:>14,.0f} "
              f"{per['plain'] / per['optimized']:>6.1f}x", flush=True)


if __name__ == "__main__":
    main()
