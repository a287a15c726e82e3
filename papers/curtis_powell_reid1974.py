"""Sparse Jacobians by column groups: Curtis, Powell and Reid (1974); Coleman and Moré (1983).

Sources:

- A. R. Curtis, M. J. D. Powell, J. K. Reid, "On the estimation of sparse
  Jacobian matrices", J. Inst. Maths Applics 13 (1974) 117-119: columns that
  share no row ("structurally orthogonal") are estimated together, one
  function difference (here: one JVP) per group.
- T. F. Coleman, J. J. Moré, "Estimation of sparse Jacobian matrices and graph
  coloring problems", SIAM J. Numer. Anal. 20(1) (1983) 187-209: a grouping is
  a coloring of the column intersection graph; the columns met by one row are
  pairwise adjacent there, so every grouping needs at least
  ρ = max_i |{j : J_ij ≠ 0}| groups.
- A. H. Gebremedhin, F. Manne, A. Pothen, "What color is your Jacobian?",
  SIAM Review 47(4) (2005) 629-705, abstract: a partition into structurally
  orthogonal column groups is a distance-2 coloring of the bipartite graph.

Reproduced, as theorems checked on computed patterns (the numbers below are
exact consequences of the lower bound ρ and an explicit grouping that meets it,
both verified here, not quoted tables):

1. A band of half-bandwidth k (J_ij ≠ 0 only for |i − j| ≤ k) needs exactly
   2k + 1 groups (min(n, 2k + 1)): ρ = 2k + 1 on a full row, and
   j mod (2k + 1) is structurally orthogonal. Tridiagonal: 3. For k = 1, 2, 3, 5
   and n = 12, 100.
2. The 5-point-stencil Jacobian of an N x N grid needs exactly 5 groups: ρ = 5
   at an interior point, and (i + 2j) mod 5 never gives one color to two
   points within grid distance 2. (Goldfarb and Toint, Math. Comp. 43 (1984)
   69-88, study such optimal groupings of finite-difference stencils; their
   text was not available to us, so the count is reproduced as this theorem.)

Each pattern is *detected* by ``jacobians.jacobian_sparsity`` running a
residual written in plain NumPy (a banded nonlinear system; the Bratu problem
−Δu = λ e^u on the unit square with the 5-point Laplacian), compared with the
pattern built from its definition, and the Jacobian is recovered from one
batched JVP of 2k + 1 (or 5) seed directions and compared with the dense one.

``jacobians.column_coloring`` is checked against the same optimum: its
grouping must be structurally orthogonal (checked here, independently) and
use exactly 2k + 1 (or 5) groups. Greedy orderings alone (natural,
largest-first, smallest-last) give 6 or 7 on the stencil; the library's
search after them (DSATUR, iterated greedy, tabu search, stopping at ρ)
reaches 5, and the row shows which heuristic won.

    python -m papers.curtis_powell_reid1974      (exit status 1 on any mismatch)
"""
from __future__ import annotations

import sys

import numpy as np

import dualad
from dualad import jacobians
from papers._compare import Report
from papers._graphs import (band_pattern, five_point_pattern, is_column_partition,
                            stencil_coloring)


def banded_residual(x, k):
    """F_i = x_i³ − 2 + Σ_{d=1..k} (sin x_{i+d} + x_{i−d} x_i) / d, zero beyond the ends."""
    F = x ** 3 - 2.0
    for d in range(1, k + 1):
        pad = np.zeros(d)
        ahead = np.concatenate([x[d:], pad])
        behind = np.concatenate([pad, x[:-d]])
        F = F + (np.sin(ahead) + behind * x) / d
    return F


def bratu_residual(u, lam=6.0):
    """The 5-point discretization of −Δu − λ e^u = 0 on an N x N interior grid, u = 0 on
    the boundary, scaled by h²: 4u_ij − u_(i±1)j − u_i(j±1) − h² λ e^u_ij."""
    N = u.shape[0]
    h2 = 1.0 / (N + 1) ** 2
    zrow, zcol = np.zeros((1, N)), np.zeros((N, 1))
    north = np.concatenate([zrow, u[:-1]], axis=0)
    south = np.concatenate([u[1:], zrow], axis=0)
    west = np.concatenate([zcol, u[:, :-1]], axis=1)
    east = np.concatenate([u[:, 1:], zcol], axis=1)
    return (4.0 * u - north - south - west - east - h2 * lam * np.exp(u)).ravel()


def compressed_jacobian(F, x, pattern, colors):
    """J from ONE batched JVP whose c directions are the group indicators (the CPR seed
    matrix S, n x c): J_ij = (J S)_{i, color(j)} for every (i, j) of the pattern."""
    c = int(colors.max()) + 1
    seeds = np.zeros((c, x.size))
    seeds[colors, np.arange(x.size)] = 1.0
    _, JS_t = dualad.jvp(F, (x,), (seeds.reshape((c,) + x.shape),))
    JS_t = np.asarray(JS_t).reshape(c, -1)
    coo = pattern.tocoo()
    J = np.zeros(pattern.shape)
    J[coo.row, coo.col] = JS_t[colors[coo.col], coo.row]
    return J


def _relerr(a, b):
    return float(np.max(np.abs(a - b)) / max(1.0, np.max(np.abs(b))))


def coloring_row(report, label, pattern, optimum):
    """``jacobians.column_coloring`` against the optimum: as many groups, all orthogonal."""
    col = jacobians.column_coloring(pattern)
    valid = is_column_partition(pattern, col.colors)
    report.note(f"{label}: jacobians.column_coloring", optimum,
                f"{col.ncolors} by {col.method}{'' if valid else ', NOT orthogonal'}",
                ok=col.ncolors == optimum and valid)


def band_rows(report, k, n):
    x = np.linspace(0.2, 1.4, n)
    F = lambda x: banded_residual(x, k)  # noqa: E731
    detected = jacobians.jacobian_sparsity(F, x)
    expected = band_pattern(n, k)
    same = (detected != expected).nnz == 0
    report.note(f"band k={k}, n={n}: detected pattern", f"|i-j| <= {k}",
                f"{detected.nnz} nonzeros, {'equal' if same else 'DIFFERENT'}", ok=same)
    groups = min(n, 2 * k + 1)
    rho = int(np.diff(detected.indptr).max())
    colors = np.arange(n) % (2 * k + 1)
    ok_partition = is_column_partition(detected, colors)
    report.note(f"band k={k}, n={n}: groups (rho; j mod 2k+1 valid)", f"2k+1 = {groups}",
                f"rho = {rho}; {colors.max() + 1} groups, "
                f"{'orthogonal' if ok_partition else 'NOT orthogonal'}",
                ok=rho == groups and ok_partition and colors.max() + 1 == groups)
    coloring_row(report, f"band k={k}, n={n}", detected, groups)
    dense = jacobians.jacfwd(F, x)
    err = _relerr(compressed_jacobian(F, x, detected, colors), dense)
    report.note(f"band k={k}, n={n}: J from {groups} JVPs vs dense", "exact (rounding)",
                f"{err:.1e}", ok=err < 1e-14)


def stencil_rows(report, N):
    rng = np.random.default_rng(N)
    u = rng.uniform(0.0, 1.0, (N, N))
    detected = jacobians.jacobian_sparsity(bratu_residual, u)
    expected = five_point_pattern(N)
    same = (detected != expected).nnz == 0
    report.note(f"Bratu {N}x{N}: detected pattern", "5-point stencil",
                f"{detected.nnz} nonzeros, {'equal' if same else 'DIFFERENT'}", ok=same)
    rho = int(np.diff(detected.indptr).max())
    colors = stencil_coloring(N)
    ok_partition = is_column_partition(detected, colors)
    report.note(f"Bratu {N}x{N}: groups (rho; (i+2j) mod 5 valid)", "5",
                f"rho = {rho}; {colors.max() + 1} groups, "
                f"{'orthogonal' if ok_partition else 'NOT orthogonal'}",
                ok=rho == 5 and ok_partition and colors.max() + 1 == 5)
    dense = jacobians.jacfwd(bratu_residual, u).reshape(N * N, N * N)
    err = _relerr(compressed_jacobian(bratu_residual, u, detected, colors), dense)
    report.note(f"Bratu {N}x{N}: J from 5 JVPs vs dense ({N * N} columns)", "exact (rounding)",
                f"{err:.1e}", ok=err < 1e-14)
    coloring_row(report, f"Bratu {N}x{N}", detected, 5)
    J = jacobians.sparse_jacobian(bratu_residual, u)
    err = _relerr(J.toarray(), dense)
    report.note(f"Bratu {N}x{N}: jacobians.sparse_jacobian vs dense", "exact (rounding)",
                f"{err:.1e}", ok=err < 1e-14)


def main() -> int:
    report = Report("Curtis-Powell-Reid (1974), Coleman-More (1983): column groups of "
                    "sparse Jacobians")
    for k in (1, 2, 3, 5):
        for n in (12, 100):
            band_rows(report, k, n)
    for N in (4, 8, 16):
        stencil_rows(report, N)
    return report.finish()


if __name__ == "__main__":
    sys.exit(main())
