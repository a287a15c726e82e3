"""Sparse Jacobians and Hessians: detect, color, sweep compressed, decompress.

::

    J S  = one batched forward sweep of the c columns of the seed S (n x c)
    Sᵀ J = one batched pullback of the c rows of the seed (m x c)
    H S  = one batched forward-over-reverse sweep of c Hessian-vector products

where S holds one indicator column per color (see :mod:`jacobians.coloring`)
and each structural nonzero is read back from the compressed product::

    forward:  J[i, j] = (J S)[i, color(j)]
    reverse:  J[i, j] = (Sᵀ J)[color(i), j]
    both:     J[i, j] = (J S_f)[i, fc(j)]  or  (S_rᵀ J)[rc(i), j]   (a star bicoloring,
              :mod:`jacobians.bicoloring`: k1 forward and k2 reverse directions)
    Hessian:  H[i, j] = (H S)[i, color(j)]  if j is i's only neighbor of its color
                        (H S)[j, color(i)]  otherwise (star coloring: one of the two)
              or, under an acyclic coloring (fewer colors), by substitution along the
              two-colored trees, leaves first (:mod:`jacobians.acyclic`)

The results are ``scipy.sparse`` CSR matrices of the *flat* Jacobian (m x n,
rows the output elements in C order, columns the differentiated inputs) with
exactly the pattern's entries; the Hessian is exactly symmetric.
"""
from __future__ import annotations

__all__ = ["decompress_forward", "decompress_reverse", "compressed_forward",
           "compressed_reverse", "compressed_bidirectional", "compressed_hessian",
           "colorings_for", "choose", "BICOLOR_MIN", "bicoloring_threshold",
           "jacobian_colorings",
           "bidirectional_cost", "choose_jacobian",
           "sparse_jacobian", "decompress_star", "sparse_hessian"]

from typing import TYPE_CHECKING, Any, overload

import numpy as np
import scipy.sparse as sp

from . import cost
from ._common import DEFAULT_MAX_MEMORY, Problem, composes, float_dtype, fname
from .acyclic import (COLORINGS, LOSS_DIGITS, AcyclicColoring, decompress_acyclic,
                      hessian_coloring, recovery_for)
from .acyclic_bicoloring import bicoloring
from .coloring import column_coloring, row_coloring
from .distributed import Workers, attach
from .progress import check_progress
from .sweeps import MODES, check_mode, forward_flat, reverse_flat
from .hessian_sweeps import check_real_inputs, hessian_chunk, hessian_rows, scalar_problem
from .sparsity import as_pattern, detect_hessian, detect_jacobian

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence



def _rows_of(pattern):
    return np.repeat(np.arange(pattern.shape[0], dtype=np.int64), np.diff(pattern.indptr))


def _index(a):
    """``a`` as int32 when its values fit (SciPy scans wider index arrays on every build)."""
    return a.astype(np.int32) if a.size == 0 or int(a.max()) < 2 ** 31 - 1 else \
        a.astype(np.int64)


def _csr(pattern, data, layout=None):
    """The CSR matrix of ``pattern`` with stored values ``data`` (its CSR order). Its index
    arrays are copies: an in-place edit of the result (``eliminate_zeros``) must not reach
    the pattern a plan keeps for its next call."""
    indices, indptr = layout or (_index(pattern.indices), _index(pattern.indptr))
    out = sp.csr_matrix((data, indices.copy(), indptr.copy()), shape=pattern.shape)
    out.has_sorted_indices = True
    return out


class Decompression:
    """What a compressed sweep of ``pattern`` under ``coloring`` needs at every point,
    made once: the seed (c x vertices, per dtype, read-only), the flat position of each
    stored entry (CSR order) in the compressed product, and the CSR index arrays (int32
    where they fit)::

        forward:  pos(i, j) = color(j) · m + i      in (J S)ᵀ, c x m
        reverse:  pos(i, j) = color(i) · n + j      in Sᵀ J,  c x n
    """

    __slots__ = ("pattern", "kind", "positions", "layout", "_seeds")

    def __init__(self, pattern, coloring, kind):
        self.pattern, self.kind = pattern, kind
        rows = _rows_of(pattern)
        indices = np.asarray(pattern.indices, np.int64)
        if kind == "forward":
            pos = coloring.colors.take(indices) * pattern.shape[0] + rows
        else:
            pos = coloring.colors.take(rows) * pattern.shape[1] + indices
        self.positions = pos
        self.layout = (_index(pattern.indices), _index(pattern.indptr))
        self._seeds = {}

    def seeds(self, coloring, dtype):
        s = self._seeds.get(np.dtype(dtype))
        if s is None:
            s = self._seeds[np.dtype(dtype)] = coloring.seed(dtype)
            s.flags.writeable = False
        return s

    def csr(self, compressed):
        """J from the compressed product (forward: (J S)ᵀ, c x m; reverse: Sᵀ J, c x n)."""
        flat = np.ascontiguousarray(compressed).reshape(-1)
        return _csr(self.pattern, flat.take(self.positions), self.layout)


def decompression(pattern, coloring, kind):
    """The :class:`Decompression` of ``pattern`` under ``coloring``, kept on the coloring
    (a coloring belongs to one pattern; a different pattern object makes a new one)."""
    cached = getattr(coloring, "_decompression", None)
    if cached is None or cached.pattern is not pattern or cached.kind != kind:
        cached = Decompression(pattern, coloring, kind)
        coloring._decompression = cached
    return cached


def decompress_forward(pattern, coloring, compressed_t):
    """``J`` from ``compressed_t`` = (J S)ᵀ, (c x m)."""
    return decompression(pattern, coloring, "forward").csr(compressed_t)


def decompress_reverse(pattern, coloring, compressed):
    """``J`` from ``compressed`` = Sᵀ J, (c x n)."""
    return decompression(pattern, coloring, "reverse").csr(compressed)


def compressed_forward(problem, pattern, coloring, chunk, check=None):
    d = decompression(pattern, coloring, "forward")
    seeds = d.seeds(coloring, float_dtype(problem.dtype))
    return d.csr(forward_flat(problem, chunk, seeds, check).T)


def compressed_reverse(problem, pattern, coloring, chunk, check=None):
    d = decompression(pattern, coloring, "reverse")
    seeds = d.seeds(coloring, float_dtype(problem.dtype))
    return d.csr(reverse_flat(problem, chunk, seeds, check))


def compressed_bidirectional(problem, pattern, bicoloring, chunk, check=None):
    """J from k1 forward directions J S_f and k2 reverse ones S_rᵀ J of a star
    ``bicoloring``, each entry read from the one that holds it alone. ``check()`` runs
    after the first sweep (the forward one, or the reverse one when k1 = 0)."""
    dtype = float_dtype(problem.dtype)
    k1, k2 = bicoloring.ncolors_forward, bicoloring.ncolors_reverse
    fwd = rev = None
    if k1 or not k2:           # (no colors at all: one evaluation sets the outputs)
        fwd = forward_flat(problem, chunk, bicoloring.forward_seed(dtype).T, check)
        check = None
    if k2:
        rev = reverse_flat(problem, chunk, bicoloring.reverse_seed(dtype).T, check)
    m, n = pattern.shape
    if fwd is None:
        fwd = np.zeros((m, 0), dtype)
    if rev is None:
        rev = np.zeros((0, n), dtype)
    return bicoloring.decompress(pattern, fwd, rev)


def compressed_hessian(problem, pattern, coloring, chunk, check=None):
    """H from one forward-over-reverse product per color of the star or acyclic
    ``coloring`` (read directly, or by substitution). An acyclic coloring chosen by
    ``coloring="auto"`` (it carries a star ``fallback``) takes the star coloring's
    products at a point where the substitution would lose more than ``LOSS_DIGITS``
    digits of an entry, and at every later point on that pattern."""
    guarded = isinstance(coloring, AcyclicColoring) and coloring.fallback is not None
    if guarded and recovery_for(pattern, coloring).lost_digits:
        return compressed_hessian(problem, pattern, coloring.fallback, chunk, check)
    seeds = coloring.seed(float_dtype(problem.dtype))
    compressed = hessian_rows(problem, "forward-over-reverse", seeds, chunk, check=check)
    if not isinstance(coloring, AcyclicColoring):
        return decompress_star(pattern, coloring, compressed)
    out = decompress_acyclic(pattern, coloring, compressed,
                             10.0 ** LOSS_DIGITS if guarded else None)
    if out is None:       # digits would be lost here: the star coloring's products instead
        coloring.fallbacks += 1
        return compressed_hessian(problem, pattern, coloring.fallback, chunk, check)
    return out


def colorings_for(pattern, mode):
    """The column coloring (forward), the row coloring (reverse), or both (auto) — the
    row coloring is skipped when it cannot beat the column one (its lower bound, the
    largest column count, is already no better)."""
    col = row = None
    if mode in ("auto", "forward"):
        col = column_coloring(pattern)
    if mode == "reverse" or (mode == "auto" and
                             col.ncolors > np.bincount(pattern.indices, minlength=1).max()):
        row = row_coloring(pattern)
    return col, row


# A one-sided coloring of at most BICOLOR_MIN colors leaves a bicoloring (at least 2
# directions, 3 on most patterns) too little to gain to pay for coloring H
# (bicoloring_threshold raises it on patterns of many entries per row or column).
BICOLOR_MIN = 5


def bidirectional_cost(census, bicoloring, chunk, replayed=False):
    """Modelled seconds of a bicoloring's sweeps: its forward colors as one compressed
    forward Jacobian, its reverse colors as one compressed reverse Jacobian
    (:func:`cost.model`; ``replayed`` as there)."""
    return cost.model(census, bicoloring.ncolors_forward, chunk, "forward",
                      replayed=replayed) + \
        cost.model(census, bicoloring.ncolors_reverse, chunk, "reverse", replayed=replayed)


def bicoloring_threshold(in_rows, in_cols):
    """The one-sided color count above which a bicoloring is worth trying: BICOLOR_MIN, or
    twice the typical (90th percentile) row or column count if larger. A bicoloring wins
    where a few dense rows and columns force the one-sided colorings up (the arrowhead:
    2 against n); on near-uniform patterns (stencils, bands) it seldom beats them."""
    if not len(in_rows) or not len(in_cols):
        return BICOLOR_MIN
    typical = max(np.percentile(in_rows, 90), np.percentile(in_cols, 90))
    return max(BICOLOR_MIN, 2 * int(typical))


def jacobian_colorings(pattern, mode, census, chunk, kind="auto"):
    """``(col, row, bic)``: the column, row and star bi- colorings ``mode`` needs (None
    where not made). In ``"auto"``: a bicoloring is made first when both one-sided
    colorings need more than :func:`bicoloring_threshold` colors by their lower bounds (the
    densest row and column); else after them, when both gave more. The one-sided colorings
    are made in the order of their lower bounds' modelled sweeps, each only when its
    bound's sweeps are modelled cheaper than the best coloring made so far (a side that
    cannot win is not colored: bundle adjustment's J_g, 2 rows against 15 columns per
    observation, is not column-colored). The bicoloring gets a work budget there (None when it ran out).
    ``kind``: the bicoloring's, :func:`jacobians.acyclic_bicoloring.bicoloring` (``"star"``
    where the entries must be read directly, as on traced values)."""
    if mode == "bidirectional":
        return None, None, bicoloring(pattern, kind)
    if mode != "auto":
        return colorings_for(pattern, mode) + (None,)
    in_rows = np.diff(pattern.indptr)
    in_cols = np.bincount(pattern.indices, minlength=pattern.shape[1])
    lb_col, lb_row = int(in_rows.max(initial=0)), int(in_cols.max(initial=0))
    threshold = bicoloring_threshold(in_rows, in_cols)
    # The bicoloring may visit twice what the one-sided colorings' graphs hold (Σ r² + Σ c²),
    # which their greedy passes and search visit several times over: it never costs much
    # more than they do.
    budget = 2 * int(in_rows @ in_rows + in_cols @ in_cols)
    bic = bicoloring(pattern, kind, budget) if min(lb_col, lb_row) > threshold \
        else None
    best = bidirectional_cost(census, bic, chunk) if bic is not None else np.inf
    made = {}
    sides = sorted((("forward", lb_col, column_coloring), ("reverse", lb_row, row_coloring)),
                   key=lambda side: cost.model(census, side[1], chunk, side[0]))
    for way, bound, color in sides:     # the side whose bound models cheaper first
        if cost.model(census, bound, chunk, way) < best:   # else it cannot win: not made
            made[way] = color(pattern)
            best = min(best, cost.model(census, made[way].ncolors, chunk, way))
    col, row = made.get("forward"), made.get("reverse")
    counts = [c.ncolors for c in (col, row) if c is not None]
    if bic is None and counts and min(counts) > threshold:
        bic = bicoloring(pattern, kind, budget)
    return col, row, bic


def choose_jacobian(census, col, row, bic, chunk):
    """"forward", "reverse" or "bidirectional": the cheapest modelled compressed sweeps."""
    options = {}
    if col is not None:
        options["forward"] = cost.model(census, col.ncolors, chunk, "forward")
    if row is not None:
        options["reverse"] = cost.model(census, row.ncolors, chunk, "reverse")
    if bic is not None:
        options["bidirectional"] = bidirectional_cost(census, bic, chunk)
    return min(options, key=options.get)


def choose(census, col, row, chunk):
    """"forward" or "reverse" for the compressed sweeps, by the cost model."""
    if row is None:
        return "forward"
    if col is None:
        return "reverse"
    f = cost.model(census, col.ncolors, chunk, "forward")
    r = cost.model(census, row.ncolors, chunk, "reverse")
    return "forward" if f <= r else "reverse"


@overload
def sparse_jacobian(f: Callable[..., Any], /, *, mode: str = "auto",
                    argnums: int | Sequence[int] = 0, sparsity: Any = None,
                    chunk_size: int | None = None, max_memory: int = ...,
                    executor: Any = None, retries: int = 2,
                    progress: Any = None) -> Callable[..., sp.csr_matrix]: ...
@overload
def sparse_jacobian(f: Callable[..., Any], x: Any, /, *args: Any, mode: str = "auto",
                    argnums: int | Sequence[int] = 0, sparsity: Any = None,
                    chunk_size: int | None = None, max_memory: int = ...,
                    executor: Any = None, retries: int = 2,
                    progress: Any = None) -> sp.csr_matrix: ...
@composes("sparse_jacobian")
def sparse_jacobian(f: Callable[..., Any], *args: Any, mode: str = "auto",
                    argnums: int | Sequence[int] = 0, sparsity: Any = None,
                    chunk_size: int | None = None, max_memory: int = DEFAULT_MAX_MEMORY,
                    executor: Any = None,
                    retries: int = 2,
                    progress: Any = None) -> sp.csr_matrix | Callable[..., sp.csr_matrix]:
    r"""The flat Jacobian (m x n) of ``f`` at ``args`` as a SciPy CSR matrix.

    The structural nonzeros of :math:`J` are detected by running ``f`` on index-set
    patterns (:func:`jacobian_sparsity`), or given (``sparsity``). A column coloring
    (structurally orthogonal columns share a color) gives a seed matrix :math:`S`
    (n x c, one indicator column per color), and one batched forward sweep computes the
    compressed product :math:`J S`; each nonzero is read back from exactly one entry,
    :math:`J_{ij} = (J S)_{i,\,\mathrm{color}(j)}`. In reverse mode the rows are colored
    and :math:`J_{ij} = (S^\top J)_{\mathrm{color}(i),\, j}`. A tridiagonal Jacobian
    needs 3 directions whatever ``n`` is. ``mode="bidirectional"`` seeds columns forward
    and rows in reverse (a star bicoloring, :func:`jacobians.bicoloring.star_bicoloring`):
    :math:`J_{ij} = (J S_f)_{i,\,f(j)}` or :math:`(S_r^\top J)_{r(i),\, j}`, whichever holds
    it alone; a bordered (arrowhead) Jacobian needs 3 directions instead of ``n``. Where
    an acyclic bicoloring needs fewer directions, its entries are recovered by substitution
    along the two-colored trees instead (:mod:`jacobians.acyclic_bicoloring`).
    ``mode="auto"`` takes the compressed sweeps the cost model finds cheapest (the
    bicoloring is tried when both one-sided colorings need more than 5 colors and more than
    twice the typical row or column count).

    Parameters
    ----------
    f : callable
        The function, ``f(*args)``, returning an array or a container of arrays.
    *args : array_like or container of array_like
        The point. Without ``args``, the function ``x ↦ J(x)`` is returned.
    mode : {"auto", "forward", "reverse", "bidirectional"}, optional
        Color the columns (``"forward"``), the rows (``"reverse"``), both
        (``"bidirectional"``: forward and reverse sweeps together), or whichever gives
        cheaper sweeps (``"auto"``, default).
    argnums : int or tuple of int, optional
        Which positional arguments are differentiated (default 0); their elements are the
        ``n`` columns, in order.
    sparsity : scipy.sparse matrix or array_like of bool, optional
        The m x n pattern, skipping the detection. Entries outside it are not computed.
    chunk_size : int, optional
        Colors per sweep (default: as many as fit in ``max_memory``).
    max_memory : int, optional
        Bytes for one sweep's tangents (default 256 MiB).
    executor : concurrent.futures.Executor or dask.distributed.Client, optional
        Each chunk of colors becomes one task on the workers; detection, coloring and
        decompression stay in the calling process.
    retries : int, optional
        Resubmissions of a chunk lost with its worker (default 2).
    progress : bool or callable, optional
        ``True``: a tqdm bar per sweep on stderr (a line of text without tqdm); a
        callable: called with a :class:`~jacobians.progress.ProgressRecord` after each
        chunk (see :func:`jacobian`). Default None: nothing.

    Returns
    -------
    scipy.sparse.csr_matrix or callable
        The flat Jacobian, ``m x n`` (rows: the output elements in C order; columns: the
        differentiated inputs'), with exactly the pattern's entries; or the curried function
        without ``args``.

    Raises
    ------
    ValueError
        A given ``sparsity`` whose shape is not ``(m, n)``, or an unknown ``mode``.
    DistributedSweepError
        Under ``executor=``: ``f`` raised in a task, or chunks were lost too often.

    See Also
    --------
    jacobian : The dense Jacobian (which uses these sweeps itself when they pay).
    jacobian_sparsity : The detected pattern alone.
    column_coloring, row_coloring : The colorings.
    sparse_hessian : The symmetric counterpart.

    Notes
    -----
    Grouping structurally orthogonal columns is the method of Curtis, Powell and Reid
    [1]_; seen as a graph coloring problem it is the partial distance-2 coloring of the
    bipartite graph of the pattern [2]_.

    References
    ----------
    .. [1] A. R. Curtis, M. J. D. Powell and J. K. Reid, "On the estimation of sparse
       Jacobian matrices", *IMA J. Appl. Math.* 13 (1974), 117-119.
    .. [2] A. H. Gebremedhin, F. Manne and A. Pothen, "What color is your Jacobian? Graph
       coloring for computing derivatives", *SIAM Review* 47 (2005), 629-705.

    Examples
    --------
    >>> from dualad import jacobians
    >>> def f(x):
    ...     return x[1:] ** 2 - x[:-1]
    >>> J = jacobians.sparse_jacobian(f, np.arange(1.0, 5.0))
    >>> print(J.shape, J.nnz)
    (3, 4) 6
    >>> print(J.toarray())
    [[-1.  4.  0.  0.]
     [ 0. -1.  6.  0.]
     [ 0.  0. -1.  8.]]
    """
    mode = check_mode("sparse_jacobian", mode, MODES + ("bidirectional",))
    if not args:
        def sparse_jac_f(*a):
            return sparse_jacobian(f, *a, mode=mode, argnums=argnums, sparsity=sparsity,
                                   chunk_size=chunk_size, max_memory=max_memory,
                                   executor=executor, retries=retries, progress=progress)
        sparse_jac_f.__name__ = f"sparse_jacobian({fname(f)})"
        return sparse_jac_f
    problem = attach("sparse_jacobian", Problem("sparse_jacobian", f, args, argnums), executor,
                     retries, chunk_size)
    problem.progress = check_progress("sparse_jacobian", f, progress)
    if sparsity is None:
        detected = detect_jacobian(problem)
        pattern, census = detected.pattern, detected.census
    else:
        from .sweeps import get_census
        census = get_census(problem)
        pattern = as_pattern("sparse_jacobian", sparsity, (problem.m, problem.n))
    chunk = chunk_size or census.chunk_size(max_memory,
                                            np.dtype(float_dtype(problem.dtype)).itemsize)
    col, row, bic = jacobian_colorings(pattern, mode, census, chunk)
    way = choose_jacobian(census, col, row, bic, chunk)
    if way == "bidirectional":
        return compressed_bidirectional(problem, pattern, bic, chunk)
    if way == "forward":
        return compressed_forward(problem, pattern, col, chunk)
    return compressed_reverse(problem, pattern, row, chunk)


# --- Hessians -------------------------------------------------------------------------------------
def decompress_star(pattern, coloring, compressed):
    """Symmetric ``H`` from ``compressed`` = (H S)ᵀ (c x n) under a star coloring."""
    n = pattern.shape[0]
    colors = coloring.colors
    coo = sp.triu(pattern, k=0, format="coo")
    i, j = coo.row.astype(np.int64), coo.col.astype(np.int64)
    off = i != j
    k = int(coloring.ncolors)
    # How many neighbors of each vertex carry each color (off-diagonal entries, both ways).
    oi, oj = i[off], j[off]
    counts = np.bincount(np.concatenate([oi * k + colors[oj], oj * k + colors[oi]]),
                         minlength=n * k)
    direct = counts[oi * k + colors[oj]] == 1
    vals = np.where(direct, compressed[colors[oj], oi], compressed[colors[oi], oj])
    di = i[~off]
    rows = np.concatenate([oi, oj, di])
    cols = np.concatenate([oj, oi, di])
    data = np.concatenate([vals, vals, compressed[colors[di], di]])
    out = sp.csr_matrix((data, (rows, cols)), shape=(n, n))
    out.sort_indices()
    return out


@overload
def sparse_hessian(f: Callable[..., Any], /, *, argnums: int | Sequence[int] = 0,
                   sparsity: Any = None, chunk_size: int | None = None, max_memory: int = ...,
                   executor: Any = None, retries: int = 2, progress: Any = None,
                   coloring: str = "auto") -> Callable[..., sp.csr_matrix]: ...
@overload
def sparse_hessian(f: Callable[..., Any], x: Any, /, *args: Any,
                   argnums: int | Sequence[int] = 0, sparsity: Any = None,
                   chunk_size: int | None = None, max_memory: int = ...,
                   executor: Any = None, retries: int = 2, progress: Any = None,
                   coloring: str = "auto") -> sp.csr_matrix: ...
@composes("sparse_hessian")
def sparse_hessian(f: Callable[..., Any], *args: Any, argnums: int | Sequence[int] = 0,
                   sparsity: Any = None, chunk_size: int | None = None,
                   max_memory: int = DEFAULT_MAX_MEMORY, executor: Any = None,
                   retries: int = 2, progress: Any = None,
                   coloring: str = "auto") -> sp.csr_matrix | Callable[..., sp.csr_matrix]:
    r"""The Hessian (n x n, flat inputs) of scalar ``f`` as an exactly symmetric SciPy CSR matrix.

    The pattern is detected by running the gradient's reverse sweep on index-set patterns
    (:func:`hessian_sparsity`), or given (``sparsity``, symmetrized). A star coloring of
    its adjacency graph (:func:`star_coloring`: a distance-1 coloring in which every path
    on four vertices uses at least three colors) gives a seed :math:`S` (n x c); one
    forward-over-reverse Hessian-vector product per color gives :math:`H S`, and every
    entry is read directly: :math:`H_{ij} = (H S)_{i,\,\mathrm{color}(j)}` when ``j`` is
    the only neighbour of ``i`` with its color, else :math:`(H S)_{j,\,\mathrm{color}(i)}`
    (the star property guarantees one of the two). Each value fills both
    :math:`H_{ij}` and :math:`H_{ji}`. An acyclic coloring (:func:`acyclic_coloring`:
    every cycle uses three colors) may need fewer products (a band of half-bandwidth β:
    β + 1 against about 2β + 1); its entries are recovered by substitution along each
    two-colored tree, leaves first,
    :math:`H_{vp} = (H S)_{v,\,\mathrm{color}(p)} - \sum_{u \text{ child of } v} H_{uv}`,
    exact to rounding but carrying the rounding of the entries below (docs/acyclic.md).

    Parameters
    ----------
    f : callable
        The scalar function, ``f(*args)``.
    *args : array_like or container of array_like
        The point. Without ``args``, the function ``x ↦ H(x)`` is returned.
    argnums : int or tuple of int, optional
        Which positional arguments are differentiated (default 0).
    sparsity : scipy.sparse matrix or array_like of bool, optional
        The n x n pattern, skipping the detection (made symmetric).
    chunk_size : int, optional
        Colors per sweep (default: as many as fit in ``max_memory``).
    max_memory : int, optional
        Bytes for one sweep's tangents (default 256 MiB).
    executor : concurrent.futures.Executor or dask.distributed.Client, optional
        Each chunk of colors becomes one task on the workers.
    retries : int, optional
        Resubmissions of a chunk lost with its worker (default 2).
    progress : bool or callable, optional
        ``True``: a tqdm bar per sweep on stderr (a line of text without tqdm); a
        callable: called with a :class:`~jacobians.progress.ProgressRecord` after each
        chunk (see :func:`jacobian`). Default None: nothing.
    coloring : {"auto", "star", "acyclic"}, optional
        Star coloring with direct recovery, acyclic coloring with recovery by substitution,
        or (``"auto"``, default) the acyclic one when it needs fewer colors than the star
        one (a tie keeps the star coloring); under ``"auto"``, at a point where the
        substitution would lose more than 6 digits of some entry (entries of very
        different magnitudes on one tree), the star coloring's products are computed
        instead. Under a transformation (traced values) the star coloring is used.

    Returns
    -------
    scipy.sparse.csr_matrix or callable
        The flat Hessian, ``n x n``, exactly symmetric; or the curried function without
        ``args``.

    Raises
    ------
    ValueError
        ``f`` is not scalar, a given ``sparsity`` is not ``n x n``, or an unknown
        ``coloring``.

    See Also
    --------
    hessian : The dense Hessian.
    hessian_sparsity : The detected pattern alone.
    star_coloring, acyclic_coloring : The colorings.

    Notes
    -----
    Direct recovery from a star coloring is due to Coleman and Moré [1]_; see [2]_ for the
    graph formulation; substitution from an acyclic coloring to Coleman and Cai, with the
    tree-set algorithms of [3]_.

    References
    ----------
    .. [1] T. F. Coleman and J. J. Moré, "Estimation of sparse Hessian matrices and graph
       coloring problems", *Math. Programming* 28 (1984), 243-270.
    .. [2] A. H. Gebremedhin, F. Manne and A. Pothen, "What color is your Jacobian? Graph
       coloring for computing derivatives", *SIAM Review* 47 (2005), 629-705.
    .. [3] A. H. Gebremedhin, A. Tarafdar, A. Pothen and A. Walther, "Efficient
       computation of sparse Hessians using coloring and automatic differentiation",
       *INFORMS J. Computing* 21 (2009), 209-223.

    Examples
    --------
    >>> from dualad import jacobians
    >>> def f(x):
    ...     return np.sum((x[1:] - x[:-1]) ** 2)
    >>> H = jacobians.sparse_hessian(f, np.arange(4.0))
    >>> print(H.nnz)
    10
    >>> print(H.toarray())
    [[ 2. -2.  0.  0.]
     [-2.  4. -2.  0.]
     [ 0. -2.  4. -2.]
     [ 0.  0. -2.  2.]]
    """
    if coloring not in COLORINGS:
        raise ValueError(f"sparse_hessian({fname(f)}): coloring={coloring!r} is not one of "
                         f"{COLORINGS}")
    progress = check_progress("sparse_hessian", f, progress)
    if not args:
        def sparse_hess_f(*a):
            return sparse_hessian(f, *a, argnums=argnums, sparsity=sparsity,
                                  chunk_size=chunk_size, max_memory=max_memory,
                                  executor=executor, retries=retries, coloring=coloring,
                                  progress=progress)
        sparse_hess_f.__name__ = f"sparse_hessian({fname(f)})"
        return sparse_hess_f
    workers = None if executor is None else Workers("sparse_hessian", executor, retries,
                                                    chunk_size is not None)
    problem = scalar_problem("sparse_hessian", f, args, argnums)
    check_real_inputs(problem)
    problem.executor = workers
    problem.progress = progress
    if sparsity is None:
        pattern = detect_hessian(problem).pattern
    else:
        pattern = as_pattern("sparse_hessian", sparsity, (problem.n, problem.n))
        pattern = ((pattern + pattern.T) > 0).tocsr()
    colored = hessian_coloring(pattern, coloring)[0]
    chunk = hessian_chunk(problem, "forward-over-reverse", chunk_size, max_memory)
    return compressed_hessian(problem, pattern, colored, chunk)
