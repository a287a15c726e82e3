"""Hash-consing under dualad.jit: a computation repeated during a trace is recorded once.

A function traced by :func:`dualad.jit` may compute the same thing along many paths:
GradBench's ``det`` expands by minors recursively, so the determinant of each minor is
computed once per path that reaches it (109,600 products for an 8 x 8 matrix, of 1,024
distinct ones). Two levels share what is repeated:

- the jit trace (:class:`dualad.interpreters.staging.trace.JitTrace`): a primitive applied to the same
  program variables with equal constants and parameters is recorded once
  (:func:`dualad.interpreters.staging.trace.cse_key`); the primitives are pure, so this is exact;
- a reverse-mode tape recorded over the jit trace's values (``jit(grad(f))``): a node
  whose primitive, parameters and arguments (the same nodes of the tape, the same
  program variables, equal numbers) are those of a node already recorded is that node
  (:func:`shared_node`). The tape is then a graph in which a node has several users, and
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

__all__ = ["frozen", "shared_node", "SharedNodeWritten"]

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


def shared_node(shared, trace, prim, args, params, ans):
    """``(slot, node)``: where a tape node ``prim(*args, **params) = ans`` of ``trace`` is
    kept in ``shared`` (None when it is not shared) and the node already recorded for the
    same call there (None if none). Shared only when ``ans`` is a value of a hash-consing
    trace (its class has ``hash_consed``), the slot being its program variable: a node is
    the same call when its primitive is ``prim``, its arguments are the same nodes of
    ``trace`` (by identity), the same program variables and equal numbers
    (:func:`frozen`), and its parameters are equal. A variable the jit trace created
    anew (no repeat) finds its slot empty, so the cost of a node that is not repeated is
    one dictionary look-up."""
    if not getattr(ans.__class__, "hash_consed", False):
        return None, None
    slot = (id(ans._trace), ans.var)
    node = shared.get(slot)
    if node is None or node.args is None or node.prim is not prim:
        return slot, None
    old = node.args
    if len(old) != len(args):
        return slot, None
    for a, b in zip(old, args):
        if a is b:
            continue
        if getattr(a.__class__, "hash_consed", False):
            if not (b.__class__ is a.__class__ and b._trace is a._trace and b.var == a.var):
                return slot, None
        elif getattr(a, "_trace", None) is not None or getattr(b, "_trace", None) is not None:
            return slot, None   # a node of the tape (compared by identity above), a box
        else:
            f = frozen(a)
            if f is None or f != frozen(b):
                return slot, None
    p = node.params
    if p is not params:
        if p.keys() != params.keys():
            return slot, None
        for k, v in p.items():
            f = frozen(v)
            if f is None or f != frozen(params[k]):
                return slot, None
    return slot, node
