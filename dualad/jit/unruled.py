"""A NumPy function with no rule, called on values only dualad.jit traces.

Without a transformation that needs its derivative or its batching (``jit(f)`` alone, or a
non-differentiable value inside ``jit(grad(f))``: ``np.isinf(x) & mask``), such a function
can simply run on the values: each traced argument is read with a whole-value guard (a
replay with other values traces again), and the result is a constant of the program. So
``jit(f)(x)`` computes what ``f(x)`` does wherever ``f`` runs on plain arrays. With a
derivative or batch level on an argument, it still raises dispatch's "no derivative rule"
error: a derivative is never dropped silently.
"""
from __future__ import annotations

from ..tracer import Box, primal_value, staged_only


def _boxes(obj, found):
    if isinstance(obj, Box):
        found.append(obj)
    elif type(obj) in (list, tuple):
        for o in obj:
            _boxes(o, found)
    elif type(obj) is dict:
        for o in obj.values():
            _boxes(o, found)
    return found


def _values(obj):
    if isinstance(obj, Box):
        return primal_value(obj)      # guarded: the program holds only for this value
    if type(obj) in (list, tuple):
        return type(obj)(_values(o) for o in obj)
    if type(obj) is dict:
        return {k: _values(v) for k, v in obj.items()}
    return obj


def run_on_values(fn, args, kwargs, error):
    """``fn(*args, **kwargs)`` on the guarded values when every traced value among the
    arguments is held by jit traces only; else raise ``error``."""
    boxes = _boxes([args, kwargs], [])
    if not boxes or not all(staged_only(b) for b in boxes):
        raise error
    return fn(*_values(args), **_values(kwargs))
