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
from .dispatch import FUNCTIONS as _FUNCTIONS, UFUNCS as _UFUNCS, np_mean as _mean, \
    np_sum as _sum
from .tracer import Box as _Box

_ns = {}
for _table in (_UFUNCS, _FUNCTIONS):
    for _np_fn, _fn in _table.items():
        if isinstance(_np_fn, _np.ufunc) or getattr(_np_fn, "__module__", "") == "numpy":
            _ns[_np_fn.__name__] = _fn
_ns.update(abs=_ops.absolute, sum=_sum, mean=_mean, max=_ops.max, min=_ops.min, amax=_ops.max,
           amin=_ops.min, clip=_ops.clip)
# This fills the module with NumPy's names, shadowing the builtins any, all, sum, abs, ...:
# module code below calls the builtins through _builtins.
globals().update(_ns)


def _contains_box(obj):
    if isinstance(obj, _Box):
        return True
    if isinstance(obj, (list, tuple)):
        return _builtins.any(_contains_box(o) for o in obj)
    return False


def array(obj, dtype=None, **kwargs):
    """``np.array`` that keeps derivatives of traced elements (built with ``stack``)."""
    if isinstance(obj, _Box):
        return obj
    if isinstance(obj, (list, tuple)) and _contains_box(obj):
        return _ops.stack([array(o, dtype) for o in obj])
    return _np.array(obj, dtype=dtype, **kwargs)


def asarray(obj, dtype=None, **kwargs):
    return array(obj, dtype, **kwargs)


def __getattr__(name):
    return getattr(_np, name)
