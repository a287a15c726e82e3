"""Graph colorings that compress a sparse Jacobian or Hessian into few sweeps.

Jacobian (Curtis-Powell-Reid; Coleman-Moré): columns j and k of a pattern
P (m x n) are *structurally orthogonal* when no row has both. A partition of
the columns into orthogonal groups (a partial distance-2 coloring of the
column vertices of the bipartite graph of P; equivalently a distance-1
coloring of the column intersection graph PᵀP) gives a seed matrix S (n x c),
``S[j, color(j)] = 1``, and J = decompress(J S): each nonzero J[i, j] is
``(J S)[i, color(j)]`` because no other column of its group meets row i.
Reverse mode colors the rows (the columns of Pᵀ) and reads ``(Sᵀ J)[color(i), j]``.

Any coloring needs at least ρ = the largest number of nonzeros in one row
(they are pairwise adjacent); a pattern of bandwidth w (every row inside
w consecutive columns) is colored by ``j mod w``. Tridiagonal: 3 colors;
half-bandwidth k: 2k + 1 — optimal when a row is full. Greedy colorings
under the orderings natural, largest-first and smallest-last are computed
and the fewest colors kept; then, while the lower bound is not met, DSATUR,
iterated greedy and a tabu search for one color fewer at a time
(:mod:`jacobians.coloring_search`), within a fixed budget of work. Every step
stops as soon as the lower bound is met: a band never reaches the search.
``Coloring.tried`` lists what each step reached, ``method`` names the one
that won and ``effort`` what the search spent.

A dense pattern needs no search: with a full row the bound is n and one color
per column meets it; with a row holding 90% of the columns (NEARLY_DENSE) and
an intersection graph costing over DENSE_WORK to build, a search could save at
most a tenth, and one color per nonempty column is the answer (``method``
"dense"), in O(nnz + n). Building the intersection graph PᵀP costs Σᵢ nnzᵢ²
sparse steps (m n² for a dense pattern); where a dense BLAS product of the
same m n² flops is cheaper it is taken, and a complete graph (every pair of
columns shares a row: a clique of n) stops there with n colors.

Hessian (Gebremedhin, Manne, Pothen 2005, "What color is your Jacobian?"):
a *star coloring* of the adjacency graph of the symmetric pattern — a
distance-1 coloring in which every path on four vertices uses at least three
colors — lets every H[i, j] be read directly from one Hessian-vector product
per color: from ``(H S)[i, color(j)]`` when j is the only neighbor of i with
its color, else from ``(H S)[j, color(i)]`` (the star property guarantees one).
Candidates: the band coloring, the star greedy under each ordering, a
distance-2 coloring (two vertices within distance 2 never share a color, a
star coloring; tried when its lower bound, the largest degree + 1, is below
the best count), then a tabu search on the star condition. Lower bound: 3
when an edge has two ends of degree ≥ 2 (a triangle or a path on four
vertices), else 2 (a star forest), 1 without edges.
"""
from __future__ import annotations

__all__ = ["ORDERINGS", "BUDGET", "GREEDY_CAP", "Coloring", "column_coloring", "row_coloring",
           "is_column_coloring", "star_recoverable", "is_star_coloring", "star_coloring"]

import copy
import hashlib
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from ._common import counted
from .coloring_search import Budget, dsatur, greedy, reduce_proper, reduce_star

if TYPE_CHECKING:
    from collections.abc import Sequence

ORDERINGS = ("natural", "largest-first", "smallest-last")
# The search after the greedy colorings may spend BUDGET work units (coloring_search.Budget;
# about 0.1 s of CPython) plus as much as the greedy colorings did, up to GREEDY_CAP more
# (~1 s): a large pattern's coloring takes about twice as long at most, and ~1 s longer.
BUDGET = 2_000_000
GREEDY_CAP = 20_000_000


class Coloring:
    """``colors[v]`` in ``0 .. ncolors-1`` for each vertex, and how it was found: ``method``
    the heuristic that gave it, ``tried`` every heuristic run and its count (in order),
    ``effort`` the search's work budget, the units spent, iterated-greedy passes and tabu
    iterations (all 0 when the greedy colorings met the lower bound)."""

    colors: np.ndarray[Any, Any]
    ncolors: int
    method: str
    lower_bound: int
    tried: dict[str, int]
    effort: dict[str, Any]

    def __init__(self, colors: np.ndarray[Any, Any], method: str, lower_bound: int,
                 tried: Any = None, effort: Any = None) -> None:
        self.colors = np.asarray(colors, np.int64)
        self.ncolors = int(self.colors.max()) + 1 if len(self.colors) else 0
        self.method = method
        self.lower_bound = int(lower_bound)
        self.tried = dict(tried or {})   # method -> colors
        self.effort = dict(effort or {})

    @property
    def optimal(self) -> bool:
        return self.ncolors <= self.lower_bound

    def seed(self, dtype: Any = float) -> np.ndarray[Any, Any]:
        """The seed matrix transposed: (ncolors x vertices), row c the indicator of group c."""
        s = np.zeros((self.ncolors, len(self.colors)), dtype)
        s[self.colors, np.arange(len(self.colors))] = 1
        return s

    def __repr__(self) -> str:
        return (f"Coloring({counted(self.ncolors, 'color')} by {self.method}, "
                f"lower bound {self.lower_bound})")


# --- orderings -------------------------------------------------------------------------
def _ordering(name, indptr, indices):
    n = len(indptr) - 1
    degree = np.diff(indptr)
    if name == "natural":
        return np.arange(n)
    if name == "largest-first":
        return np.argsort(-degree, kind="stable")
    if name == "smallest-last":
        return _smallest_last(indptr, indices, degree)
    raise ValueError(f"coloring: unknown ordering {name!r}; use one of {ORDERINGS}")


def _smallest_last(indptr, indices, degree):
    """Matula-Beck: repeatedly remove a vertex of least remaining degree; color in the
    reverse order of removal. Bucket queue, O(V + E)."""
    n = len(degree)
    deg = degree.tolist()
    buckets = {}
    for v in range(n):
        buckets.setdefault(deg[v], set()).add(v)
    removed = [False] * n
    order = []
    ip, ind = indptr.tolist(), indices.tolist()
    low = 0
    for _ in range(n):
        while not buckets.get(low):
            low += 1
        v = buckets[low].pop()
        removed[v] = True
        order.append(v)
        for w in ind[ip[v]:ip[v + 1]]:
            if not removed[w]:
                d = deg[w]
                buckets[d].discard(w)
                deg[w] = d - 1
                buckets.setdefault(d - 1, set()).add(w)
        low = max(0, low - 1)
    return np.array(order[::-1], np.int64)


def _band_coloring(pattern):
    """``j mod w`` when every row of the pattern lies inside w consecutive columns."""
    if pattern.nnz == 0:
        return np.zeros(pattern.shape[1], np.int64), 1
    indptr, indices = pattern.indptr, pattern.indices
    if pattern.has_sorted_indices:      # each row's first and last column suffice
        first, last = indptr[:-1], indptr[1:] - 1
        if last.size and (last >= first).all():     # no empty row (the common case)
            rows = np.arange(pattern.shape[0], dtype=indices.dtype)
        else:
            rows = np.flatnonzero(last >= first)
            first, last = first.take(rows), last.take(rows)
        lo = int((indices.take(first) - rows).min())
        hi = int((indices.take(last) - rows).max())
    else:
        rows = np.repeat(np.arange(pattern.shape[0], dtype=np.int64), np.diff(indptr))
        diff = indices - rows
        lo, hi = int(diff.min()), int(diff.max())
    # Every row i has its columns in [i + lo, i + hi]: a window of hi - lo + 1 columns.
    w = hi - lo + 1
    n = pattern.shape[1]
    return np.tile(np.arange(w, dtype=np.int64), -(-n // w))[:n], w


# The periodic candidates j mod q tried for q = ρ, ρ + 1, ... below the band's width: at
# most this many (each checked in O(nnz)).
PERIODS = 32


def _periodic_coloring(pattern, lower, w):
    """``(colors, q)`` for the smallest ``q`` in ``[max(1, ρ), w)`` (at most
    :data:`PERIODS` of them) for which ``j mod q`` is a column coloring, or None: a pattern
    whose rows have their columns at fixed offsets (scattered diagonals, stencils in
    storage order) is often colored optimally so, where the band coloring needs its whole
    width ``w``. A row holds two columns of one color exactly when two of its columns are
    congruent mod q: checked with one count over the (row, j mod q) keys."""
    m, n = pattern.shape
    if pattern.nnz == 0:
        return None
    rows = np.repeat(np.arange(m, dtype=np.int64), np.diff(pattern.indptr))
    cols = pattern.indices.astype(np.int64)
    for q in range(max(1, lower), min(w, max(1, lower) + PERIODS)):
        if m * q > 50_000_000:       # the count's table: past it, stop trying
            return None
        if np.bincount(rows * q + cols % q, minlength=m * q).max() <= 1:
            return np.arange(n, dtype=np.int64) % q, q
    return None


# Colorings of recent patterns (by a digest of the pattern and the arguments; callers get
# copies): an optimizer asks for the same pattern's coloring at every step, and should pay
# for the search once.
_CACHE, _CACHE_SIZE = {}, 16


def _cached(kind, matrix, args, compute):
    digest = hashlib.blake2b(matrix.indptr.tobytes(), digest_size=16)
    digest.update(matrix.indices.tobytes())
    key = (kind, matrix.shape, args, digest.digest())
    if key not in _CACHE:
        _CACHE[key] = compute()
        while len(_CACHE) > _CACHE_SIZE:
            del _CACHE[next(iter(_CACHE))]
    found = copy.copy(_CACHE[key])
    found.colors, found.tried, found.effort = (found.colors.copy(), dict(found.tried),
                                               dict(found.effort))
    return found


def _budget(budget, greedy_work):
    return Budget(BUDGET + min(greedy_work, GREEDY_CAP) if budget is None else budget)


# A pattern whose densest row holds at least this fraction of its columns is colored one
# color per nonempty column without building its intersection graph, when that graph would
# cost more than DENSE_WORK to build (a search could save at most a tenth of the colors).
NEARLY_DENSE = 0.9
DENSE_WORK = 10_000_000
# The intersection graph is a dense BLAS product PᵀP when that is cheaper: the sparse
# product costs about Σᵢ nnzᵢ² scalar steps, the dense one m n² BLAS flops, some
# BLAS_SPEEDUP times faster each (measured: ~5e-9 s per sparse step, ~5e-11 s per flop),
# and only while both dense arrays hold at most DENSE_CELLS entries.
BLAS_SPEEDUP = 50
DENSE_CELLS = 1 << 24


def _product_work(pattern):
    """Σᵢ nnzᵢ²: the scalar steps of the sparse product PᵀP (each row pairs its columns)."""
    counts = np.diff(pattern.indptr).astype(np.int64)
    return int(counts @ counts)


def _intersection_graph(pattern):
    r"""The column intersection graph of ``pattern`` (m x n): columns ``j != k`` adjacent
    when a row has both, the off-diagonal nonzeros of :math:`P^\top P`, as sorted CSR.

    The sparse product costs :math:`\sum_i \mathrm{nnz}_i^2` steps, cubic for a dense
    pattern (``m n²``: 8e9 at 2000 x 2000); when the dense product's ``m n²`` BLAS flops
    are cheaper (see :data:`BLAS_SPEEDUP`) and its arrays fit :data:`DENSE_CELLS`, it is
    taken: counts of rows shared, exact in float32 (a sum of nonnegative terms is zero
    only when every term is)."""
    m, n = pattern.shape
    dense = (m * n <= DENSE_CELLS and n * n <= DENSE_CELLS
             and BLAS_SPEEDUP * _product_work(pattern) > m * n * n)
    if dense:
        d = np.zeros((m, n), np.float32)
        coo = pattern.tocoo()
        d[coo.row, coo.col] = 1
        shared = d.T @ d > 0
        np.fill_diagonal(shared, False)
        graph = sp.csr_matrix(shared, dtype=np.int8)
    else:
        # int32 counts: in int8 a pair of columns sharing 256 rows counted 0, and its edge
        # was dropped (an invalid coloring; rows are fewer than 2³¹)
        csc = pattern.tocsc().astype(np.int32)
        graph = (csc.T @ csc).tocsr()   # column intersection graph (with the diagonal)
        graph.setdiag(0)
        graph.eliminate_zeros()
    graph.sort_indices()
    return graph


def _dense_coloring(pattern, lower, budget):
    """One color per nonempty column, the empty ones (no row to clash in) sharing color 0:
    the trivial coloring, optimal when a row is full (``lower == n``). O(nnz + n)."""
    nonempty = np.bincount(pattern.indices, minlength=pattern.shape[1]) > 0
    colors = np.where(nonempty, np.cumsum(nonempty) - 1, 0).astype(np.int64)
    c = Coloring(colors, "dense", lower)
    c.tried = {"dense": c.ncolors}
    c.effort = {"budget": _budget(budget, 0).total, "spent": 0, "passes": 0, "iterations": 0}
    return c


def _nearly_dense(pattern, lower):
    """Whether to color ``pattern`` trivially: a full row (the bound is ``n``), or a row
    with :data:`NEARLY_DENSE` of the columns and an intersection graph costing more than
    :data:`DENSE_WORK` steps (checked from the row counts, O(m))."""
    n = pattern.shape[1]
    if lower >= n:
        return True
    return lower >= NEARLY_DENSE * n and _product_work(pattern) > DENSE_WORK


def column_coloring(pattern: Any, orderings: Sequence[str] = ORDERINGS,
                    budget: int | None = None) -> Coloring:
    r"""A coloring of the columns of a sparsity pattern in which columns of one color share no row.

    Columns ``j`` and ``k`` are structurally orthogonal when no row has a nonzero in both;
    a partition into orthogonal groups (a partial distance-2 coloring of the column
    vertices of the pattern's bipartite graph, or a distance-1 coloring of the column
    intersection graph :math:`P^\top P`) gives the seed :math:`S` with
    :math:`S_{j,\,\mathrm{color}(j)} = 1` from which :math:`J` is recovered out of
    :math:`J S`. Any such coloring needs at least :math:`\rho`, the largest number of
    nonzeros in one row. The fewest colors are kept over: the band coloring
    (``j mod w`` for a pattern of bandwidth ``w``) or, where one is valid, the periodic
    ``j mod q`` for the smallest ``q`` from :math:`\rho` up (scattered diagonals, stencils
    in storage order), greedy colorings under the natural,
    largest-first and smallest-last orderings and, within ``budget`` work units, DSATUR,
    iterated greedy and a tabu search for one color fewer at a time. Every step stops as
    soon as the lower bound is met. A pattern with a full row, or with a row of 90% of
    the columns and a costly intersection graph, gets one color per nonempty column
    (``method`` ``"dense"``) without a search.

    Parameters
    ----------
    pattern : scipy.sparse matrix or array_like of bool
        The m x n sparsity pattern.
    orderings : sequence of str, optional
        The greedy orderings to try, from ``"natural"``, ``"largest-first"`` and
        ``"smallest-last"`` (default all three).
    budget : int, optional
        Work units for the search after the greedy colorings (default: 2,000,000 plus the
        greedy colorings' own work, at most 20,000,000 more); ``0``: greedy only.

    Returns
    -------
    jacobians.coloring.Coloring
        ``colors`` (an int64 array, one color in ``0 .. ncolors - 1`` per column),
        ``ncolors``, ``lower_bound`` and ``optimal`` (the bound is met), ``method`` (the
        heuristic that won), ``tried`` (each heuristic run and its count) and ``effort``
        (the search's budget and spending). ``seed()`` gives the seed matrix transposed,
        ``ncolors x n``.

    See Also
    --------
    row_coloring : The rows instead (reverse mode).
    star_coloring : For symmetric (Hessian) patterns.
    sparse_jacobian : Uses these colorings.

    Notes
    -----
    The grouping is Curtis, Powell and Reid's [1]_, the graph view Coleman and Moré's [2]_.

    References
    ----------
    .. [1] A. R. Curtis, M. J. D. Powell and J. K. Reid, "On the estimation of sparse
       Jacobian matrices", *IMA J. Appl. Math.* 13 (1974), 117-119.
    .. [2] T. F. Coleman and J. J. Moré, "Estimation of sparse Jacobian matrices and graph
       coloring problems", *SIAM J. Numer. Anal.* 20 (1983), 187-209.

    Examples
    --------
    >>> from dualad import jacobians
    >>> P = np.array([[1, 1, 0, 0],
    ...               [0, 1, 1, 0],
    ...               [0, 0, 1, 1]], dtype=bool)
    >>> c = jacobians.column_coloring(P)
    >>> print(c.colors, c.ncolors, c.lower_bound, c.optimal)
    [0 1 0 1] 2 2 True
    >>> print(c.seed())
    [[1. 0. 1. 0.]
     [0. 1. 0. 1.]]
    """
    pattern = sp.csr_matrix(pattern, dtype=bool)
    n = pattern.shape[1]
    if n == 0:
        return Coloring(np.zeros(0), "empty", 0)
    lower = int(np.diff(pattern.indptr).max(initial=0))
    if _nearly_dense(pattern, lower):
        return _dense_coloring(pattern, lower, budget)
    colors, w = _band_coloring(pattern)
    band = Coloring(colors, "band", lower) if w <= n else None
    periodic = _periodic_coloring(pattern, lower, min(w, n))
    if periodic is not None:
        band, w = Coloring(periodic[0], "periodic", lower), periodic[1]
    if band is not None and w <= max(1, lower):
        # Banded: the band coloring meets the bound; nothing to search (or to cache).
        band.tried = {band.method: w}
        band.effort = {"budget": _budget(budget, 0).total, "spent": 0, "passes": 0,
                       "iterations": 0}
        return band
    return _cached("column", pattern, (tuple(orderings), budget, BUDGET, GREEDY_CAP),
                   lambda: _column_coloring(pattern, orderings, budget, lower, band))


def _column_coloring(pattern, orderings, budget, lower, band):
    """Greedy orderings, then the search, from the band coloring (or None) and the lower
    bound ``column_coloring`` found."""
    n = pattern.shape[1]
    target = max(1, lower)          # the count to stop at: one color even without entries
    tried = {} if band is None else {band.method: band.ncolors}
    best = band
    graph, work = None, 0
    if best is None or best.ncolors > target:
        graph = _intersection_graph(pattern)
        if graph.nnz == n * (n - 1):     # complete: every column meets every other one
            return _dense_coloring(pattern, n, budget)
        for name in orderings or ("natural",):
            c = Coloring(greedy(graph.indptr, graph.indices,
                                _ordering(name, graph.indptr, graph.indices)), name, lower)
            work += graph.nnz + n
            tried[name] = c.ncolors
            if best is None or c.ncolors < best.ncolors:
                best = c
            if best.ncolors <= target:
                break
    budget = _budget(budget, work)
    effort = {"budget": budget.total, "spent": 0, "passes": 0, "iterations": 0}
    if best.ncolors > target:
        best = _search_proper(graph, best, target, tried, budget, effort,
                              valid=lambda colors: is_column_coloring(pattern, colors))
    effort["spent"] = budget.spent
    best.tried, best.effort = tried, effort
    return best


def _search_proper(graph, best, target, tried, budget, effort, valid):
    """DSATUR, then iterated greedy and tabu search from the best coloring so far."""
    if budget.take(5 * graph.nnz + graph.shape[0]):
        c = Coloring(dsatur(graph.indptr, graph.indices), "dsatur", best.lower_bound)
        tried["dsatur"] = c.ncolors
        if c.ncolors < best.ncolors:
            best = c
    if best.ncolors <= target:
        return best
    colors, stats = reduce_proper(graph.indptr, graph.indices, best.colors, target, budget)
    effort["passes"], effort["iterations"] = stats.pop("passes"), stats.pop("iterations")
    tried.update(stats)
    k = int(colors.max()) + 1
    if k < best.ncolors and valid(colors):   # valid: never expected otherwise; stay correct
        winner = "tabu search" if stats.get("tabu search", k + 1) < stats.get(
            "iterated greedy", best.ncolors) else "iterated greedy"
        best = Coloring(colors, winner, best.lower_bound)
    return best


def row_coloring(pattern: Any, orderings: Sequence[str] = ORDERINGS,
                 budget: int | None = None) -> Coloring:
    r"""A coloring of the rows of a sparsity pattern in which rows of one color share no column.

    The :func:`column_coloring` of the transposed pattern: the seed of a reverse sweep,
    :math:`J_{ij} = (S^\top J)_{\mathrm{color}(i),\, j}`. Its lower bound is the largest
    number of nonzeros in one column.

    Parameters
    ----------
    pattern : scipy.sparse matrix or array_like of bool
        The m x n sparsity pattern.
    orderings : sequence of str, optional
        The greedy orderings to try (default ``"natural"``, ``"largest-first"``,
        ``"smallest-last"``).
    budget : int, optional
        Work units for the search after the greedy colorings (as in
        :func:`column_coloring`; ``0``: greedy only).

    Returns
    -------
    jacobians.coloring.Coloring
        ``colors`` (an int64 array, one color in ``0 .. ncolors - 1`` per row),
        ``ncolors``, ``lower_bound`` and ``optimal`` (the bound is met), ``method`` (the
        heuristic that won), ``tried`` (each heuristic run and its count) and ``effort``
        (the search's budget and spending). ``seed()`` gives the seed matrix transposed,
        ``ncolors x m``.

    See Also
    --------
    column_coloring : The columns (forward mode).

    Examples
    --------
    >>> from dualad import jacobians
    >>> P = np.array([[1, 0, 0],
    ...               [1, 1, 0],
    ...               [0, 1, 1],
    ...               [0, 0, 1]], dtype=bool)
    >>> r = jacobians.row_coloring(P)
    >>> print(r.colors, r.ncolors)
    [0 1 0 1] 2
    """
    return column_coloring(sp.csr_matrix(pattern, dtype=bool).T.tocsr(), orderings, budget)


def is_column_coloring(pattern, colors):
    """True when no row of ``pattern`` has two columns of the same color."""
    coo = sp.coo_matrix(pattern)
    keys = coo.row.astype(np.int64) * (int(np.max(colors, initial=0)) + 1) + colors[coo.col]
    return len(np.unique(keys)) == len(keys)


# --- star coloring -----------------------------------------------------------------------------
def _adjacency(pattern):
    a = sp.csr_matrix(pattern, dtype=bool)
    a = ((a + a.T) > 0).tocsr().astype(np.int8)
    a.setdiag(0)
    a.eliminate_zeros()
    a.sort_indices()
    return a


def _star_greedy(indptr, indices, order):
    """Greedy star coloring (GMP 2005, the simple O(n d^3) algorithm): v may not take
    the color of a neighbor w; nor, through an uncolored w, the color of w's neighbor x;
    nor, through a colored w, the color of an x adjacent to w that already has a
    neighbor y ≠ w colored like w (that would close a two-colored path on four vertices)."""
    n = len(indptr) - 1
    ip, ind = indptr.tolist(), indices.tolist()
    colors = [-1] * n
    mark = [-1] * (n + 1)
    for v in order.tolist():
        for w in ind[ip[v]:ip[v + 1]]:
            cw = colors[w]
            if cw >= 0:
                mark[cw] = v
            for x in ind[ip[w]:ip[w + 1]]:
                cx = colors[x]
                if x == v or cx < 0:
                    continue
                if cw < 0:
                    mark[cx] = v
                else:
                    for y in ind[ip[x]:ip[x + 1]]:
                        if y != w and colors[y] == cw:
                            mark[cx] = v
                            break
        c = 0
        while mark[c] == v:
            c += 1
        colors[v] = c
    return np.array(colors, np.int64)


def star_recoverable(adj, colors):
    """True when every edge (i, j) can be read directly (see the module docstring)."""
    coo = adj.tocoo()
    if coo.nnz == 0:
        return True
    k = int(colors.max()) + 1
    counts = np.bincount(coo.row.astype(np.int64) * k + colors[coo.col], minlength=adj.shape[0] * k)
    at_i = counts[coo.row.astype(np.int64) * k + colors[coo.col]] == 1
    at_j = counts[coo.col.astype(np.int64) * k + colors[coo.row]] == 1
    return bool(np.all(at_i | at_j))


def is_star_coloring(adj, colors):
    """True when ``colors`` is a distance-1 coloring of the graph ``adj`` (sparse, symmetric,
    no diagonal) in which every path on four vertices uses at least three colors."""
    coo = sp.coo_matrix(adj)
    return bool(np.all(colors[coo.row] != colors[coo.col])) and star_recoverable(adj, colors)


def _star_lower_bound(adj):
    """3 when an edge has two ends of degree ≥ 2 (it lies on a triangle or on a path on four
    vertices, neither of which has a star 2-coloring), else 2 with edges, else 1."""
    if adj.nnz == 0:
        return 1
    degree = np.diff(adj.indptr)
    coo = adj.tocoo()
    return 3 if np.any((degree[coo.row] >= 2) & (degree[coo.col] >= 2)) else 2


def star_coloring(pattern: Any, orderings: Sequence[str] = ORDERINGS,
                  budget: int | None = None) -> Coloring:
    r"""A star coloring of a symmetric pattern's adjacency graph, for compressed Hessians.

    A distance-1 coloring (neighbours differ) in which every path on four vertices uses at
    least three colors. With one Hessian-vector product per color, :math:`H S`, every
    entry is then read directly: from :math:`(H S)_{i,\,\mathrm{color}(j)}` when ``j`` is
    the only neighbour of ``i`` with its color, else from
    :math:`(H S)_{j,\,\mathrm{color}(i)}`. The fewest colors are kept over the
    distance-2 band coloring, the star greedy under each ordering and, within ``budget``,
    a distance-2 coloring and a tabu search on the star condition; every step stops at the
    lower bound (3 when an edge has two ends of degree 2 or more, else 2 with edges, 1
    without).

    Parameters
    ----------
    pattern : scipy.sparse matrix or array_like of bool
        The n x n pattern (made symmetric; the diagonal is ignored).
    orderings : sequence of str, optional
        The greedy orderings to try (default ``"natural"``, ``"largest-first"``,
        ``"smallest-last"``).
    budget : int, optional
        Work units for the search (as in :func:`column_coloring`; ``0``: greedy only).

    Returns
    -------
    jacobians.coloring.Coloring
        ``colors`` (an int64 array, one color in ``0 .. ncolors - 1`` per vertex),
        ``ncolors``, ``lower_bound`` and ``optimal`` (the bound is met), ``method`` (the
        heuristic that won), ``tried`` (each heuristic run and its count) and ``effort``
        (the search's budget and spending). ``seed()`` gives the seed matrix transposed,
        ``ncolors x n``.

    See Also
    --------
    sparse_hessian : Uses this coloring.
    column_coloring : The unsymmetric case.

    Notes
    -----
    Star colorings for Hessians are due to Coleman and Moré [1]_; the algorithms follow
    the survey [2]_.

    References
    ----------
    .. [1] T. F. Coleman and J. J. Moré, "Estimation of sparse Hessian matrices and graph
       coloring problems", *Math. Programming* 28 (1984), 243-270.
    .. [2] A. H. Gebremedhin, F. Manne and A. Pothen, "What color is your Jacobian? Graph
       coloring for computing derivatives", *SIAM Review* 47 (2005), 629-705.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> from dualad import jacobians
    >>> tridiagonal = sp.diags([1.0, 1.0, 1.0], [-1, 0, 1], shape=(5, 5))
    >>> s = jacobians.star_coloring(tridiagonal)
    >>> print(s.colors, s.ncolors, s.method)
    [0 1 2 0 1] 3 band
    """
    adj = _adjacency(pattern)
    return _cached("star", adj, (tuple(orderings), budget, BUDGET, GREEDY_CAP),
                   lambda: _star_coloring(adj, orderings, budget))


def _nearly_complete(degree, pass_work):
    """Whether a star coloring should give every vertex its own color without a search: the
    graph is complete (a clique of ``n``: ``n`` colors are needed), or every vertex meets
    :data:`NEARLY_DENSE` of the others and a greedy pass would cost over
    :data:`DENSE_WORK` steps (its ``O(n d³)`` loops: ~36 s for a dense 100 x 100 pattern)."""
    n = len(degree)
    if n > 1 and int(degree.min()) == n - 1:
        return True
    return n > 1 and int(degree.min()) >= NEARLY_DENSE * (n - 1) and pass_work > DENSE_WORK


def _each_its_own(n, lower, budget):
    """One color per vertex: a star coloring of any graph (no two vertices share one)."""
    c = Coloring(np.arange(n, dtype=np.int64), "dense", lower)
    c.tried = {"dense": n}
    c.effort = {"budget": _budget(budget, 0).total, "spent": 0, "passes": 0, "iterations": 0}
    return c


def _star_coloring(adj, orderings, budget):
    n = adj.shape[0]
    if n == 0:
        return Coloring(np.zeros(0), "empty", 0)
    lower = _star_lower_bound(adj)
    best, tried = None, {}
    closed = adj + sp.identity(n, dtype=np.int8, format="csr")
    colors, w = _band_coloring(closed)
    if w <= n:
        tried["band"] = w
        best = Coloring(colors, "band", lower)
    degree = np.diff(adj.indptr).astype(np.int64)     # int32 sums below overflowed
    # The star greedy's loops visit at most Σ_w deg(w) Σ_{x ~ w} deg(x) entries, and stop
    # early: some 4 of them to a unit.
    pass_work = (int(degree @ (adj @ degree)) + adj.nnz) // 4
    if _nearly_complete(degree, pass_work):
        return _each_its_own(n, n if adj.nnz == n * (n - 1) else lower, budget)
    work = 0
    for name in orderings:
        if best is not None and best.ncolors <= lower:
            break
        colors = _star_greedy(adj.indptr, adj.indices, _ordering(name, adj.indptr, adj.indices))
        work += pass_work
        if not is_star_coloring(adj, colors):  # never expected; stay correct regardless
            continue
        c = Coloring(colors, name, lower)
        tried[name] = c.ncolors
        if best is None or c.ncolors < best.ncolors:
            best = c
    budget = _budget(budget, work)
    effort = {"budget": budget.total, "spent": 0, "passes": 0, "iterations": 0}
    if best is None or (best.ncolors > lower and int(degree.max()) + 1 < best.ncolors):
        # Two vertices within distance 2 never share a color: a star coloring, worth a try
        # when its own lower bound (the largest degree + 1) is below the best count (and
        # the one left when nothing else gave a coloring).
        square = _intersection_graph(closed)
        if budget.take(5 * square.nnz + n) or best is None:
            colors = dsatur(square.indptr, square.indices)
            tried["distance-2 dsatur"] = int(colors.max()) + 1
            if best is None or colors.max() + 1 < best.ncolors:
                best = Coloring(colors, "distance-2 dsatur", lower)
    if best.ncolors > lower and budget.left > 0:
        colors, stats = reduce_star(adj.indptr, adj.indices, best.colors, lower, budget)
        effort["iterations"] += stats.pop("iterations")
        tried.update(stats)
        if int(colors.max()) + 1 < best.ncolors and is_star_coloring(adj, colors):
            best = Coloring(colors, "tabu search", lower)
    effort["spent"] = budget.spent
    best.tried, best.effort = tried, effort
    return best
