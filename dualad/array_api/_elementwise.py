"""Elementwise functions of the array API standard, under the standard's names.

Each is a NumPy ufunc: on a traced value the ufunc reaches its primitive through
``__array_ufunc__`` (both modes, any order); on plain arrays it is NumPy itself.
Where NumPy's behaviour differs from the standard (``clip``'s keywords, ``round``
and ``sign`` of integers, ``ceil``/``floor``/``trunc`` of integers keeping their
dtype) the function below follows the standard.
"""
from __future__ import annotations

import numpy as np

from ..core.tracer import Box

__all__ = ["FUNCTIONS", "round", "sign", "real", "imag", "clip"]

_NAMES = {  # the standard's name: NumPy's ufunc
    "abs": np.absolute, "acos": np.arccos, "acosh": np.arccosh, "add": np.add,
    "asin": np.arcsin, "asinh": np.arcsinh, "atan": np.arctan, "atan2": np.arctan2,
    "atanh": np.arctanh, "bitwise_and": np.bitwise_and,
    "bitwise_left_shift": np.left_shift, "bitwise_invert": np.invert,
    "bitwise_or": np.bitwise_or, "bitwise_right_shift": np.right_shift,
    "bitwise_xor": np.bitwise_xor, "conj": np.conjugate, "copysign": np.copysign,
    "cos": np.cos, "cosh": np.cosh, "divide": np.divide, "equal": np.equal,
    "exp": np.exp, "expm1": np.expm1, "floor_divide": np.floor_divide,
    "greater": np.greater, "greater_equal": np.greater_equal, "hypot": np.hypot,
    "isfinite": np.isfinite, "isinf": np.isinf, "isnan": np.isnan, "less": np.less,
    "less_equal": np.less_equal, "log": np.log, "log1p": np.log1p, "log2": np.log2,
    "log10": np.log10, "logaddexp": np.logaddexp, "logical_and": np.logical_and,
    "logical_not": np.logical_not, "logical_or": np.logical_or,
    "logical_xor": np.logical_xor, "maximum": np.maximum, "minimum": np.minimum,
    "multiply": np.multiply, "negative": np.negative, "nextafter": np.nextafter,
    "not_equal": np.not_equal, "positive": np.positive, "pow": np.power,
    "reciprocal": np.reciprocal, "remainder": np.remainder, "signbit": np.signbit,
    "sin": np.sin, "sinh": np.sinh, "square": np.square, "sqrt": np.sqrt,
    "subtract": np.subtract, "tan": np.tan, "tanh": np.tanh,
}


def _unary(name, ufunc):
    def f(x, /):
        return ufunc(x)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"The standard's ``{name}``: NumPy's ``{ufunc.__name__}`` elementwise."
    return f


def _binary(name, ufunc):
    def f(x1, x2, /):
        return ufunc(x1, x2)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"The standard's ``{name}``: NumPy's ``{ufunc.__name__}`` elementwise."
    return f


FUNCTIONS = {name: (_unary if ufunc.nin == 1 else _binary)(name, ufunc)
             for name, ufunc in _NAMES.items()}


def _is_integral(x):
    return np.dtype(x.dtype if hasattr(x, "dtype") else np.result_type(x)).kind in "iub"


def _integral_identity(name, ufunc):
    def f(x, /):
        if _is_integral(x):   # the standard: integers come back unchanged, same dtype
            return np.asarray(x).copy()
        return ufunc(x)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"The standard's ``{name}``: NumPy's ``{ufunc.__name__}``; integer "
                 f"input is returned unchanged (NumPy may return floats).")
    return f


for _name, _ufunc in [("ceil", np.ceil), ("floor", np.floor), ("trunc", np.trunc)]:
    FUNCTIONS[_name] = _integral_identity(_name, _ufunc)


def round(x, /):  # noqa: A001  (the standard's name)
    """Round half to even (zero derivative where defined)."""
    if _is_integral(x):
        return np.asarray(x).copy()
    return np.round(x)


def sign(x, /):
    """The sign: -1, 0, 1 for reals, ``x/|x|`` (0 at 0) for complex numbers."""
    return np.sign(x)


def real(x, /):
    """The real part (real input unchanged)."""
    return np.real(x)


def imag(x, /):
    """The imaginary part (zeros of the same real dtype for real input)."""
    return np.imag(x)


def clip(x, /, min=None, max=None):  # noqa: A002  (the standard's names)
    """``x`` limited to ``[min, max]`` (either may be None, a scalar or an array;
    bounds may be traced). The result keeps ``x``'s dtype, as the standard says."""
    if min is None and max is None:
        return x if isinstance(x, Box) else np.asarray(x).copy()
    out = np.clip(x, min, max)
    if not isinstance(out, Box) and hasattr(x, "dtype") and out.dtype != x.dtype:
        out = out.astype(x.dtype)
    return out


FUNCTIONS.update(round=round, sign=sign, real=real, imag=imag, clip=clip)
