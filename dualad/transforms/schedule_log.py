"""What the checkpointing schedules tell the ``"dualad.checkpoint"`` logger (docs/logging.md).

One INFO line each time a checkpointed reverse sweep chooses its schedule:

- ``scan(checkpoints="binomial")``: the loop's length ``l``, the snapshots ``s`` and
  the untaped advances of the step revolve's schedule makes in the reverse sweep,
  :math:`t(l, s)` of :func:`dualad.revolve.forward_steps` (each step is then taped once
  more to be pulled back);
- ``while_loop``: the trips ``n`` the online sweep ran, the snapshots placed online and
  where they ended up;
- ``grad(f, max_memory=)`` / :func:`dualad.remat_plan`: the remat plan (segments, peak
  bytes, recomputed flops), its ``explain()`` at DEBUG, or why none was made.

Each message is built only when its level is enabled.
"""
from __future__ import annotations

__all__ = ["binomial", "online", "remat"]

from ..core.logs import DEBUG, INFO, logger


def binomial(name, steps, snapshots):
    """``name`` (``"scan(step)"``) is about to reverse ``steps`` steps by revolve with ``snapshots`` stored."""
    log = logger("checkpoint")
    if not log.isEnabledFor(INFO):
        return
    from ..revolve import forward_steps
    evals = forward_steps(steps, snapshots)
    log.info("%s: binomial checkpointing: %d steps reversed with %d snapshot(s): the "
              "schedule advances the step %d times without a tape (t(l, s), %.2f per step), "
              "then tapes each step once", name, steps, snapshots, evals,
              evals / max(1, steps))


def online(name, trips, snapshots, schedule, stored):
    """``while_loop``'s online sweep ran ``trips`` trips keeping the states ``stored``."""
    log = logger("checkpoint")
    if log.isEnabledFor(INFO):
        kept = sorted(stored)
        where = ", ".join(map(str, kept[:12])) + (", ..." if len(kept) > 12 else "")
        log.info("while_loop(%s): %d trips; %d snapshot slot(s) placed online (%s): states "
                  "held at steps %s; the reversal recomputes from them", name, trips,
                  snapshots, schedule, where)


def remat(plan):
    """A remat schedule was made (or none, ``plan.fallback`` saying why); returns ``plan``."""
    log = logger("checkpoint")
    if not log.isEnabledFor(INFO):
        return plan
    if plan.fallback:
        log.info("remat(%s): no schedule within max_memory=%d bytes: %s; every value is "
                  "stored", plan.name, plan.budget, plan.fallback)
        return plan
    log.info("remat(%s): %d taped segment(s) over %d equations, peak %d of %d bytes "
              "(store-all %d), %.3g recomputed flops of %.3g", plan.name, len(plan.segments),
              plan.n_eqns, plan.peak, plan.budget, plan.store_all, plan.recomputed_flops,
              plan.total_flops)
    if log.isEnabledFor(DEBUG):
        log.debug("remat(%s): the schedule:\n%s", plan.name, plan.explain())
    return plan
