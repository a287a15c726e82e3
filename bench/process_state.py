"""What dualad's former process-wide settings were worth (issue 15; BENCHMARKS.md).

    python bench/process_state.py gc on|off chain|rosen|none [REPEAT]
    python bench/process_state.py heap off|on

``gc``: gradients of the scalar chain (10^5 iterations) or the Python-loop Rosenbrock with
the collector left on (what dualad does) or switched off by the caller around each call
(what dualad used to do itself). ``none`` only imports: under callgrind, subtract its
instruction count from the others' and divide by the number of calls (1 warm-up plus
REPEAT x 1 for the chain, 1 + REPEAT x 20 for Rosenbrock):

    OPENBLAS_NUM_THREADS=1 valgrind --tool=callgrind --callgrind-out-file=/tmp/x.out \\
        python bench/process_state.py gc on chain 1

``heap``: minor page faults and times per call of the vector-mode Jacobian and Hessian
workloads, without and with ``dualad.keep_heap()``. No timing is asserted anywhere.
"""
from __future__ import annotations

import gc
import os
import resource
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402

import dualad  # noqa: E402
import workloads  # noqa: E402
from _timing import group_times  # noqa: E402
import workloads_jacobians  # noqa: E402


def gc_cost(setting, what, repeat):
    if what == "none":
        return
    if what == "rosen":
        g, inner = dualad.grad(workloads.rosenbrock), 20
        call = lambda: g(workloads._X100)  # noqa: E731
    else:
        g, inner = dualad.grad(lambda x: workloads._chain(x, 100_000)), 1
        call = lambda: g(np.float64(1.0))  # noqa: E731

    def fn():
        if setting == "on":
            return call()
        gc.disable()          # the caller's own choice, as a user would write it
        try:
            return call()
        finally:
            gc.enable()
    fn()
    times = group_times(fn, inner, repeat)
    print(f"gc {setting} {what}: median {statistics.median(times) * 1e3:.3f} ms, "
          f"min {min(times) * 1e3:.3f} ms")


def heap_cost(setting):
    if setting == "on" and not dualad.keep_heap():
        print("keep_heap not applied (not Linux with glibc)")
    for wl in (workloads_jacobians.JAC, workloads_jacobians.HESS):
        fn = wl.impls["dualad"](False)
        for _ in range(5):
            fn()
        f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        times = group_times(fn, 1, 50)
        faults = (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0) / 50
        print(f"keep_heap {setting} {wl.name}: {faults:.0f} minor page faults per call, "
              f"median {statistics.median(times) * 1e3:.3f} ms, min {min(times) * 1e3:.3f} ms")


if __name__ == "__main__":
    if sys.argv[1] == "gc":
        gc_cost(sys.argv[2], sys.argv[3], int(sys.argv[4]) if len(sys.argv) > 4 else 7)
    else:
        heap_cost(sys.argv[2])
