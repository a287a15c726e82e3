"""Running a recorded program through the primitives: how a jitted function composes.

Called with traced inputs (``grad(jit(f))``, ``vmap(jit(f))``, ``jvp``, the planner, a
jit trace of an enclosing ``jit``), the program's equations are applied as primitive
calls, which every enclosing transformation interprets as it would have interpreted
``f``; the guards are asked of the traced values (``bool``/``int`` of them, which each
transformation answers in its own way: vmap refuses a branch on a batched value).
"""
from __future__ import annotations

import numpy as np

from ...core.tracer import Box, primal_value, staged_only, truth
from .codegen import RETRACE
from .program import Guard


def run(prog, inputs):
    """The output leaves of ``prog`` at ``inputs`` (plain or traced), or RETRACE when a
    guard does not hold."""
    env = dict(zip(prog.invars, inputs))
    get = env.__getitem__
    for e in prog.body:
        if e.__class__ is Guard:
            v = get(e.var)
            if e.kind == "equal":
                if isinstance(v, Box) and not staged_only(v):
                    # The trace used this value as a constant (float(x), x.item(), a NumPy
                    # function with no rule): under a derivative or batch level that would
                    # drop its derivative. Only f itself knows (float(x) raises there, a
                    # rule's decision composes): the caller runs f.
                    return RETRACE
                ok = e.holds(primal_value(v))
            elif e.kind == "bool":
                ok = (truth(v) if isinstance(v, Box) else bool(v)) is e.expected
            else:
                ok = int(v) == e.expected   # a box's int() logs the decision (casts.to_int)
            if not ok:
                return RETRACE
            continue
        args = [get(a) if a.__class__ is int else a.value for a in e.ins]
        env[e.out] = e.prim(*args, **e.params)
    return tuple(get(a) if a.__class__ is int else fresh(a.value) for a in prog.outvars)


def fresh(value):
    """A constant output as the caller receives it: an array as a new copy (the program
    holds the one array; a caller may write into what it gets back)."""
    return value.copy() if isinstance(value, np.ndarray) else value


__all__ = ["run", "fresh"]
