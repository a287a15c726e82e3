"""jit(f, backend="numba") compiles the WHOLE replay with numba.njit when it can (issue 32):
rolled loops as ``for`` loops inside, constants as arguments; the values are the NumPy
backend's to a few ulps; anything it does not write, anything Numba fails on, and any
first replay that disagrees with the traced call falls back to the fused path, with the
reason at the top of ``jitted.source()``, and still gives the right numbers. (These run the
default compile="background" and wait for it: the end state is compile="now"'s.)"""
from __future__ import annotations

import os
import pathlib
import sys

import numpy as np
import pytest

pytest.importorskip("numba")

import dualad  # noqa: E402
from dualad.interpreters.staging import numba_mode  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[4]   # the repository
BENCH = os.path.join(str(ROOT),
                     "bench")
if BENCH not in sys.path:
    sys.path.insert(0, BENCH)
from gradbench_numpy import ode_objective  # noqa: E402

WHOLE = "# numba: the whole program"


def _close(a, b, ulps=8):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, a.dtype, b.shape, b.dtype)
    eps = ulps * np.finfo(np.float64).eps
    np.testing.assert_allclose(a, b, rtol=eps, atol=eps * max(float(np.max(np.abs(b))), 1e-300))


def _run(f, *args):
    """``(numba jitted, its results on a second call, the NumPy backend's results)``."""
    jn, jp = dualad.jit(f, backend="numba"), dualad.jit(f)
    jn(*args)
    assert jn.wait_compiled(), "the background compilation did not end"
    got, want = jn(*args), jp(*args)
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            assert type(g) is type(w)
            _close(g, w)
    else:
        assert type(got) is type(want)
        _close(got, want)
    return jn


def test_ode_gradient_is_one_compiled_program_with_its_loops_rolled():
    x = np.random.default_rng(0).random(50)
    jn = _run(dualad.grad(ode_objective(np, 10)), x)
    src = jn.source(x)
    assert src.startswith(WHOLE)
    assert "for k in range(" in src        # the time steps, rolled, their body inline
    assert src.count("def ") == 2          # the wrapper and ONE compiled function


def test_lstm_like_recurrence_and_its_gradient_roll_into_loops():
    rng = np.random.default_rng(1)
    W, xs = rng.standard_normal((6, 6)) * 0.3, rng.standard_normal((40, 6))

    def f(W):
        h = np.zeros(6)
        total = 0.0
        for t in range(40):
            h = np.tanh(W @ h + xs[t])
            total = total + np.sum(h * h)
        return total

    jn = _run(dualad.grad(f), W)
    src = jn.source(W)
    assert src.startswith(WHOLE) and "for k in range(" in src


def test_reductions_with_axes_keepdims_max_min():
    x = np.random.default_rng(2).standard_normal((4, 5, 3))

    def f(x):
        a = np.sum(x, axis=0)
        b = np.sum(x, axis=(1, 2), keepdims=True)
        c = np.max(x, axis=1)
        d = np.min(x, axis=(0, 2))
        e = np.sum(x * x, axis=(0, 2))
        return np.sum(a * a) + np.sum(b) + np.sum(c) * np.sum(d) + np.sum(e)

    jn = _run(f, x)
    assert jn.source(x).startswith(WHOLE)
    jg = _run(dualad.grad(f), x)
    assert jg.source(x).startswith(WHOLE)


def test_full_sum_is_numpys_pairwise_sum_bit_for_bit():
    rng = np.random.default_rng(3)
    for n in (1, 7, 8, 9, 127, 128, 129, 1000, 4099):
        x = rng.standard_normal(n)
        jn = dualad.jit(lambda x: np.sum(x * 1.5), backend="numba")
        jn(x)
        assert jn.wait_compiled()
        assert jn(x) == np.sum(x * 1.5)


def test_matmul_einsum_advanced_index_scatter_and_slicing():
    rng = np.random.default_rng(4)
    A, x = rng.standard_normal((5, 4)), rng.standard_normal(4)
    B = rng.standard_normal((3, 5, 4))
    idx = np.array([0, 2, 0, 3])

    def f(A, x):
        y = np.tanh(A @ x)
        z = np.einsum("ijk,jk->i", B, A)
        w = A[:, idx] * x[idx]                 # advanced index: a scatter-add back
        return np.sum(y[1:] * y[:-1]) + np.sum(z ** 2) + np.sum(np.exp(w[::2]))

    jn = _run(dualad.grad(f, argnums=(0, 1)), A, x)
    assert jn.source(A, x).startswith(WHOLE)


def test_something_numba_does_not_write_falls_back_with_the_reason():
    x = np.random.default_rng(5).random(20)

    def f(x):
        return np.cumsum(np.sin(x) * x + 1.0) * 2.0

    jn = _run(f, x)
    src = jn.source(x)
    assert src.startswith("# numba: kernels (not written for numba: primitive 'cumsum')")


def test_a_guard_falls_back_and_both_branches_are_right():
    def f(x):
        if np.sum(x) > 0:
            return np.sum(np.exp(x) * x * 2.0)
        return np.sum(np.sin(x) * x * 3.0)

    jn = dualad.jit(f, backend="numba")
    for x in (np.linspace(0.1, 1.0, 9), -np.linspace(0.1, 1.0, 9)):
        jn(x)
        assert jn.wait_compiled()
        _close(jn(x), f(x))
    assert "numba: kernels" in jn.source(np.linspace(0.1, 1.0, 9))


def test_float32_falls_back_and_stays_float32():
    x = np.linspace(0.0, 1.0, 8, dtype=np.float32)
    jn = dualad.jit(lambda x: np.sin(x) * x * 2.0 + 1.0, backend="numba")
    jn(x)
    assert jn.wait_compiled()
    y = jn(x)
    assert y.dtype == np.float32
    np.testing.assert_array_equal(y, np.sin(x) * x * 2.0 + 1.0)
    assert not jn.source(x).startswith(WHOLE)


def test_a_wrong_whole_program_is_caught_at_the_first_call(monkeypatch):
    real = numba_mode.compile_whole

    def wrong(program, name):
        fn, source = real(program, name)
        return (lambda *a: tuple(np.asarray(v) + 1.0 for v in fn(*a))), source

    monkeypatch.setattr(numba_mode, "compile_whole", wrong)
    x = np.random.default_rng(6).random(10)

    def f(x):
        return np.exp(x) * x - 2.0

    jn = dualad.jit(f, backend="numba")
    jn(x)
    assert jn.wait_compiled()
    np.testing.assert_array_equal(jn(x), dualad.jit(f)(x))
    src = jn.source(x)
    assert src.startswith("# numba: kernels (output 0 differs from the trace's")


def test_a_numba_failure_at_the_first_call_falls_back(monkeypatch):
    def failing(program, name):
        def fn(*a):
            raise TypeError("Failed in nopython mode pipeline (step: nopython frontend)")
        return fn, "# numba: the whole program\n"

    monkeypatch.setattr(numba_mode, "compile_whole", failing)
    x = np.random.default_rng(7).random(10)
    jn = dualad.jit(lambda x: np.sum(np.exp(x) * x), backend="numba")
    jn(x)
    assert jn.wait_compiled()
    _close(jn(x), np.sum(np.exp(x) * x))
    assert jn.source(x).startswith("# numba: kernels (numba could not compile it: TypeError")


def test_outputs_keep_their_traced_types_and_constant_outputs_are_copies():
    c = np.arange(3.0)

    def f(x):
        return np.sum(x * x), x * 2.0, c

    jn = dualad.jit(f, backend="numba")
    x = np.linspace(0.0, 1.0, 5)
    jn(x)
    assert jn.wait_compiled()
    s, y, k = jn(x)
    assert type(s) is np.float64 and y.dtype == np.float64
    k[0] = 99.0
    assert jn(x)[2][0] == 0.0
    assert jn.source(x).startswith(WHOLE)
