"""What a jitted program assumed beyond its inputs, checked before every replay.

A trace runs ``f``'s Python code once; every value it took from outside its arguments
(a closure variable, a global, a default, an item of a closed-over list or dict, an
attribute of a closed-over object) is baked into the program. :class:`Assumed` records,
right after the trace, everything of that kind the function can reach, and
:meth:`Assumed.holds` checks it cheaply on every call:

- **bindings**, by identity: the closure cells and the globals the code loads
  (``LOAD_GLOBAL``) of ``f`` and of the functions reachable from it (a helper it calls,
  the ``f`` inside ``grad(f)``), and each function's ``__code__``, ``__defaults__`` and
  ``__kwdefaults__``: rebinding any of them traces again;
- **contents**, by ``==`` against a shallow copy taken after the trace: every list,
  dict, set and deque reachable from those (nested ones too), the ``__dict__`` of
  ``types.SimpleNamespace`` objects and of instances of classes defined outside
  installed packages (user code), and the key order of dicts. All the copies are
  compared in one tuple comparison (C code; an unchanged item is the same object, so
  the comparison stops at identity), about 13 instructions an item.

Tuples and frozensets are immutable: walked, never compared. Arrays are held by
reference (documented: direct uses see in-place changes, values computed from them at
trace time do not). Modules, classes, builtins and objects of installed packages (a
logger, a random generator, a SciPy object) are not walked: their state is read at
trace time like a closed-over array's. Functions of installed packages (dualad's
``grad`` wrapper among them) are walked through their closures and defaults, not their
globals. A reachable mutable structure too large to check cheaply (more than
:data:`MAX_ITEMS` items, or nested deeper than :data:`MAX_DEPTH`) is refused with an
error that names it and says how to pass it instead.
"""
from __future__ import annotations

import collections
import dis
import functools
import os
import sys
import sysconfig
import types

import numpy as np

__all__ = ["Assumed", "MAX_ITEMS", "MAX_DEPTH"]

# Items of mutable containers (and attributes of objects) one program may assume: their
# comparison runs on every call (about 13 instructions an item), so this bounds its cost.
MAX_ITEMS = 512
# How deep the walk follows containers, objects and functions from ``f``.
MAX_DEPTH = 8

_EMPTY = object()   # an empty closure cell, a missing global
_ATOMS = (type(None), bool, int, float, complex, str, bytes, np.generic, np.ndarray,
          range, slice, type(Ellipsis), type(NotImplemented), types.ModuleType, type,
          types.BuiltinFunctionType, types.MethodWrapperType, types.WrapperDescriptorType,
          types.MethodDescriptorType, types.CodeType, np.ufunc, np.dtype)

_PACKAGE = os.path.dirname(os.path.abspath(sys.modules["dualad"].__file__))  # the package root
# dualad.jacobians and dualad.verification live next to dualad/ in a checkout
_OURS = [os.path.join(os.path.dirname(_PACKAGE), sub) for sub in ("jacobians", "verification")]
_LIBRARY = tuple(sorted({os.path.abspath(p) + os.sep for p in (
    sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib"))}
    | {_PACKAGE + os.sep, sys.prefix + os.sep, sys.base_prefix + os.sep}
    | {p + os.sep for p in _OURS if os.path.isdir(p)}))


@functools.lru_cache(maxsize=4096)
def _user_file(filename):
    """Whether code of this file is the user's (not the standard library's, an installed
    package's or dualad's): its globals are walked, its classes' instances compared."""
    if not filename or filename.startswith("<frozen"):
        return False
    return not os.path.abspath(filename).startswith(_LIBRARY)


@functools.lru_cache(maxsize=1024)
def _user_class(cls):
    module = sys.modules.get(getattr(cls, "__module__", None) or "")
    if module is None:
        return False
    if module.__name__ == "__main__":
        return True
    return _user_file(getattr(module, "__file__", None) or "")


@functools.lru_cache(maxsize=4096)
def _global_names(code):
    """The globals ``code`` (and the code nested in it: lambdas, comprehensions) loads."""
    names = {i.argval for i in dis.get_instructions(code)
             if i.opname in ("LOAD_GLOBAL", "LOAD_NAME")}
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names.update(_global_names(c))
    return tuple(sorted(names))


class TooLargeToCheck(TypeError):
    """A reachable mutable structure is too large or too deep to compare on every call."""


class Assumed:
    """The bindings and contents a program assumed (see the module docstring).

    Made by :meth:`of` after a trace; :meth:`holds` before each replay.

    Examples
    --------
    >>> from dualad.extend import Assumed
    >>> box = {"scale": 2.0}
    >>> def f(x):
    ...     return box["scale"] * x
    >>> a = Assumed.of(f, "f")
    >>> a.holds()
    True
    >>> box["scale"] = 3.0
    >>> a.holds(), a.changed()
    (False, "global 'box' (read by f) changed")
    """

    __slots__ = ("cells", "globs", "funcs", "watch", "snaps", "dicts", "orders", "where")

    def holds(self):
        """Whether every binding and content is as it was after the trace.

        Returns
        -------
        bool
            True when nothing changed.
        """
        for cell, obj in self.cells:
            try:
                if cell.cell_contents is not obj:
                    return False
            except ValueError:       # an empty cell
                if obj is not _EMPTY:
                    return False
        for g, name, obj in self.globs:
            if g.get(name, _EMPTY) is not obj:
                return False
        for fn, code, defaults, kwdefaults in self.funcs:
            if (fn.__code__ is not code or fn.__defaults__ is not defaults
                    or fn.__kwdefaults__ is not kwdefaults):
                return False
        if self.watch:
            try:
                if self.watch != self.snaps:
                    return False
                if self.dicts and list(map(list, self.dicts)) != self.orders:
                    return False
            except Exception:        # an item replaced by an array, say: changed
                return False
        return True

    def changed(self):
        """What no longer holds, in words (for the thrashing warning), or None.

        Returns
        -------
        str or None
            The first change found, e.g. ``"global 'box' (read by f) changed"``.
        """
        for (cell, obj), where in zip(self.cells, self.where["cells"]):
            try:
                if cell.cell_contents is not obj:
                    return f"{where} was rebound"
            except ValueError:
                if obj is not _EMPTY:
                    return f"{where} was deleted"
        for (g, name, obj), where in zip(self.globs, self.where["globs"]):
            if g.get(name, _EMPTY) is not obj:
                return f"{where} was rebound"
        for (fn, code, d, kw), where in zip(self.funcs, self.where["funcs"]):
            if fn.__code__ is not code or fn.__defaults__ is not d or fn.__kwdefaults__ is not kw:
                return f"the code or defaults of {where} were replaced"
        for live, snap, where in zip(self.watch, self.snaps, self.where["watch"]):
            try:
                same = bool(live == snap)
            except Exception:
                same = False
            if not same:
                return f"{where} changed"
        for d, order, where in zip(self.dicts, self.orders, self.where["dicts"]):
            if list(d) != order:
                return f"the key order of {where} changed"
        return None

    @classmethod
    def of(cls, fun, name, roots=()):
        """What ``fun`` (and the objects ``roots``: static arguments hashed by identity,
        with a description each) can reach, as it is now."""
        walk = _Walk(name)
        walk.visit(fun, f"the function {name}", 0, root=True)
        for obj, where in roots:   # compared by their attributes, whatever their class
            d = _attributes(obj)
            if d is not None and id(obj) not in walk.seen:
                walk.seen.add(id(obj))
                walk.attributes(obj, d, where, 0)
        self = cls.__new__(cls)
        self.cells, self.globs, self.funcs = walk.cells, walk.globs, walk.funcs
        self.watch = tuple(live for live, _ in walk.watch)
        self.snaps = tuple(snap for _, snap in walk.watch)
        self.dicts = tuple(d for d, _ in walk.dicts)
        self.orders = [list(d) for d in self.dicts]
        self.where = {"cells": walk.cell_where, "globs": walk.glob_where,
                      "funcs": walk.func_where, "watch": [w for _, w in walk.watch_where],
                      "dicts": [w for _, w in walk.dicts]}
        return self


def _attributes(obj):
    """``obj.__dict__`` when it is a dict (None for anything else, or an object whose
    attribute access fails)."""
    try:
        d = obj.__dict__
    except Exception:   # noqa: BLE001 - a proxy's __getattr__ may raise anything
        return None
    return d if d.__class__ is dict else None


def _short(key):
    r = repr(key)
    return r if len(r) <= 40 else r[:37] + "..."


class _Walk:
    def __init__(self, name):
        self.name = name
        self.cells, self.globs, self.funcs, self.watch, self.dicts = [], [], [], [], []
        self.cell_where, self.glob_where, self.func_where, self.watch_where = [], [], [], []
        self.seen = set()
        self.items = 0

    def visit(self, obj, where, depth, root=False):
        if issubclass(type(obj), _ATOMS) or id(obj) in self.seen:
            return
        self.seen.add(id(obj))
        kind = type(obj)   # (an object's __class__ may be a proxy's lie)
        if depth > MAX_DEPTH:
            if self._mutable(obj) or kind is types.FunctionType and _user_file(
                    obj.__code__.co_filename):
                self._refuse(obj, where, f"nested more than {MAX_DEPTH} levels deep")
            return
        if kind is types.FunctionType:
            return self._function(obj, where, depth, root)
        if issubclass(kind, (tuple, frozenset)):
            for i, x in enumerate(obj):
                if not issubclass(type(x), _ATOMS):
                    self.visit(x, f"{where}[{i}]", depth + 1)
            return
        if issubclass(kind, dict):
            self._watch(obj, dict(obj), where)
            if len(obj) > 1:
                self.dicts.append((obj, where))
            for k, x in obj.items():
                if not issubclass(type(x), _ATOMS):
                    self.visit(x, f"{where}[{_short(k)}]", depth + 1)
            return
        if issubclass(kind, (list, collections.deque, set, bytearray)):
            copy = (list(obj) if isinstance(obj, list) else
                    collections.deque(obj) if isinstance(obj, collections.deque) else
                    set(obj) if isinstance(obj, set) else bytes(obj))
            self._watch(obj, copy, where)
            for i, x in enumerate(obj):
                if not issubclass(type(x), _ATOMS):
                    self.visit(x, f"{where}[{i}]", depth + 1)
            return
        if issubclass(kind, functools.partial):
            self.visit(obj.func, f"{where}.func", depth + 1)
            self.visit(obj.args, f"{where}.args", depth + 1)
            self.visit(obj.keywords, f"{where}.keywords", depth + 1)
            return
        if issubclass(kind, types.MethodType):
            self.visit(obj.__func__, where, depth + 1)
            self.visit(obj.__self__, f"{where}.__self__", depth + 1)
            return
        d = _attributes(obj)
        if kind is types.SimpleNamespace or (d.__class__ is dict and _user_class(kind)):
            return self.attributes(obj, d, where, depth)
        wrapped = d.get("__wrapped__") if d.__class__ is dict else None
        if wrapped is not None:   # a decorated function, a jitted one (functools.wraps)
            self.visit(wrapped, where, depth + 1)
        # anything else (an object of an installed package, __slots__, C types): by
        # reference, like an array

    def attributes(self, obj, d, where, depth):
        self._watch(d, dict(d), f"the attributes of {where}")
        for k, x in d.items():
            if not issubclass(type(x), _ATOMS):
                self.visit(x, f"{where}.{k}", depth + 1)

    @staticmethod
    def _mutable(obj):
        kind = type(obj)
        if issubclass(kind, (dict, list, collections.deque, set, bytearray)):
            return True
        d = _attributes(obj)
        return kind is types.SimpleNamespace or (d.__class__ is dict and _user_class(kind))

    def _watch(self, live, snap, where):
        self.items += len(snap)
        if self.items > MAX_ITEMS:
            self._refuse(live, where, f"with the other mutable values the function can reach, "
                                      f"more than {MAX_ITEMS} items")
        self.watch.append((live, snap))
        self.watch_where.append((live, where))

    def _function(self, fn, where, depth, root):
        # The bindings of your functions are checked; those of an installed package's (the
        # wrapper grad(f) returns) are only walked through, to what they hold (f).
        code = fn.__code__
        user = _user_file(code.co_filename)
        qual = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", "?")
        if user or root:
            self.funcs.append((fn, code, fn.__defaults__, fn.__kwdefaults__))
            self.func_where.append(where)
        for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
            try:
                obj = cell.cell_contents
            except ValueError:
                obj = _EMPTY
            if (user or root) and id(cell) not in self.seen:
                self.seen.add(id(cell))
                self.cells.append((cell, obj))
                self.cell_where.append(f"closure variable {name!r} of {qual}")
            self.visit(obj, f"closure variable {name!r} of {qual}", depth + 1)
        if fn.__defaults__:
            self.visit(fn.__defaults__, f"the defaults of {qual}", depth + 1)
        if fn.__kwdefaults__:
            self.visit(fn.__kwdefaults__, f"the keyword defaults of {qual}", depth + 1)
        if user or root:
            g = fn.__globals__
            for name in _global_names(code):
                if name in g and (id(g), name) not in self.seen:
                    self.seen.add((id(g), name))
                    obj = g[name]
                    self.globs.append((g, name, obj))
                    self.glob_where.append(f"global {name!r} of {qual}")
                    self.visit(obj, f"global {name!r} (read by {qual})", depth + 1)

    def _refuse(self, obj, where, why):
        size = f" of {len(obj)} items" if hasattr(obj, "__len__") else ""
        raise TooLargeToCheck(
            f"dualad.jit({self.name}): {where} is a {type(obj).__name__}{size}, {why}: too "
            f"much to check on every call for changes since the trace (a replay must not use "
            f"stale values). Pass it as an argument instead (its arrays and floats are traced; "
            f"np.asarray(...) for a list of numbers), or as a static argument "
            f"(static_argnums/static_argnames) made immutable (a tuple), or make it a tuple "
            f"(immutable values are not checked)")
