"""The predicate and the body of a while loop as recorded programs over flat leaves.

Both are traced once, at the example values of the initial carry, by a
:class:`~dualad.transforms.scan.closure.LiftingTrace`: the values of enclosing
transformations they close over (the parameters ``grad`` differentiates, a jit trace's
inputs) become extra program inputs, *lifted*. So

    cond(k_cond, c) -> p        body(k_body, c) -> c'

are pure functions of leaves, replayed through the primitives (every transformation
interprets them) or, on plain values, run compiled. A program holding a guard (Python
control flow on a traced value) cannot stand for every trip and is refused.
"""
from __future__ import annotations

import numpy as np

from ...core.tracer import Box
from ...frontend.objects import traced_outputs
from ...interpreters.staging.codegen import compile_program
from ...interpreters.staging.program import Const, Program
from ...interpreters.staging.replay import run as replay_run
from ...interpreters.staging.trace import JitBox
from ..scan.closure import LiftingTrace, aval, example_value

__all__ = ["LeafProgram", "trace_leaves"]


class LeafProgram:
    """One traced function of the carry leaves: ``program`` with inputs ``(lifted,
    carry)``; ``lifted`` the enclosing values it closed over (dropped by
    :meth:`release`); ``out_avals`` the ``(shape, dtype)`` of each output leaf."""

    __slots__ = ("program", "lifted", "out_avals", "_compiled")

    def __init__(self, program, lifted, out_avals):
        self.program, self.lifted, self.out_avals = program, lifted, out_avals
        self._compiled = None

    def release(self):
        self.lifted = None

    def __call__(self, lifted, carry):
        """The output leaves at these leaves (plain: compiled; traced: replayed)."""
        inputs = [*lifted, *carry]
        if any(isinstance(v, Box) for v in inputs):
            return list(replay_run(self.program, inputs))
        if self._compiled is None:
            self._compiled = compile_program(self.program, name="while_loop_fn")[0]
        return list(self._compiled(*inputs))


def _atom(trace, v):
    if v.__class__ is JitBox and v._trace is trace:
        return v.var
    if isinstance(v, Box):
        return trace.lift(v).var
    return Const(v)


def trace_leaves(fn, name, what, carry):
    """Trace ``fn(carry leaves) -> output leaves`` at the example values of ``carry``.
    ``what`` names ``fn`` in the error raised when its trace holds a guard."""
    trace = LiftingTrace()
    c_in = [trace.input(example_value(v)) for v in carry]
    try:
        out = [traced_outputs(v) for v in fn(c_in)]
        outvars = [_atom(trace, v) for v in out]
    finally:
        trace.stop()
    lifted_vars = [trace._by_id[id(b)][1].var for b in trace.lifted]
    prog = Program(lifted_vars + [b.var for b in c_in], trace.body, outvars, trace.avals,
                   name).pruned()
    if prog.guards:
        where = "; ".join(sorted({g.describe() for g in prog.guards})[:3])
        raise ValueError(
            f"{what} branches on a traced value ({where}). dualad.while_loop traces it "
            f"once and replays that trace at every trip, so its Python control flow must "
            f"not depend on the carry: write a branch as a selection (np.where(p, a, b), "
            f"np.maximum, np.clip), and keep carry values traced (no float(x), x.item())")
    return LeafProgram(prog, list(trace.lifted), [_aval(v) for v in out])


def _aval(v):
    if isinstance(v, (bool, np.bool_)):
        return (), np.dtype(bool)
    return aval(v)
