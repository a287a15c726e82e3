"""``vjp`` of a recorded program as two compiled programs: a forward that also returns the
residuals, and a backward that reads them (JAX's partial evaluation of a linearized
program). Used by :mod:`dualad.interpreters.staging.transformed` for a jitted call under a first-order
reverse transformation whose output is not one real number."""
from __future__ import annotations

import numpy as np

from ...transforms.api import vjp
from .codegen import RETRACE, compile_program
from .program import Eqn, Program
from .replay import run as replay_run

__all__ = ["Split"]

_NDARRAY = np.ndarray


class _GuardFailed(Exception):
    """A rule's replay of the program met a guard that does not hold at its values."""


def _replay(prog, inputs):
    out = replay_run(prog, inputs)
    if out is RETRACE:
        raise _GuardFailed(prog.name)
    return out


def _at(prog, xs, wanted):
    """``prog`` as a function of its inputs at the positions ``wanted``, the others
    fixed at ``xs``: ``w -> outputs of prog(xs with xs[wanted[k]] = w[k])``, a tuple."""
    def restricted(*w):
        full = list(xs)
        for i, v in zip(wanted, w):
            full[i] = v
        return tuple(_replay(prog, full))
    return restricted


class Split:
    """``vjp(program)`` as two compiled programs, JAX's partial evaluation of a linearized
    program: the joint program ``(x, ȳ) -> (y, x̄)`` traced once, its equations that do
    not depend on ``ȳ`` the forward ``x -> (y, residuals)``, the others the backward
    ``(residuals, ȳ) -> x̄``; the residuals are the forward's values the backward reads."""

    __slots__ = ("forward", "back_fn", "ct_types")

    @classmethod
    def of(cls, t, wanted, primals):
        prog, n = t.prog, t.n_in

        def joint(*leaves):
            xs, cts = list(leaves[:n]), leaves[n:]

            ys, back = vjp(_at(prog, xs, wanted), *[xs[i] for i in wanted])
            return tuple(ys) + tuple(back(tuple(cts)))
        joint.__name__ = f"vjp({t.name})"
        examples = [np.ones(s, d)[()] for s, d in t.out_avals]
        g = t.make_jit(joint).program(*primals, *examples)
        seeds = set(g.invars[n:])
        late = set(seeds)
        fwd, bwd = [], []
        for e in g.body:
            if e.__class__ is not Eqn:   # a guard
                (bwd if e.var in late else fwd).append(e)
            elif any(a.__class__ is int and a in late for a in e.ins):
                late.add(e.out)
                bwd.append(e)
            else:
                fwd.append(e)
        k = len(t.out_avals)
        ys, xbars = g.outvars[:k], g.outvars[k:]
        if any(a.__class__ is int and a in late for a in ys):
            return None
        read = {a for e in bwd for a in (e.ins if e.__class__ is Eqn else (e.var,))
                if a.__class__ is int} | {a for a in xbars if a.__class__ is int}
        residuals = sorted(read - late)
        forward = Program(g.invars[:n], fwd, list(ys) + residuals, g.avals,
                          f"{t.name}_forward").pruned()
        backward = Program(residuals + list(g.invars[n:]), bwd, list(xbars), g.avals,
                           f"{t.name}_backward").pruned()
        return cls(compile_program(forward, name=forward.name)[0],
                   compile_program(backward, name=backward.name)[0],
                   [type(x) for x in examples], t.out_avals)

    def __init__(self, forward, back_fn, ct_types, out_avals):
        self.forward = forward
        self.back_fn = back_fn
        self.ct_types = list(zip(ct_types, out_avals))

    def backward(self, residuals, ct_leaves):
        """The cotangents of the differentiated inputs, or None when ``ct_leaves`` are not
        the plain cotangents the backward was compiled for (batched, another dtype)."""
        if ct_leaves is None:
            return None
        cts = []
        for c, (kind, (shape, dtype)) in zip(ct_leaves, self.ct_types):
            if kind is _NDARRAY:
                if c.__class__ is not _NDARRAY or c.shape != shape or c.dtype != dtype:
                    return None
            elif np.shape(c) != () or np.result_type(c) != dtype:
                return None
            else:
                c = kind(c)
            cts.append(c)
        out = self.back_fn(*residuals, *cts)
        return None if out is RETRACE else out
