"""NumPy's remaining real elementwise functions: sinc, remainder, fmod, copysign,
heaviside, and the zero-derivative ones (floor_divide, signbit, round, ...).

    sinc(x) = sin(πx)/(πx):   sinc'(x) = (cos(πx) − sinc(x))/x,  sinc'(0) = 0
    remainder(x, y) = x − k·y, k = ⌊x/y⌋:   ∂/∂x = 1,  ∂/∂y = −k
    fmod(x, y)      = x − k·y, k = trunc(x/y): ∂/∂x = 1,  ∂/∂y = −k
    copysign(x, y)  = |x|·s(y), s(y) = ±1 by y's sign bit:  ∂/∂x = sign(x)·s(y), ∂/∂y = 0
    heaviside(x, h) = 0, h, 1 for x <, =, > 0:  ∂/∂x = 0,  ∂/∂h = [x = 0]

Conventions at the points where these are not differentiable:

- remainder / fmod jump where x/y crosses an integer; there the derivative is the
  one of the branch NumPy's value lies on (k is read off the computed value,
  ``k = rint((x − ans)/y)``), so it is exact on either side of the jump.
- copysign at x = 0 follows ``abs'(0) = 0``; ``copysign(x, ±0.0)`` honours the sign
  bit of the zero, as the value does.
- round/around/fix/rint, floor_divide, spacing, signbit, heaviside in x,
  isposinf/isneginf, logical_xor are piecewise constant: derivative 0.
- sinc near 0 is evaluated by its Taylor series for the derivative (|x| < 10⁻²),
  so every order is exact at and around 0 (sinc'(0) = 0, sinc''(0) = −π²/3).
- nan_to_num passes x's derivative where x is finite; where it replaced a nan or
  an inf the derivative is that of the replacement value (0 for a constant).

Compositions (no rules of their own): nan_to_num, ldexp, frexp, modf, divmod.
"""
from __future__ import annotations

import numpy as np

from ...core.tracer import Box, primal_value, unguarded_value
from ...core.primitive import sample, implements
from .._util import value_only
from ..core.elementwise import (cos, elementwise, equal, isinf, isnan, less, rint, trunc, where,
                                zero_derivative)
from ..core.complex_numbers import absolute, sign
from ...core.values import is_batched, map_value

__all__ = [
    "floor_divide", "logical_xor", "signbit", "spacing", "round_", "fix", "isposinf",
    "isneginf", "sinc", "remainder", "fmod", "copysign", "heaviside", "nan_to_num", "ldexp",
    "frexp", "modf", "divmod_"
]

# --- zero derivative -----------------------------------------------------------------
floor_divide = zero_derivative("floor_divide", np.floor_divide,
                               sympy=lambda sp, x, y: sp.floor(x / y), nargs=2)
floor_divide.samples = [sample((3,), (3,), domain=[None, (0.5, 2.0)]),
                        sample((2, 3), (3,), domain=[None, (0.5, 2.0)])]
logical_xor = zero_derivative("logical_xor", np.logical_xor, nargs=2)
signbit = zero_derivative("signbit", np.signbit, sympy=lambda sp, x: x < 0)
spacing = zero_derivative("spacing", np.spacing)


@implements(np.round, np.around)
def round_(x, decimals=0, out=None):
    """``np.round``/``np.around``: piecewise constant, derivative 0 (as ``rint``)."""
    if out is not None:
        raise TypeError("round: out= writes in place and cannot be traced")
    if decimals == 0:
        return rint(x)
    return map_value(x, lambda v: np.round(v, decimals))   # under vmap: per example


@implements(np.fix)
def fix(x, out=None):
    """``np.fix``: rounds toward zero, i.e. ``trunc``; derivative 0."""
    if out is not None:
        raise TypeError("fix: out= writes in place and cannot be traced")
    return trunc(x)


isposinf = value_only(np.isposinf)
isneginf = value_only(np.isneginf)


# --- sinc ------------------------------------------------------------------------------
_SINC_SMALL = 1e-2
# sinc'(x) = Σ_{k≥1} (−1)^k π^{2k} 2k x^{2k−1} / (2k+1)!, kept to k = 5: below 10⁻² the
# first omitted term is < 10⁻²³, while the closed form loses digits to cancellation.
_SINC_TAYLOR = [(-1) ** k * np.pi ** (2 * k) * 2 * k / float(np.prod(np.arange(1, 2 * k + 2)))
                for k in range(1, 6)]


def _dsinc(ans, x):
    small = less(absolute(x), _SINC_SMALL)
    xs = where(small, 1.0, x)        # a safe value: the unselected branch stays finite
    x2 = x * x
    series = 0.0
    for c in reversed(_SINC_TAYLOR):
        series = series * x2 + c
    closed = (cos(np.pi * xs) - ans) / xs
    return where(small, series * x, closed)


sinc = elementwise("sinc", np.sinc, _dsinc, sympy=lambda sp, x: sp.sinc(sp.pi * x))


# --- remainder and fmod: x − k·y with the integer k of the branch NumPy's value lies on ----
def _branch(ans, x, y):
    return rint((x - ans) / y)


remainder = elementwise("remainder", np.remainder, lambda a, x, y: 1.0,
                        lambda a, x, y: -_branch(a, x, y),
                        domain=[(2.1, 2.9), (1.0, 1.04)])
fmod = elementwise("fmod", np.fmod, lambda a, x, y: 1.0, lambda a, x, y: -_branch(a, x, y),
                   domain=[(-1.9, -1.1), (1.0, 1.04)])
# SymPy cannot differentiate Mod or floor (it leaves Derivative(floor(x), x)), so these two
# have no translation for the oracle; they are checked against finite differences.


def _one(x):
    return np.ones((), dtype=np.result_type(unguarded_value(x), np.float16))


# --- copysign and heaviside ---------------------------------------------------------------
copysign = elementwise("copysign", np.copysign,
                       lambda a, x, y: sign(x) * copysign(_one(x), y),
                       lambda a, x, y: 0.0,
                       sympy=lambda sp, x, y: sp.Abs(x) * y / sp.Abs(y),
                       domain=[(0.1, np.inf), None])
heaviside = elementwise("heaviside", np.heaviside, lambda a, x, h: 0.0,
                        lambda a, x, h: where(equal(x, 0.0), _one(a), _one(a) * 0))
# heaviside has no SymPy translation: SymPy's Heaviside differentiates to DiracDelta, which
# the oracle cannot evaluate numerically.


# --- compositions --------------------------------------------------------------------------
@implements(np.nan_to_num)
def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """``np.nan_to_num``: x where finite, else the replacement (which may be traced)."""
    xp = primal_value(x)
    if not np.any(~np.isfinite(xp)):
        return x
    dtype = np.result_type(xp)
    info = np.finfo(dtype if np.issubdtype(dtype, np.floating) else np.float64)
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    out = where(isnan(x), nan, x)
    out = where(isinf(x) & (xp > 0), posinf, out)
    return where(isinf(x) & (xp < 0), neginf, out)


@implements(np.ldexp)
def ldexp(x, n):
    """``x · 2ⁿ`` for integer n (not differentiable): an exact scaling."""
    n = primal_value(n)
    if isinstance(n, Box) or not np.issubdtype(np.result_type(n), np.integer):
        raise TypeError(f"ldexp: the exponent must be an integer array, got "
                        f"{np.result_type(n)} of shape {np.shape(n)}")
    return x * np.ldexp(np.ones((), dtype=np.result_type(primal_value(x), np.float16)), n)


@implements(np.frexp)
def frexp(x):
    """``(m, e)`` with x = m·2^e: m = x·2^−e is differentiable (exact scaling), e is not."""
    if is_batched(x):   # under vmap: exponents per example
        e = map_value(x, lambda v: np.frexp(v)[1])
        one = np.ones((), dtype=np.result_type(primal_value(x), np.float16))
        return x * map_value(e, lambda n: np.ldexp(one, -n)), e
    _, e = np.frexp(primal_value(x))
    return ldexp(x, -e), e


@implements(np.modf)
def modf(x):
    """``(x − trunc(x), trunc(x))``: the fractional part has derivative 1."""
    whole = trunc(x)
    return x - whole, whole


@implements(np.divmod)
def divmod_(x, y):
    """``(floor_divide(x, y), remainder(x, y))``."""
    return floor_divide(x, y), remainder(x, y)


implements(np.remainder)(remainder)
implements(np.fmod)(fmod)
implements(np.copysign)(copysign)
implements(np.heaviside)(heaviside)
implements(np.floor_divide)(floor_divide)
implements(np.logical_xor)(logical_xor)
implements(np.signbit)(signbit)
implements(np.spacing)(spacing)
implements(np.sinc)(sinc)
implements(np.isposinf)(isposinf)
implements(np.isneginf)(isneginf)

