"""Instructions per un-jitted gradient of GradBench's ``ode`` and ``gmm`` (and a long tape's
collector work), under callgrind: the deterministic counterpart of bench/eager_gradbench.py.

    python bench/eager_instructions.py                  # every row
    python bench/eager_instructions.py --only ode-1000

Each row counts ``python this --child ROW REPS`` twice (0 and REPS gradients after one
warm-up, BLAS pinned to one thread, ASLR off, hash seed fixed: bench/instructions.py's
``callgrind_count``) and prints (I_reps - I_0) / reps. The collector is disabled in the
measured process (its passes depend on allocation history), except in the ``lstm-gc`` row,
whose point is the collector's own work on a long tape: a recurrence of 5000 steps
(``h = tanh(W h + 0.1)``, 8 units) with the interpreter's default GC settings.
"""
from __future__ import annotations

import gc
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROWS = {"ode-1000": 3, "ode-10000": 2, "gmm-2-5": 3, "gmm-20-50": 1, "lstm-gc": 1,
        "lstm-nogc": 1}


def _make(name):
    sys.path.insert(0, HERE)
    import eager_gradbench as eg   # first: it pins the pools before NumPy loads (no re-exec)
    import numpy as np
    import dualad
    if name.startswith("ode"):
        return eg.ode_case(int(name.split("-")[1]), 10)[1]
    if name.startswith("gmm"):
        d, k = map(int, name.split("-")[1:])
        return eg.gmm_case(d, k, 1000)[1]
    W = np.random.default_rng(0).normal(size=(8, 8)) * 0.3

    def lstm_like(h):
        loss = 0.0
        for _ in range(5000):
            h = np.tanh(W @ h + 0.1)
            loss = loss + np.sum(h * h)
        return loss
    g = dualad.grad(lstm_like)
    return lambda: g(np.ones(8))


def _child(name, reps):
    fn = _make(name)
    if name != "lstm-gc":
        gc.disable()
    fn()
    for _ in range(reps):
        fn()


def main():
    sys.path.insert(0, HERE)
    from instructions import per_call_main
    per_call_main(__file__, ROWS, _child, (("row", 12), ("instructions per gradient", 26)))


if __name__ == "__main__":
    main()
