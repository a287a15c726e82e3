"""Issue 32, nested derivatives under dualad.jit (GradBench's particle and saddle: a
solver in Python calling a jitted objective whose Euler loop contains a derivative).

What the generated program does per call (each replay of such an objective is hundreds
of small-array steps, and the first call of the solve is mostly such replays), and what
the trace records: one program per loop trip count, rolled, guards kept."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import dualad
from dualad.interpreters.staging import codegen

DT = 0.1


# --- reductions and 0-d reshapes written as NumPy's own calls ---------------------------------
def _reduce_case(name, axis, keepdims):
    red = getattr(np, name)

    def f(x):
        return red(x * 1.0, axis=axis, keepdims=keepdims)
    return f


@settings(derandomize=True, max_examples=40, deadline=None)
@given(st.sampled_from(["sum", "max", "min"]), st.sampled_from([0, 1, (0, 1)]),
       st.booleans(), st.sampled_from([np.float64, np.float32, np.int64, np.complex128]),
       st.lists(st.sampled_from([0.0, -0.0, 1.5, -2.25, np.inf, np.nan, 3e300, 1e-310]),
                min_size=6, max_size=6))
def test_reductions_are_the_ufunc_reduce_and_bitwise_eager(name, axis, keepdims, dtype, vals):
    if dtype is np.complex128 and name != "sum":
        return
    x = np.array(vals).reshape(2, 3)
    f = _reduce_case(name, axis, keepdims)
    jf = dualad.jit(f)
    with np.errstate(all="ignore"):
        if dtype is np.int64:
            x = np.nan_to_num(x, posinf=7.0, neginf=-7.0).astype(np.int64)
        else:
            x = x.astype(dtype)
        want = f(x)
        got = jf(x)
        again = jf(x)      # the replay (the first call returns the trace's values)
        src = jf.source(x)
    for y in (got, again):
        assert np.asarray(y).dtype == np.asarray(want).dtype
        assert np.shape(y) == np.shape(want)
        assert np.asarray(y).tobytes() == np.asarray(want).tobytes()
    assert f".{name}(axis=" not in src        # not the ndarray method's Python wrapper
    assert {"sum": "add_reduce(", "max": "maximum_reduce(",
            "min": "minimum_reduce("}[name] in src


def test_a_complex_times_one_is_a_complex_product():
    """(inf+0j) * 1.0 is inf+nanj in NumPy (1.0 becomes 1+0j): the rewrite ``x * 1.0 is
    x`` holds for real x only (it gave inf+0j on a replay before)."""
    def f(x):
        return np.sum(x * 1.0, axis=0), 1.0 * x, x / 1.0
    x = np.array([[0j, complex(np.inf, 0.0)], [1j, complex(2.0, np.inf)]])
    jf = dualad.jit(f)
    with np.errstate(all="ignore"):
        want = f(x)
        jf(x)
        got = jf(x)
    for a, b in zip(got, want):
        assert a.tobytes() == b.tobytes()


def test_a_sum_of_bools_counts_as_numpy_does():
    def f(x):
        return np.sum(x > 0.0, axis=(0,)) * 1.0
    x = np.array([[1.0, -1.0], [2.0, 0.0]])
    jf = dualad.jit(f)
    assert jf(x).dtype == f(x).dtype
    np.testing.assert_array_equal(jf(x), f(x))


def test_a_numpy_scalar_is_reshaped_by_its_own_method():
    """sum over the only axis gives an np.float64; made a (1,) array and joined (a unit
    vector's JVP stacked, as GradBench's nested evals do): the scalar's own reshape
    method, not the primitive's wrapper through np.reshape's two Python frames."""
    def f(x):
        a, b = np.sum(x * x, axis=0), np.sum(np.sin(x), axis=0)
        return np.concatenate([np.reshape(a, (1,)), np.reshape(b, (1,))]) * x
    x = np.array([0.5, -1.25])
    jf = dualad.jit(f)
    np.testing.assert_array_equal(jf(x), f(x))
    src = jf.source(x)
    assert "reshape(v" not in src
    assert ".reshape((1,))" in src
    # the same under grad: the reverse sweep reshapes 0-d cotangents too
    g = dualad.grad(lambda x: np.sum(f(x) ** 2))
    jg = dualad.jit(g)
    np.testing.assert_array_equal(jg(x), g(x))
    assert "reshape(v" not in jg.source(x)


def test_reshape_and_transpose_of_a_numpy_scalar_give_what_numpy_gives():
    def f(x):
        s = np.sum(x, axis=0)          # np.float64
        return np.transpose(np.reshape(s, (1, 1)), (1, 0)), np.reshape(s, ())
    x = np.array([1.0, 2.5])
    jf = dualad.jit(f)
    for got, want in zip(jf(x), f(x)):
        assert type(got) is type(want) and np.shape(got) == np.shape(want)
        np.testing.assert_array_equal(got, want)


# --- particle's shape of program ---------------------------------------------------------------
def _potential(c):
    return lambda x: np.sum(1.0 / np.sqrt(np.sum((x - c) ** 2, 1)))


def _fwd_grad(f):
    def g(x):
        eye = np.eye(x.shape[0])
        return np.stack([dualad.jvp(f, (x,), (eye[i],))[1] for i in range(x.shape[0])])
    return g


def _objective(inner):
    """particle's objective (bench/gradbench/gb_nested.py): an Euler loop in Python
    until y crosses 0, the field the derivative of a potential in mode ``inner``."""
    def f(w):
        c = np.array([[10.0, 10.0], [10.0, 0.0]]) - w[0] * np.array([[0.0, 1.0], [0.0, 0.0]])
        accel = dualad.grad(_potential(c)) if inner == "r" else _fwd_grad(_potential(c))
        x, xdot = np.array([0.0, 8.0]), np.array([0.75, 0.0])
        while True:
            xddot = -1.0 * accel(x)
            x_new = x + DT * xdot
            if x_new[1] > 0:
                x, xdot = x_new, xdot + DT * xddot
            else:
                break
        t = -x[1] / xdot[1]
        x_f = x + t * xdot
        return x_f[0] * x_f[0]
    return f


def _trips(f, w):
    return sum(1 for g in dualad.jit(f).program(w).guards if g.expected is True)


@pytest.mark.parametrize("outer, inner", [("f", "f"), ("f", "r"), ("r", "f"), ("r", "r")])
def test_particle_shape_one_rolled_program_per_trip_count(outer, inner):
    f = _objective(inner)
    g = dualad.grad(f) if outer == "r" else _fwd_grad(f)
    jg = dualad.jit(g)
    a, b = np.array([0.0]), np.array([0.3])
    assert _trips(f, a) != _trips(f, b)        # two loop lengths: two programs, no more
    want = {0.0: g(a), 0.3: g(b)}
    for w in (a, b, a, b):
        if outer == "f":    # bitwise the eager derivative
            np.testing.assert_array_equal(jg(w), want[w[0]])
        else:   # jit(grad(f)) shares tape nodes: terms added in another order (docs/jit.md)
            np.testing.assert_allclose(jg(w), want[w[0]], rtol=1e-14, atol=0)
    assert list(jg.cache_info().values()) == [2]
    src = jg.source(a)
    assert "_loop0(" in src                    # the Euler steps are one rolled body
    assert src.count("def ") <= 4              # not one line per step: main + loop bodies
    assert "reshape(v" not in src and ".sum(axis" not in src
