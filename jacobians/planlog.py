"""What the planner tells the ``"dualad.jacobians"`` logger (docs/logging.md).

One INFO line per decision: a :class:`~jacobians.plan.Plan` made (by :func:`jacobians.plan`
or ``mode="auto"``'s first call of a signature), a choice reused from a function of the
same code, or ``hessian(mode="auto")``'s choice. The line names the call, the mode, the
directions and sweeps (with the coloring and its colors for a sparse mode) and why; at
DEBUG a plan's whole ``explain()`` follows (the estimated cost of every alternative).
Nothing is built unless the level is enabled, and a call that reuses a cached choice logs
nothing.
"""
from __future__ import annotations

__all__ = ["planned", "chose"]

import logging

from dualad.extend import logger

from ._common import counted

_LOG = logger("jacobians")


def planned(plan):
    """A :class:`~jacobians.plan.Plan` was made: its choice (INFO), its explanation (DEBUG)."""
    if not _LOG.isEnabledFor(logging.INFO):
        return
    p = plan.problem
    colors = ""
    if plan.sparse:
        coloring = {"sparse-forward": "a column coloring", "sparse-reverse": "a row coloring",
                    "sparse-bidirectional": "a star bicoloring"}.get(plan.mode, "a coloring")
        colors = f" ({coloring}: {counted(plan.directions, 'color')})"
    _LOG.info("jacobians.%s(%s): plan %s, n=%d, m=%d: %s%s in %d sweep(s) of up to %d; "
              "why: %s", p.api, p.name, plan.mode, plan.n, plan.m,
              counted(plan.directions, "direction"), colors, plan.n_chunks,
              min(plan.chunk_size, max(1, plan.directions)), plan.how)
    if _LOG.isEnabledFor(logging.DEBUG):
        _LOG.debug("jacobians.%s(%s): the plan explained:\n%s", p.api, p.name,
                   plan.explain())


def chose(problem, what, mode, chunk, why):
    """A choice made without a :class:`Plan` (``what``: "hessian", "reused"): INFO."""
    if _LOG.isEnabledFor(logging.INFO):
        _LOG.info("jacobians.%s(%s): %s %s, chunks of up to %d directions; why: %s",
                  problem.api, problem.name, what, mode, chunk, why)
