"""Pattern rules of the scipy.sparse primitives (``dualad.scipy.sparse``).

- ``sparse_matmul``: ``y = M ×_axis x`` with a constant sparse M: output element
  ``(…, i, …)`` depends on the input elements ``(…, j, …)`` (the same other indices) for
  every *stored* entry ``(i, j)`` of M (explicit zeros included: a superset). O(nnz · K)
  pairs, K the number of the other indices.
- ``sparse_solve``: ``x = A⁻¹ b`` (A from stored values ``data`` at ``(row, col)``). An
  entry of A⁻¹ can be nonzero only between two indices in one connected component of A's
  graph (A is block diagonal over the components, up to a permutation, and so is its
  inverse), so ``x[i]`` depends on the ``b[j]`` of i's component (the same column of b)
  and on the stored values of that component. A connected A (a discretized PDE) gives a
  dense Jacobian, as it must: it is one. A matrix-free A (a LinearOperator) is taken as
  connected.

Neither rule reads a traced value, so the pattern holds at every point.
"""
from __future__ import annotations

__all__ = ["sparse_matmul_rule", "sparse_solve_rule", "SPARSE_MATRIX_RULES"]

import math

import numpy as np
from scipy.sparse import coo_array
from scipy.sparse.csgraph import connected_components

from dualad.extend import shape_of

from .patterns import group, union

_INT = np.int64


def _grid(shape, axis):
    """Flat indices of an array of ``shape`` as a (K, shape[axis]) table: row r holds the
    elements that share their other indices, in order along ``axis``."""
    idx = np.arange(math.prod(shape), dtype=_INT).reshape(shape)
    return np.moveaxis(idx, axis, -1).reshape(-1, shape[axis])


def sparse_matmul_rule(prim, pats, primals, ans, params):
    op, axis = params["op"], params["axis"]
    xs, ys = tuple(shape_of(primals[0])), tuple(shape_of(ans))
    m = op.matrix.tocoo()
    rows, cols = m.row.astype(_INT), m.col.astype(_INT)
    src, out = _grid(xs, axis), _grid(ys, axis)
    return group(pats[0], math.prod(ys), out[:, rows].ravel(), src[:, cols].ravel())


def _components(struct):
    n = struct.shape[0]
    if getattr(struct, "operator", None) is not None:   # a LinearOperator: no pattern known
        return np.zeros(n, _INT)
    graph = coo_array((np.ones(len(struct.row), np.int8), (struct.row, struct.col)),
                      shape=struct.shape)
    return connected_components(graph, directed=False)[1].astype(_INT) if n else \
        np.zeros(0, _INT)


def sparse_solve_rule(prim, pats, primals, ans, params):
    struct = params["struct"]
    comp = _components(struct)
    ncomp = int(comp.max(initial=-1)) + 1
    bs, xs = tuple(shape_of(primals[1])), tuple(shape_of(ans))
    axis = -1 if params["vector"] else -2
    out = _grid(xs, axis)                      # (K, n): the solution's elements
    out_key = (np.arange(out.shape[0], dtype=_INT)[:, None] * ncomp + comp[None, :])
    order = np.argsort(out.ravel(), kind="stable")
    key_of_out = out_key.ravel()[order]        # by flat output index
    parts = []
    data_pat, b_pat = pats[0], pats[1]
    if b_pat is not None:
        src = _grid(bs, axis)
        key = np.arange(src.shape[0], dtype=_INT)[:, None] * ncomp + comp[None, :]
        by_key = group(b_pat, src.shape[0] * ncomp, key.ravel(), src.ravel())
        parts.append(by_key.gather(key_of_out))
    if data_pat is not None:
        # the stored values of a component reach every solution element of it
        k = np.asarray(comp[struct.row], _INT)
        by_comp = group(data_pat, max(ncomp, 1), k, np.arange(len(k), dtype=_INT))
        parts.append(by_comp.gather(key_of_out % max(ncomp, 1)))
    return union(parts)


SPARSE_MATRIX_RULES = {"sparse_matmul": sparse_matmul_rule, "sparse_solve": sparse_solve_rule}
