"""Rewrites of a recorded :class:`~dualad.interpreters.staging.program.Program` before code generation.

Every rewrite here is EXACT: the rewritten program computes bit for bit what the
recorded one did (IEEE 754 arithmetic is deterministic, and each identity used holds
for every input, NaN and infinities included):

- ``x * 1.0``, ``1.0 * x``, ``x / 1.0`` (``x`` real: for a complex ``x`` they are
  complex products, ``(inf+0j) * 1.0`` is ``inf+nanj``), ``x - 0.0``, ``+x``: ``x``;
  ``-(-x)``: ``x``; ``x * -1.0``: ``-x``;
- ``a + (-b)``, ``(-b) + a``: ``a - b``; ``a - (-b)``: ``a + b`` (a subtraction IS the
  addition of the negation, and addition commutes);
- common subexpressions: the same primitive on the same arguments with the same
  parameters is computed once.

Not done, because they are not exact: ``x + 0.0`` (``-0.0 + 0.0`` is ``+0.0``),
``x * 0.0`` (NaN, infinities), reassociation (``c * (d * x)`` as ``(c * d) * x``) and
so constant folding across an operation.

A variable is replaced by another only when nothing can tell them apart:

- their avals are the same (Python type, shape, dtype); or both are float64 scalars
  held as Python floats by :mod:`dualad.interpreters.staging.specialize` (``float`` and ``np.float64``
  values are the same number) and the replaced one has no use that sees its type (an
  output, a NumPy call: ``float32_array * np.float64(2.0)`` is float64 where
  ``float32_array * 2.0`` stays float32);
- an array is never replaced where it is an output: an output must stay a new array,
  not the input itself or another output (a caller may write into it).

The passes return a new Program (the same variable numbers; dropped equations are gone)
and ``notes``: ``{variable: text}`` saying what was rewritten, which the code generator
prints as comments, so ``jitted.source()`` shows the optimised program and why.
"""
from __future__ import annotations

import numpy as np

from ...core.primitive import REGISTRY
from .program import Const, Eqn, Guard, Program


def known(prim):
    """``prim``'s name when it is the registry's primitive of that name, else None. The
    rewrites here and the specialization (:mod:`dualad.interpreters.staging.specialize`) know what the
    registry's ``multiply`` or ``sin`` computes; a user's primitive given such a name (or
    two user primitives of one name, ``<lambda>``) is none of them: a name is text, the
    primitive is the object."""
    name = prim.name
    # (dict.get: a primitive in the registry is declared already; a miss must not load
    # the lazy families, seconds, for a name no family has: a user's, a rolled loop's)
    return name if dict.get(REGISTRY, name) is prim else None


def _is_one(a):
    return a.__class__ is Const and _real_scalar(a.value) and a.value == 1


def _is_zero(a):
    """A +0 constant (``x - (-0.0)`` is ``x + 0.0``, which turns ``-0.0`` into ``+0.0``)."""
    return (a.__class__ is Const and _real_scalar(a.value) and a.value == 0
            and not np.signbit(a.value))


def _real(rw, a):
    """Whether variable ``a`` is real (bool, integer or floating dtype): a complex ``x``
    times ``1.0`` is a complex product, ``(inf+0j) * (1+0j)`` is ``inf+nanj``, not ``x``."""
    if a.__class__ is not int:
        return False
    dtype = rw.avals[a][2]
    return dtype is not None and np.dtype(dtype).kind in "biuf"


def _real_scalar(v):
    return (v.__class__ in (float, int) or isinstance(v, np.floating) and v.dtype.itemsize <= 8
            or isinstance(v, np.integer)) and v.__class__ is not bool


def uses(prog):
    """``{variable: number of uses}`` by equations, guards and outputs."""
    n = {}
    for e in prog.body:
        if e.__class__ is Guard:
            n[e.var] = n.get(e.var, 0) + 1
        else:
            for a in e.ins:
                if a.__class__ is int:
                    n[a] = n.get(a, 0) + 1
    for a in prog.outvars:
        if a.__class__ is int:
            n[a] = n.get(a, 0) + 1
    return n


def typed_uses(prog, scalar_eqns):
    """The variables whose Python type is seen: outputs and the inputs of equations
    not in ``scalar_eqns`` (the outputs of the equations emitted as Python float code).
    """
    seen = {a for a in prog.outvars if a.__class__ is int}
    for e in prog.body:
        if e.__class__ is Eqn and e.out not in scalar_eqns:
            seen.update(a for a in e.ins if a.__class__ is int)
    return seen


def _const_key(a):
    v = a.value
    if _real_scalar(v) or v.__class__ in (bool, complex):
        return ("c", type(v), v)
    return ("id", id(v))


def _freeze(v):
    """A hashable stand-in for a parameter: by value for numbers, tuples and slices (not
    hashable before Python 3.12), by identity for anything else (an index array)."""
    if v.__class__ is tuple:
        return tuple(_freeze(x) for x in v)
    if v.__class__ is slice:
        return ("slice", _freeze(v.start), _freeze(v.stop), _freeze(v.step))
    if v is None or v.__class__ in (int, float, bool, str, complex):
        return (v.__class__, v)
    try:
        hash(v)
    except TypeError:
        return ("id", id(v))
    return (v.__class__, v)


def _param_key(params):
    if not params:
        return ()
    return tuple([(k, _freeze(v)) for k, v in params.items()])


class _Rewriter:
    """State of one pass: substitutions ``var -> atom`` and the notes."""

    def __init__(self, prog, pyfloat, typed):
        self.prog = prog
        self.avals = prog.avals
        self.pyfloat = pyfloat
        self.typed = typed
        self.outputs = {a for a in prog.outvars if a.__class__ is int}
        self.sub = {}
        self.notes = {}

    def resolve(self, a):
        while a.__class__ is int and a in self.sub:
            a = self.sub[a]
        return a

    def can_replace(self, u, a):
        """Whether every use of variable ``u`` may read atom ``a`` instead."""
        if a.__class__ is not int:
            return False
        au, aa = self.avals[u], self.avals[a]
        if au[0] is np.ndarray and u in self.outputs:
            return False
        if au == aa:
            return True
        return u in self.pyfloat and a in self.pyfloat and u not in self.typed

    def replace(self, e, a, why):
        if self.can_replace(e.out, a):
            self.sub[e.out] = a
            self.notes[e.out] = f"v{e.out} = v{a}: {why}"
            return True
        return False

    def finish(self, body):
        out = [self.resolve(a) for a in self.prog.outvars]
        return Program(self.prog.invars, body, out, self.avals, self.prog.name)


def _guard(g, rw):
    a = rw.resolve(g.var)
    if a == g.var:
        return g
    return Guard(g.kind, a, g.expected, g.where)


def simplify(prog, pyfloat=frozenset(), typed=frozenset()):
    """``(program, notes)``: the exact algebraic identities of the module docstring
    applied, and common subexpressions computed once. ``pyfloat``: the variables held
    as Python floats; ``typed``: those whose type a use sees (:func:`typed_uses`)."""
    rw = _Rewriter(prog, pyfloat, typed)
    neg_of = {}      # var -> the atom it is the negation of
    seen = {}        # CSE key -> var
    body = []
    sub_p, add_p = REGISTRY["subtract"], REGISTRY["add"]
    for e in prog.body:
        if e.__class__ is Guard:
            body.append(_guard(e, rw))
            continue
        ins = tuple([rw.resolve(a) for a in e.ins]) if rw.sub else e.ins
        name = known(e.prim)
        if not e.params and len(ins) == 2:
            x, y = ins
            if name == "multiply":
                if _is_one(x) and _real(rw, y) and rw.replace(e, y, "1.0 * x is x"):
                    continue
                if _is_one(y) and _real(rw, x) and rw.replace(e, x, "x * 1.0 is x"):
                    continue
            elif name == "divide" and _is_one(y) and _real(rw, x) and \
                    rw.replace(e, x, "x / 1.0 is x"):
                continue
            elif name == "subtract" and _is_zero(y) and rw.replace(e, x, "x - 0.0 is x"):
                continue
            if name in ("add", "subtract"):
                new = _fold_negation(e, ins, neg_of, sub_p, add_p, rw)
                if new is not None:
                    e, ins = new, new.ins
        elif not e.params and len(ins) == 1:
            if name == "positive" and rw.replace(e, ins[0], "+x is x"):
                continue
            if name == "negative":
                inner = neg_of.get(ins[0])
                if inner is not None and rw.replace(e, inner, "-(-x) is x"):
                    continue
        key = (id(e.prim), tuple([a if a.__class__ is int else _const_key(a) for a in ins]),
               _param_key(e.params))
        prev = seen.get(key)
        if prev is not None and rw.replace(e, prev, f"the same as v{prev} (computed once)"):
            continue
        seen.setdefault(key, e.out)
        if name == "negative" and not e.params:
            neg_of[e.out] = ins[0]
        if ins != e.ins:
            e = Eqn(e.prim, ins, e.params, e.out)
        body.append(e)
    return rw.finish(body).pruned(), rw.notes


def _fold_negation(e, ins, neg_of, sub_p, add_p, rw):
    """``a + (-b)`` -> ``a - b`` and relatives (exact), or None."""
    x, y = ins
    nx = neg_of.get(x) if x.__class__ is int else None
    ny = neg_of.get(y) if y.__class__ is int else None
    name = known(e.prim)
    if name == "add" and ny is not None:
        new = Eqn(sub_p, (x, ny), {}, e.out)
        rw.notes[e.out] = f"v{e.out} = {_show(x)} + v{y}, v{y} = -v{ny}"
    elif name == "add" and nx is not None:
        new = Eqn(sub_p, (y, nx), {}, e.out)
        rw.notes[e.out] = f"v{e.out} = v{x} + {_show(y)}, v{x} = -v{nx}"
    elif name == "subtract" and ny is not None:
        new = Eqn(add_p, (x, ny), {}, e.out)
        rw.notes[e.out] = f"v{e.out} = {_show(x)} - v{y}, v{y} = -v{ny}"
    else:
        return None
    return new   # -b has b's type and dtype, so a - b has the type a + (-b) had


def _show(a):
    return f"v{a}" if a.__class__ is int else repr(a)


__all__ = ["simplify", "uses", "typed_uses", "known"]
