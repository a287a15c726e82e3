"""trace.stop(): a transformation's trace is dead once it returns, on every path.

Before issue 16 only detaching the tape stopped Var's operator fast path, so a scalar Var
of a trace marked dead (``alive = False``, as the Jacobian planner's census did) recorded
``x * 3.0`` silently while ``np.sin(x)`` raised. Liveness is now decided in one place
(dualad.interpreters.reverse.tape.record) for every route.
"""
import numpy as np
import pytest

import dualad
from dualad.interpreters.reverse.tape import VJPTrace

USES = {
    "mul": lambda v: v * 3.0, "rmul": lambda v: 3.0 * v, "add": lambda v: v + 1.0,
    "radd": lambda v: 1.0 + v, "sub": lambda v: v - 1.0, "rsub": lambda v: 1.0 - v,
    "div": lambda v: v / 2.0, "rdiv": lambda v: 2.0 / v, "pow": lambda v: v ** 2,
    "rpow": lambda v: 2.0 ** v, "self": lambda v: v * v, "neg": lambda v: -v,
    "sin": np.sin, "sum": np.sum,
}


def _leak_grad(x0):
    leaked = []

    def f(x):
        leaked.append(x)
        return np.sum(x * 1.0)
    dualad.grad(f)(x0)
    return leaked[0]


def _leak_vjp(x0):
    leaked = []

    def f(x):
        leaked.append(x)
        return x * 2.0
    dualad.vjp(f, x0)
    return leaked[0]


def _leak_marked_dead(x0):
    trace = VJPTrace(tape=True)
    x = trace.new_leaf(x0)
    trace.alive = False        # marked dead without handing the tape over
    return x


def _leak_stopped(x0):
    trace = VJPTrace(tape=True)
    x = trace.new_leaf(x0)
    trace.stop()
    return x


LEAKS = [_leak_grad, _leak_vjp, _leak_marked_dead, _leak_stopped]


@pytest.mark.parametrize("leak", LEAKS)
@pytest.mark.parametrize("x0", [np.float64(0.5), np.array([0.5, 1.5])], ids=["scalar", "array"])
@pytest.mark.parametrize("use", sorted(USES))
def test_escaped_var_raises_on_every_operation(leak, x0, use):
    v = leak(x0)
    with pytest.raises(dualad.EscapedTracerError, match="escaped"):
        USES[use](v)


@pytest.mark.parametrize("leak", LEAKS)
def test_escaped_var_raises_when_indexed(leak):
    v = leak(np.array([0.5, 1.5]))
    for use in (lambda: v[0], lambda: v[1:], lambda: v[np.array([0, 1])]):
        with pytest.raises(dualad.EscapedTracerError, match="escaped"):
            use()


@pytest.mark.parametrize("x0", [np.float64(0.5), np.array([0.5, 1.5])], ids=["scalar", "array"])
@pytest.mark.parametrize("use", sorted(USES))
def test_escaped_dual_raises_on_every_operation(x0, use):
    leaked = []

    def f(x):
        leaked.append(x)
        return x * 2.0
    dualad.jvp(f, (x0,), (np.ones_like(x0),))
    with pytest.raises(dualad.EscapedTracerError, match="escaped"):
        USES[use](leaked[0])


def test_stop_marks_dead_and_hands_the_tape_over():
    trace = VJPTrace(tape=True)
    x = trace.new_leaf(np.float64(2.0))
    y = x * 3.0
    tape = trace.stop()
    assert not trace.alive and trace.tape is None
    assert tape[0] is x and tape[-1] is y
    with pytest.raises(dualad.EscapedTracerError):
        y * 2.0
    assert len(tape) == 2          # nothing recorded after stop
