"""``map_coordinates`` and the spline prefilter of ``dualad.scipy.ndimage``.

``map_coordinates(input, coordinates, order, mode, cval, prefilter)`` samples ``input`` at
the (traced or plain) points ``coordinates[:, ...]``. It is written as gathers of
``input`` at integer indices fixed by the primal coordinates, weighted by B-spline
weights that are polynomials of the fractional parts ``t = c − ⌊c⌋`` (traced):

    order 0   the sample at ⌊c + ½⌋ (SciPy's rounding; derivative 0 in c)
    order 1   Σ over the 2ᵈ cell corners of Πₖ (tₖ or 1 − tₖ) · x[corner]
    order 3   Σ over 4ᵈ neighbours of Πₖ β₃ weights · coef[neighbour], coef =
              spline_filter(input) (a fixed linear map per axis, from SciPy itself)

So it is differentiable in ``input`` (and ``cval``) everywhere and in the coordinates
inside each cell; at an integer coordinate (a cell boundary, where order 1 has a kink)
the derivative is that of the cell to the right (⌊c⌋ decides). Integer indices outside
the input are mapped by ``mode`` as in :mod:`._extend`; ``constant`` returns ``cval``
outside [0, n − 1] (and interpolates only inside); ``wrap`` is SciPy's (period n − 1 in
the coordinate: ``c mod (n − 1)``, derivative 1).
"""
from __future__ import annotations

import itertools

import numpy as np
import scipy.ndimage as _sn

from ...ops.core.shape import moveaxis
from ...core.tracer import Box, ndim_of, primal_value, shape_of
from ._extend import check_mode, source_indices
from ._filters import _array, _output

__all__ = ["spline_filter1d", "spline_filter", "map_coordinates"]


def _matrix_along(x, M, axis):
    """``M @ x`` along ``axis`` (M constant)."""
    y = np.tensordot(M, moveaxis(x, axis, 0) if isinstance(x, Box) else np.moveaxis(x, axis, 0),
                     axes=(1, 0))
    return moveaxis(y, 0, axis) if isinstance(y, Box) else np.moveaxis(y, 0, axis)


def spline_filter1d(input, order=3, axis=-1, output=np.float64, mode="mirror"):
    """``scipy.ndimage.spline_filter1d``: the B-spline coefficients along ``axis``. Linear in
    the input: the n×n matrix SciPy's filter applies (SciPy run on the identity) is applied
    with ``tensordot``, so its VJP is the transposed matrix."""
    x = _array("spline_filter1d", input)
    if not 0 <= int(order) <= 5:
        raise RuntimeError("spline_filter1d: spline order not supported (0..5)")
    nd = ndim_of(x)
    axis = int(axis) % nd
    if int(order) in (0, 1) or not isinstance(x, Box):
        y = x if isinstance(x, Box) else _sn.spline_filter1d(x, order, axis, np.float64, mode)
        return _output("spline_filter1d", y, output)
    n = shape_of(x)[axis]
    M = _sn.spline_filter1d(np.eye(n), int(order), axis=0, output=np.float64, mode=mode)
    return _output("spline_filter1d", _matrix_along(x, M, axis), output)


def spline_filter(input, order=3, output=np.float64, mode="mirror"):
    """``scipy.ndimage.spline_filter``: :func:`spline_filter1d` along every axis."""
    x = _array("spline_filter", input)
    if int(order) not in (0, 1):
        for ax in range(ndim_of(x)):
            x = spline_filter1d(x, order, ax, None, mode)
    return _output("spline_filter", x, output)


def _bspline3(t):
    """The cubic B-spline weights of the neighbours ⌊c⌋−1 … ⌊c⌋+2 at t = c − ⌊c⌋."""
    s = 1.0 - t
    t2 = t * t
    t3 = t2 * t
    return [s * s * s / 6.0, (3.0 * t3 - 6.0 * t2 + 4.0) / 6.0,
            (-3.0 * t3 + 3.0 * t2 + 3.0 * t + 1.0) / 6.0, t3 / 6.0]


def _wrap(c, n):
    """SciPy's ``wrap`` for interpolation: c kept on [0, n − 1], else moved by multiples of
    n − 1 (from below onto (0, n − 1], from above onto [0, n − 1)); derivative 1."""
    if n == 1:
        return c * 0.0
    m = n - 1
    return np.where(c < 0, m - np.mod(-c, m), np.where(c > m, np.mod(c, m), c))


def _mirror(c, n, mode):
    """The coordinate mapped into the input by ``mode`` (for order 0's rounding)."""
    c = np.asarray(c, dtype=float)
    if mode != "mirror":      # reflect: period 2n about −½
        j = np.mod(c + 0.5, 2 * n)
        return np.where(j >= n, 2 * n - j, j) - 0.5
    if n == 1:
        return np.zeros_like(c)
    j = np.mod(c, 2 * n - 2)
    return np.where(j > n - 1, 2 * n - 2 - j, j)


def _coordinates(coordinates, nd):
    if not isinstance(coordinates, Box):
        coordinates = np.asarray(coordinates)
    if np.result_type(primal_value(coordinates)).kind == "c":
        raise TypeError("map_coordinates: complex type not supported for coordinates")
    if ndim_of(coordinates) < 1 or shape_of(coordinates)[0] != nd:
        raise RuntimeError(f"map_coordinates: invalid shape for coordinate array: "
                           f"{shape_of(coordinates)} (the first axis must have length "
                           f"input.ndim = {nd})")
    return [coordinates[k] for k in range(nd)]


_ORDER3_MODES = ("mirror", "reflect", "grid-mirror", "grid-wrap", "nearest", "grid-constant")


def map_coordinates(input, coordinates, output=None, order=3, mode="constant", cval=0.0,
                    prefilter=True):
    """``scipy.ndimage.map_coordinates`` for orders 0, 1 and 3, differentiable in ``input``,
    ``coordinates`` (orders 1, 3) and ``cval``."""
    x = _array("map_coordinates", input)
    nd = ndim_of(x)
    if nd < 1:
        raise RuntimeError("map_coordinates: input and output rank must be > 0")
    check_mode("map_coordinates", mode)
    order = int(order)
    if order not in (0, 1, 3):
        raise NotImplementedError(f"map_coordinates: order={order} is not supported on traced "
                                  f"values; use order 0, 1 or 3")
    coords = _coordinates(coordinates, nd)
    shape = shape_of(x)
    npad = 0
    lookup = mode
    if order == 3:
        if mode not in _ORDER3_MODES:
            raise NotImplementedError(f"map_coordinates: order=3 with mode={mode!r} is not "
                                      f"supported; use one of {', '.join(_ORDER3_MODES)}")
        if prefilter:
            if mode in ("nearest", "grid-constant"):   # SciPy pads 12 samples, then filters
                npad = 12
                from ...ops.numpy.arrays import pad
                x = pad(x, npad, mode="edge") if mode == "nearest" else pad(
                    x, npad, mode="constant", constant_values=cval)
            x = spline_filter(x, 3, None, mode)
            shape = shape_of(x)
    if mode == "wrap":
        coords = [_wrap(c, n) for c, n in zip(coords, shape)]
        lookup = "nearest"
    elif mode in ("mirror", "reflect", "grid-mirror") and order == 0:
        # SciPy maps the coordinate before rounding (ties land on the mapped side)
        coords = [_mirror(primal_value(c), n, mode) for c, n in zip(coords, shape)]
    elif mode == "constant":
        lookup = "nearest"
    primal = [np.asarray(primal_value(c), dtype=float) for c in coords]
    if order == 0:
        base = [np.floor(p + 0.5).astype(np.intp) for p in primal]
        offsets, weights = [(0,)] * nd, [[1.0]] * nd
    else:
        base = [np.floor(p).astype(np.intp) for p in primal]
        fracs = [c - b for c, b in zip(coords, base)]
        if order == 1:
            offsets = [(0, 1)] * nd
            weights = [[1.0 - t, t] for t in fracs]
        else:
            offsets = [(-1, 0, 1, 2)] * nd
            weights = [_bspline3(t) for t in fracs]
    out = 0.0
    for corner in itertools.product(*[range(len(o)) for o in offsets]):
        src, valid, w = [], True, 1.0
        for k, j in enumerate(corner):
            s = source_indices(base[k] + offsets[k][j] + npad, shape[k], lookup)
            valid = valid & (s >= 0)
            src.append(np.maximum(s, 0))
            w = w * weights[k][j]
        sample = x[tuple(src)]
        if lookup in ("constant", "grid-constant"):
            sample = np.where(valid, sample, cval)
        out = out + w * sample
    if mode == "constant":
        n = np.asarray(shape) - 2 * npad
        inside = np.ones(np.shape(primal[0]), dtype=bool)
        for p, m in zip(primal, n):
            inside &= (p >= 0) & (p <= m - 1)
        out = np.where(inside, out, cval)
    if not isinstance(out, Box):
        out = np.asarray(out, dtype=float)
    if output is None and np.result_type(primal_value(input)) == np.float32:
        output = np.float32                                   # SciPy keeps the input's dtype
    return _output("map_coordinates", out, output)
