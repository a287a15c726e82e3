"""Griewank–Walther binomial checkpointing (papers/griewank_walther_revolve.py): the
published revolve run (ACM TOMS Algorithm 799, CALGO driver output for 14 steps and 3
snapshots) and the published formulas, against dualad.revolve."""
import time

import paper_runs
import pytest
from hypothesis import given, settings, strategies as st

from dualad import revolve
from papers import griewank_walther_revolve as gw


def test_reproduction_has_every_row():
    # that it runs and matches: tests/papers/test_papers.py; here, that no row went missing
    # (the same run: paper_runs runs each reproduction once per session)
    rc, _, (report,) = paper_runs.run(gw.__name__)
    assert rc == 0
    assert report.gaps == [] and len(report.rows) >= 25


def test_published_run_numbers():
    """CALGO 799 C/Drivers/res: steps 14, snaps 3 -> 27 forward steps, slowdown 1.9286,
    27 advances, 6 takeshots, 47 commands."""
    numbers, actions = gw.parse_run(gw.PUBLISHED_RUN)
    assert numbers == dict(forward_steps=27, slowdown=1.9286, advances=27, takeshots=6,
                           commands=47)
    assert len(actions) + 1 == 47                      # + the final 'terminate'
    assert revolve.forward_steps(14, 3) == 27
    assert revolve.repetitions(14, 3) == 3             # β(3, 2) = 10 < 14 <= β(3, 3) = 20
    assert round(revolve.forward_steps(14, 3) / 14, 4) == 1.9286
    ours = revolve.simulate(revolve.schedule(14, 3), 14)
    assert ours["advances"] == 27 and ours["peak_stored"] == 3 and ours["reverses"] == 14


def test_published_actions_replay_in_dualad_conventions():
    """revolve's snaps counts x_0 (takeshot at 0; never more than 3 held) and its
    advances exclude the taped firsturn/youturn steps: the published actions, translated
    one for one, replay under dualad.revolve.simulate with the published counts."""
    _, actions = gw.parse_run(gw.PUBLISHED_RUN)
    translated = gw.to_dualad(actions)
    assert [a[1] for a in translated if a[0] == "store"] == [0, 5, 10, 7, 1, 2]
    assert [a[1] for a in translated if a[0] == "reverse"] == list(range(13, -1, -1))
    counts = revolve.simulate(translated, 14)
    assert counts == dict(advances=27, reverses=14, stores=6, peak_stored=3,
                          stored_at_end=0, max_advances_per_step=3)


def test_schedule_is_the_published_run():
    """schedule(14, 3) takes the same checkpoints in the same order as revolve: 46 actions
    (plus dualad's explicit frees), 27 advances and 6 stores."""
    _, actions = gw.parse_run(gw.PUBLISHED_RUN)
    assert revolve.schedule(14, 3) == gw.to_dualad(actions)
    assert revolve.simulate(revolve.schedule(14, 3), 14)["stores"] == 6


def test_replay_detects_a_corrupted_run():
    """The replay can fail: a missing checkpoint, a short advance or a fourth stored
    state is caught."""
    _, actions = gw.parse_run(gw.PUBLISHED_RUN)
    no_seven = [a for a in actions if a != ("takeshot", 7)]
    with pytest.raises(ValueError, match="restore at 7"):
        gw.to_dualad(no_seven)
    short = [("advance", 12) if a == ("advance", 13) else a for a in actions]
    with pytest.raises(ValueError, match="impossible"):
        revolve.simulate(gw.to_dualad(short), 14)
    extra = list(actions)
    extra.insert(extra.index(("advance", 7)) + 1, ("takeshot", 7))
    with pytest.raises(ValueError, match="restore at 5"):
        gw.to_dualad(extra)                           # x_7 stays on top of revolve's stack
    four = list(actions)
    four.insert(four.index(("advance", 9)) + 1, ("takeshot", 9))
    four.insert(four.index(("youturn", 9)) + 1, ("restore", 7))
    assert revolve.simulate(gw.to_dualad(four), 14)["peak_stored"] == 4


def test_fewest_stores_is_a_lower_bound_for_the_schedule():
    for s in range(1, 6):
        for l in range(1, 40):
            stores = revolve.simulate(revolve.schedule(l, s), l)["stores"]
            assert stores >= 1 + gw.fewest_stores(l, s), (l, s)


@settings(derandomize=True, max_examples=150, deadline=None)
@given(st.integers(1, 400), st.integers(1, 12))
def test_schedule_properties(l, s):
    """For any (l, s): advances = t(l, s) (= the brute-force recursion for l <= 60), at
    most s states held, no step advanced more than r times, every step reversed once,
    and l − 1 <= t(l, s) <= r·l (steps 0..l−2 must be advanced at least once)."""
    counts = revolve.simulate(revolve.schedule(l, s), l)
    t, r = revolve.forward_steps(l, s), revolve.repetitions(l, s)
    assert counts["advances"] == t
    if l <= 60:
        assert t == gw.recursion(l, s)
    assert counts["peak_stored"] <= s and counts["stored_at_end"] == 0
    assert counts["reverses"] == l
    assert counts["max_advances_per_step"] <= r
    assert l - 1 <= t <= r * l


@pytest.mark.parametrize("s", [10, 50])
def test_long_chain_is_fast(s):
    l = 100_000
    start = time.perf_counter()
    counts = revolve.simulate(revolve.schedule(l, s), l)
    seconds = time.perf_counter() - start
    assert counts["advances"] == revolve.forward_steps(l, s)
    assert counts["peak_stored"] <= s
    assert counts["max_advances_per_step"] <= revolve.repetitions(l, s)
    assert seconds < 20, seconds          # ~1 s on an idle core
