"""The straight-line program a :func:`dualad.jit` trace records, and its printout.

A :class:`Program` is a list of equations ``v_k = prim(a_1, ..., a_n; params)`` over
numbered variables, in the order the trace met them, with guards among them. An
argument ``a_i`` is a variable (an ``int``) or a :class:`Const` (a value the trace did
not see depend on the inputs: a Python number, an array the function closed over, a
value it computed from those). A :class:`Guard` states a fact the function's Python
control flow relied on (``bool(v_k) is True``, ``int(v_k) == 3``, ``v_k`` equal to the
value it had); a replay whose guard fails is not that program, and the caller traces
again (:mod:`dualad.interpreters.staging.api`).

The equations are registry primitives, so a program is differentiable and batchable
like the function it came from: :func:`dualad.interpreters.staging.replay.run` evaluates it through the
primitives, which lets outer transformations trace it.
"""
from __future__ import annotations

import numpy as np

__all__ = ["Program", "Eqn", "Guard", "Const", "pretty"]


class Const:
    """A value the program holds: a Python number or an array (kept by reference: an
    array the function closed over is read when the program runs, not copied)."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __repr__(self):
        return _summary(self.value)


class Eqn:
    """``out = prim(*ins, **params)``; ``ins`` holds variables (ints) and Consts."""

    __slots__ = ("prim", "ins", "params", "out")

    def __init__(self, prim, ins, params, out):
        self.prim = prim
        self.ins = ins
        self.params = params
        self.out = out


class Guard:
    """A fact about variable ``var`` the trace relied on.

    ``kind``: ``"bool"`` (``bool(v) == expected``: an ``if``/``while`` on a traced value),
    ``"int"`` (``int(v) == expected``: an index, a count), ``"equal"`` (``v`` equal to the
    value it had at trace time: the function read the value itself). ``where`` names
    the line of the user's code that asked, for the message when a replay keeps failing.
    """

    __slots__ = ("kind", "var", "expected", "where")

    def __init__(self, kind, var, expected, where):
        self.kind = kind
        self.var = var
        self.expected = expected
        self.where = where

    def holds(self, value):
        """Whether the guard holds for ``value``, the variable's value in a replay."""
        kind = self.kind
        if kind == "bool":
            return bool(value) is self.expected
        if kind == "int":
            return int(value) == self.expected
        e = self.expected
        if isinstance(e, np.ndarray) or isinstance(value, np.ndarray):
            return np.shape(value) == np.shape(e) and bool(np.array_equal(value, e))
        return value == e

    def describe(self):
        what = {"bool": f"bool(v{self.var}) is {self.expected}",
                "int": f"int(v{self.var}) == {self.expected}",
                "equal": f"v{self.var} equal to its traced value"}[self.kind]
        return f"{what} ({self.where})" if self.where else what


class Program:
    """A recorded straight-line program (see the module docstring).

    ``invars``: the variables of the traced inputs, in the order of the flattened
    arguments; ``body``: Eqns and Guards in trace order; ``outvars``: one atom (a
    variable or a Const) per leaf of the output; ``avals[v]``: ``(type, shape, dtype)`` of
    variable ``v``'s value when it was traced (its Python type, for the code generator).
    """

    __slots__ = ("invars", "body", "outvars", "avals", "name")

    def __init__(self, invars, body, outvars, avals, name="f"):
        self.invars = invars
        self.body = body
        self.outvars = outvars
        self.avals = avals
        self.name = name

    @property
    def eqns(self):
        return [e for e in self.body if e.__class__ is Eqn]

    @property
    def guards(self):
        return [g for g in self.body if g.__class__ is Guard]

    def pruned(self):
        """The program without equations that neither an output nor a guard needs
        (dead code: e.g. the primal value when only its gradient is returned). Guards
        stay: a replay must still check every decision the trace took."""
        live = {a for a in self.outvars if a.__class__ is int}
        for g in self.body:
            if g.__class__ is Guard:
                live.add(g.var)
        keep = []
        add = live.add
        for e in reversed(self.body):
            if e.__class__ is Guard:
                keep.append(e)
            elif e.out in live:
                keep.append(e)
                for a in e.ins:
                    if a.__class__ is int:
                        add(a)
        keep.reverse()
        return Program(self.invars, keep, self.outvars, self.avals, self.name)

    def __str__(self):
        return pretty(self)


def _atom(a):
    return f"v{a}" if a.__class__ is int else repr(a)


def _summary(v):
    """A value for the listing: an array of more than 4 entries as ``<dtype[shape]>``."""
    if isinstance(v, np.ndarray) and v.size > 4:
        return f"<{v.dtype}{list(v.shape)}>"
    try:
        return repr(v)
    except Exception:  # noqa: BLE001 - a user's __repr__ that raises: the listing still prints
        return f"<{type(v).__name__} object>"


def _param(v):
    if callable(v) and hasattr(v, "__name__"):
        return v.__name__
    return _summary(v)


def _aval(aval):
    kind, shape, dtype = aval
    if kind is np.ndarray:
        return f"{dtype}{list(shape)}"
    return f"{dtype}" if kind is not float else "float"


def pretty(prog):
    """The program as text, one equation per line (a jaxpr-like listing)."""
    lines = [f"{{ lambda {', '.join(f'v{v}:{_aval(prog.avals[v])}' for v in prog.invars)} ."]
    for e in prog.body:
        if e.__class__ is Guard:
            lines.append(f"    guard {e.describe()}")
            continue
        params = "".join(f", {k}={_param(v)}" for k, v in e.params.items())
        lines.append(f"    v{e.out}:{_aval(prog.avals[e.out])} = {e.prim.name}"
                     f"({', '.join(_atom(a) for a in e.ins)}{params})")
    lines.append(f"  in ({', '.join(_atom(a) for a in prog.outvars)}) }}")
    return "\n".join(lines)
