"""Reading traced values without pinning a dualad.jit program to them.

A rule that looks at a value (``primal_value(x)``) under a :func:`dualad.jit` trace
records an "equal" guard: the program then holds only for that very value, and every
new input traces again. Two ways out, for the two kinds of read:

- the read decides only a dtype, a shape or a type: :func:`dualad.core.tracer.unguarded_value`;
- the read picks a cheaper path that the general path also computes correctly (no nan
  present, so no nan handling; no zero, so a plain division): under a jit trace take the
  general path, written in registry operations, which the program records and replays
  for every value (:func:`is_staged`); or pass the value itself to registry operations
  (:func:`staged_value`), keeping the jit trace's box under the derivative boxes.

Reads whose value decides the result (a pivot order computed by LAPACK, a solver's
choice) stay guarded: a new value is another program.
"""
from __future__ import annotations

import numpy as np

from .tracer import CONCRETE, Box, primal_value


def is_staged(x) -> bool:
    """Whether ``x`` (or a value in a list/tuple of them) is being recorded by a
    dualad.jit trace: a shortcut chosen from its value would be baked into the program,
    so callers take the path that is right for every value instead."""
    if type(x) is list or type(x) is tuple:
        return any(is_staged(v) for v in x)
    while isinstance(x, Box):
        if x.__class__ in CONCRETE:
            return True
        x = x._inner
    return False


def staged_unbatched(x) -> bool:
    """:func:`is_staged` and not batched by vmap: a computation on ``x`` may be recorded
    in the jit program as it stands (under vmap each example has its own value, and the
    callers' per-example paths apply)."""
    from ..interpreters.batching.tracer import batch_tracer_in
    return is_staged(x) and batch_tracer_in(x) is None


def staged_value(x):
    """``x`` with its derivative boxes stripped (a value used without derivative: a
    mask, a sort order), keeping a dualad.jit trace's box so that what registry
    operations compute from it is recorded in the program rather than read once; the
    plain value when no jit trace records ``x``. Batched values (vmap) go through
    ``vmap_tracer.nondiff_value``, which keeps their batch axes."""
    from ..interpreters.batching.tracer import batch_tracer_in, nondiff_value
    if batch_tracer_in(x) is not None:
        return nondiff_value(x)
    while isinstance(x, Box) and x.__class__ not in CONCRETE:
        x = x._inner
    return x


def any_true(mask) -> bool:
    """``bool(np.any(mask))`` of a mask computed from traced values. Under a dualad.jit
    trace the count of True entries is recorded and only its truth is guarded (a replay
    traces again only when the answer changes), not the whole mask; under vmap, and
    without jit, the answer over the whole batch's plain values."""
    if staged_unbatched(mask):
        return bool(np.any(staged_value(mask)))   # recorded as a count (numpy/reductions.py)
    return bool(np.any(primal_value(mask)))


def all_true(mask) -> bool:
    """``bool(np.all(mask))``, guarded as :func:`any_true` is."""
    if staged_unbatched(mask):
        return bool(np.all(staged_value(mask)))   # recorded as a count (numpy/reductions.py)
    return bool(np.all(primal_value(mask)))


__all__ = ["all_true", "any_true", "is_staged", "staged_unbatched", "staged_value"]
