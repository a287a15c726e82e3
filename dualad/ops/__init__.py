"""The registry's primitives, grouped by family, and the functions composed from them."""
from . import elementwise, reductions, shape, indexing, linalg  # noqa: F401  (registers)
from . import numpy_extra, matrix, fft, special, complex_numbers  # noqa: F401  (registers)
from . import matrix_banded, matrix_equations, matrix_func_extra  # noqa: F401  (registers)

# Modules that add NumPy callables to the front end's tables: each may define
# NUMPY_UFUNCS and NUMPY_FUNCTIONS, {numpy callable: dualad function}.
EXTENSIONS = (numpy_extra, matrix, fft, special, complex_numbers)
from .elementwise import *  # noqa: F401,F403
from .reductions import sum, mean, var, std, max, min, prod, cumsum  # noqa: F401
from .shape import (reshape, ravel, expand_dims, squeeze, transpose, swapaxes,  # noqa: F401
                    moveaxis, broadcast_to, concatenate, stack, hstack, vstack, flip,
                    atleast_1d, atleast_2d)
from .indexing import index, getitem, untake  # noqa: F401
from .linalg import (matmul, einsum, tensordot, dot, inner, outer, vdot, diagonal,  # noqa: F401
                     trace, diag, triu, tril)
