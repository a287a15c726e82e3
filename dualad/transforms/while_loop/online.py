"""Online checkpointing: snapshots placed while a loop runs whose length is not known.

A loop ``x_{i+1} = F(x_i)`` that stops when a predicate fails has its length ``n`` known
only at the end. Reverse mode needs ``x_{n-1}, ..., x_0`` in that order; with ``c``
snapshot slots (``x_0`` in one of them) the states must be chosen as they go by.

Placement (Wang, Moin and Iaccarino, "Minimal repetition dynamic checkpointing algorithm
for unsteady adjoint calculation", SIAM J. Sci. Comput. 31(4), 2009, Algorithm 1). Each
snapshot has a *level*; ``x_0`` is held at level ∞. A snapshot is *dispensable* when a
snapshot at a later step has a higher level. When step ``i`` is about to run, ``x_i`` is
offered:

1. a free slot: store ``x_i`` at level 0;
2. else, a dispensable snapshot: drop it (the latest such) and store ``x_i`` at level 0;
3. else (the levels do not increase along the loop): drop the latest snapshot, of level
   ``λ``, and store ``x_i`` at level ``λ + 1``.

The levels make the snapshots thin out geometrically behind the front, so the distances
between neighbours stay close to those of the binomial (offline) schedule for every
``n``; no step is recomputed more often than the offline repetition number allows by
more than about one.

Reversal, once ``n`` is known: the intervals between neighbouring snapshots are reversed
from the last to the first, each by Griewank's offline binomial schedule
(:func:`dualad.revolve.iter_schedule`) with the slots still free: the interval that starts
at the ``k``-th snapshot (``k = 0`` for ``x_0``) may use ``c - k`` slots, its own start
included, because the ``k`` snapshots before it are still held. Its start is freed when it
is done. So at most ``c`` states are held at any time.

Counting as :func:`dualad.revolve.forward_steps` does (advances, i.e. untaped step
evaluations; the ``n`` taped ones excluded), the online sweep costs ``n`` advances (it
runs to ``x_n``, where the predicate fails) plus the intervals' offline counts:

    t_online(n, c) = n + Σ_k t(L_k, c - k),

``L_k`` the length of the ``k``-th interval (:func:`online_forward_steps`).
"""
from __future__ import annotations

from ...revolve import iter_schedule

__all__ = ["OnlineSnapshots", "online_forward_steps", "online_positions"]

_INF = float("inf")


class OnlineSnapshots:
    """The snapshot positions and levels of one online sweep with ``slots`` slots.

    ``positions`` lists the stored steps in increasing order (``0`` first);
    :meth:`offer` decides for ``x_i`` and says which step it replaced."""

    __slots__ = ("slots", "positions", "levels")

    def __init__(self, slots):
        self.slots = slots
        self.positions = [0]
        self.levels = [_INF]

    def offer(self, i):
        """Place ``x_i`` (steps offered in increasing order, ``i >= 1``). Returns
        ``(stored, dropped)``: whether ``x_i`` is stored, and the step whose snapshot it
        replaces (None when a slot was free or ``x_i`` is not stored)."""
        if self.slots == 1:
            return False, None           # only x_0: everything is recomputed from it
        if len(self.positions) < self.slots:
            self.positions.append(i)
            self.levels.append(0)
            return True, None
        j = self._latest_dispensable()
        if j is not None:
            level = 0
        else:
            j = len(self.positions) - 1
            level = self.levels[j] + 1
        dropped = self.positions.pop(j)
        self.levels.pop(j)
        self.positions.append(i)
        self.levels.append(level)
        return True, dropped

    def _latest_dispensable(self):
        """The index of the latest snapshot with a higher level after it, or None."""
        highest = -1
        for j in range(len(self.levels) - 1, -1, -1):
            if self.levels[j] < highest:
                return j
            highest = max(highest, self.levels[j])
        return None

    def reverse_actions(self, n):
        """The reversal's actions, revolve's vocabulary with absolute step numbers:
        ``("restore", p)``, ``("advance", a, b)``, ``("store", p)``, ``("free", p)``,
        ``("reverse", i)``. Snapshots this sweep placed are held already: each interval
        begins with ``("restore", start)`` where revolve stores its start."""
        ends = self.positions[1:] + [n]
        for k in range(len(self.positions) - 1, -1, -1):
            start, end = self.positions[k], ends[k]
            actions = iter_schedule(end - start, self.slots - k)
            for act in actions:   # the first is ("store", 0): held already, restored
                yield ("restore", start) if act == ("store", 0) else \
                    (act[0],) + tuple(start + a for a in act[1:])
            if end == start:   # (an empty interval: x_0 of a loop that never ran)
                yield ("free", start)


def online_positions(n, snapshots):
    """The snapshot positions after an online sweep of ``n`` steps (``x_n`` not offered:
    the predicate fails there)."""
    slots = OnlineSnapshots(snapshots)
    for i in range(1, n):
        slots.offer(i)
    return list(slots.positions)


def online_forward_steps(n, snapshots):
    r"""The advances of the online sweep and reversal of ``n`` steps with ``snapshots``
    slots, and the most states held at once: ``(advances, peak)``.

    ``advances`` = ``n`` (the sweep to :math:`x_n`) + the reversal's, counted on the
    actions themselves (:meth:`OnlineSnapshots.reverse_actions`), as
    :func:`dualad.revolve.forward_steps` counts the offline schedule's."""
    slots = OnlineSnapshots(snapshots)
    held, peak = 1, 1
    for i in range(1, n):
        stored, dropped = slots.offer(i)
        held += stored and dropped is None
        peak = max(peak, held)
    advances = n
    for act in slots.reverse_actions(n):
        if act[0] == "advance":
            advances += act[2] - act[1]
        elif act[0] == "store":
            held += 1
            peak = max(peak, held)
        elif act[0] == "free":
            held -= 1
    return advances, peak
