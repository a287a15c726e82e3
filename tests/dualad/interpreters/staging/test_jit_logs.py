"""What ``dualad.jit`` writes to the ``"dualad.jit"`` logger (docs/logging.md): each trace
with its reason and signature, nothing on a replay, the fallbacks without jit."""
import logging
import warnings

import numpy as np
import pytest

import dualad

JIT = "dualad.jit"


def _messages(caplog, level=logging.DEBUG):
    return [(r.levelno, r.getMessage()) for r in caplog.records
            if r.name == JIT and r.levelno >= level]


def test_first_trace_at_debug_names_the_signature(caplog):
    def double(x, y):
        return x * y

    f = dualad.jit(double)
    with caplog.at_level(logging.DEBUG, logger=JIT):
        f(np.ones(3), np.float32(2.0))
    assert _messages(caplog) == [
        (logging.DEBUG, "dualad.jit(double): trace 1 for ((3,) float64, () float32): "
                        "first call with this signature")]


def test_a_replay_logs_nothing(caplog):
    f = dualad.jit(lambda x: np.sin(x) + 1)
    f(np.ones(2))
    with caplog.at_level(logging.DEBUG, logger=JIT):
        for _ in range(3):
            f(np.full(2, 0.5))
    assert _messages(caplog) == []


def test_a_retrace_at_info_names_the_failed_guard(caplog):
    def branchy(x):
        if np.sum(x) > 0:
            return x * 2
        return x - 1

    f = dualad.jit(branchy)
    with caplog.at_level(logging.INFO, logger=JIT):
        f(np.ones(3))          # first trace: DEBUG, not shown at INFO
        f(-np.ones(3))         # the guard bool(sum > 0) fails: a retrace
        f(np.full(4, 2.0))     # a new shape: a first trace again (DEBUG)
    (level, text), = _messages(caplog)
    assert level == logging.INFO
    assert text.startswith("dualad.jit(branchy): trace 2 for ((3,) float64): each of the 1 "
                           "kept program(s) failed a guard (guards: bool(v")
    assert "is True" in text and "in branchy" in text


def test_a_retrace_after_a_global_changed_says_so(caplog):
    scale = {"k": 2.0}

    def scaled(x):
        return x * scale["k"]

    f = dualad.jit(scaled)
    f(np.ones(2))
    scale["k"] = 3.0
    with caplog.at_level(logging.INFO, logger=JIT):
        out = f(np.ones(2))
    np.testing.assert_array_equal(out, [3.0, 3.0])
    (level, text), = _messages(caplog)
    assert "trace 2" in text and "what it reads outside its arguments changed" in text


def test_giving_up_is_a_warning_record_besides_the_warning(caplog):
    g = dualad.jit(lambda x: x * float(np.sum(x)), max_traces=2)
    with caplog.at_level(logging.INFO, logger=JIT), \
            pytest.warns(dualad.JitRetraceWarning):
        for i in range(1, 6):
            np.testing.assert_allclose(g(np.ones(2) * i), np.ones(2) * i * 2 * i)
    msgs = _messages(caplog)
    warned = [t for lv, t in msgs if lv == logging.WARNING]
    assert warned == ["dualad.jit(<lambda>): traced 2 times for the same signature, every "
                      "replay failing a guard; it now runs without jit for this signature"]
    # one INFO retrace line (trace 2) before giving up; none after
    assert [t.split(":")[1].strip() for lv, t in msgs if lv == logging.INFO] == ["trace 2 for ((2,) float64)"]


def test_a_closure_over_a_traced_value_runs_eagerly_and_says_why(caplog):
    def outer(a):
        inner = dualad.jit(lambda x: x * a)
        return np.sum(inner(np.ones(2)))

    with caplog.at_level(logging.INFO, logger=JIT):
        assert dualad.grad(outer)(3.0) == pytest.approx(2.0)
    assert any("runs without jit: it closes over a traced value" in t
               for _, t in _messages(caplog))


def test_a_disabled_logger_builds_no_message(monkeypatch):
    """At the default level the signature is never put in words (zero cost when off)."""
    from dualad.interpreters.staging import tracelog
    called = []
    monkeypatch.setattr(tracelog, "signature", lambda *a: called.append(a) or "")
    logging.getLogger(JIT).setLevel(logging.NOTSET)
    assert not logging.getLogger(JIT).isEnabledFor(logging.DEBUG)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dualad.jit(lambda x: x + 1)(np.ones(5))
    assert called == []
