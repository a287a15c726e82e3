"""Patterns that stay right at every point: the decision log and the re-detection.

A pattern found by running ``f`` once at ``x0`` is the structure of the path ``f``
took there. That path depends on ``x`` only through *decisions*: values computed
from the inputs that carry no derivative,

    zero-derivative primitives   comparisons, floor/ceil/round/sign, isnan, logical_*
    index functions              argmax/argmin/argsort/nonzero/searchsorted/all/any/...
    conversions                  bool(traced) (a Python ``if`` or ``while`` on a value)

Every pattern rule (:mod:`jacobians.rules`) is otherwise value-independent: ``sort``,
``maximum``, ``abs``, ``clip``, ``where`` and the ``max``/``min`` reductions take the
union over every entry that may win. So two points at which ``f`` makes the same
decisions have the same pattern P(x).

Detection therefore keeps a :class:`DecisionLog` on its trace, and a prepared pattern
(:class:`CheckedPattern`) logs the decisions of each compressed sweep at a new point on
the sweep's own trace (the log is read after the first chunk, when ``f`` has run
once). The pattern in use, U, is kept a superset of P(x) for every log in ``known``;
a log not in ``known`` stops the sweep, P(x) is detected at this point, U becomes
U ∪ P(x) (valid at every point seen: a coloring of U is a coloring of each P(x)) or,
when the output's shape itself changed (``v[v > 0]``), P(x) alone; U is colored
again when it grew, and the sweep runs again. So the cost of the check is a
copy of each decision and one set lookup per evaluation (3-5% of a reused sparse
Bratu Jacobian, n = 20000, which takes none), and one detection per new
combination of decisions.

Not covered (documented): values taken out of a box by hand
(``dualad.extend.primal_value``, ``.primal``) and user primitives whose pattern
rule reads values; a pattern passed as ``sparsity=`` is taken as given.
"""
from __future__ import annotations

__all__ = ["NewDecisions", "watched", "CheckedPattern"]

import copy

from dualad.extend import Box, flatten

from ._common import Problem
from .decisions import DecisionLog  # noqa: F401  (documented here)
from .sparse import (compressed_bidirectional, compressed_forward, compressed_hessian,
                     compressed_reverse)
from .sparsity import Sparsity, detect_hessian, detect_jacobian


class NewDecisions(Exception):
    """Raised inside a sweep whose function took decisions the pattern was not checked for."""


def watched(problem, log, depth):
    """A copy of ``problem`` whose next call of ``fun`` logs its decisions into ``log`` on
    the sweep's trace: the trace of the inputs' boxes (``depth`` 0), or of the boxes under
    them (1: the forward sweep under the gradient's tape of a Hessian)."""
    p = copy.copy(problem)
    fun, pending = problem.fun, [log]

    def fun_logged(*diff):
        if pending:
            lg = pending.pop()
            box = next((v for v in flatten(diff)[0] if isinstance(v, Box)), None)
            for _ in range(depth):
                box = box._inner if isinstance(box, Box) else None
            if isinstance(box, Box):
                box._trace.decisions = lg
        return fun(*diff)
    p.fun = fun_logged
    return p


class CheckedPattern:
    """A detected pattern with its coloring, evaluated at many points (see the module
    docstring). ``kind``: "forward", "reverse" or "bidirectional" (a Jacobian's
    compressed sweeps: a column, row or star bi- coloring) or "hessian"
    (forward-over-reverse with a star or an acyclic coloring). ``redetections`` counts the
    points at which the pattern had to be detected again; ``checks`` the sweeps checked."""

    MAX_KNOWN = 256   # logs remembered (each a copy of its masks); past it, start afresh

    def __init__(self, kind, sparsity, coloring):
        self.kind = kind
        self.state = (sparsity, coloring)   # swapped as one: a sweep reads a matching pair
        self.known = set()
        if sparsity.decisions is not None:
            self.known.add(sparsity.decisions.key())
        self.checked = sparsity.decisions is not None   # a given pattern is taken as is
        self.redetections = self.checks = 0
        self.points = 1

    @property
    def sparsity(self):
        return self.state[0]

    @property
    def coloring(self):
        return self.state[1]

    def evaluate(self, problem, chunk):
        """The flat result at ``problem``'s point (CSR), and the problem that computed it
        (its outputs set at this point)."""
        state = self.state
        if not self.checked:
            return self._sweep(problem, chunk, None, state), problem
        log = DecisionLog()
        p = watched(problem, log, 1 if self.kind == "hessian" else 0)
        known = self.known

        def check():
            self.checks += 1
            if log.key() not in known:
                raise NewDecisions
        try:
            return self._sweep(p, chunk, check, state), p
        except NewDecisions:
            pass
        state = self._redetect(problem, log)
        return self._sweep(problem, chunk, None, state), problem

    def _sweep(self, problem, chunk, check, state):
        run = {"forward": compressed_forward, "reverse": compressed_reverse,
               "bidirectional": compressed_bidirectional,
               "hessian": compressed_hessian}[self.kind]
        return run(problem, state[0].pattern, state[1], chunk, check)

    def _redetect(self, problem, log):
        """Detect the pattern at ``problem``'s point, merge it in; the new (sparsity,
        coloring), valid at this point."""
        fresh = Problem(problem.api, problem.f, problem.args,
                        problem.nums[0] if problem.single else problem.nums)
        new = (detect_hessian if self.kind == "hessian" else detect_jacobian)(fresh)
        self.redetections += 1
        self.points += 1
        old, coloring = self.state
        if new.pattern.shape == old.pattern.shape and len(self.known) < self.MAX_KNOWN:
            merged = ((old.pattern + new.pattern) != 0).tocsr()
            merged.sort_indices()
            grew = merged.nnz != old.nnz
            fallbacks = dict(old.fallbacks)
            for k, v in new.fallbacks.items():
                fallbacks[k] = max(fallbacks.get(k, 0), v)
            sparsity = Sparsity(merged, fallbacks, new.seconds,
                                source=f"detected (union over {self.points} points)",
                                census=old.census, decisions=old.decisions)
        else:      # the output's shape changed (the old points say nothing about this one),
            grew = True   # or too many logs are remembered: start afresh from this point
            sparsity = new
            sparsity.source = "detected again at the last new point"
        known = set(self.known) if sparsity is not new else set()
        known.add(log.key())
        known.add(new.decisions.key())
        state = (sparsity, self._color(sparsity.pattern) if grew else coloring)
        self.known, self.state = known, state   # (a new set: a concurrent check reads the old)
        return state

    def _color(self, pattern):
        from .acyclic import hessian_coloring
        from .acyclic_bicoloring import bicoloring
        from .coloring import column_coloring, row_coloring
        if self.kind == "hessian":    # star or acyclic, whichever needs fewer colors now
            return hessian_coloring(pattern, "auto", "hessian")[0]
        return {"forward": column_coloring, "reverse": row_coloring,
                "bidirectional": bicoloring}[self.kind](pattern)

    def describe(self):
        if not self.checked and self.sparsity.source.startswith("composed"):
            return ("Pattern check: off (the pattern was composed from that of the rest of "
                    "the function after its input selections, which took no decisions: it "
                    "holds at every point).")
        if not self.checked:
            return "Pattern check: off (the pattern was given: sparsity=...)."
        return (f"Pattern check: {self.checks} sweep(s) checked against the decisions "
                f"(comparisons, index functions, branches) of the detection; the pattern "
                f"was detected again at {self.redetections} point(s) where they differed.")
