"""Peak memory of a gradient whose tape holds needless values (tracemalloc, MB).

The workload is the one HIPS autograd's benchmarks call ``peakmem_needless_nodes``:
100 steps of ``x = x + 1`` on a 1000 x 1000 array, then ``sum``. Every ``x`` lies on
the path to the output, but no derivative rule reads one. A second workload
discards a temporary per step (``t = sin(x) * 2``), whose nodes no output reaches.

    PYTHONPATH=. python bench/peakmem.py    (from the checkout)
"""
from __future__ import annotations

import tracemalloc

import numpy as np


def adds(np_, x):
    for _ in range(100):
        x = x + 1
    return np_.sum(x)


def temporaries(np_, x):
    for _ in range(100):
        t = np_.sin(x) * 2.0   # noqa: F841 (needless: never used)
    return np_.sum(x * 3.0)


def peak_mb(grad, np_, fun):
    x = np.zeros((1000, 1000))
    tracemalloc.start()
    try:
        grad(lambda v: fun(np_, v))(x)
        return tracemalloc.get_traced_memory()[1] / 1e6
    finally:
        tracemalloc.stop()


def main():
    import dualad
    peers = {"dualad": (dualad.grad, np)}
    try:
        import autograd
        import autograd.numpy as anp
        peers["autograd"] = (autograd.grad, anp)
    except ImportError:
        pass
    for fun in (adds, temporaries):
        row = ", ".join(f"{name} {peak_mb(g, np_, fun):.0f} MB" for name, (g, np_) in
                        peers.items())
        print(f"{fun.__name__:12s} peak (one array is 8 MB): {row}")


if __name__ == "__main__":
    main()
