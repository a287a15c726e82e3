"""The reverse-mode hot path of scalar code: Var's operator entry into the recording
function, repeated ``x[i]``, and the tape-walking sweep. The operator entry must give
exactly what the general path (``Primitive.__call__`` -> ``VJPTrace.process``) gives, and
step aside for everything it does not handle (boxes of other traces, trace subclasses,
dead traces)."""
import numpy as np
import pytest

import dualad
from dualad.interpreters.reverse.sweep import backward_sweep
from dualad.interpreters.reverse.tape import Var, VJPTrace


def _by_operators(x):
    total = 0.0
    for i in range(len(x) - 1):
        a, b = x[i], x[i + 1]
        total = total + (2.0 - a) * b / (1.5 + a ** 2) + 0.5 ** a - b / 3.0 + a * b
    return total


def _by_ufuncs(x):  # the same arithmetic through np.add & co.: the general path
    total = 0.0
    for i in range(len(x) - 1):
        a, b = x[i], x[i + 1]
        t = np.divide(np.multiply(np.subtract(2.0, a), b), np.add(1.5, np.power(a, 2)))
        t = np.subtract(np.add(t, np.power(0.5, a)), np.divide(b, 3.0))
        total = np.add(total, np.add(t, np.multiply(a, b)))
    return total


def test_operator_fast_path_matches_the_general_path_bitwise():
    x = np.linspace(-1.0, 1.5, 12)
    g_fast, g_general = dualad.grad(_by_operators)(x), dualad.grad(_by_ufuncs)(x)
    assert g_fast.dtype == g_general.dtype == np.float64
    np.testing.assert_array_equal(g_fast, g_general)
    assert dualad.value_and_grad(_by_operators)(x)[0] == _by_operators(x)


def test_scalar_rosenbrock_gradient_is_exact():
    def rosenbrock(x):
        total = 0.0
        for i in range(len(x) - 1):
            total = total + 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1.0 - x[i]) ** 2
        return total

    x = np.linspace(-1.0, 1.5, 30)
    expected = np.zeros_like(x)
    r = x[1:] - x[:-1] ** 2
    expected[:-1] += -400.0 * x[:-1] * r - 2.0 * (1.0 - x[:-1])
    expected[1:] += 200.0 * r
    np.testing.assert_allclose(dualad.grad(rosenbrock)(x), expected, rtol=1e-13)


def test_scalar_gradient_of_a_leaf_keeps_numpy_types():
    g = dualad.grad(lambda x: 3.0 * x * x - x / 2.0)(np.float64(2.0))
    assert g == 11.5 and np.ndim(g) == 0


def test_nested_transformations_take_the_general_path():
    # grad of grad: inner Vars over outer Vars (not plain values)
    assert dualad.grad(dualad.grad(lambda x: x ** 3 * 1.0 - 2.0 * x))(2.0) == 12.0
    # forward over reverse: Vars over Duals
    def vectorized(x):
        a, b = x[:-1], x[1:]
        return np.sum((2.0 - a) * b / (1.5 + a ** 2) + 0.5 ** a - b / 3.0 + a * b)

    x, v = np.linspace(0.1, 1.0, 6), np.arange(6.0)
    np.testing.assert_allclose(dualad.hvp(_by_operators, x, v), dualad.hvp(vectorized, x, v),
                               rtol=1e-12)


def test_escaped_var_raises_through_operators_and_indexing():
    leaked = []

    def f(x):
        leaked.append(x)
        leaked.append(x[0])
        return x[0] * x[1]

    dualad.grad(f)(np.ones(2))
    for use in (lambda: leaked[1] * 2.0, lambda: 1.0 - leaked[1], lambda: leaked[1] + leaked[1],
                lambda: leaked[0][1]):
        with pytest.raises(dualad.EscapedTracerError, match="escaped"):
            use()


def test_a_trace_subclass_sees_every_operation():
    class Counting(VJPTrace):
        __slots__ = ("seen",)

        def __init__(self):
            super().__init__(tape=True)
            self.seen = []

        def process(self, prim, args, params):
            self.seen.append(prim.name)
            return super().process(prim, args, params)

    trace = Counting()
    x = trace.new_leaf(np.array([1.0, 2.0]))
    y = (2.0 - x[0]) * x[1] ** 2
    assert type(y) is Var
    # (x ** 2 is square(x), as NumPy computes it: dualad.frontend.dispatch._power)
    assert trace.seen == ["getitem", "subtract", "getitem", "square", "multiply"]


def _record(tape=True):
    trace = VJPTrace(tape=tape)
    x = trace.new_leaf(np.array([0.5, 2.0, -1.0]))
    out = x[0] * x[1] + x[2] ** 2 / x[1] - 3.0 * x[0]
    return trace, x, out


def _expected():
    a, b, c = 0.5, 2.0, -1.0
    return np.array([b - 3.0, a - c ** 2 / b ** 2, 2 * c / b])


def test_tape_sweep_retained_twice_then_freed():
    trace, x, out = _record()
    tape = trace.stop()
    n = len(tape)
    for _ in range(2):
        res = backward_sweep([(out, np.float64(1.0))], trace=trace, tape=tape,
                             retain_graph=True)
        np.testing.assert_allclose(res[x], _expected())
    assert len(tape) == n                           # a retained sweep leaves the tape whole
    res = backward_sweep([(out, np.float64(1.0))], trace=trace, tape=tape)
    np.testing.assert_allclose(res[x], _expected())
    with pytest.raises(RuntimeError, match="second time"):
        backward_sweep([(out, np.float64(1.0))], trace=trace, tape=tape)


def test_tape_and_heap_sweeps_agree():
    _, x_heap, out_heap = _record(tape=False)
    res = backward_sweep([(out_heap, np.float64(1.0))], trace=out_heap._trace)
    np.testing.assert_allclose(res[x_heap], _expected())


def test_create_graph_sweep_of_a_tape_orders_its_nodes():
    # The nodes of a tape carry no seq; a create_graph sweep (which uses the heap) numbers them.
    trace, x, out = _record()
    res = backward_sweep([(out, np.float64(1.0))], trace=trace, tape=trace.tape,
                         create_graph=True)
    g = res[x]
    assert isinstance(g, Var) and g._trace is trace
    np.testing.assert_allclose(g.value, _expected())


def test_repeated_index_is_recorded_once():
    trace = VJPTrace(tape=True)
    x = trace.new_leaf(np.array([1.0, 2.0]))
    assert x[0] is x[0] and x[1] is not x[0]
    assert len(trace.tape) == 3                     # the leaf and two getitem nodes
