"""Acyclic coloring of a symmetric pattern, and recovery of the Hessian by substitution.

An *acyclic coloring* of an undirected graph is a distance-1 coloring (neighbours
differ) in which every cycle uses at least three colors: the subgraph induced by any
two color classes is a forest. It is weaker than a star coloring (every path on four
vertices uses three colors: each two-colored tree is then a star), so it may need fewer
colors: a band of half-bandwidth β needs β + 1 (``j mod (β + 1)``, a clique's worth),
where a star coloring of the full band needs 2β + 1; the 5-point grid needs 3 acyclic
colors (the greedy here finds 4) against 5 star colors.

Recovery by substitution (Coleman and Cai 1986; the coloring algorithm is Gebremedhin,
Tarafdar, Manne and Pothen 2007, the tree-set recovery Gebremedhin, Tarafdar, Pothen and
Walther 2009). With one Hessian-vector product per color, ``B = H S``
(``S[j, color(j)] = 1``), and for a vertex ``v`` and a color ``c ≠ color(v)``::

    B[v, c] = Σ_{u ~ v, color(u) = c} H[v, u]

Every edge (v, u) with colors {a, b} lies in exactly one tree of the {a, b} forest, and
all neighbours of ``v`` of color ``b`` lie in that same tree. Root each tree; for the
edge from a vertex ``v`` to its parent ``p`` (the children of ``v`` in that tree all
have the color of ``p``)::

    H[v, p] = B[v, color(p)] - Σ_{children u of v} H[u, v]

so the entries are recovered leaves first. Written over the tree edges this is one
unit lower-triangular system ``M h = b`` (an edge after its children; ``M[e, c] = 1``
when ``c`` is a child edge of ``e``), solved once per evaluation by a sparse
triangular solve (compiled code), the same subtractions as the leaves-first loop. The
diagonal is read directly, ``H[v, v] = B[v, color(v)]`` (no neighbour shares its
color). The tree structure (:class:`Trees`) depends on the pattern and the coloring
only: it is built once and kept on the coloring.

Rounding: each recovered entry carries the rounding of every entry of its subtree: the
error of ``H[v, p]`` is a small multiple of ``ε S`` with ``S`` the sum of ``|b|`` over
its subtree (:meth:`Trees.accumulated`), where a star coloring reads every entry from
one product. An entry much smaller than ``S`` loses ``log10(S / |H[v, p]|)`` digits;
under ``coloring="auto"`` an evaluation that would lose more than ``LOSS_DIGITS``
takes the star coloring's products instead. ``docs/acyclic.md`` measures it.

The coloring and the trees work on any symmetric adjacency (CSR), for instance the
bipartite graph ``[[0, Aᵀ], [A, 0]]`` of a Jacobian's acyclic bicoloring: the caller
gathers ``b`` per tree edge from its own products (:attr:`Trees.child`,
:attr:`Trees.parent`) and calls :meth:`Trees.solve`.
"""
from __future__ import annotations

__all__ = ["AcyclicColoring", "acyclic_coloring", "is_acyclic_coloring",
           "acyclic_lower_bound", "Trees", "tree_structure", "decompress_acyclic",
           "recovery_for", "hessian_coloring", "COLORINGS", "LOSS_DIGITS"]

import hashlib
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp
from scipy.sparse import csgraph
from scipy.sparse.linalg import spsolve_triangular

from .coloring import ORDERINGS, Coloring, _adjacency, _cached, _ordering, star_coloring

if TYPE_CHECKING:
    from collections.abc import Sequence

COLORINGS = ("auto", "star", "acyclic")
# Under coloring="auto", an evaluation whose substitution may lose more than LOSS_DIGITS
# digits of some entry (docs/acyclic.md) is done again with the star coloring's sweeps.
LOSS_DIGITS = 6


class AcyclicColoring(Coloring):
    """A :class:`~jacobians.coloring.Coloring` whose two-colored subgraphs are forests
    (entries recovered by substitution); ``recovery`` keeps the trees and positions of
    the pattern last decompressed (``recovery.trees``: :class:`Trees`)."""

    kind = "acyclic"
    recovery: Any = None     # the _Recovery of the pattern object last decompressed
    fallback: Any = None     # hessian_coloring(..., "auto"): the star coloring, kept
    fallbacks = 0            # evaluations that took it (digits would have been lost)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Recoveries by pattern digest, shared by the copies the coloring cache hands out:
        # a one-shot sparse_hessian detects a new (equal) pattern object at every call.
        self.recoveries: dict[bytes, Any] = {}


# --- the coloring ------------------------------------------------------------------------------
def _edge_ids(adj):
    """For each stored position of the symmetric CSR ``adj``, the id (``0 .. E-1``) of its
    undirected edge: (i, j) and (j, i) share one."""
    rows = np.repeat(np.arange(adj.shape[0], dtype=np.int64), np.diff(adj.indptr))
    cols = adj.indices.astype(np.int64)
    upper = rows < cols
    ids = np.full(adj.nnz, -1, np.int64)
    ids[upper] = np.arange(int(upper.sum()))
    # The position of each entry's transpose: the data of the transposed matrix of positions.
    pos = sp.csr_matrix((np.arange(1, adj.nnz + 1), adj.indices, adj.indptr), shape=adj.shape)
    mirror = pos.T.tocsr()
    mirror.sort_indices()
    ids[~upper] = ids[mirror.data[~upper] - 1]
    return ids


def _find(parent, e):
    while parent[e] != e:
        parent[e] = parent[parent[e]]
        e = parent[e]
    return e


def _forbid_cycles(v, ip, ind, eid, colors, forbidden, parent, first):
    """Forbid at ``v`` the color of ``x`` when ``v`` has two neighbours ``w ≠ w'`` in one
    two-colored tree through ``w - x``: taking it would close a two-colored cycle."""
    for p in range(ip[v], ip[v + 1]):
        w = ind[p]
        if colors[w] < 0:
            continue
        for q in range(ip[w], ip[w + 1]):
            x = ind[q]
            if x == v or colors[x] < 0 or forbidden[colors[x]] == v:
                continue
            r = _find(parent, eid[q])
            visit = first.get(r)
            if visit is None or visit[0] != v:
                first[r] = (v, w)
            elif visit[1] != w:
                forbidden[colors[x]] = v


def _grow_trees(v, c, ip, ind, eid, colors, parent):
    """Join each new edge (v, w) to the tree of v's other edges to w's color and to the
    tree of w's edges to color ``c`` (both exist only once: the forests stay forests)."""
    through_v = {}
    for p in range(ip[v], ip[v + 1]):
        w = ind[p]
        a = colors[w]
        if a < 0:
            continue
        e = _find(parent, eid[p])
        if a in through_v:
            parent[e] = e = _find(parent, through_v[a])
        else:
            through_v[a] = e
        for q in range(ip[w], ip[w + 1]):
            x = ind[q]
            if x != v and colors[x] == c:
                r = _find(parent, eid[q])
                if r != e:
                    parent[r] = e
                break


def _acyclic_greedy(indptr, indices, eid, order):
    """The greedy acyclic coloring of Gebremedhin, Tarafdar, Manne and Pothen (2007): each vertex in ``order`` takes the smallest
    color not on a neighbour and not closing a two-colored cycle; the two-colored trees
    are kept as a disjoint-set forest over the edges (O(|E| α) set operations, plus the
    visits of the neighbours' neighbours)."""
    n = len(indptr) - 1
    ip, ind, ids = indptr.tolist(), indices.tolist(), eid.tolist()
    colors = [-1] * n
    forbidden = [-1] * (n + 1)
    parent = list(range(max(ids, default=-1) + 1))
    first = {}
    for v in order.tolist():
        for p in range(ip[v], ip[v + 1]):
            if colors[ind[p]] >= 0:
                forbidden[colors[ind[p]]] = v
        _forbid_cycles(v, ip, ind, ids, colors, forbidden, parent, first)
        c = 0
        while forbidden[c] == v:
            c += 1
        colors[v] = c
        _grow_trees(v, c, ip, ind, ids, colors, parent)
    return np.array(colors, np.int64)


def _pair_nodes(adj, colors):
    """The two-colored forests as one graph: a node per (vertex, color pair) met by an
    edge, an edge per edge of ``adj``. Returns (upper-triangle rows, cols, node of each
    end, node's vertex, number of nodes)."""
    coo = sp.triu(adj, k=1, format="coo")
    i, j = coo.row.astype(np.int64), coo.col.astype(np.int64)
    k = int(colors.max(initial=0)) + 1
    ci, cj = colors[i], colors[j]
    pair = np.minimum(ci, cj) * k + np.maximum(ci, cj)
    keys = np.concatenate([i, j]) * (k * k) + np.concatenate([pair, pair])
    uniq, inverse = np.unique(keys, return_inverse=True)
    return i, j, inverse[:len(i)], inverse[len(i):], uniq // (k * k)


def is_acyclic_coloring(adj: Any, colors: Any) -> bool:
    """True when ``colors`` is a distance-1 coloring of the symmetric graph ``adj`` (its
    diagonal ignored) whose every two-colored subgraph is a forest (edges = nodes -
    components)."""
    adj = _adjacency(adj)
    colors = np.asarray(colors, np.int64)
    i, j, a, b, vertex = _pair_nodes(adj, colors)
    if np.any(colors[i] == colors[j]):
        return False
    nodes = len(vertex)
    graph = sp.csr_matrix((np.ones(len(a), np.int8), (a, b)), shape=(nodes, nodes))
    ncomp = csgraph.connected_components(graph, directed=False)[0] if nodes else 0
    return len(i) == nodes - ncomp


def acyclic_lower_bound(adj: Any, cores: bool = True) -> int:
    """A sound lower bound on the colors of any acyclic coloring of the graph ``adj``.

    k colors split the vertices into k classes, and each pair of classes induces a forest
    of at most ``|V_a| + |V_b| - 1`` edges: a subgraph of n' vertices and m' edges needs
    ``(k - 1) n' - k (k - 1) / 2 ≥ m'``. The bound is the least such k over the whole graph
    and (``cores``) the cores left by removing vertices of least degree (smallest-last
    order, a Python loop): β + 1 on a full band of half-bandwidth β, 3 on a 2-D grid or any
    cycle (a forest has m' < n'), 2 with edges, 1 without (0 for no vertices)."""
    adj = _adjacency(adj)
    n = adj.shape[0]
    if n == 0 or adj.nnz == 0:
        return min(n, 1)
    coo = sp.triu(adj, k=1, format="coo")
    if cores:
        removal = _ordering("smallest-last", adj.indptr, adj.indices)[::-1]
        position = np.empty(n, np.int64)
        position[removal] = np.arange(n)
        first_gone = np.minimum(position[coo.row], position[coo.col])
        # Edges left once the first t vertices of the removal order are gone, t = 0 .. n-1.
        m_left = np.cumsum(np.bincount(first_gone, minlength=n)[::-1])[::-1].astype(float)
        n_left = np.arange(n, 0, -1, dtype=float)
    else:
        m_left, n_left = np.array([float(coo.nnz)]), np.array([float(n)])
    # Least t = k - 1 with t (2 n' - 1 - t) >= 2 m', from the quadratic (rounded, then fixed).
    half = (2 * n_left - 1) / 2
    t = np.ceil(half - np.sqrt(np.maximum(half * half - 2 * m_left, 0)) - 1e-9)
    t = np.where(t * (2 * n_left - 1 - t) < 2 * m_left, t + 1, t)
    bound = int(t.max()) + 1
    cyclic = coo.nnz > n - csgraph.connected_components(adj, directed=False)[0]
    return max(bound, 3 if cyclic else 2)


def _half_bandwidth(adj):
    rows = np.repeat(np.arange(adj.shape[0], dtype=np.int64), np.diff(adj.indptr))
    return int(np.abs(adj.indices - rows).max(initial=0))


def acyclic_coloring(pattern: Any, orderings: Sequence[str] = ORDERINGS) -> AcyclicColoring:
    r"""An acyclic coloring of a symmetric pattern's adjacency graph, for Hessians by substitution.

    A distance-1 coloring in which every cycle uses at least three colors (each two-colored
    subgraph is a forest). With one Hessian-vector product per color, :math:`B = H S`, the
    entries are recovered by substitution along each two-colored tree, leaves first:
    :math:`H_{vp} = B_{v,\,\mathrm{color}(p)} - \sum_{u \text{ child of } v} H_{uv}`
    (:func:`decompress_acyclic`). The fewest colors are kept over the band coloring
    ``j mod (β + 1)`` (β the half-bandwidth: any pattern inside the band, acyclically) and
    the greedy acyclic coloring of Gebremedhin, Tarafdar, Manne and Pothen under each
    ordering; each stops at the lower bound (:func:`acyclic_lower_bound`: a count of the
    edges a forest per pair of colors can hold, 3 on any cycle).

    Parameters
    ----------
    pattern : scipy.sparse matrix or array_like of bool
        The n x n pattern, or any symmetric adjacency (made symmetric; the diagonal is
        ignored).
    orderings : sequence of str, optional
        The greedy orderings, from ``"natural"``, ``"largest-first"``, ``"smallest-last"``.

    Returns
    -------
    jacobians.acyclic.AcyclicColoring
        A :class:`~jacobians.coloring.Coloring` (``colors``, ``ncolors``, ``method``,
        ``lower_bound``, ``optimal``, ``tried``) whose ``method`` starts with "acyclic".

    See Also
    --------
    star_coloring : Direct recovery, sometimes more colors.
    decompress_acyclic : The recovery by substitution.

    References
    ----------
    .. [1] A. H. Gebremedhin, A. Tarafdar, F. Manne and A. Pothen, "New acyclic and star
       coloring algorithms with application to computing Hessians", *SIAM J. Sci.
       Comput.* 29 (2007), 1042-1072 (the greedy and its disjoint sets).
    .. [3] A. H. Gebremedhin, A. Tarafdar, A. Pothen and A. Walther, "Efficient
       computation of sparse Hessians using coloring and automatic differentiation",
       *INFORMS J. Computing* 21 (2009), 209-223 (the recovery from the trees).
    .. [2] T. F. Coleman and J.-Y. Cai, "The cyclic coloring problem and estimation of
       sparse Hessian matrices", *SIAM J. Alg. Disc. Meth.* 7 (1986), 221-235.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> from dualad.jacobians.acyclic import acyclic_coloring
    >>> tridiagonal = sp.diags([1.0, 1.0, 1.0], [-1, 0, 1], shape=(5, 5))
    >>> a = acyclic_coloring(tridiagonal)
    >>> print(a.colors, a.ncolors, a.lower_bound, a.method)
    [0 1 0 1 0] 2 2 acyclic band
    """
    adj = _adjacency(pattern)
    return _cached("acyclic", adj, (tuple(orderings),),
                   lambda: _acyclic_coloring(adj, orderings))


def _acyclic_coloring(adj, orderings):
    n = adj.shape[0]
    if n == 0:
        return AcyclicColoring(np.zeros(0), "acyclic empty", 0)
    lower = acyclic_lower_bound(adj, cores=False)
    width = _half_bandwidth(adj) + 1
    best, tried = None, {}
    if width < n:
        band = np.arange(n, dtype=np.int64) % width
        if is_acyclic_coloring(adj, band):       # always: stay correct regardless
            best = AcyclicColoring(band, "acyclic band", lower)
            tried["band"] = width
    if best is None or best.ncolors > lower:     # the cores' bound may stop the greedy
        lower = acyclic_lower_bound(adj)
        if best is not None:
            best.lower_bound = lower
    eid = _edge_ids(adj) if orderings else None
    for name in orderings:
        if best is not None and best.ncolors <= lower:
            break
        colors = _acyclic_greedy(adj.indptr, adj.indices, eid,
                                 _ordering(name, adj.indptr, adj.indices))
        if not is_acyclic_coloring(adj, colors):   # never expected; stay correct regardless
            continue
        tried[name] = int(colors.max(initial=0)) + 1
        if best is None or tried[name] < best.ncolors:
            best = AcyclicColoring(colors, f"acyclic {name}", lower)
    if best is None:     # no ordering asked for and no band: one color per vertex
        best = AcyclicColoring(np.arange(n), "acyclic trivial", lower)
    best.tried = tried
    return best


# --- recovery by substitution ---------------------------------------------------------------
class Trees:
    """The two-colored trees of an acyclic coloring, rooted, as one triangular system.

    ``child[e]``, ``parent[e]``: the vertices of tree edge ``e`` (each edge of the graph
    once), listed children first; ``matrix``: the unit lower-triangular ``M`` (CSC) with
    ``M[e, c] = 1`` for each child edge ``c`` of ``e``, so that the edge values ``h``
    solve ``M h = b`` with ``b[e] = B[child[e], color(parent[e])]``; ``depth``: the
    longest chain of substitutions (edges from a leaf to its tree's root);
    ``ntrees``: the number of trees."""

    def __init__(self, child, parent, matrix, depth, ntrees):
        self.child, self.parent, self.matrix = child, parent, matrix
        self.depth, self.ntrees = depth, ntrees
        self._minus = None

    def solve(self, b: Any) -> np.ndarray[Any, Any]:
        """The edge values ``h`` from ``b`` (one per edge, in this order): the leaves-first
        substitution ``h[e] = b[e] - Σ_{c child of e} h[c]``, as a sparse triangular solve."""
        b = np.asarray(b)
        if len(b) == 0 or self.matrix.nnz == len(b):    # no edge has a child: h = b
            return b.copy()
        return spsolve_triangular(self.matrix, b, lower=True, unit_diagonal=True,
                                  overwrite_A=True, overwrite_b=False)

    def subtree_sizes(self) -> np.ndarray[Any, Any]:
        """For each edge, the edges its value depends on (itself and all below it)."""
        return self.accumulated(np.ones(len(self.child)))

    def accumulated(self, b: Any) -> np.ndarray[Any, Any]:
        """``S[e] = Σ_{d in the subtree of e} |b[d]|``: the magnitudes the substitution
        subtracts to recover ``h[e]`` (``|h[e]| ≤ S[e]``); its rounding error is a small
        multiple of ``ε S[e]``, where a direct read's is of ``ε |b[e]|``."""
        if self._minus is None:          # I - C: the same structure, built once
            self._minus = self.matrix.copy()
            self._minus.data[:] = -1.0
            self._minus.setdiag(1.0)
        b = np.abs(np.asarray(b)).astype(float)
        if len(b) == 0 or self.matrix.nnz == len(b):
            return b
        return spsolve_triangular(self._minus, b, lower=True, unit_diagonal=True,
                                  overwrite_A=True, overwrite_b=True)


def _bfs(nodes, a, b, roots):
    """BFS over the forest on ``nodes`` (edges a-b) from a super root (node ``nodes``)
    joined to ``roots``: (order, predecessors, distances from the super root)."""
    a = np.concatenate([a, np.full(len(roots), nodes)])
    b = np.concatenate([b, roots])
    graph = sp.csr_matrix((np.ones(len(a), np.int8), (a, b)), shape=(nodes + 1, nodes + 1))
    order, pred = csgraph.breadth_first_order(graph, nodes, directed=False,
                                              return_predecessors=True)
    dist = csgraph.shortest_path(graph, directed=False, unweighted=True, indices=nodes)
    return order, pred, dist.astype(np.int64)


def _farthest(labels, dist):
    """The node of each tree (by label) farthest from the super root."""
    by = np.lexsort((-dist, labels))
    return by[np.unique(labels[by], return_index=True)[1]]


def _centers(nodes, a, b, labels):
    """A center of each tree (the middle of a longest path: from any node, the farthest u;
    from u, the farthest w; half-way back from w), so that no substitution chain is longer
    than the tree's radius."""
    lowest = np.unique(labels, return_index=True)[1]
    u = _farthest(labels, _bfs(nodes, a, b, lowest)[2][:nodes])
    _, pred, dist = _bfs(nodes, a, b, u)
    w = _farthest(labels, dist[:nodes])
    steps = (dist[w] - 1) // 2               # half the diameter, in edges
    jump = np.where(pred < 0, nodes, pred)   # the ancestor 1, 2, 4, ... steps up
    node = w.copy()
    while steps.any():
        odd = (steps & 1) == 1
        node[odd] = jump[node[odd]]
        steps >>= 1
        jump = jump[jump]
    return node


def _rooted(nodes, a, b):
    """BFS over the forest on ``nodes`` (edges a-b) from a super root joined to each tree's
    center: (order, predecessors, distances, trees)."""
    graph = sp.csr_matrix((np.ones(len(a), np.int8), (a, b)), shape=(nodes, nodes))
    ntrees, labels = csgraph.connected_components(graph, directed=False)
    if len(a) != nodes - ntrees:
        raise ValueError("decompress_acyclic: the coloring is not acyclic on this pattern "
                         "(a two-colored subgraph has a cycle)")
    order, pred, dist = _bfs(nodes, a, b, _centers(nodes, a, b, labels))
    return order, pred, dist, ntrees


def tree_structure(adj: Any, colors: Any) -> Trees:
    """The :class:`Trees` of the acyclic coloring ``colors`` of the symmetric graph ``adj``
    (diagonal ignored); ValueError when a two-colored subgraph has a cycle."""
    adj = _adjacency(adj)
    colors = np.asarray(colors, np.int64)
    _, _, a, b, vertex = _pair_nodes(adj, colors)
    nodes = len(vertex)
    if nodes == 0:
        empty = np.zeros(0, np.int64)
        return Trees(empty, empty, sp.csc_matrix((0, 0)), 0, 0)
    order, pred, dist, ntrees = _rooted(nodes, a, b)
    # Tree edges: each node below a tree's root, to its predecessor; children first.
    order = order[1:][::-1]
    order = order[pred[order] != nodes]
    index = np.full(nodes, -1, np.int64)
    index[order] = np.arange(len(order))
    up = pred[order]
    inner = index[up] >= 0             # the parent edge of e exists: M[parent edge, e] = 1
    rows = np.concatenate([np.arange(len(order)), index[up[inner]]])
    cols = np.concatenate([np.arange(len(order)), np.flatnonzero(inner)])
    matrix = sp.csc_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(order),) * 2)
    matrix.sort_indices()
    matrix.indices = matrix.indices.astype(np.int32)
    matrix.indptr = matrix.indptr.astype(np.int32)
    return Trees(vertex[order], vertex[up], matrix, int(dist.max()) - 1, ntrees)


class _Recovery:
    """What :func:`decompress_acyclic` needs for one (pattern, coloring): the trees, where
    ``b`` is read in (H S)ᵀ, and where each value goes in the CSR result."""

    def __init__(self, pattern, coloring):
        n = pattern.shape[0]
        colors = np.asarray(coloring.colors, np.int64)
        sym = ((pattern + pattern.T) != 0).tocsr()
        sym.sort_indices()
        self.trees = tree_structure(sym, colors)
        self.pattern = pattern
        self.indptr, self.indices = sym.indptr, sym.indices
        rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(sym.indptr))
        keys = rows * n + sym.indices             # sorted: the CSR order
        child, parent = self.trees.child, self.trees.parent
        self.read = colors[parent] * n + child    # b[e] = (H S)ᵀ[color(parent), child]
        self.lower = np.searchsorted(keys, child * n + parent)
        self.upper = np.searchsorted(keys, parent * n + child)
        diag = rows[rows == sym.indices]
        self.diagonal = np.searchsorted(keys, diag * n + diag)
        self.read_diagonal = colors[diag] * n + diag
        self.shape = (n, n)
        self.lost_digits = False

    def __call__(self, compressed, limit=None):
        flat = np.ascontiguousarray(compressed).reshape(-1)
        b = flat.take(self.read)
        h = self.trees.solve(b)
        if limit is not None and len(h):
            # |h| small against the magnitudes subtracted to reach it: digits lost.
            scale = np.maximum(np.abs(h), np.abs(b))
            if np.any(self.trees.accumulated(b) > limit * scale):
                self.lost_digits = True
                return None
        data = np.empty(len(self.indices), compressed.dtype)
        data[self.lower] = h
        data[self.upper] = h
        data[self.diagonal] = flat.take(self.read_diagonal)
        out = sp.csr_matrix((data, self.indices, self.indptr), shape=self.shape)
        out.has_sorted_indices = True
        return out


def decompress_acyclic(pattern: Any, coloring: Any, compressed: Any,
                       limit: float | None = None) -> sp.csr_matrix | None:
    """Symmetric ``H`` (CSR, exactly the entries of the symmetrized ``pattern``) from
    ``compressed`` = (H S)ᵀ (c x n) under the acyclic ``coloring``, by substitution along
    its two-colored trees (module docstring). The trees and the positions are computed
    once per (pattern, coloring) and kept on the coloring: a repeat decompression is two
    gathers, one sparse triangular solve and three scatters.

    With ``limit``: None instead when some recovered value ``h[e]`` is below
    ``1/limit`` of the magnitudes its substitution subtracted (``Trees.accumulated``
    against ``max(|h[e]|, |b[e]|)``), that is when up to ``log10(limit)`` digits of it may
    be lost to rounding (one more triangular solve)."""
    return recovery_for(pattern, coloring)(np.asarray(compressed), limit)


def recovery_for(pattern: Any, coloring: Any) -> Any:
    """The trees and positions of ``coloring`` on ``pattern`` (built once, kept on the
    coloring); its ``lost_digits`` is True once a decompression with ``limit`` refused."""
    recovery = getattr(coloring, "recovery", None)
    if recovery is None or recovery.pattern is not pattern:
        recovery = _recovery_of(pattern, coloring)
        coloring.recovery = recovery
    return recovery


def _recovery_of(pattern, coloring):
    """The coloring's recovery for an equal pattern (and equal colors) met before, else a
    new one."""
    csr = sp.csr_matrix(pattern)
    digest = hashlib.blake2b(csr.indptr.tobytes(), digest_size=16)
    digest.update(csr.indices.tobytes())
    digest.update(repr(csr.shape).encode())
    digest.update(np.asarray(coloring.colors, np.int64).tobytes())
    key = digest.digest()
    kept = getattr(coloring, "recoveries", {})
    if key not in kept:
        while len(kept) >= 4:
            del kept[next(iter(kept))]
        kept[key] = _Recovery(pattern, coloring)
    return kept[key]


def hessian_coloring(pattern: Any, coloring: str = "auto",
                     api: str = "sparse_hessian") -> tuple[Coloring, str]:
    """The coloring of a Hessian's ``pattern`` for ``coloring`` = "star", "acyclic" or
    "auto" (acyclic when it needs fewer colors than star; a tie keeps star: direct
    recovery, no rounding carried along a tree), and a sentence naming the kind and both
    counts. ValueError naming ``api`` for another value. Under "auto" an acyclic coloring
    carries the star one as its ``fallback``, taken by an evaluation whose substitution
    would lose more than ``LOSS_DIGITS`` digits, and by every later evaluation on that
    pattern (:func:`jacobians.sparse.compressed_hessian`)."""
    if coloring not in COLORINGS:
        raise ValueError(f"{api}: coloring={coloring!r} is not one of {COLORINGS}")
    if coloring == "acyclic":
        acyclic = acyclic_coloring(pattern)
        return acyclic, f"acyclic coloring, {acyclic.ncolors} colors (substitution)"
    star = star_coloring(pattern)
    if coloring == "star":
        return star, f"star coloring, {star.ncolors} colors (direct recovery)"
    if star.ncolors <= 2:     # an acyclic coloring of a graph with edges needs 2 as well
        return star, (f"star coloring, {star.ncolors} colors (an acyclic one needs as many: "
                      f"direct recovery kept)")
    acyclic = acyclic_coloring(pattern)
    if acyclic.ncolors < star.ncolors:
        acyclic.fallback = star
        return acyclic, (f"acyclic coloring, {acyclic.ncolors} colors against "
                         f"{star.ncolors} star colors (substitution; the star coloring's "
                         f"products where it would lose over {LOSS_DIGITS} digits)")
    return star, (f"star coloring, {star.ncolors} colors (acyclic: {acyclic.ncolors}, "
                  f"no fewer: direct recovery kept)")
