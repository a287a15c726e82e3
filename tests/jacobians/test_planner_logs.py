"""What the planner and executor= sweeps write to ``"dualad.jacobians"`` and
``"dualad.distributed"`` (docs/logging.md)."""
import concurrent.futures as cf
import logging

import numpy as np
import pytest

from dualad import jacobians


def _lines(caplog, name, level=logging.DEBUG):
    return [(r.levelno, r.getMessage()) for r in caplog.records
            if r.name == name and r.levelno >= level]


def test_a_plan_is_one_info_line_with_its_coloring(caplog):
    def band(x):
        return x[1:] ** 2 - x[:-1]

    with caplog.at_level(logging.INFO, logger="dualad.jacobians"):
        p = jacobians.plan(band, np.ones(50), mode="sparse-forward")
    assert _lines(caplog, "dualad.jacobians") == [(
        logging.INFO,
        "jacobians.plan(band): plan sparse-forward, n=50, m=49: 2 directions (a column "
        "coloring: 2 colors) in 1 sweep(s) of up to 2; why: " + p.how)]


def test_debug_adds_the_explanation_with_every_alternative(caplog):
    def wide(x):
        return np.sum(x ** 2)

    with caplog.at_level(logging.DEBUG, logger="dualad.jacobians"):
        p = jacobians.plan(wide, np.ones(40), mode="reverse")
    (l1, info), (l2, debug) = _lines(caplog, "dualad.jacobians")
    assert (l1, l2) == (logging.INFO, logging.DEBUG)
    assert info.startswith("jacobians.plan(wide): plan reverse, n=40, m=1: 1 direction in "
                           "1 sweep(s) of up to 1; why: ")
    assert debug == "jacobians.plan(wide): the plan explained:\n" + p.explain()


def test_auto_mode_logs_its_first_plan_only(caplog):
    def tall(x):
        return np.concatenate([np.sin(x), np.cos(x)])

    with caplog.at_level(logging.INFO, logger="dualad.jacobians"):
        jacobians.jacobian(tall, np.ones(7))
        jacobians.jacobian(tall, np.full(7, 2.0))     # the cached choice: no new plan
    (level, text), = _lines(caplog, "dualad.jacobians")
    assert text.startswith("jacobians.jacobian(tall): plan ")
    assert "n=7, m=14" in text


def test_auto_hessian_logs_its_choice(caplog):
    def cubic(x):
        return np.sum(x ** 3)

    with caplog.at_level(logging.INFO, logger="dualad.jacobians"):
        jacobians.hessian(cubic, np.ones(5))
    (level, text), = _lines(caplog, "dualad.jacobians")
    assert text.startswith("jacobians.hessian(cubic): Hessian dense, chunks of up to 5 "
                           "directions; why: ")


def test_executor_chunks_sent_finished_and_the_sweep(caplog):
    x = np.linspace(0.0, 1.0, 6)
    with cf.ThreadPoolExecutor(2) as ex, \
            caplog.at_level(logging.DEBUG, logger="dualad.distributed"):
        J = jacobians.jacfwd(np.sin, x, chunk_size=2, executor=ex)
    np.testing.assert_allclose(J, np.diag(np.cos(x)))
    lines = _lines(caplog, "dualad.distributed")
    sent = [t for lv, t in lines if " sent to " in t]
    done = [t for lv, t in lines if " finished in " in t]
    assert sorted(sent) == [f"jacobians.jacobian(sin): columns task {a}..{a + 1} of 6 sent "
                            f"to the ThreadPoolExecutor" for a in (0, 2, 4)]
    assert len(done) == 3 and all(t.endswith("s (0 retries)") for t in done)
    info = [t for lv, t in lines if lv == logging.INFO]
    assert len(info) == 1 and info[0].startswith(
        "jacobians.jacobian(sin): forward sweep of 6 columns in 3 task(s) on the "
        "ThreadPoolExecutor (threads, 2 worker(s)): ")


def test_executor_at_info_shows_only_the_sweep(caplog):
    with cf.ThreadPoolExecutor(2) as ex, \
            caplog.at_level(logging.INFO, logger="dualad.distributed"):
        jacobians.jacrev(np.sin, np.ones(4), chunk_size=1, executor=ex)
    lines = _lines(caplog, "dualad.distributed")
    assert len(lines) == 1 and "reverse sweep of 4 rows" in lines[0][1]


class _LosesFirstTask(cf.ThreadPoolExecutor):
    """A pool whose first task is lost to "the infrastructure" (its future fails)."""

    lost = False

    def submit(self, fn, /, *args, **kwargs):
        if not self.lost:
            self.lost = True
            fut = cf.Future()
            fut.set_exception(ConnectionError("worker gone"))
            return fut
        return super().submit(fn, *args, **kwargs)


def test_a_lost_task_is_a_warning_naming_the_retry(caplog):
    x = np.linspace(0.0, 1.0, 4)
    with _LosesFirstTask(2) as ex, caplog.at_level(logging.DEBUG, logger="dualad.distributed"):
        J = jacobians.jacfwd(np.sin, x, chunk_size=2, executor=ex)
    np.testing.assert_allclose(J, np.diag(np.cos(x)))
    warned = [t for lv, t in _lines(caplog, "dualad.distributed") if lv == logging.WARNING]
    assert warned == ["jacobians.jacobian(sin): task for columns 0..1 lost (ConnectionError: "
                      "worker gone); retry 1 of 2"]
    done = [t for lv, t in _lines(caplog, "dualad.distributed") if "0..1 finished" in t]
    assert len(done) == 1 and done[0].endswith("(1 retry)")
