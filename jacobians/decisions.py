"""The decision log: what one run of ``f`` decided on values that carry no derivative
(comparisons, index functions, ``bool(traced)``), recorded on its trace.

Sparsity detection (:mod:`.sparsity`) keeps one per run; the validity check
(:mod:`.validity`) compares the log of each new point with the logs a pattern was checked
for. Two points with the same log have the same pattern.
"""
from __future__ import annotations

__all__ = ["DecisionLog"]

import numpy as np

from dualad.extend import primal_value


class DecisionLog:
    """The decisions one run of ``f`` made, in order: ``(name, frozen value)`` pairs."""

    __slots__ = ("entries",)

    def __init__(self):
        self.entries = []

    def note(self, name, value):
        self.entries.append((name, _frozen(value)))

    def key(self):
        return tuple(self.entries)

    def __len__(self):
        return len(self.entries)


def _frozen(value):
    """A hashable copy of a decision's value (exact: shape, dtype and bytes)."""
    if type(value) is tuple or type(value) is list:
        return tuple(_frozen(v) for v in value)
    value = primal_value(value)
    try:
        a = np.asarray(value)
    except Exception:  # noqa: BLE001 - not array-like (a dtype, say): its text
        return repr(value)
    if a.dtype.kind == "O":
        return repr(value)
    return a.shape, a.dtype.str, a.tobytes()
