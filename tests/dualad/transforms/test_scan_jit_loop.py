"""dualad.scan (checkpoints=None) under dualad.jit: ONE loop equation, whose reverse,
forward and batching rules are loops too (dualad/transforms/scan/staged.py, loop.py, loop_rules.py).

The reference is the loop the default scan runs in Python: eager (no jit), and under jit
with the loop equation switched off (every step recorded, as before). Where each step
runs the same operations in the same order, the values are equal bit for bit."""
import importlib
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import dualad
from dualad import grad, jit, jvp, vmap
from dualad.jacobians import hessian

staged = importlib.import_module("dualad.transforms.scan.staged")
scan_api = importlib.import_module("dualad.transforms.scan.api")

rng = np.random.default_rng(32)
W0 = 0.5 * rng.standard_normal((3, 3))
H0 = rng.standard_normal(3)
XS = {"a": rng.standard_normal((6, 3)), "b": rng.standard_normal((6, 3))}


@pytest.fixture
def unrolled(monkeypatch):
    """Under jit, the Python loop recorded step by step (the behaviour before)."""
    def switch_off():
        monkeypatch.setattr(scan_api, "staged_scan", lambda *a, **k: None)
    return switch_off


def leaves(t):
    return dualad.core.tree.flatten(t)[0]


def assert_same(a, b):
    la, lb = leaves(a), leaves(b)
    assert len(la) == len(lb)
    for x, y in zip(la, lb):
        assert np.shape(x) == np.shape(y)
        assert np.array_equal(x, y), (x, y)


def eqn_names(jitted, *args):
    return [e.prim.name for e in jitted.program(*args).eqns]


def tanh_chain(x, length):
    def step(c, _):
        return np.tanh(c * x + 0.5), None
    return np.sum(dualad.scan(step, x, None, length=length)[0])


# --- the example ------------------------------------------------------------------
def test_jit_grad_of_a_500_step_scan_is_a_few_equations():
    """4499 equations before (every step and its pullback recorded, then rolled)."""
    g = jit(grad(lambda x: tanh_chain(x, 500)))
    x = np.linspace(0, 1, 7)
    assert np.array_equal(g(x), grad(lambda x: tanh_chain(x, 500))(x))
    body = g.program(x).body
    assert len(body) < 60
    names = eqn_names(g, x)
    # the forward loop storing what the pullback reads and the reverse loop: one equation
    # (the primal loop's value is not needed by grad)
    assert "tanh" not in names and sum(n.startswith("scan_loop") for n in names) == 1


def test_equation_count_does_not_grow_with_the_length():
    x = np.linspace(0, 1, 4)
    counts = {n: len(jit(grad(lambda x: tanh_chain(x, n))).program(x).body)
              for n in (2, 50, 400)}
    assert len(set(counts.values())) == 1, counts


# --- pytrees, reverse, ys, closures, integer leaves ----------------------------------------
def rnn(W, h0, xs, reverse=False, with_y=True):
    def step(c, x):
        h, n, flag, t = c
        h2 = np.tanh(W @ h + x["a"]) * x["b"]
        y = {"s": np.sum(h2 ** 2), "h": h2, "n": n} if with_y else None
        return (h2, n + 1, np.logical_not(flag), t + np.sum(h2)), y
    (h, n, flag, t), ys = dualad.scan(step, (h0, 0, True, 0.0), xs, reverse=reverse)
    out = np.sum(h) + t + n + (1.0 if flag else 0.0)
    if with_y:
        out = out + 0.5 * np.sum(ys["s"]) + np.sum(np.sin(ys["h"])) + np.sum(ys["n"])
    return out


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("with_y", [False, True])
def test_values_and_gradients_equal_the_unrolled_loop(reverse, with_y, unrolled):
    def f(W, h0, xs):
        return rnn(W, h0, xs, reverse, with_y)
    g = grad(f, argnums=(0, 1, 2))
    eager_v, eager_g = f(W0, H0, XS), g(W0, H0, XS)
    jf, jg = jit(f), jit(g)
    assert_same(jf(W0, H0, XS), eager_v)
    assert_same(jg(W0, H0, XS), eager_g)
    assert any(n.startswith("scan_loop") for n in eqn_names(jg, W0, H0, XS))
    assert "tanh" not in eqn_names(jg, W0, H0, XS)
    unrolled()
    ju = jit(g)
    assert "tanh" in eqn_names(ju, W0, H0, XS)
    assert_same(ju(W0, H0, XS), eager_g)


def test_the_scan_outputs_themselves():
    """Carry and ys (pytrees, integer and bool leaves) as the Python loop gives them."""
    def f(W, h0, xs):
        def step(c, x):
            h, n, flag = c
            h2 = np.tanh(W @ h + x["a"])
            return (h2, n + 1, ~flag), {"h": h2, "n": n, "f": flag}
        return dualad.scan(step, (h0, np.int64(0), np.bool_(True)), xs)
    out, ref = jit(f)(W0, H0, XS), f(W0, H0, XS)
    assert_same(out, ref)
    assert [np.asarray(v).dtype for v in leaves(out)] == \
        [np.asarray(v).dtype for v in leaves(ref)]


@pytest.mark.parametrize("length", [1, 0])
def test_short_loops(length):
    xs = XS["a"][:length]

    def f(W, h0):
        def step(h, x):
            h = np.tanh(W @ h + x)
            return h, np.sum(h)
        h, ys = dualad.scan(step, h0, xs)
        return np.sum(h) + np.sum(ys)
    g = grad(f, argnums=(0, 1))
    assert_same(jit(g)(W0, H0), g(W0, H0))
    assert_same(jit(f)(W0, H0), f(W0, H0))


def test_closed_over_values_through_containers_and_functions():
    """The values of jit's trace reach the step only through a closed-over list and a
    helper function: still one loop, the gradient flows into them."""
    def f(params, xs):
        def cell(h, x):
            return np.tanh(params[0] @ h + params[1] * x)

        def step(h, x):
            return cell(h, x), None
        return np.sum(dualad.scan(step, np.zeros(3), xs)[0])
    p = [W0, np.array([0.3, -0.2, 0.1])]
    g = grad(f)
    assert_same(jit(g)(p, XS["a"]), g(p, XS["a"]))
    assert "tanh" not in eqn_names(jit(g), p, XS["a"])


def test_replay_at_new_values():
    g = jit(grad(lambda W, xs: rnn(W, H0, xs)))
    g(W0, XS)
    xs2 = {k: v[::-1] * 1.5 for k, v in XS.items()}
    for W, xs in ((0.9 * W0, XS), (W0, xs2), (-W0, xs2)):
        assert_same(g(W, xs), grad(lambda W, xs: rnn(W, H0, xs))(W, xs))


# --- second order, forward mode, vmap ----------------------------------------------------
def test_hessian_and_grad_of_grad_under_jit_stay_a_few_equations():
    x = np.linspace(0, 1, 4)
    for n in (20, 300):
        def f(y):
            return tanh_chain(y, n)
        hj = jit(hessian(f))
        np.testing.assert_allclose(hj(x), hessian(f)(x), rtol=1e-13, atol=1e-15)
        assert len(hj.program(x).body) < 80

        def gg(y):
            return np.sum(grad(f)(y) ** 2)
        ggj = jit(grad(gg))
        np.testing.assert_allclose(ggj(x), grad(gg)(x), rtol=1e-12, atol=1e-15)
        assert len(ggj.program(x).body) < 120


def test_second_order_with_closures_pytrees_and_reverse():
    def f(W):
        return rnn(W, H0, XS, reverse=True)
    np.testing.assert_allclose(jit(hessian(f))(W0), hessian(f)(W0), rtol=1e-12, atol=1e-14)


def test_jvp_and_vmap_under_jit():
    x = np.linspace(0, 1, 4)
    v = np.linspace(1, 2, 4)

    def fj(y, t):
        return jvp(lambda z: tanh_chain(z, 30), (y,), (t,))
    assert_same(jit(fj)(x, v), fj(x, v))
    xb = np.stack([x, x + 0.1, x - 0.2])
    vg = vmap(grad(lambda z: tanh_chain(z, 30)))
    assert_same(jit(vg)(xb), vg(xb))
    gv = grad(lambda z: np.sum(vmap(lambda w: tanh_chain(w, 30))(z)))
    assert_same(jit(gv)(xb), gv(xb))
    assert "tanh" not in eqn_names(jit(vg), xb)


def test_grad_of_a_jitted_scan():
    f = jit(lambda W, xs: rnn(W, H0, xs))
    g = grad(f)(W0, XS)
    assert_same(g, grad(lambda W, xs: rnn(W, H0, xs))(W0, XS))


# --- what the step may do -----------------------------------------------------------------
def test_side_effects_happen_once_at_the_trace():
    calls = []

    def f(x):
        def step(c, _):
            calls.append(1)
            return c * 0.9 + x, None
        return dualad.scan(step, x, None, length=50)[0]
    jf = jit(f)
    jf(np.ones(2))
    assert len(calls) == 1
    jf(np.ones(2))
    assert len(calls) == 1
    calls.clear()
    f(np.ones(2))          # eager: the Python loop, as before
    assert len(calls) == 50


def test_a_step_branching_on_the_carry_runs_the_python_loop():
    def f(x):
        def step(c, _):
            if np.sum(c) > 3.0:     # a guard: one program cannot stand for every step
                return c * 0.5, None
            return c + 1.0, None
        return np.sum(dualad.scan(step, x, None, length=8)[0])
    x = np.array([0.5, 0.25])
    g = jit(grad(f))
    assert_same(g(x), grad(f)(x))
    assert_same(jit(f)(x), f(x))
    assert_same(jit(f)(3 * x), f(3 * x))


def test_plain_scan_inside_jit_is_not_touched():
    """Nothing the loop reads is traced: the Python loop on plain values, as before."""
    def f(x):
        c, _ = dualad.scan(lambda c, a: (c * a, None), 1.0, np.arange(1.0, 5.0))
        return x * c
    jf = jit(f)
    assert jf(2.0) == 48.0
    assert "scan_loop" not in " ".join(eqn_names(jf, 2.0))


def test_eager_behaviour_is_unchanged():
    assert staged.staged_scan(lambda c, x: (c, None), "s", [np.ones(2)], lambda v: v[0],
                              [], lambda v: None, None, 3, False) is None


# --- property: random small steps against the unrolled loop ----------------------------------
_OPS = [lambda a, b: a * b, lambda a, b: a + b, lambda a, b: np.tanh(a) - b,
        lambda a, b: np.sin(a) * np.cos(b), lambda a, b: a / (1.0 + b * b),
        lambda a, b: np.exp(-a * a) + b]


@settings(derandomize=True, max_examples=25, deadline=None)
@given(ops=st.lists(st.integers(0, len(_OPS) - 1), min_size=1, max_size=4),
       length=st.integers(1, 7), reverse=st.booleans(), with_y=st.booleans(),
       seed=st.integers(0, 2 ** 16))
def test_random_steps_equal_the_unrolled_loop(ops, length, reverse, with_y, seed):
    r = np.random.default_rng(seed)
    w, c0 = r.standard_normal(3), r.standard_normal(3)
    xs = r.standard_normal((length, 3))

    def f(w, c0, xs):
        def step(c, x):
            v = c
            for k in ops:
                v = _OPS[k](v, x * w)
            c2 = 0.5 * np.tanh(v)
            return c2, (np.sum(c2 * x) if with_y else None)
        c, ys = dualad.scan(step, c0, xs, reverse=reverse)
        return np.sum(c) + (np.sum(ys ** 2) if with_y else 0.0)
    g = grad(f, argnums=(0, 1, 2))
    assert_same(jit(f)(w, c0, xs), f(w, c0, xs))
    gj = jit(g)(w, c0, xs)
    with mock.patch.object(scan_api, "staged_scan", lambda *a, **k: None):
        gu = jit(g)(w, c0, xs)   # the same trace (which computes x * w once), unrolled
    assert_same(gj[1:], gu[1:])   # the carry's and xs' cotangents: bit for bit
    # w's cotangent: summed over the steps in the loop's carry, per use in the tape
    np.testing.assert_allclose(gj[0], gu[0], rtol=1e-12, atol=1e-14)
    for a, b in zip(gj, g(w, c0, xs)):   # eager: x * w computed (and pulled back) twice
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def test_an_integer_carry_beyond_2_53():
    """The loop packs integer leaves in float64: exact below 2**53. Beyond it at the trace,
    the Python loop carries them; at a replay, the jitted call falls back to f."""
    def f(x, n0):
        def step(c, _):
            n, v = c
            return (n * 3, v * 0.5 + x), None
        return dualad.scan(step, (n0, x), None, length=3)[0]
    big = np.int64(3 ** 34)
    assert int(jit(f)(np.ones(2), big)[0]) == 3 ** 37
    j = jit(f)
    assert int(j(np.ones(2), np.int64(3))[0]) == 81
    assert int(j(np.ones(2), big)[0]) == 3 ** 37


def test_a_carry_that_is_not_an_array_keeps_the_python_loop():
    def f(x):
        def step(c, _):
            v, tag = c
            return (np.sin(v) * x, tag), None
        return dualad.scan(step, (x, "label"), None, length=5)[0][0]
    x = np.array([0.3, 0.6])
    assert_same(jit(f)(x), f(x))
    assert_same(jit(grad(lambda x: np.sum(f(x))))(x), grad(lambda x: np.sum(f(x)))(x))
