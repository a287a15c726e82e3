"""How :mod:`dualad.interpreters.staging.numba_whole` writes a rolled loop (:mod:`dualad.interpreters.staging.loops`): a
``for`` over the blocks calling the body's compiled function, the carries as locals,
per-block values stacked in one array (a mixin of its function writer)."""
from __future__ import annotations

import numpy as np

from .numba_base import BOOL as _BOOL, F64 as _F64, Unsupported, stacked_constants

__all__ = ["LoopWriting"]


class LoopWriting:
    """Per-block values (:meth:`stack`, :meth:`store`), ``loop_join`` and the loop."""

    def kind(self, a):
        """``(shape, dtype source)`` of an atom (its traced shape; 0-d is a scalar)."""
        if a.__class__ is int:
            kind, shape, dtype = self.avals[a]
            shape = tuple(shape) if kind is np.ndarray else ()
            dtype = _BOOL if kind in (bool, np.bool_) or dtype is not None and \
                np.dtype(dtype) == _BOOL else _F64
        else:
            shape, dtype = np.shape(a.value), np.result_type(a.value)
        if len(shape) > 3 or dtype not in (_F64, _BOOL):
            raise Unsupported(f"per-block values of shape {shape} and dtype {dtype}")
        return shape, "np.bool_" if dtype == _BOOL else "np.float64"

    def store(self, dst, k, src, shape):
        """A line writing ``src`` (of ``shape``) into block ``k`` of the stack ``dst``."""
        return f"{dst}[{k}] = {src}" if shape == () else f"copy{len(shape)}({dst}[{k}], {src})"

    def stack(self, out, atoms, lines, kind=None):
        """``out``: the atoms' values stacked in one new array (per-block values)."""
        kinds = {self.kind(a) for a in atoms}
        if kind is not None:
            kinds.add(kind)
        if len(kinds) != 1:
            raise Unsupported("per-block values of several shapes or dtypes")
        ((shape, dtype),) = kinds
        lines.append(f"    {out} = np.empty({(len(atoms),) + shape!r}, {dtype})")
        for j, a in enumerate(atoms):
            lines.append("    " + self.store(out, j, self.atom(a), shape))
        return shape, dtype

    def join(self, e, lines):
        p = e.params
        before, y, after = e.ins[:p["before"]], e.ins[p["before"]], e.ins[p["before"] + 1:]
        out = f"v{e.out}"
        shape, dtype = self.kind((before or after)[0])
        total = len(before) + p["count"] + len(after)
        lines.append(f"    {out} = np.empty({(total,) + shape!r}, {dtype})")
        for j, a in enumerate(before):
            lines.append("    " + self.store(out, j, self.atom(a), shape))
        lines.append(f"    for j in range({p['count']}):")
        lines.append("        " + self.store(out, f"{len(before)} + j", f"{self.atom(y)}["
                                                f"{p['first']} + {p['stride']} * j]", shape))
        for j, a in enumerate(after):
            lines.append("    " + self.store(out, len(before) + p["count"] + j, self.atom(a),
                                              shape))

    def loop(self, e, lines):
        spec = e.prim.spec
        body_name = self.w.bind(None, "loop_body")
        del self.w.ns[body_name]          # (defined by the source)
        body_consts = self.w.function(spec.body, body_name)
        for k in body_consts:
            if k not in self.const_names:
                self.const_names.append(k)
        ins = list(e.ins)
        nc, ni = spec.ncarry, spec.ninv
        carries = [f"c{e.out}_{j}" for j in range(nc)]
        for c, a in zip(carries, ins[:nc]):
            lines.append(f"    {c} = {self.atom(a)}")
        invs = [self.atom(a) for a in ins[nc:nc + ni]]
        xs = []
        for j, (x, a) in enumerate(zip(spec.xs, ins[nc + ni:])):
            kind = x[0]
            if kind == "const":
                stacked = stacked_constants(a.value, (_F64, _BOOL))
                xs.append((self.use_const(np.ascontiguousarray(stacked)), 0, 1))
            elif kind == "list" and not (x[4] or x[5]):
                xs.append((self.atom(a), x[2], x[3]))
            else:
                xs.append((self.atom(a), 0, 1))
        n = spec.n
        nl, nlast = spec.nlists, sum(j is None for j in spec.last_carry)
        ys = [f"y{e.out}_{j}" for j in range(nl)]
        lasts = [f"l{e.out}_{j}" for j in range(nlast)]
        body = spec.body
        ykinds = []
        for y, a in zip(ys, body.outvars[nc:nc + nl]):    # per-block values kept: stacked
            writer = self if a.__class__ is not int else type(self)(self.w, body)
            shape, dtype = writer.kind(a)
            ykinds.append(shape)
            lines.append(f"    {y} = np.empty({(n,) + shape!r}, {dtype})")
        lines.append(f"    for k in range({n}):")
        elems = [f"{s}[{o} + {st} * k]" if (o, st) != (0, 1) else f"{s}[k]" for s, o, st in xs]
        call = f"{body_name}({', '.join(carries + invs + elems + body_consts)})"
        ts = [f"t{e.out}_{j}" for j in range(nl)]
        targets = carries + ts + lasts
        if targets:
            lines.append(f"        ({', '.join(targets)},) = {call}")
        for y, t, shape in zip(ys, ts, ykinds):
            lines.append("        " + self.store(y, "k", t, shape))
        finals = []
        it = iter(lasts)
        for j in spec.last_carry:
            finals.append(carries[j] if j is not None else next(it))
        lines.append(f"    v{e.out} = (True, {''.join(v + ', ' for v in ys + finals)})")
