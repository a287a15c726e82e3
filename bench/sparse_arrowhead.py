"""The arrowhead Jacobian, one-sided colorings ("before") against the star bicoloring ("after").

    python bench/sparse_arrowhead.py [--sizes 1000,10000,100000] [--detect-max 10000]
                                     [--before-max 4000] [--repeat 7]

``arrow(x)``: y_0 = sum(sin x), y_i = x_i² + x_0 (i ≥ 1): a diagonal, a dense first column
and a dense first row, so a column or a row coloring needs n colors and a star bicoloring
3 (two forward colors, one reverse). Per size n:

- detection: ``jacobian_sparsity`` once (up to ``--detect-max``; above it the known
  pattern is passed as ``sparsity=``, and the row says so);
- coloring: the column coloring ("before", ``mode="sparse-forward"``; the row coloring is
  the same by symmetry) and the star bicoloring ("after"), each from a cleared cache;
- evaluation: a prepared plan (``plan(arrow, x, sparsity=P, mode=...)``) called at a new
  point, jit replay (default) and eager (``jit=False``), repeats interleaved between the
  plans, best and median; the dense forward and reverse plans for scale (up to
  ``--before-max``, where the dense result and the column coloring's intersection graph,
  n² entries, still fit);
- one-shot ``sparse_jacobian`` (detection + coloring + sweeps) before and after;

and every result is compared with the analytic Jacobian.
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import scipy.sparse as sp

from dualad import jacobians
from dualad.jacobians import bicoloring, coloring


def arrow(x):
    y = x ** 2 + x[0]
    return np.concatenate([[np.sum(np.sin(x))], y[1:]])


def exact(x):
    """The arrowhead's Jacobian, by hand (CSR)."""
    n = len(x)
    j = sp.lil_matrix((n, n))
    j.setdiag(2 * x)
    j[1:, 0] = 1.0
    j[0, :] = np.cos(x)
    return j.tocsr()


def pattern(n):
    p = sp.lil_matrix((n, n), dtype=bool)
    p.setdiag(True)
    p[0, :] = True
    p[:, 0] = True
    return p.tocsr()


def seconds(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def check(j, x):
    err = abs(sp.csr_matrix(j) - exact(x)).max()
    assert err <= 1e-14, f"wrong Jacobian: max error {err}"


def coloring_times(p, before):
    """(seconds, counts): the column coloring (if ``before``) and the bicoloring, each from
    a cleared cache."""
    out = {}
    if before:
        coloring._CACHE.clear()
        t, c = seconds(lambda: jacobians.column_coloring(p))
        out["column"] = (t, c.ncolors)
    bicoloring._CACHE.clear()
    t, b = seconds(lambda: bicoloring.star_bicoloring(p))
    out["bicoloring"] = (t, f"{b.ncolors_forward}+{b.ncolors_reverse}")
    return out


def evaluation_times(n, p, before, repeat):
    """Best and median seconds of each prepared plan at new points, interleaved."""
    x = np.linspace(0.1, 1.7, n)
    ways = {"after (auto)": dict(sparsity=p)}
    if before:
        ways.update({"before (sparse-forward)": dict(sparsity=p, mode="sparse-forward"),
                     "dense forward": dict(mode="forward"),
                     "dense reverse": dict(mode="reverse")})
    plans = {}
    for name, kw in ways.items():
        for jit in (True, False):
            pl = jacobians.plan(arrow, x, jit=jit, **kw)
            check(pl(x + 0.25), x + 0.25)          # warm (the first jit call traces)
            plans[f"{name}{'' if jit else ', eager'}"] = pl
    times = {k: [] for k in plans}
    for r in range(repeat):
        xr = x + 0.01 * (r + 1)
        for key, pl in plans.items():
            t, j = seconds(lambda: pl(xr))
            times[key].append(t)
            if r == 0:
                check(j, xr)
    return {k: (min(v), statistics.median(v),
                f"{plans[k].mode} ({plans[k].directions} dirs, {plans[k].n_chunks} sweeps)")
            for k, v in times.items()}


def one_shot(n, p, detect, before):
    x = np.linspace(0.1, 1.7, n)
    given = None if detect else p
    out = {}
    for label, mode in (("after (auto)", "auto"), ("before (forward)", "forward")):
        if label.startswith("before") and not before:
            continue
        coloring._CACHE.clear()
        bicoloring._CACHE.clear()
        t, j = seconds(lambda: jacobians.sparse_jacobian(lambda z: arrow(z), x, mode=mode,
                                                         sparsity=given))
        check(j, x)
        out[label] = t
    return out


def fmt(s):
    return f"{s * 1e3:9.2f} ms" if s < 1 else f"{s:9.2f} s "


def row(n, args):
    before, detect = n <= args.before_max, n <= args.detect_max
    x = np.linspace(0.1, 1.7, n)
    print(f"\n## n = {n}")
    if detect:
        t, p = seconds(lambda: jacobians.jacobian_sparsity(arrow, x))
        assert (p != pattern(n)).nnz == 0
        print(f"detection: {fmt(t)}  ({p.nnz} nonzeros)")
    else:
        p = pattern(n)
        print(f"detection: not run above --detect-max {args.detect_max} (pattern given, "
              f"{p.nnz} nonzeros)")
    for name, (t, count) in coloring_times(p, before).items():
        print(f"coloring, {name:<12} {fmt(t)}  colors {count}")
    if not before:
        print(f"coloring, column: not run above --before-max {args.before_max} (n colors "
              f"by its bound, the dense row; its intersection graph has n² = {n * n:.1e} "
              f"entries)")
    print("prepared plan at a new point (best / median of "
          f"{args.repeat}, interleaved):")
    for k, (best, med, mode) in evaluation_times(n, p, before, args.repeat).items():
        print(f"  {k:<34} {fmt(best)} / {fmt(med)}   {mode}")
    for k, t in one_shot(n, p, detect, before).items():
        print(f"one-shot sparse_jacobian, {k:<18} {fmt(t)}"
              f"{'' if detect else '  (pattern given)'}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--detect-max", type=int, default=10000)
    ap.add_argument("--before-max", type=int, default=4000)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    for n in (int(s) for s in args.sizes.split(",")):
        row(n, args)


if __name__ == "__main__":
    main()
