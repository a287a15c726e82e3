"""``interp1d`` with traced data and traced points.

    linear, slinear      y_i + (ξ − x_i)(y_{i+1} − y_i)/(x_{i+1} − x_i) on the interval of ξ
    quadratic, cubic, k  make_interp_spline(x, y, k) (not-a-knot), evaluated as a BSpline
    nearest / nearest-up y at the nearest x (ties down / up); previous, next, zero: the
                         sample before / after (zero: the order-0 spline)

The piecewise-constant kinds are gathers of y (derivative in y: 1 at the chosen sample;
in ξ: 0). Out of range: ``bounds_error`` (by default True unless ``fill_value`` is
"extrapolate") raises naming the first offending point; else ``fill_value`` (a scalar,
an array broadcast to y's other axes, or a (below, above) pair; traced fill values are
differentiated) or, with "extrapolate", the end pieces continued. At a knot the
derivative in ξ is the right piece's (the last piece's at the last knot).

The abscissae x may be traced for the kinds linear/slinear (the formula above is then
differentiated in x_i, x_{i+1} too) and nearest/previous/next/zero (derivative 0 in x:
the choice of sample is a decision); the spline kinds raise, naming x.
"""
from __future__ import annotations

import numpy as np

from ...core.tracer import Box, ndim_of, primal_value, shape_of
from ._ppoly import as_data, as_points, interval_of, move_output_axis, plain_abscissae
from ._splines import make_interp_spline

__all__ = ["interp1d"]

_SPLINE = {"zero": 0, "slinear": 1, "quadratic": 2, "cubic": 3}
_KINDS = ("linear", "nearest", "nearest-up", "previous", "next") + tuple(_SPLINE)
# kinds whose value is a gather and a linear formula in x: traced abscissae allowed
_TRACED_X_KINDS = ("linear", "slinear", "nearest", "nearest-up", "previous", "next", "zero")


class interp1d:  # noqa: N801  (SciPy's name)
    """``scipy.interpolate.interp1d(x, y, kind='linear', axis=-1, copy=True, bounds_error=None,
    fill_value=nan, assume_sorted=False)``; call it at (traced) points."""

    def __init__(self, x, y, kind="linear", axis=-1, copy=True, bounds_error=None,
                 fill_value=np.nan, assume_sorted=False):
        traced_x = isinstance(x, Box)
        if traced_x and (kind not in _TRACED_X_KINDS):
            plain_abscissae("interp1d", "abscissae x", x,           # raises, naming x
                            f" for kind={kind!r} (they are for {', '.join(_TRACED_X_KINDS)})")
        x = as_data("interp1d", "x", x) if traced_x else plain_abscissae(
            "interp1d", "abscissae x", x)
        y = as_data("interp1d", "y", y)
        if ndim_of(x) != 1:
            raise ValueError(f"interp1d: the x array must have exactly one dimension, got "
                             f"shape {shape_of(x)}")
        if ndim_of(y) == 0:
            raise ValueError("interp1d: the y array must have at least one dimension")
        self.axis = int(axis) % ndim_of(y)
        y = np.moveaxis(y, self.axis, 0) if self.axis else y
        n = shape_of(x)[0]
        if shape_of(y)[0] != n:
            raise ValueError(f"interp1d: x and y arrays must be equal in length along the "
                             f"interpolation axis ({n} and {shape_of(y)[0]})")
        if isinstance(kind, (int, np.integer)):
            order = int(kind)
            kind = {0: "zero", 1: "slinear", 2: "quadratic", 3: "cubic"}.get(order, "spline")
        else:
            order = _SPLINE.get(kind)
        if kind not in _KINDS and kind != "spline":
            raise NotImplementedError(f"interp1d: {kind!r} is unsupported; use one of "
                                      f"{', '.join(_KINDS)} or an integer spline order")
        if not assume_sorted:
            order_idx = np.argsort(np.asarray(primal_value(x)), kind="mergesort")
            if np.any(order_idx != np.arange(n)):
                x, y = x[order_idx], y[order_idx]
        self.x, self.y, self.kind = x, y, kind
        self._xp = np.asarray(primal_value(x), dtype=float)     # the intervals' primal ends
        if fill_value == "extrapolate" if isinstance(fill_value, str) else False:
            self._extrapolate, self._fill = True, None
            bounds_error = False if bounds_error is None else bounds_error
            if bounds_error:
                raise ValueError("interp1d: cannot extrapolate and raise at the same time")
        else:
            self._extrapolate = False
            self._fill = self._fill_pair(fill_value)
        self.bounds_error = True if bounds_error is None else bool(bounds_error)
        self.fill_value = fill_value
        if kind in ("linear", "nearest", "nearest-up", "previous", "next", "zero") or (
                kind == "slinear" and traced_x):
            min_n = 1 if kind in ("nearest", "nearest-up", "previous", "next", "zero") else 2
        else:
            min_n = order + 1
            self._spline = make_interp_spline(x, y, k=order, axis=0)
        if n < min_n:
            raise ValueError(f"interp1d: x and y arrays must have at least {min_n} entries "
                             f"for kind={kind!r}")
        if kind == "previous" and self._extrapolate:
            self._extrapolate, self._fill = False, (np.nan, y[-1])
        if kind == "next" and self._extrapolate:
            self._extrapolate, self._fill = False, (y[0], np.nan)

    @staticmethod
    def _fill_pair(fill_value):
        if isinstance(fill_value, tuple) and len(fill_value) == 2:
            return fill_value
        return (fill_value, fill_value)

    def _core(self, xn, xp):
        x, y, kind = self.x, self.y, self.kind
        n = self._xp.size
        if kind == "linear" or (kind == "slinear" and isinstance(x, Box)):
            if n == 1:
                return y[np.zeros(np.shape(xp), dtype=np.intp)]
            i = interval_of(self._xp, xp)
            slope = (y[i + 1] - y[i]) / self._tail(x[i + 1] - x[i])
            return y[i] + slope * self._tail(xn - x[i])
        if kind in ("nearest", "nearest-up"):
            mids = (self._xp[1:] + self._xp[:-1]) / 2.0
            side = "left" if kind == "nearest" else "right"
            return y[np.searchsorted(mids, xp, side=side)]
        if kind in ("previous", "zero"):
            return y[np.clip(np.searchsorted(self._xp, xp, side="right") - 1, 0, n - 1)]
        if kind == "next":
            return y[np.clip(np.searchsorted(self._xp, xp, side="left"), 0, n - 1)]
        return self._spline(xn)

    def _tail(self, v):
        """Broadcast a per-point array against y's other axes."""
        rest = ndim_of(self.y) - 1
        return np.reshape(v, np.shape(primal_value(v)) + (1,) * rest) if rest else v

    def __call__(self, x):
        xn = as_points("interp1d", x)
        xp = np.asarray(primal_value(xn), dtype=float)
        out = self._core(xn, xp)
        if not self._extrapolate:
            below, above = xp < self._xp[0], xp > self._xp[-1]
            if self.bounds_error and (below.any() or above.any()):
                bad = xp[below][0] if below.any() else xp[above][0]
                side = "below" if below.any() else "above"
                raise ValueError(f"interp1d: a value in x_new is {side} the interpolation "
                                 f"range's {'minimum' if side == 'below' else 'maximum'} value "
                                 f"({float(bad)} outside [{self._xp[0]}, {self._xp[-1]}]); pass "
                                 f"bounds_error=False or fill_value='extrapolate'")
            for mask, fill in ((below, self._fill[0]), (above, self._fill[1])):
                if mask.any():
                    out = np.where(self._tail(mask), fill, out)
        if not isinstance(out, Box):
            out = np.asarray(out, dtype=float)
        return move_output_axis(out, xp.ndim, self.axis)
