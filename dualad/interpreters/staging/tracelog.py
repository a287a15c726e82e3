"""What ``dualad.jit`` tells the ``"dualad.jit"`` logger (:mod:`dualad.core.logs`).

- a trace: DEBUG for the first one of a signature, INFO for a retrace (the same
  signature traced again), with the reason: a new signature, or every kept program
  failed a guard (the guards they recorded), or something the function reads outside
  its arguments changed (the first change);
- a fallback to running ``f`` without jit: WARNING when the guards keep failing (the
  :class:`dualad.JitRetraceWarning` is warned as before), INFO when ``f`` closes over a
  traced value (a transformation of an enclosing function), WARNING when a prepared
  derivative could not be traced (besides its :class:`dualad.JitFallbackWarning`).

Only traces and fallbacks log, never a replay, so a jitted call that hits its cache pays
nothing; each message is built only when its level is enabled.
"""
from __future__ import annotations

__all__ = ["traced", "gave_up", "runs_eagerly", "WARNING"]

import numpy as np

from ...core.logs import DEBUG, INFO, WARNING, logger


def signature(leaves, traced):
    """The arguments as jit keys them, in words: ``(3,) float64, (), static 2``."""
    parts = []
    for x, t in zip(leaves, traced):
        if t:
            a = np.asarray(getattr(x, "val", x)) if not hasattr(x, "dtype") else x
            parts.append(f"{tuple(np.shape(a))} {getattr(a, 'dtype', type(a).__name__)}")
        else:
            parts.append(f"static {x!r}"[:60])
    return ", ".join(parts) or "no arguments"


def traced(name, entry, leaves, traced_flags):
    """A trace of ``name`` is about to run for the signature of ``entry`` (a retrace
    when it was traced before)."""
    level = DEBUG if entry.traces <= 1 else INFO
    log = logger("jit")
    if not log.isEnabledFor(level):
        return
    if entry.traces <= 1:
        reason = "first call with this signature"
    else:
        changed = [w for _, a in entry.programs for w in [a.changed()] if w]
        guards = sorted({g.describe() for c, _ in entry.programs for g in c.program.guards})
        reason = (f"what it reads outside its arguments changed: {changed[0]}" if changed
                  else f"each of the {len(entry.programs)} kept program(s) failed a guard "
                       f"(guards: {'; '.join(guards[:3]) or 'none'})")
    log.log(level, "dualad.jit(%s): trace %d for (%s): %s", name, entry.traces,
             signature(leaves, traced_flags), reason)


def gave_up(name, entry):
    """``name`` traced more than ``max_traces`` times for one signature: it runs without
    jit there (the JitRetraceWarning says so too)."""
    logger("jit").warning("dualad.jit(%s): traced %d times for the same signature, every replay "
                 "failing a guard; it now runs without jit for this signature", name,
                 entry.traces - 1)


def runs_eagerly(name, why, level=INFO):
    """One call (or, for a prepared derivative, every call of a signature) of ``name``
    runs without jit, because ``why``."""
    log = logger("jit")
    if log.isEnabledFor(level):
        log.log(level, "dualad.jit(%s): runs without jit: %s", name, why)
