"""dualad.interpreters.staging.default.Replayed: the prepared derivatives' trace-once wrapper."""
import threading
import warnings

import numpy as np
import pytest

import dualad
from dualad.interpreters.staging.default import JitFallbackWarning, Replayed


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


# --- a constant output is a new array at every call --------------------------------------

def _linear_jacobian():
    from dualad import jacobians
    A = np.arange(6.0).reshape(2, 3)
    return A, dualad.jit(jacobians.jacfwd(lambda x: A @ x))


def test_a_constant_output_written_into_does_not_change_later_calls():
    A, g = _linear_jacobian()
    x = np.ones(3)
    first = g(x)             # traced: f's Jacobian is a constant of the program
    first[0, 0] = 99.0
    second = g(x)            # replayed
    np.testing.assert_array_equal(second, A)
    second[0, 1] = -5.0
    np.testing.assert_array_equal(g(x), A)
    assert g(x) is not g(x)


def test_a_constant_output_is_fresh_in_the_traced_replay_too():
    from dualad.interpreters.staging.replay import run
    A, g = _linear_jacobian()
    x = np.ones(3)
    g(x)
    prog = g.program(x)
    out = run(prog, [x])[0]
    out[0, 0] = 99.0
    np.testing.assert_array_equal(run(prog, [x])[0], A)


def test_an_output_that_is_the_input_stays_the_input_as_without_jit():
    f = dualad.jit(lambda x: x)
    x = np.ones(3)
    f(x)
    assert f(x) is x


def test_a_closed_over_array_returned_is_read_at_each_call():
    A = np.ones(2)
    f = dualad.jit(lambda x: A)
    x = np.zeros(2)
    f(x)
    A[0] = 7.0           # the same object changed in place: as without jit, f sees it
    np.testing.assert_array_equal(f(x), [7.0, 1.0])


def test_a_fallback_is_per_signature_not_for_every_later_call():
    calls = []

    def d(x):
        calls.append(x.dtype)
        if x.dtype.kind == "i":
            x *= 2          # in place: plain code can, a replay cannot
            return x
        return np.sin(x) * 2.0

    r = Replayed(d, "d")
    with pytest.warns(JitFallbackWarning):
        np.testing.assert_array_equal(r(np.arange(3)), [0, 2, 4])
    assert list(r.fallbacks.values()) and r.fell_back
    calls.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(3):
            np.testing.assert_allclose(r(np.ones(3)), 2 * np.sin(np.ones(3)))
        np.testing.assert_array_equal(r(np.arange(3)), [0, 2, 4])   # eager, no warning
    assert len([c for c in calls if c.kind == "i"]) == 1
    assert len([c for c in calls if c.kind == "f"]) == 1   # traced once, replayed after


# --- cheap code generation for the prepared derivatives' common primitives -----------------

@pytest.mark.parametrize("shapes", [((3, 4), (4,)), ((4,), (4, 2)), ((3, 4), (4, 2)),
                                    ((4,), (4,)), ((2, 3, 4), (4,)), ((2, 3, 4), (4, 5))])
def test_matmul_written_as_the_operator_gives_the_same_bits(shapes):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(shapes[0]), rng.standard_normal(shapes[1])

    def f(a, b):
        return np.sin(a) @ b

    g = dualad.jit(f)
    np.testing.assert_array_equal(g(a, b), f(a, b))
    np.testing.assert_array_equal(g(a + 1, b), f(a + 1, b))
    src = g.source(a, b)
    assert ("@" in src) == (len(shapes[0]) <= 2 and len(shapes[1]) <= 2), src


def test_reshape_transpose_where_are_called_directly():
    def f(x):
        y = np.reshape(np.sin(x), (3, 2)).T
        return np.where(y > 0, y, 0.5 * y)

    g = dualad.jit(f)
    x = np.linspace(-1, 1, 6)
    np.testing.assert_array_equal(g(x), f(x))
    src = g.source(x)
    assert ".reshape((3, 2))" in src and ".transpose(" in src and "np.where(" in src, src
    np.testing.assert_array_equal(dualad.grad(lambda x: np.sum(g(x) ** 2))(x),
                                  dualad.grad(lambda x: np.sum(f(x) ** 2))(x))
