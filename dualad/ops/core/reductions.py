"""Reductions: sum, max, min, prod, cumsum; mean, var, std composed from them.

    sum:     ṫ ↦ Σ ṫ               ū_x = broadcast(ū)
    max:     ṫ ↦ Σ m ṫ             ū_x = broadcast(ū) · m,   m = [x = max] / #ties
    prod:    ṫ ↦ Σ (∏_{j≠i} x_j) ṫ_i  (exact with zeros in x)
    cumsum:  ṫ ↦ cumsum(ṫ)         ū_x = reverse-cumsum(ū)

Ties of max/min split the cotangent evenly among the maximal entries.
Axes are normalized to a sorted tuple before the primitive sees them, so a
batch axis in front shifts them by a constant.
"""
from __future__ import annotations

import builtins

import math

import numpy as np

from ...tracer import ndim_of, shape_of
from ...primitive import Primitive, implements, register, sample
from .._util import batch_ndim, normalize_axes, shift_axes
from .linear import expand_reduced, sum_p


# --- sum -----------------------------------------------------------------------------
def sum(x, axis=None, keepdims=False, dtype=None):
    if dtype is not None and not np.issubdtype(dtype, np.floating):
        raise TypeError(f"sum: dtype={dtype} would make the result not differentiable")
    return sum_p(x, axis=normalize_axes(axis, ndim_of(x)), keepdims=bool(keepdims))


def mean(x, axis=None, keepdims=False):
    axes = normalize_axes(axis, ndim_of(x))
    n = math.prod(shape_of(x)[a] for a in axes)
    return sum_p(x, axis=axes, keepdims=bool(keepdims)) / float(n)


def _dof(x, n, ddof):
    """n − ddof as the divisor of var; where it is ≤ 0, a zero of x's floating dtype, so
    the value is NumPy's (nan or inf) and so is the derivative — not a negative count."""
    if n - ddof > 0:
        return float(n - ddof)
    dt = np.result_type(_plain(x))
    return (dt if dt.kind in "fc" else np.dtype(np.float64)).type(0)


@implements(np.var)
def var(x, axis=None, ddof=0, keepdims=False):
    axes = normalize_axes(axis, ndim_of(x))
    n = math.prod(shape_of(x)[a] for a in axes)
    centred = x - mean(x, axis=axes, keepdims=True)
    from .elementwise import is_complex
    dof = _dof(x, n, ddof)
    if is_complex(centred):  # NumPy's complex variance: the mean of |x − mean|², real
        from .complex_numbers import imag, real
        re, im = real(centred), imag(centred)
        return sum_p(re * re + im * im, axis=axes, keepdims=bool(keepdims)) / dof.real
    return sum_p(centred * centred, axis=axes, keepdims=bool(keepdims)) / dof


@implements(np.std)
def std(x, axis=None, ddof=0, keepdims=False):
    """√var. Where var = 0 the derivative is 0 (see ``std_sqrt``): exact for a size-1
    reduction (std ≡ 0, e.g. batch normalization over a batch of one), PyTorch's
    convention for constant data. Where n − ddof ≤ 0 the value is NumPy's nan (or inf),
    and so is the derivative."""
    from .elementwise import std_sqrt
    return std_sqrt(var(x, axis=axis, ddof=ddof, keepdims=keepdims))


# --- max / min ----------------------------------------------------------------------------
def _selector(x, ans, axes, keepdims):
    """(hit, m): hit = [x == extremum], m = hit / number of ties, with ``ans`` broadcast
    back; m in x's floating dtype (a float32 x keeps float32 derivatives)."""
    xp = _plain(x)
    a = _plain(ans) if keepdims else np.expand_dims(_plain(ans), axes)
    hit = xp == a
    m = hit / np.sum(hit, axis=axes, keepdims=True)
    dt = getattr(xp, "dtype", None)
    if dt is not None and dt.kind == "f" and m.dtype != dt:
        m = m.astype(dt)
    return hit, m


def _plain(v):
    from ...tracer import primal_value
    return primal_value(v)


def _extremum(name, impl):
    prim = register(Primitive(name, lambda x, axis, keepdims: impl(x, axis=axis,
                                                                   keepdims=keepdims),
                              sparsity="reduction",
                              sympy=lambda sp, x, axis, keepdims: _sympy_extremum(
                                  sp, name, x, axis, keepdims)))

    # The entries not selected get the tangent/cotangent *selected away* (where), not
    # multiplied by 0: an inf cotangent (√ of a maximum 0) must not make them nan.
    def jvp(t, ans, x, axis, keepdims):
        from .elementwise import where
        hit, m = _selector(x, ans, axis, keepdims)
        return sum_p(where(hit, t * m, 0.0), axis=shift_axes(axis, batch_ndim(t, x)),
                     keepdims=keepdims)

    def vjp(ct, ans, x, axis, keepdims):
        from .elementwise import where
        hit, m = _selector(x, ans, axis, keepdims)
        return where(hit, expand_reduced(ct, shape_of(x), axis, keepdims, batch_ndim(ct, ans)) * m, 0.0)

    prim.defjvp(jvp)
    prim.defvjp(vjp)
    return prim


def _sympy_extremum(sp, name, x, axes, keepdims):
    f = sp.Max if name == "max" else sp.Min
    x = np.asarray(x, dtype=object)
    for ax in sorted(axes, reverse=True):
        x = np.apply_along_axis(lambda v: f(*v), ax, x)
    return np.expand_dims(x, axes) if keepdims else x


max_p = _extremum("max", np.max)
min_p = _extremum("min", np.min)
# Their rules locate the extremum by comparing numbers, so the SymPy oracle checks
# them numerically (AD Jacobian against sympy.diff evaluated at the point).
max_p.symbolic_rules = min_p.symbolic_rules = False


@implements(np.max, np.amax)
def max(x, axis=None, keepdims=False):
    return max_p(x, axis=normalize_axes(axis, ndim_of(x)), keepdims=bool(keepdims))


@implements(np.min, np.amin)
def min(x, axis=None, keepdims=False):
    return min_p(x, axis=normalize_axes(axis, ndim_of(x)), keepdims=bool(keepdims))


# --- prod -------------------------------------------------------------------------------
prod_p = register(Primitive("prod", lambda x, axis, keepdims: np.prod(x, axis=axis,
                                                                       keepdims=keepdims),
                            sparsity="reduction",
                            sympy=lambda sp, x, axis, keepdims: np.prod(
                                np.asarray(x, dtype=object), axis=axis, keepdims=keepdims)))


def _prod_others(x, ans, axes, keepdims):
    """∂(∏x)/∂x_i = ∏_{j≠i} x_j, exact when x has zeros along the reduced axes."""
    from .elementwise import where
    xp = _plain(x)
    zero = xp == 0
    n_zero = np.sum(zero, axis=axes, keepdims=True)
    if not n_zero.any():
        a = ans if keepdims else _expand_plainshape(ans, shape_of(x), axes)
        return a / x
    safe = where(zero, 1.0, x)
    p_nonzero = prod_p(safe, axis=axes, keepdims=True)
    others = where(n_zero == 0, _expand_plainshape(prod_p(x, axis=axes, keepdims=True),
                                                   shape_of(x), axes, keep=True) / safe,
                   where(zero & (n_zero == 1), p_nonzero, 0.0))
    return others


def _expand_plainshape(a, x_shape, axes, keep=False):
    from .shape import reshape
    if keep:
        return a
    return reshape(a, tuple(1 if i in axes else s for i, s in enumerate(x_shape)))


prod_p.defjvp(lambda t, ans, x, axis, keepdims:
              sum_p(t * _prod_others(x, ans, axis, keepdims),
                    axis=shift_axes(axis, batch_ndim(t, x)), keepdims=keepdims))
prod_p.defvjp(lambda ct, ans, x, axis, keepdims:
              expand_reduced(ct, shape_of(x), axis, keepdims, batch_ndim(ct, ans))
              * _prod_others(x, ans, axis, keepdims))


@implements(np.prod)
def prod(x, axis=None, keepdims=False):
    return prod_p(x, axis=normalize_axes(axis, ndim_of(x)), keepdims=bool(keepdims))


# --- cumsum --------------------------------------------------------------------------------
cumsum_p = register(Primitive("cumsum", lambda x, axis: np.cumsum(x, axis=axis), linear=True,
                              sparsity="cumulative",
                              sympy=lambda sp, x, axis: np.cumsum(
                                  np.asarray(x, dtype=object), axis=axis)))


def _reverse_cumsum(ct, axis):
    from .shape import flip
    return flip(cumsum_p(flip(ct, axis), axis=axis), axis)


cumsum_p.defjvp(lambda t, ans, x, axis: cumsum_p(t, axis=axis + batch_ndim(t, x)))
cumsum_p.defvjp(lambda ct, ans, x, axis: _reverse_cumsum(ct, axis + batch_ndim(ct, ans)))


@implements(np.cumsum)
def cumsum(x, axis=None):
    from .shape import ravel
    if axis is None:
        x, axis = ravel(x), 0
    return cumsum_p(x, axis=normalize_axes(axis, ndim_of(x))[0])


_ = builtins  # the builtins stay reachable although sum/max/min are shadowed here

max_p.samples = [sample((2, 3), axis=(1,), keepdims=False), sample((4,), axis=(0,), keepdims=True)]
min_p.samples = [sample((2, 3), axis=(0,), keepdims=False), sample((4,), axis=(0,), keepdims=False)]
prod_p.samples = [sample((2, 3), axis=(1,), keepdims=False, domain=[(0.5, 2.0)]),
                  sample((3,), axis=(0,), keepdims=True, domain=[(0.5, 2.0)])]
cumsum_p.samples = [sample((2, 3), axis=1), sample((4,), axis=0)]
