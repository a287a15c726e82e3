"""Linear filters of ``dualad.scipy.ndimage``: correlate/convolve (N-d and 1-d), Gaussian
and uniform filters, differentiable in the input and (correlate/convolve) the weights.

Each is ``valid correlation ∘ extend`` (see :mod:`._extend`): the input is extended
along each filtered axis by the boundary mode, then correlated with the weights by the
registry's convolution primitive in ``valid`` mode. Both steps are registry operations,
so the JVP is the filter applied to the tangent and the VJP is the exact adjoint (valid
correlation's adjoint is a full convolution; the extension's adjoint folds the border's
cotangent back), in both modes and to any order. Values agree with SciPy's to rounding
(SciPy's uniform filter is a running sum; Gaussian kernels are SciPy's formula).

Origins follow SciPy: ``correlate1d`` with ``len(weights) = m`` centres the weights at
``m // 2 + origin``; ``convolve`` is ``correlate`` with the weights reversed and the
origin negated (shifted by one more for an even length, as SciPy does).
"""
from __future__ import annotations

import numpy as np

from ...ops.core.shape import flip, moveaxis
from ...ops.numpy.convolve import convolve_p
from ...core.tracer import Box, ndim_of, primal_value, shape_of
from ._extend import check_mode, extend, per_axis
from .._arrays import real_floats

__all__ = [
    "correlate", "convolve", "correlate1d", "convolve1d", "gaussian_kernel1d",
    "gaussian_filter1d", "gaussian_filter", "uniform_filter1d", "uniform_filter"
]


def _array(fname, x, arg="input"):
    return real_floats(fname, arg, x, complex_hint=" (filter the real and imaginary parts "
                                                   "separately)")


def _output(fname, y, output):
    if output is None:
        return y
    if isinstance(output, np.ndarray):
        raise NotImplementedError(f"{fname}: output= as an array is written in place and "
                                  f"cannot hold traced values; use the return value")
    dt = np.dtype(output)
    if dt.kind not in "fc":
        raise NotImplementedError(f"{fname}: output={output!r} rounds to integers, which has "
                                  f"no derivative; use a float dtype")
    return y.astype(dt) if isinstance(y, Box) else np.asarray(y).astype(dt)


def _check_origin(fname, origin, m):
    if not -(m // 2) <= origin <= (m - 1) // 2:
        raise ValueError(f"{fname}: invalid origin {origin} for a filter of length {m}; it "
                         f"must lie in [{-(m // 2)}, {(m - 1) // 2}]")


def _correlate_axes(fname, x, weights, axes, modes, cval, origins):
    """Correlate ``x`` over ``axes`` (weights has one axis per filtered axis)."""
    if 0 in shape_of(x):            # nothing to filter (SciPy returns the empty array)
        return x * 0.0
    wshape = shape_of(weights)
    for ax, m, mode, o in zip(axes, wshape, modes, origins):
        check_mode(fname, mode)
        _check_origin(fname, int(o), m)
        before = m // 2 + int(o)
        x = extend(x, ax, before, m - 1 - before, mode, cval)
    if not isinstance(weights, Box) and np.result_type(primal_value(x)) == np.float32:
        weights = np.asarray(weights, dtype=np.float32)      # float32 stays float32, as SciPy
    k = len(axes)
    nd = ndim_of(x)
    last = list(range(nd - k, nd))
    x = moveaxis(x, list(axes), last)
    y = convolve_p(x, flip(weights) if isinstance(weights, Box) else np.flip(weights),
                   mode="valid", ndim=k, method="auto")
    return moveaxis(y, last, list(axes))


def _weights(fname, weights, k):
    weights = _array(fname, weights, "weights")
    if ndim_of(weights) != k:
        raise RuntimeError(f"{fname}: filter weights array has incorrect shape "
                           f"{shape_of(weights)} (expected {k} dimensions)")
    if 0 in shape_of(weights):
        raise ValueError(f"{fname}: no filter weights given (shape {shape_of(weights)})")
    return weights


def _axes(fname, axes, nd):
    if axes is None:
        return list(range(nd))
    axes = [int(a) for a in np.atleast_1d(axes)]
    for a in axes:
        if not -nd <= a < nd:
            raise ValueError(f"{fname}: axis {a} is out of bounds for an input of {nd} "
                             f"dimensions")
    norm = [a % nd for a in axes]
    if len(set(norm)) != len(norm):
        raise ValueError(f"{fname}: axes must be unique, got {axes}")
    return norm


def correlate(input, weights, output=None, mode="reflect", cval=0.0, origin=0, *, axes=None):
    """``scipy.ndimage.correlate``: out[i] = Σⱼ w[j] · x̃[i + j − c], c = m // 2 + origin
    per axis, x̃ extended by ``mode``; differentiable in ``input``, ``weights`` and ``cval``."""
    x = _array("correlate", input)
    axes = _axes("correlate", axes, ndim_of(x))
    w = _weights("correlate", weights, len(axes))
    y = _correlate_axes("correlate", x, w, axes, per_axis("correlate", "mode", mode, len(axes)),
                        cval, per_axis("correlate", "origin", origin, len(axes)))
    return _output("correlate", y, output)


def convolve(input, weights, output=None, mode="reflect", cval=0.0, origin=0, *, axes=None):
    """``scipy.ndimage.convolve``: correlate with the weights reversed on every axis and the
    origin negated (minus one more on even-length axes, as SciPy)."""
    x = _array("convolve", input)
    axes = _axes("convolve", axes, ndim_of(x))
    w = _weights("convolve", weights, len(axes))
    origins = [-int(o) - (1 - m % 2) for o, m in
               zip(per_axis("convolve", "origin", origin, len(axes)), shape_of(w))]
    wf = flip(w) if isinstance(w, Box) else np.flip(w)
    y = _correlate_axes("convolve", x, wf, axes, per_axis("convolve", "mode", mode, len(axes)),
                        cval, origins)
    return _output("convolve", y, output)


def correlate1d(input, weights, axis=-1, output=None, mode="reflect", cval=0.0, origin=0):
    """``scipy.ndimage.correlate1d``: :func:`correlate` along one axis with 1-D weights."""
    x = _array("correlate1d", input)
    w = _weights("correlate1d", weights, 1)
    (ax,) = _axes("correlate1d", axis, ndim_of(x))
    return _output("correlate1d",
                   _correlate_axes("correlate1d", x, w, [ax], [mode], cval, [origin]), output)


def convolve1d(input, weights, axis=-1, output=None, mode="reflect", cval=0.0, origin=0):
    """``scipy.ndimage.convolve1d``: :func:`convolve` along one axis with 1-D weights."""
    x = _array("convolve1d", input)
    w = _weights("convolve1d", weights, 1)
    (ax,) = _axes("convolve1d", axis, ndim_of(x))
    m = shape_of(w)[0]
    wf = flip(w) if isinstance(w, Box) else np.flip(w)
    return _output("convolve1d", _correlate_axes("convolve1d", x, wf, [ax], [mode], cval,
                                                 [-int(origin) - (1 - m % 2)]), output)


# --- Gaussian ----------------------------------------------------------------------------
def gaussian_kernel1d(sigma, order, radius):
    """SciPy's kernel: φ(x) = exp(−x²/2σ²) normalised to sum 1 on x = −r..r, times the
    polynomial q with φ⁽ⁿ⁾ = q φ (q' = q·(−x/σ²) + dq/dx, applied ``order`` times)."""
    if order < 0:
        raise ValueError("gaussian_filter1d: order must be non-negative")
    x = np.arange(-radius, radius + 1, dtype=float)
    phi = np.exp(-0.5 / (sigma * sigma) * x ** 2)
    phi /= phi.sum()
    if order == 0:
        return phi
    powers = np.arange(order + 1)
    q = np.zeros(order + 1)
    q[0] = 1.0
    step = np.diag(powers[1:], 1) + np.diag(np.ones(order) / -(sigma * sigma), -1)
    for _ in range(order):
        q = step.dot(q)
    return (x[:, None] ** powers).dot(q) * phi


def _plain_sigma(fname, sigma):
    if isinstance(sigma, Box) or (isinstance(sigma, (list, tuple)) and any(
            isinstance(s, Box) for s in sigma)):
        raise NotImplementedError(f"{fname}: a traced sigma is not supported (the kernel's "
                                  f"radius depends on it); pass a plain number")
    return sigma


def gaussian_filter1d(input, sigma, axis=-1, order=0, output=None, mode="reflect", cval=0.0,
                      truncate=4.0, *, radius=None):
    """``scipy.ndimage.gaussian_filter1d``: correlation with SciPy's Gaussian kernel (or its
    ``order``-th derivative) of radius ``round(truncate·σ)`` (or ``radius``)."""
    sigma = float(_plain_sigma("gaussian_filter1d", sigma))
    r = int(truncate * sigma + 0.5) if radius is None else int(radius)
    if r < 0:
        raise ValueError("gaussian_filter1d: radius must be a nonnegative integer")
    w = gaussian_kernel1d(sigma, int(order), r)[::-1]
    return correlate1d(input, w, axis, output, mode, cval, 0)


def gaussian_filter(input, sigma, order=0, output=None, mode="reflect", cval=0.0, truncate=4.0,
                    *, radius=None, axes=None):
    """``scipy.ndimage.gaussian_filter``: :func:`gaussian_filter1d` along each axis (σ, order,
    mode, radius per axis); axes with σ ≤ 1e-15 are left alone, as SciPy."""
    x = _array("gaussian_filter", input)
    axes = _axes("gaussian_filter", axes, ndim_of(x))
    k = len(axes)
    sigmas = per_axis("gaussian_filter", "sigma", _plain_sigma("gaussian_filter", sigma), k)
    orders = per_axis("gaussian_filter", "order", order, k)
    modes = per_axis("gaussian_filter", "mode", mode, k)
    radii = per_axis("gaussian_filter", "radius", radius, k)
    for ax, s, o, md, r in zip(axes, sigmas, orders, modes, radii):
        if float(s) > 1e-15:
            x = gaussian_filter1d(x, s, ax, o, None, md, cval, truncate, radius=r)
    return _output("gaussian_filter", x, output)


# --- uniform -----------------------------------------------------------------------------
def uniform_filter1d(input, size, axis=-1, output=None, mode="reflect", cval=0.0, origin=0):
    """``scipy.ndimage.uniform_filter1d``: the mean of ``size`` samples (a correlation with
    weights 1/size)."""
    if int(size) < 1:
        raise RuntimeError("uniform_filter1d: incorrect filter size (must be ≥ 1)")
    return correlate1d(input, np.full(int(size), 1.0 / int(size)), axis, output, mode, cval,
                       origin)


def uniform_filter(input, size=3, output=None, mode="reflect", cval=0.0, origin=0, *,
                   axes=None):
    """``scipy.ndimage.uniform_filter``: :func:`uniform_filter1d` along each axis with
    size > 1."""
    x = _array("uniform_filter", input)
    axes = _axes("uniform_filter", axes, ndim_of(x))
    k = len(axes)
    sizes = per_axis("uniform_filter", "size", size, k)
    modes = per_axis("uniform_filter", "mode", mode, k)
    origins = per_axis("uniform_filter", "origin", origin, k)
    for ax, s, md, o in zip(axes, sizes, modes, origins):
        if int(s) > 1:
            x = uniform_filter1d(x, s, ax, None, md, cval, o)
    return _output("uniform_filter", x, output)
