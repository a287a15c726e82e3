"""NumPy coverage beyond the core families, in both modes (issue 4).

The functions live in small modules grouped by family, each declaring the NumPy
callables it computes (``dualad.core.primitive.implements``); this one imports them all and
names the ndarray methods boxes gain (``BOX_METHODS``):

- :mod:`.ufuncs`            sinc, remainder/mod, fmod, copysign, heaviside,
                            nan_to_num, ldexp, frexp, modf, divmod, and the
                            zero-derivative ones (round, fix, floor_divide, ...)
- :mod:`.reductions`        cumprod (a primitive, exact with zeros), the nan-aware
                            reductions, average, ptp
- :mod:`.calculus`          diff, ediff1d, trapezoid, gradient
- :mod:`.sorting`           sort (a primitive, ties averaged), partition, unique,
                            median/quantile/percentile and nan forms, index functions
- :mod:`.arrays`            take, take_along_axis, repeat, tile, resize, pad, roll,
                            rot90, flips, rollaxis, the split family
- :mod:`.joining`           atleast_nd, dstack, column_stack, append, insert, delete,
                            block, extract, compress, ...
- :mod:`.build`             select, choose, kron, cross, linspace/logspace/geomspace,
                            meshgrid, full, interp, bincount, vander, vecdot, ...
- :mod:`.convolve`          convolve (a primitive, N-dimensional), correlate, polyval
                            and the polynomial helpers
- :mod:`.functional`        piecewise, apply_along_axis, apply_over_axes, unwrap, ...
- :mod:`.inplace`           copyto: errors naming np.full / np.full_like when NumPy's
                            own body would write a traced fill value into a plain array

Conventions at kinks are stated in each module's docstring and collected in
``docs/numpy_coverage.md``.
"""
from __future__ import annotations

from . import (arrays, build, calculus, convolve, functional, inplace, joining,  # noqa: F401
               reductions, sorting, ufuncs)  # (their declarations fill the dispatch tables)
from .methods import BOX_METHODS  # noqa: F401

__all__ = ["BOX_METHODS"]
