"""Integrands and right-hand sides that close over traced values (closure conversion,
dualad/scipy/_closure.py): solve_ivp, odeint, quad, quad_vec differentiate in them.

Oracles: closed forms (exponential decay, ∫ e^{-kx}), at rtol 1e-6 (sweeps at 1e-10), and
central differences of SciPy (step 1e-5, rtol 1e-5)."""
import functools

import numpy as np
import pytest
import scipy.integrate as si

import dualad
from dualad.scipy.integrate import odeint, quad, quad_vec, solve_ivp
from dualad.scipy._closure import closure_convert

TIGHT = dict(rtol=1e-10, atol=1e-12)


def decay_closed_form(k, t=1.0, y0=2.0):
    return y0 * np.exp(-k * t), -t * y0 * np.exp(-k * t)   # value, d/dk


def _solve_ivp_end(fun):
    return solve_ivp(fun, (0.0, 1.0), np.array([2.0]), t_eval=[1.0], **TIGHT).y[0, 0]


class Model:
    def __init__(self, k):
        self.k = k

    def rhs(self, t, y):
        return -self.k * y


class CallableModel(Model):
    def __call__(self, t, y):
        return -self.k * y


def _helper(y, k):
    return -k * y


# each builds a right-hand side (t, y) that reads k from a different place
CLOSURES = {
    "lambda": lambda k: (lambda t, y: -k * y),
    "nested helper in a cell": lambda k: (lambda t, y: (lambda z: _helper(z, k))(y)),
    "list in a cell": lambda k: (lambda p: (lambda t, y: -p[0] * y))([k, 3.0]),
    "dict in a cell": lambda k: (lambda p: (lambda t, y: -p["k"] * y))({"k": k}),
    "functools.partial": lambda k: functools.partial(lambda t, y, k: -k * y, k=k),
    "bound method": lambda k: Model(k).rhs,
    "object used in a lambda": lambda k: (lambda m: (lambda t, y: m.rhs(t, y)))(Model(k)),
    "callable object": lambda k: CallableModel(k),
    "default argument": lambda k: (lambda t, y, k=k: -k * y),
    "derived value": lambda k: (lambda c: (lambda t, y: -c * y))(2.0 * k - k),
}


@pytest.mark.parametrize("where", CLOSURES)
@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_solve_ivp_differentiates_a_closed_over_value(where, mode):
    loss = lambda k: _solve_ivp_end(CLOSURES[where](k))  # noqa: E731
    if mode == "rev":
        g = dualad.grad(loss)(0.7)
    else:
        g = dualad.jvp(loss, (0.7,), (1.0,))[1]
    assert g == pytest.approx(decay_closed_form(0.7)[1], rel=1e-6)


@pytest.mark.parametrize("sensitivity", ["forward", "adjoint"])
def test_closure_and_args_together_and_several_levels(sensitivity):
    """k closed over, b through args, y0 traced; and grad of grad (two trace levels)."""
    def loss(k, b, y0):
        r = solve_ivp(lambda t, y, b: -k * y + b, (0.0, 1.0), y0, t_eval=[0.5, 1.0],
                      args=(b,), sensitivity=sensitivity, **TIGHT)
        return np.sum(r.y)

    def ref(k, b, y0):
        t = np.array([0.5, 1.0])
        return np.sum(b / k + (y0[:, None] - b / k) * np.exp(-k * t))
    args = (0.7, 0.3, np.array([2.0, 1.0]))
    g = dualad.grad(loss, argnums=(0, 1, 2))(*args)
    h = 1e-6
    np.testing.assert_allclose(g[0], (ref(0.7 + h, 0.3, args[2]) - ref(0.7 - h, 0.3, args[2]))
                               / (2 * h), rtol=1e-6)
    np.testing.assert_allclose(g[1], (ref(0.7, 0.3 + h, args[2]) - ref(0.7, 0.3 - h, args[2]))
                               / (2 * h), rtol=1e-6)
    np.testing.assert_allclose(g[2], [np.exp(-0.35) + np.exp(-0.7)] * 2, rtol=1e-7)
    d2 = dualad.grad(dualad.grad(lambda k: loss(k, 0.3, args[2])))(0.7)
    h = 1e-4
    d2_ref = (ref(0.7 + h, 0.3, args[2]) - 2 * ref(0.7, 0.3, args[2])
              + ref(0.7 - h, 0.3, args[2])) / h ** 2
    assert d2 == pytest.approx(d2_ref, rel=1e-5)


def test_odeint_with_closures_both_modes():
    t = np.array([0.0, 1.0])

    def loss(k):
        return odeint(lambda y, s: -k * y, np.array([2.0]), t, rtol=1e-10, atol=1e-12)[-1, 0]
    assert dualad.grad(loss)(0.7) == pytest.approx(decay_closed_form(0.7)[1], rel=1e-6)
    assert dualad.jvp(loss, (0.7,), (1.0,))[1] == pytest.approx(decay_closed_form(0.7)[1],
                                                                rel=1e-6)
    g = dualad.grad(lambda k: odeint(Model(k).rhs, np.array([2.0]), t, tfirst=True,
                                     rtol=1e-10, atol=1e-12)[-1, 0])(0.7)
    assert g == pytest.approx(decay_closed_form(0.7)[1], rel=1e-6)


def test_quad_and_quad_vec_with_closures():
    # ∫_0^1 e^{-kx} dx = (1 - e^{-k})/k
    d_ref = lambda k: (k * np.exp(-k) - (1 - np.exp(-k))) / k ** 2  # noqa: E731
    g = dualad.grad(lambda k: quad(lambda x: np.exp(-k * x), 0.0, 1.0)[0])(0.7)
    assert g == pytest.approx(d_ref(0.7), rel=1e-8)
    g = dualad.jvp(lambda k: quad(lambda x: np.exp(-k * x), 0.0, 1.0)[0], (0.7,), (1.0,))[1]
    assert g == pytest.approx(d_ref(0.7), rel=1e-8)
    g = dualad.grad(lambda k: np.sum(quad_vec(lambda x: np.stack([np.exp(-k * x), k * x]),
                                              0.0, 1.0)[0]))(0.7)
    assert g == pytest.approx(d_ref(0.7) + 0.5, rel=1e-8)


def test_a_closed_over_mutable_counter_still_counts():
    calls = [0]

    def rhs(t, y, k):
        calls[0] += 1
        return -k * y

    def loss(k):
        return solve_ivp(lambda t, y: rhs(t, y, k), (0.0, 1.0), np.array([1.0]), **TIGHT).y[0, -1]
    dualad.grad(loss)(0.5)
    assert calls[0] > 0   # the cell holding `calls` is shared, not copied


def test_closure_convert_finds_values_and_leaves_plain_functions_alone():
    f = lambda t, y: -y  # noqa: E731
    assert closure_convert(f) == (f, ())
    seen = []

    def probe(k):
        g, vals = closure_convert(lambda t, y: -k * y + k)
        seen.append(len(vals))
        return g(0.0, 1.0, *vals)
    assert dualad.grad(probe)(0.5) == pytest.approx(0.0)
    assert seen == [1]   # k appears twice, once as a value to differentiate in


def test_values_match_scipy_with_a_closure():
    k = 0.9
    r = dualad.jvp(lambda k: solve_ivp(lambda t, y: [-k * y[0], y[0] - y[1]], (0.0, 2.0),
                                       np.array([1.0, 0.0])).y, (k,), (1.0,))[0]
    s = si.solve_ivp(lambda t, y: [-k * y[0], y[0] - y[1]], (0.0, 2.0), [1.0, 0.0])
    np.testing.assert_array_equal(dualad.extend.primal_value(r), s.y)
