"""``xp.special``: where SciPy (with ``SCIPY_ARRAY_API=1``) looks for a backend's own
special functions (``scipy.special._support_alternative_backends`` reads
``xp.special.<name>``).

A name resolves to SciPy's raw ufunc when dualad has a rule for it; the ufunc
reaches that rule through ``__array_ufunc__``. SciPy's array-API wrapper of the
same name must not be returned: it would ask this namespace again. Without a rule
the name is absent and SciPy falls back to its NumPy path, whose conversion of a
traced value raises an error naming the function.
"""
from __future__ import annotations

import numpy as np

from ..core.primitive import NUMPY_UFUNCS as UFUNCS   # the ufuncs with a rule
from ._array import native


def _names():
    """The public names of scipy.special's ufuncs that have a rule."""
    from scipy.special import _ufuncs   # here: scipy.special loads when first asked
    return sorted(name for name in dir(_ufuncs) if not name.startswith("_")
                  and isinstance(getattr(_ufuncs, name), np.ufunc)
                  and getattr(_ufuncs, name) in UFUNCS)


def __getattr__(name):
    if name == "__all__":   # the names with a rule now (a primitive declared later adds its own)
        return _names()
    from scipy.special import _ufuncs   # here: scipy.special loads when first asked
    ufunc = getattr(_ufuncs, name, None)
    if isinstance(ufunc, np.ufunc) and ufunc in UFUNCS:
        return native(ufunc)
    raise AttributeError(f"dualad.array_api.special has no rule for {name!r}")
