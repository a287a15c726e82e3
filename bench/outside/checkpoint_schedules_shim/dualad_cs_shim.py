"""``checkpoint_schedules``' binomial schedule classes answered by :mod:`dualad.revolve`.

A pytest plugin (``-p dualad_cs_shim``) for the test suite of the PyPI package
``checkpoint_schedules`` 1.0.4 (bench/outside/checkpoint_schedules_suite.py runs it). On
load it replaces the package's two binomial schedules, ``checkpoint_schedules.Revolve``
and ``checkpoint_schedules.MultistageCheckpointSchedule``, with classes that take their
actions from ``dualad.revolve.iter_schedule`` and translate each into the package's own
action objects (``Forward``, ``Reverse``, ``Copy``, ``Move``, ``EndForward``,
``EndReverse``, ``StorageType``) and schedule protocol (a subclass of its
``CheckpointSchedule``: ``n``, ``r``, ``max_n``, ``finalize``, ``is_exhausted``,
``uses_storage_type``). Those classes and the package's tests are the outside code under
test; nothing of the package is copied here. Only the package-level names are replaced
(in the test process only): every other schedule (HRevolve, DiskRevolve, mixed,
two-level, single-storage) and the package's ``optimal_steps_binomial`` stay theirs.

Conventions (read from the package and checked on its own schedules, l = n steps):

* **s counts the checkpoint holding x_0**, as ``snapshots`` does in dualad: their
  ``Forward(0, n1, write_ics=True, ...)`` stores x_0 in one of the s units, and their
  ``optimal_extra_steps(n, 1) = n(n-1)/2`` is dualad's ``forward_steps(n, 1)``. The
  state in WORK (the current one) is not counted by either. They cap s at n − 1
  (``min(s, n - 1)``); dualad's schedule needs no cap (s ≥ n − 1 gives n − 1 advances).
* **Their step counts include the taped steps**: ``optimal_steps_binomial(n, s) = n +
  optimal_extra_steps(n, s)``, and test_multistage sums every ``Forward`` (the one-step
  ``write_adj_deps`` forwards included). So it should equal ``n +
  dualad.revolve.forward_steps(n, s)`` (dualad counts advances only).
* **write_adj_deps / the data limit**: ``Forward(i, i+1, False, True, WORK)`` evaluates
  step i keeping what the adjoint of step i needs (dualad's taped evaluation inside
  ``("reverse", i)``), and ``Reverse(i+1, i, True)`` pulls the adjoint back over step i
  and clears that data. Their validity model allows ``min(1, #restart data in WORK) +
  #steps of adjoint data ≤ 1`` for binomial schedules: one step's tape at a time, never
  together with a working restart state -- which dualad's ``reverse`` satisfies.
* ``Forward(n0, n1, write_ics=True, False, storage)`` stores x_{n0} and advances to
  x_{n1}; their validity model treats the checkpoint as restart data for steps
  n0 .. n1−1 only, so a checkpoint may be restored only while the adjoint is at or
  before n1 (true of the binomial recursion: a checkpoint's first advance goes to the
  next split, and it is restored only after everything past that split is reversed).

Translation (the one-step look-ahead is the only state beyond dualad's iterator):

=================================================  ===================================
dualad                                             checkpoint_schedules
=================================================  ===================================
``("store", i)``, then ``("advance", i, j)``       ``Forward(i, j, True, False, S)``
``("advance", i, j)`` (no store before)            ``Forward(i, j, False, False, WORK)``
``("restore", i)``, then ``("advance", i, j)``     ``Copy(i, S, WORK)``, ``Forward(...)``
``("restore", i)``, then ``("reverse", i)``        ``Move(i, S, WORK)`` (its later
                                                   ``("free", i)`` is then implicit)
``("reverse", i)``                                 ``Forward(i, i+1, False, True, WORK)``,
                                                   [``EndForward()`` the first time],
                                                   ``Reverse(i+1, i, True)``
``("store", i)``, then ``("reverse", i)``          nothing for the store and its free (a
                                                   checkpoint never restored: only
                                                   l = 1, where they store none)
end of dualad's actions                            ``EndReverse()``
=================================================  ===================================

S is RAM for ``Revolve(n, s)`` and DISK for ``MultistageCheckpointSchedule(n, 0, s)``.
Any other pattern raises ``RuntimeError`` naming the action (a test failure, never a
silent rewrite). ``trajectory=`` ("revolve" / "maximum") picks among equally cheap
split points in their class; dualad has one rule (docs/revolve.md), so the shim accepts
the keyword and runs dualad's split for both. Revolve's cost weights (uf, ub, wd, rd)
do not change a binomial schedule and are accepted and ignored, as there.
"""
from __future__ import annotations

import checkpoint_schedules
from checkpoint_schedules.schedule import (CheckpointSchedule, Copy, EndForward,
                                           EndReverse, Forward, Move, Reverse,
                                           StorageType)

from dualad import revolve

__all__ = ["DualadBinomialSchedule", "Revolve", "MultistageCheckpointSchedule"]


class DualadBinomialSchedule(CheckpointSchedule):
    """dualad.revolve's schedule for ``max_n`` steps and ``snapshots`` checkpoints (x_0's
    included) in ``storage``, as checkpoint_schedules actions (one adjoint)."""

    def __init__(self, max_n, snapshots, storage):
        super().__init__(max_n=max_n)
        if max_n is None:
            raise ValueError("dualad shim: the binomial schedule is offline, max_n is needed")
        if snapshots < 1 and max_n > 1:
            raise ValueError(f"dualad shim: {max_n} steps need at least one checkpoint "
                             f"(x_0), got {snapshots}")
        self._snapshots = min(snapshots, max_n - 1)      # their cap; dualad needs none
        self._storage = storage
        self._exhausted = False

    def _iterator(self):
        n, S, WORK = self._max_n, self._storage, StorageType.WORK
        acts = revolve.iter_schedule(n, max(self._snapshots, 1))
        pending = None                       # an action read ahead and not yet handled
        dropped, moved = set(), set()        # stores never written / frees already done
        ended_forward = False

        def take():
            nonlocal pending
            if pending is not None:
                act, pending = pending, None
                return act
            return next(acts, None)

        def peek():
            nonlocal pending
            if pending is None:
                pending = next(acts, None)
            return pending

        while (act := take()) is not None:
            kind, i = act[0], act[1]
            nxt = peek()
            if kind == "store":
                if nxt is not None and nxt[0] == "advance" and nxt[1] == i:
                    take()
                    self._n = nxt[2]
                    yield Forward(i, nxt[2], True, False, S)
                elif nxt is not None and nxt[0] == "reverse" and nxt[1] == i:
                    dropped.add(i)           # never restored: their schedules store none
                else:
                    raise RuntimeError(f"dualad shim: {act!r} followed by {nxt!r} "
                                       f"(n={n}, s={self._snapshots}) has no translation")
            elif kind == "advance":
                self._n = act[2]
                yield Forward(i, act[2], False, False, WORK)
            elif kind == "restore":
                self._n = i
                if nxt is not None and nxt[0] == "reverse" and nxt[1] == i:
                    moved.add(i)
                    yield Move(i, S, WORK)
                elif nxt is not None and nxt[0] == "advance" and nxt[1] == i:
                    yield Copy(i, S, WORK)
                else:
                    raise RuntimeError(f"dualad shim: {act!r} followed by {nxt!r} "
                                       f"(n={n}, s={self._snapshots}) has no translation")
            elif kind == "reverse":
                self._n = i + 1
                yield Forward(i, i + 1, False, True, WORK)
                if not ended_forward:
                    ended_forward = True
                    yield EndForward()
                self._r += 1
                yield Reverse(i + 1, i, True)
            elif kind == "free":
                if i in moved:
                    moved.discard(i)
                elif i in dropped:
                    dropped.discard(i)
                else:
                    raise RuntimeError(f"dualad shim: {act!r} of a checkpoint not moved "
                                       f"to WORK (n={n}, s={self._snapshots})")
            else:
                raise RuntimeError(f"dualad shim: unknown action {act!r}")
        self._exhausted = True
        yield EndReverse()

    @property
    def is_exhausted(self):
        return self._exhausted

    def uses_storage_type(self, storage_type):
        assert storage_type in StorageType
        return storage_type == self._storage and self._snapshots > 0


class Revolve(DualadBinomialSchedule):
    """``checkpoint_schedules.Revolve(max_n, snapshots_in_ram)``: s checkpoints in RAM."""

    def __init__(self, max_n, snapshots_in_ram, uf=1, ub=1, wd=2, rd=2):
        super().__init__(max_n, snapshots_in_ram, StorageType.RAM)


class MultistageCheckpointSchedule(DualadBinomialSchedule):
    """``checkpoint_schedules.MultistageCheckpointSchedule(max_n, in_ram, on_disk)`` with
    one storage type (the RAM/disk split of both is their allocation, not shimmed)."""

    def __init__(self, max_n, snapshots_in_ram, snapshots_on_disk, *, trajectory="maximum"):
        if snapshots_in_ram and snapshots_on_disk:
            raise NotImplementedError("dualad shim: a RAM/disk mix is checkpoint_schedules' "
                                      "own multistage allocation, not shimmed")
        storage = StorageType.RAM if snapshots_in_ram else StorageType.DISK
        super().__init__(max_n, snapshots_in_ram or snapshots_on_disk, storage)
        self._trajectory = trajectory


def pytest_configure(config):
    """Replace the package-level binomial classes before the test modules import them."""
    checkpoint_schedules.Revolve = Revolve
    checkpoint_schedules.MultistageCheckpointSchedule = MultistageCheckpointSchedule
