r"""A recorded program packed into arrays, for reversing it under a memory budget.

A :class:`~dualad.interpreters.staging.program.Program` holds one ``Eqn`` object per
equation (its argument tuple, a ``Const`` per constant argument, an aval tuple per
variable) and its trace a hash-consing table: about 700 bytes an equation while ``f`` is
recorded, which for a Python loop of ``10^4`` steps is 14 MB. :class:`PackingTrace`
records with the same boxes straight into a :class:`Packed` program, the same
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

from array import array

from ..core.tracer import Box
from ..interpreters.staging.program import Const, Guard
from ..interpreters.staging.trace import JitBox, JitTrace, _aval, frozen_params

__all__ = ["Packed", "PackingTrace", "VAR"]


class _Var:
    """The mark of a variable argument in a template's pattern (a constant argument may
    be ``None`` itself: ``np.clip(x, None, 1.0)``)."""

    __slots__ = ()

    def __repr__(self):
        return "VAR"


VAR = _Var()


class Packed:
    """A program as arrays (see the module docstring).

    Attributes: ``n_in`` (inputs), ``n`` (equations), ``templates`` (list of
    ``(prim, params, pattern)``, ``pattern`` a tuple with :data:`VAR` for a variable
    argument and the constant's value otherwise), ``tid`` (template per equation), ``start``
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


class PackingTrace(JitTrace):
    """The staging trace, writing a :class:`Packed` program as ``f`` runs instead of an
    ``Eqn`` object per equation (about 30 bytes an equation while ``f`` is recorded,
    against about 700 for a :class:`~dualad.interpreters.staging.program.Program` and
    its tables). Its boxes are :func:`dualad.jit`'s, so guards (``if`` on a traced
    value, ``int(v)``) are recorded as the jit trace records them; repeated computations
    are not shared (each is its own equation: the same values). :meth:`packed` prunes
    the equations no output or guard needs and returns the program."""

    __slots__ = ("tid", "start", "flat", "aval_of", "aval_index", "aval_list",
                 "templates", "tindex", "guard_at", "n_eqns")

    def __init__(self):
        super().__init__(False)
        self.tid, self.start, self.flat = array("i"), array("q"), array("i")
        self.aval_of, self.aval_index, self.aval_list = array("i"), {}, []
        self.templates, self.tindex = [], {}
        self.guard_at, self.n_eqns = {}, 0

    def new_var(self, value):
        v = self.nvars
        self.nvars = v + 1
        a = _aval(value)
        self.aval_of.append(_intern(self.aval_list, self.aval_index, a, a))
        return v

    def process(self, prim, args, params):
        if not self.alive:
            raise self.escaped(prim, args)
        vals, pattern, var_args = [], [], []
        for a in args:
            if a.__class__ is JitBox and a._trace is self:
                vals.append(a.val)
                pattern.append(VAR)
                var_args.append(a.var)
            elif isinstance(a, Box):
                self.lift(a, prim)       # raises: a value of another transformation
            else:
                vals.append(a)
                pattern.append(a)
        pkey = frozen_params(params) if params else ()
        key = (prim, id(params) if pkey is None else pkey,
               tuple(None if c is VAR else id(c) for c in pattern))
        t = self.tindex.get(key)
        if t is None:
            t = _intern(self.templates, self.tindex, key, (prim, params, tuple(pattern)))
        ans = prim.impl(*vals, **params)
        self.tid.append(t)
        self.start.append(len(self.flat))
        self.flat.extend(var_args)
        self.n_eqns += 1
        return JitBox(self, ans, self.new_var(ans))

    def guard(self, box, kind, expected):
        if not self.alive:
            raise self.escaped_guard(box)
        if kind == "equal":
            v = box.val
            expected = v.copy() if isinstance(v, np.ndarray) else v
        self.guard_at.setdefault(self.n_eqns, []).append(Guard(kind, box.var, expected, ""))

    def recompute(self, var):
        return None

    def packed(self, n_in, outvars, name):
        """The recorded program (inputs ``0 .. n_in - 1``, ``outvars`` variables or
        :class:`Const`), without the equations no output or guard needs."""
        n = self.n_eqns
        self.start.append(len(self.flat))
        start = np.frombuffer(self.start, np.int64)
        flat = np.frombuffer(self.flat, np.int32) if len(self.flat) else np.zeros(0, np.int32)
        need = np.zeros(n_in + n, bool)
        for a in outvars:
            if a.__class__ is not Const:
                need[a] = True
        for gs in self.guard_at.values():
            for g in gs:
                need[g.var] = True
        starts = start.tolist()
        for k in range(n - 1, -1, -1):   # backwards: an equation needed marks its arguments
            if need[n_in + k]:
                need[flat[starts[k]:starts[k + 1]]] = True
        return _packed_of(self, n_in, n, need, start, flat, outvars, name)


def _packed_of(trace, n_in, n, need, start, flat, outvars, name):
    """The :class:`Packed` of ``trace``'s arrays keeping the equations ``need`` marks,
    variables renumbered densely (inputs first, then equation outputs in order)."""
    keep = np.flatnonzero(need[n_in:])
    old_var = np.concatenate([np.arange(n_in), n_in + keep])
    new_of = np.full(n_in + n, -1, np.int64)
    new_of[old_var] = np.arange(len(old_var))
    counts = np.diff(start)[keep]
    rows = np.repeat(start[keep], counts) + (np.arange(counts.sum()) -
                                             np.repeat(np.cumsum(counts) - counts, counts))
    p = Packed()
    p.name, p.n_in, p.n = name, n_in, len(keep)
    p.templates = trace.templates
    p.tid = np.frombuffer(trace.tid, np.int32)[keep].copy()
    p.start = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    p.args = new_of[flat[rows]].astype(np.int32) if len(rows) else np.zeros(0, np.int32)
    p.aval_of = np.frombuffer(trace.aval_of, np.int32)[old_var].copy()
    p.avals = trace.aval_list
    p.outvars = [a if a.__class__ is Const else int(new_of[a]) for a in outvars]
    p.guards = {}
    for k, gs in trace.guard_at.items():   # k equations before: of those kept, how many
        pos = int(np.searchsorted(keep, k))
        for g in gs:
            p.guards.setdefault(pos, []).append(
                Guard(g.kind, int(new_of[g.var]), g.expected, g.where))
    return p
