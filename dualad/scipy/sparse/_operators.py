"""A traced value and a constant SciPy sparse matrix under Python's arithmetic operators.

The operators mean what SciPy makes them mean (SciPy's sparse classes outrank ndarrays:
``x * A`` with x an ndarray is ``A.__rmul__(x)``), so the traced value's operator
methods hand such an operand here instead of to an elementwise primitive, whose
rules would be wrong for it:

- ``*`` of a ``*_matrix`` (spmatrix) and an array is the matrix product:
  ``x * A = x @ A``, ``A * x = A @ x`` (:func:`~dualad.scipy.sparse.sparse_matmul`);
- ``*`` of a ``*_array`` (sparray), or of either class and a traced scalar (a scaling),
  is elementwise: a sparse matrix with A's stored coordinates and traced values
  (:func:`~dualad.scipy.sparse.multiply`);
- ``+`` and ``-`` of a ``*_array`` give the dense ndarray ``x ± A.toarray()``, as SciPy;
  of a ``*_matrix`` they are refused: SciPy returns an ``np.matrix``, whose ``*`` and ``**``
  are matrix products, so a traced ndarray in its place would compute something else
  afterwards (write ``x + A.toarray()``);
- ``/`` and ``**`` with the sparse matrix as divisor or exponent, and comparisons, are
  refused, as SciPy refuses ``x / A``; ``A / x`` is SciPy's own ``A.__truediv__``.
"""
from __future__ import annotations

import scipy.sparse as sp

from ...ops.core.elementwise import add, subtract
from ...core.tracer import shape_of

__all__ = ["is_sparse", "sparse_operand"]


def is_sparse(other) -> bool:
    """A SciPy sparse matrix or array (cheap test first: the operator paths call this)."""
    return hasattr(other.__class__, "tocsr") and sp.issparse(other)


def sparse_operand(name, x, A, reflected):
    """``x <name> A`` (``A <name> x`` when ``reflected``), x traced, A SciPy sparse."""
    from . import multiply, sparse_matmul
    if name == "mul":
        if isinstance(A, sp.sparray) or not shape_of(x):   # elementwise, or a scaling
            return multiply(A, x)
        return sparse_matmul(A, x) if reflected else sparse_matmul(x, A)
    if name in ("add", "sub") and isinstance(A, sp.sparray):
        dense = A.toarray()
        if name == "add":
            return add(dense, x) if reflected else add(x, dense)
        return subtract(dense, x) if reflected else subtract(x, dense)
    left, right = ("a sparse matrix", f"a traced value of shape {shape_of(x)}")
    if not reflected:
        left, right = right, left
    if name in ("add", "sub"):
        raise TypeError(f"{left} {_SYMBOL[name]} {right}: SciPy's result for a "
                        f"{type(A).__name__} is an np.matrix (whose * and ** are matrix "
                        f"products), which a traced value cannot be; write the dense operand "
                        f"explicitly: x {_SYMBOL[name]} A.toarray()")
    raise TypeError(f"{left} {_SYMBOL.get(name, name)} {right}: SciPy defines no such "
                    f"operation between a dense and a sparse operand; convert explicitly "
                    f"(A.toarray()) or use A.multiply(...) / dualad.scipy.sparse.multiply")


_SYMBOL = {"add": "+", "sub": "-", "truediv": "/", "pow": "**", "lt": "<", "le": "<=", "gt": ">", "ge": ">=",
           "eq": "==", "ne": "!="}
