"""The binomial schedule (dualad.revolve) against the recursion it solves, by brute force."""
from functools import lru_cache

import pytest

from dualad import revolve


@lru_cache(None)
def fewest_advances(l, c):
    """min over every first checkpoint m of m + t(l-m, c-1) + t(m, c): the recursion itself."""
    if l <= 1:
        return 0
    if c == 1:
        return l * (l - 1) // 2
    return min(m + fewest_advances(l - m, c - 1) + fewest_advances(m, c) for m in range(1, l))


@pytest.mark.parametrize("c", range(1, 8))
def test_closed_form_and_schedule_are_optimal(c):
    for l in range(1, 70):
        assert revolve.forward_steps(l, c) == fewest_advances(l, c), (l, c)
        counts = revolve.simulate(revolve.schedule(l, c), l)
        assert counts["advances"] == fewest_advances(l, c), (l, c)
        assert counts["reverses"] == l and counts["stored_at_end"] == 0
        assert counts["peak_stored"] <= c


def test_repetition_number_brackets_the_chain():
    for c in range(1, 6):
        for l in range(2, 200):
            r = revolve.repetitions(l, c)
            assert revolve.beta(c, r - 1) < l <= revolve.beta(c, r)


def test_long_chain_is_fast_and_optimal():
    counts = revolve.simulate(revolve.schedule(10_000, 20), 10_000)
    assert counts["advances"] == revolve.forward_steps(10_000, 20) == 37_976
    assert counts["peak_stored"] == 20


def test_enough_checkpoints_store_every_state():
    assert revolve.forward_steps(10, 10) == 9
    assert revolve.simulate(revolve.schedule(10, 50), 10)["advances"] == 9


@pytest.mark.parametrize("bad", [(-1, 2), (3, 0), (2.5, 2), (3, 1.5)])
def test_bad_arguments_are_refused(bad):
    with pytest.raises(ValueError, match="revolve"):
        revolve.schedule(*bad)


def test_simulate_names_an_impossible_action():
    with pytest.raises(ValueError, match="action 1"):
        revolve.simulate([("store", 0), ("reverse", 0)], 2)


def test_simulate_counts_stores_and_advances_per_step():
    """One checkpoint, three steps, written by hand: x_0 is advanced to x_2, then to x_1,
    so step 0 is advanced twice and step 1 once (t(3, 1) = 3 = 3·2/2)."""
    actions = [("store", 0), ("advance", 0, 2), ("reverse", 2), ("restore", 0),
               ("advance", 0, 1), ("reverse", 1), ("restore", 0), ("reverse", 0),
               ("free", 0)]
    counts = revolve.simulate(actions, 3)
    assert counts == dict(advances=3, reverses=3, stores=1, peak_stored=1, stored_at_end=0,
                          max_advances_per_step=2)
    assert counts["advances"] == revolve.forward_steps(3, 1)


def test_no_step_is_advanced_more_than_the_repetition_number():
    """Griewank's repetition number: with β(c, r−1) < l ≤ β(c, r), an optimal schedule
    advances no step more than r times, and (for l > c, where storing all is impossible)
    some step exactly r times."""
    for c in range(1, 7):
        for l in range(2, 160):
            r = revolve.repetitions(l, c)
            most = revolve.simulate(revolve.schedule(l, c), l)["max_advances_per_step"]
            assert most <= r, (l, c, most, r)
            if l > c + 1:
                assert most == r, (l, c, most, r)


def test_advancing_past_the_last_state_is_impossible():
    with pytest.raises(ValueError, match="action 1"):
        revolve.simulate([("store", 0), ("advance", 0, 4)], 3)


@lru_cache(None)
def fewest_stores(l, c):
    """Exhaustive: the fewest stores (x_0's not counted) over every first checkpoint m
    that keeps the advances minimal, recursively; a one-step tail needs no store."""
    if l <= 1 or c == 1:
        return 0
    costs = {m: m + fewest_advances(l - m, c - 1) + fewest_advances(m, c) for m in range(1, l)}
    best = min(costs.values())
    return min((0 if l - m == 1 else 1 + fewest_stores(l - m, c - 1)) + fewest_stores(m, c)
               for m, cost in costs.items() if cost == best)


@pytest.mark.parametrize("c", range(2, 7))
def test_schedule_writes_the_fewest_checkpoints(c):
    """Among the optimal first checkpoints, schedule() picks one that also minimizes the
    stores (revolve's takeshots), the secondary criterion: equal to the exhaustive search."""
    for l in range(2, 90):
        counts = revolve.simulate(revolve.schedule(l, c), l)
        assert counts["advances"] == fewest_advances(l, c), (l, c)
        assert counts["stores"] == 1 + fewest_stores(l, c), (l, c)


def test_optimal_offsets_are_every_brute_force_minimizer():
    """The closed-form interval of optimal next-checkpoint offsets equals the set of
    minimizers of m + t(l−m, c−1) + t(m, c) found by trying every m."""
    for c in range(2, 9):
        for l in range(2, 220):
            costs = {m: m + fewest_advances(l - m, c - 1) + fewest_advances(m, c)
                     for m in range(1, l)}
            best = min(costs.values())
            minimizers = [m for m, cost in costs.items() if cost == best]
            lo, hi, _ = revolve._optimal_offsets(l, c)
            assert minimizers == list(range(lo, hi + 1)), (l, c)


def test_as_many_snapshots_as_steps_needs_no_deep_recursion():
    """Storing every state nests one frame per stored state: 5000 of them must not hit
    Python's recursion limit."""
    counts = revolve.simulate(revolve.schedule(5000, 5000), 5000)
    assert counts["advances"] == 4999 == revolve.forward_steps(5000, 5000)
    assert counts["peak_stored"] == 4999 and counts["max_advances_per_step"] == 1


def test_iter_schedule_is_lazy_and_equal_to_schedule():
    import itertools
    for l, c in [(0, 3), (1, 1), (14, 3), (100, 4), (333, 7)]:
        assert list(revolve.iter_schedule(l, c)) == revolve.schedule(l, c)
    first = list(itertools.islice(revolve.iter_schedule(10**9, 30), 5))
    assert first[0] == ("store", 0) and first[1][0] == "advance"
    with pytest.raises(ValueError, match="snapshots"):
        revolve.iter_schedule(10, 0)          # refused at the call, before any next()
