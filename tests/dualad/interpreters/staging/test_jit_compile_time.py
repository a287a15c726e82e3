"""dualad.jit's compile time: hash-consing while tracing (dualad.interpreters.staging.sharing) and passes
linear in the program's length (issue 32).

A repeated pure computation is recorded once by the jit trace, and a tape recorded over
a jit trace (``jit(grad(f))``) shares its repeated nodes, so GradBench's ``det``
(expansion by minors, each minor's determinant computed once per path to it) compiles
in seconds. What is not provably the same computation stays apart.
"""
import sys
import os
import pathlib

import numpy as np
import pytest

import dualad
from dualad.interpreters.staging.trace import JitTrace
from count_helpers import chain, python_calls

ROOT = pathlib.Path(__file__).resolve().parents[4]   # the repository
sys.path.insert(0, os.path.join(str(ROOT), "bench"))
from gradbench_numpy import det_data, det_objective  # noqa: E402


def _recorded(fn, *values):
    """The equations a jit trace records for ``fn`` at ``values``, and its output vars."""
    trace = JitTrace()
    boxes = [trace.input(v) for v in values]
    try:
        out = fn(*boxes)
    finally:
        trace.stop()
    outs = out if isinstance(out, tuple) else (out,)
    return trace.body, [o.var for o in outs]


# -- the jit trace: one equation for a repeated pure computation -----------------------------

def test_repeated_pure_computation_is_one_equation():
    body, (a, b) = _recorded(lambda x: (np.sin(x) * 2.0, np.sin(x) * 2.0), np.ones(3))
    assert a == b
    assert [e.prim.name for e in body] == ["sin", "multiply"]


def test_repeated_index_is_one_equation():
    body, (a, b) = _recorded(lambda A: (A[1, 2], A[1, 2]), np.ones((3, 3)))
    assert a == b and len(body) == 1


def test_random_constants_stay_apart():
    # np.random gives a new array each time: constants that are arrays are never compared
    rng = np.random.default_rng(0)
    body, (a, b) = _recorded(lambda x: (x * rng.random(3), x * rng.random(3)), np.ones(3))
    assert a != b and len(body) == 2


def test_array_constant_changed_in_between_stays_apart():
    c = np.ones(3)

    def f(x):
        y = x * c
        c[0] = 5.0
        return y, x * c
    body, (a, b) = _recorded(f, np.ones(3))
    assert a != b and len(body) == 2


@pytest.mark.parametrize("k1, k2", [(0.0, -0.0), (1, 1.0), (1, True), (2.0, 2.0 + 0j)])
def test_equal_but_different_numbers_stay_apart(k1, k2):
    # 0.0 == -0.0 and 1 == 1.0 == True in Python, but x * -0.0 and an int * 1.0 differ
    body, (a, b) = _recorded(lambda x: (x * k1, x * k2), np.arange(3))
    assert a != b and len(body) == 2


def test_outputs_computed_twice_are_two_arrays():
    f = dualad.jit(lambda x: (x * 2.0, x * 2.0))
    for _ in range(2):   # the traced call and a replay
        a, b = f(np.ones(3))
        assert not np.shares_memory(a, b)
        a[0] = 7.0
        assert b[0] == 2.0
    # the same array returned twice stays the same array, as without jit
    a, b = dualad.jit(lambda x: (lambda y: (y, y))(x * 2.0))(np.ones(3))
    assert a is b


# -- jit(grad(f)): the tape shares its repeated nodes ------------------------------------------

@pytest.mark.parametrize("ell", [3, 4, 5])
def test_det_gradient_program_is_small_and_right(ell):
    A = det_data(ell)
    f = det_objective(np)
    g = dualad.jit(dualad.grad(f))
    got = g(A)
    eager = dualad.grad(f)(A)
    # the same derivative, its terms summed in another order: equal to rounding
    np.testing.assert_allclose(got, eager, rtol=1e-14, atol=1e-15)
    np.testing.assert_array_equal(g(A), got)       # the replay gives the traced call's result
    # the primal is the same computation: bit for bit
    assert dualad.jit(f)(A) == f(A)
    # without sharing: 74, 343, 1789 equations (each minor once per path to it)
    bound = {3: 70, 4: 200, 5: 500}[ell]
    assert len(g.program(A).body) < bound


def test_det8_gradient_compiles_to_a_small_program():
    A = det_data(8)
    g = dualad.jit(dualad.grad(det_objective(np)))
    got = g(A)
    # 2^8 minors: a few thousand equations, where an unshared tape gave about 10^6
    assert len(g.program(A).body) < 20_000
    np.testing.assert_allclose(got, np.linalg.det(A) * np.linalg.inv(A).T, rtol=1e-9)


def test_in_place_write_under_jit_grad_traces_again_without_sharing():
    def f(x):
        y = x * 2.0
        z = x * 2.0          # shared with y while sharing is on
        y[0] = 5.0           # must not change z
        return np.sum(y * z)
    x = np.array([1.0, 2.0, 3.0])
    g = dualad.jit(dualad.grad(f))
    want = dualad.grad(f)(x)
    np.testing.assert_array_equal(g(x), want)
    np.testing.assert_array_equal(g(x), want)
    assert sum(g.cache_info().values()) == 1


def test_eager_tape_does_not_share():
    def f(x):
        return np.sum(np.sin(x) * np.sin(x))
    from dualad.extend import VJPTrace
    trace = VJPTrace(tape=True)
    x = trace.new_leaf(np.ones(2))
    f(x)
    tape = trace.stop()
    assert trace.shared is None
    assert [n.prim.name for n in tape[1:]].count("sin") == 2


# -- the passes are linear in the program's length -----------------------------------------

def _calls_to_compile(n):
    """Python function calls made while compiling jit(grad(chain of n steps)), traced
    once before: a count, not a time, so a loaded machine does not move it."""
    from dualad.interpreters.staging.codegen import compile_program
    g = dualad.jit(dualad.grad(lambda x: chain(x, n)))
    prog = g.program(1.0)
    return len(prog.body), python_calls(compile_program, prog)


def test_compiling_is_linear_in_the_program_length():
    n1, c1 = _calls_to_compile(300)
    n4, c4 = _calls_to_compile(1200)
    assert 3.5 < n4 / n1 < 4.5
    # linear: about 4x the calls for 4x the equations (a quadratic pass would be ~16x)
    assert c4 / c1 < 4.6, (c1, c4)
