"""The signature of a call to a jitted function: the cache key, and what the program
assumed beyond its inputs.

A key is the arguments' container structure, each leaf's part (an array's type, shape
and dtype; a float's type; a static leaf's value) and the static arguments' values;
:func:`_fast_key` is the same for the common call of positional arrays and floats,
without flattening. :class:`_Env` holds the objects the function's code reads from its
closure and globals (and the attributes of static arguments hashed by identity,
:func:`_held`), compared by identity on every call: a rebinding traces again.
"""
from __future__ import annotations

import numpy as np

from ..tracer import Box

__all__ = ["_Env", "_fast_key", "_held", "_leaf_key", "_positional", "_static",
           "_structure"]   # private helpers of dualad.jit.api


_SCALARS = (float, complex, np.float64, np.float32, np.complex128, np.complex64,
            np.float16, np.longdouble, np.clongdouble)


def _leaf_key(x, where):
    """A leaf's part of the signature, and whether it is traced."""
    kind = x.__class__
    if kind is np.ndarray:
        if x.dtype.hasobject:
            raise TypeError(f"{where} is an object array (dtype=object); dualad.jit traces "
                            f"numeric arrays: build it with np.stack or np.array of numbers")
        return (kind, x.shape, x.dtype.str), True
    if kind in _SCALARS or isinstance(x, np.generic) and x.dtype.kind in "fc":
        return kind, True
    if isinstance(x, np.generic):   # an integer or boolean NumPy scalar: traced too
        return kind, True
    if isinstance(x, Box):
        return None, True
    try:
        hash(x)
    except TypeError:
        raise TypeError(
            f"{where} is {type(x).__name__!r}, which dualad.jit can neither trace (it traces "
            f"arrays and numbers) nor use as a static argument (not hashable). Pass arrays "
            f"or numbers, or containers (tuple, list, dict) of them") from None
    return ("static", kind, x), False


class _Env:
    """The objects ``f``'s code reads from its closure cells and globals (the names its
    code uses) when it is called. A program assumed them, so a rebinding (``lr = 0.01``
    after the trace, a redefined helper) must trace again: compared by identity, and
    the objects are held, so an id is never reused while compared."""

    __slots__ = ("objs",)

    def __init__(self, fun, names, held=()):
        cells = getattr(fun, "__closure__", None) or ()
        objs = [c.cell_contents if _filled(c) else _EMPTY for c in cells]
        if names:
            g = fun.__globals__
            objs.extend(g.get(n, _EMPTY) for n in names)
        objs.extend(held)
        self.objs = objs

    def __eq__(self, other):
        a, b = self.objs, other.objs
        if len(a) != len(b):
            return False
        for x, y in zip(a, b):
            if x is not y:
                return False
        return True

    __hash__ = None


_EMPTY = object()


def _held(key):
    """The attributes of static arguments hashed by identity (``self`` of a jitted
    method): the program read them at trace time, so rebinding one (``self.w = 4.0``)
    must trace again, as a rebound closure variable does. (Objects with their own
    ``__hash__`` and ``__eq__`` are compared by those.)"""
    if len(key) != 3 or key[0].__class__ is not tuple or key[0][:1] != (tuple,):
        return ()   # a fast key (positional arrays and floats): no static arguments
    found = [k[2] for k in key[1] if k.__class__ is tuple and k[0] == "static"]
    found += [v for _, (_, v) in key[2]]
    out = ()
    for obj in found:
        if type(obj).__hash__ is object.__hash__:
            d = getattr(obj, "__dict__", None)
            if d:
                out += tuple(d) + tuple(d.values())
    return out


def _filled(cell):
    try:
        cell.cell_contents
        return True
    except ValueError:   # a cell not yet assigned (a function defined before its closure)
        return False


def _fast_key(args):
    """The signature of positional arrays and floats (None for anything else)."""
    key = []
    for x in args:
        kind = x.__class__
        if kind is np.ndarray:
            if x.dtype.hasobject:
                return None
            key.append((x.shape, x.dtype))
        elif kind is float or kind is np.float64:
            key.append(kind)
        else:
            return None
    return tuple(key)


def _positional(leaves):
    return list(leaves), {}


def _static(value, where):
    try:
        hash(value)
    except TypeError:
        raise TypeError(f"dualad.jit: {where} must be hashable (it is part of the cache key), "
                        f"got {type(value).__name__!r}") from None
    return (type(value), value)


def _structure(t):
    if isinstance(t, (tuple, list)):
        return (type(t), tuple(_structure(x) for x in t))
    if isinstance(t, dict):
        return (dict, tuple((k, _structure(v)) for k, v in t.items()))
    return None
