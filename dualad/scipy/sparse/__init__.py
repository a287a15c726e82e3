"""``dualad.scipy.sparse``: scipy.sparse in differentiated code.

- A constant scipy.sparse matrix (any format, spmatrix or sparray) times a traced
  array, either side, works as written: ``A @ x``, ``x @ A``, ``A @ X``, ``A.dot(x)``,
  ``A.T @ x``, ``np.dot(A, x)`` (one linear primitive, O(nnz) rules: :mod:`._matmul`).
- A sparse matrix with *traced* stored values: :func:`csr_array`, :func:`csr_matrix`,
  :func:`csc_array`, :func:`csc_matrix`, :func:`coo_array`, :func:`coo_matrix` with
  SciPy's constructor forms (``(data, indices, indptr)``, ``(data, (row, col))``), for
  ``@``, ``.T``, ``.dot``, ``+``, ``toarray`` and :mod:`.linalg`'s solvers (:mod:`._traced`);
  :func:`multiply` (A, x): the elementwise product, a sparse matrix with A's pattern.
- :mod:`.linalg`: ``spsolve``, ``cg``, ``gmres``, ``bicgstab``, ``minres``, differentiable
  in the right-hand side and in the matrix's stored values.

See ``docs/sparse.md`` for the rules.
"""
from ._matmul import SparseOperator, sparse_matmul, sparse_matmul_p  # noqa: F401
from ._traced import (TracedSparse, coo_array, coo_matrix, csc_array, csc_matrix,  # noqa: F401
                      csr_array, csr_matrix, issparse, multiply)
from . import linalg  # noqa: F401,E402  (registers sparse_solve)

__all__ = [
    "linalg", "SparseOperator", "sparse_matmul", "sparse_matmul_p", "TracedSparse",
    "coo_array", "coo_matrix", "csc_array", "csc_matrix", "csr_array", "csr_matrix",
    "issparse", "multiply"
]
