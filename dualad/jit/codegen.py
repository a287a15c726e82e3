"""Python source for a recorded :class:`~dualad.jit.program.Program`, compiled once.

Each equation becomes one line that calls the primitive's NumPy implementation
directly (``v7 = v3 * v5``, ``v8 = np.sin(v7)``, ``v9 = impl_sum(v8, axis=0)``): no
tracing, no dispatch, no rule lookup. A guard becomes a test that returns
:data:`RETRACE` when it fails, so the caller traces again. ``source()`` is what
``jitted.source(*args)`` shows: for ``jit(grad(f))`` it is the adjoint program written
out, as source-transformation AD tools (Tapenade, Tangent) print it.
"""
from __future__ import annotations

import keyword
import operator
import re

import numpy as np

from .program import Const, Eqn, Guard


class _Retrace:
    """The value a replay returns when a guard failed."""

    __slots__ = ("guard",)

    def __repr__(self):
        return "RETRACE"


RETRACE = _Retrace()

_INFIX = {operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/",
          operator.pow: "**", operator.matmul: "@"}


def _literal(v):
    """Source for a constant that reads back exactly, or None."""
    kind = v.__class__
    if kind is bool or v is None:
        return repr(v)
    if kind is int:
        return repr(v)
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
    """The generated function's globals: implementations, constants, parameters."""

    def __init__(self):
        self.ns = {"np": np, "RETRACE": RETRACE}
        self._ids = {}

    def bind(self, obj, hint):
        key = id(obj)
        name = self._ids.get(key)
        if name is not None and self.ns[name] is obj:
            return name
        base = re.sub(r"\W", "_", hint) or "c"
        if keyword.iskeyword(base) or base[0].isdigit():
            base = "_" + base
        name = base
        i = 1
        while name in self.ns:
            name = f"{base}_{i}"
            i += 1
        self.ns[name] = obj
        self._ids[key] = name
        return name


def _callee(prim, ns):
    impl = prim.impl
    if isinstance(impl, np.ufunc) and getattr(np, impl.__name__, None) is impl:
        return f"np.{impl.__name__}"
    return ns.bind(impl, f"{prim.name}")


def generate(prog, name="replay"):
    """``(source, namespace)`` of a function ``name(*inputs)`` returning the tuple of
    output leaves, or RETRACE when a guard fails."""
    ns = _Namespace()
    ns.ns[name] = None   # reserved: a bound implementation named like f (jit(np.sum)) must not clash
    lines = [f"def {name}({', '.join(f'v{v}' for v in prog.invars)}):"]

    def atom(a):
        if a.__class__ is int:
            return f"v{a}"
        lit = _literal(a.value)
        if lit is None:
            return ns.bind(a.value, "c")
        return f"({lit})" if lit.startswith("-") else lit

    for k, e in enumerate(prog.body):
        if e.__class__ is Guard:
            v = f"v{e.var}"
            if e.kind == "bool":
                test = f"not {v}" if e.expected else v
            elif e.kind == "int":
                test = f"int({v}) != {e.expected!r}"
            else:
                test = f"not {ns.bind(e, f'guard{k}')}.holds({v})"
            lines.append(f"    if {test}:  # guard: {e.describe()}")
            lines.append("        return RETRACE")
            continue
        args = [atom(a) for a in e.ins]
        impl = e.prim.impl
        op = _INFIX.get(impl)
        if op is not None and len(args) == 2 and not e.params:
            rhs = f"{args[0]} {op} {args[1]}"
        elif impl is operator.neg and len(args) == 1 and not e.params:
            rhs = f"-{args[0]}"
        else:
            kw = []
            for key, val in e.params.items():
                lit = _literal(val)
                kw.append(f"{key}={lit if lit is not None else ns.bind(val, key)}")
            rhs = f"{_callee(e.prim, ns)}({', '.join(args + kw)})"
        lines.append(f"    v{e.out} = {rhs}")
    outs = [atom(a) for a in prog.outvars]
    lines.append(f"    return ({', '.join(outs)}{',' if len(outs) == 1 else ''})")
    return "\n".join(lines) + "\n", ns.ns


def compile_program(prog, name="replay"):
    """``(function, source)`` for ``prog`` (see :func:`generate`)."""
    source, ns = generate(prog, name)
    code = compile(source, f"<dualad.jit {prog.name}>", "exec")
    exec(code, ns)   # noqa: S102 - our own generated source, from a recorded program
    return ns[name], source


__all__ = ["RETRACE", "compile_program", "generate", "Const", "Eqn"]
