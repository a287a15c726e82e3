"""The whole-program mode of the Numba backend: a replay as ONE ``numba.njit`` function.

:func:`compile_whole` writes a recorded program in a dialect of Python Numba's nopython
mode types, and compiles it: one native call per replay, no Python between operations.

- Array constants are arguments (a Python wrapper passes them), never frozen into the
  compiled code; numbers are literals.
- A rolled loop (:mod:`dualad.jit.loops`) is a ``for`` over its blocks inside the
  function; its body is its own njit function (compiled once, called per block), the
  carries are locals, per-block constants one stacked array, per-block values kept for
  later (the forward steps the reverse sweep reads) a list.
- Elementwise groups are the fused kernels of :mod:`dualad.jit.numba_backend`; other
  elementwise operations are NumPy expressions Numba compiles (broadcasting as NumPy);
  reductions, the scatter-add of an advanced index and ``einsum`` are loops
  (:mod:`dualad.jit.numba_helpers`); every shape is the traced one, written out.
- 0-d values are scalars inside; the wrapper gives each output the type the program
  recorded (``np.float64``, a 0-d array, ...).

Only what it knows is written: float64 and bool arrays, float and bool scalars, the
primitives in :data:`SUPPORTED`, no guards. Anything else raises :class:`Unsupported`,
and :class:`dualad.jit.api.Compiled` falls back to the fused path. So does a program that
Numba fails to type or compile, or whose first replay does not agree with the traced
call's outputs (checked once, at the first call).

Numerics: IEEE (no fastmath). The last bits can differ from the NumPy backend where the
order of additions differs (a sum over leading or mixed axes of a non-contiguous
operand, ``einsum``, a matrix product NumPy sends to BLAS and Numba to its own loop) and
for ``exp``, ``log``, ``tanh``, ... (the C library's against NumPy's SIMD loops): a few
ulps at most.
"""
from __future__ import annotations

import math
import threading

import numpy as np

from .loopbuild import JOIN, OUTPUT, PACK
from .loops import roll
from .numba_backend import FusedPrim, fuse_program, require_numba
from .numba_helpers import ELEMENTWISE, FLAT, einsum_kernel, helpers
from .passes import known, simplify
from .names import safe_name
from .program import Guard
from .tighten import tighten

__all__ = ["Unsupported", "compile_whole", "SUPPORTED"]

_F64, _BOOL, _I64 = np.dtype(np.float64), np.dtype(np.bool_), np.dtype(np.int64)
_SCALARS = (float, np.float64, bool, np.bool_, np.int64)

_SHAPE = ("broadcast_to", "reshape", "transpose", "getitem", "untake", "concatenate")
SUPPORTED = frozenset(ELEMENTWISE) | {"sum", "max", "min", "matmul", "einsum", *_SHAPE}
_ARITY = {k: 3 if k == "where" else 2 if " b" in v else 1 for k, v in ELEMENTWISE.items()}
# Runs of at least this many items are rolled into loops (the NumPy backend: 256): Numba's
# compile time grows by milliseconds per line.
MIN_ROLLED = 24


class Unsupported(Exception):
    """The program has something the whole-program mode does not write (the reason)."""


_LOCK = threading.Lock()
_COMPILED = {}     # source -> njit dispatcher (the constants are arguments: shared)
_MAX_COMPILED = 256


def _literal(v):
    if v.__class__ in (bool, np.bool_):
        return repr(bool(v))
    if v.__class__ is int and abs(v) < 2 ** 53:
        return repr(v)
    if v.__class__ in (float, np.float64):
        f = float(v)
        if math.isnan(f):
            return "np.nan"
        if math.isinf(f):
            return "np.inf" if f > 0 else "(-np.inf)"
        return f"({f!r})" if math.copysign(1.0, f) < 0 else repr(f)
    return None


def _n(k):
    """An int for a compiled callee: ``np.int64(k)``, not the literal (Numba would compile
    the callee again for every literal value)."""
    return f"np.int64({k})"


def _dims(shape):
    return f"({''.join(_n(d) + ', ' for d in shape)})"


def _slice(i):
    """Source of a slice of ints (no step written when None: Numba keeps a 1-d slice of a
    C-contiguous array C-contiguous, one compiled signature less)."""
    a = "" if i.start is None else repr(i.start)
    b = "" if i.stop is None else repr(i.stop)
    return f"{a}:{b}" if i.step is None else f"{a}:{b}:{i.step!r}"


def _scalar_aval(aval):
    kind, shape, dtype = aval
    return kind in _SCALARS or kind is np.ndarray and tuple(shape) == ()


def _check_aval(v, aval):
    kind, shape, dtype = aval
    if kind in _SCALARS:
        return
    if kind is np.ndarray and dtype is not None and np.dtype(dtype) in (_F64, _BOOL, _I64):
        if 0 not in tuple(shape):
            return
    raise Unsupported(f"v{v} is {getattr(kind, '__name__', kind)} {dtype} {shape}")


class _Writer:
    """The source of every function of one program (loop bodies first), and the
    constants the functions take as arguments (``k0``, ``k1``, ...)."""

    def __init__(self, numba):
        self.numba = numba
        self.ns = {"np": np, **helpers(numba)}
        self.consts, self._const_ids = [], {}
        self.blocks = []           # function sources, callees first
        self.count = 0

    def const(self, value):
        j = self._const_ids.get(id(value))
        if j is None:
            j = self._const_ids[id(value)] = len(self.consts)
            self.consts.append(value)
        return f"k{j}"

    def bind(self, obj, hint):
        name = f"{hint}{self.count}"
        self.count += 1
        self.ns[name] = obj
        return name

    def function(self, prog, name):
        """Write ``prog`` as the njit function ``name``; returns the constants it takes."""
        prog, _ = simplify(prog)
        prog, _ = tighten(prog)
        if any(it.__class__ is Guard for it in prog.body):
            raise Unsupported("a guard (Python control flow on a traced value)")
        prog = fuse_program(prog)
        fn = _Function(self, prog)
        for v in prog.invars:
            _check_aval(v, prog.avals[v])
        lines = []
        for e in prog.body:
            fn.emit(e, lines)
        outs = [fn.atom(a) for a in prog.outvars]
        self.outvars = prog.outvars
        lines.append(f"    return ({', '.join(outs)}{',' if len(outs) == 1 else ''})")
        params = [f"v{v}" for v in prog.invars] + fn.const_names
        self.blocks.append("\n".join([f"def {name}({', '.join(params)}):"] + lines))
        return fn.const_names


class _Function:
    """The lines of one function (see :meth:`_Writer.function`)."""

    def __init__(self, writer, prog):
        self.w, self.prog, self.avals = writer, prog, prog.avals
        self.const_names = []

    def use_const(self, value):
        name = self.w.const(value)
        if name not in self.const_names:
            self.const_names.append(name)
        return name

    def atom(self, a):
        if a.__class__ is int:
            return f"v{a}"
        v = a.value
        lit = _literal(v)
        if lit is not None:
            return lit
        if isinstance(v, np.ndarray):
            if v.ndim == 0:
                lit = _literal(v.item())
                if lit is not None and v.dtype in (_F64, _BOOL):
                    return lit
            elif v.dtype in (_F64, _BOOL, _I64) and v.size:
                return self.use_const(v)
        raise Unsupported(f"a constant of type {type(v).__name__}")

    def scalar(self, a):
        if a.__class__ is int:
            return _scalar_aval(self.avals[a])
        return not isinstance(a.value, np.ndarray) or a.value.ndim == 0

    def dtype(self, a):
        if a.__class__ is int:
            kind, _, dtype = self.avals[a]
            return np.dtype(dtype) if dtype is not None else None
        return np.result_type(a.value)

    def shape(self, a):
        if a.__class__ is int:
            return tuple(self.avals[a][1]) if self.avals[a][0] is np.ndarray else ()
        return np.shape(a.value)

    def emit(self, e, lines):
        prim = e.prim
        out = f"v{e.out}"
        if prim.__class__ is FusedPrim:
            if prim.name == "unpack":
                lines.append(f"    {out} = {self.atom(e.ins[0])}[{e.ins[1].value}]")
                return
            kernel = self.w.bind(prim.impl, "fused")
            args = [_dims(e.ins[0].value)] + [self.atom(a) for a in e.ins[1:]]
            lines.append(f"    {out} = {kernel}({', '.join(args)})")
            return
        if prim is OUTPUT:
            lines.append(f"    {out} = {self.atom(e.ins[0])}[{e.ins[1].value}]")
            return
        if prim is PACK:
            self.stack(out, list(e.ins), lines)
            return
        if prim is JOIN:
            self.join(e, lines)
            return
        if prim.name == "loop" and getattr(prim, "spec", None) is not None:
            self.loop(e, lines)
            return
        _check_aval(e.out, self.avals[e.out])
        name = known(prim)
        if name not in SUPPORTED:
            raise Unsupported(f"primitive {prim.name!r}")
        args = [self.atom(a) for a in e.ins]
        rhs = getattr(self, "_" + name, None)
        if rhs is not None:
            rhs = rhs(e, args, lines)
        elif name in ELEMENTWISE and len(args) == _ARITY[name] and not e.params:
            rhs = self.elementwise(name, e, args)
        if rhs is None:
            raise Unsupported(f"{name} with parameters {sorted(e.params)}")
        lines.append(f"    {out} = {rhs}")

    def elementwise(self, name, e, args):
        """``ew_name(args)``; an int constant written as the float it is (x * 2 is x * 2.0 for
        float64 x, |int| < 2**53), an array first in ``+`` and ``*`` (commutative in IEEE
        arithmetic, bit for bit): fewer operand types, fewer compilations."""
        floats = [self.scalar(a) and a.__class__ is not int and a.value.__class__ is int
                  and not self.scalar(b) and self.avals[e.out][2] is not None and
                  np.dtype(self.avals[e.out][2]) == _F64 for a, b in zip(e.ins, e.ins[::-1])]
        args = [f"{float(e.ins[k].value)!r}" if floats[k] and len(args) == 2 else x
                for k, x in enumerate(args)]
        ins = list(e.ins)
        if name in ("add", "multiply") and self.scalar(ins[0]) and not self.scalar(ins[1]):
            args, ins = args[::-1], ins[::-1]
        flat = self.flat(name, e, ins)
        return f"{flat or 'ew_' + name}({', '.join(args)})"

    def flat(self, name, e, ins):
        """The flat-loop helper for ``name`` when every array operand has the output's
        shape and is float64 (a ``where``'s condition bool), the scalars floats."""
        kind, shape, dtype = self.avals[e.out]
        if kind is not np.ndarray or not shape or self.scalar(ins[0]):
            return None
        pat = ""
        for j, a in enumerate(ins):
            want = _BOOL if name == "where" and j == 0 else _F64
            if self.scalar(a):
                if a.__class__ is int:
                    if self.avals[a][0] not in (float, np.float64):
                        return None
                elif a.value.__class__ not in (float, int, np.float64) or want is _BOOL:
                    return None
                pat += "s"
            elif self.shape(a) == tuple(shape) and self.dtype(a) == want:
                pat += "a"
            else:
                return None
        return FLAT.get((name, pat))

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

    # -- primitives --------------------------------------------------------------------
    def _where(self, e, args, lines):
        if len(args) != 3 or e.params:
            return None
        if all(self.scalar(a) for a in e.ins):
            return f"{args[1]} if {args[0]} else {args[2]}"
        return f"ew_where({', '.join(args)})"

    def _broadcast_to(self, e, args, lines):
        return f"bcast({args[0]}, {tuple(e.params['shape'])!r})"

    def _reshape(self, e, args, lines):
        shape = tuple(e.params["shape"])
        if self.scalar(e.ins[0]):
            return args[0] if shape == () else f"np.full({shape!r}, {args[0]})"
        if shape == ():
            return f"np.ascontiguousarray({args[0]}).ravel()[0]"
        return f"np.ascontiguousarray({args[0]}).reshape({shape!r})"

    def _transpose(self, e, args, lines):
        if self.scalar(e.ins[0]):
            return args[0]
        return f"{args[0]}.transpose({tuple(e.params['axes'])!r})"

    def _concatenate(self, e, args, lines):
        if set(e.params) != {"axis"} or any(self.scalar(a) for a in e.ins):
            return None
        return f"np.concatenate(({', '.join(args)},), axis={int(e.params['axis'])})"

    def _getitem(self, e, args, lines):
        idx = e.params["idx"]
        if idx.__class__ is not tuple:
            idx = (idx,)
        parts = []
        for i in idx:
            if i.__class__ is int:
                parts.append(repr(i))
            elif i is None:
                parts.append("None")
            elif i.__class__ is slice and all(p is None or p.__class__ is int
                                               for p in (i.start, i.stop, i.step)):
                parts.append(_slice(i))
            elif isinstance(i, np.ndarray) and i.dtype.kind == "i" and i.ndim == 1 and \
                    sum(isinstance(j, np.ndarray) for j in idx) == 1:
                parts.append(self.use_const(i.astype(np.int64)))
            else:
                return None
        sub = f"{args[0]}[{', '.join(parts) or '()'}]"
        if _scalar_aval(self.avals[e.out]) and self.avals[e.out][0] is np.ndarray:
            return None     # a 0-d array view: not written
        return sub

    def _untake(self, e, args, lines):
        idx, shape = e.params["idx"], tuple(e.params["shape"])
        dtype = self.avals[e.out][2]
        if np.dtype(dtype) != _F64:
            return None
        if any(isinstance(i, np.ndarray) for i in idx):
            pos = np.arange(math.prod(shape)).reshape(shape)[idx].astype(np.int64)
            k = self.use_const(np.ascontiguousarray(pos))
            return f"scatter({args[0]}, {k}, {_n(math.prod(shape))}).reshape({shape!r})"
        if not all(i.__class__ is int or i is None or i.__class__ is slice and all(
                p is None or p.__class__ is int for p in (i.start, i.stop, i.step)) for i in idx):
            return None
        out = f"v{e.out}"
        zeros = np.zeros(shape, np.bool_)
        if self.shape(e.ins[0]) != zeros[idx].shape:
            return None     # (u broadcast into the place: not written)
        src = args[0]
        if any(i is None for i in idx):   # new unit axes: u's value without them
            idx = tuple(i for i in idx if i is not None)
            view = zeros[idx].shape
            src = f"np.ascontiguousarray({src}).reshape({view!r})" if view else \
                f"np.ascontiguousarray({src}).ravel()[0]"
        view = zeros[idx].shape
        sub = ", ".join(repr(i) if i.__class__ is int else _slice(i) for i in idx)
        lines.append(f"    {out} = np.zeros({shape!r}, np.float64)")
        if view == ():
            lines.append(f"    {out}[{sub}] = {src}")
        elif len(view) <= 3:
            # (a loop: Numba's slice assignment compiles its broadcasting, seconds)
            lines.append(f"    copy{len(view)}({out}[{sub}], {src})")
        else:
            return None
        return out

    def _reduce(self, e, args, op):
        if set(e.params) != {"axis", "keepdims"} or self.scalar(e.ins[0]):
            return None
        shape = self.shape(e.ins[0])
        r = len(shape)
        axis = e.params["axis"]
        axes = tuple(range(r)) if axis is None else tuple(
            sorted(a % r for a in ((axis,) if axis.__class__ is int else axis)))
        out_shape = tuple(self.avals[e.out][1]) if self.avals[e.out][0] is np.ndarray else ()
        x = args[0]
        if not axes:
            return f"{x}.copy()"
        if len(axes) == r:
            s = f"{op}_all({x})"
            return s if out_shape == () else f"np.full({out_shape!r}, {s})"
        k = math.prod(shape[a] for a in axes)
        m = math.prod(shape) // k
        if axes == tuple(range(r - len(axes), r)):
            s = f"{op}_rows({x}, {_n(m)}, {_n(k)})"
        elif axes == tuple(range(len(axes))):
            s = f"{op}_lead({x}, {_n(k)}, {_n(m)})"
        else:
            perm = tuple(a for a in range(r) if a not in axes) + axes
            s = f"{op}_rows({x}.transpose({perm!r}), {_n(m)}, {_n(k)})"
        return f"{s}.reshape({out_shape!r})"

    def _sum(self, e, args, lines):
        out = self.avals[e.out][2]
        if out is None or np.dtype(out) not in (_F64, _I64):
            return None
        if np.dtype(out) == _I64:   # a count: exact in any order
            return self._reduce(e, args, "isum")
        return self._reduce(e, args, "sum") if self.dtype(e.ins[0]) == _F64 else None

    def _max(self, e, args, lines):
        return self._reduce(e, args, "max")

    def _min(self, e, args, lines):
        return self._reduce(e, args, "min")

    def _matmul(self, e, args, lines):
        if e.params or not all(1 <= len(self.shape(a)) <= 2 for a in e.ins):
            return None
        if any(self.scalar(a) for a in e.ins):
            return None
        a, b = (f"np.ascontiguousarray({x})" for x in args)
        return f"{a} @ {b}"

    def _einsum(self, e, args, lines):
        subs, out = tuple(e.params["subs"]), e.params["out"]
        if any(self.scalar(a) for a in e.ins):
            return None
        shapes = tuple(self.shape(a) for a in e.ins)
        fn = einsum_kernel(self.w.numba, subs, out, shapes)
        return f"{self.w.bind(fn, 'einsum')}({', '.join(args)})"

    # -- rolled loops ------------------------------------------------------------------
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
                values = a.value
                stacked = np.asarray(values) if all(np.ndim(v) == 0 for v in values) else \
                    np.stack(values) if len({(np.shape(v), np.result_type(v)) for v in values}) \
                    == 1 else None
                if stacked is None or stacked.dtype not in (_F64, _BOOL):
                    raise Unsupported("per-block constants of several shapes or dtypes")
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
            shape, dtype = self.kind(a) if a.__class__ is not int else _Function.kind(
                _Function(self.w, body), a)
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


def _wrapper_source(prog, written, name, main, nconsts):
    """A Python function calling the compiled ``main`` with the constants, giving each
    output the type it was traced with (a constant array: a copy per call)."""
    params = ", ".join(f"v{v}" for v in prog.invars)
    consts = "".join(f", k{j}" for j in range(nconsts))
    lines = [f"def {name}({params}):", f"    r = {main}({params}{consts})"]
    outs = []
    for j, (a0, a) in enumerate(zip(prog.outvars, written)):
        kind = prog.avals[a0][0] if a0.__class__ is int else a0.value.__class__
        if a0.__class__ is int and kind is np.ndarray and tuple(prog.avals[a0][1]) == ():
            outs.append(f"np.array(r[{j}])")
            continue
        if kind is np.float64 or kind is np.bool_:
            outs.append(f"{kind.__name__ if kind is np.bool_ else 'np.float64'}(r[{j}])"
                        .replace("bool_(", "np.bool_("))
        elif kind is float or kind is bool:
            outs.append(f"{kind.__name__}(r[{j}])")
        elif a.__class__ is not int and isinstance(a.value, np.ndarray):
            outs.append(f"r[{j}].copy()")
        else:
            outs.append(f"r[{j}]")
    lines.append(f"    return ({', '.join(outs)}{',' if len(outs) == 1 else ''})")
    return "\n".join(lines) + "\n"


def compile_whole(program, name="replay"):
    """``(function, source)``: ``program`` as one njit function (rolled loops as loops)
    behind a Python wrapper of the same signature as the NumPy backend's replay.
    Raises :class:`Unsupported` for what it does not write (see the module docstring);
    Numba's typing and compilation happen at the first call."""
    numba = require_numba(name)
    name = safe_name(name, (), "replay")
    for v in program.invars:
        _check_aval(v, program.avals[v])
        if program.avals[v][0] is np.ndarray and program.avals[v][1] == ():
            raise Unsupported(f"v{v}: a 0-d array argument")
    w = _Writer(numba)
    bodies = []

    def no_compile(sub, name):      # roll's loop bodies are written by _Function.loop
        bodies.append(sub)
        return None, ""

    rolled, _ = roll(program, compile_body=no_compile, min_rolled=MIN_ROLLED)
    main = f"whole_{name}"
    nconsts_main = w.function(rolled, main)
    # the main function takes every constant in order k0, k1, ...: reorder its parameters
    block = w.blocks[-1]
    head, rest = block.split("\n", 1)
    params = [f"v{v}" for v in rolled.invars] + [f"k{j}" for j in range(len(w.consts))]
    w.blocks[-1] = f"def {main}({', '.join(params)}):\n{rest}"
    assert set(nconsts_main) <= {f"k{j}" for j in range(len(w.consts))}
    source = "\n\n".join(w.blocks) + "\n"
    # the source and the kernels its names stand for (each kernel cached by structure)
    key = (source, tuple(sorted((k, id(v)) for k, v in w.ns.items() if k != "np")))
    with _LOCK:
        compiled = _COMPILED.get(key)
    ns = w.ns
    if compiled is None:
        filename = f"<dualad.jit numba {name}>"
        exec(compile(source, filename, "exec"), ns)  # noqa: S102
        jit = numba.njit(fastmath=False, error_model="numpy", nogil=True)
        for fname in list(ns):      # every generated function njit-compiled (lazily)
            f = ns[fname]
            if getattr(f, "__code__", None) is not None and \
                    f.__code__.co_filename == filename:
                ns[fname] = jit(f)
        compiled = ns[main]
        with _LOCK:
            if len(_COMPILED) >= _MAX_COMPILED:
                _COMPILED.clear()
            compiled = _COMPILED.setdefault(key, compiled)
    wrap = {"np": np, main: compiled}
    wrap.update({f"k{j}": c for j, c in enumerate(w.consts)})
    while name in wrap or name in ("r", "float", "bool"):
        name += "_"
    wsource = _wrapper_source(program, w.outvars, name, main, len(w.consts))
    exec(compile(wsource, f"<dualad.jit numba wrapper {name}>", "exec"), wrap)  # noqa: S102
    return wrap[name], "# numba: the whole program, compiled with numba.njit\n" + \
        wsource + "\n" + source

