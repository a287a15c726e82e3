"""GradBench's ``ode``, ``det``, ``kmeans`` and ``lse`` objectives written as plain NumPy
(bench/fast_by_default.py), each over a namespace ``xp`` so the same program runs as
NumPy (and so through dualad), ``jax.numpy`` and ``torch``.

Written here from GradBench's eval descriptions (github.com/gradbench/gradbench,
``evals/<name>/README.md`` and the eval drivers' input generators); the data use the
drivers' seed (``np.random.seed(31337)``, ``np.random.rand``).

- ``ode``: y(0) = 0, y_0' = x_0, y_i' = x_i y_{i-1} (i > 0), ``s`` steps of classical
  Runge-Kutta to t = 2; the objective is the last entry of the final state; gradient in x.
  Standard sizes n = 1000, 10000, 100000 with s = 1, 10, 100.
- ``det``: the determinant of an ell x ell matrix by expansion by minors along the first row
  (recursive, scalar-oriented: O(ell!) products); gradient in A. Standard ell = 5 ... 11;
  run here: 5 and 6 (at 7 the unrolled program has ~14000 products: jax.jit and dualad.jit
  spend minutes tracing and compiling it, the eager peers seconds per gradient).
- ``kmeans``: sum over points of the squared distance to the nearest centroid; gradient in the
  centroids (GradBench's ``dir`` also divides by the Hessian's diagonal; here only the
  gradient is timed). Standard k = 10, 100, 1000, n = 1000, 10000, d = 8, 16; centroids =
  the last k points.
- ``lse``: log-sum-exp with the max shift; gradient in x. Standard n = 2500 ... 1280000.
"""
from __future__ import annotations

import numpy as np


def _cat(xp, parts):
    return xp.cat(parts) if xp.__name__ == "torch" else xp.concatenate(parts)


# --- ode ---------------------------------------------------------------------------------
def ode_data(n, s):
    np.random.seed(31337)
    return np.random.rand(n), s


def ode_objective(xp, s):
    """The last entry of :func:`ode_state` (the scalar whose gradient GradBench asks)."""
    state = ode_state(xp, s)
    return lambda x: state(x)[-1]


def ode_state(xp, s):
    """The whole final state y(2) (GradBench's ``primal`` output)."""
    def f(x):
        def rhs(y):
            return _cat(xp, [x[:1], x[1:] * y[:-1]])
        h = 2.0 / s
        y = x * 0.0
        for _ in range(s):
            k1 = rhs(y)
            k2 = rhs(y + h / 2 * k1)
            k3 = rhs(y + h / 2 * k2)
            k4 = rhs(y + h * k3)
            y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        return y
    return f


# --- det ---------------------------------------------------------------------------------
def det_data(ell):
    np.random.seed(31337)
    return np.random.rand(ell * ell).reshape(ell, ell)


def det_objective(xp):
    def minor(A, rows, cols):
        r0 = rows[0]
        if len(rows) == 1:
            return A[r0, cols[0]]
        total = None
        for j, c in enumerate(cols):
            term = A[r0, c] * minor(A, rows[1:], cols[:j] + cols[j + 1:])
            total = term if total is None else (total + term if j % 2 == 0 else total - term)
        return total

    def f(A):
        ell = A.shape[0]
        return minor(A, list(range(ell)), list(range(ell)))
    return f


# --- kmeans ------------------------------------------------------------------------------
def kmeans_data(k, n, d):
    np.random.seed(31337)
    points = np.random.rand(n, d)
    return points, points[-k:].copy()


def kmeans_objective(xp, points):
    p_sqr = xp.sum(points ** 2, 1)[:, None]

    def f(C):
        dists = p_sqr + xp.sum(C ** 2, 1)[None, :] - 2 * (points @ C.T)
        if xp.__name__ == "torch":
            nearest = xp.min(dists, 1).values
        else:
            nearest = xp.min(dists, axis=1)
        return xp.sum(nearest)
    return f


# --- lse ---------------------------------------------------------------------------------
def lse_data(n):
    np.random.seed(31337)
    return np.random.rand(n)


def lse_objective(xp):
    def f(x):
        m = xp.max(x)
        return xp.log(xp.sum(xp.exp(x - m))) + m
    return f


def programs(quick):
    """(label, objective(xp, *static), static, point) for every size run."""
    if quick:
        odes, dets, kms, lses = [(20, 2)], [3], [(3, 30, 2)], [100]
    else:
        odes, dets = [(1000, 10), (10000, 10)], [5, 6]
        kms, lses = [(10, 1000, 8), (100, 10000, 16)], [2500, 80000]
    out = []
    for n, s in odes:
        x, s = ode_data(n, s)
        out.append((f"ode n={n} s={s}", lambda xp, s=s: ode_objective(xp, s), (), x))
    for ell in dets:
        out.append((f"det ell={ell}", lambda xp: det_objective(xp), (), det_data(ell)))
    for k, n, d in kms:
        P, C = kmeans_data(k, n, d)
        out.append((f"kmeans k={k} n={n} d={d}", kmeans_objective, (P,), C))
    for n in lses:
        out.append((f"lse n={n}", lambda xp: lse_objective(xp), (), lse_data(n)))
    return out
