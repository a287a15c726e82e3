"""SciPy functions with derivative rules: ``dualad.scipy.special``, ``.linalg``, ``.stats``,
``.integrate``, ``.sparse``, ``.interpolate``, ``.spatial``, ``.ndimage``, ``.signal``,
``.optimize`` (SciPy's solvers, their solutions differentiated implicitly; the Rosenbrock
family), ``.fft`` (a scipy.fft backend).

SciPy's own functions do not dispatch on traced values (except scipy.special's
ufuncs, which do); call these instead.

Every submodule loads on first access (``dualad.scipy.special`` after a plain ``import
dualad`` imports it then), so that ``import dualad`` does not import SciPy's submodules:
docs/architecture.md, "What loads lazily". ``integrate`` and ``sparse`` declare primitives;
the registry loads them when it is first walked or misses (dualad.core.families).
"""
from ..core.lazy import attach as _attach

__all__ = ["integrate", "sparse"]

__getattr__, __dir__ = _attach(__name__, listed=(
    "integrate", "sparse", "special", "linalg", "stats", "interpolate", "spatial", "ndimage",
    "signal", "optimize", "fft"))
