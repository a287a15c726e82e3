"""The rolled program built from verified runs (see :mod:`dualad.interpreters.staging.loops`).

For each run: the items computed once (hoisted), the body sub-program compiled once,
the driver (a Python ``for`` over the blocks, generated here), one loop equation and
the ``loop_output`` equations that give the variables read after the run their values.
"""
from __future__ import annotations

import operator

import numpy as np

from .codegen import RETRACE
from .program import Const, Eqn, Guard, Program
from .trace import _aval

__all__ = ["OUTPUT", "PACK", "JOIN", "LoopSpec"]   # and _Builder, private to dualad.interpreters.staging.loops

_LIST = (list, None, None)
_TUPLE = (tuple, None, None)


def _slots(item):
    return (item.var,) if item.__class__ is Guard else item.ins


class _Builder:
    """Builds the rolled program; ``compile_body(program, name) -> (function, source)``
    compiles a loop body (:func:`dualad.interpreters.staging.loops.compile_rolled`, so nested runs roll)."""

    def __init__(self, prog, runs, pos_of, compile_body):
        self.compile_body = compile_body
        self.output, self.pack = OUTPUT, PACK
        self.prog = prog
        self.runs = runs
        self.pos_of = pos_of
        self.avals = dict(prog.avals)
        self.next = max(self.avals, default=-1) + 1
        self.sub = {}            # variable of a hoisted item in block k -> block 0's
        self.bodies = []
        self.run_at = {}         # position -> (run, template position, block)
        for r in runs:
            for q in range(r.start, r.start + r.period * r.blocks):
                self.run_at[q] = r

    def new(self, aval):
        v = self.next
        self.next += 1
        self.avals[v] = aval
        return v

    def where(self, v):
        """``(run, template position, block)`` of the item computing ``v``, or None."""
        q = self.pos_of.get(v, -1)
        r = self.run_at.get(q)
        if r is None:
            return None
        i, k = (q - r.start) % r.period, (q - r.start) // r.period
        return r, i, k

    def resolve(self, a):
        return self.sub.get(a, a) if a.__class__ is int else a

    # -- analysis ----------------------------------------------------------------------
    def hoist(self, r):
        body, s, p = self.prog.body, r.start, r.period
        outs = {a for a in self.prog.outvars if a.__class__ is int}
        hoisted = set()
        for i in range(p):
            item = body[s + i]
            if item.__class__ is not Eqn:
                continue
            ok = True
            for j in range(len(item.ins)):
                cls = r.slots[(i, j)]
                kind = cls[0]
                if kind == "local":
                    ok = cls[1] in hoisted
                elif kind in ("const", "outside"):
                    ok = cls[1] is not None
                else:
                    ok = False
                if not ok:
                    break
            if ok and not any(body[s + k * p + i].out in outs for k in range(1, r.blocks)):
                hoisted.add(i)
        r.hoisted = hoisted
        for i in hoisted:
            v0 = body[s + i].out
            for k in range(1, r.blocks):
                self.sub[body[s + k * p + i].out] = v0

    def xs_source(self, r, vars_):
        """How a per-block input reads ``vars_`` (one per block): ``("list", (run,
        position), first, stride, before, after)`` when blocks ``len(before)`` to
        ``n - len(after)`` read an earlier loop's values at one position in order (forward
        or backward) and the few others read variables; None otherwise (packed)."""
        w = [self.where(v) for v in vars_]
        inside = [k for k, x in enumerate(w) if x is not None]
        if len(inside) < 2:
            return None
        ka, kb = inside[0], inside[-1] + 1
        if ka + len(w) - kb > _EDGES:
            return None
        r0, i0, j0 = w[ka]
        if r0 is r or i0 in r0.hoisted:
            return None
        stride = w[ka + 1][2] - j0 if w[ka + 1] is not None else 0
        if stride == 0:
            return None
        for k in range(ka, kb):
            x = w[k]
            if x is None or x[0] is not r0 or x[1] != i0 or x[2] != j0 + stride * (k - ka):
                return None
        r0.list_use.add(i0)
        return ("list", (r0, i0), j0, stride, vars_[:ka], vars_[kb:], kb - ka)

    def uses(self):
        """Which values of each run are read after it: per run, ``single``
        ``{(position, block)}`` read as variables, ``list_use`` positions read as lists."""
        for r in self.runs:
            r.single, r.list_use, r.xs, r.carries = set(), set(), [], {}
        body = self.prog.body

        def single(a):
            a = self.resolve(a)
            if a.__class__ is int:
                w = self.where(a)
                if w is not None and w[1] not in w[0].hoisted:   # (hoisted: before the loop)
                    w[0].single.add((w[1], w[2]))

        for q, item in enumerate(body):
            if q not in self.run_at:
                for a in _slots(item):
                    single(a)
        for a in self.prog.outvars:
            single(a)
        for r in self.runs:
            xs_key = {}
            for (i, j), cls in sorted(r.slots.items()):
                if i in r.hoisted:
                    if cls[0] == "outside":
                        single(cls[1])
                    continue
                kind = cls[0]
                if kind == "carry":
                    key = (cls[1], _atom_key(cls[2]))
                    if key not in r.carries:
                        single(cls[2])
                        r.carries[key] = [cls[1], cls[2], None]
                elif kind == "outside" and cls[1] is not None:
                    single(cls[1])
                elif kind == "outside" or kind == "const" and cls[1] is None:
                    atoms = tuple(self.resolve(a) for a in cls[2])
                    key = tuple(_atom_key(a) for a in atoms)
                    if key in xs_key:
                        continue
                    if kind == "const":
                        values = [a.value for a in atoms]
                        src = ("const", Const(values), 0, 1)
                    else:
                        src = self.xs_source(r, atoms)
                        if src is None:
                            src = ("pack", atoms, 0, 1)
                        for a in (atoms if src[0] == "pack" else src[4] + src[5]):
                            single(a)
                    xs_key[key] = len(r.xs)
                    r.xs.append([src, key, None])
            r.xs_key = xs_key

    # -- building ----------------------------------------------------------------------
    def build(self):
        for r in self.runs:
            self.hoist(r)
        self.uses()
        out = []
        q = 0
        body = self.prog.body
        runs = iter(self.runs)
        nxt = next(runs, None)
        while q < len(body):
            if nxt is not None and q == nxt.start:
                self.emit(nxt, out)
                q = nxt.start + nxt.period * nxt.blocks
                nxt = next(runs, None)
                continue
            item = body[q]
            q += 1
            if item.__class__ is Guard:
                if item.var in self.sub:
                    item = Guard(item.kind, self.sub[item.var], item.expected, item.where)
            elif any(a in self.sub for a in item.ins if a.__class__ is int):
                item = Eqn(item.prim, tuple(self.resolve(a) for a in item.ins), item.params,
                           item.out)
            out.append(item)
        outvars = [self.resolve(a) for a in self.prog.outvars]
        # the avals of the variables left (the code generator walks them all)
        avals, old = {}, self.avals
        for v in self.prog.invars:
            avals[v] = old[v]
        for it in out:
            if it.__class__ is Eqn:
                avals[it.out] = old[it.out]
                for a in it.ins:
                    if a.__class__ is int:
                        avals[a] = old[a]
            else:
                avals[it.var] = old[it.var]
        for a in outvars:
            if a.__class__ is int:
                avals[a] = old[a]
        return Program(self.prog.invars, out, outvars, avals, self.prog.name), self.bodies

    def emit(self, r, out):
        body, s, p, n = self.prog.body, r.start, r.period, r.blocks
        avals = self.avals
        for i in sorted(r.hoisted):   # computed once, before the loop
            e = body[s + i]
            out.append(Eqn(e.prim, tuple(self.resolve(a) for a in e.ins), e.params, e.out))
        lists = sorted({i for i, k in r.single if k < n - 1} | r.list_use)
        lasts = sorted({i for i, k in r.single if k == n - 1} - set(lists))
        # the body's inputs: carries, invariants, per-block inputs
        carry_in = {}
        for key, c in r.carries.items():
            init = c[1]
            c[2] = self.new(avals[init] if init.__class__ is int else _aval_of(init))
            carry_in[key] = c[2]
        for x in r.xs:
            kind, payload = x[0][:2]
            if kind == "const":
                x[2] = self.new(_aval(payload.value[0]))
            elif kind == "list":
                r0, i0 = payload
                x[2] = self.new(avals[self.prog.body[r0.start + i0].out])
            else:
                first = payload[0]
                x[2] = self.new(avals[first] if first.__class__ is int else _aval(first.value))
        inv = []
        tmpl = []
        for i in range(p):
            if i in r.hoisted:
                continue
            item = body[s + i]
            ins = []
            for j, a in enumerate(_slots(item)):
                cls = r.slots[(i, j)]
                kind = cls[0]
                if kind == "local":
                    b = body[s + cls[1]].out
                    if cls[1] in r.hoisted and b not in inv:
                        inv.append(b)
                elif kind == "carry":
                    b = carry_in[(cls[1], _atom_key(cls[2]))]
                elif kind == "const" and cls[1] is not None:
                    b = a
                elif kind == "outside" and cls[1] is not None:
                    b = self.resolve(a)
                    if b not in inv:
                        inv.append(b)
                else:
                    atoms = tuple(self.resolve(x) for x in cls[2])
                    b = r.xs[r.xs_key[tuple(_atom_key(x) for x in atoms)]][2]
                ins.append(b)
            if item.__class__ is Guard:
                tmpl.append(Guard(item.kind, ins[0], item.expected, item.where))
            else:
                tmpl.append(Eqn(item.prim, tuple(ins), item.params, item.out))
        carries = list(r.carries.values())
        for c in carries:   # a state whose next value is computed once, before the loop
            if c[0] in r.hoisted and body[s + c[0]].out not in inv:
                inv.append(body[s + c[0]].out)
        carry_at = {}
        for j, c in enumerate(carries):
            carry_at.setdefault(c[0], j)
        last_carry = [carry_at.get(i) for i in lasts]   # (a carry's final value: no output)
        body_out = [body[s + c[0]].out for c in carries] + [body[s + i].out for i in lists] + \
            [body[s + i].out for i, j in zip(lasts, last_carry) if j is None]
        invars = [c[2] for c in carries] + inv + [x[2] for x in r.xs]
        used = set(invars)
        for it in tmpl:
            if it.__class__ is Eqn:
                used.add(it.out)
                used.update(a for a in it.ins if a.__class__ is int)
            else:
                used.add(it.var)
        sub_avals = {v: avals[v] for v in used}
        k = len(self.bodies)
        name = f"{self.prog.name}_loop{k}"
        sub = Program(invars, tmpl, body_out, sub_avals, name)
        fn, source = self.compile_body(sub, name=name)
        self.bodies.append((name, source))
        guarded = any(it.__class__ is Guard for it in tmpl) or "RETRACE" in source
        driver = _driver(fn, n, len(carries), len(inv), r.xs, len(lists), last_carry)
        # the loop's inputs
        ins = [c[1] if c[1].__class__ is not int else self.resolve(c[1]) for c in carries]
        ins += inv
        for x in r.xs:
            kind, payload = x[0][:2]
            if kind == "const":
                ins.append(payload)
            elif kind == "list":
                r0, i0 = payload
                y = r0.lists_var[i0]
                _, _, first, stride, before, after, count = x[0]
                if before or after:   # the few blocks that read other variables, joined
                    v = self.new(_LIST)
                    out.append(Eqn(_JOIN, (*before, y, *after), {
                        "before": len(before), "first": first, "stride": stride,
                        "count": count}, v))
                    ins.append(v)
                else:
                    ins.append(y)
            else:   # packed: one sequence of the per-block variables
                v = self.new(_TUPLE)
                out.append(Eqn(self.pack, tuple(payload), {}, v))
                ins.append(v)
        lv = self.new(_TUPLE)
        prim = _Prim("loop", driver)
        # what the driver does, for a code generator writing the loop itself (numba_whole)
        prim.spec = LoopSpec(sub, n, len(carries), len(inv), [x[0] for x in r.xs], len(lists),
                             last_carry)
        out.append(Eqn(prim, tuple(ins), {}, lv))
        where = next((it.where for it in tmpl if it.__class__ is Guard), "") or \
            "a guard inside a rolled loop"
        if guarded:
            ok = self.new((bool, (), _BOOL))
            out.append(Eqn(self.output, (lv, Const(0)), {}, ok))
            out.append(Guard("bool", ok, True, where))
        r.lists_var = {}
        at = 1
        for i in lists:
            y = self.new(_LIST)
            out.append(Eqn(self.output, (lv, Const(at)), {}, y))
            r.lists_var[i] = y
            at += 1
        for i in lasts:
            out.append(Eqn(self.output, (lv, Const(at)), {}, body[s + (n - 1) * p + i].out))
            at += 1
        for i, k in sorted(r.single):
            if i in r.lists_var:
                out.append(Eqn(self.output, (r.lists_var[i], Const(k)), {},
                               body[s + k * p + i].out))


def _atom_key(a):
    return a if a.__class__ is int else ("c", id(a))


_BOOL = np.dtype(bool)
# At most this many blocks of a per-block input may read variables other than an
# earlier loop's values (the blocks next to the run's ends).
_EDGES = 8


def _join(*args, before, first, stride, count):
    """The per-block values: ``before`` variables, ``count`` entries of a loop's list from
    ``first`` by ``stride``, the variables after."""
    y = args[before]
    return [*args[:before], *[y[first + stride * i] for i in range(count)],
            *args[before + 1:]]


class _Prim:
    """A primitive of the rolled program only (never traced or differentiated): the
    code generator calls ``impl`` by name, as any primitive it does not know."""

    __slots__ = ("name", "impl", "spec")

    def __init__(self, name, impl):
        self.name, self.impl, self.spec = name, impl, None


class LoopSpec:
    """A rolled loop as :func:`_driver` runs it: ``body`` (the sub-program: carries,
    invariants, per-block inputs in; carries, per-block lists, last values out), ``n``
    blocks, the counts, ``xs`` (per per-block input: ``("const", Const(values), 0, 1)``,
    ``("list", ..., first, stride, before, after, count)`` or ``("pack", atoms, 0, 1)``)
    and ``last_carry`` (per value read after the last block: its carry's index or None)."""

    __slots__ = ("body", "n", "ncarry", "ninv", "xs", "nlists", "last_carry")

    def __init__(self, body, n, ncarry, ninv, xs, nlists, last_carry):
        self.body, self.n, self.ncarry, self.ninv = body, n, ncarry, ninv
        self.xs, self.nlists, self.last_carry = xs, nlists, last_carry


OUTPUT = _Prim("loop_output", operator.getitem)      # the i-th result of a loop
PACK = _Prim("loop_pack", lambda *values: values)     # per-block inputs as one sequence
_JOIN = JOIN = _Prim("loop_join", _join)


def _driver(body, n, ncarry, ninv, xs, nlists, last_carry):
    """The loop over the blocks, generated: calls ``body`` once per block. ``last_carry``:
    per value read after the last block, the carry holding it (an index) or None (the
    body returns it)."""
    nlasts = sum(j is None for j in last_carry)
    c = [f"c{j}" for j in range(ncarry)]
    iv = [f"i{j}" for j in range(ninv)]
    x = [f"x{j}" for j in range(len(xs))]
    ys = [f"y{j}" for j in range(nlists)]
    ts = [f"t{j}" for j in range(nlists)]
    ls = [f"l{j}" for j in range(len(last_carry))]
    lines = [f"def loop({', '.join(c + iv + x)}):"]
    for y in ys:
        lines.append(f"    {y} = []")
    for name, xsrc in zip(x, xs):   # each per-block input as a list of n entries
        off, stride = xsrc[0][2:4]
        if len(xsrc[0]) > 4 and (xsrc[0][4] or xsrc[0][5]):
            off, stride = 0, 1   # joined into a list of its own
        if off != 0 or stride != 1:
            lines.append(f"    {name} = {name}[{off}::{stride}][:{n}]")
    e = [f"e{j}" for j in range(len(xs))]
    if x:
        lines.append(f"    for ({', '.join(e)},) in zip({', '.join(x)}):")
    else:
        lines.append(f"    for _ in range({n}):")
    lines.append(f"        r = body({', '.join(c + iv + e)})")
    lines.append("        if r is RETRACE:")
    lines.append(f"            return (False,{' None,' * (nlists + len(last_carry))})")
    targets = c + ts + [l for j, l in zip(last_carry, ls) if j is None]
    if targets:
        lines.append(f"        ({', '.join(targets)},) = r")
    for y, t in zip(ys, ts):
        lines.append(f"        {y}.append({t})")
    finals = [c[j] if j is not None else l for j, l in zip(last_carry, ls)]
    lines.append(f"    return (True, {''.join(v + ', ' for v in ys + finals)})")
    ns = {"body": body, "RETRACE": RETRACE}
    exec(compile("\n".join(lines) + "\n", "<dualad.jit loop driver>", "exec"), ns)  # noqa: S102
    return ns["loop"]
