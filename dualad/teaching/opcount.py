"""Operation counts: how many primitive applications a computation performs.

An :class:`OpCounter` is an outer tape that records (and counts) every primitive
applied to values that depend on its inputs, at any level below it: wrapping
``grad(f)`` counts the forward sweep and every operation of the reverse sweep, since
the sweep's rules are themselves registry operations. It is never swept back.
:mod:`.evaltrace` counts a sweep's rules on one; the paper reproductions
(``papers/``) count whole programs with :func:`count_ops`.
"""
from __future__ import annotations

from collections import Counter

from ..tape import VJPTrace


class OpCounter(VJPTrace):
    """A tape that counts the primitives applied on it, by name (``counts``)."""

    __slots__ = ("counts",)

    def __init__(self):
        super().__init__()
        self.counts = Counter()

    def process(self, prim, args, params):
        self.counts[prim.name] += 1
        return super().process(prim, args, params)

    @property
    def total(self):
        """All primitive applications counted so far."""
        return sum(self.counts.values())


def count_ops(fn, *args):
    """Number of primitive applications performed by ``fn(*args)``."""
    counter = OpCounter()
    fn(*[counter.new_leaf(a) for a in args])
    return counter.total
