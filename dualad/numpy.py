"""``import dualad.numpy as dnp``: NumPy's names, routed through the registry.

Plain ``numpy`` already works on traced values (the NumPy protocols dispatch
to the registry). This namespace adds what dispatch cannot reach, chiefly
:func:`array` of traced scalars (``np.array([a, b])`` never asks its elements),
and falls back to NumPy itself for everything else (constants, dtypes,
constructors), so a function without a rule still raises a clear error when
it meets a traced value.
"""
from __future__ import annotations

import builtins as _builtins

import numpy as _np

from . import ops as _ops
from .frontend.dispatch import FUNCTIONS as _FUNCTIONS, UFUNCS as _UFUNCS, np_mean as _mean, \
    np_sum as _sum
from .core.tracer import Box as _Box

# NumPy's names whose rule is in a family declared on first use (dualad.core.families): asking
# for one declares the families, then the name is the rule's, as with an eager import.
# (tests/dualad/test_lazy_import.py checks this list against the tables.)
_LATE = frozenset({"i0"})


def _fill(declared):
    """Put the tables' NumPy names in this namespace (``declared``: the tables as they are,
    without loading the lazily declared families)."""
    ns = {}
    for table in (_UFUNCS, _FUNCTIONS):
        for np_fn, fn in (dict.items(table) if declared else table.items()):
            if isinstance(np_fn, _np.ufunc) or getattr(np_fn, "__module__", "") == "numpy":
                ns[np_fn.__name__] = fn
    ns.update(abs=_ops.absolute, sum=_sum, mean=_mean, max=_ops.max, min=_ops.min,
              amax=_ops.max, amin=_ops.min, clip=_ops.clip)
    # This fills the module with NumPy's names, shadowing the builtins any, all, sum, abs,
    # ...: module code below calls the builtins through _builtins.
    globals().update(ns)
    if not declared:
        globals()["_ns"] = ns   # every name from the tables (first asked: loads the families)


_fill(declared=True)


def _contains_box(obj):
    if isinstance(obj, _Box):
        return True
    if isinstance(obj, (list, tuple)):
        return _builtins.any(_contains_box(o) for o in obj)
    return False


def array(obj, dtype=None, *, copy=True, order="K", subok=False, ndmin=0, like=None):
    """``np.array`` that keeps derivatives of traced elements (built with ``stack``).

    As NumPy's: a new array unless ``copy=False`` (a traced value can be written in
    place, so the copy matters), cast to ``dtype`` (an integer dtype gives plain
    integers, zero derivative: dualad.frontend.casts), at least ``ndmin`` axes (added in front).
    ``order`` and ``subok`` do not change values."""
    if isinstance(obj, _Box):
        out = _np.copy(obj) if copy else obj
    elif isinstance(obj, (list, tuple)) and _contains_box(obj):
        out = _ops.stack([asarray(o) for o in obj])
    else:
        return _np.array(obj, dtype=dtype, copy=copy, order=order, subok=subok, ndmin=ndmin,
                         **({} if like is None else {"like": like}))
    if dtype is not None:
        out = out.astype(dtype)
    missing = ndmin - len(out.shape)
    if missing > 0 and isinstance(out, _Box):
        out = _ops.reshape(out, (1,) * missing + tuple(out.shape))
    return out


def asarray(obj, dtype=None, *, order=None, copy=None, like=None):
    """``np.asarray``: :func:`array` without a copy unless asked (``copy=True``); plain
    input is NumPy's own (``copy=None``: a copy only where needed)."""
    if isinstance(obj, _Box) or (isinstance(obj, (list, tuple)) and _contains_box(obj)):
        return array(obj, dtype, copy=bool(copy))
    return _np.asarray(obj, dtype=dtype, order=order, copy=copy,
                       **({} if like is None else {"like": like}))


def __getattr__(name):
    if name in _LATE or not (name.startswith("__") or hasattr(_np, name)):
        _fill(declared=False)   # scipy.special's ufuncs (erf, gammaln, ...), numpy.i0
        if name in globals():
            return globals()[name]
    return getattr(_np, name)
