"""Where :mod:`dualad.interpreters.staging.numba_flat` writes a value: in its consumer's place when it can
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
places used in turn by the parity of ``k`` (:mod:`dualad.interpreters.staging.numba_flatloop`), so the
new value never lands where the old one is still read. The other readers of the value
read it in its new place. Elementwise loops, concatenations and scatters are placed so;
a value has at most one such place, the first consumer's.

A placed elementwise loop whose value nothing else reads is kept (:meth:`FlatPlaces.hold`)
until the next loop: when that loop reads the concatenation or scatter through exactly one
load of C-contiguous entries (and as no number), the kept loop is computed inside it, entry
``i - shift`` just before entry ``i`` is read (still stored: other readers come later),
the entries before and after it (the other operands, the zeros) read as before; one loop
instead of two. Any other code written meanwhile writes the kept loop first.

The fused groups (:meth:`FlatPlaces.fused_groups`) are :func:`dualad.interpreters.staging.fuse.groups`
with ``scatter_readers=True``: the kernels path keeps the readers of a scatter's output out
of groups (its scatter-add chains stay NumPy additions), a rule this writer, which writes
the scatter as a loop, does not need.
Fusing changes no number: each entry gets the same operations in the same order.
"""
from __future__ import annotations

import math

import numpy as np

from .fuse import boundaries, groups
from .numba_base import F64
from .numba_flat import View, basic_view, broadcast
from .passes import known, uses
from .program import Guard

__all__ = ["uncovered_runs", "FlatPlaces", "MAX_RUNS"]

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


def _base(off):
    """The constant an offset source starts with (the start of the part of the arena its
    view was made from), or 0."""
    head = off.split(" ", 1)[0]
    return int(head) if head.isdigit() else 0


class FlatPlaces:
    """A mixin of the flat emitter: ``self.dest`` (variable -> function giving its place),
    ``self.pre`` (a consumer's output variable -> its place, allocated early),
    ``self.zeroed`` (the output variables of scatters already zero-filled), ``self.solo``
    (a variable read only by the concatenation or scatter it is placed in -> that
    equation's output) and ``self.pending`` (a held loop, see :meth:`hold`)."""

    def plan_places(self, prog):
        """Record, for each variable some equation of ``prog`` only copies into its own
        output (concatenate, a basic-index scatter), the place it is copied to (the
        consumer's output is allocated when the producer first asks)."""
        reads = uses(prog)
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
                        if reads.get(a) == 1:
                            self.solo[a] = e.out
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
                    if reads.get(a) == 1:
                        self.solo[a] = e.out

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
        found = groups(prog, min_members, scatter_readers=True)
        at, drop = {}, set()
        for g, (_, outputs) in zip(found, boundaries(prog, found)):
            if not outputs:
                continue
            at[id(g.members[-1])] = (g.members, outputs, tuple(g.shape))
            drop.update(id(m) for m in g.members[:-1])
        return at, drop

    # ---- a placed loop written inside its reader's loop ----------------------------
    def hold(self, spec):
        """Write ``spec`` (an elementwise loop) or keep it: a loop whose one output is
        placed in a concatenation or scatter and read by nothing else is kept until the
        next loop, which, when it reads that output flat, computes it inside (one loop,
        not two). Returns whether ``spec`` was written or kept here."""
        pend, self.pending = self.pending, None
        if pend is not None:
            if self._merge(pend, spec):
                return True
            self.write_loop(pend[0])
        if spec["flat"] and len(spec["bufs"]) == 1:
            v, home = next(iter(spec["bufs"].items()))
            out = self.solo.get(v)
            if out is not None and home.off.__class__ is int and \
                    self.pre.get(out) is not None and self.pre[out].buf == home.buf:
                whole = self.pre[out]
                self.pending = (spec, out, home, (whole.off, whole.off + max(
                    1, math.prod(whole.shape))))
                return True
        return False

    def flush(self, item=None):
        """Before ``item`` (the next equation, or a fused group's last member): let it
        write code with the kept loop still kept if it is the loop's concatenation or
        scatter, or an elementwise loop reading that; any other code written first
        writes the kept loop (:meth:`emit`). Without ``item``: write the kept loop now."""
        pend = self.pending
        self.quiet = False
        if pend is None or item is None or item.__class__ is Guard:
            if pend is not None and item is None:
                self.pending = None
                self.write_loop(pend[0])
            return
        if item.out == pend[1]:
            self.quiet = True
            return
        members = self._members_of(item)
        self.quiet = bool(members) and any(a.__class__ is int and a == pend[1]
                                           for m in members for a in m.ins)

    def emit(self, line):
        """Append ``line``, the kept loop first unless the current item may follow it."""
        if self.pending is not None and not self.quiet:
            pend, self.pending = self.pending, None
            self.write_loop(pend[0])
        self.lines.append(self.ind + line)

    def _merge(self, pend, spec):
        """Write ``spec``'s loop with the kept loop ``pend`` inside, when ``spec`` is flat
        and reads the kept loop's place through exactly one load of C-contiguous entries
        covering it; else write nothing and return False."""
        sub, _, home, region = pend
        if not spec["flat"] or region[0].__class__ is not int:
            return False
        n, m, lo = spec["n"], sub["n"], home.off
        # a view with an offset that moves with k starts in the part of the arena it was
        # made from (a carry's, a stack's), never in the concatenation's new one
        hit = [(nm, v) for nm, v in spec["loads"] if v.buf == home.buf and (
            v.off < lo + m and lo < v.off + n if v.off.__class__ is int else
            region[0] <= _base(v.off) < region[1])]
        if len(hit) != 1 or hit[0][1].off.__class__ is not int or any(
                home.buf + "[" in x for x in spec["numbers"]):   # (an entry read as a number)
            return False
        nm, v = hit[0]
        shift = lo - v.off
        if shift < 0 or shift + m > n:
            return False
        if shift:
            self.write_loop(spec, 0, shift)
        self.write_loop(spec, shift, shift + m, inner=(sub, shift, nm))
        if shift + m < n:
            self.write_loop(spec, shift + m, n)
        return True
