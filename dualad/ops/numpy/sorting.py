"""Sorting and order statistics: sort (a primitive), partition, unique, median,
quantile, percentile and their NaN-aware forms; index functions pass through.

    sort along an axis:   y = x[π],  π = argsort(x) (stable)
        ẏ = M ṫ[π]        x̄ = scatter(M ū, π)

where M averages within each group of tied values (identity without ties). So
the derivative of ``sort`` does not depend on the order in which tied entries
happen to appear, and agrees with ``max``/``min``: ``sort(x)[-1]`` and ``max(x)``
both split the cotangent evenly among tied maxima.

Order statistics are linear in the sorted values, ``Q = s[lo] + g·(s[hi] − s[lo])``,
with ``lo``, ``hi`` and ``g`` computed exactly as NumPy's ``method`` does (all
thirteen methods). The derivative reaches the selected or interpolated entries
(ties: evenly among the tied entries, through ``sort``); a traced ``q`` is
differentiable for the continuous methods (∂Q/∂q = (s[hi] − s[lo])·∂v/∂q, with v the
virtual index), piecewise constant for the discrete ones. Slices containing NaN give
NaN (nan-aware variants skip NaNs; all-NaN slices give NaN), with zero derivative.

``partition`` returns the fully sorted array, which is a valid partition for every
``kth`` (NumPy leaves the order inside each part unspecified); its derivative is
sort's. ``unique`` returns the sorted distinct values, each with the tie-averaged
derivative of its group. argsort, argpartition, searchsorted, digitize,
nanargmax/nanargmin, argwhere, flatnonzero, isin, lexsort: integer or boolean
results of the values, derivative 0.
"""
from __future__ import annotations

import math

import numpy as np

from ...core.tracer import Box, ndim_of, primal_value, shape_of
from ...core.primitive import Primitive, implements, register, sample
from .._batch import axis_in_batch
from .._util import normalize_axes, value_only
from ..core.elementwise import where
from ..core.indexing import getitem
from ..core.shape import ravel, reshape, transpose
from .sort_permute import sort_tangent

__all__ = [
    "sort_p", "sort", "partition", "unique", "quantile", "nanquantile", "percentile",
    "nanpercentile", "median", "nanmedian"
]

# --- sort -------------------------------------------------------------------------------------
sort_p = register(Primitive("sort", lambda x, axis: np.sort(x, axis=axis, kind="stable"),
                           sparsity="slice"))


# ẏ = t in x's sorted order, ū ↦ ū in x's order (ties averaged): one primitive,
# sort_permute (its own module), whose argument x gives each example under vmap its own
# permutation
def _sort_jvp(t, ans, x, axis):
    return sort_tangent(t, x, axis)


def _sort_vjp(ct, ans, x, axis):
    return sort_tangent(ct, x, axis, inverse=True)


sort_p.defjvp(_sort_jvp)
sort_p.defvjp(_sort_vjp)
# vmap: each example's slices along its axis, sorted, are the batch's along axis + 1
sort_p.defbatch(lambda args, batched, axis: sort_p(
    args[0], axis=axis_in_batch(axis, ndim_of(args[0]) - 1)))
sort_p.samples = [sample((4,), axis=0), sample((2, 3), axis=0)]
# No SymPy translation: SymPy has no sort of symbols. At ties sort is not differentiable;
# the tie average is tested separately (central differences agree with it for pairs).


@implements(np.sort)
def sort(a, axis=-1, kind=None, order=None, *, stable=None):
    if order is not None:
        raise NotImplementedError("sort: order= (structured arrays) is not differentiable")
    if axis is None:
        a, axis = ravel(a), 0
    if ndim_of(a) == 0:
        raise ValueError("sort: cannot sort a 0-d array along an axis")
    return sort_p(a, axis=normalize_axes(axis, ndim_of(a))[0])


@implements(np.partition)
def partition(a, kth, axis=-1, kind="introselect", order=None):
    """A partition of ``a`` around ``kth``: the sorted array (see the module docstring)."""
    xs = shape_of(a)
    n = math.prod(xs) if axis is None else xs[normalize_axes(axis, len(xs))[0]]
    k = np.asarray(kth)
    if np.issubdtype(k.dtype, np.bool_) or not np.issubdtype(k.dtype, np.integer):
        raise TypeError(f"partition: kth must be an integer or a sequence of integers, got {kth!r}")
    if np.any((k < -n) | (k >= n)):
        raise ValueError(f"partition: kth {kth!r} out of bounds for an axis of length {n}")
    return sort(a, axis=axis, order=order)


# --- unique --------------------------------------------------------------------------------
def _unique_values(a, result_values, sorted_primal):
    """Gather the traced distinct values in ``result_values``'s order from sort(ravel(a))."""
    s = sort(ravel(a), axis=0)
    pos = np.searchsorted(sorted_primal, result_values, side="left")
    return getitem(s, idx=(pos,))


@implements(np.unique)
def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *,
           equal_nan=True, **kwargs):
    """``np.unique``: the sorted distinct values, differentiable (ties: averaged)."""
    if axis is not None:
        raise NotImplementedError("unique: axis= is not supported on traced values; "
                                  "use axis=None")
    ap = primal_value(ar)
    res = np.unique(ap, return_index, return_inverse, return_counts, axis=None,
                    equal_nan=equal_nan, **kwargs)
    values = res[0] if isinstance(res, tuple) else res
    traced = _unique_values(ar, values, np.sort(ap, axis=None))
    return (traced,) + tuple(res[1:]) if isinstance(res, tuple) else traced


def _unique_named(fn):
    def call(x):
        xp = primal_value(x)
        res = fn(xp)
        traced = _unique_values(x, res.values if hasattr(res, "values") else res,
                                np.sort(xp, axis=None))
        return res._replace(values=traced) if hasattr(res, "_replace") else traced
    call.__name__ = fn.__name__
    return call


# --- quantiles -------------------------------------------------------------------------------
_CONTINUOUS = {"linear": None, "weibull": (0.0, 0.0), "hazen": (0.5, 0.5),
               "median_unbiased": (1 / 3.0, 1 / 3.0), "normal_unbiased": (3 / 8.0, 3 / 8.0),
               "interpolated_inverted_cdf": (0.0, 1.0)}
_DISCRETE = ("lower", "higher", "nearest", "inverted_cdf", "closest_observation")
_METHODS = tuple(_CONTINUOUS) + _DISCRETE + ("midpoint", "averaged_inverted_cdf")


def _boundaries(v, take_previous):
    prev = np.floor(v)
    out = np.where(take_previous(v - prev, v), prev, prev + 1).astype(np.intp)
    return np.maximum(out, 0)


def _plan(n, q, method):
    """``(lo, hi, g, dv)`` for a sample of n values: Q = lerp(s[lo], s[hi], g), as NumPy's
    ``method`` computes it; dv = ∂g/∂q (0 for the piecewise constant methods)."""
    if method in _DISCRETE:
        if method == "lower":
            i = np.floor((n - 1) * q).astype(np.intp)
        elif method == "higher":
            i = np.ceil((n - 1) * q).astype(np.intp)
        elif method == "nearest":
            i = np.around((n - 1) * q).astype(np.intp)
        elif method == "inverted_cdf":
            i = _boundaries(n * q - 1, lambda g, v: g == 0)
        else:
            i = _boundaries(n * q - 1 - 0.5, lambda g, v: (g == 0) & (np.floor(v) % 2 == 1))
        i = np.minimum(i, n - 1)
        return i, i, None, 0.0
    if method == "linear":
        v, dv = (n - 1) * q, float(n - 1)
    elif method == "midpoint":
        v, dv = 0.5 * (np.floor((n - 1) * q) + np.ceil((n - 1) * q)), 0.0
    elif method == "averaged_inverted_cdf":
        v, dv = n * q - 1, 0.0
    else:
        alpha, beta = _CONTINUOUS[method]
        v, dv = n * q + (alpha + q * (1 - alpha - beta)) - 1, float(n + 1 - alpha - beta)
    v = np.asarray(v, dtype=float)
    lo = np.floor(v)
    hi = lo + 1
    above, below = v >= n - 1, v < 0
    lo, hi = np.where(above, n - 1, np.where(below, 0, lo)), np.where(above, n - 1,
                                                                        np.where(below, 0, hi))
    g = v - np.where(above, -1, lo)        # as NumPy: the clipped index -1 stands for n - 1
    if method == "averaged_inverted_cdf":
        g = np.where(g == 0, 0.5, 1.0)
    elif method == "midpoint":
        g = np.where(v % 1 == 0, 0.0, 0.5)
    return lo.astype(np.intp), hi.astype(np.intp), g, dv


def _gather(s, pos, lead, q_nd):
    idx = tuple(np.arange(n).reshape((1,) * q_nd + tuple(n if j == i else 1
                                                         for j in range(len(lead))))
                for i, n in enumerate(lead)) + (pos,)
    return getitem(s, idx=idx)


def _quantile(name, a, q, axis, method, keepdims, nan_aware, median=False, q_given=None):
    if method not in _METHODS:
        raise ValueError(f"{name}: {method!r} is not a valid method; use one of {_METHODS}")
    qp = np.asarray(primal_value(q), dtype=float)
    if not np.all((qp >= 0) & (qp <= 1)):
        raise ValueError(f"{name}: quantiles must be in the range [0, 1]"
                         + (" (percentiles in [0, 100])" if "percentile" in name else ""))
    xs = shape_of(a)
    axes = normalize_axes(axis, len(xs))
    if not xs:
        a, xs, axes = reshape(a, (1,)), (1,), (0,)
    keep = [i for i in range(len(xs)) if i not in axes]
    lead = tuple(xs[i] for i in keep)
    n = math.prod(xs[i] for i in axes)
    if n == 0:
        raise ValueError(f"{name}: cannot take a quantile of an empty axis (shape {xs})")
    x = reshape(transpose(a, keep + list(axes)), lead + (n,))
    s = sort_p(x, axis=len(lead))
    sp = primal_value(s)
    nan_last = np.isnan(sp[..., -1])
    q_nd, ones = qp.ndim, (1,) * len(lead)
    if nan_aware and nan_last.any():
        valid = np.sum(~np.isnan(sp), axis=-1)
        lo = np.zeros(qp.shape + lead, np.intp)
        hi = np.zeros_like(lo)
        g = np.zeros(qp.shape + lead) if method not in _DISCRETE else None
        dv = np.zeros(qp.shape + lead)
        for m in np.unique(valid[valid > 0]):
            sel = valid == m
            l_, h_, g_, d_ = _plan(int(m), qp, method)
            lo = np.where(sel, l_.reshape(qp.shape + ones), lo)
            hi = np.where(sel, h_.reshape(qp.shape + ones), hi)
            dv = np.where(sel, d_, dv)
            if g is not None:
                g = np.where(sel, g_.reshape(qp.shape + ones), g)
        missing = valid == 0
    else:
        lo, hi, g, dv = _plan(n, qp, method)
        lo, hi = lo.reshape(qp.shape + ones), hi.reshape(qp.shape + ones)
        g = None if g is None else g.reshape(qp.shape + ones)
        missing = nan_last
    if g is not None:   # as NumPy: a Python-number q keeps the data's precision
        q_given = q if q_given is None else q_given
        weak = isinstance(q_given, (int, float))
        g = g.astype(np.result_type(sp, np.float16) if weak else
                     np.result_type(sp, np.asarray(primal_value(q_given)), np.float16))
    low = _gather(s, lo, lead, q_nd)
    if g is None:
        r = low
    else:
        high = _gather(s, hi, lead, q_nd)
        if median:   # NumPy's median: the middle entry, or the mean of the two middle ones
            r = (low + high) * 0.5 if np.all(g == 0.5) else (
                low if not np.any(g) else where(g == 0, low, (low + high) * 0.5))
        else:
            gt = g
            if isinstance(q, Box) and np.any(dv):
                # g depends on q linearly (∂g/∂q = dv); where lo == hi (clipped) it is moot.
                gt = g + dv * (reshape(q, qp.shape + ones) - qp.reshape(qp.shape + ones))
            d = high - low
            r = where(g >= 0.5, high - d * (1.0 - gt), low + d * gt)
    if np.any(missing):
        r = where(np.broadcast_to(missing, shape_of(r)), np.nan, r)
    if keepdims:
        r = reshape(r, qp.shape + tuple(1 if i in axes else xs[i] for i in range(len(xs))))
    return r


def _no_weights(name, weights, interpolation):
    if weights is not None:
        raise NotImplementedError(f"{name}: weights= is not supported on traced values")
    if interpolation is not None:
        raise TypeError(f"{name}: interpolation= was renamed method= (NumPy 1.22)")


@implements(np.quantile)
def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, weights=None, interpolation=None):
    _no_weights("quantile", weights, interpolation)
    return _quantile("quantile", a, q, axis, method, keepdims, False)


@implements(np.nanquantile)
def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False, *, weights=None, interpolation=None):
    _no_weights("nanquantile", weights, interpolation)
    return _quantile("nanquantile", a, q, axis, method, keepdims, True)


@implements(np.percentile)
def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, weights=None, interpolation=None):
    _no_weights("percentile", weights, interpolation)
    return _quantile("percentile", a, _percent(q), axis, method, keepdims, False, q_given=q)


@implements(np.nanpercentile)
def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False, *, weights=None, interpolation=None):
    _no_weights("nanpercentile", weights, interpolation)
    return _quantile("nanpercentile", a, _percent(q), axis, method, keepdims, True,
                     q_given=q)


def _percent(q):
    return q / 100.0 if isinstance(q, Box) else np.true_divide(q, 100)


@implements(np.median)
def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The middle value, or the mean of the two middle values (ties: averaged)."""
    return _quantile("median", a, 0.5, axis, "linear", keepdims, False, median=True)


@implements(np.nanmedian)
def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    return _quantile("nanmedian", a, 0.5, axis, "linear", keepdims, True, median=True)


for _fn in (np.unique_values, np.unique_counts, np.unique_inverse, np.unique_all):
    implements(_fn)(_unique_named(_fn))
for _fn in (np.argpartition, np.searchsorted, np.digitize, np.nanargmax, np.nanargmin,
            np.argwhere, np.flatnonzero, np.isin, np.lexsort):
    implements(_fn)(value_only(_fn))
