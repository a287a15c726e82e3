"""``dualad.scipy.ndimage``: SciPy's linear filters and ``map_coordinates`` on traced values.

    correlate, convolve, correlate1d, convolve1d   differentiable in input, weights, cval
    gaussian_filter, gaussian_filter1d             differentiable in input (σ plain)
    uniform_filter, uniform_filter1d               differentiable in input
    map_coordinates (order 0, 1, 3)                differentiable in input and coordinates
    sobel, prewitt, laplace, gaussian_laplace, gaussian_gradient_magnitude   in input

Same names and signatures as ``scipy.ndimage``. The filters are linear in the input; their
reverse rule is the exact adjoint of the boundary-handled filter (see :mod:`._extend`).
"""
from ._filters import (convolve, convolve1d, correlate, correlate1d, gaussian_filter,  # noqa
                       gaussian_filter1d, uniform_filter, uniform_filter1d)
from ._derivatives import (gaussian_gradient_magnitude, gaussian_laplace, laplace,  # noqa
                           prewitt, sobel)
from ._interpolation import map_coordinates, spline_filter, spline_filter1d  # noqa: F401

__all__ = [
    "convolve", "convolve1d", "correlate", "correlate1d", "gaussian_filter",
    "gaussian_filter1d", "uniform_filter", "uniform_filter1d",
    "gaussian_gradient_magnitude", "gaussian_laplace", "laplace", "prewitt", "sobel",
    "map_coordinates", "spline_filter", "spline_filter1d"
]
