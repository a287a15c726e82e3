"""Hash-consing under dualad.jit: a computation repeated during a trace is recorded once.

A function traced by :func:`dualad.jit` may compute the same thing along many paths:
GradBench's ``det`` expands by minors recursively, so the determinant of each minor is
computed once per path that reaches it (109,600 products for an 8 x 8 matrix, of 1,024
distinct ones). Two levels share what is repeated:

- the jit trace (:class:`dualad.jit.trace.JitTrace`): a primitive applied to the same
  program variables with equal constants and parameters is recorded once
  (:func:`dualad.jit.trace.cse_key`); the primitives are pure, so this is exact;
- a reverse-mode tape recorded over the jit trace's values (``jit(grad(f))``): a node
  whose primitive, parameters and arguments (the same nodes of the tape, the same
  program variables, equal numbers) are those of a node already recorded is that node
  (:func:`node_key`). The tape is then a graph in which a node has several users, and
  the sweep adds up the cotangents that reach it before pulling them back once, as it
  does for any value used twice. The primal is the same computation; the gradient is
  the same derivative with its terms summed in another order, so it agrees with the
  gradient without jit to rounding, not bit for bit.

Only while tracing under jit: an eager tape (``grad(f)`` called directly) records every
call as before, and pays one attribute test per recorded node for this module.
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["frozen", "node_key", "SharedNodeWritten"]

_ATOMS = {int: "i", bool: "b", str: "u", type(None): "n"}


class SharedNodeWritten(Exception):
    """Raised when a function traced by dualad.jit writes in place into a traced array
    whose tape node may be shared (see the module docstring): an in-place write makes the
    node stand for a new value, which the other users of a shared node must not see.
    dualad.jit traces the function again without sharing tape nodes."""


def frozen(v):
    """A hashable stand-in for a constant or parameter ``v``, equal only for equal values
    of the same types (``1``, ``1.0`` and ``True`` are equal in Python, not as an index;
    ``0.0`` and ``-0.0`` are equal, not as a factor), or None when ``v`` is not a number,
    string, dtype, slice or tuple of them (an array, an object): such values are not
    compared. Built of strings and numbers only, so the collector stops tracking it."""
    kind = v.__class__
    if kind is float:
        return ("f", v) if v else ("f", v, math.copysign(1.0, v))
    tag = _ATOMS.get(kind)
    if tag is not None:
        return (tag, v)
    if kind is tuple:
        out = ["t"]
        for x in v:
            f = frozen(x)
            if f is None:
                return None
            out.append(f)
        return tuple(out)
    if kind is complex:
        return ("c", frozen(v.real), frozen(v.imag))
    if kind is slice:
        f = frozen((v.start, v.stop, v.step))
        return None if f is None else ("s", f)
    if kind is np.dtype:
        return ("d", v.str)
    return None


def node_key(trace, prim, args, params, ans):
    """The key under which a tape node ``prim(*args, **params) = ans`` of ``trace`` is
    recorded once, or None when it is not shared. Shared only when ``ans`` is a value of
    a hash-consing trace (its class has ``hash_consed``): the same key then means the
    same primal variable computed by the same primitive from the same arguments (nodes of
    ``trace`` by identity, which the node recorded keeps alive; values of the lower trace
    by variable; numbers by :func:`frozen`)."""
    if not getattr(ans.__class__, "hash_consed", False):
        return None
    # ids: the node recorded keeps its primitive and arguments alive, so no id is reused
    # while its key is in use, and a key of ints and strings is not tracked by the collector
    key = [id(prim), id(ans._trace), ans.var]
    for a in args:
        if getattr(a, "_trace", None) is trace:
            key.append(id(a))
        elif getattr(a.__class__, "hash_consed", False):
            key.append(("j", id(a._trace), a.var))
        else:
            f = frozen(a)
            if f is None:
                return None
            key.append(f)
    if params:
        for k, v in params.items():
            f = frozen(v)
            if f is None:
                return None
            key.append(k)
            key.append(f)
    return tuple(key)
