"""Freeing tape memory during the forward pass: what no output can need.

A trace that keeps a tape list (``VJPTrace(tape=True)``: ``grad``, ``vjp``)
holds every node until the sweep. Two kinds of memory on it are dead before
then, and :func:`compact` releases both:

- a *needless node*: one that no later node uses and the user's code no longer
  holds (``tmp = np.sin(x)`` overwritten). Nothing can make it reachable from
  an output again, so it leaves the tape, and its arguments may become needless
  in turn (handled in the same newest-to-oldest pass, parents being older);
- a *needless value*: a node still on a path to the outputs, but whose array no
  VJP rule will read. ``x = x + 1`` in a loop keeps every ``x`` for the graph, yet
  ``∂(x + c)/∂x = 1`` reads only shapes. Such an array, held by nothing but the
  graph, is replaced by a stand-in of the same shape and dtype that owns one
  element (``np.broadcast_to``), in the node and where its users saved it.

"Held by nothing but the graph" is read from reference counts: the references
to a node are the tape list, its users' ``args`` (counted by the pass) and
anything else, which is the user's code or another structure (a cache, a lower
trace, a weak reference) and keeps the node as it is. Counting more references
than exist only keeps memory; CPython 3.10 to 3.13 count every reference a
frame or container holds, so the test never counts fewer. (From 3.14 frames may
hold borrowed references; there the pass is off, see ``ENABLED``.)

A pass does not rescan the whole tape (:class:`Schedule`): it scans a *suffix*,
the nodes recorded since the previous pass plus as many older ones, at least
``OVERLAP`` (where a temporary the user's code held at the previous pass has been
let go since: ``t = np.sin(x)`` overwritten in the next iteration), and
the whole tape only once the nodes recorded since the last whole pass are as many
as the tape then held. A node's users are all newer than it, so every node of a
suffix has its users in the suffix and its count of references is exact. The
passes cost amortised O(1) per recorded node (a suffix is at most twice the new
nodes, plus ``OVERLAP`` per pass; whole passes come at geometrically spaced
lengths), where a whole pass every ``max(MIN_BYTES, 4 KiB × len(tape))`` cost up
to one scan of the tape per 4 KiB recorded. :func:`VJPTrace`
runs a pass only after ``MIN_BYTES`` of array values were recorded since the last
one, so scalar code, whose values are never arrays, never pays for it.
"""
from __future__ import annotations

import sys
import weakref

import numpy as np

__all__ = ["ENABLED", "MIN_BYTES", "OVERLAP", "Schedule", "compact"]

# Off where frames may hold references the count does not see (CPython 3.14's borrowed
# stack references) and on other interpreters, whose reference counts are not CPython's.
ENABLED = sys.implementation.name == "cpython" and sys.version_info < (3, 14)
MIN_BYTES = 1 << 22        # 4 MiB of new arrays at least between two passes
OVERLAP = 64               # older nodes a pass scans again, at least


class _Probe:
    __slots__ = ("__weakref__",)


def _baseline():
    """References to a node that only the tape list holds, counted the way
    :func:`compact` counts them (its list slot, the loop's local, the call's argument)."""
    tape = [_Probe()]
    node = tape[0]
    return sys.getrefcount(node)


_BASE = _baseline()
_getrefcount = sys.getrefcount
_weakrefs = weakref.getweakrefcount


def _shape_only(prim):
    """Whether ``prim``'s VJP rule reads only the shapes and dtypes of its arguments and
    value (add, subtract: constant partial derivatives, see dualad.core.partials), not their
    entries."""
    derivs = None if prim is None else prim.derivs
    return derivs is not None and all(d is not None and d.const is not None for d in derivs)


class Schedule:
    """Which suffix of a tape the next pass scans: amortised O(1) per recorded node.

    ``scanned``: the tape's length after the last pass (the nodes before it were seen);
    ``since_whole``: the nodes recorded since the last whole pass; ``whole_len``: the
    tape's length after it. A pass scans the new nodes and as many older ones (at least
    ``OVERLAP``); the whole tape once ``since_whole`` reaches ``whole_len`` (its
    cost, the tape's length, is then at most twice the nodes recorded since the last
    whole pass).
    """

    __slots__ = ("scanned", "since_whole", "whole_len")

    def __init__(self):
        self.scanned = self.since_whole = self.whole_len = 0

    def run(self, tape):
        """One pass over the suffix of ``tape`` due now (see :func:`compact`).
        Returns the bytes released."""
        n = len(tape)
        new = n - self.scanned
        self.since_whole += new
        whole = self.since_whole >= self.whole_len
        released = compact(tape, 0 if whole else max(0, self.scanned - max(new, OVERLAP)))
        self.scanned = len(tape)
        if whole:
            self.since_whole, self.whole_len = 0, len(tape)
        return released


def compact(tape, start=0):
    """Drop the needless nodes of ``tape[start:]`` and stand in for their needless values
    (see the module docstring); the list is edited in place. Returns the bytes released.
    Every user of a node being newer than it, a suffix holds all its nodes' users."""
    users = {}     # id(node) -> [(user, argument position)], among the nodes kept
    released = 0
    dropped = False
    for k in range(len(tape) - 1, start - 1, -1):
        node = tape[k]
        if node.prim is None:           # a leaf: the inputs, always kept
            continue
        mine = users.get(id(node), ())
        if _getrefcount(node) - _BASE - len(mine) > 0 or _weakrefs(node):
            held = True                 # user code (or a cache) still holds it
        else:
            held = False
            if not mine:                # needless: nothing can reach it again
                value = node.value
                if type(value) is np.ndarray:
                    released += value.nbytes
                tape[k] = None
                dropped = True
                del node, value         # its arguments' counts drop before we reach them
                continue
        args = node.args
        for i in node.parents:
            users.setdefault(id(args[i]), []).append((node, i))
        value = node.value
        if (not held and type(value) is np.ndarray and value.size > 1
                and _shape_only(node.prim) and all(_shape_only(u.prim) for u, _ in mine)):
            released += _stand_in(node, value, mine)
    if dropped:
        tape[start:] = [n for n in tape[start:] if n is not None]
    return released


def _stand_in(node, value, users):
    """Replace ``value`` (``node``'s, saved by ``users``) by a one-element array of its
    shape and dtype. Returns the bytes released (0 if a user saved something else)."""
    for user, i in users:
        if user.vals is None or user.vals[i] is not value:
            return 0
    stub = np.broadcast_to(np.zeros((), value.dtype), value.shape)
    node.value = stub
    for user, i in users:
        vals = list(user.vals)
        vals[i] = stub
        user.vals = vals if type(user.vals) is list else tuple(vals)
    return value.nbytes
