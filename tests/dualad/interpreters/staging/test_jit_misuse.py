"""dualad.jit against what users get wrong: a forgotten return, escaped values, mutation,
rebinding, side effects, threads, exceptions, nesting, methods. Expected values are closed
forms or plain NumPy."""
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import dualad
from dualad import EscapedTracerError, jit
from dualad.interpreters.staging.api import Jitted


def traces(jitted):
    return sum(jitted.cache_info().values())


def test_forgotten_return_gives_none_and_grad_names_it():
    def f(x):
        y = x * 2.0   # noqa: F841 - the point: no return
    assert jit(f)(1.0) is None
    with pytest.raises(TypeError, match=r"grad: f returned None; did it forget to `return`"):
        jit(dualad.grad(f))(1.0)


def test_escaped_box_used_after_the_trace_is_a_clear_error():
    stash = []

    def f(x):
        stash.append(x * 2.0)
        return x + 1.0
    assert jit(f)(1.0) == 2.0
    leaked = stash[0]
    for use in (lambda: leaked + 1.0, lambda: np.sin(leaked), lambda: bool(leaked > 0)):
        with pytest.raises(EscapedTracerError, match=r"traced by dualad\.jit.*after the jitted "
                                                     r"function returned.*Return arrays"):
            use()
    with pytest.raises(EscapedTracerError, match="dualad.jit"):
        float(leaked)


def test_returning_a_pullback_is_refused_at_trace_time():
    f = jit(lambda x: dualad.vjp(np.sin, x))
    with pytest.raises(TypeError, match=r"output leaf 1 is a function.*pullback.*Call it inside"):
        f(np.ones(2))


def test_mutated_input_between_calls_does_not_matter():
    f = jit(lambda x: np.sum(x * x))
    a = np.ones(3)
    assert f(a) == 3.0
    a[:] = 2.0
    assert f(a) == 12.0          # inputs are arguments of the program
    a *= -1.0
    assert f(a) == 12.0
    assert traces(f) == 1


def test_closed_over_array_mutated_in_place():
    w = np.ones(3)
    direct = jit(lambda x: x * w)
    np.testing.assert_array_equal(direct(2.0), [2.0, 2.0, 2.0])
    w[:] = 3.0
    # the program holds w by reference: a direct use sees the new values
    np.testing.assert_array_equal(direct(2.0), [6.0, 6.0, 6.0])

    v = np.ones(3)
    computed = jit(lambda x: x * np.sum(v))     # np.sum(v) is computed once, at trace time
    assert computed(2.0) == 6.0
    v[:] = 3.0
    assert computed(2.0) == 6.0                  # baked (documented, as in JAX)
    computed.clear_cache()
    assert computed(2.0) == 18.0                 # clear_cache() re-traces with the new v


def test_rebound_global_and_closure_variable_retrace():
    scale = [0.5]
    f = jit(lambda x: x * GLOBAL_LR)
    assert f(2.0) == 0.2
    globals()["GLOBAL_LR"] = 0.3
    try:
        assert f(2.0) == pytest.approx(0.6)
    finally:
        globals()["GLOBAL_LR"] = 0.1

    k = 2.0

    def g(x):
        return x * k * scale[0]
    jg = jit(g)
    assert jg(3.0) == 3.0
    k = 4.0   # noqa: F841 - rebinding the cell g reads
    assert jg(3.0) == 6.0
    assert traces(jg) == 2


GLOBAL_LR = 0.1


def test_side_effects_run_at_trace_time_only(capsys):
    log = []

    def f(x):
        print("tracing f")
        log.append(1)
        return x * 2.0
    j = jit(f)
    assert [j(float(k)) for k in range(4)] == [0.0, 2.0, 4.0, 6.0]
    assert log == [1]
    assert capsys.readouterr().out.count("tracing f") == 1
    j(np.ones(2))              # a new signature traces (and prints) again
    assert log == [1, 1]


def test_threads_same_and_different_signatures():
    def f(x):
        s = np.sum(x)
        return np.sin(x) * x if s > 0 else -x * 2.0
    j = jit(f)
    xs = [np.full(k % 3 + 1, (-1.0) ** k * 0.3 * (k + 1)) for k in range(64)]
    xs += [np.full(2, 0.7)] * 32                       # many calls on one signature
    with ThreadPoolExecutor(8) as pool:
        got = list(pool.map(j, xs))
    for x, y in zip(xs, got):
        want = np.sin(x) * x if np.sum(x) > 0 else -x * 2.0
        np.testing.assert_allclose(y, want, rtol=1e-15)
    # 3 shapes x 2 branches; a race may trace a program twice, never the wrong one
    assert len(j.cache_info()) == 3


def test_threads_with_gradients():
    j = jit(dualad.grad(lambda x: np.sum(np.tanh(x) ** 2)))
    xs = [np.linspace(-1, 1, 4) * k for k in range(40)]
    with ThreadPoolExecutor(6) as pool:
        got = list(pool.map(j, xs))
    for x, g in zip(xs, got):
        np.testing.assert_allclose(g, 2 * np.tanh(x) * (1 - np.tanh(x) ** 2), rtol=1e-13)


def test_exception_inside_f_propagates_and_leaves_no_broken_entry():
    class Boom(ValueError):
        pass

    def f(x):
        if x > 0:
            raise Boom("positive")
        return x * 3.0
    j = jit(f, max_traces=2)
    for _ in range(4):                  # more failures than max_traces: no thrash warning
        with pytest.raises(Boom, match="positive"):
            j(1.0)
    assert j.cache_info() == {}
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert j(-1.0) == -3.0
        assert j(-2.0) == -6.0
    assert traces(j) == 1
    with pytest.raises(Boom):
        j(5.0)                          # the guard fails, the re-trace raises again
    assert j(-3.0) == -9.0


def test_nested_jit():
    inner = jit(lambda y: np.sin(y) * 3.0)
    outer = jit(lambda x: inner(x) + 1.0)
    for x in (0.5, 0.5, 1.5):
        assert outer(x) == pytest.approx(np.sin(x) * 3.0 + 1.0, rel=1e-15)
    twice = jit(jit(lambda x: np.exp(x) * x))
    assert twice(0.3) == pytest.approx(np.exp(0.3) * 0.3, rel=1e-15)
    assert traces(outer) == 1


class Model:
    def __init__(self, w):
        self.w = w

    @jit
    def predict(self, x):
        return np.tanh(x * self.w)


def test_jitted_method_binds_self_and_sees_rebound_attributes():
    m, n = Model(2.0), Model(0.5)
    assert m.predict(0.3) == pytest.approx(np.tanh(0.6))
    assert n.predict(0.3) == pytest.approx(np.tanh(0.15))
    assert m.predict(0.4) == pytest.approx(np.tanh(0.8))
    m.w = 4.0                                   # a rebound attribute: traced again
    assert m.predict(0.4) == pytest.approx(np.tanh(1.6))
    assert Model.predict(m, 0.1) == pytest.approx(np.tanh(0.4))
    assert isinstance(Model.__dict__["predict"], Jitted)
    g = dualad.grad(lambda x: m.predict(x))(0.2)
    assert g == pytest.approx(4.0 * (1 - np.tanh(0.8) ** 2))


def test_not_a_function():
    with pytest.raises(TypeError, match="expected a function, got 'int'"):
        jit(3)
