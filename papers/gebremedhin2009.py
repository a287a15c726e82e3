"""Acyclic against star colorings of banded Hessians: Gebremedhin, Tarafdar, Pothen and
Walther, "Efficient computation of sparse Hessians using coloring and automatic
differentiation", INFORMS J. Computing 21(2) (2009) 209-223; the acyclic coloring
algorithm of Gebremedhin, Tarafdar, Manne and Pothen, SIAM J. Sci. Comput. 29(3) (2007)
1042-1072.

The 2009 paper's banded test matrices: a symmetric matrix with ρ off-diagonal bands
(half-bandwidth β = ρ/2) is colored with ⌊ρ/2⌋ + 1 colors by the acyclic coloring
(recovery by substitution) and 2⌊ρ/2⌋ + 1 by the star coloring (direct recovery). We
read these two counts as they are restated (with the reference) in the tests of
SparseMatrixColorings.jl (``test/theory.jl``: ρ = 10 and 20); the paper's own tables
were not readable here. So they are also reproduced as theorems:

- acyclic: β + 1 is a lower bound (β + 1 consecutive vertices form a clique), and
  ``j mod (β + 1)`` is an acyclic coloring (checked here by an independent union-find
  over each pair of colors): χa = β + 1;
- star: 2β + 1 colors suffice (``j mod (2β + 1)`` is a distance-2 coloring), and no star
  coloring with 2β colors exists for β = 1, 2, 3 (exhaustive search on a band of 16
  vertices, a subgraph of every longer band): χs = 2β + 1 there.

Then ``jacobians.acyclic.acyclic_coloring`` and ``jacobians.star_coloring`` are checked
against those counts on bands of ρ = 2, 4, 6, 10, 20, as given (the band colorings
``j mod (β + 1)`` and ``j mod (2β + 1)`` win) and with the vertices shuffled (the greedy
acyclic coloring under the smallest-last ordering reaches β + 1; the star greedy with the
search 2β + 1), and the Hessian of a banded
function is recovered by ``jacobians.sparse_hessian(..., coloring="acyclic")`` from
β + 1 Hessian-vector products, against the dense Hessian.

    python -m papers.gebremedhin2009      (exit status 1 on any mismatch)
"""
from __future__ import annotations

import sys

import numpy as np
import scipy.sparse as sp

from dualad import jacobians
from dualad.jacobians.acyclic import acyclic_coloring
from papers._compare import Report
from papers._graphs import adjacency, band_pattern, is_star_coloring, star_colorable


def acyclic_by_union_find(adj, colors):
    """Independent check: proper, and no pair of colors closes a cycle (union-find per
    pair; an edge whose ends are already joined in its pair's forest closes one)."""
    parent = {}

    def find(key):
        while parent.setdefault(key, key) != key:
            parent[key] = parent[parent[key]]
            key = parent[key]
        return key
    for v, near in enumerate(adj):
        for w in near:
            if w <= v:
                continue
            if colors[v] == colors[w]:
                return False
            pair = (min(colors[v], colors[w]), max(colors[v], colors[w]))
            a, b = find((pair, v)), find((pair, w))
            if a == b:
                return False
            parent[a] = b
    return True


def banded_energy(beta):
    """Σ_k Σ_i (x_i x_{i+k})² / 2 + Σ cos x_i over k = 1..β: H has half-bandwidth β, full."""
    def f(x):
        total = np.sum(np.cos(x))
        for k in range(1, beta + 1):
            total = total + np.sum((x[:-k] * x[k:]) ** 2) / 2
        return total
    return f


def theorem_rows(report):
    for beta in (1, 2, 3):
        adj = adjacency(band_pattern(16, beta))
        report.note(f"band β={beta}, 16 vertices: no star {2 * beta}-coloring (exhaustive)",
                    f"chi_s >= {2 * beta + 1}",
                    "none exists" if not star_colorable(adj, 2 * beta) else "FOUND ONE",
                    ok=not star_colorable(adj, 2 * beta))
        distance2 = np.arange(16) % (2 * beta + 1)
        report.note(f"band β={beta}: j mod {2 * beta + 1} is a star coloring", "yes",
                    "yes" if is_star_coloring(adj, distance2) else "NO",
                    ok=is_star_coloring(adj, distance2))
        modular = np.arange(16) % (beta + 1)
        ok = acyclic_by_union_find(adj, modular)
        report.note(f"band β={beta}: j mod {beta + 1} is acyclic (clique bound {beta + 1})",
                    "yes", "yes" if ok else "NO", ok=ok)


def coloring_rows(report, rho, n, permuted=False):
    """The library's colorings of the band; ``permuted``: its vertices shuffled, so the
    band coloring does not apply and the greedy colorings (and the star search) must find
    the counts."""
    beta = rho // 2
    pattern = sp.csr_matrix(band_pattern(n, beta))
    if permuted:
        order = np.random.default_rng(rho).permutation(n)
        pattern = pattern[order][:, order]
    adj = adjacency(pattern)
    a = acyclic_coloring(pattern)
    certified = acyclic_by_union_find(adj, a.colors)
    label = f"ρ={rho}, n={n}{', permuted' if permuted else ''}"
    report.note(f"{label}: acyclic colors", beta + 1,
                f"{a.ncolors} by {a.method}{'' if certified else ', NOT acyclic'}",
                ok=a.ncolors == beta + 1 and certified)
    s = jacobians.star_coloring(pattern)
    certified = is_star_coloring(adj, s.colors)
    report.note(f"{label}: star colors", 2 * beta + 1,
                f"{s.ncolors} by {s.method}{'' if certified else ', NOT a star coloring'}",
                ok=s.ncolors == 2 * beta + 1 and certified)


def hessian_rows(report, rho, n):
    beta = rho // 2
    f = banded_energy(beta)
    x = np.random.default_rng(rho).uniform(0.5, 1.5, n)
    detected = jacobians.hessian_sparsity(f, x)
    same = (detected != band_pattern(n, beta)).nnz == 0
    report.note(f"ρ={rho}, n={n}: detected Hessian pattern", "the band",
                f"{detected.nnz} nonzeros, {'equal' if same else 'DIFFERENT'}", ok=same)
    dense = jacobians.hessian(f, x, mode="forward-over-reverse")
    H = jacobians.sparse_hessian(f, x, sparsity=detected, coloring="acyclic")
    err = float(np.max(np.abs(H.toarray() - dense)) / np.max(np.abs(dense)))
    report.note(f"ρ={rho}, n={n}: H by substitution from {beta + 1} products vs dense",
                "exact (rounding)", f"{err:.1e}", ok=err < 1e-13)


def main() -> int:
    report = Report("Gebremedhin, Tarafdar, Pothen, Walther (2009): acyclic vs star "
                    "colorings of banded Hessians")
    theorem_rows(report)
    for rho, n in ((2, 100), (4, 100), (6, 100), (10, 200), (20, 200)):
        coloring_rows(report, rho, n)
        coloring_rows(report, rho, n, permuted=True)
    for rho, n in ((2, 300), (10, 300)):
        hessian_rows(report, rho, n)
    return report.finish()


if __name__ == "__main__":
    sys.exit(main())
