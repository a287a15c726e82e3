"""The registry's primitives, by family, and the functions composed from them.

- :mod:`.core`: elementwise functions, reductions, shape, indexing, products
  (matmul, einsum, ...), complex numbers;
- :mod:`.numpy`: the NumPy API beyond the core;
- :mod:`.linalg`: ``numpy.linalg`` and ``scipy.linalg``;
- :mod:`.special`: ``scipy.special``;
- :mod:`.fft`: ``numpy.fft``.

``.special`` and ``.linalg`` import SciPy's heavy submodules: they load on first use
(dualad.core.families), not with this package.
"""
from .core import elementwise, reductions, shape, indexing, products  # noqa: F401  (registers)
from .core import complex_numbers  # noqa: F401  (registers)
from . import numpy, fft  # noqa: F401  (registers)
# .special and .linalg (scipy.special, scipy.linalg) register when first needed
# (dualad.core.families); dualad.ops.special and dualad.ops.linalg load on first access.

# Each module declares the NumPy callables its functions compute where it defines them
# (dualad.core.primitive.implements): importing the families above fills the front end's tables.
from .core.elementwise import *  # noqa: F401,F403,E402
from .core.complex_numbers import absolute, sign  # noqa: F401,E402
from .core.reductions import sum, mean, var, std, max, min, prod, cumsum  # noqa: F401,E402
from .core.shape import (reshape, ravel, expand_dims, squeeze, transpose,  # noqa: F401,E402
                         swapaxes, moveaxis, broadcast_to, concatenate, stack, hstack, vstack, flip,
                         atleast_1d, atleast_2d)
from .core.indexing import index, getitem, untake  # noqa: F401,E402
from .core import scatter  # noqa: F401,E402  (registers scatter_set)
from .core.products import (matmul, einsum, tensordot, dot, inner, outer, vdot,  # noqa: F401,E402
                            diagonal, trace, diag, triu, tril)

__all__ = [
    "absolute", "absolute_p", "add", "arccos", "arccosh", "arcsin", "arcsinh", "arctan",
    "arctan2", "arctanh", "atleast_1d", "atleast_2d", "broadcast_to", "cbrt", "ceil",
    "clip", "concatenate", "cos", "cosh", "cumsum", "deg2rad", "diag",
    "diagonal", "divide", "dot", "einsum", "elementwise", "equal", "exp", "exp2",
    "expand_dims", "expm1", "flip", "floor", "fmax", "fmax_p", "fmin", "fmin_p", "getitem",
    "greater", "greater_equal", "hstack", "hypot", "IMAG_STRIP", "index", "inner",
    "is_complex", "isfinite", "isinf", "isnan", "less", "less_equal", "log", "log10",
    "log1p", "log2", "logical_and", "logical_not", "logical_or", "matmul", "max", "maximum",
    "maximum_p", "mean", "min", "minimum", "minimum_p", "moveaxis", "multiply", "negative",
    "not_equal", "outer", "PLANE", "positive", "power", "power_impl", "prod", "rad2deg",
    "ravel", "REAL_STRIP", "reciprocal", "reshape", "RIGHT", "rint", "rules_from_partial",
    "sign", "sign_p", "sin", "sinh", "SMALL", "sqrt", "square", "squeeze", "stack", "std",
    "std_sqrt", "subtract", "sum", "swapaxes", "tan", "tanh", "tensordot", "trace",
    "transpose", "tril", "triu", "trunc", "untake", "var", "vdot", "vstack", "where",
    "zero_derivative"
]

from ..core.lazy import attach as _attach  # noqa: E402

__getattr__, __dir__ = _attach(__name__, listed=("special", "linalg"))
