"""Color counts on a pattern corpus nobody here chose (issue 35), against published counts and
lower bounds: the table of docs/sparse_corpus.md.

    python bench/sparse_corpus.py              # the tables, the skipped rows and the timings
    python bench/sparse_corpus.py --markdown   # the tables of docs/sparse_corpus.md

The corpus: banded matrices, 2-D and 3-D stencils (Kronecker sums), the arrowhead, a block
arrow, random patterns (``scipy.sparse.random`` with fixed seeds), ``scipy.sparse.diags``
with scattered offsets and ``scipy.sparse.kronsum``; the small worked examples of the
coloring papers (as SparseMatrixColorings.jl's ``src/examples.jl`` and ``test/small.jl``
spell them); ColPack's ``Graphs/`` test matrices (copied to ``bench/data/corpus/``, BSD
3-Clause); and, when present on this machine, larger public matrices read at run time
(``mirror`` rows, never needed by the tests: ColPack's SMB Jacobian from a fetched ColPack
mirror, ``$DUALAD_COLPACK_MIRROR``; SuiteSparse matrices from ``$DUALAD_SUITESPARSE_DIR``).

Each pattern P (m x n) gets, from ``dualad.jacobians``:

- ``column``: ``column_coloring(P)``, a partial distance-2 coloring of the columns (forward
  sweeps). Lower bound ρ = the largest number of nonzeros in one row (they are pairwise
  in conflict).
- ``row``: ``row_coloring(P)`` (reverse sweeps). Lower bound: the largest number of nonzeros
  in one column.
- ``star``: ``star_coloring(P)`` when P is square and structurally symmetric (a Hessian
  pattern; the diagonal is ignored). Lower bound: the larger of coloring.py's own (3 when
  an edge has two ends of degree ≥ 2, else 2 with edges, 1 without) and the size of a
  clique found greedily in the adjacency graph (a star coloring is a distance-1 coloring,
  so a clique's vertices take distinct colors). The largest degree + 1 is *not* a bound
  for star colorings (a star graph K_{1,d} takes 2 colors).

``COLUMNS`` maps a column's name to how it is computed (adding one is one line): the
column, row and star colorings, the star bicoloring (``bicoloring``: forward and reverse
directions together, each entry read directly), the acyclic bicoloring (``acyclic-bi``:
the same by substitution) and the acyclic coloring of symmetric patterns (``acyclic``: a
Hessian by substitution). An anchor of a column not computed shows "pending". ``LOSSES`` holds a note for each (matrix, column) whose count is
above a published one: the tests fail on a loss without a note, and on a note without a
loss.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import scipy.io
import scipy.sparse as sp

from dualad import jacobians
from dualad.jacobians import coloring as coloring_module
from dualad.jacobians.acyclic import acyclic_coloring, is_acyclic_coloring
from dualad.jacobians.acyclic_bicoloring import ACYCLIC_WORK, acyclic_bicoloring, bicoloring_work
from dualad.jacobians.bicoloring import is_star_bicoloring, star_bicoloring
from dualad.jacobians.coloring import is_column_coloring, is_star_coloring

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data", "corpus")
COLPACK_MIRROR = os.environ.get("DUALAD_COLPACK_MIRROR", "/work/.mirror/CSCsw+ColPack/repo")
SUITESPARSE_DIR = os.environ.get("DUALAD_SUITESPARSE_DIR", "")


class Absent(Exception):
    """A mirror row's matrix is not on this machine (the message says where it was looked for)."""


# --- patterns ----------------------------------------------------------------------------
def as_pattern(a: Any) -> sp.csr_matrix:
    """The boolean CSR pattern of ``a``: every stored entry (explicit zeros included), sorted
    and without duplicates."""
    coo = sp.coo_matrix(a)
    p = sp.csr_matrix((np.ones(coo.nnz, bool), (coo.row, coo.col)), shape=coo.shape)
    p.sum_duplicates()
    p.sort_indices()
    return p


def dense_pattern(rows: list[str]) -> sp.csr_matrix:
    """A pattern written as strings of 0/1, one per row."""
    return as_pattern(np.array([[c == "1" for c in r.split()] for r in rows]))


def is_symmetric(p: sp.csr_matrix) -> bool:
    return p.shape[0] == p.shape[1] and (p != p.T).nnz == 0


def adjacency(p: sp.csr_matrix) -> sp.csr_matrix:
    """The adjacency graph of a symmetric pattern: P + Pᵀ without the diagonal."""
    a = as_pattern(p + p.T)
    a.setdiag(False)
    a.eliminate_zeros()
    return as_pattern(a)


def tridiagonal(n: int) -> sp.csr_matrix:
    return as_pattern(sp.diags([np.ones(n - 1), np.ones(n), np.ones(n - 1)], [-1, 0, 1]))


def banded(n: int, k: int) -> sp.csr_matrix:
    """Symmetric, half-bandwidth k (2k + 1 diagonals: SparseMatrixColorings.jl's
    ``banded_matrix(n, ρ)`` with ρ = 2k)."""
    return as_pattern(sp.diags([np.ones(n - abs(d)) for d in range(-k, k + 1)],
                               list(range(-k, k + 1))))


def stencil(side: int, dim: int, full: bool) -> sp.csr_matrix:
    """The dim-dimensional stencil on side^dim points: the Kronecker sum of tridiagonals
    (5-point in 2-D, 7-point in 3-D) or, ``full``, their Kronecker product (9-, 27-point)."""
    t, out = tridiagonal(side).astype(np.int8), None
    for _ in range(dim):
        if out is None:
            out = t
        elif full:
            out = sp.kron(out, t)
        else:
            out = sp.kronsum(out, t)
    return as_pattern(out)


def arrowhead(n: int) -> sp.csr_matrix:
    """Diagonal, dense first row and dense first column: the Jacobian of issue 35's
    ``arrow`` (``sum(sin(x))`` first, then ``x_i² + x_0``)."""
    p = sp.lil_matrix((n, n), dtype=bool)
    p.setdiag(True)
    p[0, :] = True
    p[:, 0] = True
    return as_pattern(p)


def block_arrow(blocks: int, size: int, border: int) -> sp.csr_matrix:
    """Dense ``size`` x ``size`` diagonal blocks, then ``border`` dense rows and columns."""
    body = sp.block_diag([np.ones((size, size))] * blocks)
    n = blocks * size + border
    p = sp.lil_matrix((n, n), dtype=bool)
    p[:blocks * size, :blocks * size] = body
    p[-border:, :] = True
    p[:, -border:] = True
    return as_pattern(p)


def bordered(m: int, n: int) -> sp.csr_matrix:
    """Dense first and last rows and columns (SparseMatrixColorings.jl's "Rectangle")."""
    p = sp.lil_matrix((m, n), dtype=bool)
    p[[0, -1], :] = True
    p[:, [0, -1]] = True
    return as_pattern(p)


def bundle_adjustment(cameras: int, points: int, observations: int) -> sp.csr_matrix:
    """The Jacobian pattern of ADBench's (and GradBench's) bundle adjustment: observation k
    sees camera k mod N and point k mod M (their generator's indexing); its two
    reprojection rows read that camera's 11 parameters, the point's 3 and the weight w_k,
    and one more row reads w_k alone. Columns: 11N camera, 3M point, P weight parameters."""
    k = np.arange(observations)
    cam = 11 * (k % cameras)[:, None] + np.arange(11)
    pt = 11 * cameras + 3 * (k % points)[:, None] + np.arange(3)
    w = (11 * cameras + 3 * points + k)[:, None]
    reprojection = np.repeat(np.hstack([cam, pt, w]), 2, axis=0)       # 2P rows of 15
    rows = np.repeat(np.arange(2 * observations), 15)
    n = 11 * cameras + 3 * points + observations
    p = sp.coo_matrix((np.ones(rows.size), (rows, reprojection.ravel())),
                      shape=(2 * observations, n))
    weights = sp.coo_matrix((np.ones(observations), (k, w.ravel())), shape=(observations, n))
    return as_pattern(sp.vstack([p, weights]))


def random_pattern(m: int, n: int, density: float, seed: int,
                   symmetric: bool = False) -> sp.csr_matrix:
    """``scipy.sparse.random`` with a fixed seed; ``symmetric``: P + Pᵀ + I."""
    p = sp.random(m, n, density=density, format="csr", random_state=seed)
    if symmetric:
        p = p + p.T + sp.identity(n)
    return as_pattern(p)


# The worked examples of the papers, as SparseMatrixColorings.jl's src/examples.jl writes
# them: "What color is your Jacobian?" (Gebremedhin, Manne, Pothen 2005) Figure 4.1, and the
# 10 x 10 pattern of its Figure 6.1, which "Efficient computation of sparse Hessians using
# coloring and AD" (Gebremedhin, Tarafdar, Manne, Pothen 2009) colors in its Figures 1 and 4.
WHAT_FIG_41 = ["1 1 0 0 0 0", "1 1 1 0 1 1", "0 1 1 1 0 0",
               "0 0 1 1 0 1", "0 1 0 0 1 0", "0 1 0 1 0 1"]
WHAT_FIG_61 = ["1 1 0 0 0 0 1 0 0 0", "1 1 1 0 1 0 0 0 0 0", "0 1 1 1 0 1 0 0 0 0",
               "0 0 1 1 0 0 0 0 0 1", "0 1 0 0 1 1 0 1 0 0", "0 0 1 0 1 1 0 0 1 0",
               "1 0 0 0 0 0 1 1 0 0", "0 0 0 0 1 0 1 1 1 0", "0 0 0 0 0 1 0 1 1 1",
               "0 0 0 1 0 0 0 0 1 1"]
# SparseMatrixColorings.jl's tutorial (docs/src/tutorial.md): the 4 x 6 pattern it colors.
SMC_TUTORIAL = ["0 0 1 1 0 1", "1 0 0 0 1 0", "0 1 0 0 1 0", "0 1 1 0 0 0"]
ANTI_DIAGONAL = ["0 0 0 1", "0 0 1 0", "0 1 0 0", "1 0 0 0"]
TRIANGLE = ["1 1 0", "0 1 1", "1 0 1"]


# --- matrices read from files ------------------------------------------------------------
def colpack_graph(name: str) -> Callable[[], sp.csr_matrix]:
    """ColPack's ``Graphs/<name>.mtx``, copied to bench/data/corpus/."""
    return lambda: as_pattern(scipy.io.mmread(os.path.join(DATA, f"colpack_{name}.mtx")))


def colpack_smb_jacobian() -> sp.csr_matrix:
    """The Jacobian pattern ColPack's SMB example (a chemical-kinetics model through ADOL-C)
    ships as ``jac_full.mtx``: a header line ``m n``, then ``i j value``, 0-based. Read
    from a fetched ColPack mirror (a bare git directory), 0.8 MB: not copied here."""
    path = "Examples/SampleDrivers/Matrix_Compression_and_Recovery/SMB/jac_full.mtx"
    try:
        text = subprocess.run(["git", f"--git-dir={COLPACK_MIRROR}", "show", f"HEAD:{path}"],
                              capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        raise Absent(f"no ColPack mirror at {COLPACK_MIRROR} (set DUALAD_COLPACK_MIRROR)")
    lines = text.split("\n")
    m, n = (int(v) for v in lines[0].split())
    ij = np.array([ln.split()[:2] for ln in lines[1:] if ln.strip()], np.int64)
    return as_pattern(sp.coo_matrix((np.ones(len(ij)), (ij[:, 0], ij[:, 1])), shape=(m, n)))


def suitesparse(name: str) -> Callable[[], sp.csr_matrix]:
    """``<name>.mtx`` (or ``<name>/<name>.mtx``, the collection's tarball layout) under
    ``$DUALAD_SUITESPARSE_DIR``; explicit zeros dropped, as the ColPack paper's tables did."""
    def build():
        for path in (os.path.join(SUITESPARSE_DIR, f"{name}.mtx"),
                     os.path.join(SUITESPARSE_DIR, name, f"{name}.mtx")):
            if SUITESPARSE_DIR and os.path.exists(path):
                a = sp.csr_matrix(scipy.io.mmread(path))
                a.eliminate_zeros()
                return as_pattern(a)
        raise Absent(f"{name}.mtx not under $DUALAD_SUITESPARSE_DIR "
                     f"({SUITESPARSE_DIR or 'unset'}): the SuiteSparse collection is not "
                     "fetchable here")
    return build


# --- the corpus --------------------------------------------------------------------------
@dataclass(frozen=True)
class Entry:
    """One corpus matrix: its builder, and whether it is read from outside the repository at
    run time (``mirror``; skipped with a printed reason when absent)."""
    name: str
    family: str
    build: Callable[[], sp.csr_matrix]
    mirror: bool = False


def _generated() -> list[Entry]:
    return [
        Entry("tridiagonal-1000", "banded", lambda: tridiagonal(1000)),
        Entry("banded-k5-5000", "banded", lambda: banded(5000, 5)),
        Entry("banded-k10-5000", "banded", lambda: banded(5000, 10)),
        Entry("banded-rect-600x800", "banded", lambda: as_pattern(sp.diags(
            [np.ones(800)] * 5, [0, 1, 2, 3, 4], shape=(600, 800)))),
        Entry("diags-scattered-2000", "scipy diags", lambda: as_pattern(sp.diags(
            [np.ones(2000)] * 5, [-7, -1, 0, 2, 11], shape=(2000, 2000)))),
        Entry("stencil-2d-5pt-60x60", "2-D stencil", lambda: stencil(60, 2, False)),
        Entry("stencil-2d-9pt-40x40", "2-D stencil", lambda: stencil(40, 2, True)),
        Entry("stencil-3d-7pt-14^3", "3-D stencil", lambda: stencil(14, 3, False)),
        Entry("stencil-3d-27pt-10^3", "3-D stencil", lambda: stencil(10, 3, True)),
        Entry("arrowhead-1000", "arrowhead", lambda: arrowhead(1000)),
        Entry("block-arrow-50x8+6", "block arrow", lambda: block_arrow(50, 8, 6)),
        Entry("bordered-10x20", "block arrow", lambda: bordered(10, 20)),
        Entry("bundle-adjustment-16-1000-4000", "bundle adjustment",
              lambda: bundle_adjustment(16, 1000, 4000)),
        Entry("random-300x200-0.02", "scipy random", lambda: random_pattern(300, 200, 0.02, 0)),
        Entry("random-200x400-0.01", "scipy random", lambda: random_pattern(200, 400, 0.01, 1)),
        Entry("random-1000-0.004", "scipy random", lambda: random_pattern(1000, 1000, 0.004, 2)),
        Entry("random-sym-1000-0.003", "scipy random",
              lambda: random_pattern(1000, 1000, 0.003, 3, symmetric=True)),
        Entry("kronsum-random20-tri30", "Kronecker sum", lambda: as_pattern(sp.kronsum(
            random_pattern(20, 20, 0.15, 4).astype(np.int8), tridiagonal(30).astype(np.int8)))),
        Entry("kron-random40-eye10", "Kronecker product", lambda: as_pattern(sp.kron(
            random_pattern(40, 30, 0.1, 5).astype(np.int8), sp.identity(10, dtype=np.int8)))),
    ]


def _published() -> list[Entry]:
    colpack = ["bcsstk01", "bcsstm01", "column-compress", "row-compress", "jac_pat",
               "hess_pat", "hess_pat_small", "mtx-spear-head", "mymatrix", "mymatrix1"]
    return [
        Entry("what-fig-4.1", "paper example", lambda: dense_pattern(WHAT_FIG_41)),
        Entry("what-fig-6.1", "paper example", lambda: dense_pattern(WHAT_FIG_61)),
        Entry("smc-tutorial", "paper example", lambda: dense_pattern(SMC_TUTORIAL)),
        Entry("anti-diagonal-4", "paper example", lambda: dense_pattern(ANTI_DIAGONAL)),
        Entry("triangle-3", "paper example", lambda: dense_pattern(TRIANGLE)),
    ] + [Entry(f"colpack-{g}", "ColPack Graphs", colpack_graph(g)) for g in colpack]


# SuiteSparse matrices with published counts (SparseMatrixColorings.jl's
# test/reference/*.csv), up to 250,000 nonzeros.
SUITESPARSE = ["lp_cre_a", "lp_ken_11", "lp_ken_13", "lp_maros_r7", "lp_cre_d", "lp_dfl001",
               "lp_stocfor3", "lp_pds_10", "lhr10", "lp_pds_20"]


def corpus() -> list[Entry]:
    """Every corpus matrix, in table order: generated, published, then mirror rows."""
    mirror = [Entry("colpack-smb-jacobian", "ColPack example", colpack_smb_jacobian, True)]
    mirror += [Entry(name, "SuiteSparse", suitesparse(name), True) for name in SUITESPARSE]
    return _generated() + _published() + mirror


# --- published counts --------------------------------------------------------------------
@dataclass(frozen=True)
class Anchor:
    """A published color count for one coloring of one corpus matrix, and where it is from;
    or, with ``colors`` (pattern -> one color per vertex), a count reached by a construction
    written here, which the tests check is a valid coloring of that many colors."""
    coloring: str
    ncolors: int
    source: str
    colors: Callable[[sp.csr_matrix], np.ndarray] | None = None


def is_direct_bicoloring(p: sp.csr_matrix, row_colors: np.ndarray,
                         column_colors: np.ndarray) -> bool:
    """Whether every nonzero J[i, j] is read directly from one forward sweep per column color
    (``J S``) or one reverse sweep per row color (``Sᵀ J``); color -1 is neutral (in no
    sweep). From ``(J S)[i, c]`` when j is the only column of row i colored c, or from
    ``(Sᵀ J)[r, j]`` when i is the only row of column j colored r (Coleman and Verma's
    direct bicoloring, with SparseMatrixColorings.jl's neutral colors)."""
    coo = p.tocoo()
    i, j = coo.row.astype(np.int64), coo.col.astype(np.int64)

    def alone(vertex, other_colors, width):
        colored = other_colors >= 0
        key = vertex * (width + 1) + other_colors
        size = (int(vertex.max(initial=0)) + 1) * (width + 1)
        counts = np.bincount(key[colored], minlength=size)
        return colored & (counts[np.where(colored, key, 0)] == 1)

    width = int(max(row_colors.max(initial=0), column_colors.max(initial=0))) + 1
    return bool(np.all(alone(i, column_colors[j], width) | alone(j, row_colors[i], width)))


def border_bicoloring(rows: list[int], columns: list[int],
                      fill: int | None = None) -> Callable[[sp.csr_matrix], Any]:
    """Row r_k of ``rows`` colored k in reverse, column c_k of ``columns`` colored k forward;
    every other row neutral, every other column colored ``fill`` forward (neutral when
    ``fill`` is None). Returns (row colors, column colors)."""
    def colors(p):
        row_colors = np.full(p.shape[0], -1)
        column_colors = np.full(p.shape[1], -1 if fill is None else fill)
        row_colors[rows] = np.arange(len(rows))
        column_colors[columns] = np.arange(len(columns))
        return row_colors, column_colors
    return colors


def modular(q: int) -> Callable[[sp.csr_matrix], np.ndarray]:
    """Vertex v colored v mod q."""
    return lambda p: np.arange(p.shape[1]) % q


def smallest_period(p: sp.csr_matrix, below: int) -> int | None:
    """The smallest q ≥ ρ (the most nonzeros in one row) under ``below`` for which coloring
    column v by v mod q is valid, or None: a candidate the planner's coloring does not try
    (docs/sparse_corpus.md, "Losses"). Each q is checked in O(nnz)."""
    rho = max(1, int(np.diff(p.indptr).max(initial=0)))
    for q in range(rho, min(below, p.shape[1] + 1)):
        if is_column_coloring(p, np.arange(p.shape[1]) % q):
            return q
    return None


def stencil_3d_7(side: int) -> Callable[[sp.csr_matrix], np.ndarray]:
    """Point (i, j, k) colored (i + 2j + 3k) mod 7: the offsets 0, ±1, ±2, ±3 of the seven
    stencil points are distinct mod 7, so no row sees a color twice; 7 meets the bound ρ = 7
    (a linear congruence coloring, of the kind Goldfarb and Toint 1984 give for grid
    stencils)."""
    def colors(p):
        v = np.arange(side ** 3)
        return (v // side ** 2 + 2 * (v // side % side) + 3 * (v % side)) % 7
    return colors


_SMC = "SparseMatrixColorings.jl"
_THEORY = (f"{_SMC} test/theory.jl (Gebremedhin, Tarafdar, Manne, Pothen 2009: a symmetric "
           "band of ρ off-diagonals takes 2⌊ρ/2⌋+1 star, ⌊ρ/2⌋+1 acyclic colors)")
_COLPACK_TABLE = (f"ColPack paper (Gebremedhin et al. 2013) Tables VI-VII, best of its five "
                  f"orderings ({_SMC} test/reference/colpack_table_6_7.csv)")
_WHAT_TABLE = (f"'What color is your Jacobian?' Table 3.1, natural ordering ({_SMC} "
               "test/reference/what_table_31_32.csv)")

_MOD5 = ("construction: vertex v colored v mod 5 (no difference of two of the offsets -7, "
         "-1, 0, 2, 11 is 0 mod 5)")
_GT7 = "construction: point (i, j, k) colored (i + 2j + 3k) mod 7"

ANCHORS: dict[str, list[Anchor]] = {
    "diags-scattered-2000": [Anchor("column", 5, _MOD5, modular(5)),
                             Anchor("row", 5, _MOD5, modular(5))],
    "stencil-3d-7pt-14^3": [Anchor("column", 7, _GT7, stencil_3d_7(14)),
                            Anchor("row", 7, _GT7, stencil_3d_7(14))],
    "banded-k5-5000": [Anchor("star", 11, _THEORY), Anchor("acyclic", 6, _THEORY)],
    "banded-k10-5000": [Anchor("star", 21, _THEORY), Anchor("acyclic", 11, _THEORY)],
    "what-fig-4.1": [Anchor("star", 3, f"GMP 2005 Figure 4.1 ({_SMC} what_fig_41)")],
    "what-fig-6.1": [
        Anchor("star", 5, f"GTMP 2009 Figure 1 ({_SMC} efficient_fig_1)"),
        Anchor("acyclic", 3, f"GMP 2005 Figure 6.1, GTMP 2009 Figure 4 ({_SMC} what_fig_61, "
                             "efficient_fig_4)")],
    "smc-tutorial": [Anchor("column", 3, f"{_SMC} docs tutorial (colors [1, 1, 2, 1, 2, 3])")],
    "arrowhead-1000": [Anchor("bicoloring", 3, "construction: the dense row one reverse color, "
                              "the dense column and the diagonal one forward color each",
                              border_bicoloring([0], [0], fill=1))],
    "anti-diagonal-4": [Anchor("bicoloring", 1, f"{_SMC} test/small.jl, with post-processing")],
    "triangle-3": [Anchor("bicoloring", 3, f"{_SMC} test/small.jl, with post-processing")],
    "bordered-10x20": [Anchor("bicoloring", 4, f"{_SMC} test/small.jl (\"optimal number\")",
                              border_bicoloring([0, -1], [0, -1]))],
    "colpack-bcsstk01": [Anchor("star", 12, "ColPack README, example output (all orderings)"),
                         Anchor("acyclic", 8, "ColPack README, example output (all orderings)")],
    "lp_cre_a": [Anchor("column", 360, _COLPACK_TABLE), Anchor("row", 14, _COLPACK_TABLE)],
    "lp_ken_11": [Anchor("column", 122, _COLPACK_TABLE), Anchor("row", 4, _COLPACK_TABLE)],
    "lp_ken_13": [Anchor("column", 170, _COLPACK_TABLE), Anchor("row", 4, _COLPACK_TABLE)],
    "lp_maros_r7": [Anchor("column", 70, _COLPACK_TABLE), Anchor("row", 72, _COLPACK_TABLE)],
    "lp_cre_d": [Anchor("column", 808, _COLPACK_TABLE), Anchor("row", 13, _COLPACK_TABLE)],
    "lp_dfl001": [Anchor("column", 228, _WHAT_TABLE)],
    "lp_stocfor3": [Anchor("column", 16, _WHAT_TABLE)],
    "lp_pds_10": [Anchor("column", 96, _WHAT_TABLE)],
    "lhr10": [Anchor("column", 65, _WHAT_TABLE)],
    "lp_pds_20": [Anchor("column", 96, _WHAT_TABLE)],
}

# (matrix, coloring) -> why we use more colors than a published or constructed count.
_MISSED = ("the optimum colors point (i, j, k) by (i + 2j + 3k) mod 7, which needs the "
           "grid's coordinates; along the storage order the smallest period that works is 9 "
           "(coloring.py's periodic candidate), and the greedy orderings, DSATUR and the tabu "
           "search (default budget) do not go below it")
LOSSES: dict[tuple[str, str], str] = {
    ("stencil-3d-7pt-14^3", "column"): _MISSED,
    ("stencil-3d-7pt-14^3", "row"): _MISSED,
}


# --- the columns -------------------------------------------------------------------------
def clique_bound(adj: sp.csr_matrix) -> int:
    """The size of a clique of the graph ``adj`` (CSR, symmetric, no diagonal), grown greedily
    from every vertex (next: the candidate of largest degree, then lowest index, adjacent to
    all chosen so far). Every distance-1 coloring, so every star coloring, needs at least
    that many colors."""
    ip, ind = adj.indptr, adj.indices
    degree = np.diff(ip)
    neighbours = [set(ind[ip[v]:ip[v + 1]].tolist()) for v in range(adj.shape[0])]
    best = 1 if adj.shape[0] else 0
    for v in np.argsort(-degree, kind="stable").tolist():
        if degree[v] + 1 <= best:
            break                       # no clique through v can beat the best
        size, candidates = 1, neighbours[v]
        while candidates:
            w = min(candidates, key=lambda u: (-degree[u], u))
            size += 1
            candidates = candidates & neighbours[w]
        best = max(best, size)
    return best


def _star_bound(p: sp.csr_matrix, coloring: Any) -> int:
    return max(coloring.lower_bound, clique_bound(adjacency(p)))


@dataclass(frozen=True)
class Column:
    """How one table column is computed: ``compute(pattern)`` returns an object with
    ``ncolors`` (and, if it has them, ``lower_bound`` and ``method``); ``bound(pattern,
    result)`` a lower bound on any coloring of its kind (default: the result's
    ``lower_bound``); ``valid(pattern, result)`` checks the coloring (default: not checked
    here — the coloring's own tests do); ``symmetric_only``: run only on structurally
    symmetric square patterns; ``applies(pattern)``: False to leave the cell empty (a
    coloring too slow on that matrix to be part of the corpus run)."""
    compute: Callable[[sp.csr_matrix], Any]
    symmetric_only: bool = False
    bound: Callable[[sp.csr_matrix, Any], int] | None = None
    valid: Callable[[sp.csr_matrix, Any], bool] | None = None
    applies: Callable[[sp.csr_matrix], bool] | None = None


COLUMNS: dict[str, Column] = {
    "column": Column(jacobians.column_coloring,
                     bound=lambda p, c: int(np.diff(p.indptr).max(initial=0)),
                     valid=lambda p, c: is_column_coloring(p, c.colors)),
    "row": Column(jacobians.row_coloring,
                  bound=lambda p, c: int(np.diff(p.tocsc().indptr).max(initial=0)),
                  valid=lambda p, c: is_column_coloring(p.T, c.colors)),
    "star": Column(jacobians.star_coloring, symmetric_only=True, bound=_star_bound,
                   valid=lambda p, c: is_star_coloring(adjacency(p), c.colors)),
}
COLUMNS["bicoloring"] = Column(star_bicoloring, valid=is_star_bicoloring)
# The acyclic bicoloring's greedy is pure Python over Σ r² + Σ c² steps: run where that is at
# most 10 x what the planner's auto mode allows it (bundle adjustment's camera columns and
# the SMB Jacobian's dense column take it to 44 and 21 million: 25 s and 13 s).
COLUMNS["acyclic-bi"] = Column(acyclic_bicoloring, valid=lambda p, b: _substitutes(p, b),
                               applies=lambda p: bicoloring_work(p) <= 10 * ACYCLIC_WORK)
COLUMNS["acyclic"] = Column(acyclic_coloring, symmetric_only=True,
                            valid=lambda p, c: is_acyclic_coloring(adjacency(p), c.colors))


def _substitutes(p, b):
    """An acyclic bicoloring is valid when its substitution recovers random values."""
    p = sp.csr_matrix(p, dtype=bool)
    p.sort_indices()
    values = np.random.default_rng(0).uniform(1.0, 2.0, p.nnz)
    J = sp.csr_matrix((values, p.indices, p.indptr), shape=p.shape)
    fwd = J @ np.asarray(b.forward_seed()) if b.ncolors_forward else np.zeros((p.shape[0], 0))
    rev = np.asarray(b.reverse_seed()).T @ J if b.ncolors_reverse else \
        np.zeros((0, p.shape[1]))
    return bool(np.allclose(b.decompress(p, fwd, rev).toarray(), J.toarray(), rtol=1e-9))


# --- running it --------------------------------------------------------------------------
@dataclass
class Cell:
    """One coloring of one matrix: its count, the lower bound, the heuristic that won (or
    ``-``), whether it checked valid (``None``: not checked here) and the seconds it took."""
    ncolors: int
    bound: int | None
    method: str
    valid: bool | None
    seconds: float


@dataclass
class Row:
    entry: Entry
    shape: tuple[int, int]
    nnz: int
    symmetric: bool
    cells: dict[str, Cell] = field(default_factory=dict)


def color(p: sp.csr_matrix, column: Column) -> Cell:
    coloring_module._CACHE.clear()   # time a fresh coloring, not a cache hit
    start = time.perf_counter()
    result = column.compute(p)
    seconds = time.perf_counter() - start
    bound = (column.bound(p, result) if column.bound is not None
             else getattr(result, "lower_bound", None))
    valid = column.valid(p, result) if column.valid is not None else None
    return Cell(int(result.ncolors), None if bound is None else int(bound),
                str(getattr(result, "method", "-")), valid, seconds)


def measure(entry: Entry, columns: dict[str, Column] | None = None) -> Row:
    """Every column of ``columns`` (default ``COLUMNS``) on one matrix; raises ``Absent``
    for a mirror row whose matrix is not here."""
    p = entry.build()
    row = Row(entry, p.shape, int(p.nnz), is_symmetric(p))
    for name, column in (COLUMNS if columns is None else columns).items():
        if (row.symmetric or not column.symmetric_only) and \
                (column.applies is None or column.applies(p)):
            row.cells[name] = color(p, column)
    return row


def run(entries: list[Entry] | None = None) -> tuple[list[Row], list[str]]:
    """The rows measured, and a reason for each mirror row skipped."""
    rows, skipped = [], []
    for entry in corpus() if entries is None else entries:
        try:
            rows.append(measure(entry))
        except Absent as why:
            skipped.append(f"{entry.name}: skipped, {why}")
    return rows, skipped


def verdict(row: Row, anchor: Anchor) -> str:
    """``fewer`` / ``equal`` / ``loss (+k)`` (``loss (+k, noted)`` with a note in ``LOSSES``)
    against an anchor; ``pending`` when the column is not computed on this branch."""
    cell = row.cells.get(anchor.coloring)
    if cell is None:
        return "pending"
    if cell.ncolors < anchor.ncolors:
        return "fewer"
    if cell.ncolors == anchor.ncolors:
        return "equal"
    noted = ", noted" if (row.entry.name, anchor.coloring) in LOSSES else ""
    return f"loss (+{cell.ncolors - anchor.ncolors}{noted})"


# --- the tables --------------------------------------------------------------------------
def _name(row: Row) -> str:
    return f"{row.entry.name} †" if row.entry.mirror else row.entry.name


def _cell(cell: Cell | None) -> str:
    if cell is None:
        return "–"
    bound = "?" if cell.bound is None else str(cell.bound)
    return f"{cell.ncolors} ({bound}) {cell.method}"


def count_lines(rows: list[Row], columns: list[str]) -> list[str]:
    """The color-count table: one line per matrix, ``colors (lower bound) method`` per
    coloring."""
    head = ["matrix", "family", "m × n", "nnz"] + [f"{c}: colors (bound) winner" for c in columns]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        cells = [_name(row), row.entry.family, f"{row.shape[0]} × {row.shape[1]}",
                 str(row.nnz)] + [_cell(row.cells.get(c)) for c in columns]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def anchor_lines(rows: list[Row]) -> list[str]:
    """The published counts, one line per (matrix, coloring), with ours and the verdict."""
    lines = ["| matrix | coloring | published | ours | verdict | source |",
             "|---|---|---|---|---|---|"]
    for row in rows:
        for anchor in ANCHORS.get(row.entry.name, []):
            cell = row.cells.get(anchor.coloring)
            ours = "–" if cell is None else str(cell.ncolors)
            lines.append(f"| {_name(row)} | {anchor.coloring} | {anchor.ncolors} | {ours} | "
                         f"{verdict(row, anchor)} | {anchor.source} |")
    return lines


def winner_lines(rows: list[Row], columns: list[str]) -> list[str]:
    """How many matrices each heuristic won, per coloring (the first to reach the final
    count wins: the band coloring, then the greedy orderings in turn, then the search);
    the repository's rows only, so the table does not change with the mirror rows."""
    wins = {c: {} for c in columns}
    for row in (r for r in rows if not r.entry.mirror):
        for c, cell in row.cells.items():
            if c in wins:
                wins[c][cell.method] = wins[c].get(cell.method, 0) + 1
    methods = sorted({m for w in wins.values() for m in w},
                     key=lambda m: (-sum(w.get(m, 0) for w in wins.values()), m))
    lines = ["| winner | " + " | ".join(columns) + " |", "|---|" + "---|" * len(columns)]
    for m in methods:
        lines.append(f"| {m} | " + " | ".join(str(wins[c].get(m, 0)) for c in columns) + " |")
    return lines


def markdown(rows: list[Row]) -> str:
    """The three tables of docs/sparse_corpus.md: counts, anchors, winners."""
    columns = [c for c in COLUMNS if any(c in row.cells for row in rows)]
    return "\n".join(count_lines(rows, columns) + [""] + anchor_lines(rows) + [""]
                     + winner_lines(rows, columns)) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--markdown", action="store_true",
                        help="print only the tables of docs/sparse_corpus.md")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    rows, skipped = run()
    print(markdown(rows), end="")
    if args.markdown:
        return
    print()
    for line in skipped:
        print(line)
    for row in rows:
        times = ", ".join(f"{c} {cell.seconds * 1e3:.0f} ms" for c, cell in row.cells.items())
        print(f"{row.entry.name}: {times}")
    print(f"total {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    sys.exit(main())
