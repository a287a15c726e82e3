"""Sparse Jacobians and Hessians: detect, color, sweep compressed, decompress.

    J S  = one batched forward sweep of the c columns of the seed S (n x c)
    Sᵀ J = one batched pullback of the c rows of the seed (m x c)
    H S  = one batched forward-over-reverse sweep of c Hessian-vector products

where S holds one indicator column per color (see :mod:`jacobians.coloring`)
and each structural nonzero is read back from the compressed product:

    forward:  J[i, j] = (J S)[i, color(j)]
    reverse:  J[i, j] = (Sᵀ J)[color(i), j]
    Hessian:  H[i, j] = (H S)[i, color(j)]  if j is i's only neighbor of its color
                        (H S)[j, color(i)]  otherwise (star coloring: one of the two)

The results are ``scipy.sparse`` CSR matrices of the *flat* Jacobian (m x n,
rows the output elements in C order, columns the differentiated inputs) with
exactly the pattern's entries; the Hessian is exactly symmetric.
"""
from __future__ import annotations

__all__ = ["decompress_forward", "decompress_reverse", "compressed_forward",
           "compressed_reverse", "compressed_hessian", "colorings_for", "choose",
           "sparse_jacobian", "decompress_star", "sparse_hessian"]

import numpy as np
import scipy.sparse as sp

from . import cost
from ._common import DEFAULT_MAX_MEMORY, Problem, composes, float_dtype, fname
from .coloring import column_coloring, row_coloring, star_coloring
from .distributed import Workers, attach
from .sweeps import check_mode, forward_flat, reverse_flat
from .hessian_sweeps import hessian_chunk, hessian_rows, scalar_problem
from .sparsity import as_pattern, detect_hessian, detect_jacobian


def _rows_of(pattern):
    return np.repeat(np.arange(pattern.shape[0], dtype=np.int64), np.diff(pattern.indptr))


def _csr(pattern, data):
    out = sp.csr_matrix((data, pattern.indices, pattern.indptr), shape=pattern.shape)
    out.has_sorted_indices = True
    return out


def _gather(block, rows, cols):
    """``block[rows, cols]`` as one flat take (cheaper than 2-D fancy indexing)."""
    flat = np.ascontiguousarray(block).reshape(-1)
    pos = rows * block.shape[1]
    pos += cols
    return flat.take(pos)


def decompress_forward(pattern, coloring, compressed_t):
    """``J`` from ``compressed_t`` = (J S)ᵀ, (c x m)."""
    return _csr(pattern, _gather(compressed_t, coloring.colors.take(pattern.indices),
                                 _rows_of(pattern)))


def decompress_reverse(pattern, coloring, compressed):
    """``J`` from ``compressed`` = Sᵀ J, (c x n)."""
    return _csr(pattern, _gather(compressed, coloring.colors.take(_rows_of(pattern)),
                                 pattern.indices))


def compressed_forward(problem, pattern, coloring, chunk, check=None):
    seeds = coloring.seed(float_dtype(problem.dtype))
    return decompress_forward(pattern, coloring, forward_flat(problem, chunk, seeds, check).T)


def compressed_reverse(problem, pattern, coloring, chunk, check=None):
    seeds = coloring.seed(float_dtype(problem.dtype))
    return decompress_reverse(pattern, coloring, reverse_flat(problem, chunk, seeds, check))


def compressed_hessian(problem, pattern, coloring, chunk, check=None):
    """H from one forward-over-reverse product per color of the star ``coloring``."""
    seeds = coloring.seed(float_dtype(problem.dtype))
    compressed = hessian_rows(problem, "forward-over-reverse", seeds, chunk, check=check)
    return decompress_star(pattern, coloring, compressed)


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


def choose(census, col, row, chunk):
    """"forward" or "reverse" for the compressed sweeps, by the cost model."""
    if row is None:
        return "forward"
    if col is None:
        return "reverse"
    f = cost.model(census, col.ncolors, chunk, "forward")
    r = cost.model(census, row.ncolors, chunk, "reverse")
    return "forward" if f <= r else "reverse"


@composes("sparse_jacobian")
def sparse_jacobian(f, *args, mode="auto", argnums=0, sparsity=None, chunk_size=None,
                    max_memory=DEFAULT_MAX_MEMORY, executor=None, retries=2):
    """The flat Jacobian (m x n) of ``f`` at ``args`` as a scipy CSR matrix.

    The structure is detected by the pattern interpreter (or given: ``sparsity``, any
    m x n sparse or dense boolean matrix); columns (``mode="forward"``) or rows
    (``"reverse"``) are colored, each color group swept at once, and the compressed
    result decompressed. ``"auto"`` takes the direction with the cheaper sweeps.
    ``sparse_jacobian(f)`` returns the function ``x ↦ J(x)``. ``executor``: a
    ``concurrent.futures.Executor`` or ``dask.distributed.Client``; each chunk of colors
    is then one task on a worker (detection, coloring and decompression stay here),
    retried ``retries`` times if the worker is lost (:mod:`jacobians.distributed`).
    """
    mode = check_mode("sparse_jacobian", mode)
    if not args:
        def sparse_jac_f(*a):
            return sparse_jacobian(f, *a, mode=mode, argnums=argnums, sparsity=sparsity,
                                   chunk_size=chunk_size, max_memory=max_memory,
                                   executor=executor, retries=retries)
        sparse_jac_f.__name__ = f"sparse_jacobian({fname(f)})"
        return sparse_jac_f
    problem = attach("sparse_jacobian", Problem("sparse_jacobian", f, args, argnums), executor,
                     retries, chunk_size)
    if sparsity is None:
        detected = detect_jacobian(problem)
        pattern, census = detected.pattern, detected.census
    else:
        from .sweeps import get_census
        census = get_census(problem)
        pattern = as_pattern("sparse_jacobian", sparsity, (problem.m, problem.n))
    chunk = chunk_size or census.chunk_size(max_memory,
                                            np.dtype(float_dtype(problem.dtype)).itemsize)
    col, row = colorings_for(pattern, mode)
    if choose(census, col, row, chunk) == "forward":
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


@composes("sparse_hessian")
def sparse_hessian(f, *args, argnums=0, sparsity=None, chunk_size=None,
                   max_memory=DEFAULT_MAX_MEMORY, executor=None, retries=2):
    """The Hessian (n x n, flat inputs) of scalar ``f`` as an exactly symmetric scipy CSR.

    Structure detected by running the gradient's reverse sweep on patterns (or given:
    ``sparsity``); star coloring; one Hessian-vector product per color, all in batched
    forward-over-reverse sweeps; direct decompression. ``executor``/``retries``: each
    chunk of colors one task on a worker (as :func:`sparse_jacobian`).
    """
    if not args:
        def sparse_hess_f(*a):
            return sparse_hessian(f, *a, argnums=argnums, sparsity=sparsity,
                                  chunk_size=chunk_size, max_memory=max_memory,
                                  executor=executor, retries=retries)
        sparse_hess_f.__name__ = f"sparse_hessian({fname(f)})"
        return sparse_hess_f
    workers = None if executor is None else Workers("sparse_hessian", executor, retries,
                                                    chunk_size is not None)
    problem = scalar_problem("sparse_hessian", f, args, argnums)
    problem.executor = workers
    if sparsity is None:
        pattern = detect_hessian(problem).pattern
    else:
        pattern = as_pattern("sparse_hessian", sparsity, (problem.n, problem.n))
        pattern = ((pattern + pattern.T) > 0).tocsr()
    coloring = star_coloring(pattern)
    chunk = hessian_chunk(problem, "forward-over-reverse", chunk_size, max_memory)
    return compressed_hessian(problem, pattern, coloring, chunk)
