"""``dualad.array_api``: the Python array API standard (2023.12) over dualad's registry.

Traced values return this module from ``x.__array_namespace__()``, so code written
against the standard (``xp = array_namespace(x)``, as SciPy with
``SCIPY_ARRAY_API=1`` and scikit-learn with ``array_api_dispatch=True`` do)
differentiates in both modes. Every function calls the NumPy function of the
same meaning; NumPy's protocols route traced values to their primitives and plain
arrays stay plain NumPy (so a consumer's constants come back as ``ndarray``).
Where NumPy differs from the standard, the function here follows the standard.

Extensions: :mod:`.linalg`, :mod:`.fft`, and :mod:`.special` (SciPy's hook for a
backend's own special functions). See docs/array_api.md.
"""
from __future__ import annotations

import sys as _sys
from types import ModuleType as _ModuleType

from ..core.tracer import Box as _Box
from . import fft, linalg, special  # noqa: F401
from ._array import Array, creation as _as_created, native as _native  # noqa: F401
from ._attributes import install as _install
from ._creation import (arange, asarray, empty, empty_like, eye, from_dlpack,  # noqa: F401
                        full, full_like, linspace, meshgrid, ones, ones_like, tril, triu,
                        zeros, zeros_like)
from ._dtypes import (astype, bool, can_cast, complex64, complex128, e, finfo,  # noqa: F401
                      float32, float64, iinfo, inf, int8, int16, int32, int64, isdtype,
                      nan, newaxis, pi, result_type, uint8, uint16, uint32, uint64)
from ._elementwise import FUNCTIONS as _ELEMENTWISE
from ._info import __array_namespace_info__  # noqa: F401
from ._manipulation import FUNCTIONS as _MANIPULATION
from ._reductions import FUNCTIONS as _REDUCTIONS
from ._sorting import FUNCTIONS as _SORTING
from .linalg import matmul, matrix_transpose, tensordot, vecdot  # noqa: F401

__all__ = [
    "abs", "acos", "acosh", "add", "all", "any", "arange", "argmax", "argmin", "argsort",
    "Array", "asarray", "asin", "asinh", "astype", "atan", "atan2", "atanh", "bitwise_and",
    "bitwise_invert", "bitwise_left_shift", "bitwise_or", "bitwise_right_shift",
    "bitwise_xor", "bool", "broadcast_arrays", "broadcast_shapes", "broadcast_to",
    "can_cast", "ceil", "clip", "complex128", "complex64", "concat", "conj", "copysign",
    "cos", "cosh", "count_nonzero", "cumulative_prod", "cumulative_sum", "diff", "divide",
    "e", "empty", "empty_like", "equal", "exp", "expand_dims", "expm1", "eye", "fft",
    "finfo", "flip", "float32", "float64", "floor", "floor_divide", "from_dlpack", "full",
    "full_like", "greater", "greater_equal", "hypot", "iinfo", "imag", "inf", "int16",
    "int32", "int64", "int8", "isdtype", "isfinite", "isin", "isinf", "isnan", "less",
    "less_equal", "linalg", "linspace", "log", "log10", "log1p", "log2", "logaddexp",
    "logical_and", "logical_not", "logical_or", "logical_xor", "matmul", "matrix_transpose",
    "max", "maximum", "mean", "meshgrid", "min", "minimum", "moveaxis", "multiply", "nan",
    "negative", "newaxis", "nextafter", "nonzero", "not_equal", "ones", "ones_like",
    "permute_dims", "pi", "positive", "pow", "prod", "real", "reciprocal", "remainder",
    "repeat", "reshape", "result_type", "roll", "round", "searchsorted", "sign", "signbit",
    "sin", "sinh", "sort", "special", "sqrt", "square", "squeeze", "stack", "std",
    "subtract", "sum", "take", "take_along_axis", "tan", "tanh", "tensordot", "tile",
    "tril", "triu", "trunc", "uint16", "uint32", "uint64", "uint8", "unique_all",
    "unique_counts", "unique_inverse", "unique_values", "unstack", "var", "vecdot", "where",
    "zeros", "zeros_like", "__array_namespace_info__", "__array_api_version__"
]

__array_api_version__ = "2023.12"

globals().update(_ELEMENTWISE)
globals().update(_MANIPULATION)
globals().update(_REDUCTIONS)
globals().update(_SORTING)

_CREATION = ("arange", "asarray", "empty", "empty_like", "eye", "from_dlpack", "full",
             "full_like", "linspace", "meshgrid", "ones", "ones_like", "zeros", "zeros_like",
             "fftfreq", "rfftfreq")


def _wrap_module(namespace, names=None):
    """Every public function of ``namespace`` (a dict) taking and giving ``Array``s."""
    for name, fn in list(namespace.items()):
        if name.startswith("_") or not callable(fn) or isinstance(fn, type) or \
                isinstance(fn, _ModuleType) or (names is not None and name not in names):
            continue
        namespace[name] = (_as_created if name in _CREATION else _native)(fn)


_wrap_module(globals(), set(_ELEMENTWISE) | set(_MANIPULATION) | set(_REDUCTIONS)
             | set(_SORTING) | set(_CREATION) | {"matmul", "matrix_transpose", "tensordot",
                                                  "vecdot", "astype", "can_cast", "tril", "triu",
                                                  "finfo", "iinfo", "result_type"})
_wrap_module(vars(linalg))
_wrap_module(vars(fft))

# the array attributes of traced values, __array_namespace__ returning this module
_install(_Box, _sys.modules[__name__])
