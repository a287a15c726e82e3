"""Closure conversion of a scan's step: one trace, replayed at every step.

The binomial schedule (:mod:`dualad.transforms.scan.rules`) makes the whole loop ONE primitive, whose
rules must see every value the step depends on as an input: the carry, the slice of
``xs``, and the values of enclosing transformations the step closed over (the weights
``W`` of an RNN that ``grad`` differentiates). As JAX does, ``step`` is traced once, at
the first iteration's values, by a :class:`~dualad.interpreters.staging.trace.JitTrace` whose
:meth:`LiftingTrace.lift` turns each traced value of an enclosing transformation that a
primitive meets into an extra program input (``lifted``). The step becomes a pure
function of flat leaves,

    body(lifted, carry, x) -> (carry', y),

the recorded :class:`~dualad.interpreters.staging.program.Program` replayed through the primitives
(:func:`dualad.interpreters.staging.replay.run`), so every transformation of the rules interprets it;
plain inputs take the compiled program (:mod:`dualad.interpreters.staging.codegen`).

A guard of the program (Python control flow on a traced value, ``if c > 0``) that fails
at a later step means that step would run another program: :func:`guard_error` says so,
naming the step and the line, and never is a stale program replayed.
"""
from __future__ import annotations

import numpy as np

from ...core.tracer import Box, shape_of, unguarded_value
from ...core import tree
from ...frontend.objects import traced_outputs
from ...interpreters.staging.codegen import RETRACE, compile_program
from ...interpreters.staging.program import Const, Program
from ...interpreters.staging.replay import run as replay_run
from ...interpreters.staging.trace import JitBox, JitTrace

__all__ = ["trace_step", "example_value", "aval", "guard_error", "Traced",
           "LiftingTrace"]


def example_value(x):
    """A plain value of ``x``'s (per-example) shape and dtype with no guard recorded: the
    primal under every box; under ``vmap`` (leading batch axes beyond ``x.shape``) the
    first example."""
    plain = unguarded_value(x)
    if not isinstance(x, Box):
        return plain
    extra = np.ndim(plain) - len(x.shape)
    return np.asarray(plain)[(0,) * extra] if extra > 0 else plain


class LiftingTrace(JitTrace):
    """A jit trace that makes every enclosing trace's box it meets a program input."""

    __slots__ = ("lifted", "_by_id")

    def __init__(self):
        super().__init__()
        self.lifted = []      # the enclosing boxes, in the order met
        self._by_id = {}      # id(box) -> (box, its JitBox): each value lifted once

    def lift(self, box, prim=None):
        hit = self._by_id.get(id(box))
        if hit is not None:
            return hit[1]
        jb = self.input(example_value(box))
        self._by_id[id(box)] = (box, jb)   # the box is kept: its id stays unique
        self.lifted.append(box)
        return jb


class Traced:
    """The step as a pure function of leaves: ``program`` with inputs ``(lifted, carry,
    x)``, the enclosing values ``lifted``, and the output structure."""

    __slots__ = ("program", "lifted", "n_carry", "y_tree", "y_leaves", "name", "_compiled")

    def __init__(self, program, lifted, n_carry, y_tree, y_leaves, name):
        self.program = program
        self.lifted = lifted
        self.n_carry = n_carry
        self.y_tree = y_tree           # rebuild(y leaves) -> y, or None when y is None
        self.y_leaves = y_leaves       # the traced y leaves
        self.name = name
        try:
            self._compiled = compile_program(program, name="scan_step")[0]
        except Exception:   # pragma: no cover - codegen covers every program jit makes
            self._compiled = None

    def release(self):
        """Drop what only the caller needed (the enclosing boxes, the traced outputs)."""
        self.lifted = self.y_leaves = self.y_tree = None

    def __call__(self, lifted, carry, x):
        """``(carry', y)`` leaves of one step at these leaves (plain or traced)."""
        inputs = [*lifted, *carry, *x]
        if self._compiled is not None and not any(isinstance(v, Box) for v in inputs):
            out = self._compiled(*inputs)
        else:
            out = replay_run(self.program, inputs)
        if out is RETRACE:
            raise guard_error(self)
        return list(out[:self.n_carry]), list(out[self.n_carry:])


def guard_error(traced):
    guards = traced.program.guards
    where = sorted({g.describe() for g in guards})
    kinds = {g.kind for g in guards}
    hints = ["write a branch as a selection (np.where(cond, a, b), np.maximum, np.clip)"]
    if "int" in kinds:
        hints.append("pass values indexed by a traced integer (table[i] with i in the carry) "
                     "as xs, one slice per step")
    if "equal" in kinds:
        hints.append("keep values of the carry and x traced (float(x), x.item() or a NumPy "
                     "function without a dualad rule make them constants of the trace)")
    return ValueError(
        f"dualad.scan({traced.name}, checkpoints='binomial'): step was traced once, at the "
        f"first iteration, and at a later step its Python control flow on a traced value "
        f"would take another path ({'; '.join(where[:3]) or 'a guard'}). The binomial "
        f"schedule replays that one trace at every step, so what it decides must not depend "
        f"on the carry or xs: {'; '.join(hints)}; or pass checkpoints=None, which runs step "
        f"itself at every step")


def trace_step(step, name, carry_leaves, carry_rebuild, x_leaves, x_rebuild, split_out):
    """Trace ``step`` at the example values of the carry and the first ``x`` leaves (plain
    or traced), lifting the enclosing values it closes over; returns a :class:`Traced`.
    ``split_out(out) -> (carry', y)`` checks the step's return value."""
    trace = LiftingTrace()
    c_in = [trace.input(example_value(c)) for c in carry_leaves]
    x_in = [trace.input(example_value(x)) for x in x_leaves]
    invars = [b.var for b in c_in + x_in]
    try:
        out = traced_outputs(step(carry_rebuild(c_in), x_rebuild(x_in)))
        carry_out, y = split_out(out)
        co_leaves = tree.flatten(carry_out)[0]
        if y is None:
            y_leaves, y_tree = [], None
        else:
            y_leaves, y_tree = tree.flatten(y)
        outvars = [_atom(trace, v) for v in co_leaves + y_leaves]
    finally:
        trace.stop()
    lifted_vars = [trace._by_id[id(b)][1].var for b in trace.lifted]
    prog = Program(lifted_vars + invars, trace.body, outvars, trace.avals, name).pruned()
    return Traced(prog, list(trace.lifted), len(carry_leaves), y_tree, y_leaves, name)


def _atom(trace, v):
    """The program atom of one output leaf: its variable, a lifted enclosing value (the
    step returned a closed-over value itself), or a constant."""
    if v.__class__ is JitBox and v._trace is trace:
        return v.var
    if isinstance(v, Box):
        return trace.lift(v).var
    return Const(v)


def aval(x):
    """``(shape, dtype)`` of a leaf (plain or traced), with no guard."""
    return tuple(shape_of(x)), np.result_type(unguarded_value(x))
