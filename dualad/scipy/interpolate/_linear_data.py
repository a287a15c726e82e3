"""The data → coefficients map of an interpolant, applied to traced data.

Every interpolant here is linear in its data values y (for fixed abscissae and boundary
conditions): its coefficients are C = A⁻¹ R y for SciPy's (banded) collocation system,
plus a constant part from nonzero boundary-derivative values. We do not re-derive SciPy's
system: we run SciPy's own constructor once on the unit vectors (y = I, boundary values
0), which gives the matrix M of the map with C = M y, and once on y = 0 with the user's
boundary values (the affine part C₀). A traced y then enters through ``tensordot(M, y)``,
a registry operation: its JVP is M ẏ and its VJP the transposed map Mᵀ C̄ (the transposed
solve, here as a stored matrix). The values agree with SciPy's to rounding.

Cost: M has n·(number of coefficients) entries (an n×n-sized matrix per coefficient row),
built only when y is traced; fine to a few thousand data points.

Periodic conditions need y[0] = y[−1]: the map then reads y[:-1] (so y[−1]'s derivative
is 0 and y[0] carries it), as SciPy only checks the last value.
"""
from __future__ import annotations

import numpy as np

from ...core.tracer import Box, primal_value, shape_of, unguarded_value

__all__ = ["linear_in_data"]


def linear_in_data(fname, build, y, periodic=False):
    """Coefficients ``C`` (shape coeffs + y.shape[1:]) of ``build`` applied to ``y`` (the
    interpolation axis first). ``build(Y)`` runs SciPy on a plain Y (n, ...) and returns
    its coefficient array, whose leading axes are the coefficient axes, last the y
    trailing axes; ``build(Y, zero_bc=True)`` uses zero boundary-derivative values."""
    if not isinstance(y, Box):
        return build(np.asarray(y, dtype=float))
    yp = np.asarray(unguarded_value(y), dtype=float)   # its shape (the values: periodic only)
    n = yp.shape[0]
    rest = yp.shape[1:]
    if periodic:
        yp = np.asarray(primal_value(y), dtype=float)
        if not np.allclose(yp[0], yp[-1], atol=1e-15):
            raise ValueError(f"{fname}: the first and last `y` point along axis must be "
                             f"identical (within machine precision) when bc_type='periodic'.")
        basis = np.concatenate([np.eye(n - 1), np.eye(n - 1)[:1]], axis=0)   # y[-1] = y[0]
        y = y[:-1]
    else:
        basis = np.eye(n)
    M = build(basis, zero_bc=True)                 # coeffs + (n or n - 1,)
    coeffs = M.shape[:-1]
    C = np.tensordot(M, np.reshape(y, (shape_of(y)[0], -1)), axes=([M.ndim - 1], [0]))
    C = np.reshape(C, coeffs + rest)
    affine = build(np.zeros((n,) + rest))
    if np.any(affine != 0):
        C = C + affine
    return C
