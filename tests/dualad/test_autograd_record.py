"""dualad.autograd.record_backward: the steps of the backward sweeps of one thread."""
import logging
import threading

import numpy as np
import pytest

from dualad.autograd import BackwardStep, Variable, grad, record_backward
from dualad.interpreters.reverse import hooks


def _leaf(v):
    return Variable(np.array(v, dtype=float), requires_grad=True)


def test_each_node_of_the_sweep_is_one_step_with_its_shapes():
    x = _leaf([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    w = _leaf([1.0, -1.0, 0.5])
    with record_backward() as rec:
        np.sum(np.tanh(x * w)).backward()
    assert [s.primitive for s in rec.steps] == ["sum", "tanh", "multiply"]
    s_sum, s_tanh, s_mul = rec.steps
    assert isinstance(s_sum, BackwardStep)
    assert s_sum.input_shapes == ((2, 3),) and s_sum.output_shape == ()
    assert s_sum.cotangent_shape == ()
    assert s_mul.input_shapes == ((2, 3), (3,)) and s_mul.output_shape == (2, 3)
    assert s_tanh.cotangent_shape == (2, 3)
    assert all(s.seconds >= 0 for s in rec.steps)
    assert rec.total_seconds() == pytest.approx(sum(s.seconds for s in rec.steps))
    assert "3 steps" in repr(rec)


def test_grad_and_batched_sweeps_are_recorded_and_nothing_outside_the_block():
    x = _leaf([1.0, 2.0])
    with record_backward() as rec:
        grad(x * x, x, grad_outputs=np.eye(2), is_grads_batched=True)
    assert [(s.primitive, s.cotangent_shape) for s in rec.steps] == [("multiply", (2, 2))]
    np.sum(x * 2.0).backward()
    assert len(rec.steps) == 1
    assert getattr(hooks.RECORDING, "recorder", None) is None


def test_steps_are_logged_at_debug_on_the_dualad_autograd_logger(caplog):
    logger = logging.getLogger("dualad.autograd")
    handlers = list(logger.handlers)
    x = _leaf([1.0, 2.0])
    with caplog.at_level(logging.DEBUG, logger="dualad.autograd"):
        with record_backward():
            np.sum(np.exp(x)).backward()
    msgs = [r.getMessage() for r in caplog.records if r.name == "dualad.autograd"]
    assert len(msgs) == 2 and msgs[0].startswith("backward step sum")
    assert "exp" in msgs[1] and "(2,)" in msgs[1]
    assert all(r.levelno == logging.DEBUG for r in caplog.records)
    assert logger.handlers == handlers          # dualad installed no handler


def test_a_recording_does_not_capture_another_threads_sweeps():
    """Both threads sweep (and record) at the same time: each sees its own steps only."""
    import time
    running, done = threading.Event(), threading.Event()
    sweeps, other_steps = [0], []

    def other():
        y = _leaf([1.0, 2.0])
        with record_backward() as theirs:
            while not done.is_set():
                np.sum(np.sin(y)).backward()
                sweeps[0] += 1
                running.set()
        other_steps.extend(theirs.steps)

    t = threading.Thread(target=other)
    t.start()
    x = _leaf([1.0, 2.0])
    try:
        assert running.wait(30)
        with record_backward() as mine:
            start, n, deadline = sweeps[0], 0, time.monotonic() + 10
            while (sweeps[0] - start < 3 or n < 20) and time.monotonic() < deadline:
                np.sum(np.exp(x)).backward()
                n += 1
            overlapped = sweeps[0] - start
    finally:
        done.set()
        t.join(30)
    assert overlapped >= 3                      # the other thread swept during the block
    assert {s.primitive for s in mine.steps} == {"sum", "exp"}
    assert len(mine.steps) == 2 * n
    assert {s.primitive for s in other_steps} == {"sum", "sin"}
    assert len(other_steps) == 2 * sweeps[0]


def test_nested_recordings_give_the_outer_one_back():
    x = _leaf(1.0)
    with record_backward() as outer:
        (x * 2.0).backward()
        with record_backward() as inner:
            np.sin(x).backward()
        np.exp(x).backward()
    assert [s.primitive for s in inner.steps] == ["sin"]
    assert [s.primitive for s in outer.steps] == ["multiply", "exp"]


def test_a_recording_cannot_be_entered_twice_at_once():
    rec = record_backward()
    with rec:
        with pytest.raises(RuntimeError, match="already active"):
            rec.__enter__()
    with rec:                                   # once left, it may be entered again
        pass


def test_a_sweep_that_raises_closes_its_step_and_the_recording_ends():
    x = _leaf(1.0)
    y = np.sin(x)
    y.register_hook(lambda g: np.zeros(4))      # the wrong shape: raises in the sweep
    with pytest.raises(ValueError):
        with record_backward() as rec:
            (y * 2.0).backward()
    assert [s.primitive for s in rec.steps] == ["multiply"]
    assert getattr(hooks.RECORDING, "recorder", None) is None


def test_without_hooks_or_recording_the_sweep_gets_no_watch():
    import gc
    gc.collect()                                # hooked Variables of other tests are gone
    x = _leaf(1.0)
    y = x * 2.0
    if not hooks.WATCHED:
        assert hooks.watch_for([(y, 1.0)]) is None
    with record_backward():
        assert hooks.watch_for([(y, 1.0)]).inner
    h = x.register_hook(lambda g: None)
    w = hooks.watch_for([(y, 1.0)])
    assert w is not None and (w.inner is any(r() is not None and r().prim is not None
                                             for r in hooks.WATCHED.values()))
    h.remove()
