"""What jacobian/hessian(mode="auto") cost on a first call (issue 18).

    python bench/planner_auto.py            the n = m = 2·10^4 tridiagonal, and the counts
    python bench/planner_auto.py --counts   only the evaluation counts (seconds)

Rows: wall time and traced peak memory (tracemalloc) of ``jacobian(tri, x)`` with the
default ``max_memory``, of ``sparse_jacobian(tri, x)``, and of ``jacobian`` with
``max_memory=4e9`` (the dense 3.2 GB result allowed; its pages touched once beforehand); then how many times each public function evaluates ``f`` on
its first call, on a second call, and over 5 fresh lambdas of the same code.
"""
from __future__ import annotations

import sys
import time
import tracemalloc

import numpy as np


def tridiagonal(n, counter=None):
    def tri(u):
        if counter is not None:
            counter[0] += 1
        up = np.concatenate([np.zeros(1), u, np.zeros(1)])
        return up[2:] - 2.0 * up[1:-1] + up[:-2] + np.exp(u) / (n + 1.0) ** 2
    return tri


def measure(label, fn):
    tracemalloc.start()
    t0 = time.perf_counter()
    try:
        out = fn()
        what = f"shape {getattr(out, 'shape', None)}"
    except Exception as e:  # noqa: BLE001 - the refusal is a result here
        what = f"{type(e).__name__}: {str(e)[:90]}..."
    seconds = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    print(f"{label:44s} {seconds:8.3f} s  peak {peak / 1e9:6.3f} GB  {what}")


def counts():
    from dualad import jacobians
    for n in (50, 2000):
        x = np.linspace(0.0, 1.0, n)
        for api in ("jacobian", "jacfwd", "jacrev", "hessian"):
            c = [0]
            tri = tridiagonal(n, c)
            f = (lambda u: np.sum(tri(u) ** 2)) if api == "hessian" else tri
            getattr(jacobians, api)(f, x)
            first = c[0]
            getattr(jacobians, api)(f, x)
            second = c[0] - first
            c[0] = 0
            for _ in range(5):
                g = tridiagonal(n, c)
                getattr(jacobians, api)((lambda u: np.sum(g(u) ** 2)) if api == "hessian"
                                        else g, x)
            print(f"n = {n:5d} {api:9s} evaluations of f: first call {first}, second "
                  f"{second}, 5 fresh functions of the same code {c[0]}")


def main():
    if "--counts" not in sys.argv:
        from dualad import jacobians
        n = 20000
        x = np.linspace(0.0, 1.0, n)
        measure("jacobian(tri, x)", lambda: jacobians.jacobian(tridiagonal(n), x))
        measure("sparse_jacobian(tri, x)", lambda: jacobians.sparse_jacobian(tridiagonal(n), x))
        # A fresh 3.2 GB array costs this VM ~16 s of first-touch page faults whatever
        # fills it; touched once here, the row times the Jacobian, not the VM.
        warm = np.ones((n + 600, n))
        del warm
        measure("jacobian(tri, x, max_memory=4e9), warm pages",
                lambda: jacobians.jacobian(tridiagonal(n), x, max_memory=4e9))
    counts()


if __name__ == "__main__":
    main()
