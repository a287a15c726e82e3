"""Groups of elementwise equations a compiled kernel can evaluate in one loop.

:func:`groups` finds, in a recorded :class:`~dualad.interpreters.staging.program.Program`, maximal
connected sets of elementwise equations over float64 arrays of one shape (the loop's
domain), the operands broadcast to it (arrays of that rank or lower whose dimensions
are that size or 1, float scalars, real constants). A group is a graph, not only a
chain: every member's value that an equation outside the group, a guard or the
output reads is one of the group's outputs. A group stops growing (is *sealed*) where
something outside it reads one of its values, so the whole group can run at the place
of its last member: each of its inputs is computed before, each outside use comes after.

The analysis knows no compiler: :mod:`dualad.interpreters.staging.numba_backend` writes one kernel per
group. Only float64 arithmetic and functions are members, plus comparisons of floats
(bool) and ``where`` selecting between floats with such a bool; anything else (integer,
complex, float32 dtypes, a primitive of the user's) stays a NumPy call, so a kernel
never has to reproduce NumPy's type promotion.
"""
from __future__ import annotations

import numpy as np

from .passes import known
from .program import Eqn, Guard

__all__ = ["Group", "groups", "EXPRESSIONS", "MIN_MEMBERS"]

F64 = np.dtype(np.float64)
BOOL = np.dtype(np.bool_)

# A group of fewer members stays NumPy calls: a kernel call costs about as much as one
# NumPy call, and each new kernel costs a compilation.
MIN_MEMBERS = 3
MAX_RANK = 4

# name -> (number of operands, the scalar expression; {0}, {1}: the operands)
ARITH = {
    "add": (2, "{0} + {1}"), "subtract": (2, "{0} - {1}"), "multiply": (2, "{0} * {1}"),
    "divide": (2, "{0} / {1}"), "negative": (1, "-{0}"), "positive": (1, "+{0}"),
    "square": (1, "{0} * {0}"), "reciprocal": (1, "1.0 / {0}"), "absolute": (1, "abs({0})"),
    "sqrt": (1, "np.sqrt({0})"), "exp": (1, "np.exp({0})"), "log": (1, "np.log({0})"),
    "expm1": (1, "np.expm1({0})"), "log1p": (1, "np.log1p({0})"), "sin": (1, "np.sin({0})"),
    "cos": (1, "np.cos({0})"), "tanh": (1, "np.tanh({0})"),
    "broadcast_to": (1, "{0}"),
}
COMPARE = {"equal": "==", "not_equal": "!=", "less": "<", "less_equal": "<=",
           "greater": ">", "greater_equal": ">="}
EXPRESSIONS = dict(ARITH)
EXPRESSIONS.update({k: (2, "{0} %s {1}" % op) for k, op in COMPARE.items()})
EXPRESSIONS["where"] = (3, "{1} if {0} else {2}")


class Group:
    """One fusible group: ``members`` (Eqns, in program order), the loop's ``shape``,
    ``sealed`` once something outside reads a member."""

    __slots__ = ("members", "shape", "sealed", "id")

    def __init__(self, gid, shape):
        self.id, self.shape, self.members, self.sealed = gid, shape, [], False


def _operand(a, avals):
    """``"f"`` (a float64 array or scalar), ``"b"`` (a bool array) or None."""
    if a.__class__ is int:
        kind, shape, dtype = avals[a]
        if kind is float or kind is np.float64:
            return "f"
        if kind is np.ndarray and dtype is not None and len(shape) <= MAX_RANK:
            dt = np.dtype(dtype)
            return "f" if dt == F64 else "b" if dt == BOOL else None
        return None
    v = a.value
    if v.__class__ is float or v.__class__ is np.float64:
        return "f"
    if v.__class__ is int and -2 ** 53 <= v <= 2 ** 53:
        return "f"          # NumPy converts a Python int to the float64 array's dtype
    if v.__class__ is np.ndarray and v.dtype == F64 and v.ndim <= MAX_RANK:
        return "f"
    return None


def _shape(a, avals):
    if a.__class__ is int:
        kind, shape, _ = avals[a]
        return tuple(shape) if kind is np.ndarray else ()
    return getattr(a.value, "shape", ())


def _broadcasts(shape, out):
    """Whether an operand of ``shape`` broadcasts to ``out`` without changing rank rules."""
    if len(shape) > len(out):
        return False
    return all(s == o or s == 1 for s, o in zip(reversed(shape), reversed(out)))


def eligible(e, avals, unfusible):
    """The loop shape of equation ``e`` when it can be a member, else None."""
    if e.__class__ is not Eqn:
        return None
    name = known(e.prim)
    spec = EXPRESSIONS.get(name)
    if spec is None or len(e.ins) != spec[0]:
        return None
    if name == "broadcast_to":
        if list(e.params) != ["shape"]:
            return None
    elif e.params:
        return None
    kind, out_shape, dtype = avals[e.out]
    if kind is not np.ndarray or not out_shape or len(out_shape) > MAX_RANK or dtype is None:
        return None
    out_shape = tuple(out_shape)
    kinds = [_operand(a, avals) for a in e.ins]
    if name == "where":
        want, out_dtype = ["b", "f", "f"], F64
    elif name in COMPARE:
        want, out_dtype = ["f", "f"], BOOL
    else:
        want, out_dtype = ["f"] * spec[0], F64
    if kinds != want or np.dtype(dtype) != out_dtype:
        return None
    for a in e.ins:
        if a.__class__ is int and a in unfusible:
            return None
        if not _broadcasts(_shape(a, avals), out_shape):
            return None
    return out_shape


def groups(prog, min_members=MIN_MEMBERS, scatter_readers=False):
    """The fusible groups of ``prog`` with at least ``min_members`` members, in the order
    of their last members (see the module docstring). ``scatter_readers``: an operation
    reading an ``untake``'s output may join a group too (the one-function Numba writer has
    no scatter-add chains; the NumPy backends keep those additions NumPy's)."""
    avals = prog.avals
    # the terms of a scatter-add chain stay NumPy additions (specialize.find_chains)
    unfusible = () if scatter_readers else \
        {e.out for e in prog.body if e.__class__ is Eqn and known(e.prim) == "untake"}
    group_of = {}
    found = []

    def seal(v):
        g = group_of.get(v)
        if g is not None:
            g.sealed = True

    for item in prog.body:
        if item.__class__ is Guard:
            seal(item.var)
            continue
        shape = eligible(item, avals, unfusible)
        if shape is None:
            for a in item.ins:
                if a.__class__ is int:
                    seal(a)
            continue
        joined = []
        for a in item.ins:
            g = group_of.get(a) if a.__class__ is int else None
            if g is None:
                continue
            if g.sealed or g.shape != shape:
                g.sealed = True
            elif g not in joined:
                joined.append(g)
        if not joined:
            g = Group(len(found), shape)
            found.append(g)
        else:
            g = joined[0]
            for other in joined[1:]:          # two graphs meet: one group
                g.members.extend(other.members)
                for m in other.members:
                    group_of[m.out] = g
                other.members = []
        g.members.append(item)
        group_of[item.out] = g
    order = {id(e): k for k, e in enumerate(prog.body)}
    out = []
    for g in found:
        if len(g.members) >= min_members:
            g.members.sort(key=lambda m: order[id(m)])
            out.append(g)
    out.sort(key=lambda g: order[id(g.members[-1])])
    return out


def boundaries(prog, found):
    """``[(inputs, outputs)]`` of each group in ``found``: the atoms it reads from
    outside (variables and constants, each variable once, in order of first use) and the
    members whose values are read outside it (by an equation of no or another group, a
    guard or the program's output). One pass over the program."""
    member_of = {}
    for k, g in enumerate(found):
        for m in g.members:
            member_of[id(m)] = k
    group_of_var = {m.out: k for k, g in enumerate(found) for m in g.members}
    outside = {a for a in prog.outvars if a.__class__ is int}
    for e in prog.body:
        if e.__class__ is Guard:
            outside.add(e.var)
            continue
        k = member_of.get(id(e))
        for a in e.ins:
            if a.__class__ is int and (k is None or group_of_var.get(a) != k):
                outside.add(a)
    out = []
    for g in found:
        inside = {m.out for m in g.members}
        inputs, seen = [], set()
        for m in g.members:
            for a in m.ins:
                if a.__class__ is int:
                    if a in inside or a in seen:
                        continue
                    seen.add(a)
                inputs.append(a)
        out.append((inputs, [m.out for m in g.members if m.out in outside]))
    return out


def const_operand(a):
    """A constant operand as the kernel receives it: a number as a float, an array as is."""
    v = a.value
    return v if v.__class__ is np.ndarray else float(v)


__all__ += ["boundaries", "eligible", "const_operand"]
