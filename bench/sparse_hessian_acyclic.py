"""Star against acyclic colorings for sparse Hessians: colors, rounding, time (docs/acyclic.md).

    python bench/sparse_hessian_acyclic.py [--quick]

For each problem, ``sparse_hessian`` with ``coloring="star"`` (direct recovery) and
``coloring="acyclic"`` (substitution along two-colored trees), given the detected
pattern, against the dense ``hessian(f, x, mode="forward-over-reverse")``:

- colors of each coloring and the acyclic lower bound;
- ``entrywise``: max over the structural nonzeros of |H - H_dense| / |H_dense| (entries
  exactly zero at x skipped); ``normwise``: max |H - H_dense| / max |H_dense|;
- ``depth``: the longest substitution chain (edges from a leaf to its tree's root) and
  ``subtree``: the most entries one recovered value depends on; and, for the entry with
  the worst relative error, the size of its subtree;
- what ``coloring="auto"`` took (star on a tie; acyclic; or acyclic, then the star
  products at a point where the substitution would lose more than 6 digits) and its
  entrywise error;
- the time of one decompression of the same compressed product (star: gathers; acyclic:
  gathers and a sparse triangular solve; checked: with auto's second solve that bounds
  the digits lost), median of interleaved repeats;
- then the whole ``sparse_hessian`` (pattern given), star against auto, at n = 10^4 and
  10^5 (bands) and a 300 x 300 grid.

Problems: (a) banded Hessians (half-bandwidth 1 and 3) whose entries span 10^0, 10^8
and 10^16 in magnitude; (b) the 2-D 5-point and 3-D 7-point stencils (a Laplacian
energy plus a quartic); (c) random sparse symmetric patterns (sin of products over the
edges).
"""
from __future__ import annotations

import os
import sys
import time

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from dualad import jacobians  # noqa: E402
from dualad.jacobians.acyclic import (acyclic_coloring, acyclic_lower_bound,  # noqa: E402
                                      decompress_acyclic, hessian_coloring,
                                      recovery_for)
from dualad.jacobians.coloring import star_coloring  # noqa: E402
from dualad.jacobians.sparse import decompress_star  # noqa: E402

QUICK = "--quick" in sys.argv


def banded(n, half, spread, seed=0):
    """Σ_k Σ_i w_ik (x_i x_{i+k})² / 2 + Σ c_i x_i⁴ / 4, weights 10^U(-spread/2, spread/2)."""
    g = np.random.default_rng(seed)
    w = 10.0 ** g.uniform(-spread / 2, spread / 2, (half, n))
    c = 10.0 ** g.uniform(-spread / 2, spread / 2, n)

    def f(x):
        total = np.sum(c * x ** 4) / 4
        for k in range(1, half + 1):
            total = total + np.sum(w[k - 1, :n - k] * (x[:-k] * x[k:]) ** 2) / 2
        return total
    return f, g.uniform(0.5, 1.5, n)


def stencil(sides, seed=0):
    """½ Σ (differences along each axis)² · weights + Σ u⁴ / 4 on a grid of ``sides``."""
    g = np.random.default_rng(seed)
    shape = tuple(sides)

    def f(x):
        u = x.reshape(shape)
        total = np.sum(u ** 4) / 4
        for axis in range(len(shape)):
            lo = [slice(None)] * len(shape)
            hi = [slice(None)] * len(shape)
            lo[axis], hi[axis] = slice(None, -1), slice(1, None)
            d = u[tuple(hi)] - u[tuple(lo)]
            total = total + np.sum((1.0 + axis) * d ** 2 * u[tuple(hi)]) / 2
        return total
    return f, g.uniform(0.5, 1.5, int(np.prod(shape)))


def random_graph(n, per_row, seed=0):
    """Σ_(i,j) sin(x_i x_j) over a random edge set, + Σ x⁴."""
    g = np.random.default_rng(seed)
    m = n * per_row // 2
    i, j = g.integers(0, n, m), g.integers(0, n, m)
    keep = i != j
    i, j = i[keep], j[keep]

    def f(x):
        return np.sum(np.sin(x[i] * x[j])) + np.sum(x ** 4)
    return f, g.uniform(0.5, 1.5, n)


def errors(H, dense):
    coo = H.tocoo()
    exact = dense[coo.row, coo.col]
    diff = np.abs(coo.data - exact)
    nonzero = exact != 0
    rel = np.zeros_like(diff)
    rel[nonzero] = diff[nonzero] / np.abs(exact[nonzero])
    worst = int(np.argmax(rel))
    return rel.max(), diff.max() / np.abs(dense).max(), (int(coo.row[worst]),
                                                          int(coo.col[worst]))


def decompress_times(pattern, star, acyclic, dense, repeat=15):
    cs, ca = (dense @ star.seed().T).T, (dense @ acyclic.seed().T).T
    decompress_acyclic(pattern, acyclic, ca)         # the trees, once
    ts, ta, tc = [], [], []
    for _ in range(repeat):                          # interleaved
        t0 = time.perf_counter()
        decompress_star(pattern, star, cs)
        t1 = time.perf_counter()
        decompress_acyclic(pattern, acyclic, ca)
        t2 = time.perf_counter()
        decompress_acyclic(pattern, acyclic, ca, 1e6)  # auto's check of the digits lost
        tc.append(time.perf_counter() - t2)
        ta.append(t2 - t1)
        ts.append(t1 - t0)
    return np.median(ts), np.median(ta), np.median(tc)


def row(name, f, x):
    pattern = jacobians.hessian_sparsity(f, x)
    star, acyclic = star_coloring(pattern), acyclic_coloring(pattern)
    bound = acyclic_lower_bound(pattern)
    dense = jacobians.hessian(f, x, mode="forward-over-reverse")
    Hs = jacobians.sparse_hessian(f, x, sparsity=pattern, coloring="star")
    Ha = jacobians.sparse_hessian(f, x, sparsity=pattern, coloring="acyclic")
    auto = hessian_coloring(pattern, "auto")[0]      # the one sparse_hessian's auto takes
    Hauto = jacobians.sparse_hessian(f, x, sparsity=pattern)
    fell_back = (Hauto != Hs).nnz == 0 and (Ha != Hs).nnz > 0
    took = ("star" if not hasattr(auto, "fallback") else
            "acyclic→star" if fell_back else "acyclic")
    es, ns, _ = errors(Hs, dense)
    ea, na, (wi, wj) = errors(Ha, dense)
    eauto = errors(Hauto, dense)[0]
    decompress_acyclic(pattern, acyclic, (dense @ acyclic.seed().T).T)
    trees = acyclic.recovery.trees
    sizes = trees.subtree_sizes()
    at = np.flatnonzero(((trees.child == wi) & (trees.parent == wj)) |
                        ((trees.child == wj) & (trees.parent == wi)))
    worst_subtree = int(sizes[at[0]]) if len(at) else 0      # 0: a diagonal entry
    t_star, t_acyclic, t_checked = decompress_times(pattern, star, acyclic,
                                                    sp.csr_matrix(dense))
    print(f"| {name} | {x.size} | {pattern.nnz} | {star.ncolors} | {acyclic.ncolors} "
          f"({bound}) | {es:.1e} / {ns:.1e} | {ea:.1e} / {na:.1e} | {trees.depth} | "
          f"{int(sizes.max())} | {worst_subtree} | {took}: {eauto:.1e} | "
          f"{t_star * 1e3:.2f} / {t_acyclic * 1e3:.2f} / {t_checked * 1e3:.2f} |", flush=True)


def timing_rows(repeat=5):
    """``sparse_hessian`` given the pattern (colorings cached after the first call): star
    against auto (acyclic), medians of interleaved repeats."""
    print("\n| problem | n | colors star / auto | ms star | ms auto | auto / star | fell back |")
    print("|---|---|---|---|---|---|---|")
    sizes = (10_000,) if QUICK else (10_000, 100_000)
    cases = [(f"band β={h}", n, banded(n, h, 0)) for n in sizes for h in (1, 3)]
    side = 100 if QUICK else 300
    cases.append((f"2-D 5-point {side}x{side}", side * side, stencil((side, side))))
    for name, n, (f, x) in cases:
        pattern = jacobians.hessian_sparsity(f, x)
        star, auto = star_coloring(pattern), hessian_coloring(pattern, "auto")[0]
        runs = {"star": [], "auto": []}
        for _ in range(repeat):
            for kind in runs:
                t0 = time.perf_counter()
                jacobians.sparse_hessian(f, x, sparsity=pattern, coloring=kind)
                runs[kind].append(time.perf_counter() - t0)
        ts, ta = np.median(runs["star"]), np.median(runs["auto"])
        lost = hasattr(auto, "fallback") and recovery_for(pattern, auto).lost_digits
        print(f"| {name} | {n} | {star.ncolors} / {auto.ncolors} | {ts * 1e3:.1f} | "
              f"{ta * 1e3:.1f} | {ta / ts:.2f} | {'star (digits)' if lost else 'no'} |",
              flush=True)


def main():
    n = 400 if QUICK else 2000
    print("| problem | n | nnz | star colors | acyclic (bound) | star rel. error entrywise / "
          "normwise | acyclic entrywise / normwise | depth | largest subtree | worst "
          "entry's subtree | auto: took, entrywise | decompress ms star / acyclic / "
          "checked |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for half in (1, 3):
        for spread in (0, 8, 16):
            row(f"(a) band β={half}, magnitudes 1e{spread}", *banded(n, half, spread))
    side2 = 20 if QUICK else 45
    side3 = 7 if QUICK else 13
    row(f"(b) 2-D 5-point {side2}x{side2}", *stencil((side2, side2)))
    row(f"(b) 3-D 7-point {side3}^3", *stencil((side3,) * 3))
    for per_row in (2, 4, 8):
        row(f"(c) random, ~{per_row} per row", *random_graph(n, per_row))
    timing_rows()


if __name__ == "__main__":
    main()
