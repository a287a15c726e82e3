"""The whole-program Numba mode written as ONE function of scalar loops (flat buffers).

Numba compiles each njit function it meets (a helper, a kernel, NumPy's own overloads
of ``reshape``, ``concatenate``, ``np.where``, ... for every new signature) as its own
LLVM module, optimized and linked into its caller: about half a second each, and a
program called 30-80 of them (gmm's gradient: 79 compilations, 60 s). This writer emits
what a program does as loops over scalars in the one function, and nothing else:

- every array value lives in a flat 1-d C-contiguous buffer (``np.empty(n, dtype)``);
  its shape, strides and offset are known when the source is written (a *view*), so a
  reshape, transpose, basic indexing or ``broadcast_to`` writes no code at all, and
  reading an entry is ``buf[off + i0 * s0 + ...]``;
- elementwise operations, and groups of them (:func:`dualad.interpreters.staging.fuse.groups`), are one
  loop nest each, writing only the group's outputs; reductions, products, ``einsum``,
  concatenation, gathers and scatters are loop nests too;
- the arguments and constants are passed flat (the Python wrapper ravels them; a
  C-contiguous array is not copied) and the outputs reshaped by the wrapper: every
  array in the function has the one type "1-d C array", whatever the caller passes;
- rolled loops (:mod:`dualad.interpreters.staging.loops`) are a ``for`` with the body written inline
  (:mod:`dualad.interpreters.staging.numba_flatloop`).

The one callee is NumPy's pairwise summation (``_pw`` of :mod:`dualad.interpreters.staging.numba_helpers`,
a recursion), called for sums of 8 entries or more, always with one signature; it is
compiled once per process.

Numerics are those of :mod:`dualad.interpreters.staging.numba_whole`'s module docstring (sums over
trailing axes bitwise NumPy's pairwise order for contiguous rows; a sum over leading
axes in row order; products and ``einsum`` summed from ``0.0`` in index order; libm's
``exp``, ``log``, ...), checked against the traced call at the first call.
"""
from __future__ import annotations

import math

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .fuse import EXPRESSIONS
from .passes import known
from .numba_base import BOOL, F64, I64, Unsupported, literal

__all__ = ["View", "FlatWriting", "EXPR", "DTYPE_SRC", "c_strides"]

EXPR = {k: v[1] for k, v in EXPRESSIONS.items()}
for _f in ("tan", "sinh", "cosh", "arctan", "arcsin", "arccos", "arcsinh", "log2", "log10"):
    EXPR[_f] = "np.%s({0})" % _f
# NumPy's maximum/minimum: a NaN operand wins
EXPR["maximum"] = "({0} if {0} >= {1} or {0} != {0} else {1})"
EXPR["minimum"] = "({0} if {0} <= {1} or {0} != {0} else {1})"
DTYPE_SRC = {F64: "np.float64", BOOL: "np.bool_", I64: "np.int64"}


def c_strides(shape):
    out, s = [], 1
    for d in reversed(shape):
        out.append(s)
        s *= d
    return tuple(reversed(out))


class View:
    """An array value: ``buf`` (a variable holding a flat buffer), ``shape``, ``strides``
    (in entries) and ``off`` (an int or the source of an int expression)."""

    __slots__ = ("buf", "shape", "strides", "off", "dtype")

    def __init__(self, buf, shape, dtype, strides=None, off=0):
        self.buf, self.shape, self.dtype = buf, tuple(shape), dtype
        self.strides = c_strides(self.shape) if strides is None else tuple(strides)
        self.off = off

    def contiguous(self):
        return all(s == c or d == 1 for s, c, d in
                   zip(self.strides, c_strides(self.shape), self.shape))

    def at(self, idx):
        """Source of the entry at ``idx`` (one index source per dimension; the constant
        part of the offset summed here: fewer operations for Numba to type)."""
        const, terms = (self.off, []) if self.off.__class__ is int else (0, [self.off])
        for i, s, d in zip(idx, self.strides, self.shape):
            if s == 0 or d == 1 or i == "0":
                continue
            if i.isdigit():
                const += int(i) * s
            else:
                terms.append(i if s == 1 else f"{i} * {s}")
        if const or not terms:
            terms.append(str(const))
        return f"{self.buf}[{' + '.join(terms)}]"

    def offset_at(self, idx):
        return self.at(idx)[len(self.buf) + 1:-1]

    def sub(self, shape, strides, delta):
        if delta.__class__ is str and delta.isdigit():
            delta = int(delta)
        if self.off.__class__ is int and delta.__class__ is int:
            off = self.off + delta
        else:
            off = delta if self.off == 0 else self.off if delta == 0 else \
                f"{self.off} + {delta}"
        return View(self.buf, shape, self.dtype, strides, off)


def basic_view(view, idx):
    """``view[idx]`` for a basic index (ints, slices, None): the same buffer."""
    base = np.zeros(1, np.int8)
    dummy = as_strided(base, view.shape, view.strides, writeable=False)
    got = dummy[idx]
    if got.__class__ is not np.ndarray:  # one entry: index it with a new axis for a view
        got = dummy[tuple(idx) + (None,)]
        got = as_strided(got, got.shape[:-1], got.strides[:-1], writeable=False)
    delta = got.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    return view.sub(got.shape, got.strides, delta)


def positions(view, idx):
    """The buffer offsets (relative to ``view.off``) of ``view[idx]``'s entries, any index."""
    grid = np.zeros(view.shape, np.int64)
    for d, (n, s) in enumerate(zip(view.shape, view.strides)):
        grid += (np.arange(n, dtype=np.int64) * s).reshape((n,) + (1,) * (len(view.shape) - d - 1))
    return np.ascontiguousarray(grid[idx])


def broadcast(view, shape):
    """``view`` read as ``shape`` (NumPy's broadcasting: stride 0 where it repeats)."""
    pad = len(shape) - len(view.shape)
    if pad < 0:
        raise Unsupported(f"an operand of shape {view.shape} in a loop of shape {shape}")
    strides = []
    for d, n in enumerate(shape):
        if d < pad:
            strides.append(0)
            continue
        m, s = view.shape[d - pad], view.strides[d - pad]
        if m == n:
            strides.append(s)
        elif m == 1:
            strides.append(0)
        else:
            raise Unsupported(f"an operand of shape {view.shape} in a loop of shape {shape}")
    return View(view.buf, shape, view.dtype, strides, view.off)


class FlatWriting:
    """The emitter: ``self.lines``, ``self.ind`` (indentation), ``self.val`` (variable ->
    View or scalar source), ``self.avals``, ``self.pre`` (prefix of names), ``self.w`` (the
    writer: constants, fresh names)."""

    # ---- values -------------------------------------------------------------------
    def value(self, a):
        """A View or the source of a scalar."""
        if a.__class__ is int:
            return self.val[a]
        v = a.value
        lit = literal(v)
        if lit is not None:
            return lit
        if isinstance(v, np.ndarray):
            if v.ndim == 0 and v.dtype in (F64, BOOL, I64):
                return literal(v.item()) if v.dtype != I64 else repr(int(v))
            if v.dtype in (F64, BOOL, I64) and v.size:
                return View(self.w.const(v), v.shape, v.dtype)
        raise Unsupported(f"a constant of type {type(v).__name__}")

    def out_dtype(self, v):
        kind, shape, dtype = self.avals[v]
        if kind in (bool, np.bool_):
            return BOOL
        if kind in (float, np.float64):
            return F64
        if kind is np.int64 or kind is int:
            return I64
        return np.dtype(dtype)

    def out_shape(self, v):
        kind, shape, _ = self.avals[v]
        return tuple(shape) if kind is np.ndarray else ()

    def emit(self, line):
        self.lines.append(self.ind + line)

    def alloc(self, shape, dtype, zeros=False):
        """A View of a new C-contiguous place for ``shape`` in the arena of ``dtype`` (one
        buffer per dtype, allocated once per call: no allocation, no reference counting
        per value); ``zeros``: filled with zeros here."""
        n = max(1, math.prod(shape))
        buf, off = self.w.slot(n, dtype)
        out = View(buf, shape, dtype, None, off)
        if zeros:
            flat = View(buf, (n,), dtype, None, off)
            idx = self.nest((n,), "j")
            self.emit(f"{flat.at(idx)} = 0")
            self.close()
        return out

    def nest(self, shape, tag="i"):
        """Open loops over ``shape`` (none over unit axes); returns the index sources.
        Close with :meth:`close`."""
        idx = []
        self._opened = getattr(self, "_opened", [])
        opened = 0
        for d, n in enumerate(shape):
            if n == 1:
                idx.append("0")
                continue
            name = f"{tag}{d}"
            self.emit(f"for {name} in range({n}):")
            self.ind += "    "
            opened += 1
            idx.append(name)
        self._opened.append(opened)
        return idx

    def close(self):
        self.ind = self.ind[:len(self.ind) - 4 * self._opened.pop()]

    def copy_into(self, dst, src):
        """Lines writing ``src`` (a View broadcast to ``dst``'s shape, or a scalar) into
        ``dst``; none when ``src`` already is there."""
        if self.same_place(dst, src):
            return
        if dst.contiguous() and (not isinstance(src, View) or
                                 broadcast(src, dst.shape).contiguous() and
                                 0 not in broadcast(src, dst.shape).strides):
            n = math.prod(dst.shape)
            flat_d = View(dst.buf, (n,), dst.dtype, None, dst.off)
            flat_s = src if not isinstance(src, View) else View(src.buf, (n,), src.dtype,
                                                                 None, src.off)
            idx = self.nest((n,), "j")
            self.emit(f"{flat_d.at(idx)} = {flat_s.at(idx) if isinstance(src, View) else src}")
            self.close()
            return
        s = broadcast(src, dst.shape) if isinstance(src, View) else src
        idx = self.nest(dst.shape, "j")
        self.emit(f"{dst.at(idx)} = {s.at(idx) if isinstance(s, View) else s}")
        self.close()

    def materialize(self, x, name=None, dtype=None):
        """A View of a fresh C-contiguous buffer holding ``x`` (a View or a scalar with
        ``dtype``): for outputs and loop carries."""
        if not isinstance(x, View):
            out = self.alloc((), dtype)
            self.emit(f"{out.at([])} = {x}")
            return out
        out = self.alloc(x.shape, x.dtype)
        self.copy_into(out, x)
        return out

    def as_scalar(self, x, dtype):
        """A scalar source for a value the program types 0-d."""
        if isinstance(x, View):
            return x.at(["0"] * len(x.shape))
        return x

    # ---- elementwise ----------------------------------------------------------------
    def elementwise(self, members, outputs, shape):
        """``members``: equations (in order) forming one loop over ``shape``; the values of
        ``outputs`` (variables among the members' outs) are stored, the rest stay scalars."""
        if shape == ():
            for m in members:
                ins = [self.as_scalar(self.value(a), None) for a in m.ins]
                name = self.w.name("s")
                self.emit(f"{name} = {EXPR[known(m.prim)].format(*ins)}")
                self.val[m.out] = name
            return
        if len(members) > 2:    # (the kernels path's smallest group: 3)
            self.emit(f"# fused: {len(members)} operations, one loop")
        bufs = {}
        for v in outputs:
            if self.depth == 0 and v in self.w.outputs and v not in self.w.outbuf:
                name = self.w.name("out")   # a program output: its own array, no copy
                self.w.outbuf[v] = (name, math.prod(shape), self.out_dtype(v))
                bufs[v] = View(name, shape, self.out_dtype(v))
            else:       # its consumer's place, or a new one (numba_flatplace)
                bufs[v] = self.place(v, shape, self.out_dtype(v))
        loads, names = [], {}
        local = {m.out for m in members}
        tmp = {m.out: self.w.name("e") for m in members}

        def ref(a):
            if a.__class__ is int and a in local:
                return tmp[a]
            return names[a if a.__class__ is int else id(a)]

        for m in members:
            for a in m.ins:
                key = a if a.__class__ is int else id(a)
                if key in names or a.__class__ is int and a in local:
                    continue
                x = self.value(a)
                if isinstance(x, View):
                    nm = self.w.name("x")
                    loads.append((nm, broadcast(x, shape)))
                    names[key] = nm
                else:
                    names[key] = x
        flat = all(v.contiguous() and 0 not in v.strides for v in
                   [v for _, v in loads] + list(bufs.values()))
        spec = {"members": members, "loads": loads, "tmp": tmp, "ref": ref, "bufs": bufs,
                "flat": flat, "shape": shape, "n": math.prod(shape),
                "numbers": [x for x in names.values() if x.__class__ is str]}
        for v, b in bufs.items():
            self.val[v] = b
        if not self.hold(spec):     # (numba_flatplace: perhaps written in its reader's loop)
            self.write_loop(spec)

    def write_loop(self, spec, lo=0, hi=None, inner=None):
        """Write the loop of an elementwise ``spec`` (over entries ``lo`` to ``hi`` when
        flat); ``inner``: ``(spec, shift, load)``, another flat loop computed inside this
        one, its entry ``i - shift`` made before ``load`` (a name of this loop) is read
        and read as it."""
        flat, shape = spec["flat"], spec["shape"]
        n = spec["n"]
        lshape = (n,) if flat else shape
        hi = n if hi is None else hi
        if flat and hi - lo == 1:       # one entry: no loop
            self._opened.append(0)
            idx = [str(lo)]
        elif flat:
            self.emit(f"for i0 in range({lo}, {hi}):" if lo else f"for i0 in range({hi}):")
            self.ind += "    "
            self._opened.append(1)
            idx = ["i0"]
        else:
            idx = self.nest(lshape)
        skip = None
        if inner is not None:
            sub, shift, skip = inner
            at = str(lo - shift) if idx[0] != "i0" else f"(i0 - {shift})" if shift else "i0"
            self._loop_body(sub, [at], (sub["n"],))
            self.emit(f"{skip} = {sub['tmp'][next(iter(sub['bufs']))]}")
        self._loop_body(spec, idx, lshape, skip)
        self.close()

    def _loop_body(self, spec, idx, lshape, skip=None):
        """The loads (but ``skip``), operations and stores of ``spec`` at entry ``idx``."""
        flat = spec["flat"]
        for nm, v in spec["loads"]:
            if nm != skip:
                v = View(v.buf, lshape, v.dtype, None, v.off) if flat else v
                self.emit(f"{nm} = {v.at(idx)}")
        tmp, ref = spec["tmp"], spec["ref"]
        for m in spec["members"]:
            self.emit(f"{tmp[m.out]} = {EXPR[known(m.prim)].format(*map(ref, m.ins))}")
        for v, b in spec["bufs"].items():
            b2 = View(b.buf, lshape, b.dtype, None, b.off) if flat else b
            self.emit(f"{b2.at(idx)} = {tmp[v]}")

__all__ += ["basic_view", "positions", "broadcast"]
