"""Binomial checkpointing: the schedule that reverses a chain of steps with few stored states.

Reverse mode over a loop of ``l`` steps ``x_{i+1} = F_i(x_i)`` needs the states in reverse
order, ``x_{l-1}, ..., x_0``. Storing every one costs ``l`` states; storing ``c`` of them
(*checkpoints*, the first holding ``x_0``) and recomputing the others from the nearest
one costs extra *advances* (step evaluations without a tape). Griewank (1992) showed the
fewest advances over all schedules is

    t(l, c) = r·l − β(c + 1, r − 1),    β(c, r) = C(c + r, c) = (c + r)! / (c! r!)

where the *repetition number* ``r`` is the smallest with ``β(c, r) ≥ l``: with ``c``
checkpoints, chains of up to ``β(c, r)`` steps are reversed with no step advanced more
than ``r`` times. (Griewank and Walther, Algorithm 799 "revolve", ACM TOMS 26(1), 2000;
Griewank and Walther, *Evaluating Derivatives*, 2nd ed., SIAM 2008, ch. 12.) The same
minimum solves the recursion over the first checkpoint's position ``m``:

    t(1, c) = 0,   t(l, 1) = l(l − 1)/2,
    t(l, c) = min_{0<m<l}  m + t(l − m, c − 1) + t(m, c)

(advance to ``m``, store it, reverse the tail with one checkpoint fewer, free it, then
reverse the head with all ``c``). :func:`schedule` follows that recursion, choosing each
``m`` from the closed form, so its advances equal :func:`forward_steps` exactly.

The counts exclude the ``l`` *taped* evaluations, one per step, that reverse the steps
(``("reverse", i)`` below): every schedule needs those. Both conventions are revolve's:
in the published test run of Algorithm 799 (14 steps, ``snaps = 3``) the initial state
is the first of the 3 checkpoints and the 27 forward steps exclude the 14 taped ones.
Among the recursive schedules with the fewest advances, :func:`schedule` also writes
the fewest checkpoints, and for (14, 3) it is that published run action for action
(papers/griewank_walther_revolve.py, docs/revolve.md).
"""
from __future__ import annotations

from math import comb

__all__ = ["beta", "repetitions", "forward_steps", "schedule", "iter_schedule",
           "simulate"]


def beta(c, r):
    """``β(c, r) = C(c + r, c)``: the longest chain ``c`` checkpoints reverse with no step
    advanced more than ``r`` times (0 for ``r < 0``)."""
    return comb(c + r, c) if r >= 0 else 0


def _check(steps, snapshots):
    if int(steps) != steps or steps < 0:
        raise ValueError(f"revolve: steps must be a non-negative integer, got {steps!r}")
    if int(snapshots) != snapshots or snapshots < 1:
        raise ValueError(f"revolve: snapshots must be an integer >= 1 (the first holds the "
                         f"initial state), got {snapshots!r}")
    return int(steps), int(snapshots)


def repetitions(steps, snapshots):
    """The repetition number ``r``: the smallest with ``β(snapshots, r) ≥ steps``."""
    l, c = _check(steps, snapshots)
    r = 0
    while beta(c, r) < l:
        r += 1
    return r


def forward_steps(steps, snapshots):
    """``t(l, c) = r·l − β(c + 1, r − 1)``: the fewest advances (untaped step evaluations)
    that reverse ``steps`` steps with ``snapshots`` stored states, the initial one
    included. ``snapshots >= steps`` gives ``steps − 1`` (one sweep, storing all)."""
    l, c = _check(steps, snapshots)
    if l <= 1:
        return 0
    r = repetitions(l, c)
    return r * l - beta(c + 1, r - 1)


def _optimal_offsets(l, c):
    """The interval ``[lo, hi]`` of offsets ``m`` minimizing ``m + t(l−m, c−1) + t(m, c)``
    (``l >= 2``, ``c >= 2``, ``r = repetitions(l, c)``):

        lo = max(β(c, r−2), l − β(c−1, r)),   hi = min(β(c, r−1), l − β(c−1, r−1))

    The head ``0..m−1``, advanced once to reach ``x_m``, is reversed with ``c`` states
    and ``r − 1`` repetitions (``m ≤ β(c, r−1)``) and needs them all
    (``m ≥ β(c, r−2)``); the tail, with ``c − 1`` states, needs ``r``
    (``β(c−1, r−1) ≤ l − m ≤ β(c−1, r)``). Checked against the brute-force minimizers
    in tests/dualad/test_revolve.py."""
    r = repetitions(l, c)
    lo = max(1, beta(c, r - 2), l - beta(c - 1, r))
    hi = min(l - 1, beta(c, r - 1), l - beta(c - 1, r - 1))
    return lo, hi, r


def _split(l, c):
    """The next checkpoint's offset ``m`` (0 < m < l) of an optimal schedule for ``l``
    steps and ``c >= 2`` checkpoints.

    Every offset in :func:`_optimal_offsets` gives the fewest advances. Among them the
    schedule takes ``l − β(c−1, r−1) − β(c−2, r−1)`` clamped to that interval: that
    choice also writes the fewest checkpoints (``store`` actions) of all schedules of this
    recursive form with the fewest advances, checked against an exhaustive search in
    tests/dualad/test_revolve.py, and reproduces the published revolve run (Algorithm
    799, 14 steps, 3 snapshots) action for action (papers/griewank_walther_revolve.py)."""
    lo, hi, r = _optimal_offsets(l, c)
    return min(hi, max(lo, l - beta(c - 1, r - 1) - beta(c - 2, r - 1)))


def schedule(steps, snapshots):
    """The actions of an optimal reversal of ``steps`` steps with ``snapshots`` stored
    states (the initial one included), as tuples:

    ``("store", i)``
        keep the current state, which is ``x_i``;
    ``("advance", i, j)``
        from the current state ``x_i``, compute ``x_j`` without a tape (``j − i`` steps);
    ``("restore", i)``
        make the stored ``x_i`` the current state;
    ``("reverse", i)``
        from the current state ``x_i``, evaluate step ``i`` on a tape and pull the
        cotangent of ``x_{i+1}`` back to ``x_i`` (steps are reversed ``l−1, ..., 0``);
    ``("free", i)``
        drop the stored ``x_i``.

    It starts with ``("store", 0)``; at most ``snapshots`` states are stored at once;
    the advances add up to :func:`forward_steps` (checked by :func:`simulate`), no step is
    advanced more than :func:`repetitions` times, and among the schedules of this
    recursive form with the fewest advances it has the fewest ``store`` actions (checked
    by exhaustive search for ``steps < 90``)."""
    return list(iter_schedule(steps, snapshots))


def iter_schedule(steps, snapshots):
    """:func:`schedule`'s actions one at a time, holding only O(``snapshots``) integers
    (the list for 10^5 steps has ~400 000 tuples, a few tens of MB). The arguments are
    checked at the call, not at the first ``next``."""
    l, c = _check(steps, snapshots)
    return _actions(l, c)


def _actions(l, c):
    if l == 0:
        return
    yield ("store", 0)
    here = 0                    # position of the current state (None: consumed by a reverse)
    # Frames (start, end, c): reverse steps start..end-1 with x_start stored and c states.
    # A frame that stores x_m pushes itself back with end = m under the tail's frame, so
    # the depth is an explicit list, not Python's recursion (snapshots may be 10^4).
    frames = [(0, l, min(c, l))]
    while frames:
        start, end, c = frames.pop()
        descended = False
        while end - start > 1:
            if c == 1:          # no spare checkpoint: advance from x_start to each step
                m = end - 1
            else:
                m = start + _split(end - start, c)
            if here != m:       # go to x_m: from x_start, restoring it unless current
                if here != start:
                    yield ("restore", start)
                if m != start:
                    yield ("advance", start, m)
            if c == 1 or end - m == 1:   # the last step reversed from x_m: no store
                yield ("reverse", m)
                here, end = None, m
                continue
            yield ("store", m)
            here = m
            frames.append((start, m, c))
            frames.append((m, end, c - 1))
            descended = True
            break
        if descended:
            continue
        if here != start:
            yield ("restore", start)
        yield ("reverse", start)
        yield ("free", start)
        here = None


def simulate(actions, steps):
    """Run ``actions`` on positions only, checking that each is possible (a state is
    advanced from or stored where it is, restored only if stored, steps reversed
    ``steps−1, ..., 0`` each from its own state) and counting.

    Returns a dict of counts: ``advances`` (untaped step evaluations), ``reverses``,
    ``stores`` (``("store", i)`` actions: revolve's *takeshots*, the initial one included),
    ``peak_stored`` (most states held at once), ``stored_at_end`` and
    ``max_advances_per_step`` (the most times any one step ``i`` is advanced, which
    Griewank's bound keeps at or below the repetition number ``r``). Raises
    ``ValueError`` naming the first impossible action."""
    stored, here, nxt = set(), 0, steps - 1
    advances = peak = reverses = stores = 0
    # advance (i, j) evaluates steps i..j-1 once more: a difference array counts them
    # per step in O(len(actions) + steps) whatever the lengths of the advances
    per_step = [0] * (steps + 1)
    for k, act in enumerate(actions):
        kind, i = act[0], act[1]
        if kind == "store":
            ok = here == i
            stored.add(i)
            stores += 1
            peak = max(peak, len(stored))
        elif kind == "advance":
            ok = here == i and i < act[2] <= steps
            if ok:
                advances += act[2] - i
                per_step[i] += 1
                per_step[act[2]] -= 1
            here = act[2]
        elif kind == "restore":
            ok = i in stored
            here = i
        elif kind == "reverse":
            ok = here == i and i == nxt
            nxt -= 1
            reverses += 1
            here = None
        elif kind == "free":
            ok = i in stored
            stored.discard(i)
        else:
            ok = False
        if not ok:
            raise ValueError(f"revolve.simulate: action {k} {act!r} is impossible (current "
                             f"state x_{here}, stored {sorted(stored)}, next step to reverse "
                             f"{nxt})")
    if nxt != -1:
        raise ValueError(f"revolve.simulate: steps {nxt}..0 were never reversed")
    most = running = 0
    for d in per_step:
        running += d
        most = max(most, running)
    return dict(advances=advances, reverses=reverses, stores=stores, peak_stored=peak,
                stored_at_end=len(stored), max_advances_per_step=most)
