"""Differences and integrals: diff, ediff1d, trapezoid, gradient.

All are linear combinations of slices along an axis (composed from ``getitem``,
``concatenate`` and arithmetic), so both modes and every order are exact:

    diff:       y = a[1:] − a[:-1]  (n times, after joining prepend/append)
    trapezoid:  Σ d·(y[1:] + y[:-1])/2, differentiable in y, x and dx
    gradient:   second-order central differences inside, one-sided (``edge_order``
                1 or 2) at the ends; uniform or coordinate spacing, which may be traced
"""
from __future__ import annotations

import numpy as np

from ...core.tracer import ndim_of, primal_value, shape_of
from ...core.primitive import implements
from .._util import normalize_axes
from ..core.indexing import index
from ..core.reductions import sum as sum_
from ..core.shape import broadcast_to, concatenate, ravel, reshape

__all__ = ["diff", "ediff1d", "trapezoid", "gradient"]


def _along(x, axis, sl):
    return index(x, (slice(None),) * axis + (sl,))


@implements(np.diff)
def diff(a, n=1, axis=-1, prepend=np._NoValue, append=np._NoValue):
    """``a[1:] − a[:-1]`` along ``axis``, ``n`` times, after joining prepend/append."""
    if n < 0:
        raise ValueError(f"diff: order must be non-negative but got {n}")
    nd = ndim_of(a)
    if nd == 0:
        raise ValueError("diff: requires input that is at least one dimensional")
    axis = normalize_axes(axis, nd)[0]
    parts = []
    for extra in (prepend, append):
        if extra is np._NoValue:
            parts.append(None)
            continue
        if ndim_of(extra) == 0:
            shape = list(shape_of(a))
            shape[axis] = 1
            extra = broadcast_to(extra, tuple(shape))
        parts.append(extra)
    if parts[0] is not None or parts[1] is not None:
        a = concatenate([p for p in (parts[0], a, parts[1]) if p is not None], axis=axis)
    for _ in range(n):
        a = _along(a, axis, slice(1, None)) - _along(a, axis, slice(None, -1))
    return a


@implements(np.ediff1d)
def ediff1d(ary, to_end=None, to_begin=None):
    d = diff(ravel(ary))
    pieces = [ravel(p) for p in (to_begin,) if p is not None] + [d] + \
             [ravel(p) for p in (to_end,) if p is not None]
    return concatenate(pieces) if len(pieces) > 1 else d


@implements(np.trapezoid)
def trapezoid(y, x=None, dx=1.0, axis=-1):
    """The trapezoidal rule, ``Σ d·(y[1:] + y[:-1])/2``; differentiable in y, x and dx."""
    nd = ndim_of(y)
    axis = normalize_axes(axis, nd)[0]
    if x is None:
        d = dx
    elif ndim_of(x) == 1:
        d = diff(x)
        d = reshape(d, tuple(-1 if i == axis else 1 for i in range(nd)))
    else:
        d = diff(x, axis=axis)
    mid = _along(y, axis, slice(1, None)) + _along(y, axis, slice(None, -1))
    return sum_(d * mid / 2.0, axis=axis)


@implements(np.gradient)
def gradient(f, *varargs, axis=None, edge_order=1):
    """``np.gradient``: second-order central differences inside, one-sided (order
    ``edge_order``) at the ends; uniform or coordinate spacing (which may be traced)."""
    nd = ndim_of(f)
    axes = normalize_axes(axis, nd)
    if not varargs:
        spacing = [1.0] * len(axes)
    elif len(varargs) == 1 and ndim_of(varargs[0]) == 0:
        spacing = [varargs[0]] * len(axes)
    elif len(varargs) == len(axes):
        spacing = []
        for ax, h in zip(axes, varargs):
            if ndim_of(h) == 0:
                spacing.append(h)
                continue
            if ndim_of(h) != 1:
                raise ValueError("gradient: distances must be either scalars or 1d")
            if shape_of(h)[0] != shape_of(f)[ax]:
                raise ValueError(f"gradient: coordinates of length {shape_of(h)[0]} do not "
                                 f"match axis {ax} of length {shape_of(f)[ax]}")
            h = np.asarray(h, dtype=float) if not hasattr(h, "_trace") else h
            d = diff(h)
            dp = primal_value(d)
            spacing.append(index(d, (0,)) if np.all(dp == dp[0]) else d)
    else:
        raise TypeError("gradient: invalid number of arguments")
    if edge_order not in (1, 2):
        raise ValueError("gradient: 'edge_order' must be 1 or 2")
    outs = [_gradient_axis(f, ax, h, edge_order, nd) for ax, h in zip(axes, spacing)]
    return outs[0] if len(outs) == 1 else tuple(outs)


def _gradient_axis(f, axis, h, edge_order, nd):
    if shape_of(f)[axis] < edge_order + 1:
        raise ValueError(f"gradient: shape {shape_of(f)} too small along axis {axis} for a "
                         f"numerical gradient: at least edge_order + 1 = {edge_order + 1} "
                         f"elements are required")
    s = lambda sl: _along(f, axis, sl)  # noqa: E731
    col = lambda v: reshape(v, tuple(-1 if i == axis else 1 for i in range(nd)))  # noqa: E731
    uniform = ndim_of(h) == 0
    if uniform:
        inner = (s(slice(2, None)) - s(slice(None, -2))) / (2.0 * h)
    else:
        dx1, dx2 = index(h, (slice(0, -1),)), index(h, (slice(1, None),))
        a = col(-dx2 / (dx1 * (dx1 + dx2)))
        b = col((dx2 - dx1) / (dx1 * dx2))
        c = col(dx1 / (dx2 * (dx1 + dx2)))
        inner = a * s(slice(None, -2)) + b * s(slice(1, -1)) + c * s(slice(2, None))
    if edge_order == 1:
        h0 = h if uniform else index(h, (0,))
        hn = h if uniform else index(h, (-1,))
        first = (s(slice(1, 2)) - s(slice(0, 1))) / h0
        last = (s(slice(-1, None)) - s(slice(-2, -1))) / hn
    else:
        if uniform:
            a, b, c = -1.5 / h, 2.0 / h, -0.5 / h
        else:
            dx1, dx2 = index(h, (0,)), index(h, (1,))
            a = -(2.0 * dx1 + dx2) / (dx1 * (dx1 + dx2))
            b = (dx1 + dx2) / (dx1 * dx2)
            c = -dx1 / (dx2 * (dx1 + dx2))
        first = a * s(slice(0, 1)) + b * s(slice(1, 2)) + c * s(slice(2, 3))
        if uniform:
            a, b, c = 0.5 / h, -2.0 / h, 1.5 / h
        else:
            dx1, dx2 = index(h, (-2,)), index(h, (-1,))
            a = dx2 / (dx1 * (dx1 + dx2))
            b = -(dx2 + dx1) / (dx1 * dx2)
            c = (2.0 * dx2 + dx1) / (dx2 * (dx1 + dx2))
        last = a * s(slice(-3, -2)) + b * s(slice(-2, -1)) + c * s(slice(-1, None))
    return concatenate([first, inner, last], axis=axis)


