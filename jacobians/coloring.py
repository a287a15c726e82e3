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
and the fewest colors kept; the search stops as soon as the lower bound is met.

Hessian (Gebremedhin, Manne, Pothen 2005, "What color is your Jacobian?"):
a *star coloring* of the adjacency graph of the symmetric pattern — a
distance-1 coloring in which every path on four vertices uses at least three
colors — lets every H[i, j] be read directly from one Hessian-vector product
per color: from ``(H S)[i, color(j)]`` when j is the only neighbor of i with
its color, else from ``(H S)[j, color(i)]`` (the star property guarantees one).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

ORDERINGS = ("natural", "largest-first", "smallest-last")


class Coloring:
    """``colors[v]`` in ``0 .. ncolors-1`` for each vertex, and how it was found."""

    def __init__(self, colors, method, lower_bound, tried=None):
        self.colors = np.asarray(colors, np.int64)
        self.ncolors = int(self.colors.max()) + 1 if len(self.colors) else 0
        self.method = method
        self.lower_bound = int(lower_bound)
        self.tried = dict(tried or {})   # method -> colors

    @property
    def optimal(self):
        return self.ncolors <= self.lower_bound

    def seed(self, dtype=float):
        """The seed matrix transposed: (ncolors x vertices), row c the indicator of group c."""
        s = np.zeros((self.ncolors, len(self.colors)), dtype)
        s[self.colors, np.arange(len(self.colors))] = 1
        return s

    def __repr__(self):
        return f"Coloring({self.ncolors} colors by {self.method}, lower bound {self.lower_bound})"


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


# --- distance-1 greedy on an adjacency structure -------------------------------------------
def greedy(indptr, indices, order):
    """Each vertex in ``order`` takes the smallest color none of its neighbors has."""
    n = len(indptr) - 1
    colors = [-1] * n
    mark = [-1] * (n + 1)
    ip, ind = indptr.tolist(), indices.tolist()
    for v in order.tolist():
        for w in ind[ip[v]:ip[v + 1]]:
            c = colors[w]
            if c >= 0:
                mark[c] = v
        c = 0
        while mark[c] == v:
            c += 1
        colors[v] = c
    return np.array(colors, np.int64)


def _band_coloring(pattern):
    """``j mod w`` when every row of the pattern lies inside w consecutive columns."""
    coo = pattern.tocoo()
    if coo.nnz == 0:
        return np.zeros(pattern.shape[1], np.int64), 1
    diff = coo.col.astype(np.int64) - coo.row.astype(np.int64)
    lo, hi = int(diff.min()), int(diff.max())
    # Every row i has its columns in [i + lo, i + hi]: a window of hi - lo + 1 columns.
    w = hi - lo + 1
    return np.arange(pattern.shape[1], dtype=np.int64) % w, w


def column_coloring(pattern, orderings=ORDERINGS):
    """A partial distance-2 coloring of the columns of ``pattern`` (m x n, sparse): columns
    of one color share no row. The fewest colors over the band coloring and the greedy
    orderings; stops at the lower bound (the largest row count)."""
    pattern = sp.csr_matrix(pattern, dtype=bool)
    m, n = pattern.shape
    if n == 0:
        return Coloring(np.zeros(0), "empty", 0)
    lower = int(np.diff(pattern.indptr).max(initial=0))
    tried = {}
    best = None
    colors, w = _band_coloring(pattern)
    if w <= n:
        tried["band"] = w
        best = Coloring(colors, "band", lower)
        if best.ncolors <= max(1, lower):
            best.tried = tried
            return best
    csc = pattern.tocsc().astype(np.int8)
    graph = (csc.T @ csc).tocsr()   # column intersection graph (with the diagonal)
    graph.setdiag(0)
    graph.eliminate_zeros()
    for name in orderings:
        colors = greedy(graph.indptr, graph.indices, _ordering(name, graph.indptr,
                                                                graph.indices))
        c = Coloring(colors, name, lower)
        tried[name] = c.ncolors
        if best is None or c.ncolors < best.ncolors:
            best = c
        if best.ncolors <= max(1, lower):
            break
    best.tried = tried
    return best


def row_coloring(pattern, orderings=ORDERINGS):
    """Rows of one color share no column: :func:`column_coloring` of the transpose."""
    return column_coloring(sp.csr_matrix(pattern, dtype=bool).T.tocsr(), orderings)


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


def star_coloring(pattern, orderings=ORDERINGS):
    """A star coloring of the symmetric pattern's adjacency graph, fewest colors over the
    orderings (and the distance-2 band coloring, itself a star coloring)."""
    adj = _adjacency(pattern)
    n = adj.shape[0]
    if n == 0:
        return Coloring(np.zeros(0), "empty", 0)
    # Neighbors of one vertex may share a color (a star needs 2): the bound is weak.
    lower = 2 if adj.nnz else 1
    best, tried = None, {}
    colors, w = _band_coloring(adj + sp.identity(n, dtype=np.int8, format="csr"))
    if w <= n:
        tried["band"] = w
        best = Coloring(colors, "band", lower)
    for name in orderings:
        if best is not None and best.ncolors <= lower:
            break
        colors = _star_greedy(adj.indptr, adj.indices, _ordering(name, adj.indptr, adj.indices))
        if not star_recoverable(adj, colors):  # never expected; stay correct regardless
            continue
        c = Coloring(colors, name, lower)
        tried[name] = c.ncolors
        if best is None or c.ncolors < best.ncolors:
            best = c
    if best is None:
        best = column_coloring(adj + sp.identity(n, dtype=np.int8, format="csr"), orderings)
    best.tried = tried
    return best
