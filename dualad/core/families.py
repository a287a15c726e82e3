"""The families of primitives declared on first use, not by ``import dualad``.

Each needs a heavy SciPy submodule (or pulls one in through its imports), so importing it
eagerly made ``import dualad`` cost seconds: scipy.special's rules
(:mod:`dualad.ops.special`), the linear algebra of numpy.linalg and scipy.linalg
(:mod:`dualad.ops.linalg`), implicit differentiation (:mod:`dualad.transforms.implicit`: scipy.sparse,
scipy.linalg) and the primitives of ``dualad.scipy.integrate`` and ``dualad.scipy.sparse``
(scipy.integrate, scipy.sparse), with the array-API namespace's ``special``. The registry's
tables (:data:`dualad.core.primitive.REGISTRY`, ``NUMPY_UFUNCS``, ``NUMPY_FUNCTIONS``) call
:func:`load` through :func:`dualad.core.primitive.load_families` on a miss and before they are
walked, so a traced ``scipy.special.gammaln(x)`` or ``np.linalg.solve(a, b)`` finds its
rule, and the rule checker sees every primitive, as when all loaded eagerly.
"""
from __future__ import annotations

import importlib
import sys

import numpy as np

from .primitive import FAMILY_LOADERS, load_families

__all__ = ["FAMILIES", "load", "guess", "load_families"]

# The modules whose import declares the lazily loaded primitives, in the order the eager
# import used to load them.
FAMILIES = (
    "dualad.ops.special",
    "dualad.ops.linalg",
    "dualad.transforms.implicit",
    "dualad.scipy.integrate",
    "dualad.scipy.sparse",
)


def load():
    """Import every family (what :func:`dualad.core.primitive.load_families` calls, once)."""
    for name in FAMILIES:
        importlib.import_module(name)


def guess(key):
    """Import the one family that likely declares ``key`` (a callable a table lacks); True
    when it was not loaded yet. A wrong guess costs nothing but time: the table looks
    again and, still missing, loads every family (:func:`load`)."""
    if isinstance(key, np.ufunc):
        name = None if getattr(np, key.__name__, None) is key else "dualad.ops.special"
    else:
        module = getattr(key, "__module__", None) or ""
        name = "dualad.ops.linalg" if module.startswith(("numpy.linalg", "scipy.linalg")) \
            else "dualad.ops.special" if module.startswith("scipy.special") else None
    if name is None or name in sys.modules:
        return False
    importlib.import_module(name)
    return True


FAMILY_LOADERS[:] = [guess, load]
