"""SciPy functions with derivative rules: ``dualad.scipy.special``, ``.linalg``, ``.stats``,
``.integrate``, ``.sparse``, ``.interpolate``, ``.spatial``, ``.ndimage``, ``.signal``,
``.optimize`` (SciPy's solvers, their solutions differentiated implicitly; the Rosenbrock
family), ``.fft`` (a scipy.fft backend).

SciPy's own functions do not dispatch on traced values (except scipy.special's
ufuncs, which do); call these instead.
"""
from . import integrate  # noqa: F401  (registers the odeint and quad primitives)
from . import sparse  # noqa: F401  (registers sparse_matmul and sparse_solve)

__all__ = ["integrate", "sparse"]
