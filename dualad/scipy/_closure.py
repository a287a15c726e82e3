"""Closure conversion: a user's function that closes over traced values, made explicit.

``solve_ivp(lambda t, y: -k * y, ...)`` inside ``grad(loss)(k)`` hands SciPy a function
whose closure cell holds a traced ``k``. The integrators are primitives: their rules need
every differentiable input as an *argument* (their derivatives are integrated, not
recorded). JAX solves this by tracing the function to a jaxpr and hoisting the tracers
among its constants (``closure_convert``). dualad has no staged form of Python code, so
it converts at the level Python itself keeps closures:

    fn  ↦  (fn', v)   with   fn'(*lead, *v) ≡ fn(*lead)   and  v the traced values in
                              fn's closure, found in

- closure cells (``fn.__closure__``), followed into functions stored in cells (a helper
  the lambda calls), ``functools.partial`` arguments, default argument values, and the
  attributes of objects (``model.rhs`` reading ``self.k``, a callable model, a model
  object the lambda uses), which are then shallow-copied,
- inside lists, tuples and dicts held there (a parameter vector as a list of scalars).

``fn'`` rebuilds only what holds traced values, with the values it is given: cells that
hold no traced value are shared, so a closure that keeps a counter still counts. Anything
else a function can read (a global variable, an object reached some other way, a
container of more than 10,000 items) is not found; the integrators then see ``fn'``
return a traced value when called on plain numbers and raise a TypeError asking for
``args=(...)``: a derivative is never silently dropped.
"""
from __future__ import annotations

import copy
import functools
import types

from ..core.tracer import Box

__all__ = ["closure_convert"]

_MAX_DEPTH = 8        # nested helpers followed; deeper structures are left as they are
_MAX_ITEMS = 10_000   # longer containers (data, not parameters) are not searched


def closure_convert(fn):
    """``(fn', values)``: ``fn'(*lead, *values)`` calls ``fn(*lead)`` with the traced
    values found in ``fn``'s closure replaced by ``values`` (see the module docstring).
    ``fn`` itself when nothing traced is found (``values == ()``)."""
    found, ids = [], {}
    template = _scan(fn, found, ids, 0, set())
    if not found:
        return fn, ()
    n = len(found)

    def converted(*a):
        lead, vals = a[:len(a) - n], a[len(a) - n:]
        return _build(template, vals)(*lead)
    converted.__name__ = getattr(fn, "__name__", "func")
    converted.__wrapped__ = fn
    return converted, tuple(found)


class _Slot:
    """A placeholder for the traced value ``found[index]``."""
    __slots__ = ("index",)

    def __init__(self, index):
        self.index = index


class _Rebuild:
    """A value holding traced values somewhere: ``make(parts)`` rebuilds it from its
    (rebuilt) ``parts``."""
    __slots__ = ("make", "parts")

    def __init__(self, make, parts):
        self.make, self.parts = make, parts


def _scan(v, found, ids, depth, seen):
    """``v`` itself if it holds no traced value, else a template of _Slot/_Rebuild."""
    if isinstance(v, Box):
        if id(v) not in ids:
            ids[id(v)] = len(found)
            found.append(v)
        return _Slot(ids[id(v)])
    if depth > _MAX_DEPTH or id(v) in seen:
        return v
    if type(v) in (list, tuple, dict) and len(v) > _MAX_ITEMS:
        return v
    seen = seen | {id(v)}
    if type(v) in (list, tuple):
        parts = [_scan(x, found, ids, depth + 1, seen) for x in v]
        if any(isinstance(p, (_Slot, _Rebuild)) for p in parts):
            return _Rebuild(type(v), parts)
        return v
    if type(v) is dict:
        keys = list(v)
        parts = [_scan(v[k], found, ids, depth + 1, seen) for k in keys]
        if any(isinstance(p, (_Slot, _Rebuild)) for p in parts):
            return _Rebuild(lambda ps, keys=keys: dict(zip(keys, ps)), parts)
        return v
    if isinstance(v, types.FunctionType):
        return _scan_function(v, found, ids, depth, seen)
    if isinstance(v, functools.partial):
        parts = [_scan(x, found, ids, depth + 1, seen) for x in (v.func, v.args, v.keywords)]
        if any(isinstance(p, (_Slot, _Rebuild)) for p in parts):
            return _Rebuild(lambda ps: functools.partial(ps[0], *ps[1], **ps[2]), parts)
        return v
    if isinstance(v, types.MethodType):
        parts = [_scan(v.__func__, found, ids, depth + 1, seen),
                 _scan_object(v.__self__, found, ids, depth + 1, seen)]
        if any(isinstance(p, (_Slot, _Rebuild)) for p in parts):
            return _Rebuild(lambda ps: types.MethodType(ps[0], ps[1]), parts)
        return v
    if not isinstance(v, (type, types.ModuleType, types.BuiltinFunctionType)):
        return _scan_object(v, found, ids, depth + 1, seen)   # a model object, a callable one
    return v


def _scan_object(obj, found, ids, depth, seen):
    """An instance whose ``__dict__`` holds traced values: rebuilt as a shallow copy."""
    attrs = getattr(obj, "__dict__", None)
    if type(attrs) is not dict or isinstance(obj, type):
        return obj
    inner = _scan(attrs, found, ids, depth, seen)
    if not isinstance(inner, _Rebuild):
        return obj

    def make(ps, obj=obj):
        clone = copy.copy(obj)
        clone.__dict__.update(ps[0])
        return clone
    return _Rebuild(make, [inner])


def _scan_function(fn, found, ids, depth, seen):
    cells = fn.__closure__ or ()
    contents = []
    for c in cells:
        try:
            contents.append(c.cell_contents)
        except ValueError:  # an empty cell (a name assigned later in the outer function)
            contents.append(_EMPTY)
    cell_parts = [v if v is _EMPTY else _scan(v, found, ids, depth + 1, seen) for v in contents]
    defaults = _scan(fn.__defaults__, found, ids, depth + 1, seen)
    kwdefaults = _scan(fn.__kwdefaults__, found, ids, depth + 1, seen)
    traced = [isinstance(p, (_Slot, _Rebuild)) for p in cell_parts]
    if not (any(traced) or isinstance(defaults, _Rebuild) or isinstance(kwdefaults, _Rebuild)):
        return fn

    def make(ps, fn=fn, cells=cells, traced=traced):
        new_cells = tuple(types.CellType(p) if t else c
                          for c, p, t in zip(cells, ps[2:], traced))
        g = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, ps[0], new_cells)
        g.__kwdefaults__ = ps[1]
        g.__dict__.update(fn.__dict__)
        return g
    return _Rebuild(make, [defaults, kwdefaults] + cell_parts)


_EMPTY = object()


def _build(t, vals):
    if isinstance(t, _Slot):
        return vals[t.index]
    if isinstance(t, _Rebuild):
        return t.make([_build(p, vals) for p in t.parts])
    return t
