"""Misuse of custom rules: a wrong-shaped rule raises, and one rule per argument in every path.

Each case here returned a wrong derivative without a word before (issue 15): a
``@dualad.primitive`` VJP of the wrong shape flowed into the result, and a
``defvjp`` after ``defderiv`` was used by some sweeps and not by others.
"""
import numpy as np
import pytest

import dualad
from dualad.autograd import Variable, grad as autograd_grad
from dualad.core.tracer import primal_value

X = np.array([0.1, 0.2, 0.3])


def _prim(name, jvp=None, vjp=None):
    p = dualad.primitive(lambda x: np.sin(x), name=name)
    if jvp is not None:
        p.defjvp(jvp)
    if vjp is not None:
        p.defvjp(vjp)
    return p


def _sum_of(p):
    return lambda z: np.sum(p(z))


# ---------------------------------------------------------------- 1. shapes of rule results

@pytest.mark.parametrize("bad, got", [
    (lambda g, ans, x: np.ones(7), "(7,)"),        # the wrong size
    (lambda g, ans, x: np.sum(g), "()"),            # a scalar for an array argument
])
def test_vjp_of_wrong_shape_raises_naming_primitive_argument_and_shapes(bad, got):
    p = _prim("wrongshape", vjp=bad)
    for run in (lambda: dualad.grad(_sum_of(p))(X),                 # plain sweep
                lambda: dualad.vjp(p, X)[1](np.eye(3)),             # batched sweep (mapped)
                lambda: _create_graph(p)):                           # boxed values
        with pytest.raises(ValueError) as e:
            run()
        msg = str(e.value)
        assert "'wrongshape'" in msg and "argument 0" in msg
        assert f"shape {got}" in msg and "return a cotangent of shape (3,)" in msg


def _create_graph(p):
    v = Variable(X.copy(), requires_grad=True)
    return autograd_grad(np.sum(p(v)), v, create_graph=True)


def test_vjp_that_forgot_to_unbroadcast_says_to_sum():
    p = dualad.primitive(lambda x, y: x * y, name="mul")
    p.defvjp(lambda g, a, x, y: g * y, lambda g, a, x, y: g * x)
    with pytest.raises(ValueError, match=r"shape \(2, 3\).*sum the cotangent over the broadcast"):
        dualad.grad(lambda z: np.sum(p(z, np.ones((2, 3)))))(X)


def test_jvp_of_wrong_shape_raises_in_single_and_vector_mode():
    p = _prim("jvpshape", jvp=lambda t, ans, x: np.sum(t))
    for t in (X, np.eye(3)):
        with pytest.raises(ValueError, match=r"'jvpshape' for argument 0 returned a tangent of "
                                             r"shape \(\), .*return a tangent of shape \(3,\)"):
            dualad.jvp(p, (X,), (t,))


def test_function_jvp_of_wrong_shape_raises():
    class Bad(dualad.Function):
        @staticmethod
        def forward(ctx, x):
            return np.sin(x)

        @staticmethod
        def backward(ctx, g):
            return g

        @staticmethod
        def jvp(ctx, t):
            return np.sum(t)
    with pytest.raises(ValueError, match=r"Bad.jvp returned a tangent of shape \(\)"):
        dualad.jvp(Bad.apply, (X,), (X,))


def test_real_rule_returning_complex_cotangent_raises():
    p = _prim("cplx", vjp=lambda g, a, x: g * np.cos(x) * (1 + 0j))
    with pytest.raises(TypeError, match="'cplx'.*complex cotangent.*return a real"):
        dualad.grad(_sum_of(p))(X)


def test_right_rules_pass_the_guard_in_every_mode():
    p = _prim("right", jvp=lambda t, a, x: t * np.cos(x), vjp=lambda g, a, x: g * np.cos(x))
    assert np.allclose(dualad.grad(_sum_of(p))(X), np.cos(X))
    assert np.allclose(dualad.vjp(p, X)[1](np.eye(3))[0], np.diag(np.cos(X)))
    assert np.allclose(dualad.jvp(p, (X,), (np.eye(3),))[1], np.diag(np.cos(X)))
    assert np.isclose(dualad.grad(dualad.grad(p))(0.3), -np.sin(0.3))
    (g,) = _create_graph(p)
    assert np.allclose(primal_value(g), np.cos(X))


# ------------------------------------------------- 2. one source of truth per rule, every path

def _every_path(p, x=0.3):
    """The derivative of ``p`` at ``x`` by each sweep the engine has."""
    out = {"plain": dualad.grad(p)(x)}
    with dualad.detect_anomaly():
        out["anomaly"] = dualad.grad(p)(x)
    v = Variable(np.float64(x), requires_grad=True)
    (g,) = autograd_grad(p(v), v, create_graph=True)
    out["create_graph"] = primal_value(g)
    out["forward"] = dualad.jvp(p, (x,), (1.0,))[1]
    out["lazy forward"] = dualad.jvp(p, (x,), (1.0,), lazy=True)[1]
    xs = np.array([x, x])
    out["vector forward"] = dualad.jvp(p, (xs,), (np.eye(2),))[1][0, 0]
    out["batched reverse"] = dualad.vjp(p, xs)[1](np.eye(2))[0][0, 0]
    return out


@pytest.mark.parametrize("order", ["defderiv, then defvjp", "defvjp, then defderiv",
                                   "defderiv, then defjvp"])
def test_every_path_uses_the_last_rule_given(order):
    p = dualad.primitive(lambda x: np.sin(x), name="twice")
    later = 100.0 * 0.3                   # the hand-written rule: 100·x
    if order == "defderiv, then defvjp":
        p.defderiv(lambda ans, x: np.cos(x))
        p.defvjp(lambda g, ans, x: g * 100.0 * x)
    elif order == "defderiv, then defjvp":
        p.defderiv(lambda ans, x: np.cos(x))
        p.defjvp(lambda t, ans, x: t * 100.0 * x)
    else:
        p.defvjp(lambda g, ans, x: g * 100.0 * x)
        p.defderiv(lambda ans, x: np.cos(x))
        later = np.cos(0.3)
    paths = _every_path(p)
    assert all(np.isclose(v, later) for v in paths.values()), paths
    # second order too: the transposed rule is differentiable like the one it came from
    second = [dualad.grad(dualad.grad(p))(0.3), dualad.jvp(dualad.grad(p), (0.3,), (1.0,))[1],
              dualad.grad(lambda z: dualad.jvp(p, (z,), (1.0,))[1])(0.3)]
    want = -np.sin(0.3) if order == "defvjp, then defderiv" else 100.0
    assert np.allclose(second, want), second


def test_defvjp_for_one_argument_keeps_the_other_from_its_partial():
    p = dualad.primitive(lambda x, y: x * y, name="mul2")
    p.defderiv(lambda a, x, y: y, lambda a, x, y: x)
    p.defvjp(lambda g, a, x, y: 2.0 * g * y, argnums=(0,))   # argument 0 only
    gx, gy = dualad.grad(lambda x, y: p(x, y), argnums=(0, 1))(3.0, 5.0)
    with dualad.detect_anomaly():
        ax, ay = dualad.grad(lambda x, y: p(x, y), argnums=(0, 1))(3.0, 5.0)
    fx = dualad.jvp(lambda x: p(x, 5.0), (3.0,), (1.0,))[1]
    fy = dualad.jvp(lambda y: p(3.0, y), (5.0,), (1.0,))[1]
    assert (gx, gy) == (ax, ay) == (fx, fy) == (10.0, 3.0)
