"""The signature of a call to a jitted function: the cache key, and what the program
assumed beyond its inputs.

A key is the arguments' container structure, each leaf's part (an array's type, shape
and dtype; a float's type; a static leaf's value) and the static arguments' values;
:func:`_fast_key` is the same for the common call of positional arrays and floats,
without flattening. What the program assumed beyond the key (closure, globals,
defaults, containers, the attributes of static arguments hashed by identity,
:func:`_identity_statics`) is :mod:`dualad.interpreters.staging.assumed`'s.
"""
from __future__ import annotations

import numpy as np

from ...core.tracer import Box
from ...core.tree import TreeDef, leaves_with_path

__all__ = ["_fast_key", "_identity_statics", "_leaf_key", "_positional", "_static",
           "_structure", "_traced_positional", "_leaf_where"]   # private helpers of dualad.interpreters.staging.api


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


def _leaf_where(name, args, static_argnums, dyn_kwargs, j):
    """Leaf ``j`` of the traced arguments named by its path, ``f: argument 0.layers[1].w``
    (for an error message: computed only then)."""
    named = [(str(i), a) for i, a in enumerate(args) if i not in static_argnums]
    named += [(repr(k), v) for k, v in dyn_kwargs.items()]
    for label, value in named:
        paths = leaves_with_path(value)
        if j < len(paths):
            return f"{name}: argument {label}{paths[j][0]}"
        j -= len(paths)
    return f"{name}: an argument leaf"


def _identity_statics(key):
    """The static arguments hashed by identity (``self`` of a jitted method), each with a
    description: the program read their attributes at trace time, so their attributes are
    compared on every call like closure variables (:mod:`dualad.interpreters.staging.assumed`). (Objects
    with their own ``__hash__`` and ``__eq__`` are compared by those, in the key.)"""
    if len(key) != 3 or key[0].__class__ is not TreeDef:
        return ()   # a fast key (positional arrays and floats): no static arguments
    found = [(k[2], f"argument leaf {j}") for j, k in enumerate(key[1])
             if k.__class__ is tuple and k[0] == "static"]
    found += [(v, f"static argument {i!r}") for i, (_, v) in key[2]]
    return tuple((obj, where) for obj, where in found
                 if type(obj).__hash__ is object.__hash__)


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


def _traced_positional(args):
    """Whether ``args`` are arrays, floats and traced values, one traced at least."""
    boxed = False
    for x in args:
        kind = x.__class__
        if kind is np.ndarray:
            if x.dtype.hasobject:
                return False
        elif kind is not float and kind is not np.float64:
            if not isinstance(x, Box):
                return False
            boxed = True
    return boxed


def _positional(leaves):
    return list(leaves), {}


def _static(value, where):
    try:
        hash(value)
    except TypeError:
        raise TypeError(f"dualad.jit: {where} must be hashable (it is part of the cache key), "
                        f"got {type(value).__name__!r}") from None
    return (type(value), value)


def _structure(treedef, name):
    """The arguments' structure as a cache key: containers, dict keys and the auxiliary
    data of registered pytree nodes (a new aux retraces), which must therefore hash."""
    try:
        hash(treedef)
    except TypeError:
        raise TypeError(
            f"dualad.jit: {name}'s arguments hold a registered pytree node whose auxiliary "
            f"data is not hashable ({treedef!r}); jit keys its cache on it: make the static "
            f"part hashable (a tuple, not a list; no arrays), or pass it as a data child"
        ) from None
    return treedef
