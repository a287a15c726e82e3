"""A loop as ONE primitive whose step is a recorded program: what ``dualad.scan`` becomes
under a :func:`dualad.jit` trace, and what its rules become. This module holds the loop's
description and the pieces below the primitive; the primitive, its rules and the entry
:func:`~dualad.transforms.scan.loop_rules.loop_call` are :mod:`dualad.transforms.scan.loop_rules` (the rules make
loops of their own, so the three live together).

A :class:`LoopSpec` holds the step as a :class:`~dualad.interpreters.staging.program.Program` over flat
leaves, ``step(consts, c_k, x_k) -> (c_{k+1}, y_k)``, traced once; the primitive
(:func:`~dualad.transforms.scan.loop_rules.loop_primitive`) takes ``(consts..., c_0..., xs...)`` and its value packs into one
1-D array (the tape keeps one value per node)

    [c_l leaves | ys leaves, each (l,) + y's shape].

Its implementation runs the step's compiled program once per step (a Python ``for``), so a
jit program holding the equation compiles the step once, however long the loop.

:func:`~dualad.transforms.scan.loop_rules.loop_call` is the one entry: it traces a step function (plain Python over leaves,
written with registry operations) at example values and calls the primitive, or, when
the traced step holds a guard (Python control flow on a traced value, which one program
cannot follow from step to step), runs the step function itself at every step (the
loop unrolled into whatever trace is recording, exact as before).
"""
from __future__ import annotations

import numpy as np

from ...interpreters.staging.codegen import compile_program
from ...interpreters.staging.program import Program
from .closure import LiftingTrace, _atom, aval, example_value
from .rules import _inexact, _size, _stack

__all__ = ["LoopSpec", "trace_leaves", "python_loop", "first_slices", "pack_steps"]


class LoopSpec:
    """The loop of one recorded step: ``program`` with inputs ``(consts, carry, x)`` and
    outputs ``(carry', y)``, no guards; ``(shape, dtype)`` of each leaf (``x_avals``,
    ``y_avals``: one step's slice); ``l`` steps, ``reverse`` as scan's."""

    __slots__ = ("program", "name", "k_avals", "c_avals", "x_avals", "y_avals", "l",
                 "reverse", "_fn")

    def __init__(self, program, name, k_avals, c_avals, x_avals, y_avals, l, reverse,
                 fn=None):
        self.program, self.name = program, name
        self.k_avals, self.c_avals = list(k_avals), list(c_avals)
        self.x_avals, self.y_avals = list(x_avals), list(y_avals)
        self.l, self.reverse = l, reverse
        self._fn = fn

    @property
    def order(self):
        """The positions of ``xs`` in the order the steps take them."""
        return range(self.l - 1, -1, -1) if self.reverse else range(self.l)

    @property
    def out_avals(self):
        return list(self.c_avals) + [((self.l,) + s, d) for s, d in self.y_avals]

    def step(self):
        """The step's compiled program (compiled at the first use)."""
        if self._fn is None:
            self._fn = compile_program(self.program, name="scan_step")[0]
        return self._fn


def pack_steps(c, steps, out_avals, y_avals, pd, name):
    """The packed value ``[c leaves | ys leaves stacked]`` of a loop's final carry ``c``
    and its steps' ys (``steps``: one tuple per step, in the order of xs)."""
    nc = len(c)
    packed = np.empty(sum(_size(s) for s, _ in out_avals), pd)
    views, start = [], 0
    for s, _ in out_avals:
        n = _size(s)
        views.append(packed[start:start + n].reshape(s))
        start += n
    for buf, v in zip(views, c):
        buf[...] = v
    for buf, values, (s, d) in zip(views[nc:], zip(*steps), y_avals):
        _stack_into(buf, values, s, d)
    for j, (s, d) in enumerate(out_avals):
        if not _inexact(d):   # integer leaves ride along exactly (up to 2**53 in float64)
            _exact(views[j], j, s, pd, name)
    return packed


def _stack_into(buf, values, shape, dtype):
    """``buf[k] = values[k]`` for every k, in one call: each value has ``shape``."""
    if not values:
        return
    if not shape:
        buf[...] = np.fromiter(values, dtype, len(values))
    else:
        np.concatenate(values, out=buf.reshape((-1,) + shape[1:]))


def _exact(view, j, shape, pd, name):
    """Raise when an integer leaf packed in ``pd`` may have lost its value (a float
    rounds only magnitudes from 2**53 (float64) or 2**24 (float32) on)."""
    bound = 2.0 ** (np.finfo(pd).nmant + 1)
    if view.size and not np.all(np.abs(view) < bound):
        raise OverflowError(f"dualad.{name}: the integer output leaf {j} (shape {shape}) "
                            f"holds values too large to carry exactly in {pd}; keep such "
                            f"integers out of the carry")


def trace_leaves(fn, name, consts, carry, x_first):
    """Trace ``fn(consts, carry, x) -> (carry', y)`` (lists of leaves, registry operations)
    at the example values of ``consts``, ``carry`` and ``x_first`` (one step's slices);
    values of enclosing transformations it closes over become extra consts. Returns
    ``(program, lifted, y_avals)`` with program inputs ``(consts, lifted, carry, x)``, or
    None when the program holds a guard or changes a carry leaf's shape or dtype (then
    one program cannot stand for every step)."""
    trace = LiftingTrace()
    k_in = [trace.input(example_value(v)) for v in consts]
    c_in = [trace.input(example_value(v)) for v in carry]
    x_in = [trace.input(example_value(v)) for v in x_first]
    try:
        c_out, y_out = fn(k_in, c_in, x_in)
        outvars = [_atom(trace, v) for v in list(c_out) + list(y_out)]
    finally:
        trace.stop()
    if any(aval(o) != aval(i) for o, i in zip(c_out, c_in)):
        return None
    lifted_vars = [trace._by_id[id(b)][1].var for b in trace.lifted]
    invars = [b.var for b in k_in] + lifted_vars + [b.var for b in c_in + x_in]
    prog = Program(invars, trace.body, outvars, trace.avals, name).pruned()
    if prog.guards:
        return None
    return prog, list(trace.lifted), [aval(v) for v in y_out]


def first_slices(xs, reverse, lead=0):
    """Plain example values of the slice of each ``xs`` leaf the first step takes (axis
    ``lead``; ``example_value``: no guard recorded)."""
    out = []
    for x in xs:
        v = np.asarray(example_value(x))
        out.append(v[(slice(None),) * lead + (v.shape[lead] - 1 if reverse else 0,)])
    return out


def python_loop(fn, consts, carry, xs, l, reverse):
    """The loop of ``fn`` in Python: every step recorded by whatever trace is active."""
    c, ys = list(carry), []
    for i in (range(l - 1, -1, -1) if reverse else range(l)):
        c, y = fn(list(consts), c, [x[i] for x in xs])
        c = list(c)
        ys.append(list(y))
    if reverse:
        ys.reverse()
    ny = len(ys[0]) if ys else 0
    return c, [_stack([y[j] for y in ys]) for j in range(ny)]
