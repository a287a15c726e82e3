"""CubicSpline, BSpline and make_interp_spline with traced data and traced points.

``CubicSpline`` is a :class:`PPoly` whose coefficients come from the data through the
fixed linear map of :mod:`._linear_data` (SciPy's own construction, every ``bc_type``).

``BSpline(t, c, k)`` with traced coefficients: on each base interval [t_i, t_{i+1}]
(k ≤ i < n) the spline is Σ_{j=i−k}^{i} c_j B_j, a polynomial whose power coefficients
are a fixed local linear combination L[:, i, :] of those k+1 coefficients. L is read off
SciPy: for each residue r the "comb" spline with c_j = [j ≡ r mod (k+1)] has exactly one
active coefficient on every interval (k+1 consecutive j), so its derivatives at t_i,
divided by the factorials, are that basis function's power coefficients there. Evaluation
is then PPoly evaluation of L·c (gathers and sums, all registry operations): linear in c,
piecewise polynomial in the point. ``derivative`` uses the knot-difference formula
c'_j = k (c_{j+1} − c_j)/(t_{j+k+1} − t_{j+1}) on t[1:-1] (a registry expression in c).
"""
from __future__ import annotations

import math

import numpy as np
import scipy.interpolate as _si

from ...core.tracer import Box, ndim_of, primal_value, shape_of
from ._linear_data import linear_in_data
from ._ppoly import PPoly, as_data, as_points, evaluate, move_output_axis, plain_abscissae

__all__ = ["CubicSpline", "BSpline", "make_interp_spline"]


def _plain_bc(fname, bc):
    def check(v):
        if isinstance(v, Box):
            raise NotImplementedError(f"{fname}: traced boundary-derivative values in bc_type "
                                      f"are not supported; pass plain numbers")
    if isinstance(bc, (tuple, list)):
        for side in bc:
            if isinstance(side, (tuple, list)):
                for item in side:
                    if isinstance(item, (tuple, list)):
                        check(item[1])
                    else:
                        check(item)
    return bc


def _zeroed_bc(bc, trailing):
    """``bc`` with every (order, value) value replaced by zeros of the data's trailing shape."""
    if not isinstance(bc, (tuple, list)) or isinstance(bc, str):
        return bc
    out = []
    for side in bc:
        if isinstance(side, tuple) and len(side) == 2 and np.ndim(side[0]) == 0 and \
                not isinstance(side[0], (tuple, list)):
            out.append((side[0], np.zeros(trailing)))                   # CubicSpline form
        elif isinstance(side, (tuple, list)):
            out.append([(o, np.zeros(trailing)) for o, _ in side])     # make_interp_spline
        else:
            out.append(side)
    return tuple(out)


def _broadcast_bc(bc, trailing):
    """Boundary values broadcast to the data's trailing shape (SciPy requires it exactly)."""
    if not isinstance(bc, (tuple, list)) or isinstance(bc, str):
        return bc
    out = []
    for side in bc:
        if isinstance(side, tuple) and len(side) == 2 and np.ndim(side[0]) == 0:
            out.append((side[0], np.broadcast_to(np.asarray(side[1], float), trailing)))
        elif isinstance(side, (tuple, list)):
            out.append([(o, np.broadcast_to(np.asarray(v, float), trailing)) for o, v in side])
        else:
            out.append(side)
    return tuple(out)


def _data_first(fname, y, axis):
    y = as_data(fname, "y", y)
    nd = ndim_of(y)
    if nd == 0:
        raise ValueError(f"{fname}: y must have at least 1 dimension, got a scalar")
    axis = int(axis) % nd
    return (np.moveaxis(y, axis, 0) if axis else y), axis


class CubicSpline(PPoly):
    """``scipy.interpolate.CubicSpline(x, y, axis=0, bc_type='not-a-knot', extrapolate=None)``
    with traced y (and boundary values plain), evaluated at traced points: ``cs(x, nu)``,
    ``derivative``, ``antiderivative``, ``integrate``."""

    def __init__(self, x, y, axis=0, bc_type="not-a-knot", extrapolate=None):
        x = plain_abscissae("CubicSpline", "abscissae x", x)
        y0, axis = _data_first("CubicSpline", y, axis)
        bc_type = _plain_bc("CubicSpline", bc_type)
        periodic = bc_type == "periodic"

        def build(Y, zero_bc=False):
            bc = _zeroed_bc(bc_type, Y.shape[1:]) if zero_bc else _broadcast_bc(bc_type,
                                                                                Y.shape[1:])
            return _si.CubicSpline(x, Y, axis=0, bc_type=bc).c

        c = linear_in_data("CubicSpline", build, y0, periodic)
        if extrapolate is None:
            extrapolate = "periodic" if periodic else True
        super().__init__(c, x, extrapolate, axis)


def _comb_locals(t, k, n):
    """L (k+1 powers, n−k intervals, k+1 residues) and J (intervals, residues): on base
    interval i the power coefficients are Σ_r L[:, i−k, r] c[J[i−k, r]]."""
    left = t[k:n]
    combs = (np.arange(n)[:, None] % (k + 1) == np.arange(k + 1)[None, :]).astype(float)
    spline = _si.BSpline(t, combs, k, extrapolate=True)
    L = np.stack([spline(left, nu=k - p) / math.factorial(k - p) for p in range(k + 1)])
    i = np.arange(k, n)[:, None]
    j = i - k + np.arange(k + 1)[None, :]                  # the active coefficients
    J = np.empty((n - k, k + 1), dtype=np.intp)
    J[np.arange(n - k)[:, None], j % (k + 1)] = j
    return L, J


class BSpline:
    """``scipy.interpolate.BSpline(t, c, k, extrapolate=True, axis=0)`` with traced ``c``,
    evaluated at traced points (``spl(x, nu)``), with ``derivative(nu)``."""

    def __init__(self, t, c, k, extrapolate=True, axis=0):
        self.t = plain_abscissae("BSpline", "knots t", t)
        self.k = int(k)
        c = as_data("BSpline", "c", c)
        if ndim_of(c) == 0:
            raise ValueError("BSpline: c must have at least 1 dimension")
        self.axis = int(axis) % ndim_of(c)
        self.c = np.moveaxis(c, self.axis, 0) if self.axis else c
        self.extrapolate = extrapolate
        n = self.t.size - self.k - 1
        if self.k < 0 or n < self.k + 1:
            raise ValueError(f"BSpline: need at least 2k+2 = {2 * self.k + 2} knots for "
                             f"degree k={self.k}, got {self.t.size}")
        if shape_of(self.c)[0] < n:
            raise ValueError(f"BSpline: knots, coefficients and degree are inconsistent: "
                             f"len(t) - k - 1 = {n} coefficients needed, c has "
                             f"{shape_of(self.c)[0]}")
        if np.any(np.diff(self.t) < 0):
            raise ValueError("BSpline: knots must be in a non-decreasing order")
        self._n = n
        self._locals = None

    @classmethod
    def construct_fast(cls, t, c, k, extrapolate=True, axis=0):
        return cls(t, c, k, extrapolate, axis)

    def _ppoly_coeffs(self):
        if self._locals is None:
            self._locals = _comb_locals(self.t, self.k, self._n)
        L, J = self._locals
        cJ = self.c[J]                                             # (m, k+1) + rest
        rest = shape_of(self.c)[1:]
        Lb = np.reshape(L, L.shape + (1,) * len(rest))
        return np.sum(Lb * cJ, axis=2)                             # (k+1, m) + rest

    def __call__(self, x, nu=0, extrapolate=None):
        x = as_points("BSpline", x)
        ext = self.extrapolate if extrapolate is None else extrapolate
        lo, hi = self.t[self.k], self.t[self._n]
        if not isinstance(x, Box) and not isinstance(self.c, Box):
            out = _si.BSpline(self.t, np.asarray(self.c), self.k, ext)(x, nu)
        else:
            if ext == "periodic":
                x = lo + np.mod(x - lo, hi - lo)
                ext = True
            out = evaluate(self._ppoly_coeffs(), self.t[self.k:self._n + 1], x, int(nu), ext)
        return move_output_axis(out, ndim_of(x), self.axis)

    def derivative(self, nu=1):
        """The ν-th derivative spline: c'_j = k (c_{j+1} − c_j) / (t_{j+k+1} − t_{j+1})."""
        spl = self
        for _ in range(int(nu)):
            t, k, c, n = spl.t, spl.k, spl.c[:spl._n], spl._n
            if k == 0:
                raise ValueError("BSpline.derivative: the degree is already 0")
            dt = t[k + 1:k + n] - t[1:n]
            dt = np.where(dt == 0, 1.0, dt)        # repeated knots: that term is absent
            scale = np.reshape(k / dt, (-1,) + (1,) * (ndim_of(c) - 1))
            spl = BSpline(t[1:-1], (c[1:] - c[:-1]) * scale, k - 1, spl.extrapolate)
        if int(nu):
            spl.axis = self.axis
        return spl

    def integrate(self, a, b, extrapolate=None):
        """∫ₐᵇ, through the equivalent piecewise polynomial (not for periodic extrapolation)."""
        ext = self.extrapolate if extrapolate is None else extrapolate
        pp = PPoly.construct_fast(self._ppoly_coeffs(), self.t[self.k:self._n + 1], ext,
                                  self.axis)
        return pp.integrate(a, b)


def make_interp_spline(x, y, k=3, t=None, bc_type=None, axis=0, check_finite=True):
    """``scipy.interpolate.make_interp_spline``: the interpolating BSpline of degree k
    (knots from SciPy), with coefficients linear in (traced) y."""
    x = plain_abscissae("make_interp_spline", "abscissae x", x)
    if t is not None:
        t = plain_abscissae("make_interp_spline", "knots t", t)
    y0, axis = _data_first("make_interp_spline", y, axis)
    bc_type = _plain_bc("make_interp_spline", bc_type)
    periodic = bc_type == "periodic"
    found = {}

    def build(Y, zero_bc=False):
        bc = _zeroed_bc(bc_type, Y.shape[1:]) if zero_bc else _broadcast_bc(bc_type,
                                                                            Y.shape[1:])
        spl = _si.make_interp_spline(x, Y, k=k, t=t, bc_type=bc, axis=0)
        found["t"] = spl.t
        return spl.c

    c = linear_in_data("make_interp_spline", build, y0, periodic)
    spl = BSpline(found["t"], c, k, extrapolate="periodic" if periodic else True)
    spl.axis = axis
    return spl
