"""Piecewise polynomials with traced coefficients, evaluated at traced points.

``PPoly(c, x)`` is SciPy's: on [x_i, x_{i+1}] the value is Σₚ c[p, i] (ξ − x_i)^(k−p).
Evaluation gathers the interval's coefficients (the interval index is fixed by the
primal point, so it is a constant gather) and runs Horner's scheme in ξ − x_i: every
step a registry operation, so the result is differentiable in the coefficients (hence
in the data they were built from) and in the points, in both modes and to any order.

Kinks: at a breakpoint the interval to the right is used (SciPy's choice of interval;
at the last breakpoint, the last interval), so a derivative there is the right piece's.
Outside [x_0, x_m]: ``extrapolate=True`` continues the end pieces, ``False`` gives NaN
(derivative 0), ``'periodic'`` maps ξ to x_0 + (ξ − x_0) mod (x_m − x_0) (derivative 1).

The shared piece of every interpolant here: CubicSpline is a PPoly, BSpline and
interp1d's spline kinds convert to one (see :mod:`._splines`).
"""
from __future__ import annotations

import math

import numpy as np

from ...core.tracer import Box, ndim_of, primal_value, shape_of
from .._arrays import real_floats

__all__ = [
    "plain_abscissae", "as_data", "as_points", "interval_of", "horner", "wrap_periodic",
    "evaluate", "move_output_axis", "PPoly"
]


def plain_abscissae(fname, arg, x, hint=""):
    """Breakpoints/knots/grids must be plain: derivatives in them are not supported."""
    if isinstance(x, Box):
        raise NotImplementedError(
            f"{fname}: the {arg} are traced; derivatives with respect to them are not "
            f"supported{hint}. Pass {arg} as a plain array (compute them outside the function "
            f"being differentiated); the data values and the evaluation points may be traced.")
    x = np.asarray(x)
    if x.dtype.kind == "c":
        raise ValueError(f"{fname}: complex {arg} are not supported")
    return x.astype(np.float64)


def as_data(fname, arg, y):
    """The data as an array; a plain one is copied (SciPy copies: a later in-place change of
    the caller's array must not change the interpolant)."""
    return real_floats(fname, arg, y, copy=True,
                       complex_hint=" (interpolate the real and imaginary parts separately)")


def as_points(fname, x):
    return real_floats(fname, "evaluation points", x)


def interval_of(breaks, xp):
    """The interval index of each primal point: the last breakpoint ≤ ξ, clipped."""
    m = breaks.size - 1
    return np.clip(np.searchsorted(breaks, xp, side="right") - 1, 0, m - 1)


def horner(coeffs, t, nu):
    """Σₚ coeffs[p] · d^ν/dt^ν t^(k−p) (coeffs is a list, highest power first)."""
    k = len(coeffs) - 1
    if nu > k:
        return coeffs[0] * 0.0 + t * 0.0
    val = None
    for p in range(k - nu + 1):
        power = k - p
        term = coeffs[p] * float(math.perm(power, nu)) if nu else coeffs[p]
        val = term if val is None else val * t + term
    return val


def wrap_periodic(x, lo, hi):
    return lo + np.mod(x - lo, hi - lo)


def evaluate(c, breaks, x, nu, extrapolate):
    """Σₚ c[p, i(ξ)] (ξ − x_i)^(k−p), differentiated ``nu`` times; shape ξ.shape + rest."""
    if nu < 0:
        raise NotImplementedError("PPoly: nu < 0 (antiderivatives) in __call__ is not "
                                  "supported; use .antiderivative(-nu)(x)")
    lo, hi = breaks[0], breaks[-1]
    if extrapolate == "periodic":
        x = wrap_periodic(x, lo, hi)
    xp = np.asarray(primal_value(x), dtype=float)
    idx = interval_of(breaks, xp)
    rest = shape_of(c)[2:]
    t = x - breaks[idx]
    if rest:
        t = np.reshape(t, np.shape(xp) + (1,) * len(rest))
    k = shape_of(c)[0] - 1
    coeffs = [c[p][idx] for p in range(k + 1)]
    out = horner(coeffs, t, nu)
    if not isinstance(out, Box):
        out = np.asarray(out, dtype=float)
    if shape_of(out) != np.shape(xp) + rest:
        out = np.broadcast_to(out, np.shape(xp) + rest)
    if not extrapolate:
        outside = (xp < lo) | (xp > hi) | np.isnan(xp)
        if np.any(outside):
            out = np.where(np.reshape(outside, np.shape(xp) + (1,) * len(rest)), np.nan, out)
    return out


def move_output_axis(out, xndim, axis):
    """SciPy puts the evaluation points' axes where the interpolation axis was."""
    if axis == 0:
        return out
    perm = list(range(ndim_of(out)))
    perm = perm[xndim:xndim + axis] + perm[:xndim] + perm[xndim + axis:]
    return np.transpose(out, perm)


class PPoly:
    """``scipy.interpolate.PPoly(c, x, extrapolate=None, axis=0)`` with ``c`` (k+1, m, ...)
    possibly traced and ``x`` (m+1,) plain increasing breakpoints."""

    def __init__(self, c, x, extrapolate=None, axis=0):
        fname = type(self).__name__
        self.x = plain_abscissae(fname, "breakpoints x", x)
        self.c = as_data(fname, "c", c)
        if ndim_of(self.c) < 2:
            raise ValueError(f"{fname}: c must have at least 2 dimensions, got shape "
                             f"{shape_of(self.c)}")
        if self.x.ndim != 1 or self.x.size < 2:
            raise ValueError(f"{fname}: x must be 1-dimensional with at least 2 breakpoints, "
                             f"got shape {self.x.shape}")
        if shape_of(self.c)[1] != self.x.size - 1:
            raise ValueError(f"{fname}: shapes of c {shape_of(self.c)} and x {self.x.shape} "
                             f"are incompatible (c.shape[1] must be len(x) - 1)")
        if np.any(np.diff(self.x) < 0):
            raise NotImplementedError(f"{fname}: decreasing breakpoints are not supported here; "
                                      f"reverse x and c's interval axis")
        self.extrapolate = True if extrapolate is None else extrapolate
        self.axis = int(axis)

    @classmethod
    def construct_fast(cls, c, x, extrapolate=None, axis=0):
        obj = PPoly.__new__(PPoly)
        obj.c, obj.x, obj.axis = c, x, axis
        obj.extrapolate = True if extrapolate is None else extrapolate
        return obj

    def __call__(self, x, nu=0, extrapolate=None):
        x = as_points(type(self).__name__, x)
        ext = self.extrapolate if extrapolate is None else extrapolate
        out = evaluate(self.c, self.x, x, int(nu), ext)
        return move_output_axis(out, ndim_of(x), self.axis)

    def derivative(self, nu=1):
        """The ``nu``-th derivative as a PPoly: c'[p] = c[p] · (k−p)!/(k−p−ν)!."""
        if nu < 0:
            return self.antiderivative(-nu)
        k = shape_of(self.c)[0] - 1
        if nu > k:
            c = np.zeros((1,) + shape_of(self.c)[1:]) + 0.0 * self.c[0]
        elif nu == 0:
            c = self.c
        else:
            scale = np.array([math.perm(k - p, nu) for p in range(k - nu + 1)], dtype=float)
            c = self.c[:k - nu + 1] * np.reshape(scale, (-1,) + (1,) * (ndim_of(self.c) - 1))
        return PPoly.construct_fast(c, self.x, self.extrapolate, self.axis)

    def antiderivative(self, nu=1):
        """The ``nu``-th antiderivative, zero at x_0 and continuous: c̃[p] = c[p]/(k+1−p),
        and the constant term of interval i the integral over the intervals before it."""
        if nu <= 0:
            return self.derivative(-nu)
        c = self.c
        for _ in range(nu):
            k = shape_of(c)[0] - 1
            tail = (1,) * (ndim_of(c) - 1)
            c = c / np.reshape(np.arange(k + 1, 0, -1, dtype=float), (-1,) + tail)
            zero = np.zeros((1,) + shape_of(c)[1:])
            dx = np.reshape(np.diff(self.x), (-1,) + tail[1:])
            widths = horner([c[p] for p in range(k + 1)] + [zero[0]], dx, 0)
            const = np.concatenate([zero[0][:1], np.cumsum(widths, axis=0)[:-1]], axis=0)
            c = np.concatenate([c, np.expand_dims(const, 0)], axis=0)
        ext = False if self.extrapolate == "periodic" else self.extrapolate
        return PPoly.construct_fast(c, self.x, ext, self.axis)

    def integrate(self, a, b, extrapolate=None):
        """∫ₐᵇ of the polynomial, differentiable in the coefficients and in a and b."""
        ext = self.extrapolate if extrapolate is None else extrapolate
        anti = self.antiderivative()
        lo, hi = self.x[0], self.x[-1]

        def F(z):
            return move_output_axis(evaluate(anti.c, self.x, z, 0, True), 0, self.axis)

        if ext != "periodic":
            pa, pb = float(primal_value(a)), float(primal_value(b))
            val = F(b) - F(a)
            if not ext and (min(pa, pb) < lo or max(pa, pb) > hi):
                return val * np.nan
            return val
        period = hi - lo
        pa, pb = float(primal_value(a)), float(primal_value(b))
        if pb < pa:
            return -self.integrate(b, a, extrapolate)
        whole = F(np.float64(hi)) - F(np.float64(lo))
        n = math.floor((pb - pa) / period)
        a0 = wrap_periodic(a, lo, hi)
        rest = (b - a) - n * period
        end = a0 + rest
        if float(primal_value(end)) <= hi:
            part = F(end) - F(a0)
        else:
            part = (F(np.float64(hi)) - F(a0)) + (F(end - period) - F(np.float64(lo)))
        return n * whole + part
