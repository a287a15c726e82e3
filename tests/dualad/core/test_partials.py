"""Each rule stored once: elementwise partials compiled into one description (a constant,
``arg(j)``, or a function) from which the JVP, the VJP and the sweep's fast path are built;
``def_linear`` for linear primitives; the tracer below the operations it interprets."""
import ast
import inspect

import numpy as np
import pytest

import dualad
from dualad.extend import rule_table
from dualad import ops
from dualad.core import primitive
from dualad.interpreters.reverse import sweep
from dualad.core import tracer
from dualad.autograd import Variable, grad as autograd_grad
from dualad.core.partials import Partial, arg, compile_partial
from dualad.core.tracer import primal_value


JVP = rule_table("jvp", per_argument=True)
VJP = rule_table("vjp", per_argument=True)

def test_declarations_compile_to_three_kinds():
    assert [(p.const, p.arg) for p in ops.add.derivs] == [(1.0, None), (1.0, None)]
    assert [(p.const, p.arg) for p in ops.subtract.derivs] == [(1.0, None), (-1.0, None)]
    assert [(p.const, p.arg) for p in ops.multiply.derivs] == [(None, 1), (None, 0)]
    (d,) = ops.sin.derivs
    assert d.const is None and d.arg is None and callable(d.fn)
    assert ops.multiply.derivs[0](6.0, 2.0, 3.0) == 3.0     # a Partial is callable as fn
    assert type(compile_partial(2)) is Partial and compile_partial(2).const == 2.0
    assert compile_partial(None).fn is None
    with pytest.raises(TypeError, match="partial derivative"):
        compile_partial("x")


def test_sweep_has_no_primitive_identity_cases_for_elementwise_rules():
    src = inspect.getsource(sweep)
    assert "is multiply" not in src and "is power" not in src


def _paths(p, x=0.3, y=2.0):
    """d p(x, y) / dx by every sweep: fast, anomaly, create_graph, forward, batched."""
    f = lambda a: p(a, y)  # noqa: E731
    out = [dualad.grad(f)(x)]
    with dualad.detect_anomaly():
        out.append(dualad.grad(f)(x))
    v = Variable(np.float64(x), requires_grad=True)
    (g,) = autograd_grad(f(v), v, create_graph=True)
    out.append(primal_value(g))
    out.append(dualad.jvp(f, (x,), (1.0,))[1])
    xs = np.array([x, x])
    out.append(dualad.jvp(f, (xs,), (np.eye(2),))[1][0, 0])
    out.append(dualad.vjp(f, xs)[1](np.eye(2))[0][0, 0])
    return out


@pytest.mark.parametrize("declare, want", [
    ((arg(1), arg(0)), 2.0),                            # x·y: ∂/∂x = y
    ((3.0, -1.0), 3.0),                                 # 3x − y
    ((lambda ans, x, y: y * np.cos(x), None), 2.0 * np.cos(0.3)),
])
def test_user_partials_of_each_kind_agree_in_every_path(declare, want):
    impls = {2.0: lambda x, y: x * y, 3.0: lambda x, y: 3.0 * x - y}
    impl = impls.get(want, lambda x, y: y * np.sin(x))
    p = dualad.primitive(impl, name="kinds")
    p.defderiv(*declare)
    assert np.allclose(_paths(p), want)


def test_def_linear_states_the_rule_once():
    for prim in (ops.core.shape.reshape_p, ops.core.shape.transpose_p, ops.core.reductions.sum_p):
        assert prim.linear and 0 in JVP.get(prim) and 0 in VJP.get(prim)
    x = np.arange(6.0).reshape(2, 3)
    t = np.arange(24.0).reshape(4, 2, 3)                 # 4 directions at once
    _, out = dualad.jvp(lambda z: np.sum(np.transpose(z).reshape(6) * 2.0), (x,), (t,))
    np.testing.assert_allclose(out, 2.0 * t.reshape(4, -1).sum(axis=1))


def test_tracer_imports_neither_ops_nor_api():
    tree = ast.parse(inspect.getsource(tracer) + inspect.getsource(primitive))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            assert node.module not in ("ops", "api") and not (node.module or "").startswith(
                ("ops.", "api")), node.module


def test_a_scaled_argument_is_read_not_called():
    """``arg(j, c)`` compiles to ``scaled_arg``/``scale`` (square: ∂x²/∂x = 2x), which the
    sweep multiplies in without a call; its ``fn`` (for the JVP and VJP) agrees."""
    p = compile_partial(arg(0, 2.0))
    assert (p.const, p.arg, p.scaled_arg, p.scale) == (None, None, 0, 2.0)
    assert p(9.0, 3.0) == 6.0
    assert ops.square.derivs[0].scaled_arg == 0 and ops.square.derivs[0].scale == 2.0


def test_var_squared_records_square_and_differentiates_like_power():
    """``x ** 2`` of a box is ``square(x)`` (as NumPy's ndarray.__pow__ computes an
    exponent 2), on the tape's fast entry and in forward mode, with power's derivatives:
    first and second order, int and float 2; other exponents are still ``power``."""
    from dualad.interpreters.reverse.tape import VJPTrace
    trace = VJPTrace(tape=True)
    x = trace.new_leaf(np.float64(1.5))
    assert (x ** 2).prim is ops.square and (x ** 2.0).prim is ops.square
    assert (x ** 3).prim is ops.power and (2.0 ** x).prim is ops.power
    trace.stop()
    assert dualad.jvp(lambda t: t ** 2, (1.5,), (1.0,))[1] == 3.0
    for f in (lambda t: t ** 2 * 3.0, lambda t: (1.0 - t) ** 2.0 + t ** 3):
        g = dualad.grad(f)(1.5)
        h = dualad.grad(dualad.grad(f))(1.5)
        eps = 1e-6
        assert np.isclose(g, (f(1.5 + eps) - f(1.5 - eps)) / (2 * eps), rtol=1e-6)
        gp = dualad.grad(f)
        assert np.isclose(h, (gp(1.5 + eps) - gp(1.5 - eps)) / (2 * eps), rtol=1e-5)
    xs = np.array([0.5, -1.2, 2.0])
    rosen = lambda v: sum(100 * (v[i + 1] - v[i] ** 2) ** 2 + (1 - v[i]) ** 2   # noqa: E731
                          for i in range(len(v) - 1))
    want = np.array([-2 * (1 - xs[0]) - 400 * xs[0] * (xs[1] - xs[0] ** 2),
                     200 * (xs[1] - xs[0] ** 2) - 2 * (1 - xs[1])
                     - 400 * xs[1] * (xs[2] - xs[1] ** 2),
                     200 * (xs[2] - xs[1] ** 2)])
    assert np.allclose(dualad.grad(rosen)(xs), want, rtol=1e-12)
