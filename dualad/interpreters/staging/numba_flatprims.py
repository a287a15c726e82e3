"""How :mod:`dualad.interpreters.staging.numba_flat` writes the primitives other than elementwise ones and
reductions: reshaping and indexing (no code: a new view of the same buffer), the
scatter-add of an index, concatenation, products and ``einsum`` (loop nests). A mixin
of the flat emitter: each ``_name(e)`` returns the output's value (a View or a scalar
source) or None when this form is not written."""
from __future__ import annotations

import math

from .numba_base import F64, I64
from .numba_flat import View, basic_view, broadcast, positions
from .numba_flatplace import MAX_RUNS, _basic, _written_index, uncovered_runs

__all__ = ["FlatPrimitives"]

# An einsum output of at most this many entries stays in cache: its summed letters loop
# outside (the operands read along their rows), not inside (strided, once per entry).
_CACHED = 1 << 15


class FlatPrimitives:

    def _from_scalar(self, s, shape, dtype):
        one = self.alloc((), dtype)
        self.emit(f"{one.at([])} = {s}")
        return View(one.buf, shape, dtype, (0,) * len(shape), one.off)

    def _broadcast_to(self, e):
        shape = tuple(e.params["shape"])
        x = self.value(e.ins[0])
        if not isinstance(x, View):
            return x if shape == () else self._from_scalar(x, shape, self.out_dtype(e.out))
        return broadcast(x, shape)

    def _reshape(self, e):
        shape = tuple(e.params["shape"])
        x = self.value(e.ins[0])
        if not isinstance(x, View):
            return x if shape == () else self._from_scalar(x, shape, self.out_dtype(e.out))
        if math.prod(shape) != math.prod(x.shape):
            return None
        if shape == ():
            return x.at(["0"] * len(x.shape))
        if not x.contiguous():
            x = self.materialize(x)
        return View(x.buf, shape, x.dtype, None, x.off)

    def _transpose(self, e):
        x = self.value(e.ins[0])
        if not isinstance(x, View):
            return x
        axes = tuple(e.params["axes"])
        return View(x.buf, [x.shape[a] for a in axes], x.dtype, [x.strides[a] for a in axes],
                    x.off)

    def _getitem(self, e):
        idx = _written_index(e.params["idx"])
        x = self.value(e.ins[0])
        if idx is None or not isinstance(x, View):
            return None
        if _basic(idx):
            got = basic_view(x, idx)
            return got.at([]) if got.shape == () else got
        pos = positions(x, idx)
        if pos.size == 0:
            return None
        k = self.w.const(pos.ravel())
        out = self.alloc(pos.shape, x.dtype)
        flat = View(out.buf, (pos.size,), x.dtype, None, out.off)
        j = self.nest((pos.size,), "j")
        off = "" if x.off == 0 else f"{x.off} + "
        self.emit(f"{flat.at(j)} = {x.buf}[{off}{k}[{j[0]}]]")
        self.close()
        return out if pos.shape != () else out.at([])

    def _untake(self, e):
        idx, shape = _written_index(e.params["idx"]), tuple(e.params["shape"])
        if idx is None or self.out_dtype(e.out) != F64:
            return None
        u = self.value(e.ins[0])
        if _basic(idx):     # zeros only where the operand does not land (numba_flatplace)
            out = self.pre.pop(e.out, None) or self.place(e.out, shape, F64)
            runs = uncovered_runs(shape, idx)
            if e.out not in self.zeroed:
                if len(runs) > MAX_RUNS and not self.same_place(basic_view(out, idx), u):
                    runs = [(0, max(1, math.prod(shape)))]
                self.zero_runs(out, runs)
            dst = basic_view(out, idx)
            if dst.shape == ():
                self.emit(f"{dst.at([])} = {self.as_scalar(u, F64)}")
            else:
                self.copy_into(dst, u)
            return out
        out = self.alloc(shape, F64, zeros=True)
        pos = positions(out, idx)
        if pos.size == 0:
            return out
        k = self.w.const(pos.ravel())
        src = broadcast(u, pos.shape) if isinstance(u, View) else u
        flat = View(k, pos.shape, I64)
        j = self.nest(pos.shape, "j")
        off = "" if out.off == 0 else f"{out.off} + "
        self.emit(f"{out.buf}[{off}{flat.at(j)}] += {src.at(j) if isinstance(src, View) else src}")
        self.close()
        return out

    def _concatenate(self, e):
        if set(e.params) != {"axis"}:
            return None
        xs = [self.value(a) for a in e.ins]
        if not all(isinstance(x, View) for x in xs):
            return None
        shape = self.out_shape(e.out)
        dtype = self.out_dtype(e.out)
        axis = int(e.params["axis"]) % len(shape)
        out = self.pre.pop(e.out, None) or self.place(e.out, shape, dtype)
        at = 0
        for x in xs:
            n = x.shape[axis]
            dst = out.sub(x.shape, out.strides, at * out.strides[axis])
            self.copy_into(dst, x)
            at += n
        return out

    def _matmul(self, e):
        a, b = (self.value(x) for x in e.ins)
        if e.params or not all(isinstance(x, View) and 1 <= len(x.shape) <= 2 for x in (a, b)):
            return None
        # (i, k) @ (k, j), vectors as one row / one column; summed from 0.0 in k order
        a2 = a if len(a.shape) == 2 else View(a.buf, (1,) + a.shape, a.dtype,
                                                (0,) + a.strides, a.off)
        b2 = b if len(b.shape) == 2 else View(b.buf, b.shape + (1,), b.dtype,
                                                b.strides + (0,), b.off)
        n, kk = a2.shape
        m = b2.shape[1]
        oshape = self.out_shape(e.out)
        out = self.alloc((n, m), F64, zeros=True)
        i = self.nest((n,), "i")
        k = self.nest((kk,), "p")
        av = self.w.name("a")
        self.emit(f"{av} = {a2.at([i[0], k[0]])}")
        j = self.nest((m,), "j")
        self.emit(f"{out.at([i[0], j[0]])} += {av} * {b2.at([k[0], j[0]])}")
        self.close()
        self.close()
        self.close()
        return out.at(["0", "0"]) if oshape == () else View(out.buf, oshape, F64, None, out.off)

    def _einsum(self, e):
        subs, out = tuple(e.params["subs"]), e.params["out"]
        xs = [self.value(a) for a in e.ins]
        if not all(isinstance(x, View) for x in xs):
            return None
        size = {}
        for sub, x in zip(subs, xs):
            for c, d in zip(sub, x.shape):
                size[c] = d
        inner = [c for c in dict.fromkeys("".join(subs)) if c not in out]
        oshape = tuple(size[c] for c in out)
        letters = {c: self.w.name("l") for c in size}
        prod = " * ".join(x.at([letters[c] for c in sub]) for sub, x in zip(subs, xs))
        if out and inner and math.prod(oshape) <= _CACHED:
            # the summed letters outside, the output (small: in cache) inside, added to in
            # place: each entry gets its terms in the same order, from 0.0
            res = self.alloc(oshape, F64, zeros=True)
            for c in inner + list(out):
                self.emit(f"for {letters[c]} in range({size[c]}):")
                self.ind += "    "
            self.emit(f"{res.at([letters[c] for c in out])} += {prod}")
            self.ind = self.ind[:len(self.ind) - 4 * (len(inner) + len(out))]
            return res
        res = self.alloc(oshape, F64) if out else None
        for c in out:
            self.emit(f"for {letters[c]} in range({size[c]}):")
            self.ind += "    "
        acc = self.w.name("acc")
        self.emit(f"{acc} = 0.0")
        for c in inner:
            self.emit(f"for {letters[c]} in range({size[c]}):")
            self.ind += "    "
        self.emit(f"{acc} += {prod}")
        self.ind = self.ind[:len(self.ind) - 4 * len(inner)]
        if out:
            self.emit(f"{res.at([letters[c] for c in out])} = {acc}")
            self.ind = self.ind[:len(self.ind) - 4 * len(out)]
            return res
        return acc

    # ---- reductions (the order of additions: see numba_flat's docstring) ----
    def reduce(self, e, op):
        if set(e.params) != {"axis", "keepdims"}:
            return None
        x = self.value(e.ins[0])
        if not isinstance(x, View):
            return None
        r = len(x.shape)
        axis = e.params["axis"]
        axes = tuple(range(r)) if axis is None else tuple(
            sorted(a % r for a in ((axis,) if axis.__class__ is int else axis)))
        dtype = self.out_dtype(e.out)
        oshape = self.out_shape(e.out)
        if not axes:
            return View(x.buf, oshape, x.dtype, x.strides, x.off) if x.shape == oshape \
                else None
        kept = [a for a in range(r) if a not in axes]
        kshape = tuple(x.shape[a] for a in kept)
        rshape = tuple(x.shape[a] for a in axes)
        k = math.prod(rshape)
        lead = axes == tuple(range(len(axes))) and kept
        if op == "sum" and dtype == F64 and x.dtype != F64:
            return None
        out = self.alloc(kshape, dtype, zeros=lead and op not in ("max", "min")) \
            if kshape else None
        if lead:     # over the leading axes: rows added (compared) in order
            if op in ("max", "min"):
                self.copy_into(out, View(x.buf, kshape, x.dtype, [x.strides[a] for a in kept],
                                         x.off))
            ridx = self.nest(rshape, "r")
            kidx = self.nest(kshape, "q")
            full = [None] * r
            for a, i in zip(axes, ridx):
                full[a] = i
            for a, i in zip(kept, kidx):
                full[a] = i
            src, dst = x.at(full), out.at(kidx)
            if op in ("max", "min"):
                cmp = ">" if op == "max" else "<"
                av = self.w.name("a")
                self.emit(f"{av} = {src}")
                self.emit(f"if {av} {cmp} {dst} or {av} != {av}:")
                self.emit(f"    {dst} = {av}")
            else:
                self.emit(f"{dst} += {src}")
            self.close()
            self.close()
            return View(out.buf, oshape, dtype, None, out.off)
        acc, av = self.w.name("acc"), self.w.name("a")
        rstrides = [x.strides[a] for a in axes]
        probe = View(x.buf, rshape, x.dtype, rstrides, 0)
        sc = None
        if op == "sum" and dtype == F64 and k >= 8 and not probe.contiguous():
            sc = self.alloc(rshape, F64)
        kidx = self.nest(kshape, "q")
        koff = View(x.buf, kshape, x.dtype, [x.strides[a] for a in kept], x.off).offset_at(
            kidx) if kshape else x.off
        if koff.__class__ is str and koff.isdigit():
            koff = int(koff)
        row = View(x.buf, rshape, x.dtype, rstrides, koff)
        if op == "sum" and dtype == F64 and k >= 8:
            if sc is None:
                self.emit(f"{acc} = 0.0 + _pw({row.buf}, np.int64({row.off}), np.int64({k}))")
            else:
                self.copy_into(sc, row)
                self.emit(f"{acc} = 0.0 + _pw({sc.buf}, np.int64({sc.off}), np.int64({k}))")
        else:
            first = row.at(["0"] * len(rshape))
            start = first if op in ("max", "min") else "-0.0" if dtype == F64 else "0"
            self.emit(f"{acc} = {start}")
            ridx = self.nest(rshape, "r")
            if op in ("max", "min"):
                cmp = ">" if op == "max" else "<"
                self.emit(f"{av} = {row.at(ridx)}")
                self.emit(f"if {av} {cmp} {acc} or {av} != {av}:")
                self.emit(f"    {acc} = {av}")
            else:
                self.emit(f"{acc} += {row.at(ridx)}")
            self.close()
            if dtype == F64 and op == "sum":
                self.emit(f"{acc} = 0.0 + {acc}")
        if out is not None:
            self.emit(f"{out.at(kidx)} = {acc}")
        self.close()
        if out is None:
            if oshape == ():
                return acc
            one = self.alloc((), dtype)
            self.emit(f"{one.at([])} = {acc}")
            return View(one.buf, oshape, dtype, (0,) * len(oshape), one.off)
        return View(out.buf, oshape, dtype, None, out.off)
