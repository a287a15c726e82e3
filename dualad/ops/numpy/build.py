"""Building arrays from values: select, choose, kron, cross, linspace, logspace,
geomspace, meshgrid, full, interp, bincount, vander, vecdot/matvec/vecmat.

All are compositions of registry operations, exact and differentiable in every
floating argument:

    linspace(a, b)_k = a + k·(b − a)/div    ∂/∂a = 1 − k/div,  ∂/∂b = k/div
    kron(A, B)       = outer product, axes interleaved, reshaped
    cross(a, b)      = (a₁b₂ − a₂b₁, a₂b₀ − a₀b₂, a₀b₁ − a₁b₀)
    interp(x; xp, fp) = fp[j] + (fp[j+1] − fp[j])·(x − xp[j])/(xp[j+1] − xp[j])
                      for xp[j] ≤ x < xp[j+1]; left/right outside

Conventions: select/choose pass the derivative of the chosen entry only (the
conditions and indices are not differentiable). interp at a knot x = xp[j] uses the
slope of the interval to the right of the knot (0 at the last knot, where the
right extrapolation is flat); ``xp`` is differentiable too (through xp[j] and
xp[j+1]). vander builds powers by cumulative products (as NumPy), so it is exact
at x = 0 to every order.
"""
from __future__ import annotations

import operator
import warnings

import numpy as np

from ...core.tracer import Box, ndim_of, primal_value, shape_of
from ...core.values import is_batched, looped_call, nondiff_value
from ...core.primitive import implements
from .._util import normalize_axes, value_only
from ..core.elementwise import isnan, log10, power, where
from ..core.indexing import getitem, index, untake
from ..core.products import matmul
from .reductions import cumprod
from ..core.reductions import sum as sum_
from ..core.shape import (broadcast_to, cast, concatenate, expand_dims, flip, moveaxis,
                          reshape, stack)

__all__ = [
    "select", "choose", "kron", "cross", "vecdot", "matvec", "vecmat", "cov", "corrcoef",
    "linspace", "logspace", "geomspace", "meshgrid", "full", "full_like", "empty_like",
    "real_if_close", "interp", "bincount", "vander"
]

# --- select and choose ------------------------------------------------------------------
@implements(np.select)
def select(condlist, choicelist, default=0):
    if len(condlist) != len(choicelist):
        raise ValueError("select: list of cases must be same length as list of conditions")
    if not condlist:
        raise ValueError("select with an empty condition list is not possible")
    conds = [nondiff_value(c) if is_batched(c)   # vmap: per example
             else np.asarray(primal_value(c)) for c in condlist]
    for i, c in enumerate(conds):
        if c.dtype != bool:
            raise TypeError(f"select: invalid entry {i} in condlist: should be boolean ndarray")
    out = default
    for c, v in zip(reversed(conds), reversed(list(choicelist))):
        out = where(c, v, out)
    shape = np.broadcast_shapes(*[shape_of(c) for c in conds],
                                *[shape_of(v) for v in choicelist], shape_of(default))
    return broadcast_to(out, shape) if shape_of(out) != shape else out


@implements(np.choose)
def choose(a, choices, out=None, mode="raise"):
    if out is not None:
        raise TypeError("choose: out= writes in place and cannot be traced")
    idx = np.asarray(primal_value(a))
    choices = list(choices)
    n = len(choices)
    if mode == "wrap":
        idx = idx % n
    elif mode == "clip":
        idx = np.clip(idx, 0, n - 1)
    elif np.any((idx < 0) | (idx >= n)):
        raise ValueError(f"choose: invalid entry in choice array (indices must be in "
                         f"[0, {n}))")
    result = choices[0]
    for k in range(1, n):
        result = where(idx == k, choices[k], result)
    shape = np.broadcast_shapes(idx.shape, *[shape_of(c) for c in choices])
    return broadcast_to(result, shape) if shape_of(result) != shape else result


# --- products ---------------------------------------------------------------------------
@implements(np.kron)
def kron(a, b):
    sa, sb = shape_of(a), shape_of(b)
    nd = max(len(sa), len(sb))
    sa, sb = (1,) * (nd - len(sa)) + sa, (1,) * (nd - len(sb)) + sb
    A = reshape(a, tuple(v for s in sa for v in (s, 1)))
    B = reshape(b, tuple(v for s in sb for v in (1, s)))
    return reshape(A * B, tuple(x * y for x, y in zip(sa, sb)))


def _numpy_crosses_2_vectors():
    """Whether this NumPy still takes 2-vectors in np.cross (deprecated in 2.0, an error
    from 2.5 on): the traced call accepts exactly what the plain call accepts."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            np.cross([1.0, 0.0], [0.0, 1.0])
        except ValueError:
            return False
    return True


_CROSS_2_VECTORS = _numpy_crosses_2_vectors()


@implements(np.cross)
def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    if axis is not None:
        axisa = axisb = axisc = axis
    a = moveaxis(a, normalize_axes(axisa, ndim_of(a))[0], -1)
    b = moveaxis(b, normalize_axes(axisb, ndim_of(b))[0], -1)
    na, nb = shape_of(a)[-1], shape_of(b)[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ValueError(f"cross: incompatible dimensions for cross product (dimension must "
                         f"be 2 or 3), got vectors of length {na} and {nb}")
    if 2 in (na, nb) and not _CROSS_2_VECTORS:
        raise ValueError(f"cross: this NumPy ({np.__version__}) takes only 3-vectors, got vectors "
                         f"of length {na} and {nb} (shapes {shape_of(a)} and {shape_of(b)}); for "
                         f"2-vectors write a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0], or pad "
                         f"them with a zero third component")
    a0, a1, b0, b1 = index(a, (..., 0)), index(a, (..., 1)), index(b, (..., 0)), index(b, (..., 1))
    z = a0 * b1 - a1 * b0
    if na == 2 and nb == 2:
        warnings.warn("cross: arrays of 2-dimensional vectors are deprecated in NumPy 2",
                      DeprecationWarning, stacklevel=2)
        return z
    if na == 3 and nb == 3:
        a2, b2 = index(a, (..., 2)), index(b, (..., 2))
        cp = [a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, z]
    elif na == 2:
        b2 = index(b, (..., 2))
        cp = [a1 * b2, -(a0 * b2), z]
    else:
        a2 = index(a, (..., 2))
        cp = [-(a2 * b1), a2 * b0, z]
    shape = np.broadcast_shapes(*[shape_of(c) for c in cp])
    c = stack([broadcast_to(v, shape) for v in cp], axis=-1)
    return moveaxis(c, -1, normalize_axes(axisc, ndim_of(c))[0])


@implements(np.vecdot)
def vecdot(x1, x2, /, *, axis=-1):
    _real("vecdot", x1)
    return sum_(x1 * x2, axis=axis)


@implements(np.matvec)
def matvec(x1, x2, /):
    _real("matvec", x1)
    return index(matmul(x1, expand_dims(x2, -1)), (..., 0))


@implements(np.vecmat)
def vecmat(x1, x2, /):
    _real("vecmat", x1)
    return index(matmul(expand_dims(x1, -2), x2), (..., 0, slice(None)))


def _real(name, x):
    if np.iscomplexobj(primal_value(x)):
        raise NotImplementedError(f"{name}: complex operands (conjugated by NumPy) are not "
                                  f"supported here; use einsum with np.conj")


# --- covariance --------------------------------------------------------------------------
@implements(np.cov)
def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *,
        dtype=None):
    """``np.cov``, composed as NumPy computes it (weights may be traced too)."""
    from .joining import atleast_2d
    from .reductions import average
    from ..core.shape import squeeze, transpose
    if ddof is not None and ddof != int(ddof):
        raise ValueError("cov: ddof must be integer")
    _real("cov", m)
    X = atleast_2d(m) * np.ones((), dtype=np.float64)   # NumPy's cov computes in float64
    if not rowvar and shape_of(X)[0] != 1:
        X = transpose(X)
    if y is not None:
        Y = atleast_2d(y)
        if not rowvar and shape_of(Y)[0] != 1:
            Y = transpose(Y)
        X = concatenate([X, Y], axis=0)
    ddof = (0 if bias else 1) if ddof is None else ddof
    w = None
    if fweights is not None:
        w = fweights * 1.0 if isinstance(fweights, Box) else np.asarray(fweights, dtype=float)
    if aweights is not None:
        aweights = aweights if isinstance(aweights, Box) else np.asarray(aweights, dtype=float)
        w = aweights if w is None else w * aweights
    avg, w_sum = average(X, axis=1, weights=w, returned=True)
    w_sum = index(w_sum, (0,))
    if w is None:
        fact = shape_of(X)[1] - ddof
    elif ddof == 0:
        fact = w_sum
    elif aweights is None:
        fact = w_sum - ddof
    else:
        fact = w_sum - ddof * sum_(w * aweights) / w_sum
    if np.any(primal_value(fact) <= 0):
        warnings.warn("cov: degrees of freedom <= 0 for slice", RuntimeWarning, stacklevel=2)
        fact = 0.0
    X = X - reshape(avg, (-1, 1))
    c = matmul(X, transpose(X if w is None else X * w))
    with np.errstate(divide="ignore", invalid="ignore"):
        c = c * (1.0 / fact)
    return squeeze(c)


@implements(np.corrcoef)
def corrcoef(x, y=None, rowvar=True, *, dtype=None):
    """``np.corrcoef``: cov / (σᵢ σⱼ); NumPy's clip to [−1, 1] (for rounding) only changes
    values that rounding pushed past ±1, which get derivative 0."""
    from ..core.elementwise import sqrt
    from ..core.products import diagonal
    c = cov(x, y, rowvar)
    if ndim_of(c) == 0:
        return c / c
    d = sqrt(diagonal(c))
    c = c / reshape(d, (-1, 1))
    c = c / reshape(d, (1, -1))
    cp = primal_value(c)
    if np.any(np.abs(cp) > 1):
        c = where(cp > 1, 1.0, where(cp < -1, -1.0, c))
    return c


# --- ranges and grids ---------------------------------------------------------------------
@implements(np.linspace)
def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, **kwargs):
    """Evenly spaced values, differentiable in start and stop (computed as NumPy does)."""
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"linspace: number of samples, {num}, must be non-negative")
    div = (num - 1) if endpoint else num
    delta = stop - start
    nd = ndim_of(delta)
    work = np.result_type(primal_value(start), primal_value(stop), 1.0)
    t = np.arange(num, dtype=work).reshape((-1,) + (1,) * nd)
    if div > 0:
        step = delta / div
        y = (t / div) * delta if np.any(primal_value(step) == 0) else t * step
    else:
        step = np.nan
        y = t * delta
    y = y + start
    if endpoint and num > 1:
        last = broadcast_to(stop, shape_of(y)[1:])
        y = concatenate([index(y, (slice(None, -1),)), reshape(last, (1,) + shape_of(last))])
    if axis != 0:
        y = moveaxis(y, 0, normalize_axes(axis, ndim_of(y))[0])
    if dtype is not None and np.issubdtype(dtype, np.integer):   # NumPy floors: ∂ = 0
        y = np.floor(primal_value(y)).astype(dtype)
    elif dtype is not None:
        from ..core.keyword_args import cast_for
        y = cast_for("numpy.linspace", y, dtype)
    return (y, step) if retstep else y


@implements(np.logspace)
def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    nd = max(ndim_of(start), ndim_of(stop), ndim_of(base))
    up = lambda v: reshape(v, (1,) * (nd - ndim_of(v)) + shape_of(v))  # noqa: E731
    y = linspace(up(start), up(stop), num=num, endpoint=endpoint, axis=axis)
    return power(expand_dims(up(base), axis) if nd else base, y)


@implements(np.geomspace)
def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    sp, tp = np.asarray(primal_value(start)), np.asarray(primal_value(stop))
    if np.any(sp == 0) or np.any(tp == 0):
        raise ValueError("geomspace: geometric sequence cannot include zero")
    if np.iscomplexobj(sp) or np.iscomplexobj(tp):
        raise NotImplementedError("geomspace: complex endpoints are not supported on traced "
                                  "values")
    sign = np.sign(sp)
    start, stop = start * sign, stop * sign      # sign is ±1: exact
    y = logspace(log10(start), log10(stop), num=num, endpoint=endpoint, base=10.0)
    if num > 0:       # the ends are exactly start and stop, as in NumPy
        shape = shape_of(y)[1:]
        parts = [reshape(broadcast_to(start, shape), (1,) + shape)]
        if num > 1:
            end = num - 1 if endpoint else num
            if end > 1:
                parts.append(index(y, (slice(1, end),)))
            if endpoint:
                parts.append(reshape(broadcast_to(stop, shape), (1,) + shape))
        y = concatenate(parts) if len(parts) > 1 else parts[0]
    y = y * sign
    return moveaxis(y, 0, normalize_axes(axis, ndim_of(y))[0]) if axis != 0 else y


@implements(np.meshgrid)
def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    if indexing not in ("xy", "ij"):
        raise ValueError("meshgrid: valid values for `indexing` are 'xy' and 'ij'")
    nd = len(xi)
    ones = (1,) * nd
    out = [reshape(x, ones[:i] + (-1,) + ones[i + 1:]) for i, x in enumerate(xi)]
    if indexing == "xy" and nd > 1:
        out[0] = reshape(out[0], (1, -1) + ones[2:])
        out[1] = reshape(out[1], (-1, 1) + ones[2:])
    if not sparse:
        shape = np.broadcast_shapes(*[shape_of(o) for o in out])
        out = [broadcast_to(o, shape) for o in out]
    return tuple(out)


def _traced_full(fname, shape, fill_value, dtype):
    """The broadcast of a traced fill value, cast to ``dtype`` (floating or complex)."""
    dtype = np.result_type(primal_value(fill_value)) if dtype is None else np.dtype(dtype)
    if not np.issubdtype(dtype, np.inexact):
        raise TypeError(f"{fname}: dtype={dtype} would drop the derivative of the traced "
                        f"fill_value (shape {shape_of(fill_value)}); only floating and complex "
                        f"dtypes are differentiable")
    shape = (int(shape),) if np.ndim(shape) == 0 else tuple(int(s) for s in shape)
    return cast(broadcast_to(fill_value, shape), dtype, fname)


@implements(np.full)
def full(shape, fill_value, dtype=None, order="C", **kwargs):
    """``np.full`` with a traced fill value: its broadcast, cast to a floating ``dtype``
    (dualad.numpy.full; NumPy's own cannot be dispatched on the fill value)."""
    if not isinstance(fill_value, Box):
        return np.full(shape, fill_value, dtype=dtype, order=order, **kwargs)
    return _traced_full("full", shape, fill_value, dtype)


@implements(np.full_like)
def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, **kwargs):
    """``np.full_like``; a traced fill value keeps its derivative (broadcast). As NumPy's,
    the result has ``a``'s dtype unless ``dtype`` is given."""
    shape = shape_of(a) if shape is None else shape
    dtype = np.result_type(primal_value(a)) if dtype is None else dtype
    if isinstance(fill_value, Box):
        return _traced_full("full_like", shape, fill_value, dtype)
    return np.full(shape, fill_value, dtype=dtype)


@implements(np.empty_like)
def empty_like(prototype, dtype=None, order="K", subok=True, shape=None, **kwargs):
    return np.zeros(shape_of(prototype) if shape is None else shape,
                    dtype=dtype or primal_value(prototype).dtype)


def real_if_close(a, tol=100):
    ap = primal_value(a)
    if not np.iscomplexobj(ap):
        return a
    if tol > 1:
        tol = np.finfo(ap.dtype).eps * tol
    return np.real(a) if np.all(np.abs(ap.imag) < tol) else a


# --- interpolation, counting, Vandermonde ----------------------------------------------------
@implements(np.interp)
def interp(x, xp, fp, left=None, right=None, period=None):
    """Piecewise-linear interpolation, differentiable in x, xp, fp, left and right.

    The intervals are found from the primal values (``searchsorted``): under vmap those
    hold the whole batch, so a batched argument is interpolated example by example."""
    xp, fp = _sequence(xp), _sequence(fp)     # NumPy takes lists: np.interp(x, [0, 1], [0, 2])
    if is_batched((x, xp, fp, left, right)):
        return looped_call(interp, x, xp, fp, left, right, period)
    if ndim_of(xp) != 1 or ndim_of(fp) != 1 or shape_of(xp) != shape_of(fp):
        raise ValueError(f"interp: xp and fp must be 1-d sequences of the same length, got "
                         f"shapes {shape_of(xp)} and {shape_of(fp)}")
    if shape_of(xp)[0] == 0:
        raise ValueError("interp: array of sample points is empty")
    if period is not None:
        if period == 0:
            raise ValueError("interp: period must be a non-zero value")
        period = abs(period)
        left = right = None
        x = x % period
        xp = xp % period
        order = np.argsort(primal_value(xp), kind="stable")
        xp, fp = getitem(xp, idx=(order,)), getitem(fp, idx=(order,))
        xp = concatenate([index(xp, (slice(-1, None),)) - period, xp,
                          index(xp, (slice(0, 1),)) + period])
        fp = concatenate([index(fp, (slice(-1, None),)), fp, index(fp, (slice(0, 1),))])
    xv, xpv = np.asarray(primal_value(x)), np.asarray(primal_value(xp))
    n = xpv.shape[0]
    left = index(fp, (0,)) if left is None else left
    right = index(fp, (-1,)) if right is None else right
    if n == 1:
        y = broadcast_to(index(fp, (0,)), xv.shape)
    else:
        j = np.searchsorted(xpv, xv, side="right") - 1
        jc = np.clip(j, 0, n - 2)
        x0, x1 = getitem(xp, idx=(jc,)), getitem(xp, idx=(jc + 1,))
        f0, f1 = getitem(fp, idx=(jc,)), getitem(fp, idx=(jc + 1,))
        y = (f1 - f0) / (x1 - x0) * (x - x0) + f0
        y = where(j >= n - 1, index(fp, (-1,)), y)
    y = where(xv < xpv[0], left, where(xv > xpv[-1], right, y))
    y = y * np.ones((), dtype=np.float64)   # NumPy's interp returns float64
    return where(isnan(xv), np.nan, y) if np.isnan(xv).any() else y


def _sequence(v):
    """A list or tuple argument (sample points, values) as an array: stacked when it holds
    traced values, a float array otherwise."""
    if isinstance(v, (list, tuple)):
        return stack(list(v)) if any(isinstance(e, Box) for e in v) else \
            np.asarray(v, dtype=float)
    return v


@implements(np.bincount)
def bincount(x, weights=None, minlength=0):
    xv = np.asarray(primal_value(x))
    if weights is None:
        return np.bincount(xv, minlength=minlength)
    counts = np.bincount(xv, minlength=minlength)     # NumPy's own validation of x
    return untake(weights, idx=(xv,), shape=counts.shape)


@implements(np.vander)
def vander(x, N=None, increasing=False):
    if ndim_of(x) != 1:
        raise ValueError(f"vander: x must be a one-dimensional array, got shape {shape_of(x)}")
    n = shape_of(x)[0]
    N = n if N is None else int(N)
    if N == 0:
        return np.zeros((n, 0))
    cols = [np.ones((n, 1))]
    if N > 1:
        cols.append(broadcast_to(reshape(x, (n, 1)), (n, N - 1)))
    v = cumprod(concatenate(cols, axis=1), axis=1) if N > 1 else cols[0]
    return v if increasing else flip(v, 1)


# (np.iscomplexobj, np.isrealobj, np.isreal, np.iscomplex: in core.complex_numbers)
for _fn in (np.array_equal, np.array_equiv, np.triu_indices_from, np.tril_indices_from,
            np.diag_indices_from, np.may_share_memory, np.shares_memory):
    implements(_fn)(value_only(_fn))

