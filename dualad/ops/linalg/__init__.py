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

Each function declares the ``numpy.linalg`` callable it computes where it is defined
(``@implements(np.linalg.inv)``); the array-API aliases of numpy.linalg are declared here.
"""
from __future__ import annotations

import numpy as np

from ...core.primitive import implements
from ..core.elementwise import multiply
from ..core.products import diagonal as _diagonal, matmul, outer as _outer
from ..core.products import tensordot as _tensordot
from ..core.reductions import sum as sum_
from . import banded, basic, det, equations, func, func_extra, lu  # noqa: F401  (register)
from ._common import mT
from .decomp import svdvals
from .norm import matrix_norm, vector_norm

__all__ = []   # importing it registers the family; its names live in its modules

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
        implements(getattr(np.linalg, _name))(_fn)
