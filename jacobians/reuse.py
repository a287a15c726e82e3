"""Mode choices shared by fresh function objects of the same code.

``jacobian(lambda x: A @ np.sin(x), x)`` in a loop makes a new function object every
time, so a cache keyed on the object (:class:`jacobians._common.FunctionCache`) never
hits and each call would pay the planning again (a census, maybe a pattern detection
and timed sweeps). :func:`code_key` names such a function by what decides its cost:

    its code object, the *signature* of each closure cell, of its defaults and
    keyword defaults (arrays: shape and dtype; numbers, strings, None: their value, or
    inside a tuple or list their type, as a list used as a counter changes while f runs;
    tuples and lists: their items'; anything else: its identity), and its globals' dict

and :data:`MODES` maps that (with the arguments' signature and the call's options) to
the chosen mode and chunk size.

Why this is safe: a mode choice and a chunk size only change how fast the result is
computed and how much memory one sweep takes, never its value, so a key that collides
(an ``id`` reused after garbage collection, a closure cell rebound to an array of the
same shape, a global changed) can cost speed, never correctness. What *would* change a
value is never kept this way: sparsity patterns and colorings are detected again for
each new function object (a pattern is kept only per object, and checked at each new
point: :mod:`jacobians.validity`), and the output's shapes come from the run itself.
"""
from __future__ import annotations

__all__ = ["code_key", "ModeCache", "MODES"]

import types
from collections import OrderedDict

import numpy as np

_SCALARS = (int, float, complex, bool, str, bytes, type(None), np.generic)


def _sig(value, depth=0):
    if isinstance(value, np.ndarray):
        return ("array", value.shape, value.dtype.str)
    if isinstance(value, _SCALARS):   # inside a container its type only (module docstring)
        return (type(value).__name__, value) if depth == 0 else (type(value).__name__,)
    if isinstance(value, (tuple, list)) and len(value) <= 16 and depth < 3:
        return (type(value).__name__,) + tuple(_sig(v, depth + 1) for v in value)
    return ("id", id(value))


def code_key(f):
    """The key described in the module docstring, or None (not a plain Python function:
    builtins, partials and callable objects are cached per object only)."""
    if type(f) is not types.FunctionType:
        return None
    cells = []
    for cell in f.__closure__ or ():
        try:
            cells.append(_sig(cell.cell_contents))
        except ValueError:        # an empty cell (a name bound later in the outer function)
            cells.append(("empty",))
    return (f.__code__, tuple(cells), _sig(f.__defaults__),
            _sig(tuple(sorted((f.__kwdefaults__ or {}).items()))), id(f.__globals__))


class ModeCache:
    """A bounded map ``(code key, call key) -> choice`` (least recently used dropped)."""

    def __init__(self, size=256):
        self.size = size
        self._map = OrderedDict()

    def get(self, f, key):
        ck = code_key(f)
        if ck is None:
            return None
        hit = self._map.get((ck, key))
        if hit is not None:
            self._map.move_to_end((ck, key))
        return hit

    def put(self, f, key, choice):
        ck = code_key(f)
        if ck is not None:
            self._map[(ck, key)] = choice
            while len(self._map) > self.size:
                self._map.popitem(last=False)
        return choice

    def clear(self):
        self._map.clear()


#: The mode choices of jacobian/hessian(mode="auto") and the chunk sizes of fixed modes.
MODES = ModeCache()
