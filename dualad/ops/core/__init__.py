"""The core families: elementwise functions, reductions, shape, indexing, products
(matmul, einsum, tensordot, ...) and complex numbers. Every other family is written
in these.
"""

__all__ = []   # the families are its modules (elementwise, reductions, ...)
