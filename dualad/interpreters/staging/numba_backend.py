"""The Numba backend of :func:`dualad.jit` (``jit(f, backend="numba")``): its kernels path.

The backend first tries to compile the whole program (:mod:`dualad.interpreters.staging.numba_whole`,
:mod:`dualad.interpreters.staging.numba_mode`); a program that cannot be compiled whole, and the whole
program's elementwise groups, use the kernels written here.

The recorded program goes through the same passes as on the default backend; then each
group of elementwise equations :mod:`dualad.interpreters.staging.fuse` finds (at least three float64
operations over one loop shape, with broadcasting) becomes ONE call of a kernel compiled
with ``numba.njit``, which loops over the elements once and writes only the group's
outputs: no temporaries and one call where NumPy made one per operation. Everything
else stays the NumPy code :mod:`dualad.interpreters.staging.codegen` writes.

Kernels are cached in this process by their structure (the operations, how each operand
broadcasts, the rank), not by shapes or constant values: the constants are arguments,
and one structure compiles once per process and per operand layout. A kernel is compiled
on the first call of its program: :class:`dualad.interpreters.staging.api.Compiled` runs the replay once
on that call's inputs (``warm_up``), so Numba compiles for the operands' exact types and
layouts then, not at a later call.

Numerics: no ``fastmath`` (IEEE semantics, no reassociation), Numba's ``numpy`` error
model (division by zero gives inf/nan as NumPy's does; no floating-point warnings are
emitted). ``exp``, ``log``, ``tanh``, ... are LLVM's/the C library's, while NumPy uses
its own SIMD loops for some of them: results can differ from the NumPy backend in the
last bits (a few ulps at most; +, -, *, /, sqrt are correctly rounded in both).
"""
from __future__ import annotations

import importlib
import operator
import threading

import numpy as np

from .fuse import COMPARE, EXPRESSIONS, boundaries, const_operand, groups
from .program import Const, Eqn, Program

__all__ = ["require_numba", "fuse_program", "kernel_cache_info", "INSTALL"]

INSTALL = 'pip install "dualad[numba]"'

_KERNELS = {}               # structure -> compiled kernel (a numba dispatcher)
_LOCK = threading.Lock()
_STATS = {"compiled": 0, "reused": 0}


def require_numba(name):
    """The ``numba`` module, or ImportError naming the jitted function ``name``."""
    try:
        return importlib.import_module("numba")
    except ImportError as exc:
        raise ImportError(
            f"dualad.jit({name}, backend='numba'): numba is not installed ({exc}). "
            f"Install it with  {INSTALL}  or leave backend= out (the default NumPy "
            f"backend needs nothing more)") from exc


def kernel_cache_info():
    """``{"kernels": distinct kernels in this process, "compiled": ..., "reused": ...}``."""
    return {"kernels": len(_KERNELS), **_STATS}


class FusedPrim:
    """The callee of a fused equation: ``name`` for the listing, ``impl`` the kernel,
    ``source`` the kernel's Python source (what Numba compiled)."""

    __slots__ = ("name", "impl", "source")

    def __init__(self, name, impl, source):
        self.name, self.impl, self.source = name, impl, source


def _pattern(ashape, shape):
    """Per loop dimension: ``True`` (indexed), ``False`` (broadcast: index 0) or None
    (the operand has fewer dimensions: aligned on the right, as NumPy broadcasts)."""
    pad = len(shape) - len(ashape)
    return tuple(None if d < pad else ashape[d - pad] == shape[d] for d in range(len(shape)))


def _structure(prog, group, inputs, outputs):
    """The kernel's structure key: rank, operand kinds, operations, outputs."""
    avals = prog.avals
    rank = len(group.shape)
    shape = group.shape
    slot = {}
    ops_in = []
    for k, a in enumerate(inputs):
        if a.__class__ is int:
            kind, ashape, dtype = avals[a]
            slot[a] = ("in", k)
            if kind is np.ndarray:
                ops_in.append(("a", str(np.dtype(dtype)), _pattern(tuple(ashape), shape)))
            else:
                ops_in.append(("s",))
        else:
            v = const_operand(a)
            if v.__class__ is np.ndarray:
                ops_in.append(("a", "float64", _pattern(v.shape, shape)))
            else:
                ops_in.append(("s",))
    ops = []
    for j, m in enumerate(group.members):
        refs = []
        for a in m.ins:
            if a.__class__ is int and a in slot:
                refs.append(slot[a])
            else:   # a constant: its position among the inputs (by identity)
                refs.append(("in", next(k for k, b in enumerate(inputs) if b is a)))
        name = m.prim.name
        ops.append((name, tuple(refs), str(np.dtype(avals[m.out][2]))))
        slot[m.out] = ("t", j)
    outs = tuple(slot[v][1] for v in outputs)
    return (rank, tuple(ops_in), tuple(ops), outs)


def _source(structure):
    """Python source of the kernel ``kernel(shape, *operands)`` for ``structure``."""
    rank, ops_in, ops, outs = structure
    idx = [f"i{d}" for d in range(rank)]
    args = ", ".join(f"a{k}" for k in range(len(ops_in)))
    lines = [f"def kernel(shape, {args}):"]
    for j in outs:
        dt = "np.bool_" if ops[j][2] == "bool" else "np.float64"
        lines.append(f"    o{j} = np.empty(shape, {dt})")
    lines.append(f"    {', '.join(f'n{d}' for d in range(rank))}{',' if rank == 1 else ''} = shape")
    scalars = [k for k, op in enumerate(ops_in) if op[0] == "s"]
    for k in scalars:
        lines.append(f"    x{k} = a{k}")
    ind = "    "
    for d in range(rank):
        lines.append(f"{ind}for i{d} in range(n{d}):")
        ind += "    "
    for k, op in enumerate(ops_in):
        if op[0] != "a":
            continue
        pat = op[2]
        sub = [idx[d] if p else "0" for d, p in enumerate(pat) if p is not None]
        lines.append(f"{ind}x{k} = a{k}[{', '.join(sub) if sub else '()'}]")
    for j, (name, refs, _) in enumerate(ops):
        names = [f"x{r[1]}" if r[0] == "in" else f"t{r[1]}" for r in refs]
        lines.append(f"{ind}t{j} = {EXPRESSIONS[name][1].format(*names)}")
    for j in outs:
        lines.append(f"{ind}o{j}[{', '.join(idx)}] = t{j}")
    ret = ", ".join(f"o{j}" for j in outs)
    lines.append(f"    return {ret}")
    return "\n".join(lines) + "\n"


def _kernel(structure):
    with _LOCK:
        hit = _KERNELS.get(structure)
        if hit is not None:
            _STATS["reused"] += 1
            return hit
    numba = require_numba("fused kernel")
    source = _source(structure)
    ns = {"np": np}
    exec(compile(source, "<dualad.jit numba kernel>", "exec"), ns)  # noqa: S102 - our source
    kernel = numba.njit(fastmath=False, error_model="numpy", nogil=True)(ns["kernel"])
    with _LOCK:
        hit = _KERNELS.setdefault(structure, (kernel, source))
        _STATS["compiled"] += hit[0] is kernel
    return hit


def fuse_program(prog, min_members=None):
    """``prog`` with each fusible group replaced by one call of its kernel (see the
    module docstring); the kernels compiled. Returns ``prog`` itself when no group has
    enough members (``min_members``, default :data:`dualad.interpreters.staging.fuse.MIN_MEMBERS`)."""
    found = groups(prog) if min_members is None else groups(prog, min_members)
    if not found:
        return prog
    avals = dict(prog.avals)
    fresh = max(avals) + 1 if avals else 0
    replace = {}    # id(last member) -> new equations; other members dropped
    drop = set()
    for g, (inputs, outputs) in zip(found, boundaries(prog, found)):
        if not outputs:
            continue
        structure = _structure(prog, g, inputs, outputs)
        kernel, source = _kernel(structure)
        ins = [Const(g.shape)] + [Const(const_operand(a)) if a.__class__ is Const else a
                                  for a in inputs]
        prim = FusedPrim(f"fused{len(g.members)}", kernel, source)
        if len(outputs) == 1:
            new = [Eqn(prim, tuple(ins), {}, outputs[0])]
        else:
            t = fresh
            fresh += 1
            avals[t] = (tuple, None, None)
            new = [Eqn(prim, tuple(ins), {}, t)]
            unpack = FusedPrim("unpack", operator.getitem, "")
            new += [Eqn(unpack, (t, Const(k)), {}, v) for k, v in enumerate(outputs)]
        replace[id(g.members[-1])] = new
        drop.update(id(m) for m in g.members[:-1])
    body = []
    for item in prog.body:
        k = id(item)
        if k in replace:
            body.extend(replace[k])
        elif k not in drop:
            body.append(item)
    return Program(prog.invars, body, prog.outvars, avals, prog.name)


__all__ += ["FusedPrim", "COMPARE"]
