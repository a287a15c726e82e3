"""Online checkpointing: snapshots placed while a loop runs whose length is not known.

A loop ``x_{i+1} = F(x_i)`` that stops when a predicate fails has its length ``n`` known
only at the end. Reverse mode needs ``x_{n-1}, ..., x_0`` in that order; with ``c``
snapshot slots (``x_0`` in one of them) the states must be chosen as they go by: when
step ``i`` is about to run, ``x_i`` is *offered* and the placement either passes it by or
stores it in place of an earlier snapshot (``x_0`` is never dropped). Two placements
(``SCHEDULES``):

``"wang-moin"`` (:class:`OnlineSnapshots`; Wang, Moin and Iaccarino, "Minimal repetition
dynamic checkpointing algorithm for unsteady adjoint calculation", SIAM J. Sci. Comput.
31(4), 2009, Algorithm 1). Each snapshot has a *level*; ``x_0`` is held at level ∞. A
snapshot is *dispensable* when a snapshot at a later step has a higher level. ``x_i``
goes

1. into a free slot, at level 0;
2. else in place of the latest dispensable snapshot, at level 0;
3. else (the levels do not increase along the loop) in place of the latest snapshot, of
   level ``λ``, at level ``λ + 1``.

``"stumm-walther"`` (:class:`StummWaltherSnapshots`; after Stumm and Walther, "New
algorithms for optimal online checkpointing", SIAM J. Sci. Comput. 32(2), 2010). The
reversal below costs ``Σ_k t(L_k, c - k)`` for the gaps ``L_k`` between neighbouring
snapshots; ``x_i`` is stored in place of the snapshot whose removal leaves that cost, at
length ``i + 1`` (the loop may stop after the step), smallest, and passed by when keeping
the snapshots as they are is cheaper still (ties: store, the earliest snapshot dropped).
Under repetition number 2 (``n ≤ β(c, 2) - 1``, every gap reversed with one advance per
step) it is optimal among online placements, as Stumm and Walther's online algorithm is
there: the ``n - c`` states not held must each be recomputed at least once, so no
placement beats ``n + (n - c) = 2n - c``, which this one attains (the first gap grows to ``c + 1`` by
overwriting its right neighbour, then the second to ``c``, and so on; revolve with the
length known needs ``2n - c - 2``, the two extra advances are those of discovering the
end). Beyond it the same greedy rule is our extension (the paper's own rules for
repetition number 3 are not reproduced here); it keeps the gaps close to the balanced
ones the length-``i + 1`` optimum has at every step.

Reversal, once ``n`` is known (both placements): the intervals between neighbouring
snapshots are reversed from the last to the first, each by Griewank's offline binomial
schedule (:func:`dualad.revolve.iter_schedule`) with the slots still free: the interval
that starts at the ``k``-th snapshot (``k = 0`` for ``x_0``) may use ``c - k`` slots, its
own start included, because the ``k`` snapshots before it are still held. Its start is
freed when it is done. So at most ``c`` states are held at any time.

Counting as :func:`dualad.revolve.forward_steps` does (advances, i.e. untaped step
evaluations; the ``n`` taped ones excluded), the online sweep costs ``n`` advances (it
runs to ``x_n``, where the predicate fails) plus the intervals' offline counts:

    t_online(n, c) = n + Σ_k t(L_k, c - k),

``L_k`` the length of the ``k``-th interval (:func:`online_forward_steps`).
"""
from __future__ import annotations

from functools import lru_cache

from ...revolve import forward_steps, iter_schedule

__all__ = ["OnlineSnapshots", "StummWaltherSnapshots", "SCHEDULES", "DEFAULT_SCHEDULE",
           "placement", "online_forward_steps", "online_positions"]

_INF = float("inf")
_offline = lru_cache(maxsize=256)(forward_steps)   # t(L, s) of the gaps in play


class _Placement:
    """Snapshot positions (increasing, ``0`` first) of one online sweep with ``slots``
    slots, and the reversal they imply."""

    __slots__ = ("slots", "positions")

    def __init__(self, slots):
        self.slots = slots
        self.positions = [0]

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


class OnlineSnapshots(_Placement):
    """Wang, Moin and Iaccarino's placement (levels; see the module doc).
    :meth:`offer` decides for ``x_i`` and says which step it replaced."""

    __slots__ = ("levels",)

    def __init__(self, slots):
        super().__init__(slots)
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


class StummWaltherSnapshots(_Placement):
    """The cost-greedy placement after Stumm and Walther (see the module doc): ``x_i``
    replaces the snapshot whose removal minimises the reversal cost at length ``i + 1``,

    .. math::

        \\min_{1 \\le k < c}\\; \\sum_{j < k-1} t(L_j, c-j) + t(L_{k-1} + L_k, c-k+1)
        + \\sum_{j > k} t(L_j, c-j+1) + t(1, 1),

    or is passed by when :math:`\\sum_{j < c-1} t(L_j, c-j) + t(L_{c-1} + 1, 1)` (the
    snapshots kept) is smaller; :math:`L_{c-1} = i - p_{c-1}` is the open last gap.
    :meth:`offer` is :class:`OnlineSnapshots`'s."""

    __slots__ = ()

    def offer(self, i):
        """Place ``x_i`` (``i >= 1``, increasing): ``(stored, dropped)`` as
        :meth:`OnlineSnapshots.offer`."""
        if self.slots == 1:
            return False, None
        pos = self.positions
        if len(pos) < self.slots:
            pos.append(i)
            return True, None
        k = self._cheapest_drop(i)
        if k is None:
            return False, None
        dropped = pos.pop(k)
        pos.append(i)
        return True, dropped

    def _cheapest_drop(self, i):
        """The index of the snapshot to drop for ``x_i``, or None (keep them all)."""
        pos, c, t = self.positions, self.slots, _offline
        gaps = [b - a for a, b in zip(pos, pos[1:])]
        gaps.append(i - pos[-1])                    # the open gap, closed at x_i if stored
        kept = [t(g, c - j) for j, g in enumerate(gaps)]          # t(L_j, c - j)
        m = len(gaps)
        before = sum(kept) - kept[-1]               # Σ_{j < m-1} kept: the gaps before
        best, choice = before + t(gaps[-1] + 1, 1), None          # pass x_i by
        after = 0                                   # Σ_{j > k} t(L_j, c - j + 1)
        for k in range(m - 1, 0, -1):               # ties: the earliest k wins
            before -= kept[k - 1]                   # now Σ_{j < k-1} kept
            cost = before + t(gaps[k - 1] + gaps[k], c - k + 1) + after
            if cost <= best:
                best, choice = cost, k
            after += t(gaps[k], c - k + 1)
        return choice


SCHEDULES = {"stumm-walther": StummWaltherSnapshots, "wang-moin": OnlineSnapshots}
DEFAULT_SCHEDULE = "stumm-walther"


def placement(schedule, slots):
    """A fresh placement of the named ``schedule`` (a key of ``SCHEDULES``)."""
    return SCHEDULES[schedule](slots)


def online_positions(n, snapshots, schedule=DEFAULT_SCHEDULE):
    """The snapshot positions after an online sweep of ``n`` steps (``x_n`` not offered:
    the predicate fails there)."""
    slots = placement(schedule, snapshots)
    for i in range(1, n):
        slots.offer(i)
    return list(slots.positions)


def online_forward_steps(n, snapshots, schedule=DEFAULT_SCHEDULE):
    r"""The advances of the online sweep and reversal of ``n`` steps with ``snapshots``
    slots, and the most states held at once: ``(advances, peak)``.

    ``advances`` = ``n`` (the sweep to :math:`x_n`) + the reversal's, counted on the
    actions themselves (:meth:`_Placement.reverse_actions`), as
    :func:`dualad.revolve.forward_steps` counts the offline schedule's."""
    slots = placement(schedule, snapshots)
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
