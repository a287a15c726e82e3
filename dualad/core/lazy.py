"""Names a package loads when they are first used (the scientific-Python convention, SPEC 1).

``import dualad`` imports what every derivative needs (the core primitives, the
interpreters, the NumPy front end) and leaves out what needs SciPy's heavy submodules or
SymPy: the ``dualad.scipy`` mirrors, ``dualad.transforms.implicit``, the planner and the oracles
load on first use, through the module-level ``__getattr__`` and ``__dir__`` that
:func:`attach` writes (PEP 562), and the families of primitives behind scipy.special and
the linear algebra through the registry's tables (:func:`dualad.core.primitive.load_families`).
``docs/architecture.md`` ("What loads lazily") says which and why.

Loading is an ``import`` statement, so Python's per-module import lock makes it
thread-safe; the attribute then cached on the package is the imported object itself,
the same whichever thread stores it first.
"""
from __future__ import annotations

import importlib
import importlib.util
import sys

__all__ = ["attach"]


def attach(package, attributes=None, listed=(), hidden=()):
    """``(__getattr__, __dir__)`` for ``package``, loading on first use.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    attributes : dict, optional
        ``{name: module}``: ``package.name`` is ``name`` taken from the module of that
        absolute dotted name (imported then).
    listed : iterable of str, optional
        Names ``dir(package)`` shows besides those already loaded (what an eager import
        used to list).
    hidden : iterable of str, optional
        Names ``dir(package)`` leaves out (the loading machinery's own modules), besides
        the ``__getattr__``, ``__dir__`` and ``_attach`` this sets up.

    Returns
    -------
    tuple
        The ``__getattr__`` and ``__dir__`` functions to bind in the package's namespace.
        Any public submodule of the package is reachable as an attribute (imported on
        first access); other names raise ``AttributeError`` as usual.
    """
    attributes = dict(attributes or {})
    listed = frozenset(listed) | set(attributes)
    hidden = frozenset(hidden) | {"__getattr__", "__dir__", "_attach"}

    def __getattr__(name):
        module = sys.modules[package]
        if name in attributes:
            value = getattr(importlib.import_module(attributes[name]), name)
            setattr(module, name, value)   # next time a plain attribute
            return value
        if not name.startswith("_") and hasattr(module, "__path__") \
                and importlib.util.find_spec(f"{package}.{name}") is not None:
            return importlib.import_module(f"{package}.{name}")   # sets the attribute
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__():
        return sorted((set(vars(sys.modules[package])) | listed) - hidden)

    return __getattr__, __dir__
