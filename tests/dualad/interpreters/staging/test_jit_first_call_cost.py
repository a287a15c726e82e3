"""The first call of ``jit(grad(f))``: what the trace leaves behind and keeps tracked
(issue 32: GradBench's lstm first call within 5 s, passes linear in the program).

Python's cyclic collector walks every tracked container it holds, again and again while
a long trace grows, so the objects an equation leaves are part of the compile time; and
a trace whose tape outlives the call costs every later collection. These tests count
objects (no timing): deterministic on a loaded machine.
"""
import gc

import numpy as np

import dualad
from dualad.frontend import inplace
from dualad.interpreters.staging.program import Eqn
from dualad.interpreters.staging.trace import JitBox, JitTrace
from count_helpers import chain, python_calls
from dualad.interpreters.reverse.tape import Var


def _alive(kind):
    gc.collect()
    return sum(1 for o in gc.get_objects() if o.__class__ is kind)


def _rows(W):
    # rows of a matrix read by integer index: views (dualad.frontend.inplace notes them), on a tape
    # that shares its nodes (dualad.interpreters.staging.sharing), as GradBench's lstm reads its parameters
    total = 0.0
    for i in range(W.shape[0] - 1):
        total = total + np.sum(np.tanh(W[i] * W[i + 1]))
    return total


def test_jit_grad_first_call_leaves_no_tape_alive():
    # The tape over a jit trace kept every node in its sharing table, and the table of
    # views (dualad.frontend.inplace) kept a row's base node, hence the tape, hence every view:
    # the whole tape and jit trace lived on after the call (1.6 million objects for the
    # lstm (4, 1024), walked by every later collection).
    before_boxes, before_vars = _alive(JitBox), _alive(Var)
    views_before = len(inplace._VIEW_OF)
    g = dualad.jit(dualad.grad(_rows))
    W = np.linspace(0.1, 1.0, 12).reshape(4, 3)
    out = g(W)
    expected = dualad.grad(_rows)(W)
    np.testing.assert_array_equal(out, g(W))
    np.testing.assert_allclose(out, expected, rtol=1e-14)
    assert _alive(JitBox) == before_boxes
    assert _alive(Var) == before_vars
    assert len(inplace._VIEW_OF) == views_before


def test_tape_over_jit_trace_is_freed_by_reference_counting():
    # no cycle needs the collector: with it off, every box of the trace is gone when the
    # call returns
    gc.collect()
    was = gc.isenabled()
    gc.disable()   # (restored below; the test only looks, the library never does this)
    try:
        before = sum(1 for o in gc.get_objects() if o.__class__ is JitBox)
        dualad.jit(dualad.grad(_rows))(np.linspace(0.1, 1.0, 12).reshape(4, 3))
        after = sum(1 for o in gc.get_objects() if o.__class__ is JitBox)
    finally:
        if was:
            gc.enable()
    assert after == before


def _tracked_per_equation(n):
    trace = JitTrace(True)
    x = trace.input(np.linspace(0.0, 1.0, 5))
    keep = []
    for _ in range(n):
        x = np.sin(x)
        keep.append(x)   # the boxes stay alive, as a trace's values do while it runs
    trace.stop()
    gc.collect()   # the collector untracks tuples of atoms (ints, strings) it meets:
    gc.collect()   # a tuple holding a tuple, at the second pass
    held = [trace.seen, getattr(trace, "scalars", {}), trace.avals, trace.body]
    count = 0
    for container in held:
        for o in gc.get_referents(container):
            if gc.is_tracked(o):
                count += 1
            if o.__class__ is tuple:   # (variable, weak reference): both
                count += sum(1 for p in gc.get_referents(o) if gc.is_tracked(p))
            elif o.__class__ is Eqn:   # its inputs and parameters (not the primitive)
                count += gc.is_tracked(o.ins) + gc.is_tracked(o.params)
    return count


def test_an_equation_leaves_one_tracked_object_in_the_trace():
    # the Eqn: the table of computations seen holds variables (ints), not (variable,
    # weak reference) pairs (a repeat of an array computes it again). Counted as the
    # growth from n to 2n equations (what a trace holds besides is a constant).
    n = 300
    per = (_tracked_per_equation(2 * n) - _tracked_per_equation(n)) / n
    assert per <= 1.0, per


def test_a_repeated_computation_is_one_variable_with_the_same_value():
    trace = JitTrace(True)
    x = trace.input(np.linspace(-1.0, 1.0, 5))
    s = trace.input(0.3)
    a, b = np.exp(x) * 2.0, np.exp(x) * 2.0
    c, d = np.sin(s) + 1.0, np.sin(s) + 1.0
    trace.stop()
    assert a.var == b.var and c.var == d.var and len(trace.body) == 4
    assert a.val is not b.val   # two arrays, as without jit
    np.testing.assert_array_equal(a.val, b.val)
    assert c.val == d.val


def test_equal_parameters_are_one_dict():
    # x[0:2] of every step: one params dict (its slice and tuple), not one per equation
    trace = JitTrace(True)
    xs = [trace.input(np.arange(4.0) + k) for k in range(3)]
    heads = [x[0:2] for x in xs]
    sums = [np.sum(x, axis=0) for x in xs]
    trace.stop()
    eqns = trace.body
    idx = [e.params for e in eqns if e.prim.name in ("getitem", "index")]
    assert len(idx) == 3 and all(p is idx[0] for p in idx)
    axis = [e.params for e in eqns if e.prim.name == "sum"]
    assert len(axis) == 3 and axis[0] is axis[1] is axis[2]
    np.testing.assert_array_equal(heads[1].val, [1.0, 2.0])
    assert sums[2].val == 14.0


def _calls_to_roll(n):
    """Python calls made by compile_rolled (loop finding, the rolled program's build and
    code generation) on jit(grad(chain of n steps))'s program: a count, not a time."""
    from dualad.interpreters.staging.loops import compile_rolled
    prog = dualad.jit(dualad.grad(lambda x: chain(x, n))).program(0.5)
    return len(prog.body), python_calls(compile_rolled, prog)


def test_rolling_is_linear_in_the_program_length():
    n1, c1 = _calls_to_roll(400)
    n4, c4 = _calls_to_roll(1600)
    assert 3.5 < n4 / n1 < 4.5
    # about 4x the calls for 4x the equations (a pass that rescans would be ~16x)
    assert c4 / c1 < 4.6, (c1, c4)
