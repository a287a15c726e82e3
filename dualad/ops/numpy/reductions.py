"""More reductions and scans: cumprod, the nan-aware family, average, ptp.

    cumprod   y_k = ∏_{j≤k} x_j:   ẏ_k = Σ_{i≤k} (∏_{j≤k, j≠i} x_j) ẋ_i

is the one new primitive. At first order, without zeros (or subnormal entries), its
rules are ``ẏ = y · cumsum(ẋ/x)`` and ``x̄ = revcumsum(ȳ·y)/x``. Otherwise (zeros, or
rules being differentiated again, where quotients by small x_i would cancel) they
avoid division and stay exact: the product rule gives the linear recurrence

    ẏ_k = x_k ẏ_{k−1} + y_{k−1} ẋ_k,        x̄_i = y_{i−1} c_i,  c_i = ȳ_i + x_{i+1} c_{i+1}

solved by recursive doubling (⌈log₂ n⌉ rounds of products, sums and slices), so every
order is exact at zeros too.

Everything else is composed from existing primitives:

- nansum, nanprod, nancumsum, nancumprod, nanmean, nanvar, nanstd, nanmax, nanmin:
  NaN entries are replaced by the neutral value (0, 1, −inf, ...) through ``where``,
  so they get a zero derivative; all-NaN slices give NaN (as NumPy) with derivative 0.
- nanmax/nanmin/ptp share the cotangent evenly among tied extrema (as max/min).
- average: Σ w·a / Σ w, differentiable in both a and the weights.
- all, any, count_nonzero: derivative 0 (values of the primal).
"""
from __future__ import annotations

import math

import numpy as np

from ...core.tracer import ndim_of, primal_value, shape_of, unguarded_value
from ...core.values import (any_true, is_batched, is_staged, map_value, staged_unbatched,
                            staged_value)
from ...core.primitive import Primitive, implements, register, sample
from ...core.batch_axes import batch_ndim, batched_axis
from .._util import normalize_axes, value_only
from ..core.elementwise import std_sqrt, where as _where
from ..core.reductions import _reverse_cumsum, cumsum, cumsum_p, cumulative_batch, division_safe
from ..core.reductions import max as max_, min as min_
from ..core.reductions import mean, prod, sum as sum_
from ..core.indexing import getitem
from ..core.keyword_args import cast_for, mask_of, pick_ddof
from ..core.shape import broadcast_to, concatenate, flip, ravel, reshape

__all__ = [
    "cumprod_p", "cumprod", "cumulative_sum", "cumulative_prod", "nansum", "nanprod",
    "nancumsum", "nancumprod", "nanmean", "nanvar", "nanstd", "nanmax", "nanmin", "average",
    "ptp"
]

# --- cumprod -----------------------------------------------------------------------------
cumprod_p = register(Primitive("cumprod", lambda x, axis: np.cumprod(x, axis=axis),
                               sparsity="cumulative",
                               sympy=lambda sp, x, axis: np.cumprod(
                                   np.asarray(x, dtype=object), axis=axis)))


def _slab(x, axis, start, stop):
    return getitem(x, idx=(slice(None),) * axis + (slice(start, stop),))


def _const_slab(like, axis, n, value):
    shape = list(shape_of(like))
    shape[axis] = n
    return np.full(shape, value, dtype=np.result_type(unguarded_value(like)))


def _linear_scan(a, b, axis, nb):
    """``s_k = b_k + a_k s_{k−1}`` (s_{−1} = 0) along ``axis`` of a (and axis + nb of b,
    which carries nb batch axes) by recursive doubling: ⌈log₂ n⌉ rounds of
    ``b_k += a_k b_{k−d}``, ``a_k *= a_{k−d}``. No division, so exact with zeros; only
    products, sums and slices, so differentiable to every order."""
    n, d = shape_of(a)[axis], 1
    while d < n:
        b = b + a * concatenate([_const_slab(b, axis + nb, d, 0.0),
                                 _slab(b, axis + nb, 0, n - d)], axis=axis + nb)
        if 2 * d < n:
            a = a * concatenate([_const_slab(a, axis, d, 1.0), _slab(a, axis, 0, n - d)],
                                axis=axis)
        d *= 2
    return b


def _exclusive(y, axis):
    """y_{k−1} with y_{−1} = 1: the product of the entries before k."""
    n = shape_of(y)[axis]
    return concatenate([_const_slab(y, axis, 1, 1.0), _slab(y, axis, 0, n - 1)], axis=axis)


def _cumprod_jvp(t, ans, x, axis):
    if division_safe(x):
        return ans * cumsum_p(t / x, axis=batched_axis(axis, t, x))
    # ẏ_k = x_k ẏ_{k−1} + y_{k−1} ẋ_k: the product rule, as a linear recurrence
    return _linear_scan(x, _exclusive(ans, axis) * t, axis, batch_ndim(t, x))


def _cumprod_vjp(ct, ans, x, axis):
    nb, ax = batch_ndim(ct, ans), batched_axis(axis, ct, ans)
    if division_safe(x):
        return _reverse_cumsum(ct * ans, ax) / x
    # x̄_i = y_{i−1} c_i with c_i = ū_i + x_{i+1} c_{i+1}: the same recurrence, reversed
    n = shape_of(x)[axis]
    a = concatenate([_const_slab(x, axis, 1, 1.0), flip(_slab(x, axis, 1, n), axis)], axis=axis)
    c = flip(_linear_scan(a, flip(ct, ax), axis, nb), ax)
    return _exclusive(ans, axis) * c


cumprod_p.defjvp(_cumprod_jvp)
cumprod_p.defvjp(_cumprod_vjp)
cumprod_p.defbatch(cumulative_batch(cumprod_p))
cumprod_p.samples = [sample((3,), axis=0), sample((2, 3), axis=1),
                     sample(np.array([[0.5, 0.0, 2.0, -1.5], [0.0, 1.2, 0.0, 0.7]]), axis=1)]


@implements(np.cumprod)
def cumprod(x, axis=None, dtype=None, out=None):
    _no_out("cumprod", out)
    x = cast_for("numpy.cumprod", x, dtype)
    if axis is None:
        x, axis = ravel(x), 0
    return cumprod_p(x, axis=normalize_axes(axis, ndim_of(x))[0])


def _no_out(name, out):
    if out is not None:
        raise TypeError(f"{name}: out= writes in place into an array and cannot be traced; "
                        f"use the returned value")


@implements(np.cumulative_sum)
def cumulative_sum(x, axis=None, dtype=None, out=None, include_initial=False):
    x = cast_for("numpy.cumulative_sum", x, dtype)
    return _cumulative("cumulative_sum", cumsum, 0.0, x, axis, out, include_initial)


@implements(np.cumulative_prod)
def cumulative_prod(x, axis=None, dtype=None, out=None, include_initial=False):
    x = cast_for("numpy.cumulative_prod", x, dtype)
    return _cumulative("cumulative_prod", cumprod, 1.0, x, axis, out, include_initial)


def _cumulative(name, scan, initial, x, axis, out, include_initial):
    _no_out(name, out)
    if axis is None:
        if ndim_of(x) > 1:
            raise ValueError(f"{name}: axis must be given for an array of shape {shape_of(x)}")
        axis = 0
    x = reshape(x, (1,)) if ndim_of(x) == 0 else x
    axis = normalize_axes(axis, ndim_of(x))[0]
    y = scan(x, axis)
    if include_initial:
        shape = list(shape_of(x))
        shape[axis] = 1
        y = concatenate([np.full(shape, initial), y], axis=axis)
    return y


# --- NaN-aware reductions --------------------------------------------------------------------
def _nan_mask(x):
    """(the NaN mask of x, whether any entry is NaN); under vmap the mask is one per
    example (a batched value), the decision taken over the whole batch. Under dualad.jit
    the mask is recorded and the NaN handling always taken (right for every value)."""
    if staged_unbatched(x):
        return np.isnan(staged_value(x)), True
    mask = np.isnan(primal_value(x))
    return (mask if not is_batched(x) else map_value(x, np.isnan)), mask.any()


def _nan_free(x, fill):
    mask, some = _nan_mask(x)
    return (_where(mask, fill, x) if some else x), mask


def _counts(mask, axis, keepdims, like):
    return np.sum(np.logical_not(mask), axis=axis, keepdims=keepdims).astype(   # mask: bool
        _float_dtype(unguarded_value(like)))


def _float_dtype(x):
    """The floating dtype of x (float64 for integers): masks and counts are built in it,
    so float32 tangents stay float32."""
    return np.result_type(x, np.float16)


def _skipped(name, a, where, fill):
    """(a with the skipped entries set to ``fill``, the mask of skipped entries): the NaNs
    and, with ``where=``, the entries the mask leaves out."""
    mask, some = _nan_mask(a)
    sel = mask_of(f"numpy.{name}", a, where)
    if sel is not None:
        mask = np.logical_or(mask, np.logical_not(sel))   # (a traced mask under jit)
        some = some or bool(np.any(primal_value(mask)))
    return (_where(mask, fill, a) if some else a), mask


@implements(np.nansum)
def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True):
    _no_out("nansum", out)
    a = cast_for("numpy.nansum", a, dtype)
    s = sum_(_skipped("nansum", a, where, 0.0)[0], axis=axis, keepdims=keepdims)
    return s if initial is None else s + initial


@implements(np.nanprod)
def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True):
    _no_out("nanprod", out)
    a = cast_for("numpy.nanprod", a, dtype)
    p = prod(_skipped("nanprod", a, where, 1.0)[0], axis=axis, keepdims=keepdims)
    return p if initial is None else p * initial


@implements(np.nancumsum)
def nancumsum(a, axis=None, dtype=None, out=None):
    _no_out("nancumsum", out)
    return cumsum(_nan_free(cast_for("numpy.nancumsum", a, dtype), 0.0)[0], axis)


@implements(np.nancumprod)
def nancumprod(a, axis=None, dtype=None, out=None):
    _no_out("nancumprod", out)
    return cumprod(_nan_free(cast_for("numpy.nancumprod", a, dtype), 1.0)[0], axis)


@implements(np.nanmean)
def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, where=True):
    _no_out("nanmean", out)
    a = cast_for("numpy.nanmean", a, dtype)
    x, mask = _skipped("nanmean", a, where, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return sum_(x, axis=axis, keepdims=keepdims) / _counts(mask, _axes(axis, a), keepdims, a)


@implements(np.nanvar)
def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=True, mean=None,
           correction=None):
    """Σ |a − m|² / (n − ddof) over the entries that are not NaN (and selected by
    ``where=``); m = ``mean=`` (NumPy's precomputed mean, keepdims shape) if given."""
    _no_out("nanvar", out)
    ddof = pick_ddof("numpy.nanvar", a, ddof, correction)
    a = cast_for("numpy.nanvar", a, dtype)
    x, mask = _skipped("nanvar", a, where, 0.0)
    axes = _axes(axis, a)
    n = _counts(mask, axes, True, a)
    with np.errstate(invalid="ignore", divide="ignore"):
        m = sum_(x, axis=axes, keepdims=True) / n if mean is None else mean
        # decisions on the whole batch's values under vmap (np.any of a batched value is
        # one answer per example)
        staged = is_staged(mask)   # dualad.jit: the general paths, recorded
        d = _where(mask, 0.0, x - m) if staged or np.any(primal_value(mask)) else x - m
        dof = np.maximum(n - ddof, 0.0)
        v = sum_(d * d, axis=axes, keepdims=True) / dof
        v = _where(dof <= 0, np.nan, v) if staged or np.any(primal_value(dof) <= 0) else v
    return v if keepdims else reshape(v, _reduced_shape(shape_of(a), axes))


@implements(np.nanstd)
def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=True, mean=None,
           correction=None):
    # std_sqrt: the derivative is 0 where the variance is 0, as for std (reductions.std)
    return std_sqrt(nanvar(a, axis, dtype, out, ddof, keepdims, where, mean, correction))


def _nan_extremum(name, red, fill):
    def fn(a, axis=None, out=None, keepdims=False, initial=None, where=True):
        """The extremum of the entries that are not NaN (and selected by ``where=``;
        ``initial=`` is one more operand, as in NumPy)."""
        _no_out(name, out)
        x, mask = _skipped(name, a, where, fill)
        r = red(x, axis=axis, keepdims=keepdims, initial=initial)
        if initial is not None:
            return r
        if staged_unbatched(mask):   # dualad.jit: recorded
            kept = np.sum(np.logical_not(mask), axis=_axes(axis, a), keepdims=keepdims)
            return _where(kept == 0, np.nan, r)
        all_nan = np.all(mask, axis=_axes(axis, a), keepdims=keepdims)
        return _where(all_nan, np.nan, r) if np.any(primal_value(all_nan)) else r
    fn.__name__ = name
    return fn


nanmax = _nan_extremum("nanmax", max_, -np.inf)
nanmin = _nan_extremum("nanmin", min_, np.inf)


def _axes(axis, a):
    return normalize_axes(axis, ndim_of(a))


def _reduced_shape(shape, axes):
    return tuple(s for i, s in enumerate(shape) if i not in axes)


# --- average, ptp and the zero-derivative reductions -----------------------------------------
@implements(np.average)
def average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    """``Σ w·a / Σ w`` along ``axis``; differentiable in ``a`` and in ``weights``."""
    axes = _axes(axis, a)
    if weights is None:
        avg = mean(a, axis=axes, keepdims=keepdims)
        scale = float(math.prod(shape_of(a)[i] for i in axes))
        return (avg, np.full(shape_of(avg), scale)) if returned else avg
    ws, xs = shape_of(weights), shape_of(a)
    if ws != xs:
        if axis is None:
            raise TypeError(f"average: axis must be given when the weights (shape {ws}) and "
                            f"a (shape {xs}) differ in shape")
        if len(ws) != 1 or len(axes) != 1 or ws[0] != xs[axes[0]]:
            raise ValueError(f"average: weights of shape {ws} do not match a of shape {xs} "
                             f"along axis {axis}")
        weights = reshape(weights, tuple(ws[0] if i == axes[0] else 1 for i in range(len(xs))))
    w = broadcast_to(weights, np.broadcast_shapes(shape_of(weights), xs))
    scale = sum_(w, axis=axes, keepdims=keepdims)
    if any_true(staged_value(scale) == 0.0):   # under jit: a guard on the answer only
        raise ZeroDivisionError("average: weights sum to zero, can't be normalized")
    avg = sum_(a * w, axis=axes, keepdims=keepdims) / scale
    return (avg, broadcast_to(scale, shape_of(avg))) if returned else avg


@implements(np.ptp)
def ptp(a, axis=None, out=None, keepdims=False):
    """max − min (ties share the cotangent evenly, as in max and min)."""
    _no_out("ptp", out)
    return max_(a, axis=axis, keepdims=keepdims) - min_(a, axis=axis, keepdims=keepdims)


implements(np.nanmax)(nanmax)
implements(np.nanmin)(nanmin)
def _staged_count(fn, finish):
    """``fn`` (np.any, np.all, np.count_nonzero) of values alone. Under a dualad.jit
    trace it is recorded as a count of nonzero entries, so ``while np.any(err > tol)``
    guards only the truth of the answer (a bool guard), not the whole mask; otherwise
    (and with keywords other than axis/keepdims, or under vmap) on the plain values."""
    plain = value_only(fn)

    def call(a, axis=None, *args, keepdims=False, **kwargs):
        if args or kwargs or not staged_unbatched(a):
            if keepdims:
                kwargs["keepdims"] = keepdims
            return plain(a, axis, *args, **kwargs)
        count = sum_(staged_value(a) != 0, axis=axis, keepdims=keepdims)
        size = math.prod(shape_of(a)) // max(1, math.prod(shape_of(count)))
        return finish(count, size)
    call.__name__ = fn.__name__
    call.__doc__ = fn.__doc__
    return call


implements(np.all)(_staged_count(np.all, lambda count, size: count == size))
implements(np.any)(_staged_count(np.any, lambda count, size: count > 0))
implements(np.count_nonzero)(_staged_count(np.count_nonzero, lambda count, size: count))

