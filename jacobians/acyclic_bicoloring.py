"""Acyclic bicoloring: forward and reverse sweeps with recovery by substitution.

The acyclic variant of :mod:`jacobians.bicoloring` (Coleman and Verma 1998, their
"substitution" bicoloring; Montoison, Dalle et al. 2025 reduce it, as the star variant,
to a symmetric coloring of the bipartite graph H = [[0, Pᵀ], [P, 0]], columns 0..n-1
and rows n..n+m-1). An *acyclic* coloring of H (every two-colored subgraph a forest:
:func:`jacobians.acyclic.acyclic_coloring`) reads no entry directly, but every entry by
substitution along the tree that holds it. With S the indicator seed of H's colors,

    (H S)[n + i, c] = Σ_{columns j of color c} J[i, j]  = (J S_f)[i, f(c)]   a forward read
    (H S)[j, c]     = Σ_{rows i of color c}    J[i, j]  = (S_rᵀ J)[r(c), j]  a reverse read

and, in a tree rooted at its center, the edge e = (child v, parent p) is

    h[e] = (H S)[v, color(p)] − Σ_{edges d below e} h[d]        (leaves first)

(:class:`jacobians.acyclic.Trees`: one sparse triangular solve). A color is a forward
direction when some tree edge's parent of that color is a column, a reverse direction
when some parent of that color is a row: k1 + k2 directions in all, every column (row)
of a forward (reverse) color seeded, the others neutral. The tree edges are H's edges,
each once, so every structural nonzero of J is recovered.

Substitution subtracts: an entry small against those below it in its tree loses digits
to rounding (docs/acyclic.md measures it for Hessians). A bicoloring's trees are those of
a bipartite graph; the planner takes the acyclic bicoloring only where it needs fewer
directions than the star one (ties: star, direct reads).
"""
from __future__ import annotations

__all__ = ["ACYCLIC_WORK", "AcyclicBicoloring", "acyclic_bicoloring", "bicoloring",
           "bicoloring_work"]

import numpy as np
import scipy.sparse as sp

from .acyclic import acyclic_coloring, tree_structure
from .bicoloring import Bicoloring, _entries, bipartite_graph, star_bicoloring

# The acyclic greedy visits, per vertex, its neighbors' neighbors: about Σ r_i² + Σ c_j²
# (r, c the row and column counts) steps of Python, ~1-2 us each. "auto" tries it only
# below this many (a fraction of a second); a pattern with dense rows and columns, where
# the star bicoloring is the one that pays, stays with the star one.
ACYCLIC_WORK = 250_000


class AcyclicBicoloring(Bicoloring):
    """A :class:`jacobians.bicoloring.Bicoloring` whose entries are recovered by
    substitution (module docstring): the same seeds and counts, its own
    :meth:`decompress`; it has no direct read per entry (:meth:`positions` raises)."""

    def __init__(self, column_colors, row_colors, method, lower_bound, trees, symmetric,
                 forward_of, reverse_of):
        super().__init__(column_colors, row_colors, method, lower_bound)
        self.trees, self.symmetric = trees, symmetric    # H's two-colored trees, colors
        self.forward_of, self.reverse_of = forward_of, reverse_of
        self._recovery = None        # (pattern, read positions, CSR positions)

    def positions(self, pattern):
        raise ValueError("AcyclicBicoloring.positions: an acyclic bicoloring reads no entry "
                         "directly (recovery is by substitution); use decompress, or "
                         "jacobians.bicoloring.star_bicoloring for direct reads")

    def _recovery_of(self, pattern):
        last = self._recovery
        if last is not None and last[0] is pattern:
            return last[1:]
        m, n = pattern.shape
        child, parent = self.trees.child, self.trees.parent
        color = self.symmetric[parent]
        row_child = child >= n
        # b[e] in concatenate([ravel((J S_f)ᵀ), ravel(S_rᵀ J)]): (k1 x m) then (k2 x n)
        read = np.where(row_child,
                        self.forward_of[color] * m + (child - n),
                        self.ncolors_forward * m + self.reverse_of[color] * n + child)
        i = np.where(row_child, child - n, parent - n)
        j = np.where(row_child, parent, child)
        rows, cols = _entries(pattern)
        keys = rows * n + cols
        where = np.searchsorted(keys, i * n + j)
        if len(where) != len(keys) or not np.array_equal(np.sort(where),
                                                          np.arange(len(keys))):
            raise ValueError("AcyclicBicoloring.decompress: the pattern is not the one "
                             "this bicoloring was made for")
        self._recovery = (pattern, read, where)
        return read, where

    def decompress(self, pattern, compressed_forward, compressed_reverse):
        """J (CSR with exactly ``pattern``'s entries) from ``compressed_forward`` = J S_f
        (m x k1) and ``compressed_reverse`` = S_rᵀ J (k2 x n), by substitution."""
        if not (sp.issparse(pattern) and pattern.format == "csr"):
            pattern = sp.csr_matrix(pattern, dtype=bool)
        if not pattern.has_sorted_indices:
            pattern = pattern.sorted_indices()
        read, where = self._recovery_of(pattern)
        fwd = np.asarray(compressed_forward).T.reshape(-1)
        rev = np.asarray(compressed_reverse).reshape(-1)
        h = self.trees.solve(np.concatenate([fwd, rev]).take(read))
        data = np.empty(len(where), h.dtype)
        data[where] = h
        out = sp.csr_matrix((data, pattern.indices, pattern.indptr), shape=pattern.shape)
        out.has_sorted_indices = True
        return out


def acyclic_bicoloring(pattern):
    """An acyclic bicoloring of the m x n ``pattern`` (module docstring): an acyclic
    coloring of H = [[0, Pᵀ], [P, 0]], its colors split into the forward directions
    (colors of the tree edges' column parents) and the reverse ones (of their row
    parents). Returns an :class:`AcyclicBicoloring`; its ``lower_bound`` is the star
    bicoloring's sound bound for direct reads, not one for substitution, so it is reported
    as 1 where the pattern has an entry (0 else).

    Examples
    --------
    >>> import numpy as np
    >>> from dualad.jacobians.acyclic_bicoloring import acyclic_bicoloring
    >>> arrow = np.eye(6, dtype=bool); arrow[0, :] = arrow[:, 0] = True
    >>> b = acyclic_bicoloring(arrow)
    >>> b.ncolors_forward + b.ncolors_reverse == b.ncolors
    True
    """
    p = sp.csr_matrix(pattern, dtype=bool)
    p.sort_indices()
    m, n = p.shape
    graph = bipartite_graph(p)
    colors = np.asarray(acyclic_coloring(graph).colors, np.int64)
    trees = tree_structure(graph, colors)
    k = int(colors.max(initial=-1)) + 1
    parent_color = colors[trees.parent]
    column_parent = trees.parent < n
    forward_of = _numbering(parent_color[column_parent], k)
    reverse_of = _numbering(parent_color[~column_parent], k)
    column_colors = forward_of[colors[:n]] if n else np.zeros(0, np.int64)
    row_colors = reverse_of[colors[n:]] if m else np.zeros(0, np.int64)
    return AcyclicBicoloring(column_colors, row_colors, "acyclic", int(p.nnz > 0), trees,
                             colors, forward_of, reverse_of)


def _numbering(used, k):
    """For each of the ``k`` symmetric colors, its direction number among the colors in
    ``used`` (0, 1, ... in color order), -1 for a color not used."""
    out = np.full(k, -1, np.int64)
    distinct = np.unique(used)
    out[distinct] = np.arange(len(distinct))
    return out


KINDS = ("auto", "star", "acyclic")


def bicoloring(pattern, kind="auto", budget=None):
    """The bicoloring of ``pattern`` of ``kind``: ``"star"`` (direct reads,
    :func:`jacobians.bicoloring.star_bicoloring`), ``"acyclic"`` (by substitution), or
    ``"auto"``: the acyclic one where it needs fewer directions (ties: star) and is cheap
    to find (:data:`ACYCLIC_WORK`; not where the star one is optimal). With ``budget``,
    the star coloring's work budget (None when it ran out, as there). The result's
    ``tried`` holds both counts where both were made."""
    if kind not in KINDS:
        raise ValueError(f"bicoloring: kind={kind!r} is not one of {KINDS}")
    if kind == "acyclic":
        return acyclic_bicoloring(pattern)
    star = star_bicoloring(pattern, budget=budget) if budget is not None else \
        star_bicoloring(pattern)
    if kind == "star" or star is None or star.optimal or \
            bicoloring_work(pattern) > ACYCLIC_WORK:
        return star
    acyclic = acyclic_bicoloring(pattern)
    counts = {"star": star.ncolors, "acyclic": acyclic.ncolors}
    best = acyclic if acyclic.ncolors < star.ncolors else star
    best.tried = {**star.tried, **counts} if best is star else counts
    return best


def bicoloring_work(pattern):
    """Σ r_i² + Σ c_j²: the acyclic greedy's steps on the pattern's bipartite graph."""
    p = sp.csr_matrix(pattern, dtype=bool)
    rows = np.diff(p.indptr).astype(np.int64)
    cols = np.bincount(p.indices, minlength=p.shape[1]).astype(np.int64)
    return int(rows @ rows + cols @ cols)
