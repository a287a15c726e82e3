"""What the checkpointing schedules write to ``"dualad.checkpoint"`` (docs/logging.md)."""
import logging

import numpy as np
import pytest

import dualad
from dualad import revolve

NAME = "dualad.checkpoint"


def _lines(caplog, level=logging.DEBUG):
    return [(r.levelno, r.getMessage()) for r in caplog.records
            if r.name == NAME and r.levelno >= level]


def step(c, x):
    return np.sin(c) * x, c


def test_scan_binomial_names_the_schedule_and_its_recomputation(caplog):
    xs = np.linspace(0.1, 1.0, 10)

    def loss(c0):
        return dualad.scan(step, c0, xs, checkpoints="binomial", snapshots=3)[0]

    with caplog.at_level(logging.INFO, logger=NAME):
        g = dualad.grad(loss)(0.5)
    # against the loop without checkpoints
    g_plain = dualad.grad(lambda c0: dualad.scan(step, c0, xs)[0])(0.5)
    assert g == pytest.approx(g_plain)
    # t(l, s) = r l - C(s + r, r - 1) with r the least repetition number, C(s + r, s) >= l:
    # l = 10, s = 3: C(5, 3) = 10 >= 10 gives r = 2, t = 20 - C(5, 1) = 15
    evals = 15
    assert revolve.forward_steps(10, 3) == evals
    assert _lines(caplog) == [(
        logging.INFO,
        f"scan(step): binomial checkpointing: 10 steps reversed with 3 snapshot(s): the "
        f"schedule advances the step {evals} times without a tape (t(l, s), 1.50 per step), "
        f"then tapes each step once")]


def test_while_loop_names_the_trips_and_where_the_snapshots_are(caplog):
    def loss(x):
        return dualad.while_loop(lambda c: c[1] < 10,
                                 lambda c: (np.sin(c[0]) + 0.1, c[1] + 1), (x, 0),
                                 snapshots=3)[0]

    with caplog.at_level(logging.INFO, logger=NAME):
        dualad.grad(loss)(0.5)
    (level, text), = _lines(caplog)
    assert text.startswith("while_loop(<lambda>): 10 trips; 3 snapshot slot(s) placed online (")
    held = text.split("states held at steps ")[1].split(";")[0]
    steps = [int(s) for s in held.split(", ")]
    assert steps[0] == 0 and len(steps) <= 3 and steps == sorted(steps) and steps[-1] < 10


def deep(x):
    for _ in range(20):
        x = np.tanh(x * 1.01)
    return np.sum(x)


def test_grad_within_max_memory_logs_the_remat_plan(caplog):
    with caplog.at_level(logging.DEBUG, logger=NAME):
        g = dualad.grad(deep, max_memory=100_000)(np.ones(1000))
    np.testing.assert_allclose(g, dualad.grad(deep)(np.ones(1000)))
    plan = dualad.remat_plan(deep, np.ones(1000), max_memory=100_000)
    (l1, info), (l2, debug) = _lines(caplog)[:2]
    assert (l1, l2) == (logging.INFO, logging.DEBUG)
    assert info == (f"remat(deep): {len(plan.segments)} taped segment(s) over {plan.n_eqns} "
                    f"equations, peak {plan.peak} of 100000 bytes (store-all "
                    f"{plan.store_all}), {plan.recomputed_flops:.3g} recomputed flops of "
                    f"{plan.total_flops:.3g}")
    assert debug == "remat(deep): the schedule:\n" + plan.explain()


def test_nothing_below_info_by_default(caplog):
    with caplog.at_level(logging.WARNING):
        dualad.grad(deep, max_memory=100_000)(np.ones(100))
    assert _lines(caplog) == []
