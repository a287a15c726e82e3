""":func:`compile_flat`: a recorded program as ONE ``numba.njit`` function of loops over
flat buffers (see :mod:`dualad.interpreters.staging.numba_flat`), behind a Python wrapper that ravels
the array arguments and reshapes the outputs."""
from __future__ import annotations

import math
import re
import threading

import numpy as np

from .loopbuild import JOIN, OUTPUT, PACK
from .loops import roll
from .numba_base import MIN_ROLLED, Unsupported, check_aval
from .numba_bounds import int_ranges, prove_in_bounds
from .numba_flat import DTYPE_SRC, EXPR, FlatWriting, View
from .numba_flatloop import FlatLoops
from .numba_flatplace import FlatPlaces
from .numba_flatprims import FlatPrimitives
from .numba_helpers import helpers
from .passes import known, simplify
from .program import Guard
from .tighten import tighten

__all__ = ["compile_flat", "stats"]

_LOCK = threading.Lock()
_COMPILED = {}       # source -> njit dispatcher (constants are arguments: shared)
_MAX_COMPILED = 256
_STATS = {"dispatchers": 0}
# Elementwise groups of at least this many operations are one loop (each operation
# alone is one loop too: fusing saves passes over memory and temporaries).
MIN_FUSED = 2
# Tests set this (every index checked: a wrong view is an IndexError, not a wrong read).
BOUNDSCHECK = False
# A program longer than this many lines is written as several njit functions called in
# turn (Numba's compile time grows faster than linearly with one function's length).
PART_LINES = 400
# An arena or output larger than this many entries is allocated by NumPy in a Python
# function calling the compiled one (Numba's allocator pages large blocks in afresh at
# every call, NumPy's gets huge pages: a pass over memory less).
BIG = 1 << 16
_SHAPE = ("broadcast_to", "reshape", "transpose", "getitem", "untake", "concatenate",
          "matmul", "einsum")


_ARENA = {np.dtype(np.float64): "wf", np.dtype(np.bool_): "wb", np.dtype(np.int64): "wi"}


def stats():
    """``{"dispatchers": njit functions this module created in the process}``."""
    return dict(_STATS)


class _Writer:
    """Constants (``k0``, ``k1``, ...: flat arrays, the function's trailing arguments) and
    fresh names."""

    def __init__(self):
        self.consts, self._ids, self.count = [], {}, 0
        self.arena = {}         # dtype -> entries of its arena so far
        self.outputs = set()    # the program's output variables
        self.outbuf = {}        # output variable -> (its own array, size, dtype)

    def slot(self, n, dtype):
        """``(arena variable, offset)`` of ``n`` new entries of ``dtype``."""
        dtype = np.dtype(dtype)
        off = self.arena.get(dtype, 0)
        self.arena[dtype] = off + n
        return _ARENA[dtype], off

    def const(self, value):
        j = self._ids.get(id(value))
        if j is None:
            j = self._ids[id(value)] = len(self.consts)
            self.consts.append((value, np.ascontiguousarray(value).ravel()))
        return f"k{j}"

    def name(self, tag):
        self.count += 1
        return f"{tag}_{self.count}"


class _Emitter(FlatPlaces, FlatWriting, FlatPrimitives, FlatLoops):

    def __init__(self, w, prog, lines, ind="    "):
        self.w, self.avals, self.lines, self.ind = w, prog.avals, lines, ind
        self.val, self._opened, self.depth = {}, [], 0
        self.dest, self.pre, self.zeroed = {}, {}, set()
        self.solo, self.pending, self.groups_at, self.quiet = {}, None, {}, False

    def child(self, prog):
        got = _Emitter(self.w, prog, self.lines, self.ind)
        got.depth = self.depth + 1
        return got

    def prepare(self, prog):
        prog, _ = simplify(prog)
        prog, _ = tighten(prog)
        if any(it.__class__ is Guard for it in prog.body):
            raise Unsupported("a guard (Python control flow on a traced value)")
        return prog

    def body(self, prog, parts=None):
        """Write ``prog``'s equations; with ``parts`` (a list of line indices, ``[0]``) the
        top level is cut into parts of about :data:`PART_LINES` lines, each boundary's
        live numbers stored in the arena (:meth:`_spill`)."""
        self.avals = prog.avals
        fused, drop = self.fused_groups(prog, MIN_FUSED)
        self.plan_places(prog)
        last = _last_uses(prog, fused) if parts is not None else None
        self.groups_at = fused
        for i, e in enumerate(prog.body):
            if id(e) in drop:
                continue
            self.flush(e)
            got = fused.get(id(e))
            if got is not None:
                self.elementwise(*got)
            else:
                self.equation(e)
            if parts is not None and len(self.lines) - parts[-1] > PART_LINES and \
                    not any(isinstance(x, tuple) for v, x in self.val.items()
                            if last.get(v, -1) > i):
                self.flush()
                self._spill(i, last)
                parts.append(len(self.lines))
        self.flush()

    def _members_of(self, item):
        """The equations written as one elementwise loop at ``item``, or None."""
        got = self.groups_at.get(id(item))
        if got is not None:
            return got[0]
        return [item] if _one_loop(item) else None

    def _spill(self, i, last):
        """Store the numbers held in locals and read after item ``i`` in the arena (the
        next part reads them there)."""
        for v, x in list(self.val.items()):
            if x.__class__ is str and _IDENT.fullmatch(x) and x not in _KEEP and \
                    not x.startswith("v") and last.get(v, -1) > i:
                buf, off = self.w.slot(1, self.out_dtype(v))
                self.emit(f"{buf}[{off}] = {x}")
                self.val[v] = f"{buf}[{off}]"

    def equation(self, e):
        prim = e.prim
        if prim is OUTPUT:
            self.val[e.out] = self._output(e)
            return
        if prim is PACK:
            self.val[e.out] = self._stack(e)
            return
        if prim is JOIN:
            self.val[e.out] = self._join(e)
            return
        if prim.name == "loop" and getattr(prim, "spec", None) is not None:
            self.val[e.out] = self._loop(e)
            return
        check_aval(e.out, self.avals[e.out])
        name = known(prim)
        got = None
        if _one_loop(e):
            self.elementwise([e], [e.out], self.out_shape(e.out))
            return
        if name in ("sum", "max", "min"):
            op = name
            if name == "sum" and self.out_dtype(e.out) != np.dtype(np.float64):
                op = "isum"
            got = self.reduce(e, op)
        elif name in _SHAPE:
            got = getattr(self, "_" + name)(e)
        else:
            raise Unsupported(f"primitive {prim.name!r}")
        if got is None:
            raise Unsupported(f"{name} with parameters {sorted(e.params)}")
        if isinstance(got, View) and got.shape == ():
            got = got.at([])
        self.val[e.out] = got


def _last_uses(prog, fused):
    """``{variable: index of the last item reading it}`` (a fused group's members read
    where the group is written: at its last member)."""
    at = {id(e): k for k, e in enumerate(prog.body)}
    pos = {}
    for members, _, _ in fused.values():
        p = at[id(members[-1])]
        for m in members:
            pos[id(m)] = p
    last = {}
    for k, e in enumerate(prog.body):
        p = pos.get(id(e), k)
        for a in e.ins:
            if a.__class__ is int:
                last[a] = max(last.get(a, -1), p)
    for a in prog.outvars:
        if a.__class__ is int:
            last[a] = len(prog.body)
    return last


_IDENT = re.compile(r"[A-Za-z_]\w*")
_KEEP = ("True", "False", "None")


EXPR_ARITY = {k: 3 if k == "where" else 2 if "{1}" in v else 1 for k, v in EXPR.items()}


def _one_loop(e):
    """Whether equation ``e`` alone is written as one elementwise loop."""
    name = known(e.prim)
    return name in EXPR and not e.params and len(e.ins) == EXPR_ARITY[name]
SUPPORTED = frozenset(EXPR) | {"sum", "max", "min", *_SHAPE}


def compile_flat(program, name, numba, main):
    """``(njit function, its source, consts, outputs)`` for ``program`` (rolled with
    ``min_rolled``), where ``main`` is the function's name."""
    for v in program.invars:
        check_aval(v, program.avals[v])
        if program.avals[v][0] is np.ndarray and tuple(program.avals[v][1]) == ():
            raise Unsupported(f"v{v}: a 0-d array argument")

    def no_compile(sub, name):
        return None, ""

    rolled, _ = roll(program, compile_body=no_compile, min_rolled=MIN_ROLLED)
    w = _Writer()
    lines = []
    em = _Emitter(w, rolled, lines)
    prog = em.prepare(rolled)
    em.avals = prog.avals
    params = []
    for v in prog.invars:
        kind, shape, dtype = prog.avals[v]
        params.append(f"v{v}")
        em.val[v] = View(f"v{v}", tuple(shape), np.dtype(dtype)) \
            if kind is np.ndarray else f"v{v}"
    parts = [0]
    w.outputs = {a for a in prog.outvars if a.__class__ is int}
    em.body(prog, parts)
    outs = []
    direct = {b[0] for b in w.outbuf.values()}
    for a in prog.outvars:
        x = em.value(a)
        if isinstance(x, tuple):
            raise Unsupported("a loop's tuple as an output")
        if isinstance(x, View) and x.buf in direct and x.off == 0 and x.contiguous() \
                and 0 not in x.strides:
            direct.discard(x.buf)   # (written in place; a second output of it: a copy)
            outs.append(x.buf)
        elif isinstance(x, View):     # copied out of the arena into an array of its own
            o = w.name("out")
            em.emit(f"{o} = np.empty({max(1, math.prod(x.shape))}, {DTYPE_SRC[x.dtype]})")
            em.copy_into(View(o, x.shape, x.dtype), x)
            outs.append(o)
        else:
            outs.append(x)
    consts = [f"k{j}" for j in range(len(w.consts))]
    lines.append(f"    return ({', '.join(outs)}{',' if len(outs) == 1 else ''})")
    arenas = [f"    {_ARENA[dt]} = np.empty({w.arena.get(dt, 0) or 1}, {DTYPE_SRC[dt]})"
              for dt in _ARENA]
    arenas += [f"    {b} = np.empty({n}, {DTYPE_SRC[dt]})" for b, n, dt in w.outbuf.values()]
    places = ", ".join(list(_ARENA.values()) + [b[0] for b in w.outbuf.values()])
    args = ", ".join(params + consts)
    big = max([n for n in w.arena.values()] + [b[1] for b in w.outbuf.values()] + [0])
    if len(parts) == 1 and big <= BIG:
        names = [main]
        src = f"def {main}({args}):\n" + "\n".join(arenas + lines) + "\n"
    else:       # parts, each compiled alone, called in turn by a Python function which
        # allocates the arena (NumPy's allocator: large blocks on huge pages)
        names = [f"{main}_part{j}" for j in range(len(parts))]
        bounds = parts + [len(lines)]
        blocks = [f"def {n}({args}, {places}):\n" +
                  "\n".join(lines[bounds[j]:bounds[j + 1]]) + "\n" for j, n in enumerate(names)]
        calls = [f"    {'return ' if j == len(names) - 1 else ''}{n}({args}, {places})"
                 for j, n in enumerate(names)]
        src = "\n".join(blocks) + f"\ndef {main}({args}):\n" + "\n".join(arenas + calls) + "\n"
    sizes = {f"v{v}": math.prod(prog.avals[v][1]) for v in prog.invars
             if prog.avals[v][0] is np.ndarray}
    sizes.update({f"k{j}": c[1].size for j, c in enumerate(w.consts)})
    sizes.update({_ARENA[dt]: w.arena.get(dt, 0) or 1 for dt in _ARENA})
    sizes.update({b: n for b, n, _ in w.outbuf.values()})
    prove_in_bounds(src, sizes, int_ranges([c[1] for c in w.consts]))
    key = (src, BOUNDSCHECK)
    with _LOCK:
        fn = _COMPILED.get(key)
    if fn is None:
        ns = {"np": np, "_pw": helpers(numba)["_pw"]}
        exec(compile(src, f"<dualad.jit numba {name}>", "exec"), ns)  # noqa: S102
        for n in names:
            ns[n] = numba.njit(fastmath=False, error_model="numpy", nogil=True,
                               boundscheck=BOUNDSCHECK)(ns[n])
            _STATS["dispatchers"] += 1
        fn = ns[main]
        with _LOCK:
            if len(_COMPILED) >= _MAX_COMPILED:
                _COMPILED.clear()
            fn = _COMPILED.setdefault(key, fn)
    return fn, src, [c[1] for c in w.consts], prog


def wrapper_source(program, prog, name, main, nconsts):
    """A Python function calling ``main`` with the arguments raveled and the constants,
    giving each output the shape and type it was traced with."""
    params = ", ".join(f"v{v}" for v in program.invars)
    args = ", ".join(f"np.ravel(v{v})" if program.avals[v][0] is np.ndarray else f"v{v}"
                     for v in program.invars)
    consts = "".join(f", k{j}" for j in range(nconsts))
    lines = [f"def {name}({params}):", f"    r = {main}({args}{consts})"]
    outs = []
    for j, a0 in enumerate(program.outvars):
        if a0.__class__ is int:
            kind, shape, _ = program.avals[a0]
        else:
            kind, shape = a0.value.__class__, np.shape(a0.value)
        if kind is np.ndarray:
            shape = tuple(shape)
            outs.append(f"np.array(r[{j}])" if shape == () else
                        f"r[{j}]" if len(shape) == 1 else f"r[{j}].reshape({shape!r})")
        elif kind is np.float64:
            outs.append(f"np.float64(r[{j}])")
        elif kind is np.bool_:
            outs.append(f"np.bool_(r[{j}])")
        elif kind is np.int64:
            outs.append(f"np.int64(r[{j}])")
        elif kind in (float, bool, int):
            outs.append(f"{kind.__name__}(r[{j}])")
        else:
            outs.append(f"r[{j}]")
    lines.append(f"    return ({', '.join(outs)}{',' if len(outs) == 1 else ''})")
    return "\n".join(lines) + "\n"


__all__ += ["wrapper_source", "SUPPORTED"]
