"""Linear algebra: ``numpy.linalg`` and ``scipy.linalg``, one module per family:

- :mod:`.basic`: inv, solve, solve_triangular, cholesky;
- :mod:`.det`: det, slogdet and their derivative, the cofactor matrix (adjugate);
- :mod:`.decomp`: eigh, eig, svd, qr; :mod:`.lu`: lu, lu_factor, lu_solve;
- :mod:`.func`, :mod:`.func_extra`: matrix functions (expm, logm, sqrtm, ...);
- :mod:`.norm`: pinv, lstsq, norms, cond; :mod:`.equations`: matrix equations;
  :mod:`.banded`: banded solvers;
- :mod:`._common`: what they share (transpose, product, argument checks, the SymPy
  mapping over stacks, sample matrices). It imports none of its siblings, and no module
  of the family imports this package: the family has no import cycle.

This package merges the NumPy front end's tables for the family (``NUMPY_UFUNCS``,
``NUMPY_FUNCTIONS``: every numpy.linalg function with a dualad counterpart).
"""
from __future__ import annotations

import numpy as np

from ..core.elementwise import multiply
from ..core.products import diagonal as _diagonal, matmul, outer as _outer
from ..core.products import tensordot as _tensordot
from ..core.reductions import sum as sum_
from . import banded, equations, func_extra  # noqa: F401  (register scipy.linalg's primitives)
from ._common import mT
from .basic import cholesky, inv, solve
from .det import det, slogdet
from .decomp import eigh, eigvalsh, eig, eigvals, svd, svdvals, qr
from .func import expm, logm, sqrtm, solve_sylvester, matrix_power, multi_dot  # noqa: F401
from .func import tensorinv, tensorsolve
from . import lu  # noqa: F401  (registers)
from .norm import pinv, lstsq, norm, matrix_norm, vector_norm, matrix_rank, cond

NUMPY_UFUNCS = {}
NUMPY_FUNCTIONS = {
    np.linalg.inv: inv, np.linalg.solve: solve, np.linalg.det: det, np.linalg.slogdet: slogdet,
    np.linalg.cholesky: cholesky, np.linalg.eigh: eigh, np.linalg.eigvalsh: eigvalsh,
    np.linalg.eig: eig, np.linalg.eigvals: eigvals, np.linalg.svd: svd, np.linalg.qr: qr,
    np.linalg.pinv: pinv, np.linalg.lstsq: lstsq, np.linalg.norm: norm,
    np.linalg.matrix_power: matrix_power, np.linalg.multi_dot: multi_dot,
    np.linalg.matrix_rank: matrix_rank,
    np.linalg.cond: cond, np.linalg.tensorinv: tensorinv, np.linalg.tensorsolve: tensorsolve,
}
_ARRAY_API = {  # NumPy >= 2.0: the array-API names in numpy.linalg
    "svdvals": svdvals, "matrix_norm": matrix_norm, "vector_norm": vector_norm,
    "matrix_transpose": mT, "matmul": matmul,
    "diagonal": lambda x, /, *, offset=0: _diagonal(x, offset, -2, -1),
    "trace": lambda x, /, *, offset=0, dtype=None: sum_(_diagonal(x, offset, -2, -1), axis=-1),
    "outer": lambda x1, x2, /: _outer(x1, x2),
    "vecdot": lambda x1, x2, /, *, axis=-1: sum_(multiply(x1, x2), axis=axis),
    "tensordot": lambda x1, x2, /, *, axes=2: _tensordot(x1, x2, axes),
}
for _name, _fn in _ARRAY_API.items():
    if hasattr(np.linalg, _name):  # NumPy >= 2.0
        NUMPY_FUNCTIONS[getattr(np.linalg, _name)] = _fn
