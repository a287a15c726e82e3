"""``dualad.scipy.interpolate``: SciPy's interpolants with traced data and traced points.

    CubicSpline(x, y, axis, bc_type, extrapolate)    a PPoly; (x, nu), derivative,
                                                     antiderivative, integrate
    PPoly(c, x, extrapolate, axis)                   traced coefficients
    BSpline(t, c, k, extrapolate, axis)              traced coefficients; derivative
    make_interp_spline(x, y, k, t, bc_type, axis)    → BSpline, linear in y
    interp1d(x, y, kind, axis, bounds_error, fill_value, assume_sorted)
    RegularGridInterpolator(points, values, method, bounds_error, fill_value), interpn
                                                     (linear, slinear, nearest, cubic, quintic)

Same names and signatures as ``scipy.interpolate``. Each is differentiable in the data
values (the interpolant is linear in them) and in the evaluation points (piecewise
polynomial; at a knot the derivative is the right piece's), in both modes and to any
order. Abscissae, knots and grids must be plain arrays (a traced one raises, naming it).
"""
from ._ppoly import PPoly  # noqa: F401
from ._splines import BSpline, CubicSpline, make_interp_spline  # noqa: F401
from ._interp1d import interp1d  # noqa: F401
from ._grid import RegularGridInterpolator, interpn  # noqa: F401

__all__ = [
    "PPoly", "BSpline", "CubicSpline", "make_interp_spline", "interp1d",
    "RegularGridInterpolator", "interpn"
]
