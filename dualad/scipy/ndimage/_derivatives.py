"""Derivative filters of ``dualad.scipy.ndimage``, composed of the 1-D filters of
:mod:`._filters` (so the same exact adjoints):

    sobel(x, axis)      [−1, 0, 1] along ``axis``, smoothed by [1, 2, 1] along the others
    prewitt(x, axis)    [−1, 0, 1] along ``axis``, [1, 1, 1] along the others
    laplace(x)          Σ over the axes of [1, −2, 1]
    gaussian_laplace(x, σ)               Σᵢ ∂²ᵢ of the Gaussian-smoothed x
    gaussian_gradient_magnitude(x, σ)    √(Σᵢ (∂ᵢ of the Gaussian-smoothed x)²)

The magnitude's square root has derivative 0 where every component is 0 (a subgradient,
as in :mod:`dualad.scipy.spatial.distance`; never the 0·∞ = NaN of a plain √).
Unlike SciPy, integer inputs give float outputs (SciPy rounds into the input's dtype).
"""
from __future__ import annotations

import numpy as np

from ...core.tracer import ndim_of
from ._extend import per_axis
from ._filters import _array, _axes, _output, correlate1d, gaussian_filter

__all__ = ["sobel", "prewitt", "laplace", "gaussian_laplace", "gaussian_gradient_magnitude"]


def _edge_filter(fname, input, axis, output, mode, cval, smooth):
    x = _array(fname, input)
    nd = ndim_of(x)
    (axis,) = _axes(fname, axis, nd)
    modes = per_axis(fname, "mode", mode, nd)
    y = correlate1d(x, [-1.0, 0.0, 1.0], axis, None, modes[axis], cval, 0)
    for ax in range(nd):
        if ax != axis:
            y = correlate1d(y, smooth, ax, None, modes[ax], cval, 0)
    return _output(fname, y, output)


def sobel(input, axis=-1, output=None, mode="reflect", cval=0.0):
    """``scipy.ndimage.sobel``."""
    return _edge_filter("sobel", input, axis, output, mode, cval, [1.0, 2.0, 1.0])


def prewitt(input, axis=-1, output=None, mode="reflect", cval=0.0):
    """``scipy.ndimage.prewitt``."""
    return _edge_filter("prewitt", input, axis, output, mode, cval, [1.0, 1.0, 1.0])


def laplace(input, output=None, mode="reflect", cval=0.0, *, axes=None):
    """``scipy.ndimage.laplace``: Σ over ``axes`` of the second difference [1, −2, 1]."""
    x = _array("laplace", input)
    axes = _axes("laplace", axes, ndim_of(x))
    modes = per_axis("laplace", "mode", mode, len(axes))
    y = None
    for ax, md in zip(axes, modes):
        term = correlate1d(x, [1.0, -2.0, 1.0], ax, None, md, cval, 0)
        y = term if y is None else y + term
    return _output("laplace", x if y is None else y, output)


def _gaussian_terms(fname, x, sigma, mode, cval, axes, order, kwargs, sigma_on_axes):
    """SciPy's generic_laplace / generic_gradient_magnitude: term i is the Gaussian filter
    over every axis with derivative ``order`` along axes[i], in mode modes[i]."""
    nd = ndim_of(x)
    axes = _axes(fname, axes, nd)
    modes = per_axis(fname, "mode", mode, len(axes))
    if sigma_on_axes and len(axes) < nd:     # gaussian_laplace: σ = 0 off the axes
        full = [0.0] * nd
        for s, ax in zip(per_axis(fname, "sigma", sigma, len(axes)), axes):
            full[ax] = s
        sigma = full
    terms = []
    for ax, md in zip(axes, modes):
        orders = [0] * nd
        orders[ax] = order
        terms.append(gaussian_filter(x, sigma, orders, None, md, cval, **kwargs))
    return terms


def gaussian_laplace(input, sigma, output=None, mode="reflect", cval=0.0, *, axes=None,
                     **kwargs):
    """``scipy.ndimage.gaussian_laplace``: Σᵢ of the second Gaussian derivative along axis i
    (``truncate``/``radius`` passed on)."""
    x = _array("gaussian_laplace", input)
    terms = _gaussian_terms("gaussian_laplace", x, sigma, mode, cval, axes, 2, kwargs, True)
    if not terms:
        return _output("gaussian_laplace", x, output)
    y = terms[0]
    for t in terms[1:]:
        y = y + t
    return _output("gaussian_laplace", y, output)


def gaussian_gradient_magnitude(input, sigma, output=None, mode="reflect", cval=0.0, *,
                                axes=None, **kwargs):
    """``scipy.ndimage.gaussian_gradient_magnitude``: √(Σᵢ gᵢ²), gᵢ the first Gaussian
    derivative along axis i; derivative 0 where the gradient vanishes."""
    x = _array("gaussian_gradient_magnitude", input)
    terms = _gaussian_terms("gaussian_gradient_magnitude", x, sigma, mode, cval, axes, 1,
                            kwargs, False)
    if not terms:
        return _output("gaussian_gradient_magnitude", x, output)
    s = terms[0] * terms[0]
    for t in terms[1:]:
        s = s + t * t
    pos = s > 0
    y = np.where(pos, np.sqrt(np.where(pos, s, 1.0)), 0.0)
    return _output("gaussian_gradient_magnitude", y, output)
