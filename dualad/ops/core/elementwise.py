"""Elementwise primitives: each declared by one partial derivative per argument.

``elementwise(name, impl, d_0, d_1, ...)`` takes ``d_i = ∂ans/∂arg_i`` (a
constant, ``arg(j)`` for "argument j", or a function ``d_i(ans, *args)``
elementwise and broadcastable to the output; see :mod:`dualad.core.partials`),
compiles it once and derives both rules from it, as ChainRules'
``@scalar_rule`` does (the reverse sweep's fast path reads the same compiled
partials):

    JVP:  ṫ_out = Σ_i  ∂ans/∂arg_i · ṫ_i
    VJP:  ū_i   = unbroadcast(ū_out · ∂ans/∂arg_i)

Derivatives are written with registry operations, so they differentiate again.
Conventions at kinks: ``abs'(0) = 0``; ``maximum``/``minimum`` split ties
evenly (½ to each argument); ``sign``, ``floor``, comparisons have zero
derivative everywhere.

Complex arguments. The derivative expressions are holomorphic, so for a
complex z the same rules give ṫ·f'(z) forward and ū·f'(z) backward, JAX's
convention (see :mod:`.complex_numbers` and docs/complex.md). ``complex_domain``
declares where that holds (a rectangle per argument, away from branch cuts
and poles) and the rule checker samples complex arguments there too.
Branch cuts follow NumPy's principal branches: ``sqrt``, ``log``, ``log2``,
``log10``, ``power`` (in its base) are cut along (−∞, 0], ``log1p`` along
(−∞, −1], ``arcsin``/``arccos``/``arctanh`` along (−∞, −1] and [1, ∞),
``arctan``/``arcsinh`` along the imaginary axis beyond ±i, ``arccosh`` along
(−∞, 1]. On a cut the derivative is that of the branch NumPy's value lies on
(the sign of the imaginary zero chooses it: ``sqrt'(z) = 1/(2·sqrt(z))`` with
NumPy's ``sqrt(z)``), which is the one-sided derivative from that side.
Not holomorphic, with their own rules: ``abs`` of complex z (the R² derivative
Re(conj(z)/|z|·dz), 0 at z = 0) and ``sign`` (z/|z|, composed). ``maximum``,
``minimum``, ``fmax`` and ``fmin`` raise on complex arguments: complex
numbers are not ordered, and NumPy's lexicographic order has no useful
derivative. ``cbrt``, ``arctan2``, ``hypot``, ``deg2rad`` do not take complex
arguments in NumPy either. (``logaddexp`` is declared in :mod:`dualad.ops.special.log`,
beside expit, its partial derivative.)
"""
from __future__ import annotations

import operator

import numpy as np

from ...core.partials import arg, compile_partial
from ...core.tracer import Box, ndim_of, shape_of, unguarded_value
from ...core.primitive import JVP, VJP
from ...core.primitive import Primitive, implements, register, sample
from ...core.scaled import lazy_product
from ...core.batch_axes import batch_ndim
from .linear import fit, lift, unbroadcast

__all__ = [
    "rules_from_partial", "elementwise", "zero_derivative", "is_complex",
    "PLANE", "RIGHT", "REAL_STRIP", "IMAG_STRIP", "SMALL", "add", "subtract", "multiply",
    "divide", "negative", "positive", "power_impl", "power", "square", "reciprocal", "sqrt",
    "std_sqrt", "cbrt", "absolute_p", "exp", "exp2", "expm1", "log", "log2", "log10",
    "log1p", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "arctan2", "hypot", "sinh",
    "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "deg2rad", "rad2deg", "where", "clip",
    "sign_p", "floor", "ceil", "trunc", "rint", "greater", "greater_equal", "less",
    "less_equal", "equal", "not_equal", "isnan", "isinf", "isfinite", "logical_and",
    "logical_or", "logical_not", "maximum_p", "minimum_p", "fmax_p", "fmin_p", "maximum",
    "minimum", "fmax", "fmin"
]


def _scale(v, dv, nb=0):
    """``v · dv``, skipping the pass over ``v`` when the derivative is ±1 — also when it
    is an array of ones much smaller than a batched ``v`` (a gradient's cotangent of
    ones, met by a batch of tangents in forward-over-reverse): checking costs a pass over
    ``dv``, the product one over ``v``. A large batch ``v`` (``nb`` batch axes) times a
    derivative without them stays a :class:`dualad.core.scaled.ScaledBatch`, multiplied once
    when something needs it."""
    if type(dv) is float:
        if dv == 1.0:
            return v
        if dv == -1.0:
            return -v
    elif type(dv) is np.ndarray and dv.ndim and type(v) is np.ndarray and \
            0 < 8 * dv.size <= v.size and dv.flat[0] == 1 and v.dtype == np.result_type(v, dv) \
            and np.broadcast_shapes(v.shape, dv.shape) == v.shape and (dv == 1).all():
        return v
    if nb:
        lazy = lazy_product(v, dv, nb)
        if lazy is not None:
            return lazy
    return v * dv


def _jvp_from(d, i):
    def jvp(t, ans, *args):
        xs, ts = shape_of(args[i]), shape_of(t)
        nb = len(ts) - len(xs)   # batch_ndim(t, args[i]), without its two shape_of calls
        if xs == shape_of(ans) and ts[nb:] == xs:
            # the argument is not broadcast: the tangent (behind any batch axes) already
            # has the output's shape, and so has its product with ∂ans/∂arg
            return _scale(t, d(ans, *args), nb)
        out = _scale(lift(t, nb, ndim_of(ans)), d(ans, *args))
        return fit(out, ts[:nb] + shape_of(ans))
    return jvp


def _vjp_from(d, i):
    def vjp(ct, ans, *args):
        dv = d(ans, *args)
        if type(dv) is float and (dv == 1.0 or dv == -1.0):  # _scale, inlined (hot path)
            g = ct if dv == 1.0 else -ct
        else:
            g = ct * dv
        xs = getattr(args[i], "shape", None)
        if xs is not None and getattr(g, "shape", None) == xs:
            return g
        xs = shape_of(args[i])
        return unbroadcast(g, xs, batch_ndim(ct, ans))
    return vjp


def rules_from_partial(partial, i):
    """The JVP and VJP rules of argument ``i`` from its compiled partial derivative."""
    return _jvp_from(partial.fn, i), _vjp_from(partial.fn, i)




def elementwise(name, impl, *derivs, sympy=None, domain=None, complex_domain=None):
    """Declare an elementwise primitive from its partial derivatives (each a number,
    ``arg(j)`` or a function ``d(ans, *args)``: :mod:`dualad.core.partials`).

    ``domain`` is a list of open intervals ``(lo, hi)``, one per argument,
    inside which the function is smooth (default: the whole real line); the
    rule checker samples there. ``complex_domain``, for a function that is
    holomorphic with these derivatives, is a list of rectangles
    ``((re_lo, re_hi), (im_lo, im_hi))``, one per argument, clear of branch
    cuts and poles (``None`` for the whole plane); the checker samples
    complex arguments there.
    """
    prim = register(Primitive(name, impl, sympy=sympy))
    nondiff = tuple(i for i, d in enumerate(derivs) if d is None)
    derivs = tuple(compile_partial(d) for d in derivs)
    prim.derivs = derivs
    prim.domain = domain
    if complex_domain is not None:
        prim.complex_domain = [PLANE if d is None else d for d in complex_domain]
    prim.holomorphic = complex_domain is not None
    prim.elementwise = True
    for i, d in enumerate(derivs):
        if d.fn is not None:
            prim.rules[JVP][i], prim.rules[VJP][i] = rules_from_partial(d, i)
    prim.nondiff_argnums = nondiff
    return prim


def zero_derivative(name, impl, sympy=None, nargs=1):
    """Declare an elementwise primitive whose derivative is zero wherever it exists."""
    prim = register(Primitive(name, impl, sympy=sympy, zero_derivative=True))
    prim.domain = None
    prim.elementwise = True
    prim.samples = [sample(*shapes) for shapes in
                    {1: [((3,),), ((2, 3),)], 2: [((3,), (3,)), ((2, 3), (3,))]}[nargs]]
    return prim


def _sp(fname):
    return lambda sp, *args: getattr(sp, fname)(*args)


def is_complex(x) -> bool:
    """Whether ``x`` (plain or traced) holds complex numbers; cheap on the real path."""
    x = unguarded_value(x)   # the dtype only
    t = type(x)
    if t is float or t is np.float64 or t is int:
        return False
    if t is complex or t is np.complex128:
        return True
    dt = getattr(x, "dtype", None)
    return dt is not None and dt.kind == "c"


# Rectangles ((re_lo, re_hi), (im_lo, im_hi)) where the complex extensions are holomorphic.
PLANE = ((-1.5, 1.5), (-1.5, 1.5))
RIGHT = ((0.3, 2.0), (-1.5, 1.5))        # clear of the cut (−∞, 0]
REAL_STRIP = ((-0.8, 0.8), (-1.0, 1.0))  # clear of the cuts (−∞, −1] and [1, ∞)
IMAG_STRIP = ((-1.0, 1.0), (-0.8, 0.8))  # clear of the cuts [i, i∞) and (−i∞, −i]
SMALL = ((-1.0, 1.0), (-1.0, 1.0))       # clear of the poles ±π/2 (tan), ±iπ/2 (tanh)


# --- arithmetic -----------------------------------------------------------
# Python's operators are NumPy's ufuncs on arrays, and far cheaper on scalars.
add = elementwise("add", operator.add, 1.0, 1.0,
                  sympy=lambda sp, x, y: x + y, complex_domain=[None, None])
subtract = elementwise("subtract", operator.sub, 1.0, -1.0,
                       sympy=lambda sp, x, y: x - y, complex_domain=[None, None])
multiply = elementwise("multiply", operator.mul, arg(1), arg(0),
                       sympy=lambda sp, x, y: x * y, complex_domain=[None, None])
divide = elementwise("divide", operator.truediv, lambda a, x, y: 1.0 / y, lambda a, x, y: -a / y,
                     sympy=lambda sp, x, y: x / y, domain=[None, (0.1, np.inf)],
                     complex_domain=[None, RIGHT])
# negative is linear: its constant partial −1 makes its JVP ṫ ↦ −ṫ, the primitive itself
negative = elementwise("negative", operator.neg, -1.0, sympy=lambda sp, x: -x,
                       complex_domain=[None])
positive = elementwise("positive", np.positive, 1.0, sympy=lambda sp, x: x,
                       complex_domain=[None])


def _dpow_base(a, x, y):
    # y·x^(y-1), with the y == 0 case pinned to 0 (x^0 is constant even at x = 0).
    if y.__class__ is int and y == 2:   # x ** 2 in scalar code: the sweep calls this per node
        return 2.0 * x
    if isinstance(y, (int, float)):
        if y == 2:
            return 2.0 * x
        return 0.0 if y == 0 else (1.0 if y == 1 else y * x ** (y - 1))
    return where(y == 0, 0.0, y * x ** (y - 1))


def _dpow_exponent(a, x, y):
    # log(x)·x^y; at x == 0 the limit (y > 0) is 0. Negative x has no real derivative (nan).
    safe_x = where(x == 0, 1.0, x)
    return where(x == 0, 0.0, a * log(safe_x))


# x ** k for a small whole k as products, as NumPy computes x ** 2 (square) and JAX's
# integer_pow computes every whole power: NumPy's pow is a libm call per element, which on
# negative bases is 10-20x slower than a pass of multiplications (x ** 4 of 10^5 numbers in
# [-1, 1]: 5.7 ms against 0.05 ms, measured, bench/hvp_profile.py). A product chain rounds
# at most 3 times for k ≤ 6 (≤ 2.2 eps relative, measured, as pow's own result may differ by one
# between NumPy builds: its SIMD and libm paths disagree on ~3% of the inputs).
# Each entry: the binary digits of k after the leading one (square, then times x for a 1).
_POWER_CHAINS = {k: tuple(int(b) for b in bin(k)[3:]) for k in range(3, 7)}


def power_impl(x, y):
    """NumPy's ``x ** y``; a whole exponent 3..6 of a float32/float64 array (at least 1-d)
    by squaring and multiplying in one buffer (:data:`_POWER_CHAINS`), everything else by
    ``operator.pow``."""
    if x.__class__ is np.ndarray and (y.__class__ is int or y.__class__ is float):
        chain = _POWER_CHAINS.get(y)
        if chain is not None and x.ndim and x.dtype.char in "fd":
            out = None
            for times_x in chain:
                out = np.square(x if out is None else out, out=out)
                if times_x:
                    np.multiply(out, x, out=out)
            return out
    return x ** y


power_impl.operator = operator.pow   # tape.operator_method: Python's operator, for scalars
power = elementwise("power", power_impl, _dpow_base, _dpow_exponent,
                    sympy=lambda sp, x, y: x ** y, domain=[(0.1, np.inf), None],
                    complex_domain=[RIGHT, SMALL])
square = elementwise("square", np.square, arg(0, 2.0), sympy=lambda sp, x: x ** 2,
                     complex_domain=[None])
reciprocal = elementwise("reciprocal", np.reciprocal, lambda a, x: -a * a,
                         sympy=lambda sp, x: 1 / x, domain=[(0.1, np.inf)],
                         complex_domain=[RIGHT])
sqrt = elementwise("sqrt", np.sqrt, lambda a, x: 0.5 / a, sympy=_sp("sqrt"),
                   domain=[(0.1, np.inf)], complex_domain=[RIGHT])


def _dstd_sqrt(a, v):
    """½/√v, taken as 0 where v == 0 (a zero cotangent never meets the inf)."""
    zero = a == 0
    return where(zero, 0.0, 0.5 / where(zero, 1.0, a))


# √ for std = √var. Where var = 0 (constant data, or a size-1 reduction) the derivative
# is taken as 0 instead of ½/0 = inf: for a size-1 reduction std ≡ 0 and 0 is exact; for
# constant data of n > 1 entries std is not differentiable (std(c + h·t) = |h|·std(t))
# and 0 is the convention PyTorch documents (derivatives.yaml: std's rule is
# masked_fill_(result == 0, 0)). Plain ``sqrt`` keeps the infinite derivative at 0.
std_sqrt = elementwise("std_sqrt", np.sqrt, _dstd_sqrt, sympy=_sp("sqrt"),
                       domain=[(0.1, np.inf)])
cbrt = elementwise("cbrt", np.cbrt, lambda a, x: 1.0 / (3.0 * a * a), sympy=_sp("cbrt"),
                   domain=[(0.1, np.inf)])
absolute_p = elementwise("absolute", np.absolute, lambda a, x: sign_p(x), sympy=_sp("Abs"),
                         domain=[(0.1, np.inf)])


# --- exponentials and logarithms -----------------------------------------
# Constants as Python floats: a NumPy float64 scalar (np.log(2.0)) would promote a
# float32 tangent to float64 (NEP 50), a Python float does not.
_LN2, _LN10 = float(np.log(2.0)), float(np.log(10.0))
exp = elementwise("exp", np.exp, lambda a, x: a, sympy=_sp("exp"), complex_domain=[None])
exp2 = elementwise("exp2", np.exp2, lambda a, x: a * _LN2,
                   sympy=lambda sp, x: 2 ** x, complex_domain=[None])
expm1 = elementwise("expm1", np.expm1, lambda a, x: a + 1.0,
                    sympy=lambda sp, x: sp.exp(x) - 1, complex_domain=[None])
log = elementwise("log", np.log, lambda a, x: 1.0 / x, sympy=_sp("log"),
                  domain=[(0.1, np.inf)], complex_domain=[RIGHT])
log2 = elementwise("log2", np.log2, lambda a, x: 1.0 / (x * _LN2),
                   sympy=lambda sp, x: sp.log(x, 2), domain=[(0.1, np.inf)],
                   complex_domain=[RIGHT])
log10 = elementwise("log10", np.log10, lambda a, x: 1.0 / (x * _LN10),
                    sympy=lambda sp, x: sp.log(x, 10), domain=[(0.1, np.inf)],
                    complex_domain=[RIGHT])
log1p = elementwise("log1p", np.log1p, lambda a, x: 1.0 / (x + 1.0),
                    sympy=lambda sp, x: sp.log(1 + x), domain=[(-0.9, np.inf)],
                    complex_domain=[((-0.7, 1.5), (-1.5, 1.5))])


# --- trigonometric and hyperbolic -----------------------------------------
sin = elementwise("sin", np.sin, lambda a, x: cos(x), sympy=_sp("sin"), complex_domain=[None])
cos = elementwise("cos", np.cos, lambda a, x: -sin(x), sympy=_sp("cos"), complex_domain=[None])
tan = elementwise("tan", np.tan, lambda a, x: 1.0 + a * a, sympy=_sp("tan"),
                  domain=[(-1.4, 1.4)], complex_domain=[SMALL])
arcsin = elementwise("arcsin", np.arcsin, lambda a, x: 1.0 / sqrt(1.0 - x * x), sympy=_sp("asin"),
                     domain=[(-0.9, 0.9)], complex_domain=[REAL_STRIP])
arccos = elementwise("arccos", np.arccos, lambda a, x: -1.0 / sqrt(1.0 - x * x), sympy=_sp("acos"),
                     domain=[(-0.9, 0.9)], complex_domain=[REAL_STRIP])
arctan = elementwise("arctan", np.arctan, lambda a, x: 1.0 / (1.0 + x * x), sympy=_sp("atan"),
                     complex_domain=[IMAG_STRIP])
arctan2 = elementwise("arctan2", np.arctan2,
                      lambda a, y, x: x / (x * x + y * y),
                      lambda a, y, x: -y / (x * x + y * y),
                      sympy=lambda sp, y, x: sp.atan2(y, x), domain=[None, (0.1, np.inf)])
hypot = elementwise("hypot", np.hypot, lambda a, x, y: x / a, lambda a, x, y: y / a,
                    sympy=lambda sp, x, y: sp.sqrt(x ** 2 + y ** 2),
                    domain=[(0.1, np.inf), (0.1, np.inf)])
sinh = elementwise("sinh", np.sinh, lambda a, x: cosh(x), sympy=_sp("sinh"),
                   complex_domain=[None])
cosh = elementwise("cosh", np.cosh, lambda a, x: sinh(x), sympy=_sp("cosh"),
                   complex_domain=[None])
tanh = elementwise("tanh", np.tanh, lambda a, x: 1.0 - a * a, sympy=_sp("tanh"),
                   complex_domain=[SMALL])
arcsinh = elementwise("arcsinh", np.arcsinh, lambda a, x: 1.0 / sqrt(x * x + 1.0),
                      sympy=_sp("asinh"), complex_domain=[IMAG_STRIP])
# 1/(√(x−1)·√(x+1)), not 1/√(x²−1): the two differ in sign for complex x with Re x < 0,
# and only the first is the derivative of the principal arccosh.
arccosh = elementwise("arccosh", np.arccosh,
                      lambda a, x: 1.0 / (sqrt(x - 1.0) * sqrt(x + 1.0)),
                      sympy=_sp("acosh"), domain=[(1.1, np.inf)],
                      complex_domain=[((1.2, 2.5), (-1.0, 1.0))])
arctanh = elementwise("arctanh", np.arctanh, lambda a, x: 1.0 / (1.0 - x * x),
                      sympy=_sp("atanh"), domain=[(-0.9, 0.9)], complex_domain=[REAL_STRIP])
deg2rad = elementwise("deg2rad", np.deg2rad, np.pi / 180.0,
                      sympy=lambda sp, x: x * sp.pi / 180)
rad2deg = elementwise("rad2deg", np.rad2deg, 180.0 / np.pi,
                      sympy=lambda sp, x: x * 180 / sp.pi)


# --- selection: kinks follow the documented conventions ---------------------
# ∂max(x, y)/∂x is 1 where x > y, ½ at ties, 0 elsewhere. The rules *select* the
# tangent/cotangent with ``where`` instead of multiplying it by that 0/½/1 mask: a
# cotangent that is inf where the other branch was taken (√ of a clipped 0, say) would
# otherwise give inf·0 = nan for the branch not taken, whose true derivative is 0.
def _wins(mine, other, larger, nan_loses):
    """Where ``mine`` is the one selected: mine > other (``larger``) or mine < other;
    for fmax/fmin also where only ``other`` is nan (they return the number then)."""
    win = mine > other if larger else mine < other
    if nan_loses and (_has_nan(other) or _has_nan(mine)):
        win = logical_or(win, logical_and(isnan(other), logical_not(isnan(mine))))
    return win


def _has_nan(v):
    from ...core.values import is_staged
    from ...core.tracer import primal_value
    if is_staged(v):   # dualad.jit records the nan handling, right for every value
        return True
    v = primal_value(v)
    try:
        return bool(np.isnan(v).any())
    except TypeError:        # symbolic values (the SymPy oracle): no nan to handle
        return False


def _pick(v, mine, other, larger, nan_loses):
    """``v`` where ``mine`` wins, ``v/2`` at ties, 0 elsewhere (all broadcast together)."""
    return where(_wins(mine, other, larger, nan_loses), v, where(mine == other, 0.5 * v, 0.0))


def _selection(name, impl, sympy_name, larger, nan_loses=False):
    """``maximum``-like primitive (``larger``) or ``minimum``-like: the argument i
    selected gets the tangent/cotangent, ties split it evenly."""
    prim = register(Primitive(name, impl, sympy=_sp(sympy_name)))
    prim.domain = None
    prim.elementwise = True
    prim.holomorphic = False
    prim.nondiff_argnums = ()
    # the broadcasting sweep the rule checker gives primitives declared by partials (this
    # one has rules of its own, no partials), plus an outer broadcast
    prim.samples = [sample(*shapes) for shapes in
                    [((), ()), ((3,), (3,)), ((2, 3), (3,)), ((1, 3), (2, 3)), ((3,), ()),
                     ((2, 1), (1, 3))]]

    def order(i, args):
        x, y = args
        return (x, y, larger, nan_loses) if i == 0 else (y, x, larger, nan_loses)

    def jvp_of(i):
        def jvp(t, ans, *args):
            nb = batch_ndim(t, args[i])
            out = _pick(lift(t, nb, ndim_of(ans)), *order(i, args))
            return fit(out, shape_of(t)[:nb] + shape_of(ans))
        return jvp

    def vjp_of(i):
        def vjp(ct, ans, *args):
            nb = batch_ndim(ct, ans)
            return unbroadcast(_pick(ct, *order(i, args)), shape_of(args[i]), nb)
        return vjp

    prim.defjvp(jvp_of(0), jvp_of(1))
    prim.defvjp(vjp_of(0), vjp_of(1))
    return prim


def _ordered(prim):
    """``prim`` for real arguments; complex ones are not ordered and raise."""
    name = prim.name

    def call(x, y):
        if is_complex(x) or is_complex(y):
            which, v = (0, x) if is_complex(x) else (1, y)
            raise TypeError(f"{name}: argument {which} (shape {shape_of(v)}) is complex; "
                            f"complex numbers are not ordered, so {name} has no derivative "
                            f"there (NumPy's lexicographic order is not differentiable). "
                            f"Compare real parts or magnitudes: {name}(np.real(z), ...) or "
                            f"np.where(np.abs(z) >= np.abs(w), z, w)")
        return prim(x, y)
    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"``np.{name}`` of real arguments (the primitive '{name}')."
    return call


def _where_impl(cond, x, y):
    return np.where(cond, x, y)


# where(cond, x, y): cond is not differentiable; the unselected branch gets a
# zero cotangent even where its value is inf or nan.
def _where_sympy(sp, c, x, y):
    if isinstance(c, (bool, np.bool_)):
        return x if c else y
    return sp.Piecewise((x, c), (y, True))


where = register(Primitive("where", _where_impl, nondiff_argnums=(0,), sympy=_where_sympy))
where.elementwise = True


def _where_jvp(branch):
    def jvp(t, ans, cond, x, y):
        nb = batch_ndim(t, x if branch == 1 else y)
        t = lift(t, nb, ndim_of(ans))
        sel = where(cond, t, 0.0) if branch == 1 else where(cond, 0.0, t)
        return fit(sel, shape_of(t)[:nb] + shape_of(ans))
    return jvp


def _where_vjp(branch):
    def vjp(ct, ans, cond, x, y):
        nb = batch_ndim(ct, ans)
        sel = where(cond, ct, 0.0) if branch == 1 else where(cond, 0.0, ct)
        return unbroadcast(sel, shape_of(x if branch == 1 else y), nb)
    return vjp


where.defjvp(_where_jvp(1), _where_jvp(2), argnums=(1, 2))
where.defvjp(_where_vjp(1), _where_vjp(2), argnums=(1, 2))


def clip(a, a_min=None, a_max=None, out=None, *, min=None, max=None):
    """``minimum(maximum(a, a_min), a_max)``: at a bound the derivative is ½. NumPy's
    signature: ``min=``/``max=`` are NumPy 2.1's names of ``a_min``/``a_max``; the ufunc
    keywords (``dtype=``, ``where=``, ...) are handled by the front end (dualad/frontend/keywords.py)."""
    if out is not None:
        raise TypeError(f"numpy.clip(..., out=...) on a traced value of shape {shape_of(a)}: "
                        f"out= writes in place into an array, which cannot be traced; use "
                        f"the returned value instead (y = np.clip(x, lo, hi))")
    for name, old, new in (("min", a_min, min), ("max", a_max, max)):
        if old is not None and new is not None:
            raise TypeError(f"numpy.clip(..., {name}=...) on a traced value of shape "
                            f"{shape_of(a)}: a_{name}= and {name}= were both given; pass one "
                            f"of them ({name}= is NumPy 2.1's name)")
    a_min = a_min if min is None else min
    a_max = a_max if max is None else max
    if a_min is not None:
        a = maximum(a, a_min)
    if a_max is not None:
        a = minimum(a, a_max)
    return a


# --- zero-derivative primitives --------------------------------------------
sign_p = zero_derivative("sign", np.sign, sympy=_sp("sign"))


floor = zero_derivative("floor", np.floor, sympy=_sp("floor"))
ceil = zero_derivative("ceil", np.ceil, sympy=_sp("ceiling"))
trunc = zero_derivative("trunc", np.trunc)
rint = zero_derivative("rint", np.rint)
greater = zero_derivative("greater", np.greater, sympy=lambda sp, x, y: x > y, nargs=2)
greater_equal = zero_derivative("greater_equal", np.greater_equal,
                                sympy=lambda sp, x, y: x >= y, nargs=2)
less = zero_derivative("less", np.less, sympy=lambda sp, x, y: x < y, nargs=2)
less_equal = zero_derivative("less_equal", np.less_equal, sympy=lambda sp, x, y: x <= y,
                             nargs=2)
equal = zero_derivative("equal", np.equal, sympy=lambda sp, x, y: sp.Eq(x, y), nargs=2)
not_equal = zero_derivative("not_equal", np.not_equal, sympy=lambda sp, x, y: sp.Ne(x, y),
                            nargs=2)
isnan = zero_derivative("isnan", np.isnan)
isinf = zero_derivative("isinf", np.isinf)
isfinite = zero_derivative("isfinite", np.isfinite)
logical_and = zero_derivative("logical_and", np.logical_and, nargs=2)
logical_or = zero_derivative("logical_or", np.logical_or, nargs=2)
logical_not = zero_derivative("logical_not", np.logical_not)

maximum_p = _selection("maximum", np.maximum, "Max", larger=True)
minimum_p = _selection("minimum", np.minimum, "Min", larger=False)
fmax_p = _selection("fmax", np.fmax, "Max", larger=True, nan_loses=True)
fmin_p = _selection("fmin", np.fmin, "Min", larger=False, nan_loses=True)
maximum, minimum, fmax, fmin = (_ordered(p) for p in (maximum_p, minimum_p, fmax_p, fmin_p))

where.samples = [
    sample(np.array([True, False, True]), (3,), (3,)),
    sample(np.array([[True], [False]]), (3,), (2, 1)),
    sample(np.array([True, False]), np.array([0.5 - 1j, 2j]), np.array([1.5 + 0.5j])),
]
where.domain = None
where.holomorphic = True  # linear in the branches: complex-linear


# The NumPy callables these primitives and functions compute (dualad.core.primitive.implements:
# the front end's dispatch tables).
implements(np.add)(add)
implements(np.subtract)(subtract)
implements(np.multiply)(multiply)
implements(np.divide, np.true_divide)(divide)
implements(np.negative)(negative)
implements(np.positive)(positive)
implements(np.power, np.float_power)(power)
implements(np.square)(square)
implements(np.reciprocal)(reciprocal)
implements(np.sqrt)(sqrt)
implements(np.cbrt)(cbrt)
implements(np.exp)(exp)
implements(np.exp2)(exp2)
implements(np.expm1)(expm1)
implements(np.log)(log)
implements(np.log2)(log2)
implements(np.log10)(log10)
implements(np.log1p)(log1p)
implements(np.sin)(sin)
implements(np.cos)(cos)
implements(np.tan)(tan)
implements(np.arcsin)(arcsin)
implements(np.arccos)(arccos)
implements(np.arctan)(arctan)
implements(np.arctan2)(arctan2)
implements(np.hypot)(hypot)
implements(np.sinh)(sinh)
implements(np.cosh)(cosh)
implements(np.tanh)(tanh)
implements(np.arcsinh)(arcsinh)
implements(np.arccosh)(arccosh)
implements(np.arctanh)(arctanh)
implements(np.deg2rad, np.radians)(deg2rad)
implements(np.rad2deg, np.degrees)(rad2deg)
implements(np.maximum)(maximum)
implements(np.minimum)(minimum)
implements(np.fmax)(fmax)
implements(np.fmin)(fmin)
implements(np.floor)(floor)
implements(np.ceil)(ceil)
implements(np.trunc)(trunc)
implements(np.rint)(rint)
implements(np.greater)(greater)
implements(np.greater_equal)(greater_equal)
implements(np.less)(less)
implements(np.less_equal)(less_equal)
implements(np.equal)(equal)
implements(np.not_equal)(not_equal)
implements(np.isnan)(isnan)
implements(np.isinf)(isinf)
implements(np.isfinite)(isfinite)
implements(np.logical_and)(logical_and)
implements(np.logical_or)(logical_or)
implements(np.logical_not)(logical_not)
implements(np.clip)(clip)
