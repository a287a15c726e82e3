r"""A recorded program packed into arrays, for reversing it under a memory budget.

A :class:`~dualad.interpreters.staging.program.Program` holds one ``Eqn`` object per
equation (its argument tuple, a ``Const`` per constant argument, an aval tuple per
variable): about 430 bytes an equation on CPython 3.12, which for a Python loop of
``10^4`` steps is 8 MB held through the whole sweep. :class:`Packed` keeps the same
equations as

- *templates* ``(prim, params, pattern)``, one per distinct primitive, parameter dict and
  constant arguments (a loop's body makes a few), ``pattern`` naming which arguments are
  variables and holding the constants;
- per equation: its template (``int32``), the offset of its variable arguments in one
  ``int32`` array of variable numbers;
- per variable: its aval's index in a list of distinct avals (``int32``).

Variables are renumbered densely: the inputs are ``0 .. n_in - 1`` and equation ``k``
makes variable ``n_in + k``, so an equation's output is implicit. The equations, their
order and their primitives are the program's: evaluating them gives the same bits.
"""
from __future__ import annotations

import numpy as np

from ..interpreters.staging.program import Const, Guard

__all__ = ["Packed", "pack"]


class Packed:
    """A program as arrays (see the module docstring).

    Attributes: ``n_in`` (inputs), ``n`` (equations), ``templates`` (list of
    ``(prim, params, pattern)``, ``pattern`` a tuple with ``None`` for a variable argument
    and the constant's value otherwise), ``tid`` (template per equation), ``start``
    (``args[start[k]:start[k + 1]]`` are equation ``k``'s variable arguments), ``args``,
    ``aval_of`` (per variable), ``avals`` (distinct ``(kind, shape, dtype)``), ``outvars``
    (dense numbers, or :class:`Const`), ``guards`` (``{equation count: [Guard]}`` with
    dense variable numbers), ``name``.
    """

    __slots__ = ("n_in", "n", "templates", "tid", "start", "args", "aval_of", "avals",
                 "outvars", "guards", "name")

    def __len__(self):
        return self.n

    def aval(self, v):
        """The ``(kind, shape, dtype)`` of dense variable ``v``."""
        return self.avals[self.aval_of[v]]

    def ins(self, k):
        """Equation ``k``'s arguments as ``(pattern, variables)``."""
        return self.templates[self.tid[k]][2], self.args[self.start[k]:self.start[k + 1]]

    def nbytes(self):
        """Bytes of the arrays (the templates are shared with the recording's constants)."""
        return int(self.tid.nbytes + self.start.nbytes + self.args.nbytes
                   + self.aval_of.nbytes)


def _intern(table, index, key, value):
    i = index.get(key)
    if i is None:
        i = index[key] = len(table)
        table.append(value)
    return i


def pack(prog):
    """``prog`` (a :class:`~dualad.interpreters.staging.program.Program`) as a
    :class:`Packed`. Templates are shared by identity of the primitive, of the parameter
    dict (empty ones are all alike) and of each constant's value (a loop's ``0.999`` is
    one object)."""
    p = Packed()
    p.name = prog.name
    eqns = prog.eqns
    p.n_in, p.n = len(prog.invars), len(eqns)
    dense = {v: i for i, v in enumerate(prog.invars)}
    for k, e in enumerate(eqns):
        dense[e.out] = p.n_in + k
    p.templates, index = [], {}
    tid = np.empty(p.n, np.int32)
    start = np.empty(p.n + 1, np.int64)
    flat = []
    for k, e in enumerate(eqns):
        pattern = tuple(None if a.__class__ is int else a.value for a in e.ins)
        key = (e.prim, id(e.params) if e.params else None,
               tuple(None if c is None else id(c) for c in pattern))
        tid[k] = _intern(p.templates, index, key, (e.prim, e.params, pattern))
        start[k] = len(flat)
        flat.extend(dense[a] for a in e.ins if a.__class__ is int)
    start[p.n] = len(flat)
    p.tid, p.start, p.args = tid, start, np.asarray(flat, np.int32)
    p.avals, aindex = [], {}
    order = list(prog.invars) + [e.out for e in eqns]
    p.aval_of = np.fromiter((_intern(p.avals, aindex, prog.avals[v], prog.avals[v])
                             for v in order), np.int32, len(order))
    p.outvars = [dense[a] if a.__class__ is int else a for a in prog.outvars]
    p.guards = {}
    k = 0
    for item in prog.body:
        if item.__class__ is Guard:
            g = Guard(item.kind, dense[item.var], item.expected, item.where)
            p.guards.setdefault(k, []).append(g)
        else:
            k += 1
    return p


def outvar_value(a, env):
    """The value of an output ``a`` (a dense variable or a :class:`Const`) in ``env``."""
    return a.value if a.__class__ is Const else env[a]
