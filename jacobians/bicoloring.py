"""Bidirectional (star bi-) coloring: forward and reverse sweeps together for one Jacobian.

A one-sided coloring needs at least as many colors as the densest row (columns) or
column (rows): a bordered, "arrowhead" pattern (a dense first row and column and a
diagonal) needs ``n`` either way. A *bicoloring* seeds some columns in forward sweeps
and some rows in reverse sweeps (Coleman and Verma 1998; Gebremedhin, Manne and
Pothen 2005, §5)::

    J S_f  (m x k1)     S_f[j, c] = 1 when column j has forward color c    (k1 JVPs)
    S_rᵀ J (k2 x n)     S_r[i, c] = 1 when row i has reverse color c       (k2 VJPs)

and reads every structural nonzero J[i, j] directly from one of them::

    J[i, j] = (J S_f)[i, fc(j)]     if j is the only seeded column of row i with color fc(j)
    J[i, j] = (S_rᵀ J)[rc(i), j]    if i is the only seeded row of column j with color rc(i)

(a column or row left unseeded, "neutral", has color -1 and enters no product).

How the colors are found (Montoison, Dalle et al. 2025, "Revisiting sparse matrix
coloring and bicoloring", after Coleman-Verma): a *symmetric* star coloring of the
bipartite graph H = [[0, Pᵀ], [P, 0]] (vertices 0..n-1 the columns, n..n+m-1 the
rows) — a distance-1 coloring in which every path on four vertices uses three
colors — makes every edge (i, j) of H readable at one end, exactly as a Hessian's
star coloring does: at row i (j the only neighbor of i with its color: a forward
read) or at column j (a reverse read). Then:

1. each edge readable only one way fixes that way, and the color it reads from;
2. the other edges take, greedily, the side and color that serve the most of them
   (a color already needed serves for free);
3. every column (row) that no forward (reverse) read needs is made neutral, and the
   colors used are numbered apart, forward 0..k1-1 and reverse 0..k2-1.

Making a vertex neutral removes it from the sums above, so every read chosen in 1-2
stays exact. :func:`is_star_bicoloring` re-checks the result directly.

The star coloring of H is a greedy pass (Gebremedhin, Tarafdar, Manne, Pothen 2007,
Algorithm 4.1: two-colored stars kept with their hubs) under a few vertex orderings,
with the colors around each vertex kept as it is colored, so a pass costs
O(nnz(H) · colors), not the square of the largest degree: the dense row and column
of an arrowhead are cheap. A pass whose colors run far past the best found is
abandoned. The symmetric coloring is a parameter (``symmetric=``): any function from
H's pattern to a :class:`jacobians.coloring.Coloring` whose every edge is readable at
one end (a star coloring) plugs in; an *acyclic* coloring needs substitution instead
of steps 1-3 and its own decompression (see :func:`from_symmetric`).

Lower bound (sound, and met on the arrowhead): 0 without entries, 1 when every row or
every column has at most one entry (one direction, one color), else 2 (one color one way
cannot read a row with two entries, nor a column with two), raised to 3 where no two
directions can do (:func:`_two_fail`: two colors one way need every row, or every
column, to have at most two entries; one of each way forces every row and column with
two or more entries to be seeded, and then an entry whose row has another seeded column
and whose column another seeded row is readable neither way).
"""
from __future__ import annotations

__all__ = ["ORDERINGS", "Bicoloring", "star_bicoloring", "is_star_bicoloring",
           "bipartite_graph", "from_symmetric", "recoverable"]

import hashlib
import math
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from ._common import counted

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

# The greedy orderings of H's vertices: ascending degree first (dense rows and columns
# colored last, where they cost least and take colors of their own), then the natural
# order (columns, then rows) and descending degree.
ORDERINGS = ("smallest-first", "natural", "largest-first")
# A pass is abandoned once it uses more than ABANDON x the best pass' colors + 2.
ABANDON = 2


class Bicoloring:
    """Forward colors of the columns and reverse colors of the rows (-1: neutral, unseeded).

    ``ncolors_forward`` (k1) JVP directions plus ``ncolors_reverse`` (k2) VJP directions,
    ``ncolors`` = k1 + k2 in all; ``lower_bound`` (see the module docstring), ``method``
    (the ordering or symmetric coloring that won) and ``tried`` (each ordering's k1 + k2,
    or ``None`` where abandoned)."""

    def __init__(self, column_colors: Any, row_colors: Any, method: str, lower_bound: int,
                 tried: Any = None) -> None:
        self.column_colors = np.asarray(column_colors, np.int64)
        self.row_colors = np.asarray(row_colors, np.int64)
        self.ncolors_forward = int(self.column_colors.max(initial=-1)) + 1
        self.ncolors_reverse = int(self.row_colors.max(initial=-1)) + 1
        self.method = method
        self.lower_bound = int(lower_bound)
        self.tried = dict(tried or {})
        self._positions = None      # (pattern, positions): the last decompression's reads
        self._seeds = {}            # (side, dtype) -> seed: a prepared plan reuses them

    @property
    def ncolors(self) -> int:
        """k1 + k2: the directions of one Jacobian (forward and reverse together)."""
        return self.ncolors_forward + self.ncolors_reverse

    @property
    def optimal(self) -> bool:
        return self.ncolors <= self.lower_bound

    def forward_seed(self, dtype: Any = float) -> np.ndarray[Any, Any]:
        """S_f (n x k1): ``S_f[j, fc(j)] = 1`` for every seeded column j (read-only, kept
        for the next call; ``.T`` is C-ordered, one direction a row)."""
        return self._seed("forward", self.column_colors, self.ncolors_forward, dtype)

    def reverse_seed(self, dtype: Any = float) -> np.ndarray[Any, Any]:
        """S_r (m x k2): ``S_r[i, rc(i)] = 1`` for every seeded row i (read-only, as
        :meth:`forward_seed`)."""
        return self._seed("reverse", self.row_colors, self.ncolors_reverse, dtype)

    def _seed(self, side, colors, k, dtype):
        key = (side, np.dtype(dtype))
        seed = self._seeds.get(key)
        if seed is None:
            seed = self._seeds[key] = _seed(colors, k, dtype)
            seed.flags.writeable = False     # shared between calls: never written
        return seed.T

    def positions(self, pattern: Any) -> np.ndarray[Any, Any]:
        """For each stored entry of the CSR ``pattern`` (m x n), in order, its flat position
        in ``concatenate([ravel((J S_f)ᵀ), ravel(S_rᵀ J)])`` ((k1 x m) then (k2 x n)): the
        forward read where it is exact, else the reverse one. Raises ValueError when an
        entry has neither (not a bicoloring of this pattern)."""
        last = self._positions
        if last is not None and last[0] is pattern:
            return last[1]
        m, n = pattern.shape
        fwd, rev = recoverable(pattern, self.column_colors, self.row_colors)
        if not np.all(fwd | rev):
            raise ValueError("Bicoloring.positions: the pattern has entries neither sweep "
                             "reads exactly: not a star bicoloring of this pattern")
        i, j = _entries(pattern)
        pos = np.where(fwd, self.column_colors.take(j) * m + i,
                       self.ncolors_forward * m + self.row_colors.take(i) * n + j)
        self._positions = (pattern, pos)
        return pos

    def decompress(self, pattern: Any, compressed_forward: Any,
                   compressed_reverse: Any) -> sp.csr_matrix:
        """J (CSR with exactly ``pattern``'s entries) from ``compressed_forward`` = J S_f
        (m x k1) and ``compressed_reverse`` = S_rᵀ J (k2 x n)."""
        if not (sp.issparse(pattern) and pattern.format == "csr"):
            pattern = sp.csr_matrix(pattern, dtype=bool)
        fwd = np.asarray(compressed_forward).T.reshape(-1)
        rev = np.asarray(compressed_reverse).reshape(-1)
        data = np.concatenate([fwd, rev]).take(self.positions(pattern))
        out = sp.csr_matrix((data, pattern.indices, pattern.indptr), shape=pattern.shape)
        out.has_sorted_indices = pattern.has_sorted_indices
        return out

    def symmetric_colors(self) -> np.ndarray[Any, Any]:
        """The bicoloring as one coloring of H's vertices (columns, then rows): column j
        ``fc(j)``, row i ``k1 + rc(i)``, -1 where unseeded. Its symmetric compressed product
        is :meth:`symmetric_product`: a symmetric decompression of H (direct for a star
        coloring, by substitution for an acyclic one) recovers J as ``H[n:, :n]``."""
        rows = np.where(self.row_colors >= 0, self.row_colors + self.ncolors_forward, -1)
        return np.concatenate([self.column_colors, rows])

    def symmetric_product(self, compressed_forward: Any,
                          compressed_reverse: Any) -> np.ndarray[Any, Any]:
        """H S ((n + m) x (k1 + k2)) for S the indicator seed of :meth:`symmetric_colors`,
        from the two sweeps: ``[[0, (S_rᵀ J)ᵀ], [J S_f, 0]]``."""
        fwd, rev = np.asarray(compressed_forward), np.asarray(compressed_reverse)
        m, n = fwd.shape[0], rev.shape[1]
        k1, k2 = self.ncolors_forward, self.ncolors_reverse
        out = np.zeros((n + m, k1 + k2), np.result_type(fwd, rev))
        out[:n, k1:] = rev.T
        out[n:, :k1] = fwd
        return out

    def __repr__(self) -> str:
        return (f"Bicoloring({counted(self.ncolors_forward, 'forward color')} + "
                f"{counted(self.ncolors_reverse, 'reverse color')} by {self.method}, "
                f"lower bound {self.lower_bound})")


def _seed(colors, k, dtype):
    """The seed transposed, (k x vertices), C-ordered: row c the indicator of color c (a
    sweep takes one row per direction)."""
    s = np.zeros((k, len(colors)), dtype)
    on = np.flatnonzero(colors >= 0)
    s[colors[on], on] = 1
    return s


def _entries(pattern):
    """(rows, columns) of the stored entries, CSR order, int64."""
    rows = np.repeat(np.arange(pattern.shape[0], dtype=np.int64), np.diff(pattern.indptr))
    return rows, pattern.indices.astype(np.int64)


def _multiplicity(keys, size):
    """How often each entry's key occurs among ``keys`` (keys in ``0 .. size-1``)."""
    if size <= 8 * len(keys) + 1024:
        return np.bincount(keys, minlength=size).take(keys)
    _, inverse, counts = np.unique(keys, return_inverse=True, return_counts=True)
    return counts.take(inverse)


def recoverable(pattern: Any, column_colors: Any, row_colors: Any) -> tuple[Any, Any]:
    """``(forward, reverse)``: boolean arrays over the stored entries (CSR order) of
    ``pattern``: J[i, j] is (J S_f)[i, fc(j)] (j seeded and the only seeded column of row
    i with its color) / (S_rᵀ J)[rc(i), j] (likewise for row i in column j)."""
    i, j = _entries(pattern)
    m, n = pattern.shape
    cc, rc = np.asarray(column_colors, np.int64), np.asarray(row_colors, np.int64)
    out = []
    for at, other, colors, size in ((i, j, cc, m), (j, i, rc, n)):
        c = colors.take(other)
        seeded = c >= 0
        k = int(colors.max(initial=-1)) + 1
        keys = at[seeded] * k + c[seeded]
        ok = np.zeros(len(i), bool)
        ok[seeded] = _multiplicity(keys, size * k) == 1
        out.append(ok)
    return out[0], out[1]


def is_star_bicoloring(pattern: Any, bicoloring: Bicoloring) -> bool:
    """True when every structural nonzero of ``pattern`` is read exactly from one of the
    two compressed products (see the module docstring)."""
    pattern = sp.csr_matrix(pattern, dtype=bool)
    if len(bicoloring.column_colors) != pattern.shape[1] or \
            len(bicoloring.row_colors) != pattern.shape[0]:
        return False
    fwd, rev = recoverable(pattern, bicoloring.column_colors, bicoloring.row_colors)
    return bool(np.all(fwd | rev))


def bipartite_graph(pattern: Any) -> sp.csr_matrix:
    """H = [[0, Pᵀ], [P, 0]] ((n + m) square, CSR, sorted, int8): vertex j < n the column
    j, vertex n + i the row i; an edge per structural nonzero."""
    p = sp.csr_matrix(pattern, dtype=bool).astype(np.int8)
    m, n = p.shape
    h = sp.bmat([[sp.csr_matrix((n, n), dtype=np.int8), p.T],
                 [p, sp.csr_matrix((m, m), dtype=np.int8)]], format="csr")
    h.eliminate_zeros()
    h.sort_indices()
    return h


# --- the symmetric star coloring of H ------------------------------------------------------
def _order(name, graph):
    degree = np.diff(graph.indptr)
    if name == "natural":
        return np.arange(graph.shape[0])
    if name == "smallest-first":
        return np.argsort(degree, kind="stable")
    if name == "largest-first":
        return np.argsort(-degree, kind="stable")
    if name == "smallest-last":
        from .coloring import _smallest_last
        return _smallest_last(graph.indptr, graph.indices, degree)
    raise ValueError(f"star_bicoloring: unknown ordering {name!r}; use one of {ORDERINGS} "
                     f"or 'smallest-last'")


def _star_greedy(indptr, indices, order, stop, limit=None):
    """``(colors, work)``: a greedy star coloring (GTMP 2007, Algorithm 4.1), or None once
    it needs more than ``stop`` colors or ``work`` (entries visited) passes ``limit`` (or,
    past a tenth of the vertices, is on course to: the work so far, extrapolated). Colored in ``order``, v may not take: a neighbor's color; the color of
    any neighbor of q or w when two neighbors q, w of v share a color (v would be the hub of
    a two-colored star, and x - q - v - w two-colored); the color of a hub x of a star in
    which a neighbor w is a spoke (x - w - v - (x's other spoke) two-colored). ``around[w]``
    (the colors next to w, each with one vertex wearing it) and ``hub_colors[w]`` (the
    colors of the hubs of the stars w is a spoke of) are kept as vertices are colored, so
    each step costs the colors around a neighbor, not its degree."""
    n = len(indptr) - 1
    ip, ind = indptr.tolist(), indices.tolist()
    color = [-1] * n
    forbidden = [-1] * (n + 1)
    seen_at, seen_via = [-1] * (n + 1), [-1] * (n + 1)  # per color: v, and the first w
    around = [None] * n
    hub_colors = [None] * n
    top = work = 0
    limit = math.inf if limit is None else limit
    for done, v in enumerate(order.tolist()):
        lo, hi = ip[v], ip[v + 1]
        work += 2 * (hi - lo) + top
        if work > limit or (not done & 1023 and 10 * done > n and work * n > limit * done):
            return None, work
        for w in ind[lo:hi]:
            cw = color[w]
            if cw < 0:
                continue
            forbidden[cw] = v
            if seen_at[cw] == v:       # a second neighbor of color cw: v becomes a hub
                for u in (seen_via[cw], w):
                    near = around[u] or ()
                    work += len(near)
                    for c in near:
                        forbidden[c] = v
            else:
                seen_at[cw], seen_via[cw] = v, w
                for c in hub_colors[w] or ():
                    forbidden[c] = v
        c = 0
        while forbidden[c] == v:
            c += 1
        color[v] = c
        if c >= top:
            top = c + 1
            if top > stop:
                return None, work
        _grow_stars(v, c, ind[lo:hi], color, around, hub_colors, seen_at, seen_via)
    return np.array(color, np.int64), work


def _grow_stars(v, c, neighbors, color, around, hub_colors, seen_at, seen_via):
    """Record v (just colored ``c``) in the two-colored stars through its colored neighbors
    w: w is a hub when it has another neighbor of color c; v is one when it has another
    neighbor of w's color (``seen_via``); else v - w is a star of one edge."""
    mine = around[v]
    if mine is None:
        mine = around[v] = {}
    for w in neighbors:
        cw = color[w]
        if cw < 0 or w == v:
            continue
        theirs = around[w]
        if theirs is None:
            theirs = around[w] = {}
        x = theirs.get(c)
        if x is not None:                               # hub w, spokes v and x
            for s in (v, x):
                if hub_colors[s] is None:
                    hub_colors[s] = {cw}
                else:
                    hub_colors[s].add(cw)
        else:
            theirs[c] = v
            if seen_at[cw] == v and seen_via[cw] != w:  # hub v, spokes w and the first one
                for s in (w, seen_via[cw]):
                    if hub_colors[s] is None:
                        hub_colors[s] = {c}
                    else:
                        hub_colors[s].add(c)
        if cw not in mine:
            mine[cw] = w


# --- from a symmetric coloring of H to a bicoloring -----------------------------------------
def from_symmetric(pattern: Any, colors: Any, method: str, lower_bound: int = 0,
                   tried: Any = None) -> Bicoloring | None:
    """The bicoloring of the m x n CSR ``pattern`` read off ``colors``, a coloring of the
    vertices of H (:func:`bipartite_graph`: columns first, then rows) in which every edge is
    readable at one end (a star coloring): steps 1-3 of the module docstring. None when
    some entry is readable at neither end (``colors`` is not a star coloring of H).

    This is the direct-recovery reading; an acyclic coloring of H (substitution) needs its
    own in place of this function."""
    m, n = pattern.shape
    colors = np.asarray(colors, np.int64)
    cc, rc = colors[:n], colors[n:]
    fwd, rev = recoverable(pattern, cc, rc)
    if not np.all(fwd | rev):
        return None
    i, j = _entries(pattern)
    k = int(colors.max(initial=-1)) + 1
    ci, cj = rc.take(i), cc.take(j)       # the colors each entry's reads would use
    forward_used, reverse_used = np.zeros(k, bool), np.zeros(k, bool)
    forward_used[cj[fwd & ~rev]] = True
    reverse_used[ci[rev & ~fwd]] = True
    _cover(np.flatnonzero(fwd & rev), cj, ci, forward_used, reverse_used, k)
    use_fwd = fwd & forward_used.take(cj)
    column_colors = np.full(n, -1, np.int64)
    row_colors = np.full(m, -1, np.int64)
    renumber_f = np.cumsum(forward_used) - 1
    renumber_r = np.cumsum(reverse_used) - 1
    cols, rows = j[use_fwd], i[~use_fwd]
    column_colors[cols] = renumber_f.take(cj[use_fwd])
    row_colors[rows] = renumber_r.take(ci[~use_fwd])
    return Bicoloring(column_colors, row_colors, method, lower_bound, tried)


def _cover(both, cj, ci, forward_used, reverse_used, k):
    """Entries ``both`` (readable either way) each get a used forward color (its column's)
    or reverse color (its row's): colors already used serve for free, then, greedily, the
    side and color that serve the most entries left (ties to forward)."""
    while len(both):
        both = both[~(forward_used.take(cj[both]) | reverse_used.take(ci[both]))]
        if not len(both):
            return
        f = np.bincount(cj[both], minlength=k)
        r = np.bincount(ci[both], minlength=k)
        if f.max() >= r.max():
            forward_used[int(f.argmax())] = True
        else:
            reverse_used[int(r.argmax())] = True


def _lower_bound(pattern):
    """0 without entries; 1 when every row or every column has at most one entry; 3 when no
    two directions can do (:func:`_two_fail`); else 2."""
    if pattern.nnz == 0:
        return 0
    in_rows = np.diff(pattern.indptr)
    in_cols = np.bincount(pattern.indices, minlength=pattern.shape[1])
    if min(in_rows.max(), in_cols.max()) <= 1:
        return 1
    return 3 if _two_fail(pattern, in_rows, in_cols) else 2


def _two_fail(pattern, in_rows, in_cols):
    """Whether no bicoloring has two directions. Two forward colors need every row to have
    at most 2 entries, two reverse ones every column; one of each: a row with two entries
    or more reads at most one forward, so it must be seeded in reverse, and likewise a
    column with two or more must be seeded forward. Seeding more rows or columns only
    breaks uniqueness, so an entry (i, j) of such a row and column that has another seeded
    column in row i and another seeded row in column j is readable neither way."""
    if in_rows.max() <= 2 or in_cols.max() <= 2:
        return False
    i, j = _entries(pattern)
    rows_seeded, cols_seeded = in_rows >= 2, in_cols >= 2
    at = rows_seeded.take(i) & cols_seeded.take(j)
    per_row = np.bincount(i[cols_seeded.take(j)], minlength=pattern.shape[0])
    per_col = np.bincount(j[rows_seeded.take(i)], minlength=pattern.shape[1])
    return bool(np.any(at & (per_row.take(i) >= 2) & (per_col.take(j) >= 2)))


# --- the public function -------------------------------------------------------------------
# Bicolorings of recent patterns (a digest of the pattern and the arguments): a plan and its
# traced replays ask for the same pattern's bicoloring.
_CACHE, _CACHE_SIZE = {}, 16


def star_bicoloring(pattern: Any, orderings: Sequence[str] = ORDERINGS,
                    symmetric: Callable[[Any], Any] | None = None,
                    budget: int | None = None) -> Bicoloring | None:
    r"""A star bicoloring of a Jacobian's pattern: forward colors for columns, reverse for rows.

    Every structural nonzero is then read directly from one of :math:`J S_f` (one JVP per
    forward color) and :math:`S_r^\top J` (one VJP per reverse color):
    :math:`J_{ij} = (J S_f)_{i,\,f(j)}` when ``j`` is the only seeded column of row ``i``
    with color :math:`f(j)`, else :math:`J_{ij} = (S_r^\top J)_{r(i),\,j}`. Found from a
    star coloring of the bipartite graph :math:`H = [[0, P^\top], [P, 0]]`, keeping only
    the colors the reads need (the module docstring). Fewer directions than either
    one-sided coloring on bordered patterns: an arrowhead needs 3 (two forward colors and
    one reverse) where a column or row coloring needs ``n``.

    Parameters
    ----------
    pattern : scipy.sparse matrix or array_like of bool
        The m x n sparsity pattern.
    orderings : sequence of str, optional
        Greedy orderings of H's vertices to try: ``"smallest-first"``, ``"natural"``
        (columns, then rows), ``"largest-first"`` (default all three; a pass is abandoned
        once it needs more than twice the best pass' colors plus two), and
        ``"smallest-last"`` (Matula-Beck; not by default: on 60 random patterns with dense
        rows and columns it saved 3% of the colors for 20% more time).
    symmetric : callable, optional
        Instead of the greedy passes, a function from H's pattern (``(n + m)`` square,
        :func:`bipartite_graph`) to a :class:`jacobians.coloring.Coloring` in which every
        edge is readable at one end, e.g. :func:`jacobians.coloring.star_coloring`.
    budget : int, optional
        Entries of H the greedy passes may visit in all (each pass about
        ``4 nnz + (n + m) colors``); a pass that would pass it is abandoned. Default:
        unlimited. The planner's ``mode="auto"`` gives twice what the one-sided colorings'
        graphs hold, :math:`2 (\sum_i r_i^2 + \sum_j c_j^2)` (r, c: the row and column
        counts).

    Returns
    -------
    Bicoloring or None
        None only with a ``budget`` that ran out before any pass completed. Else
        ``column_colors`` (n) and ``row_colors`` (m), -1 where unseeded;
        ``ncolors_forward``, ``ncolors_reverse``, ``ncolors`` (their sum), ``lower_bound``,
        ``method``, ``tried``; ``forward_seed()`` (n x k1), ``reverse_seed()`` (m x k2) and
        ``decompress(pattern, J S_f, S_rᵀ J)``.

    See Also
    --------
    column_coloring, row_coloring : One direction.
    sparse_jacobian : ``mode="bidirectional"`` uses it.

    Notes
    -----
    Star bicoloring is Coleman and Verma's [1]_; the reduction to a symmetric coloring of
    H followed by dropping unneeded colors follows Montoison, Dalle et al. [2]_; the star
    coloring pass is Gebremedhin, Tarafdar, Manne and Pothen's Algorithm 4.1 [3]_.

    References
    ----------
    .. [1] T. F. Coleman and A. Verma, "The efficient computation of sparse Jacobian
       matrices using automatic differentiation", *SIAM J. Sci. Comput.* 19 (1998).
    .. [2] A. Montoison, G. Dalle, A. Gebremedhin, "Revisiting sparse matrix coloring and
       bicoloring" (2025), arXiv:2505.07308.
    .. [3] A. H. Gebremedhin, A. Tarafdar, F. Manne, A. Pothen, "New acyclic and star
       coloring algorithms with application to computing Hessians", *SIAM J. Sci.
       Comput.* 29 (2007), 1042-1072.

    Examples
    --------
    >>> from dualad.jacobians.bicoloring import star_bicoloring
    >>> P = np.eye(6, dtype=bool)
    >>> P[0, :] = P[:, 0] = True                        # an arrowhead
    >>> b = star_bicoloring(P)
    >>> print(b.ncolors_forward, b.ncolors_reverse, b.ncolors)
    2 1 3
    >>> print(b.column_colors, b.row_colors)
    [1 0 0 0 0 0] [ 0 -1 -1 -1 -1 -1]
    """
    pattern = sp.csr_matrix(pattern, dtype=bool)
    m, n = pattern.shape
    lower = _lower_bound(pattern)
    if pattern.nnz == 0:
        return Bicoloring(np.full(n, -1), np.full(m, -1), "empty", lower)
    key = (pattern.shape, tuple(orderings), symmetric, budget, _digest(pattern))
    if key not in _CACHE:
        _CACHE[key] = _star_bicoloring(pattern, orderings, symmetric, lower, budget)
        while len(_CACHE) > _CACHE_SIZE:
            del _CACHE[next(iter(_CACHE))]
    found = _CACHE[key]
    if found is None:
        return None
    return Bicoloring(found.column_colors.copy(), found.row_colors.copy(), found.method,
                      found.lower_bound, found.tried)


def _digest(pattern):
    digest = hashlib.blake2b(pattern.indptr.tobytes(), digest_size=16)
    digest.update(pattern.indices.tobytes())
    return digest.digest()


def _star_bicoloring(pattern, orderings, symmetric, lower, budget):
    """The best bicoloring over the passes (see :func:`star_bicoloring`), or None when the
    ``budget`` ran out before any pass completed."""
    graph = bipartite_graph(pattern)
    best, tried, stop = None, {}, graph.shape[0] + 1
    left = math.inf if budget is None else budget
    names = list(orderings) if symmetric is None else \
        [getattr(symmetric, "__name__", "symmetric")]
    for name in names:
        if symmetric is not None:
            colors = symmetric(graph).colors
        else:
            colors, work = _star_greedy(graph.indptr, graph.indices, _order(name, graph),
                                        stop, left)
            left -= work
        found = None if colors is None else from_symmetric(pattern, colors, name, lower)
        tried[name] = None if found is None else found.ncolors
        if found is not None and (best is None or (found.ncolors, found.ncolors_reverse) <
                                  (best.ncolors, best.ncolors_reverse)):
            best = found      # (at equal counts, fewer reverse sweeps: no tape to record)
        if colors is not None:
            stop = min(stop, ABANDON * (int(colors.max()) + 1) + 2)
        if (best is not None and best.optimal) or left <= 0:
            break
    if best is None and budget is None:     # never expected: stay correct with the columns
        from .coloring import column_coloring
        col = column_coloring(pattern)
        best = Bicoloring(col.colors, np.full(pattern.shape[0], -1), "column coloring",
                          lower)
    if best is not None:
        best.tried = tried
    return best
