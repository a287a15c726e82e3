"""The input check the dualad.scipy front ends share: an argument as a real floating array.

SciPy's interpolators, filters and distances take real data. A plain argument becomes an
ndarray (a copy where the front end keeps it: SciPy copies data it stores), a traced one
stays traced; integer and boolean data become float64, as SciPy computes them; complex
data raises NotImplementedError and any other dtype TypeError, each naming the function,
the argument, its dtype and shape.
"""
from __future__ import annotations

import numpy as np

from ..core.tracer import Box, shape_of, unguarded_value

__all__ = ["real_floats"]


def real_floats(fname, arg, x, *, copy=False, complex_hint=""):
    """``x`` as a real floating array for ``fname``'s argument ``arg`` (see the module)."""
    if not isinstance(x, Box):
        x = np.array(x) if copy else np.asarray(x)
    dt = np.result_type(unguarded_value(x))
    if dt.kind == "c":
        raise NotImplementedError(f"{fname}: complex {arg} is not supported here"
                                  f"{complex_hint}")
    if dt.kind in "biu":
        return x.astype(np.float64)
    if dt.kind != "f":
        raise TypeError(f"{fname}: {arg} must be a real numeric array, got dtype {dt} (shape "
                        f"{shape_of(x)})")
    return x
