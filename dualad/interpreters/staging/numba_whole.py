"""The whole-program mode of the Numba backend: a replay as ONE ``numba.njit`` function.

:func:`compile_whole` first writes the program as one function of loops over flat
buffers (:mod:`dualad.interpreters.staging.numba_flat`, :mod:`dualad.interpreters.staging.numba_flatwrite`: one LLVM module
instead of one per helper, seconds of compilation instead of a minute); a program that
writer refuses is written as below, with the helpers.

:func:`compile_whole` writes a recorded program in a dialect of Python Numba's nopython
mode types, and compiles it: one native call per replay, no Python between operations.

- Array constants are arguments (a Python wrapper passes them), never frozen into the
  compiled code; numbers are literals.
- A rolled loop (:mod:`dualad.interpreters.staging.loops`) is a ``for`` over its blocks inside the
  function; its body is its own njit function (compiled once, called per block), the
  carries are locals, per-block constants one stacked array, per-block values kept for
  later (the forward steps the reverse sweep reads) a list.
- Elementwise groups are the fused kernels of :mod:`dualad.interpreters.staging.numba_backend`; other
  elementwise operations are NumPy expressions Numba compiles (broadcasting as NumPy);
  reductions, the scatter-add of an advanced index and ``einsum`` are loops
  (:mod:`dualad.interpreters.staging.numba_helpers`); every shape is the traced one, written out.
- 0-d values are scalars inside; the wrapper gives each output the type the program
  recorded (``np.float64``, a 0-d array, ...).

Only what it knows is written: float64 and bool arrays, float and bool scalars, the
primitives in :data:`SUPPORTED`, no guards. Anything else raises :class:`Unsupported`,
and :class:`dualad.interpreters.staging.api.Compiled` falls back to the fused path. So does a program that
Numba fails to type or compile, or whose first replay does not agree with the traced
call's outputs (checked once, at the first call).

Numerics: IEEE (no fastmath). The last bits can differ from the NumPy backend where the
order of additions differs (a sum over leading or mixed axes of a non-contiguous
operand, ``einsum``, a matrix product NumPy sends to BLAS and Numba to its own loop) and
for ``exp``, ``log``, ``tanh``, ... (the C library's against NumPy's SIMD loops): a few
ulps at most.
"""
from __future__ import annotations

import threading

import numpy as np

from .loopbuild import JOIN, OUTPUT, PACK
from .loops import roll
from .numba_backend import FusedPrim, fuse_program, require_numba
from .numba_helpers import ELEMENTWISE, FLAT, helpers
from .numba_base import (BOOL as _BOOL, F64 as _F64, I64 as _I64, Unsupported,
                         check_aval as _check_aval, dims as _dims, literal as _literal,
                         scalar_aval as _scalar_aval, MIN_ROLLED)
from .numba_loopwrite import LoopWriting
from .numba_flatwrite import compile_flat, wrapper_source
from .numba_prims import PrimitiveWriting
from .names import safe_name
from .passes import known, simplify
from .program import Guard
from .tighten import tighten

__all__ = ["Unsupported", "compile_whole", "SUPPORTED"]

_LOCK = threading.Lock()
_COMPILED = {}     # source -> njit dispatcher (the constants are arguments: shared)
_MAX_COMPILED = 256

_SHAPE = ("broadcast_to", "reshape", "transpose", "getitem", "untake", "concatenate")
SUPPORTED = frozenset(ELEMENTWISE) | {"sum", "max", "min", "matmul", "einsum", *_SHAPE}
_ARITY = {k: 3 if k == "where" else 2 if " b" in v else 1 for k, v in ELEMENTWISE.items()}
# Elementwise groups of at least this many operations are one kernel (as on the kernels
# path: each new kernel is a compilation; two operations fused gained nothing measurable).
MIN_FUSED = 3


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
        prog = fuse_program(prog, MIN_FUSED)
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


class _Function(PrimitiveWriting, LoopWriting):
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
    main = f"whole_{name}"
    declined = ""
    try:
        fn, src, consts, _ = compile_flat(program, name, numba, main)
    except Unsupported as exc:     # written below by the kernels' writer; say why
        fn, declined = None, f"# (the one-function writer declined: {exc})\n"
    if fn is not None:
        wrap = {"np": np, main: fn}
        wrap.update({f"k{j}": c for j, c in enumerate(consts)})
        while name in wrap or name in ("r", "float", "bool", "int"):
            name += "_"
        wsource = wrapper_source(program, None, name, main, len(consts))
        exec(compile(wsource, f"<dualad.jit numba wrapper {name}>", "exec"), wrap)  # noqa: S102
        return wrap[name], "# numba: the whole program, one function of loops (numba.njit)\n" + \
            wsource + "\n" + src
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
        declined + wsource + "\n" + source

