"""Core benchmarks (issue 2): gradient cost relative to the function, and vs peers.

    python bench/bench_core.py

Workloads: the gradient of a logistic-regression loss (X 10000x100) and of a
Python-loop Rosenbrock function (n = 100, scalar indexing x[i]). Prints median
times and ratios from ONE run; peers that are not installed are skipped.
"""
from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dualad  # noqa: E402
from _timing import fmt, median_time, optional, table  # noqa: E402


def logistic_workload(np_):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((10000, 100))
    y = (rng.random(10000) < 0.5).astype(float)
    w = rng.standard_normal(100) * 0.1

    def loss(w):
        z = X @ w
        return np_.sum(np_.logaddexp(0.0, z) - y * z) / X.shape[0]
    return loss, w


def rosenbrock(x):
    total = 0.0
    for i in range(len(x) - 1):
        total = total + 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1.0 - x[i]) ** 2
    return total


def run():
    ag = optional("autograd")
    rows = []
    loss, w = logistic_workload(np)
    t_f = median_time(lambda: loss(w))
    g = dualad.grad(loss)
    t_g = median_time(lambda: g(w))
    row = ["logistic regression grad (X 10000x100)", fmt(t_f), fmt(t_g), f"{t_g / t_f:.2f}x"]
    if ag is not None:
        import autograd.numpy as anp
        aloss, _ = logistic_workload(anp)
        ga = ag.grad(aloss)
        t_a = median_time(lambda: ga(w))
        row += [fmt(t_a), f"{t_a / t_f:.2f}x", f"{t_a / t_g:.2f}x"]
    else:
        row += ["-", "-", "-"]
    rows.append(row)

    x = np.linspace(-1.0, 1.5, 100)
    t_f = median_time(lambda: rosenbrock(x))
    g = dualad.grad(rosenbrock)
    t_g = median_time(lambda: g(x))
    row = ["Rosenbrock Python loop grad (n = 100)", fmt(t_f), fmt(t_g), f"{t_g / t_f:.1f}x"]
    if ag is not None:
        ga = ag.grad(rosenbrock)
        t_a = median_time(lambda: ga(x))
        row += [fmt(t_a), f"{t_a / t_f:.1f}x", f"{t_a / t_g:.1f}x"]
    else:
        row += ["-", "-", "-"]
    rows.append(row)
    print(table(rows, ["workload", "f", "dualad grad", "dualad/f", "autograd grad",
                       "autograd/f", "autograd/dualad"]))
    if ag is None:
        print("(HIPS autograd not installed: pip install -e '.[bench]')")


if __name__ == "__main__":
    run()
