"""Anomaly detection, escaped tracers, checkpointing, tape freeing, threads, deep graphs."""
import gc
import tracemalloc
import weakref
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import dualad
from dualad.interpreters.reverse.sweep import backward_sweep
from dualad.interpreters.reverse.tape import Var, VJPTrace


def test_detect_anomaly_names_primitive_and_line_reverse():
    def f(x):
        y = np.sqrt(x - 1.0)  # infinite derivative at x = 1
        return np.sum(y)

    with np.errstate(divide="ignore"), dualad.detect_anomaly():
        with pytest.raises(dualad.AnomalyError) as e:
            dualad.grad(f)(np.array([1.0, 2.0]))
    msg = str(e.value)
    assert "'sqrt'" in msg and "inf" in msg and "cotangent" in msg
    assert "y = np.sqrt(x - 1.0)" in msg


def test_detect_anomaly_forward_value_and_tangent():
    with np.errstate(all="ignore"), dualad.detect_anomaly():
        with pytest.raises(dualad.AnomalyError, match="'log' produced nan in its value"):
            dualad.jvp(lambda x: np.log(x), (np.array([-1.0]),), (np.ones(1),))
        with pytest.raises(dualad.AnomalyError, match="tangent"):
            dualad.jvp(lambda x: np.sqrt(x), (np.array([0.0]),), (np.ones(1),))


def test_anomaly_mode_off_by_default_and_restored():
    with np.errstate(all="ignore"):
        g = dualad.grad(lambda x: np.sum(np.sqrt(x)))(np.array([0.0]))
    assert np.isinf(g).all()
    with dualad.detect_anomaly():
        pass
    from dualad.core.tracer import ANOMALY
    assert ANOMALY[0] == 0


def test_escaped_tracer_raises():
    leaked = []

    def f(x):
        leaked.append(x)
        return np.sum(x * x)

    dualad.grad(f)(np.ones(3))
    with pytest.raises(dualad.EscapedTracerError, match="escaped"):
        leaked[0] * 2.0
    leaked.clear()
    dualad.jvp(lambda x: leaked.append(x) or x, (np.ones(2),), (np.ones(2),))
    with pytest.raises(dualad.EscapedTracerError, match="primitive 'sin'"):
        np.sin(leaked[0])


def _mlp_params(rng, layers=50, width=64):
    return [rng.standard_normal((width, width)) / np.sqrt(width) for _ in range(layers)]


def _block(h, W):
    return np.tanh(h @ W) + 0.1 * np.sin(h)


def _loss(Ws, X, use_checkpoint):
    h = X
    block = dualad.checkpoint(_block) if use_checkpoint else _block
    for W in Ws:
        h = block(h, W)
    return np.sum(h * h)


def test_checkpoint_cuts_peak_memory_by_40_percent_with_identical_gradients():
    rng = np.random.default_rng(0)
    Ws, X = _mlp_params(rng), rng.standard_normal((256, 64))
    peaks, grads = [], []
    for ck in (False, True):
        g = dualad.grad(lambda Ws: _loss(Ws, X, ck))
        gc.collect()
        tracemalloc.start()
        grads.append(g(Ws))
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    assert peaks[1] <= 0.6 * peaks[0], peaks
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def test_checkpoint_forward_mode_and_second_order():
    f = lambda x: np.sum(dualad.checkpoint(np.sin)(x) * x)  # noqa: E731
    g = lambda x: np.sum(np.sin(x) * x)  # noqa: E731
    x, v = np.linspace(0.1, 1.0, 5), np.arange(5.0)
    np.testing.assert_allclose(dualad.hvp(f, x, v), dualad.hvp(g, x, v), rtol=1e-13)
    np.testing.assert_allclose(dualad.jvp(f, (x,), (v,))[1], dualad.jvp(g, (x,), (v,))[1])


def test_tape_is_released_after_backward():
    tape = VJPTrace()
    x = tape.new_leaf(np.ones(1000))
    h = np.sin(x)
    ref = weakref.ref(h.value)
    out = np.sum(h * 2.0)
    del h
    assert ref() is not None  # held by the tape
    backward_sweep([(out, np.float64(1.0))], trace=tape)
    gc.collect()
    assert ref() is None, "an intermediate array survived the sweep"


def test_deep_chain_no_recursion_error():
    def chain(x):
        for _ in range(100_000):
            x = x * 1.0000001
        return x
    assert np.isclose(dualad.grad(chain)(1.0), 1.0000001 ** 100_000)


def test_concurrent_threads_are_isolated():
    def work(seed):
        rng = np.random.default_rng(seed)
        A = rng.standard_normal((5, 5))
        x = rng.standard_normal(5)
        f = lambda x: np.sum(np.tanh(A @ x) ** 2)  # noqa: E731
        g = dualad.grad(f)(x)
        t = 1.0 - np.tanh(A @ x) ** 2
        expected = A.T @ (2 * np.tanh(A @ x) * t)
        h = dualad.hvp(f, x, np.ones(5))
        return np.allclose(g, expected), h.shape

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(work, range(64)))
    assert all(ok for ok, _ in results)


def test_memory_per_recorded_scalar_operation():
    """Peak bytes per recorded scalar operation (reported, loosely bounded)."""
    n = 20_000
    tape = VJPTrace()
    x = tape.new_leaf(np.float64(1.0))
    gc.collect()
    tracemalloc.start()
    for _ in range(n):
        x = x * 1.0000001
    per_op = tracemalloc.get_traced_memory()[0] / n
    tracemalloc.stop()
    print(f"memory per recorded scalar operation: {per_op:.0f} bytes")
    assert per_op < 1024
    assert isinstance(x, Var)
