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

from ...core.tracer import Box, ndim_of, shape_of, unguarded_value
from ...core.values import map_value, nondiff_value, staged_unbatched, staged_value
from ...core.primitive import Primitive, implements, register, sample
from .._batch import axes_in_batch, axis_in_batch, example_ndim
from ...core.batch_axes import batch_ndim, batched_axis, shift_axes
from .._util import normalize_axes
from .keyword_args import cast_for, mask_of, no_out, pick_ddof
from .linear import expand_reduced, sum_p

__all__ = [
    "sum", "mean", "var", "std", "reduction_batch", "cumulative_batch", "max_p", "min_p",
    "max", "min", "prod_p", "prod", "cumsum_p", "cumsum"
]

# --- sum -----------------------------------------------------------------------------
def sum(x, axis=None, keepdims=False, dtype=None):
    if dtype is not None and not np.issubdtype(dtype, np.floating):
        raise TypeError(f"sum: dtype={dtype} would make the result not differentiable")
    return sum_p(x, axis=normalize_axes(axis, ndim_of(x)), keepdims=bool(keepdims))


def mean(x, axis=None, keepdims=False):
    axes = normalize_axes(axis, ndim_of(x))
    n = math.prod(shape_of(x)[a] for a in axes)
    return sum_p(x, axis=axes, keepdims=bool(keepdims)) / float(n)


_mean = mean   # var's keyword mean= shadows the function inside var


def _dof(x, n, ddof):
    """n − ddof as the divisor of var; where it is ≤ 0, a zero of x's floating dtype, so
    the value is NumPy's (nan or inf) and so is the derivative — not a negative count."""
    if n - ddof > 0:
        return float(n - ddof)
    dt = np.result_type(_plain(x))
    return (dt if dt.kind in "fc" else np.dtype(np.float64)).type(0)


@implements(np.var)
def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True, mean=None,
        correction=None):
    """``np.var`` with NumPy's signature: Σ |a − m|² / (n − ddof) over the selected entries
    (``where=``), with m = ``mean=`` if given (NumPy's precomputed mean, keepdims shape)
    else their mean. ``correction=`` is ddof's array-API name."""
    no_out("var", out, a)
    ddof = pick_ddof("var", a, ddof, correction)
    x = cast_for("var", a, dtype)
    mask = mask_of("var", x, where)
    axes = normalize_axes(axis, ndim_of(x))
    if mask is None and mean is None:
        return _var(x, axes, ddof, keepdims)
    from .elementwise import where as select
    if mask is None:
        count = float(math.prod(shape_of(x)[i] for i in axes))
        centred = x - mean
    else:
        count = np.sum(mask, axis=axes, keepdims=True, dtype=_float(x))
        with np.errstate(invalid="ignore", divide="ignore"):
            m = (sum_p(select(mask, x, 0.0), axis=axes, keepdims=True) / count
                 if mean is None else mean)
        centred = select(mask, x - m, 0.0)
        count = count if keepdims else np.squeeze(count, axis=axes)
    with np.errstate(invalid="ignore", divide="ignore"):
        dof = np.maximum(np.asarray(count, dtype=_float(x)) - ddof, 0)
        return _squares(centred, axes, keepdims) / dof


def _reduced(shape, axes, keepdims):
    return tuple(1 if i in axes else n for i, n in enumerate(shape) if keepdims or i not in axes)


def _float(x):
    dt = np.result_type(_plain(x))
    return np.dtype(np.float64) if dt.kind not in "fc" else np.finfo(dt).dtype


def _squares(centred, axes, keepdims):
    """Σ |c|² (real for complex c, as NumPy's variance)."""
    from .elementwise import is_complex
    if is_complex(centred):
        from .complex_numbers import imag, real
        re, im = real(centred), imag(centred)
        return sum_p(re * re + im * im, axis=axes, keepdims=bool(keepdims))
    return sum_p(centred * centred, axis=axes, keepdims=bool(keepdims))


def _var(x, axes, ddof, keepdims):
    n = math.prod(shape_of(x)[a] for a in axes)
    centred = x - _mean(x, axis=axes, keepdims=True)
    dof = _dof(x, n, ddof)
    return _squares(centred, axes, keepdims) / (dof.real if isinstance(dof, np.generic) else dof)


@implements(np.std)
def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True, mean=None,
        correction=None):
    """√var (the same keywords as :func:`var`). Where var = 0 the derivative is 0 (see
    ``std_sqrt``): exact for a size-1 reduction (std ≡ 0, e.g. batch normalization over a
    batch of one), PyTorch's convention for constant data. Where n − ddof ≤ 0 the value
    is NumPy's nan (or inf), and so is the derivative."""
    from .elementwise import std_sqrt
    return std_sqrt(var(a, axis, dtype, out, ddof, keepdims, where=where, mean=mean,
                        correction=correction))


def reduction_batch(prim):
    """vmap of a reduction over the example's ``axis`` (a tuple, or None for all): the
    same reduction over those axes shifted behind the batch axis."""
    def rule(args, batched, axis, keepdims):
        x = args[0]
        return prim(x, axis=axes_in_batch(axis, example_ndim(x, True)), keepdims=keepdims)
    rule.__name__ = rule.__qualname__ = f"{prim.name}_batch"
    return rule


def cumulative_batch(prim):
    """vmap of a scan along the example's ``axis``: the same scan along axis + 1."""
    def rule(args, batched, axis):
        x = args[0]
        return prim(x, axis=axis_in_batch(axis, example_ndim(x, True)))
    rule.__name__ = rule.__qualname__ = f"{prim.name}_batch"
    return rule


# --- max / min ----------------------------------------------------------------------------
def _selector(x, axes, extremum):
    """(hit, m): hit = [x == extremum over ``axes``], m = hit / number of ties; m in x's
    floating dtype (a float32 x keeps float32 derivatives). Under vmap one pair per
    example (``map_value``: the plain value carries the batch axes in front, counted
    against x's per-example ndim), so the extremum is taken from x again, not from ans."""
    nd = ndim_of(x)

    def hits(xp):
        ax = shift_axes(axes, np.ndim(xp) - nd)
        return xp == extremum(xp, axis=ax, keepdims=True), ax

    def share(xp):
        hit, ax = hits(xp)
        m = hit / np.sum(hit, axis=ax, keepdims=True)
        dt = getattr(xp, "dtype", None)
        return m.astype(dt) if dt is not None and dt.kind == "f" and m.dtype != dt else m
    if staged_unbatched(x):
        xs = staged_value(x)   # dualad.jit records the selection, right for every value
        return hits(xs)[0], share(xs)
    return map_value(x, lambda xp: hits(xp)[0]), map_value(x, share)


def _plain(v):
    return nondiff_value(v)   # under vmap the mask keeps its batch axis


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
        hit, m = _selector(x, axis, impl)
        return sum_p(where(hit, t * m, 0.0), axis=batched_axis(axis, t, x),
                     keepdims=keepdims)

    def vjp(ct, ans, x, axis, keepdims):
        from .elementwise import where
        hit, m = _selector(x, axis, impl)
        return where(hit, expand_reduced(ct, shape_of(x), axis, keepdims, batch_ndim(ct, ans)) * m, 0.0)

    prim.defjvp(jvp)
    prim.defvjp(vjp)
    prim.defbatch(reduction_batch(prim))
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
def max(a, axis=None, out=None, keepdims=False, initial=None, where=True):
    """``np.max`` with NumPy's signature: ``where=`` selects the entries (the others
    become −∞), ``initial=`` is one more operand (maximum(max, initial))."""
    return _extreme("max", max_p, -np.inf, a, axis, out, keepdims, initial, where)


@implements(np.min, np.amin)
def min(a, axis=None, out=None, keepdims=False, initial=None, where=True):
    """``np.min`` with NumPy's signature (see :func:`max`)."""
    return _extreme("min", min_p, np.inf, a, axis, out, keepdims, initial, where)


def _extreme(name, prim, fill, a, axis, out, keepdims, initial, where):
    no_out(name, out, a)
    mask = mask_of(name, a, where)
    if mask is not None:
        if initial is None:   # NumPy's own rule: an empty selection needs a start value
            raise ValueError(f"{name}: where= needs initial= (as in NumPy: a {name}imum has "
                             f"no identity), e.g. np.{name}(x, where=mask, initial={fill})")
        from .elementwise import where as select
        a = select(mask, a, fill)
    axes = normalize_axes(axis, ndim_of(a))
    if initial is not None and any(shape_of(a)[i] == 0 for i in axes):
        # an empty reduction is its initial value (NumPy's); a has no entry to differentiate
        r = np.full(_reduced(shape_of(a), axes, keepdims), fill, dtype=_float(a))
    else:
        r = prim(a, axis=axes, keepdims=bool(keepdims))
    if initial is None:
        return r
    from .elementwise import maximum, minimum
    return (maximum if name == "max" else minimum)(r, initial)


# --- prod -------------------------------------------------------------------------------
prod_p = register(Primitive("prod", lambda x, axis, keepdims: np.prod(x, axis=axis,
                                                                       keepdims=keepdims),
                            sparsity="reduction",
                            sympy=lambda sp, x, axis, keepdims: np.prod(
                                np.asarray(x, dtype=object), axis=axis, keepdims=keepdims)))


def _prod_others(x, ans, axes, keepdims):
    """∂(∏x)/∂x_i = ∏_{j≠i} x_j. A plain x with no zero or subnormal entry (first order)
    divides, ans / x; any other x takes the division-free products (:func:`_others`),
    exact with zeros, and whose own derivatives (the Hessian's) do not cancel where some
    x_i is small, as those of ans / x_i do (∂(ans/x_i)/∂x_i = P/x_i − P/x_i)."""
    if division_safe(x):
        a = ans if keepdims else _expand_plainshape(ans, shape_of(x), axes)
        return a / x
    return _others(x, axes)


def division_safe(x):
    """Whether a product's rules may divide by x (prod's here, cumprod's): only for a
    plain x (first order) with no entry zero or subnormal. Their own derivatives would
    cancel catastrophically where some x_i is small (∂(y/x_i)/∂x_j loses digits as
    x_i → 0), so a traced x (a higher order, vmap, jit) always takes the division-free
    products."""
    if isinstance(x, Box):
        return False
    xp = np.asarray(x)
    return bool(np.all(np.abs(xp) >= np.finfo(np.result_type(xp, np.float16)).tiny))


def _others(x, axes):
    """∏_{j≠i} x_j over the reduced ``axes``: the product of the entries before i times
    that of the entries after i (prefix and suffix products by recursive doubling, ⌈log₂
    m⌉ rounds of slices and products for m reduced entries): no division."""
    from .shape import flip, moveaxis, reshape
    shape, nd = shape_of(x), ndim_of(x)
    axes = tuple(sorted(axes))
    kept = tuple(shape[i] for i in range(nd) if i not in axes)
    reduced = tuple(shape[i] for i in axes)
    m = math.prod(reduced)
    if m == 0:
        return x
    last = tuple(range(nd - len(axes), nd))
    flat = reshape(moveaxis(x, axes, last), kept + (m,))
    before = _exclusive_products(flat, m)
    after = flip(_exclusive_products(flip(flat, -1), m), -1)
    return moveaxis(reshape(before * after, kept + reduced), last, axes)


def _exclusive_products(v, m):
    """p_k = ∏_{j<k} v_j along the last axis (p_0 = 1), by recursive doubling."""
    from .shape import concatenate
    from .indexing import getitem
    dtype = np.result_type(unguarded_value(v))
    ones = np.ones(shape_of(v)[:-1] + (1,), dtype=dtype if dtype.kind in "fc" else np.float64)

    def shifted(u, d):   # u_{k−d}, with 1 for k < d
        return concatenate([np.broadcast_to(ones, shape_of(v)[:-1] + (d,)),
                            getitem(u, idx=(Ellipsis, slice(0, m - d)))], axis=-1)
    p, d = v, 1
    while d < m:          # inclusive prefix products
        p = p * shifted(p, d)
        d *= 2
    return shifted(p, 1)


def _expand_plainshape(a, x_shape, axes, keep=False):
    from .shape import reshape
    if keep:
        return a
    return reshape(a, tuple(1 if i in axes else s for i, s in enumerate(x_shape)))


prod_p.defjvp(lambda t, ans, x, axis, keepdims:
              sum_p(t * _prod_others(x, ans, axis, keepdims),
                    axis=batched_axis(axis, t, x), keepdims=keepdims))
prod_p.defvjp(lambda ct, ans, x, axis, keepdims:
              expand_reduced(ct, shape_of(x), axis, keepdims, batch_ndim(ct, ans))
              * _prod_others(x, ans, axis, keepdims))
prod_p.defbatch(reduction_batch(prod_p))


@implements(np.prod)
def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True):
    """``np.prod`` with NumPy's signature: ``where=`` multiplies the selected entries (the
    others become 1), ``initial=`` is one more factor."""
    no_out("prod", out, a)
    a = cast_for("prod", a, dtype)
    mask = mask_of("prod", a, where)
    if mask is not None:
        from .elementwise import where as select
        a = select(mask, a, 1.0)
    p = prod_p(a, axis=normalize_axes(axis, ndim_of(a)), keepdims=bool(keepdims))
    return p if initial is None else p * initial


# --- cumsum --------------------------------------------------------------------------------
cumsum_p = register(Primitive("cumsum", lambda x, axis: np.cumsum(x, axis=axis), linear=True,
                              sparsity="cumulative",
                              sympy=lambda sp, x, axis: np.cumsum(
                                  np.asarray(x, dtype=object), axis=axis)))


def _reverse_cumsum(ct, axis):
    from .shape import flip
    return flip(cumsum_p(flip(ct, axis), axis=axis), axis)


cumsum_p.defjvp(lambda t, ans, x, axis: cumsum_p(t, axis=batched_axis(axis, t, x)))
cumsum_p.defvjp(lambda ct, ans, x, axis: _reverse_cumsum(ct, batched_axis(axis, ct, ans)))
cumsum_p.defbatch(cumulative_batch(cumsum_p))


@implements(np.cumsum)
def cumsum(x, axis=None, dtype=None, out=None):
    """``np.cumsum`` with NumPy's signature (``dtype=``: a floating accumulation type)."""
    from .shape import ravel
    no_out("cumsum", out, x)
    x = cast_for("cumsum", x, dtype)
    if axis is None:
        x, axis = ravel(x), 0
    return cumsum_p(x, axis=normalize_axes(axis, ndim_of(x))[0])


_ = builtins  # the builtins stay reachable although sum/max/min are shadowed here

max_p.samples = [sample((2, 3), axis=(1,), keepdims=False), sample((4,), axis=(0,), keepdims=True)]
min_p.samples = [sample((2, 3), axis=(0,), keepdims=False), sample((4,), axis=(0,), keepdims=False)]
prod_p.samples = [sample((2, 3), axis=(1,), keepdims=False, domain=[(0.5, 2.0)]),
                  sample((3,), axis=(0,), keepdims=True, domain=[(0.5, 2.0)])]
cumsum_p.samples = [sample((2, 3), axis=1), sample((4,), axis=0)]
