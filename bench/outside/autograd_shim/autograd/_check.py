"""The shim's gradient check (AG_SHIM_CHECK): an AD gradient against finite differences of
the program's own function, with the random-number generators it draws from restored
before each evaluation so that a stochastic objective is the same function each time."""
import json
import os
import types

import numpy as np

from .misc.flatten import flatten


def _rngs(obj, found, seen, depth=0):
    """Generators reachable from a function: its closure cells (recursively) and globals."""
    if id(obj) in seen or depth > 6:
        return
    seen.add(id(obj))
    if isinstance(obj, (np.random.RandomState, np.random.Generator)):
        found.append(obj)
    elif isinstance(obj, types.FunctionType):
        for cell in obj.__closure__ or ():
            try:
                _rngs(cell.cell_contents, found, seen, depth + 1)
            except ValueError:    # an empty cell
                pass
        for name in obj.__code__.co_names:
            if name in obj.__globals__:
                _rngs(obj.__globals__[name], found, seen, depth + 1)
    elif isinstance(obj, types.MethodType):
        _rngs(obj.__func__, found, seen, depth + 1)


def _snapshot(fun):
    gens = []
    _rngs(fun, gens, set())
    states = [(g, g.get_state() if isinstance(g, np.random.RandomState)
               else g.bit_generator.state) for g in gens]
    glob = np.random.get_state()

    def restore():
        np.random.set_state(glob)
        for g, s in states:
            if isinstance(g, np.random.RandomState):
                g.set_state(s)
            else:
                g.bit_generator.state = s
    return restore


def is_traced(value):
    """A value of an enclosing transformation (a gradient inside a gradient): checked as
    part of the outer gradient, not on its own."""
    from dualad.extend import Box
    from dualad.core.tree import flatten as leaves
    return any(isinstance(leaf, Box) for leaf in leaves(value)[0])


def check_gradient(fun, argnum, gradient, args, kwargs, with_value, call):
    restore = _snapshot(fun)
    out = gradient(*args, **kwargs)
    after = _snapshot(fun)
    g = out[1] if with_value else out
    x, unflatten = flatten(args[argnum])
    x = np.asarray(x, dtype=float)
    direction = np.random.default_rng(call).standard_normal(x.shape)
    direction /= max(np.linalg.norm(direction), 1e-300)

    def along(t):
        restore()
        a = list(args)
        a[argnum] = unflatten(x + t * direction)
        value = np.real(np.asarray(fun(*a, **kwargs)))
        return float(value.reshape(-1)[0]) if value.size == 1 else float(value)
    h = 1e-3 * max(1.0, float(np.max(np.abs(x))) if x.size else 1.0)
    d1 = (along(h) - along(-h)) / (2 * h)
    d2 = (along(h / 2) - along(-h / 2)) / h
    numeric = (4 * d2 - d1) / 3
    ad = float(np.dot(np.asarray(flatten(g)[0], dtype=float), direction))
    rel = abs(ad - numeric) / max(abs(numeric), abs(ad), 1e-8)
    after()
    with open(os.environ.get("AG_SHIM_LOG", os.devnull), "a") as log:
        log.write(json.dumps({"call": call, "n": int(x.size), "ad": ad, "numeric": numeric,
                              "rel": rel}) + "\n")
    return out


def check_elementwise(fun, argnum, gradient, args, call):
    """elementwise_grad: the derivative of an elementwise function, entry by entry."""
    out = gradient(*args)
    x = np.asarray(args[argnum], dtype=float)

    def at(t):
        a = list(args)
        a[argnum] = x + t
        return np.asarray(fun(*a), dtype=float)
    h = 1e-3 * max(1.0, float(np.max(np.abs(x))) if x.size else 1.0)
    d1 = (at(h) - at(-h)) / (2 * h)
    d2 = (at(h / 2) - at(-h / 2)) / h
    numeric = (4 * d2 - d1) / 3
    ad = np.asarray(out, dtype=float)
    rel = float(np.max(np.abs(ad - numeric)) / max(float(np.max(np.abs(numeric))), 1e-8))
    with open(os.environ.get("AG_SHIM_LOG", os.devnull), "a") as log:
        log.write(json.dumps({"call": call, "n": int(x.size), "ad": float(np.sum(ad)),
                              "numeric": float(np.sum(numeric)), "rel": rel}) + "\n")
    return out
