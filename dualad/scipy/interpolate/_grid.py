"""``RegularGridInterpolator`` and ``interpn`` (methods linear/slinear, nearest, cubic,
quintic).

On a rectilinear grid (plain, strictly increasing coordinates per axis) with (traced)
values V, at (traced) points ξ:

    linear    Σ over the 2ᵈ corners of the cell of ξ of Πₖ (wₖ or 1 − wₖ) · V[corner],
              wₖ = (ξₖ − g_i)/(g_{i+1} − g_i)    (the cell is fixed by the primal point)
    nearest   V at the nearest grid point (ties to the lower one; derivative 0 in ξ)
    cubic, quintic   the tensor-product not-a-knot spline of degree k = 3, 5 (SciPy folds
              1-D make_interp_spline fits axis by axis; the tensor product is the same
              function): coefficients C = V with each axis's fixed map Mₖ (SciPy's own
              fit of the unit vectors) applied, then Σ over the (k+1)ᵈ active B-splines
              of Πₖ Bⱼₖ(ξₖ) · C[j], each Bⱼₖ a polynomial piece (see :mod:`._splines`)

Linear in V; multilinear in ξ inside a cell, with the right cell's derivative on a cell
face (the last cell's on the upper boundary). ``fill_value=None`` extrapolates with the
end cells; otherwise points outside get ``fill_value`` (traced allowed), or, with
``bounds_error=True`` (the default), a ValueError naming the dimension.
"""
from __future__ import annotations

import itertools

import numpy as np
import scipy.interpolate as _si

from ...core.tracer import Box, ndim_of, primal_value, shape_of  # noqa: F401

from ._ppoly import as_data, as_points, horner, interval_of, plain_abscissae
from ._splines import _comb_locals

__all__ = ["RegularGridInterpolator", "interpn"]

_METHODS = ("linear", "slinear", "nearest", "cubic", "quintic")
_SPLINE_DEGREE = {"cubic": 3, "quintic": 5}
_LATER = ("pchip",)


class RegularGridInterpolator:
    """``scipy.interpolate.RegularGridInterpolator(points, values, method='linear',
    bounds_error=True, fill_value=nan)``; call it at (traced) points ``xi``."""

    def __init__(self, points, values, method="linear", bounds_error=True,
                 fill_value=np.nan, *, solver=None, solver_args=None):
        self.method = self._check_method(method)
        if (solver is not None or solver_args) and self.method not in _SPLINE_DEGREE:
            raise ValueError(f"RegularGridInterpolator: method={self.method!r} does not accept "
                             f"the 'solver' argument")
        # the spline methods fit exactly (a direct solve per axis): solver is not needed
        # linear and nearest accept traced grid points (a linear formula in them, resp. a
        # choice with derivative 0); the spline methods need them plain
        self.grid = tuple(as_data("RegularGridInterpolator", "grid points", p)
                          if isinstance(p, Box) and self.method not in _SPLINE_DEGREE else
                          plain_abscissae("RegularGridInterpolator", "grid points", p,
                                          f" for method={self.method!r} (they are for "
                                          f"linear, slinear and nearest)")
                          for p in points)
        self._gp = tuple(np.asarray(primal_value(g), dtype=float) for g in self.grid)
        self.values = as_data("RegularGridInterpolator", "values", values)
        d = len(self.grid)
        if d > ndim_of(self.values):
            raise ValueError(f"RegularGridInterpolator: there are {d} point arrays, but "
                             f"values has {ndim_of(self.values)} dimensions")
        for k, g in enumerate(self._gp):
            if g.ndim != 1:
                raise ValueError(f"RegularGridInterpolator: the points in dimension {k} must "
                                 f"be 1-dimensional")
            if not np.all(np.diff(g) > 0):
                raise ValueError(f"RegularGridInterpolator: the points in dimension {k} must "
                                 f"be strictly ascending")
            if shape_of(self.values)[k] != g.size:
                raise ValueError(f"RegularGridInterpolator: there are {g.size} points and "
                                 f"{shape_of(self.values)[k]} values in dimension {k}")
        self.bounds_error = bounds_error
        self.fill_value = fill_value
        self._check_points(self.method)
        self._spline = {}

    def _check_points(self, method):
        k = _SPLINE_DEGREE.get(method, 1 if method in ("linear", "slinear") else 0)
        for d, g in enumerate(self._gp):
            if g.size <= k:
                raise ValueError(f"RegularGridInterpolator: there are {g.size} points in "
                                 f"dimension {d}, but method {method} requires at least "
                                 f"{k + 1} points per dimension.")

    def _spline_parts(self, method):
        """Per axis: the knots' breakpoints, local pieces (L, J) and the coefficient
        tensor (cached per method)."""
        if method not in self._spline:
            k = _SPLINE_DEGREE[method]
            C = self.values
            axes = []
            for ax, g in enumerate(self.grid):
                spl = _si.make_interp_spline(g, np.eye(g.size), k=k, axis=0)
                n = spl.t.size - k - 1
                C = np.moveaxis(np.tensordot(spl.c, np.moveaxis(C, ax, 0), axes=(1, 0)), 0, ax)
                L, J = _comb_locals(spl.t, k, n)
                axes.append((spl.t[k:n + 1], L, J))
            self._spline[method] = (k, C, axes)
        return self._spline[method]

    @staticmethod
    def _check_method(method):
        if method in _LATER:
            raise NotImplementedError(f"RegularGridInterpolator: method={method!r} is not "
                                      f"supported on traced values; use 'linear', 'nearest', "
                                      f"'cubic' or 'quintic'")
        if method not in _METHODS:
            raise ValueError(f"RegularGridInterpolator: method {method!r} is not defined")
        return method

    def __call__(self, xi, method=None, *, nu=None):
        method = self.method if method is None else self._check_method(method)
        if nu is not None and np.any(np.asarray(nu) != 0):
            raise NotImplementedError("RegularGridInterpolator: nu is only for the spline "
                                      "methods; differentiate the call instead")
        d = len(self.grid)
        if isinstance(xi, tuple):      # SciPy: a tuple of coordinate arrays, broadcast
            parts = [as_points("RegularGridInterpolator", p) for p in xi]
            shape = np.broadcast_shapes(*[shape_of(p) for p in parts])
            xi = np.stack([np.broadcast_to(p, shape) for p in parts], axis=-1)
        else:
            xi = as_points("RegularGridInterpolator", xi)
        if ndim_of(xi) == 0:
            raise ValueError("RegularGridInterpolator: xi must be at least 1-dimensional")
        if ndim_of(xi) == 1:           # SciPy: a 1-D xi is reshaped to (-1, ndim)
            if shape_of(xi)[0] % d:
                raise ValueError(f"RegularGridInterpolator: xi of shape {shape_of(xi)} cannot "
                                 f"be read as points of dimension {d}")
            xi = np.reshape(xi, (-1, d))
        if shape_of(xi)[-1] != d:
            raise ValueError(f"RegularGridInterpolator: the requested sample points xi have "
                             f"dimension {shape_of(xi)[-1]} but this RegularGridInterpolator "
                             f"has dimension {d}")
        xp = np.asarray(primal_value(xi), dtype=float)
        lead = xp.shape[:-1]
        rest = shape_of(self.values)[d:]
        coords = [xi[..., k] for k in range(d)]
        outside = np.zeros(lead, dtype=bool)
        for k, g in enumerate(self._gp):
            off = (xp[..., k] < g[0]) | (xp[..., k] > g[-1])
            if self.bounds_error and off.any():
                raise ValueError(f"RegularGridInterpolator: one of the requested xi is out of "
                                 f"bounds in dimension {k} ({float(xp[..., k][off][0])} outside "
                                 f"[{g[0]}, {g[-1]}]); pass bounds_error=False")
            outside |= off
        tail = (1,) * len(rest)
        if method in _SPLINE_DEGREE:
            self._check_points(method)
            k, C, axes = self._spline_parts(method)
            picks, weights = [], []
            for ax, (breaks, L, J) in enumerate(axes):
                i = interval_of(breaks, xp[..., ax])
                s = coords[ax] - breaks[i]
                w = [horner([L[p, i, r] for p in range(k + 1)], s, 0) for r in range(k + 1)]
                weights.append([np.reshape(v, lead + tail) if tail else v for v in w])
                picks.append([J[i, r] for r in range(k + 1)])
            out = 0.0
            for combo in itertools.product(range(k + 1), repeat=d):
                wt = 1.0
                for ax, r in enumerate(combo):
                    wt = wt * weights[ax][r]
                out = out + wt * C[tuple(picks[ax][r] for ax, r in enumerate(combo))]
        elif method == "nearest":
            idx = []
            for k, g in enumerate(self._gp):
                i = np.clip(np.searchsorted(g, xp[..., k], side="right") - 1, 0,
                            max(g.size - 2, 0))
                if g.size > 1:
                    far = (xp[..., k] - g[i]) > (g[i + 1] - xp[..., k])
                    i = i + far
                idx.append(i)
            out = self.values[tuple(idx)]
        else:
            base, weights = [], []
            for k, (g, gp) in enumerate(zip(self.grid, self._gp)):
                if gp.size == 1:
                    base.append(np.zeros(lead, dtype=np.intp))
                    weights.append(None)
                    continue
                i = np.clip(np.searchsorted(gp, xp[..., k], side="right") - 1, 0, gp.size - 2)
                w = (coords[k] - g[i]) / (g[i + 1] - g[i])     # g may be traced
                base.append(i)
                weights.append(np.reshape(w, lead + tail) if tail else w)
            out = 0.0
            for corner in itertools.product((0, 1), repeat=d):
                idx, wt = [], 1.0
                skip = False
                for k, b in enumerate(corner):
                    if weights[k] is None:
                        if b:
                            skip = True
                        idx.append(base[k])
                        continue
                    idx.append(base[k] + b)
                    wt = wt * (weights[k] if b else 1.0 - weights[k])
                if not skip:
                    out = out + wt * self.values[tuple(idx)]
        if self.fill_value is not None and outside.any():
            out = np.where(np.reshape(outside, lead + tail), self.fill_value, out)
        if not isinstance(out, Box):
            out = np.asarray(out, dtype=float)
        return out


def interpn(points, values, xi, method="linear", bounds_error=True, fill_value=np.nan):
    """``scipy.interpolate.interpn``: ``RegularGridInterpolator(points, values, method,
    bounds_error, fill_value)(xi)``."""
    return RegularGridInterpolator(points, values, method, bounds_error, fill_value)(xi)
