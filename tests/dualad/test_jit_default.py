"""dualad.jit.default.Replayed: the prepared derivatives' trace-once wrapper."""
import threading
import warnings

import numpy as np
import pytest

import dualad
from dualad.jit.default import JitFallbackWarning, Replayed


def test_replays_after_one_trace():
    calls = []

    def d(x):
        calls.append(1)
        return np.sin(x) * 2.0

    r = Replayed(d, "d")
    x = np.linspace(0.0, 1.0, 5)
    for _ in range(3):
        np.testing.assert_array_equal(r(x), np.sin(x) * 2.0)
    assert len(calls) == 1 and list(r.cache_info().values()) == [1]


def test_jit_false_runs_the_function_every_time():
    calls = []
    r = Replayed(lambda x: calls.append(1) or x * 3.0, "d", jit=False)
    for _ in range(3):
        r(np.ones(2))
    assert len(calls) == 3 and r.cache_info() == {}


def test_jit_takes_a_bool():
    with pytest.raises(TypeError, match="jit= takes True or False"):
        Replayed(np.sin, "d", jit="yes")


def test_falls_back_with_one_warning_when_only_the_trace_fails():
    def d(x):
        x += 1.0          # writes into its argument: plain code can, a replay cannot
        return x * 2.0

    r = Replayed(d, "helper(d)")
    with pytest.warns(JitFallbackWarning, match=r"helper\(d\).*in place.*jit=False"):
        np.testing.assert_array_equal(r(np.arange(3.0)), [2.0, 4.0, 6.0])
    assert "in place" in r.fell_back
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # eager from now on, no second warning
        np.testing.assert_array_equal(r(np.arange(3.0)), [2.0, 4.0, 6.0])


def test_the_users_own_error_is_raised_unchanged():
    def d(x):
        raise ValueError("bad x in d")

    r = Replayed(d, "d")
    with pytest.raises(ValueError, match="bad x in d") as info:
        r(np.ones(2))
    assert info.value.__context__ is None
    assert r.fell_back is None            # the input was wrong, not jit


def test_threads_get_the_same_values():
    r = Replayed(lambda x: np.cos(x) ** 2, "d")
    xs = [np.full(4, float(i)) for i in range(8)]
    out = [None] * 8

    def work(i):
        out[i] = r(xs[i])

    ts = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for i in range(8):
        np.testing.assert_array_equal(out[i], np.cos(xs[i]) ** 2)


def test_composes_with_grad():
    r = Replayed(lambda x: np.sum(np.sin(x)), "d")
    x = np.array([0.3, 0.7])
    np.testing.assert_allclose(dualad.grad(r)(x), np.cos(x))
