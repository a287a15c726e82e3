"""Lazy forward mode (``jvp(..., lazy=True)``): the eager sweep's result, with the
tangents no output needs never computed."""
import numpy as np
import pytest

import dualad

RNG = np.random.default_rng(7)


def _programs():
    A = RNG.standard_normal((4, 4))
    S = A @ A.T + 4 * np.eye(4)

    def mixed(x):
        y = np.tanh(A @ x) * np.exp(-x) + np.sort(x) ** 2
        return np.sum(np.log1p(y * y)) + np.max(x) * np.prod(x[:2])

    def several_outputs(x):         # eigh returns two values from one rule call
        w, v = np.linalg.eigh(S + np.outer(x, x))
        return np.sum(w * w) + np.sum(v[:, 0] ** 2 * x)

    def tuple_out(x):
        return np.sin(x), np.sum(x ** 3), x[1] * x[2]

    def constant_piece(x):          # a rule with no contribution: floor has zero derivative
        return np.floor(x) * 2.0 + np.cos(x)
    return [mixed, several_outputs, tuple_out, constant_piece]


@pytest.mark.parametrize("f", _programs(), ids=lambda f: f.__name__)
@pytest.mark.parametrize("batched", [False, True])
def test_lazy_equals_eager(f, batched):
    x = RNG.standard_normal(4)
    t = RNG.standard_normal((3, 4) if batched else 4)
    eager = dualad.jvp(f, (x,), (t,))
    lazy = dualad.jvp(f, (x,), (t,), lazy=True)
    for e, l in zip(dualad.core.tree.flatten(eager)[0], dualad.core.tree.flatten(lazy)[0]):
        np.testing.assert_allclose(l, e, rtol=1e-14, atol=1e-14)


@pytest.mark.parametrize("f", _programs()[:2], ids=lambda f: f.__name__)
def test_forward_over_reverse_lazy_equals_eager(f):
    x = RNG.standard_normal(4)
    V = np.eye(4)
    g = dualad.grad(f)
    np.testing.assert_allclose(dualad.jvp(g, (x,), (V,), lazy=True)[1],
                               dualad.jvp(g, (x,), (V,))[1], rtol=1e-13, atol=1e-13)


def test_unneeded_tangents_are_never_computed():
    calls = []

    @dualad.primitive
    def cube(x):
        return x ** 3

    cube.defjvp(lambda t, ans, x: calls.append("jvp") or 3 * x ** 2 * t)
    cube.defvjp(lambda g, ans, x: 3 * x ** 2 * g)

    def f(x):
        unused = cube(x)              # its tangent feeds nothing that is returned
        return np.sin(x) + 0 * np.sum(np.asarray(dualad.extend.primal_value(unused)))

    x = np.array([0.5, 1.5])
    dualad.jvp(f, (x,), (np.ones(2),), lazy=True)
    assert calls == []
    dualad.jvp(f, (x,), (np.ones(2),))
    assert calls == ["jvp"]
    # forward-over-reverse: the tangent of the loss's forward value cube(x) feeds only
    # the loss itself, whose tangent nobody asks for; the backward pass uses x, not it
    calls.clear()
    loss = lambda x: np.sum(cube(x))
    v = np.ones(2)
    hv = dualad.hvp(loss, x, v)
    assert calls == []
    np.testing.assert_allclose(hv, 6 * x * v)
    dualad.jvp(dualad.grad(loss), (x,), (v,))   # eager: pushes it anyway
    assert calls == ["jvp"]


def test_long_chain_without_recursion():
    def chain(x):
        for _ in range(20000):
            x = x * 1.0000001 + 1e-9
        return x
    _, t = dualad.jvp(chain, (1.0,), (1.0,), lazy=True)
    assert t == pytest.approx(1.0000001 ** 20000, rel=1e-12)


def test_anomaly_mode_still_sees_each_tangent():
    with dualad.detect_anomaly(), np.errstate(divide="ignore"), \
            pytest.raises(FloatingPointError, match="sqrt"):
        dualad.jvp(lambda x: np.sqrt(x) * 0.0, (np.array([0.0, 1.0]),), (np.ones(2),),
                   lazy=True)
