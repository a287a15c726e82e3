"""How :mod:`dualad.interpreters.staging.numba_flat` writes a rolled loop (:mod:`dualad.interpreters.staging.loops`): a
``for`` over the blocks with the body's code inline (one compiled function in all),
per-block values stacked in one buffer, per-block inputs read at an offset of ``k`` (a
mixin of the flat emitter).

Carries: a number is a local; an array the body computes anew has two places, read and
written in turn by the parity of ``k`` (its producer writes the new value in the place the
old one is not read from: no copy back; after the loop it is in the place the static trip
count says), or, when its leading part is a per-block value, one row of that value's stack
per block (block ``k`` reads row ``k`` and writes row ``k + 1``: the stacked entry is the
carry itself); any other array carry has one place, copied back into at the end of each
block. A per-block value, or an array whose leading entries it is, is made in its stack
entry (the rest running into entry ``k + 1``, written later, or a pad after the stack).
A join (the reverse sweep's list of stacked values) whose rows are evenly spaced rows of
one buffer is a view of it; otherwise it is copied row by row."""
from __future__ import annotations

import math

import numpy as np

from .numba_base import BOOL, F64, I64, Unsupported, stacked_constants
from .numba_flat import View, c_strides, positions
from .numba_flatplace import _basic, _written_index
from .passes import known
from .program import Eqn

__all__ = ["FlatLoops"]


class FlatLoops:

    def kind_of(self, x, atom):
        """``(shape, dtype)`` of a value."""
        if isinstance(x, View):
            return x.shape, x.dtype
        if atom.__class__ is int:
            return (), self.out_dtype(atom)
        return (), np.result_type(atom.value)

    def _stack(self, e):
        xs = [self.value(a) for a in e.ins]
        kinds = {self.kind_of(x, a) for x, a in zip(xs, e.ins)}
        if len(kinds) != 1:
            raise Unsupported("per-block values of several shapes or dtypes")
        ((shape, dtype),) = kinds
        out = self.alloc((len(xs),) + shape, np.dtype(dtype))
        for j, x in enumerate(xs):
            self._store(out, str(j), x)
        return out

    def _store(self, stack, k, x):
        """Write ``x`` as entry ``k`` (source) of the stacked ``stack``."""
        dst = _slot(stack, k)
        if not isinstance(x, View):
            self.emit(f"{dst.at([])} = {x}")
        else:
            self.copy_into(dst, x)

    def _entry(self, x, k):
        """Entry ``k`` (source) of a stacked value: a view (or scalar) of the same buffer."""
        if len(x.shape) == 1:
            return x.sub((), (), f"({k}) * {x.strides[0]}" if x.strides[0] != 1 else k).at([])
        return x.sub(x.shape[1:], x.strides[1:], f"({k}) * {x.strides[0]}")

    def _join(self, e):
        p = e.params
        before, y, after = e.ins[:p["before"]], e.ins[p["before"]], e.ins[p["before"] + 1:]
        xs_b = [self.value(a) for a in before]
        xs_a = [self.value(a) for a in after]
        shape, dtype = self.kind_of((xs_b or xs_a)[0], (before or after)[0])
        total = len(before) + p["count"] + len(after)
        yv = self.value(y)
        rows = _rows(xs_b, yv, xs_a, p)
        if rows is not None:    # all rows of one buffer, evenly spaced: a view of it
            step = rows[1] - rows[0] if len(rows) > 1 else 0
            if rows == [rows[0] + step * j for j in range(total)]:
                return View(yv.buf, (total,) + yv.shape[1:], yv.dtype,
                            (step,) + yv.strides[1:], rows[0])
        out = self.alloc((total,) + shape, np.dtype(dtype))
        for j, x in enumerate(xs_b):
            self._store(out, str(j), x)
        jn = self.w.name("j")
        self.emit(f"for {jn} in range({p['count']}):")
        self.ind += "    "
        entry = self._entry(yv, f"{p['first']} + {p['stride']} * {jn}")
        self._store(out, f"{len(before)} + {jn}", entry)
        self.ind = self.ind[:-4]
        for j, x in enumerate(xs_a):
            self._store(out, str(len(before) + p["count"] + j), x)
        return out

    def _loop(self, e):
        spec = e.prim.spec
        body = self.prepare(spec.body)
        ins = list(e.ins)
        nc, ni = spec.ncarry, spec.ninv
        child = self.child(body)
        kv = "k" if self.depth == 0 else f"k_{self.depth}"
        outs = body.outvars
        made = {v for v in body.invars}
        once = {a for a in outs if a.__class__ is int and a not in made and
                sum(b.__class__ is int and b == a for b in outs) == 1}
        carries, slots, ends, writes = [], [], {}, {}
        stacked, within = {}, {}    # carry -> the per-block value that is its lead; stacks
        for p, a in enumerate(outs[nc:nc + spec.nlists]):
            got = _prefix_of(body, a) if a in once else None
            if got is not None and got[0] in body.invars[:nc]:
                j = body.invars.index(got[0])
                if outs[j] in once:
                    stacked.setdefault(j, p)
        # an array carry the body computes anew has two places, read and written in turn
        # by the parity of k (the new value never lands where the old one is read, and is
        # written where it is made: no copy back); else one place, copied back into
        for j, a in enumerate(ins[:nc]):
            x = self.value(a)
            if not isinstance(x, View):
                c = self.w.name("c")
                self.emit(f"{c} = {x}")
                carries.append(c)
                continue
            size = max(1, math.prod(x.shape))
            p = stacked.get(j)
            if p is not None:   # its leading part is stacked: it lives in its stack,
                # one row (of its size) per block, the new value made in the next row
                buf, off = self.w.slot((spec.n + 1) * size, x.dtype)
                within[p] = View(buf, (spec.n,) + child.out_shape(outs[nc + p]), x.dtype,
                                 (size,) + c_strides(child.out_shape(outs[nc + p])), off)
                self.copy_into(View(buf, x.shape, x.dtype, None, off), x)
                carries.append(View(buf, x.shape, x.dtype, None, _slot(within[p], kv).off))
                writes[j] = View(buf, x.shape, x.dtype, None, f"{off + size} + {kv} * {size}")
                child.dest[outs[j]] = _fixed(writes[j])
                ends[j] = View(buf, x.shape, x.dtype, None, off + size * spec.n)
                slots.append((buf, off, off + (spec.n + 1) * size))
            elif outs[j] in once:
                buf, off = self.w.slot(2 * size, x.dtype)
                self.copy_into(View(buf, x.shape, x.dtype, None, off), x)
                carries.append(View(buf, x.shape, x.dtype, None, f"{off} + ({kv} & 1) * {size}"))
                writes[j] = View(buf, x.shape, x.dtype, None,
                                 f"{off + size} - ({kv} & 1) * {size}")
                child.dest[outs[j]] = _fixed(writes[j])
                ends[j] = View(buf, x.shape, x.dtype, None, off + size * (spec.n % 2))
                slots.append((buf, off, off + 2 * size))
            else:
                carries.append(self.materialize(x))
                c = carries[-1]
                slots.append((c.buf, c.off, c.off + size))

        def clash(x):       # does x read a carry's place (or a place that moves with k)?
            if x.off.__class__ is not int:
                return True
            return any(x.buf == b and lo < hi2 and x.off < hi for b, lo, hi in slots
                       for hi2 in [x.off + 1 + sum((d - 1) * abs(st) for d, st in
                                                   zip(x.shape, x.strides))])

        elems = []
        for x, a in zip(spec.xs, ins[nc + ni:]):
            kind = x[0]
            if kind == "const":
                stacked = stacked_constants(a.value, (F64, BOOL, I64))
                src, first, stride = View(self.w.const(stacked), stacked.shape,
                                          stacked.dtype), 0, 1
            elif kind == "list" and not (x[4] or x[5]):
                src, first, stride = self.value(a), x[2], x[3]
            else:
                src, first, stride = self.value(a), 0, 1
            if not isinstance(src, View):
                raise Unsupported("a per-block input that is not an array")
            elems.append(self._entry(src, kv if (first, stride) == (0, 1)
                                     else f"{first} + {stride} * {kv}"))
        nl = spec.nlists
        # the stacks of per-block values, typed from the body's avals
        ys = []
        for p, a in enumerate(outs[nc:nc + nl]):
            if a.__class__ is int:
                shape, dtype = child.out_shape(a), child.out_dtype(a)
            else:
                shape, dtype = np.shape(a.value), np.result_type(a.value)
            if p in within:
                ys.append(within[p])
                continue
            ys.append(self.alloc((spec.n,) + tuple(shape), np.dtype(dtype)))
            if a in once and shape != ():       # made where it is stacked: no copy
                child.dest.setdefault(a, _fixed(_slot(ys[-1], kv)))
                got = _prefix_of(body, a)
                if got is not None and got[0] not in made:     # a leading part of v: v made at the entry, its
                    v, extra = got      # rest running into entry k + 1 (written later)
                    self.w.slot(extra, dtype)       # (or past the stack's end)
                    at = _slot(ys[-1], kv)
                    child.dest.setdefault(v, _fixed(View(at.buf, child.out_shape(v),
                                                         at.dtype, None, at.off)))
        self.emit(f"for {kv} in range({spec.n}):")
        child.ind = self.ind + "    "
        for v, x in zip(body.invars, carries + [self.value(a) for a in ins[nc:nc + ni]] + elems):
            child.val[v] = x
        child.body(body)
        for a, y in zip(outs[nc:nc + nl], ys):
            child._store(y, kv, child.value(a))
        lasts = []
        for a in outs[nc + nl:]:
            x = child.value(a)
            if isinstance(x, View):
                lasts.append(child.materialize(x) if clash(x) else x)
            else:
                name = self.w.name("l")
                child.emit(f"{name} = {x}")
                lasts.append(name)
        staged, scalars = [], []
        for j, (a, c) in enumerate(zip(outs[:nc], carries)):
            x = child.value(a)
            if not isinstance(c, View):
                scalars.append((c, x))
                continue
            dst = writes.get(j, c)  # a computed carry: where it was made, else copied there
            if not child.same_place(dst, x):
                staged.append((dst, child.materialize(x) if clash(x) else x))
        for dst, x in staged:
            child.copy_into(dst, x)
        if scalars:
            left, right = (", ".join(p[j] for p in scalars) for j in (0, 1))
            child.emit(f"{left}, = ({right},)")
        finals, it = [], iter(lasts)
        for j in spec.last_carry:
            finals.append(ends.get(j, carries[j]) if j is not None else next(it))
        return ("tuple", [True] + ys + finals)

    def _output(self, e):
        got = self.value(e.ins[0])
        if isinstance(got, View) and got.shape:       # an entry of stacked values
            return self._entry(got, str(e.ins[1].value))
        if not (isinstance(got, tuple) and got[0] == "tuple"):
            raise Unsupported(f"an output of something not a loop: {got!r:.200}")
        return got[1][e.ins[1].value]


def _slot(stack, k):
    """The View of entry ``k`` (source) of the stacked ``stack``."""
    shape, size = stack.shape[1:], stack.strides[0]
    off = int(k) * size if k.isdigit() else (f"{k} * {size}" if k.isidentifier() else
                                              f"({k}) * {size}") if size != 1 else k
    return stack.sub(shape, stack.strides[1:], off)


def _fixed(view):
    """A function giving ``view`` (a place known before its producer is written)."""
    return lambda: view


def _prefix_of(body, a):
    """``(v, entries of v after it)`` when ``a`` is a basic index of the array ``v``
    selecting v's first entries in C order, else None."""
    for e in body.body:
        if e.__class__ is not Eqn or e.out != a:
            continue
        if known(e.prim) != "getitem" or e.ins[0].__class__ is not int:
            return None
        v = e.ins[0]
        kind, shape, dtype = body.avals[v]
        idx = _written_index(e.params["idx"])
        if kind is not np.ndarray or not shape or idx is None or not _basic(idx):
            return None
        pos = positions(View("_", tuple(shape), np.dtype(dtype)), idx).ravel()
        if pos.size == 0 or not np.array_equal(pos, np.arange(pos.size)):
            return None
        return v, math.prod(shape) - pos.size
    return None


def _rows(xs_b, yv, xs_a, p):
    """The offsets of a join's rows (the values before, the stack's entries, the values
    after) when all are views of one buffer with the same shape and strides, else None."""
    if not isinstance(yv, View) or yv.off.__class__ is not int or len(yv.shape) < 2:
        return None
    shape, strides = yv.shape[1:], yv.strides[1:]
    for x in xs_b + xs_a:
        if not isinstance(x, View) or x.buf != yv.buf or x.off.__class__ is not int or \
                x.shape != shape or x.strides != strides or x.dtype != yv.dtype:
            return None
    return [x.off for x in xs_b] + [yv.off + (p["first"] + p["stride"] * j) * yv.strides[0]
                                     for j in range(p["count"])] + [x.off for x in xs_a]
