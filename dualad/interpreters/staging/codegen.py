"""Python source for a recorded :class:`~dualad.interpreters.staging.program.Program`, compiled once.

Each equation becomes one line that calls the primitive's NumPy implementation
directly (``v7 = v3 * v5``, ``v8 = np.sin(v7)``, ``v9 = impl_sum(v8, axis=0)``): no
tracing, no dispatch, no rule lookup. A guard becomes a test that returns
:data:`RETRACE` when it fails, so the caller traces again. ``source()`` is what
``jitted.source(*args)`` shows: for ``jit(grad(f))`` it is the adjoint program written
out, as source-transformation AD tools (Tapenade, Tangent) print it.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from .passes import known, simplify, typed_uses, uses
from .program import Eqn, Guard
from .names import comment, filename, is_plain_name, safe_name
from .arena import Arenas, layout
from .registers import free_dead, reuse_names
from .tighten import emit as emit_direct, tighten
from .buffers import FRESH, large, plan as plan_buffers, ufunc_source
from .selected import MASKED_ADD, emit as emit_masked_add, masked_adds
from .specialize import (COMPARISONS, FLOAT_ERRORS, SCALAR_FUNCS, SCALAR_OPS, Scalars, find_chains,
                         scalar_const)


class _Retrace:
    """The value a replay returns when a guard failed."""

    __slots__ = ("guard",)

    def __repr__(self):
        return "RETRACE"


RETRACE = _Retrace()

_WIDE = (np.dtype(np.float64), np.dtype(np.complex128))
_INFIX = {operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/",
          operator.pow: "**", operator.matmul: "@"}


def _literal(v):
    """Source for a constant that reads back exactly, or None."""
    kind = v.__class__
    if kind is bool or v is None:
        return repr(v)
    if kind is int:
        return repr(v) if -10 ** 18 < v < 10 ** 18 else None   # (huge: repr may refuse)
    if kind is float:
        if v != v or v in (float("inf"), float("-inf")):
            return None
        return repr(v)   # repr of a float reads back to the same float
    if kind is tuple and all(_literal(x) is not None for x in v):
        inner = ", ".join(_literal(x) for x in v)
        return f"({inner},)" if len(v) == 1 else f"({inner})"
    if kind is slice:
        parts = [_literal(p) for p in (v.start, v.stop, v.step)]
        if all(p is not None for p in parts):
            return f"slice({', '.join(parts)})"
    return None


class _Namespace:
    """The generated function's globals: implementations, constants, parameters.
    ``reserved``: names the source defines itself (the function's own name)."""

    def __init__(self, reserved=()):
        self.ns = {"np": np, "RETRACE": RETRACE}
        self._ids = {}
        self._reserved = frozenset(reserved)
        self._suffixes = {}     # safe_name's next suffix per base: linear in the constants

    def bind(self, obj, hint):
        key = id(obj)
        name = self._ids.get(key)
        if name is not None and self.ns[name] is obj:
            return name
        name = safe_name(hint, _Taken(self.ns, self._reserved), suffixes=self._suffixes)
        self.ns[name] = obj
        self._ids[key] = name
        return name


class _Taken:
    """``name in taken``: bound already or reserved."""

    __slots__ = ("ns", "reserved")

    def __init__(self, ns, reserved):
        self.ns, self.reserved = ns, reserved

    def __contains__(self, name):
        return name in self.ns or name in self.reserved


def _callee(prim, ns):
    impl = prim.impl
    if isinstance(impl, np.ufunc) and is_plain_name(impl.__name__) and \
            getattr(np, impl.__name__, None) is impl:
        return f"np.{impl.__name__}"
    return ns.bind(impl, prim.name)


def _index_source(idx, ns):
    """``idx`` (a tuple of ints and slices, or anything bound by name) as subscript
    source: ``3``, ``1:``, ``:-1, 2``."""
    if idx.__class__ is not tuple or not idx:
        return ns.bind(idx, "idx")
    parts = []
    for i in idx:
        if i.__class__ is int:
            parts.append(repr(i))
        elif i.__class__ is slice and all(p is None or p.__class__ is int
                                           for p in (i.start, i.stop, i.step)):
            a = "" if i.start is None else repr(i.start)
            b = "" if i.stop is None else repr(i.stop)
            parts.append(f"{a}:{b}" if i.step is None else f"{a}:{b}:{i.step!r}")
        else:
            return ns.bind(idx, "idx")
    return ", ".join(parts)


class _Emitter:
    """Source lines of one function, with the namespace they read."""

    def __init__(self, prog, ns):
        self.prog = prog
        self.ns = ns
        self.lines = []

    def const(self, a):
        lit = _literal(a.value)
        if lit is None:
            return self.ns.bind(a.value, "c")
        return f"({lit})" if lit.startswith("-") else lit

    def atom(self, a):
        return f"v{a}" if a.__class__ is int else self.const(a)

    def output(self, a, boxed):
        """An output atom: a constant array is returned as a new copy at every call (the
        program holds one array; a caller writing into a returned Jacobian must not change
        what later calls return), as ``f`` itself builds a new array each time."""
        if a.__class__ is not int and isinstance(a.value, np.ndarray):
            return f"{self.ns.bind(a.value, 'c')}.copy()"
        return boxed(a)

    def guard(self, g, k, indent):
        v = f"v{g.var}"
        if g.kind == "bool":
            test = f"not {v}" if g.expected else v
        elif g.kind == "int" and _literal(g.expected) is not None and \
                g.expected.__class__ is int:
            test = f"int({v}) != {_literal(g.expected)}"
        else:
            test = f"not {self.ns.bind(g, f'guard{k}')}.holds({v})"
        self.lines.append(f"{indent}if {test}:  # guard: {comment(g.describe())}")
        self.lines.append(f"{indent}    return RETRACE")

    def is_ndarray(self, a):
        kind = self.prog.avals[a][0] if a.__class__ is int else a.value.__class__
        return kind is np.ndarray

    def has_array_methods(self, a):
        """Whether atom ``a`` is an ndarray or a NumPy scalar (``np.float64``, as a
        reduction to 0-d gives it): both have NumPy's ``reshape``/``transpose`` methods,
        which ``np.reshape``/``np.transpose`` call."""
        kind = self.prog.avals[a][0] if a.__class__ is int else a.value.__class__
        return kind is np.ndarray or (isinstance(kind, type) and issubclass(kind, np.generic))

    def plain_matrix(self, a):
        """Whether atom ``a`` is a numeric ndarray of 1 or 2 dimensions (as traced)."""
        if a.__class__ is int:
            kind, shape, dtype = self.prog.avals[a]
        else:
            v = a.value
            kind, shape, dtype = v.__class__, getattr(v, "shape", None), getattr(v, "dtype", None)
        return kind is np.ndarray and shape is not None and 1 <= len(shape) <= 2 and \
            dtype is not None and not np.dtype(dtype).hasobject

    def wide_float(self, a):
        """Whether atom ``a`` is an ndarray of dtype float64 or complex128 (as traced): a
        Python float operand then gives the result a ``np.float64`` operand gives (NEP 50:
        the Python float is a weak scalar, the array's dtype wins either way)."""
        if a.__class__ is int:
            kind, _, dtype = self.prog.avals[a]
        else:
            kind, dtype = a.value.__class__, getattr(a.value, "dtype", None)
        return kind is np.ndarray and dtype in _WIDE

    def call(self, e, args, raw=None):
        """The right-hand side of a generic (NumPy) equation. ``raw``: the operands'
        source with Python floats left unwrapped, for an infix operation with a
        float64/complex128 array (see :meth:`wide_float`)."""
        impl = e.prim.impl
        op = _INFIX.get(impl)
        if op is not None and len(args) == 2 and not e.params:
            if raw is not None and op != "@":
                a, b = e.ins
                if self.wide_float(b):
                    args = [raw[0], args[1]]
                elif self.wide_float(a):
                    args = [args[0], raw[1]]
            return f"{args[0]} {op} {args[1]}"
        name = known(e.prim)
        if name == "getitem" and len(args) == 1 and list(e.params) == ["idx"]:
            # getitem's implementation is ``x[idx]``: the subscript written out
            return f"{args[0]}[{_index_source(e.params['idx'], self.ns)}]"
        if name == "concatenate" and list(e.params) == ["axis"] and \
                _literal(e.params["axis"]) is not None and args:
            # concatenate's implementation is np.concatenate of its arguments
            return f"np.concatenate(({', '.join(args)},), axis={_literal(e.params['axis'])})"
        if name == "reshape" and raw is not None and len(args) == 1 and \
                list(e.params) == ["shape"] and _literal(e.params["shape"]) is not None and \
                raw[0] != args[0]:
            # a float64 scalar (held as a Python float) reshaped: np.reshape of the
            # np.float64 is a float64 array of that shape, as np.array of the float is
            return f"np.array({raw[0]}).reshape({_literal(e.params['shape'])})"
        if len(args) == 2 and not e.params and name == "matmul" and \
                all(self.plain_matrix(a) for a in e.ins):
            # matmul's implementation differs from np.matmul only for stacks (ndim > 2)
            # and scaled batches: two plain vectors or matrices are np.matmul's ``@``
            return f"{args[0]} @ {args[1]}"
        if name == "where" and len(args) == 3 and not e.params:
            return f"np.where({', '.join(args)})"      # where's implementation is np.where
        if name in ("reshape", "transpose") and len(args) == 1 and len(e.params) == 1 and \
                self.has_array_methods(e.ins[0]):
            # their implementations call the ndarray method on an ndarray, and np.reshape /
            # np.transpose, which call the same method, on a NumPy scalar: called directly
            (value,) = e.params.values()
            lit = _literal(value)
            return f"{args[0]}.{name}({lit if lit is not None else self.ns.bind(value, name)})"
        if impl is operator.neg and len(args) == 1 and not e.params:
            return f"-{args[0]}"
        kw = []
        other = {}
        for key, val in e.params.items():
            if not is_plain_name(key):
                other[key] = val   # any other key: passed in a dict, never written out
                continue
            lit = _literal(val)
            kw.append(f"{key}={lit if lit is not None else self.ns.bind(val, key)}")
        if other:
            kw.append(f"**{self.ns.bind(other, 'kw')}")
        return f"{_callee(e.prim, self.ns)}({', '.join(args + kw)})"


def generate_plain(prog, name="replay"):
    """``(source, namespace)``: one line per equation calling the primitive's NumPy
    implementation, no rewriting (the program as recorded; also the fallback of the
    specialized function, see :func:`generate`)."""
    ns = _Namespace(reserved=(name,))
    em = _Emitter(prog, ns)
    em.lines.append(f"def {name}({', '.join(f'v{v}' for v in prog.invars)}):")
    for k, e in enumerate(prog.body):
        if e.__class__ is Guard:
            em.guard(e, k, "    ")
            continue
        em.lines.append(f"    v{e.out} = {em.call(e, [em.atom(a) for a in e.ins])}")
    outs = [em.output(a, em.atom) for a in prog.outvars]
    em.lines.append(f"    return ({', '.join(outs)}{',' if len(outs) == 1 else ''})")
    return _finish(em.lines, prog), ns.ns


# Arrays of at least this many bytes are deleted after their last use (free_dead), and
# written into the program's block of memory where they can be (Sites).
BIG = 1 << 16


def _finish(lines, prog, sites=None):
    source = "\n".join(lines) + "\n"
    inputs = [f"v{v}" for v in prog.invars]
    renamed = reuse_names(source, inputs)
    if renamed is not source:
        if sites is not None:
            sites.place(None, ())
        return renamed
    outs = {f"v{a}" for a in prog.outvars if a.__class__ is int}
    if sites is not None:
        sites.place(source.split("\n"), set(inputs) | outs)
    big = {f"v{v}" for v, (kind, shape, dtype) in prog.avals.items()
           if kind is np.ndarray and large(shape, dtype, BIG)} - set(inputs) - outs
    return free_dead(source, big)


class Sites:
    """The large results of one generated function written into one block of memory
    (:mod:`dualad.interpreters.staging.arena`): ``slots[i]`` in its source."""

    def __init__(self, ns, avals, into):
        self.ns, self.avals, self.into = ns, avals, into
        self.slots = []        # (shape, dtype) of each slot
        self.fresh = set()     # variables emitted as a new array (a ufunc's, a copy)
        self.arenas = None

    def take(self, shape, dtype):
        """Source of the array a large result of ``shape`` and ``dtype`` is written into
        (``slots[i]``, None at run time when it has no place: a new array); None when
        the result is not large."""
        if not large(shape, dtype, BIG) or np.dtype(dtype).hasobject:
            return None
        self.slots.append((tuple(shape), np.dtype(dtype)))
        return f"slots[{len(self.slots) - 1}]"

    def zeros(self, shape, dtype):
        """Source of an array of zeros for a large result (its slot filled), else None."""
        slot = self.take(shape, dtype)
        if slot is None:
            return None
        fill = self.ns.bind(_zeros, "zeros")
        return f"{fill}({slot}, {_literal(tuple(shape))}, {self.ns.bind(np.dtype(dtype), 'dtype')})"

    def result(self, v):
        """:meth:`take` for program variable ``v``, when it is an ndarray."""
        kind, shape, dtype = self.avals[v]
        return self.take(shape, dtype) if kind is np.ndarray else None

    def place(self, lines, pinned):
        """Lay the slots out in one block; a slot reaching an input or an output gets an
        array of its own, recycled between calls (none of either when ``lines`` is None)."""
        if not self.slots:
            return
        sizes = [math.prod(shape) * dtype.itemsize for shape, dtype in self.slots]
        if lines is None:
            offsets, total, recycled = [None] * len(sizes), 0, ()
        else:
            into = {f"v{k}": f"v{a}" for k, a in self.into.items()}
            offsets, total = layout(lines, sizes, pinned, self.fresh, into)
            recycled = [i for i, at in enumerate(offsets) if at is None]
        self.arenas = Arenas(self.slots, offsets, total, recycled=recycled)


def _zeros(slot, shape, dtype):
    """``slot`` filled with zeros, or a new array of zeros when it is None."""
    if slot is None:
        return np.zeros(shape, dtype)
    slot.fill(0)
    return slot


class _Lazy:
    """The unspecialized program, compiled the first time it is needed (a replay whose
    Python float arithmetic raised: see :mod:`dualad.interpreters.staging.specialize`)."""

    def __init__(self, prog, name):
        self.prog, self.name, self.fn = prog, name, None

    def __call__(self, *inputs):
        if self.fn is None:
            source, ns = generate_plain(self.prog, self.name)
            exec(compile(source, filename(self.prog, " unspecialized"), "exec"), ns)
            self.fn = ns[self.name]
        return self.fn(*inputs)


def generate(prog, name="replay"):
    """``(source, namespace)`` of a function ``name(*inputs)`` returning the tuple of
    output leaves, or RETRACE when a guard fails.

    The program is first rewritten (:mod:`dualad.interpreters.staging.passes`: exact algebraic identities,
    common subexpressions); float64 scalars are computed as Python floats and scatter-adds
    accumulated in one buffer (:mod:`dualad.interpreters.staging.specialize`). Comments in the source say
    where an equation was rewritten or dropped."""
    scal = Scalars(prog)
    typed = typed_uses(prog, scal.eqns)
    opt, notes = simplify(prog, scal.pyfloat, typed)
    opt, more = tighten(opt, scal.pyfloat)
    notes.update(more)
    opt = masked_adds(opt, notes)
    chains, elided = find_chains(opt, uses(opt), scal.pyfloat)
    into = plan_buffers(opt, chains, elided, scal.pyfloat, BIG)
    pyfloat = scal.pyfloat
    reads = {}
    for e in opt.body:
        if e.__class__ is Eqn and e.out in scal.index:
            reads[e.ins[0]] = reads.get(e.ins[0], 0) + 1
    ns = _Namespace(reserved=(name, name + "_unspecialized", "slots"))
    ns.ns.update(SCALAR_FUNCS)   # sin = math.sin, ...: the templates' names
    em = _Emitter(opt, ns)
    avals = prog.avals
    sites = Sites(ns, opt.avals, into)
    specialized = bool(scal.eqns & {e.out for e in opt.body if e.__class__ is Eqn})
    ind = "        " if specialized else "    "
    params = ", ".join(f"v{v}" for v in prog.invars)
    em.lines.append(f"def {name}({params}):")
    if specialized:
        em.lines.append("    try:")
    for v in scal.convert:
        em.lines.append(f"{ind}v{v} = float(v{v})  # np.float64 -> float: Python float arithmetic")

    def boxed(a):
        """An atom as NumPy code receives it: with the type its value had when traced."""
        if a.__class__ is int and a in pyfloat and avals[a][0] is np.float64:
            return f"np.float64(v{a})"
        return em.atom(a)

    def scalar_arg(a):
        if a.__class__ is int:
            return f"v{a}"
        f = scalar_const(a.value)
        lit = _literal(f)
        if lit is None:
            return ns.bind(f, "c")
        return f"({lit})" if lit.startswith("-") else lit

    listed = set()
    eqn_of = {e.out: e for e in opt.body if e.__class__ is Eqn}
    guards = iter(k for k, g in enumerate(opt.body) if g.__class__ is Guard)
    for orig in prog.body:
        if orig.__class__ is Guard:
            k = next(guards)
            em.guard(opt.body[k], k, ind)
            continue
        out = orig.out
        e = eqn_of.get(out)
        if e is None:
            if out in notes:
                em.lines.append(f"{ind}# {comment(notes[out])}")
            continue
        note = f"  # {comment(notes[out])}" if out in notes else ""
        if out in elided:
            continue   # written into its chain's buffer at the addition
        ch = chains.get(out)
        if ch is not None:
            _emit_chain(em, ch, out, ind, boxed, scalar_arg, sites)
            continue
        if out in scal.eqns:
            if e.prim.name == "getitem":
                x = e.ins[0]
                at = scal.index[out]
                if reads.get(x, 0) >= 2:
                    if x not in listed:
                        listed.add(x)
                        em.lines.append(f"{ind}v{x}_l = v{x}.tolist()  # its elements as "
                                        f"Python floats, read {reads[x]} times below")
                    rhs = f"v{x}_l" + "".join(f"[{i}]" for i in at)
                else:
                    rhs = f"v{x}.item({', '.join(map(repr, at))})"
            elif out in scal.compares:
                x, y = (scalar_arg(a) for a in e.ins)
                rhs = f"{x} {COMPARISONS[e.prim.name]} {y}"
            else:
                rhs = SCALAR_OPS[e.prim.name][1].format(*[scalar_arg(a) for a in e.ins])
            em.lines.append(f"{ind}v{out} = {rhs}{note}")
            continue
        if e.prim is MASKED_ADD:
            if out not in into:
                sites.fresh.add(f"v{out}")     # a copy of its first operand
            lines = emit_masked_add(e, [boxed(a) for a in e.ins], ind, out, into.get(out))
            em.lines.extend([lines[0] + (note or "")] + lines[1:])
            continue
        direct = emit_direct(em, e, [boxed(a) for a in e.ins], ind, out, _index_source, sites)
        if direct is not None:
            em.lines.extend([direct[0] + note] + direct[1:])
            continue
        if out in into:   # the operand's array dies here: the result is written into it
            args = ", ".join([boxed(a) for a in e.ins])
            em.lines.append(f"{ind}v{out} = {ufunc_source(e.prim)}({args}, out=v{into[out]})"
                            f"{note or '  # into a dead array (dualad.interpreters.staging.buffers)'}")
            continue
        rhs = _pooled(em, e, boxed, sites)
        if rhs is None:
            rhs = em.call(e, [boxed(a) for a in e.ins], [em.atom(a) for a in e.ins])
            if known(e.prim) in FRESH or (ufunc_source(e.prim) is not None and not e.params):
                sites.fresh.add(f"v{out}")     # a ufunc's (or untake's) result: a new array
        em.lines.append(f"{ind}v{out} = {rhs}{note}")
    outs = [em.output(a, boxed) for a in opt.outvars]
    em.lines.append(f"{ind}return ({', '.join(outs)}{',' if len(outs) == 1 else ''})")
    if specialized:
        fallback = ns.bind(_Lazy(prog, name + "_unspecialized"), "unspecialized")
        args = ", ".join(f"np.float64(v{v})" if v in scal.convert else f"v{v}"
                         for v in prog.invars)
        em.lines.append("    except FLOAT_ERRORS:  # Python float arithmetic raised where "
                        "NumPy gives inf/nan and warns:")
        em.lines.append(f"        return {fallback}({args})  # the program as recorded")
        ns.ns["FLOAT_ERRORS"] = FLOAT_ERRORS
    source = _finish(em.lines, prog, sites)
    if sites.arenas is not None:     # the block's views come in as the last parameter
        head, rest = source.split("\n", 1)
        source = f"{head[:-2]}{', ' if prog.invars else ''}slots):\n{rest}"
        ns.ns[ARENAS] = sites.arenas
    return source, ns.ns


# The namespace key of a generated function's Arenas (compile_program wraps it).
ARENAS = "__arenas__"


def _fancy_rows(x, idx, avals):
    """The constant integer array of ``x[idx]`` when ``idx`` picks rows of an ndarray
    ``x`` by one integer array (``x[i]``, ``x[(i,)]``), else None."""
    if idx.__class__ is tuple and len(idx) == 1:
        idx = idx[0]
    if idx.__class__ is not np.ndarray or idx.dtype.kind not in "iu" or \
            x.__class__ is not int or avals[x][0] is not np.ndarray or not avals[x][1]:
        return None
    return idx


def _pooled(em, e, boxed, sites):
    """The right-hand side of a generic equation whose large result is written into its
    slot of the program's block of memory (:class:`Sites`), or None.

    - an elementwise ufunc: ``np.multiply(v7, v8, out=slots[3])``;
    - rows picked by a constant integer array: ``np.take(v3, idx, axis=0, mode="wrap",
      out=slots[3])``, which is ``v3[idx]`` for indices in ``[-n, n)`` (the trace
      indexed the same shape with them; ``"wrap"`` maps ``-1`` to ``n - 1`` as indexing
      does, and unlike ``"raise"`` writes into ``out`` without a buffer; the index is
      kept as ``intp``, which ``np.take`` would otherwise make a copy in at every call);
    - ``np.concatenate`` with ``out=``."""
    name = known(e.prim)
    args = [boxed(a) for a in e.ins]
    ufunc = ufunc_source(e.prim)
    if ufunc is not None and not e.params:
        into = sites.result(e.out)
        return None if into is None else f"{ufunc}({', '.join(args)}, out={into})"
    if name == "getitem" and list(e.params) == ["idx"]:
        rows = _fancy_rows(e.ins[0], e.params["idx"], em.prog.avals)
        into = None if rows is None else sites.result(e.out)
        if into is not None and rows.dtype != np.intp:
            rows = rows.astype(np.intp)    # np.take casts other indices at every call
        return None if into is None else \
            f"np.take({args[0]}, {em.ns.bind(rows, 'idx')}, axis=0, mode=\"wrap\", out={into})"
    if name == "concatenate":
        rhs = em.call(e, args)
        if rhs.startswith("np.concatenate(") and rhs.endswith(")"):
            into = sites.result(e.out)
            return None if into is None else f"{rhs[:-1]}, out={into})"
    return None


def _emit_chain(em, ch, out, ind, boxed, scalar_arg, sites):
    """The lines of one addition of a scatter chain (see specialize.Chain)."""
    root = f"v{ch.root}"
    lines = em.lines
    step = ch.step[out]
    kind, shape, dtype = em.prog.avals[ch.root]
    buf = f"{root}_l" if ch.mode == "list" else root
    new = ch.leaves[:2] if step == 0 else [ch.leaves[step + 1]]
    if step == 0:
        first = new[0]
        if ch.mode == "list":
            lines.append(f"{ind}{buf} = [0.0] * {shape[0]}  # scatter-add: the untakes added "
                         f"up into {root}, one list")
        elif first[0] == "untake":
            zeros = sites.zeros(shape, dtype) or \
                f"np.zeros({shape!r}, {em.ns.bind(dtype, 'dtype')})"
            lines.append(f"{ind}{buf} = {zeros}  # scatter-add: the untakes added up "
                         f"into {root}, one buffer")
        elif first[0] == "fresh":
            lines.append(f"{ind}{buf} = v{first[1]}  # scatter-add into this new array")
            new = new[1:]
        else:
            lines.append(f"{ind}{buf} = v{first[1]}.copy()  # scatter-add into a copy")
            new = new[1:]
    for kind_, leaf in new:
        if kind_ == "untake":
            u = leaf.ins[0]
            idx = leaf.params["idx"]
            val = scalar_arg(u) if ch.mode == "list" else boxed(u)
            sub = f"[{idx[0]}]" if ch.mode == "list" else f"[{_index_source(idx, em.ns)}]"
            lines.append(f"{ind}{buf}{sub} += {val}  # " +
                         comment(f"v{leaf.out} = untake(v{u}, idx={idx!r})"))
        else:
            lines.append(f"{ind}{buf} += v{leaf}")
    if out == ch.root and ch.mode == "list":
        lines.append(f"{ind}{root} = np.array({buf})")


def compile_program(prog, name="replay", optimize=True):
    """``(function, source)`` for ``prog`` (see :func:`generate`; ``optimize=False``:
    :func:`generate_plain`). ``name``: the function's name, made an ASCII identifier
    here (see :func:`safe_name`)."""
    name = safe_name(name, (), "replay")
    gen = generate if optimize else generate_plain
    source, ns = gen(prog, name)
    while name in ns:   # an implementation or math function bound under f's own name
        name += "_"     # (jit(np.cos), a user's ``def sum``): exec would shadow it
        source, ns = gen(prog, name)
    code = compile(source, filename(prog), "exec")
    exec(code, ns)   # noqa: S102 - our own generated source, from a recorded program
    arenas = ns.get(ARENAS)
    return (ns[name] if arenas is None else arenas.wrap(ns[name])), source


__all__ = ["RETRACE", "compile_program", "generate", "generate_plain"]
