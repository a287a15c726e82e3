"""Where :mod:`dualad.jit.numba_flat` writes a value: in its consumer's place when it can
(destination passing), and which elementwise equations it fuses.

A value whose only job is to be copied somewhere -- an operand of ``concatenate``, the
operand of the scatter that is basic indexing's derivative (``untake``: a zero-padded
copy), a rolled loop's per-block value (copied into its stack) or its new carry (copied
back into the carry's place) -- is written by its producer straight into that place,
and the copy is not written (:meth:`FlatPlaces.place`, :meth:`FlatPlaces.same_place`).
This is legal because each such place is written by nothing else while the value lives
there: a concatenation's or a scatter's output is a fresh part of the arena written only
by that equation (a scatter now writes zeros only where no operand lands), a stack's
entry ``k`` is written only in block ``k``, and a carry the body computes anew has two
places used in turn by the parity of ``k`` (:mod:`dualad.jit.numba_flatloop`), so the
new value never lands where the old one is still read. The other readers of the value
read it in its new place. Only elementwise loops are placed so (the producers that write
each entry once); a value has at most one such place, the first consumer's.

:func:`flat_groups` is :func:`dualad.jit.fuse.groups` for this writer: the kernels path
keeps the readers of a scatter's output out of groups (its scatter-add chains stay NumPy
additions), a rule this writer, which writes the scatter as a loop, does not need.
Fusing changes no number: each entry gets the same operations in the same order.
"""
from __future__ import annotations

import math

import numpy as np

from .fuse import Group, boundaries, eligible
from .numba_base import F64
from .numba_flat import View, basic_view, broadcast
from .passes import known
from .program import Guard

__all__ = ["flat_groups", "uncovered_runs", "FlatPlaces", "MAX_RUNS"]

# A scatter whose zeros form more runs than this zero-fills its whole output first.
MAX_RUNS = 4


def _basic(idx):
    return all(i.__class__ is int or i is None or i is Ellipsis or i.__class__ is slice and all(
        p is None or p.__class__ is int for p in (i.start, i.stop, i.step)) for i in idx)


def _written_index(idx):
    """A getitem's or untake's index as a tuple, or None when it has a part the writer
    does not know (neither basic nor an integer or boolean array)."""
    if idx.__class__ is not tuple:
        idx = (idx,)
    if not all(_basic((i,)) or isinstance(i, np.ndarray) and i.dtype.kind in "ib"
               for i in idx):
        return None
    return idx


def flat_groups(prog, min_members):
    """The fusible groups of ``prog`` (as :func:`dualad.jit.fuse.groups`, any reader of a
    scatter's output eligible), in the order of their last members."""
    avals, group_of, found = prog.avals, {}, []

    def seal(v):
        g = group_of.get(v)
        if g is not None:
            g.sealed = True

    for item in prog.body:
        if item.__class__ is Guard:
            seal(item.var)
            continue
        shape = eligible(item, avals, ())
        if shape is None:
            for a in item.ins:
                if a.__class__ is int:
                    seal(a)
            continue
        joined = []
        for a in item.ins:
            g = group_of.get(a) if a.__class__ is int else None
            if g is None:
                continue
            if g.sealed or g.shape != shape:
                g.sealed = True
            elif g not in joined:
                joined.append(g)
        if not joined:
            g = Group(len(found), shape)
            found.append(g)
        else:
            g = joined[0]
            for other in joined[1:]:
                g.members.extend(other.members)
                for m in other.members:
                    group_of[m.out] = g
                other.members = []
        g.members.append(item)
        group_of[item.out] = g
    order = {id(e): k for k, e in enumerate(prog.body)}
    out = []
    for g in found:
        if len(g.members) >= min_members:
            g.members.sort(key=lambda m: order[id(m)])
            out.append(g)
    out.sort(key=lambda g: order[id(g.members[-1])])
    return out


def uncovered_runs(shape, idx):
    """``[(start, length)]``: the runs of flat C-order entries of an array of ``shape``
    that ``idx`` (a basic index) does not select."""
    n = max(1, math.prod(shape))
    mask = np.zeros(shape, bool)
    mask[idx] = True
    free = ~mask.reshape(n)
    if not free.any():
        return []
    edges = np.flatnonzero(np.diff(np.concatenate([[False], free, [False]]).astype(np.int8)))
    return [(int(a), int(b - a)) for a, b in zip(edges[::2], edges[1::2])]


class FlatPlaces:
    """A mixin of the flat emitter: ``self.dest`` (variable -> function giving its place),
    ``self.pre`` (a consumer's output variable -> its place, allocated early),
    ``self.zeroed`` (the output variables of scatters already zero-filled)."""

    def plan_places(self, prog):
        """Record, for each variable some equation of ``prog`` only copies into its own
        output (concatenate, a basic-index scatter), the place it is copied to (the
        consumer's output is allocated when the producer first asks)."""
        for e in prog.body:
            if e.__class__ is Guard:
                continue
            name = known(e.prim)
            if name == "concatenate" and set(e.params) == {"axis"}:
                shape = self.out_shape(e.out)
                if not shape:
                    continue
                axis, at = int(e.params["axis"]) % len(shape), 0
                for a in e.ins:
                    sh = self._shape_of(a)
                    if sh is None or len(sh) != len(shape):
                        break
                    if a.__class__ is int and self.out_dtype(a) == self.out_dtype(e.out):
                        self.dest.setdefault(a, self._concat_place(e, sh, at, axis))
                    at += sh[axis]
            elif name == "untake" and e.ins[0].__class__ is int:
                idx = _written_index(e.params["idx"])
                shape = tuple(e.params["shape"])
                a = e.ins[0]
                if idx is None or not _basic(idx) or self.out_dtype(e.out) != F64 or \
                        self.out_dtype(a) != F64:
                    continue
                probe = basic_view(View("_", shape, F64), idx)
                if probe.shape == self._shape_of(a):
                    self.dest.setdefault(a, self._untake_place(e, idx, shape))

    def _shape_of(self, a):
        if a.__class__ is int:
            kind, shape, _ = self.avals[a]
            return tuple(shape) if kind is np.ndarray else None
        v = a.value
        return v.shape if isinstance(v, np.ndarray) else None

    def pre_out(self, e):
        """The output place of consumer ``e``, allocated on the first call."""
        got = self.pre.get(e.out)
        if got is None:     # (itself in its own consumer's place, when it has one)
            got = self.pre[e.out] = self.place(e.out, self.out_shape(e.out),
                                               self.out_dtype(e.out))
        return got

    def _concat_place(self, e, sh, at, axis):
        def make():
            out = self.pre_out(e)
            return out.sub(sh, out.strides, at * out.strides[axis])
        return make

    def _untake_place(self, e, idx, shape):
        def make():
            fresh = e.out not in self.pre
            out = self.pre_out(e)
            if fresh and len(uncovered_runs(shape, idx)) > MAX_RUNS:
                self.zero_runs(out, [(0, max(1, math.prod(shape)))])  # before the producer
                self.zeroed.add(e.out)
            return basic_view(out, idx)
        return make

    def zero_runs(self, out, runs):
        """Write zeros at the runs ``[(start, length)]`` of the flat entries of ``out``."""
        for start, n in runs:
            flat = View(out.buf, (n,), out.dtype, None, out.sub((n,), (1,), start).off)
            if n == 1:
                self.emit(f"{flat.at(['0'])} = 0")
                continue
            idx = self.nest((n,), "j")
            self.emit(f"{flat.at(idx)} = 0")
            self.close()

    def place(self, v, shape, dtype):
        """The place for the value of ``v`` (the output of an elementwise loop, a
        concatenation or a scatter): its consumer's, or a new one in the arena."""
        make = self.dest.pop(v, None)
        if make is not None:
            got = make()
            if got.shape == tuple(shape) and got.dtype == dtype:
                return got
        return self.alloc(shape, dtype)

    @staticmethod
    def same_place(dst, src):
        """Whether writing View ``src`` into ``dst`` would copy nothing (the same entries)."""
        if not isinstance(src, View) or src.buf != dst.buf or str(src.off) != str(dst.off):
            return False
        try:
            b = broadcast(src, dst.shape)
        except Exception:   # noqa: BLE001 (not broadcastable: not the same place)
            return False
        return all(s == t or n == 1 for s, t, n in zip(b.strides, dst.strides, dst.shape))

    def fused_groups(self, prog, min_members):
        """``{id(last member): (members, outputs, shape)}`` and the ids of the others."""
        found = flat_groups(prog, min_members)
        at, drop = {}, set()
        for g, (_, outputs) in zip(found, boundaries(prog, found)):
            if not outputs:
                continue
            at[id(g.members[-1])] = (g.members, outputs, tuple(g.shape))
            drop.update(id(m) for m in g.members[:-1])
        return at, drop
