"""Catching arrays modified in place between a forward pass and its pullback.

A tape records arrays by reference: a pullback reads the arrays its nodes saved
when it runs, not when they were recorded. PyTorch keeps a version counter per
tensor; a NumPy array has none, so what the tape does not own it fingerprints.

- ``vjp`` owns what it can: the primal inputs are copied into the leaves and the
  outputs handed back are copies, so mutating either cannot reach the tape.
- The other arrays its nodes saved (closed-over constants, index arrays) are
  fingerprinted (CRC-32 of the bytes, :class:`Stamps`) when the forward pass ends,
  and each pullback call compares them first.
- The imperative API fingerprints the arrays a node saves that its user can still
  write (a leaf Variable's storage, plain constants) when the node is recorded;
  ``backward``/``grad`` compare those on the graph they sweep. A non-leaf
  Variable's ``.data`` is a read-only view.

A changed array raises :class:`RuntimeError` naming the primitive that saved it
and its shape; a pullback never mixes old and new values. (The check costs one
pass over the saved bytes, at about memory speed; ``grad``, whose forward pass
and sweep are one call, does not pay it.)

Inside the differentiated function itself (``y = np.sin(x) * c; c[0] = 50.0``),
the forward pass is not over when the array changes. There ``grad``'s and
``vjp``'s tape (:class:`Constants`) keeps the bytes of every plain array operand
of at most :data:`CONSTANT_BYTES` bytes as it is first used, compares them at
each later use and once more when the forward pass ends, and raises on a
difference: exact (a byte comparison, no checksum), and paid once per use (a
copy of the bytes, then a comparison) only by array constants, never by scalar
code or by operands that are traced values. Larger constants are not checked
inside ``f`` (two passes over a data matrix would cost as much as the gradient
that reads it once); ``vjp``'s pullback still fingerprints them.
"""
from __future__ import annotations

import zlib

import numpy as np

__all__ = ["MESSAGE", "fingerprint", "Stamps", "stamp_node", "check_graph", "Constants",
           "CONSTANT_BYTES"]

MESSAGE = ("an array used in the forward pass was modified in place before the pullback; "
           "copy it before modifying (x = x.copy())")


def fingerprint(a):
    """CRC-32 of ``a``'s entries (of a C-ordered copy when ``a`` is not C-contiguous)."""
    if not a.flags.c_contiguous:
        a = np.ascontiguousarray(a)
    try:
        return zlib.crc32(a)
    except (TypeError, ValueError, BufferError):   # no plain buffer (object arrays): its bytes
        return zlib.crc32(a.tobytes())


def _arrays_in(params, out):
    for v in params.values():
        if type(v) is np.ndarray:
            out.append(v)
        elif type(v) is tuple:
            out.extend(w for w in v if type(w) is np.ndarray)


class Stamps:
    """Fingerprints of arrays a tape saved: ``[(array, crc, primitive name)]``."""

    __slots__ = ("entries",)

    def __init__(self, entries):
        self.entries = entries

    @classmethod
    def of_tape(cls, tape):
        """The arrays ``tape``'s nodes saved that are no node's value (the tape owns those):
        each distinct array once, fingerprinted now."""
        saved = []          # (array, node): scalar code has none, and pays one loop
        ndarray = np.ndarray
        for node in tape:
            vals = node.vals
            if vals is None:                  # a leaf
                continue
            for v in vals:
                if type(v) is ndarray:
                    saved.append((v, node))
            if node.params:
                found = []
                _arrays_in(node.params, found)
                saved.extend((a, node) for a in found)
        entries = []
        if saved:
            owned = {id(node.value) for node in tape if type(node.value) is ndarray}
            seen = set()
            for a, node in saved:
                key = id(a)
                if key not in owned and key not in seen and a.size:
                    seen.add(key)
                    entries.append((a, fingerprint(a), node.prim.name))
        return cls(entries)

    def check(self, api):
        for a, crc, name in self.entries:
            if fingerprint(a) != crc:
                raise RuntimeError(f"{api}: {MESSAGE}. The array has shape {a.shape} and "
                                   f"dtype {a.dtype} and was saved by primitive '{name}'.")


def stamp_node(node, box_type):
    """Fingerprints of the arrays ``node`` saved that its user can still write: those of its
    arguments that are leaves (``box_type`` values without a primitive) or plain arrays.
    None when there are none (the common case of intermediate values)."""
    entries = None
    args = node.args
    for i, v in enumerate(node.vals):
        if type(v) is not np.ndarray or not v.size:
            continue
        a = args[i]
        if isinstance(a, box_type) and a.prim is not None:
            continue                      # a non-leaf's storage: only a read-only view escapes
        if entries is None:
            entries = []
        entries.append((v, fingerprint(v), node.prim.name))
    return entries


def check_graph(api, seeds, stamps_of):
    """Compare the fingerprints on every node reachable from ``seeds`` ((node, ct) pairs);
    ``stamps_of(node)`` gives a node's entries (or None)."""
    stack = [node for node, _ in seeds]
    seen = set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        entries = stamps_of(node)
        if entries:
            Stamps(entries).check(api)
        args = node.args
        if args is None:
            continue
        for i in node.parents:
            stack.append(args[i])


CONSTANT_BYTES = 1 << 20     # 1 MiB: 131072 float64 entries


class Constants:
    """The plain array operands (constants) recorded on one ``grad``/``vjp`` tape, each
    with its bytes at its first use: ``{id: (array, bytes, primitive name)}``.

    An operand that changed since its first use (``c[0] = 50.0`` inside ``f`` after
    ``y = x * c``) would give the sweep values the forward pass did not use: a later
    use with other bytes, and :meth:`check` when the forward pass ends, raise. Arrays
    of more than :data:`CONSTANT_BYTES` bytes and object arrays are not kept."""

    __slots__ = ("entries", "api", "fname")

    def __init__(self, api, fname):
        self.entries = {}
        self.api = api          # for the message: "grad", "vjp"
        self.fname = fname      # the differentiated function's name

    def note(self, a, prim):
        """Keep (or compare) the bytes of ``a``, a plain ndarray operand of ``prim``."""
        if a.nbytes > CONSTANT_BYTES or not a.size or a.dtype.hasobject:
            return
        entry = self.entries.get(id(a))
        if entry is None:        # the entry holds ``a``: its id is not reused meanwhile
            self.entries[id(a)] = (a, a.tobytes(), prim.name)
        elif a.tobytes() != entry[1]:
            raise _changed(self.api, self.fname, a, entry[2], prim.name)

    def check(self):
        """Raise if a kept array's bytes differ from those at its first use."""
        for a, saved, name in self.entries.values():
            if a.tobytes() != saved:
                raise _changed(self.api, self.fname, a, name, None)


def _changed(api, fname, a, first, later):
    where = f"used by primitive '{first}'" + (
        f" and then, with other values, by '{later}'" if later else "")
    who = f"{api}: {fname}"
    return RuntimeError(
        f"{who} modified an array in place after the forward pass used it (shape {a.shape}, "
        f"dtype {a.dtype}, {where}); the backward sweep would read the new values, not "
        f"those the forward pass used. Copy it before modifying it (c = c.copy()), or "
        f"modify it only after the gradient is taken")
