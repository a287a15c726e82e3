"""The Numba whole-program mode's compile cost for one GradBench eval (issue 32).

    python bench/numba_compile_time.py gmm "(2, 5)" jacobian

Traces the eval's function under ``dualad.jit(..., backend="numba")`` with the whole mode
held back, takes its largest program, then times ``compile_whole`` plus its first call
(Numba's typing and compilation) alone: wall and CPU seconds, how many functions Numba
compiled (each one LLVM module) and the generated source's lines; then the replay time.
Run it with one thread (OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1).
"""
import importlib
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "gradbench"), HERE, os.path.dirname(HERE)]

import gb_evals as E  # noqa: E402
import gb_inputs as I  # noqa: E402
import gb_peers as PE  # noqa: E402
import numba  # noqa: E402
import numba.core.compiler as C  # noqa: E402


def main():
    mod, size, fun = sys.argv[1], eval(sys.argv[2]), sys.argv[3]  # noqa: S307 - a size tuple
    count = [0]
    real = C.compile_extra

    def counted(*a, **k):
        count[0] += 1
        return real(*a, **k)

    C.compile_extra = counted
    inp = getattr(I, mod)(*(size if isinstance(size, tuple) else (size,)))
    mode = importlib.import_module("dualad.interpreters.staging.numba_mode")
    whole = importlib.import_module("dualad.interpreters.staging.numba_whole")
    progs = []

    def hold(program, name="replay"):
        progs.append(program)
        raise mode.Unsupported("held back by the probe")

    mode.compile_whole = hold
    call, _ = E.build(mod, fun, PE.make("dualad.jit+numba")[0], inp)
    call()
    numba.njit(lambda x: x + 1.0)(1.0)      # Numba's own start-up, not counted
    prog = max(progs, key=lambda q: len(q.body))
    rng = np.random.default_rng(0)
    args = [rng.random(tuple(prog.avals[v][1])) if prog.avals[v][0] is np.ndarray else 0.5
            for v in prog.invars]
    count[0] = 0
    t, c = time.perf_counter(), time.process_time()
    fn, src = whole.compile_whole(prog, name="probe")
    fn(*args)
    print(f"{mod} {size} {fun}: compile wall {time.perf_counter() - t:.2f} s, "
          f"cpu {time.process_time() - c:.2f} s, {count[0]} functions compiled, "
          f"{src.count(chr(10))} source lines")
    t = time.perf_counter()
    for _ in range(20):
        fn(*args)
    print(f"replay {(time.perf_counter() - t) / 20 * 1e6:.1f} us")


if __name__ == "__main__":
    main()
