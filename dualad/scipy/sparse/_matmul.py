"""A constant ``scipy.sparse`` matrix times a traced array: one linear primitive, O(nnz).

With a constant sparse M (m x n) applied along one axis of x (the last one, or the one
before it), ``sparse_matmul`` is

    y[..., i, (k)] = Σ_j M[i, j] x[..., j, (k)]              (one sparse product, O(nnz·K))
    JVP   ẏ = M ẋ              (the primitive itself on the tangent; batch axes in front)
    VJP   x̄ = Mᵀ ȳ             (the primitive with Mᵀ, kept in CSR next to M)

so every product a user writes becomes one call:

    A @ x  (x 1-D)     M = A,   along the last axis
    A @ X  (X ≥ 2-D)   M = A,   along axis -2 (each matrix of a stack)
    x @ A, X @ A       M = Aᵀ,  along the last axis

``A.dot(x)``, ``np.dot``, ``np.matmul`` and ``A.T @ x`` reach the same route
(:func:`sparse_matmul`, called by ``dualad.ops.core.products.matmul`` when an operand is
a scipy.sparse matrix, or a sparse matrix with traced values, see :mod:`._traced`). The
sparsity detector reads M's stored pattern (``dualad.jacobians.sparse_matrix_rules``).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ...core.primitive import Primitive, register, sample
from ...core.scaled import dense
from ...core.tracer import ndim_of, shape_of
from ._traced import TracedSparse

__all__ = ["SparseOperator", "sparse_matmul_p", "sparse_matmul"]


class SparseOperator:
    """A constant sparse matrix, held as a canonical CSR copy (sorted indices, duplicates
    summed), with its transpose built once when a rule first asks for it. A copy: a user
    who changes ``A.data`` in place after the forward pass does not change the derivative
    of the value already computed."""

    __slots__ = ("matrix", "_T", "__weakref__")

    def __init__(self, matrix, transpose=None):
        self.matrix = matrix
        self._T = transpose

    @classmethod
    def of(cls, a):
        m = sp.csr_array(a, copy=True)
        m.sum_duplicates()
        m.sort_indices()
        return cls(m)

    @property
    def T(self):
        if self._T is None:
            t = self.matrix.T.tocsr()
            t.sort_indices()
            self._T = SparseOperator(t, self)
        return self._T

    @property
    def shape(self):
        return self.matrix.shape

    def __repr__(self):
        m = self.matrix
        return f"SparseOperator(shape={m.shape}, nnz={m.nnz}, dtype={m.dtype})"


def _apply_impl(x, *, op, axis):
    """``M`` applied along ``axis`` (-1 or -2) of ``x``, whatever axes are in front."""
    x = np.asarray(dense(x))
    m = op.matrix
    if x.ndim == 1:
        return m @ x
    moved = np.moveaxis(x, axis, 0)
    rest = moved.shape[1:]
    y = m @ moved.reshape(moved.shape[0], -1)
    return np.moveaxis(np.asarray(y).reshape((m.shape[0],) + rest), 0, axis)


def _sympy_apply(sympy, x, op, axis):
    """The SymPy translation: the dense matrix times an object array of expressions."""
    moved = np.moveaxis(np.asarray(x, dtype=object), axis, 0)
    y = np.tensordot(op.matrix.toarray().astype(object), moved, axes=1)
    return np.moveaxis(y, 0, axis)


sparse_matmul_p = register(Primitive("sparse_matmul", _apply_impl, linear=True,
                                     sparsity="sparse_matmul", sympy=_sympy_apply))
# Linear in x: the JVP is the primitive on the tangent (batch axes in front leave the
# negative ``axis`` where it is); the VJP applies Mᵀ to the cotangent (no conjugation:
# JAX's convention for complex values, ū ↦ ū J).
sparse_matmul_p.def_linear(lambda ct, ans, x, op, axis: sparse_matmul_p(ct, op=op.T, axis=axis))
# vmap: ``axis`` counts from the end, so the batch axis in front is one more leading axis
sparse_matmul_p.defbatch(lambda args, batched, op, axis: sparse_matmul_p(args[0], op=op,
                                                                         axis=axis))

_S = SparseOperator.of(sp.csr_array(np.array([[2.0, 0, -1, 0], [0, 0, 3, 0.5],
                                                [1.5, 0, 0, 0]])))
sparse_matmul_p.samples = [sample((4,), op=_S, axis=-1), sample((4, 2), op=_S, axis=-2),
                           sample((2, 4, 3), op=_S, axis=-2), sample((2, 3), op=_S.T, axis=-1)]


def _check_2d(a, who):
    if a.ndim != 2:
        raise ValueError(f"{who}: a scipy.sparse operand of shape {a.shape} ({a.ndim}-D); "
                         f"only 2-D sparse matrices multiply traced arrays")


def sparse_matmul(a, b):
    """``a @ b`` where ``a`` or ``b`` is sparse (``np.matmul``'s shape rules, the sparse
    operand a matrix): the product as a dense (traced) array."""
    if isinstance(a, TracedSparse):
        return a._matmul(b)
    if isinstance(b, TracedSparse):
        return b._rmatmul(a)
    if sp.issparse(a) and sp.issparse(b):
        return a @ b
    if sp.issparse(a):
        _check_2d(a, "matmul")
        nx = ndim_of(b)
        if nx == 0:
            raise ValueError("matmul: a scalar operand; use * to scale a sparse matrix")
        xs = shape_of(b)
        k = xs[0] if nx == 1 else xs[-2]
        if k != a.shape[1]:
            raise ValueError(f"matmul: the sparse matrix of shape {a.shape} and the array of "
                             f"shape {xs} are not aligned: {a.shape[1]} != {k}")
        return sparse_matmul_p(b, op=SparseOperator.of(a), axis=-1 if nx == 1 else -2)
    _check_2d(b, "matmul")
    nx = ndim_of(a)
    if nx == 0:
        raise ValueError("matmul: a scalar operand; use * to scale a sparse matrix")
    xs = shape_of(a)
    if xs[-1] != b.shape[0]:
        raise ValueError(f"matmul: the array of shape {xs} and the sparse matrix of shape "
                         f"{b.shape} are not aligned: {xs[-1]} != {b.shape[0]}")
    return sparse_matmul_p(a, op=SparseOperator.of(b).T, axis=-1)
