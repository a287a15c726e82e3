"""Shared by the vmap tests: a spy on which primitives vmap computes by the loop fallback."""
from __future__ import annotations

import sys

from dualad.interpreters.batching.vmap import is_looped
import dualad.interpreters.batching.rules as vmap_rules


class LoopSpy:
    """Records, for each primitive vmap ran, whether it ran by the loop fallback."""

    def __init__(self, monkeypatch):
        self.looped = {}
        original = vmap_rules.run_rule

        def spy(prim, args, batched, params):
            self.looped[prim.name] = is_looped(prim, batched)
            return original(prim, args, batched, params)
        monkeypatch.setattr(sys.modules["dualad.interpreters.batching.vmap"], "run_rule", spy)
