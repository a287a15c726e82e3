"""Small exact graph tools for the coloring reproductions (independent of ``jacobians``).

Everything here is exhaustive or checks a definition directly, so it can
certify what a heuristic coloring only claims: that a partition is
structurally orthogonal, that a coloring is a star coloring, and (by
backtracking, on small graphs) that no star coloring with fewer colors exists.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def grid_index(N):
    """Row-major index of grid point (i, j) of an N x N grid: ``i * N + j``."""
    return np.arange(N * N).reshape(N, N)


def five_point_pattern(N):
    """The m x n (here N² x N²) pattern of the 5-point stencil: point (i, j) depends on
    itself and on its grid neighbors, built from the stencil's definition alone."""
    idx = grid_index(N)
    rows, cols = [], []
    for di, dj in ((0, 0), (1, 0), (-1, 0), (0, 1), (0, -1)):
        i, j = np.meshgrid(np.arange(N), np.arange(N), indexing="ij")
        ok = (i + di >= 0) & (i + di < N) & (j + dj >= 0) & (j + dj < N)
        rows.append(idx[i[ok], j[ok]])
        cols.append(idx[i[ok] + di, j[ok] + dj])
    r, c = np.concatenate(rows), np.concatenate(cols)
    return sp.csr_matrix((np.ones(len(r), bool), (r, c)), shape=(N * N, N * N))


def band_pattern(n, k):
    """``|i - j| <= k``: the pattern of a band of half-bandwidth k."""
    i, j = np.indices((n, n))
    return sp.csr_matrix(np.abs(i - j) <= k)


def stencil_coloring(N):
    """``(i + 2j) mod 5``: two points of one color are never within grid distance 2, so
    this partitions the 5-point stencil's columns (and star-colors the grid graph)."""
    i, j = np.indices((N, N))
    return ((i + 2 * j) % 5).ravel()


def is_column_partition(pattern, colors):
    """True when no row of ``pattern`` has two columns of the same color (the columns of
    each group are structurally orthogonal)."""
    coo = sp.coo_matrix(pattern)
    key = coo.row.astype(np.int64) * (int(colors.max()) + 1) + colors[coo.col]
    return len(np.unique(key)) == coo.nnz


def adjacency(pattern):
    """Neighbor lists of the adjacency graph of a symmetric pattern (diagonal dropped)."""
    a = sp.csr_matrix(pattern, dtype=bool)
    a = ((a + a.T) > 0).tolil()
    a.setdiag(False)
    a = a.tocsr()
    return [a.indices[a.indptr[v]:a.indptr[v + 1]].tolist() for v in range(a.shape[0])]


def path_adjacency(n):
    return [[w for w in (v - 1, v + 1) if 0 <= w < n] for v in range(n)]


def grid_adjacency(rows, cols):
    adj = [[] for _ in range(rows * cols)]
    for i in range(rows):
        for j in range(cols):
            v = i * cols + j
            if i + 1 < rows:
                adj[v].append(v + cols)
                adj[v + cols].append(v)
            if j + 1 < cols:
                adj[v].append(v + 1)
                adj[v + 1].append(v)
    return adj


def _bicolored_p4_at(adj, col, v):
    """A two-colored path on four vertices through v among colored vertices, or None."""
    c = col[v]
    for a in adj[v]:
        ca = col[a]
        if ca < 0:
            continue
        for b in adj[a]:                      # v - a - b - d, colors c, ca, c, ca
            if b != v and col[b] == c:
                for d in adj[b]:
                    if d != a and d != v and col[d] == ca:
                        return (v, a, b, d)
        for b in adj[v]:                      # a - v - b - d, colors ca, c, ca, c
            if b != a and col[b] == ca:
                for d in adj[b]:
                    if d != v and d != a and col[d] == c:
                        return (a, v, b, d)
    return None


def is_star_coloring(adj, colors):
    """Proper, and every path on four vertices uses at least three colors."""
    col = [int(c) for c in colors]
    for v in range(len(adj)):
        if any(col[w] == col[v] for w in adj[v]):
            return False
        if _bicolored_p4_at(adj, col, v) is not None:
            return False
    return True


def star_colorable(adj, k):
    """Whether the graph has a star coloring with at most k colors: exhaustive
    backtracking over vertices in order (new colors introduced in order, to skip
    permutations). Exponential: for the small certificates only."""
    n = len(adj)
    col = [-1] * n

    def extend(v, used):
        if v == n:
            return True
        for c in range(min(k, used + 1)):
            col[v] = c
            if all(col[w] != c for w in adj[v]) and _bicolored_p4_at(adj, col, v) is None \
                    and extend(v + 1, max(used, c + 1)):
                return True
        col[v] = -1
        return False
    return extend(0, 0)
