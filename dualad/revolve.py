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
    r"""Return :math:`\beta(c, r) = \binom{c + r}{c}`, the longest chain ``c`` checkpoints reverse.

    With ``c`` stored states, a chain of up to :math:`\beta(c, r)` steps can be
    reversed with no step advanced more than ``r`` times (Griewank 1992); it is 0
    for :math:`r < 0`.

    Parameters
    ----------
    c : int
        The number of checkpoints (stored states).
    r : int
        The repetition number (the most advances of any one step).

    Returns
    -------
    int
        :math:`\binom{c + r}{c}`, or 0 if ``r < 0``.

    See Also
    --------
    repetitions : The smallest ``r`` for a given chain length.

    Examples
    --------
    >>> from dualad import revolve
    >>> revolve.beta(3, 2)
    10
    """
    return comb(c + r, c) if r >= 0 else 0


def _check(steps, snapshots):
    if int(steps) != steps or steps < 0:
        raise ValueError(f"revolve: steps must be a non-negative integer, got {steps!r}")
    if int(snapshots) != snapshots or snapshots < 1:
        raise ValueError(f"revolve: snapshots must be an integer >= 1 (the first holds the "
                         f"initial state), got {snapshots!r}")
    return int(steps), int(snapshots)


def repetitions(steps, snapshots):
    r"""Return the repetition number: the smallest ``r`` with :math:`\beta(s, r) \ge l`.

    Reversing :math:`l` = ``steps`` steps with :math:`s` = ``snapshots`` stored
    states optimally advances no step more than ``r`` times.

    Parameters
    ----------
    steps : int
        The chain length :math:`l \ge 0`.
    snapshots : int
        The stored states :math:`s \ge 1`, the initial one included.

    Returns
    -------
    int
        The repetition number ``r``.

    Raises
    ------
    ValueError
        If ``steps`` is negative or ``snapshots`` below 1 (or either is not an
        integer).

    See Also
    --------
    forward_steps : The total number of advances.

    Examples
    --------
    >>> from dualad import revolve
    >>> revolve.repetitions(14, 3)
    3
    """
    l, c = _check(steps, snapshots)
    r = 0
    while beta(c, r) < l:
        r += 1
    return r


def forward_steps(steps, snapshots):
    r"""Return the fewest advances that reverse ``steps`` steps with ``snapshots`` stored states.

    Griewank's bound :math:`t(l, s) = r\,l - \beta(s + 1, r - 1)`, with ``r`` the
    :func:`repetitions` number: the untaped step evaluations of an optimal
    schedule, excluding the :math:`l` taped ones every schedule needs (revolve's
    convention). ``snapshots >= steps`` gives ``steps - 1`` (one sweep, storing
    all).

    Parameters
    ----------
    steps : int
        The chain length :math:`l \ge 0`.
    snapshots : int
        The stored states :math:`s \ge 1`, the initial one included.

    Returns
    -------
    int
        :math:`t(l, s)`.

    Raises
    ------
    ValueError
        If ``steps`` is negative or ``snapshots`` below 1.

    See Also
    --------
    schedule : A schedule that attains it.
    dualad.scan : Loops reversed by this schedule.

    Examples
    --------
    The published run of Algorithm 799 (14 steps, 3 snapshots):

    >>> from dualad import revolve
    >>> revolve.forward_steps(14, 3)
    27
    >>> revolve.forward_steps(10, 10)
    9
    """
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
    r"""Return the actions of an optimal reversal of ``steps`` steps with ``snapshots`` states.

    The actions are tuples:

    ``("store", i)``
        keep the current state, which is :math:`x_i`;
    ``("advance", i, j)``
        from the current state :math:`x_i`, compute :math:`x_j` without a tape
        (``j - i`` steps);
    ``("restore", i)``
        make the stored :math:`x_i` the current state;
    ``("reverse", i)``
        from the current state :math:`x_i`, evaluate step ``i`` on a tape and pull
        the cotangent of :math:`x_{i+1}` back to :math:`x_i` (steps are reversed
        :math:`l-1, \dots, 0`);
    ``("free", i)``
        drop the stored :math:`x_i`.

    It starts with ``("store", 0)``; at most ``snapshots`` states are stored at
    once; the advances add up to :func:`forward_steps` (checked by
    :func:`simulate`), no step is advanced more than :func:`repetitions` times,
    and among the schedules of this recursive form with the fewest advances it
    has the fewest ``store`` actions.

    Parameters
    ----------
    steps : int
        The chain length :math:`l \ge 0`.
    snapshots : int
        The stored states :math:`s \ge 1`, the initial one included.

    Returns
    -------
    list of tuple
        The actions, in order.

    Raises
    ------
    ValueError
        If ``steps`` is negative or ``snapshots`` below 1.

    See Also
    --------
    iter_schedule : The same actions one at a time, in O(snapshots) memory.
    simulate : Check and count a schedule.

    Examples
    --------
    >>> from dualad import revolve
    >>> revolve.schedule(3, 2)
    [('store', 0), ('advance', 0, 1), ('store', 1), ('advance', 1, 2), ('reverse', 2),
     ('restore', 1), ('reverse', 1), ('free', 1), ('restore', 0), ('reverse', 0), ('free', 0)]
    """
    return list(iter_schedule(steps, snapshots))


def iter_schedule(steps, snapshots):
    r"""Return an iterator over :func:`schedule`'s actions, one at a time.

    It holds only O(``snapshots``) integers (the list for :math:`10^5` steps has
    about 400 000 tuples, a few tens of MB). The arguments are checked at the
    call, not at the first ``next``.

    Parameters
    ----------
    steps : int
        The chain length :math:`l \ge 0`.
    snapshots : int
        The stored states :math:`s \ge 1`, the initial one included.

    Returns
    -------
    iterator of tuple
        The actions, as :func:`schedule` lists them.

    Raises
    ------
    ValueError
        If ``steps`` is negative or ``snapshots`` below 1.

    See Also
    --------
    schedule : The actions as a list, and what they mean.

    Examples
    --------
    >>> from dualad import revolve
    >>> actions = revolve.iter_schedule(10 ** 5, 20)
    >>> next(actions), next(actions)
    (('store', 0), ('advance', 0, ...))
    """
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
    r"""Run ``actions`` on positions only, checking that each is possible, and count them.

    A state is advanced from or stored where it is, restored only if stored, and
    steps are reversed :math:`l-1, \dots, 0`, each from its own state; the first
    impossible action raises.

    Parameters
    ----------
    actions : iterable of tuple
        A schedule, as :func:`schedule` returns.
    steps : int
        The chain length :math:`l`.

    Returns
    -------
    dict
        The counts: ``advances`` (untaped step evaluations), ``reverses``,
        ``stores`` (revolve's *takeshots*, the initial one included),
        ``peak_stored`` (most states held at once), ``stored_at_end`` and
        ``max_advances_per_step`` (the most times any one step is advanced, which
        Griewank's bound keeps at or below the repetition number).

    Raises
    ------
    ValueError
        Naming the first impossible action, or the steps never reversed.

    See Also
    --------
    schedule : The schedules it checks.

    Examples
    --------
    >>> from dualad import revolve
    >>> counts = revolve.simulate(revolve.schedule(14, 3), 14)
    >>> counts["advances"], counts["peak_stored"], counts["max_advances_per_step"]
    (27, 3, 3)
    """
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
