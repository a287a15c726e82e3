"""dualad.scan: values and derivatives of both checkpoint settings against a plain Python
loop and independent oracles (closed forms, finite differences by check_grads), the
revolve schedule's advance count, second order, closures, pytrees, reverse, vmap, jit."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import dualad
from dualad import grad, jvp, jit, scan, vjp, vmap
from dualad import jacobians
from dualad.revolve import forward_steps
from dualad.verification import check_grads

BINOMIAL = [dict(checkpoints=None), dict(checkpoints="binomial", snapshots=2),
            dict(checkpoints="binomial", snapshots=3), dict(checkpoints="binomial")]
IDS = ["every-step", "binomial-2", "binomial-3", "binomial-default"]

rng = np.random.default_rng(0)
W0 = 0.5 * rng.normal(size=(3, 3))
H0 = rng.normal(size=3)
XS = rng.normal(size=(9, 3))


def rnn_loss(W, h0, xs, **kw):
    """An RNN: h_{k+1} = tanh(W h_k + x_k), loss Σ_k |h_{k+1}|² + Σ h_l; W is closed over."""
    def step(h, x):
        h = np.tanh(W @ h + x)
        return h, np.sum(h ** 2)
    h, ys = scan(step, h0, xs, **kw)
    return np.sum(ys) + np.sum(h)


def rnn_loop(W, h0, xs):
    """The same loss as a plain Python loop (the reference dualad does not wrap)."""
    h, total = h0, 0.0
    for x in xs:
        h = np.tanh(W @ h + x)
        total = total + np.sum(h ** 2)
    return total + np.sum(h)


@pytest.mark.parametrize("kw", BINOMIAL, ids=IDS)
def test_rnn_value_and_gradient_equal_the_python_loop(kw):
    assert np.isclose(rnn_loss(W0, H0, XS, **kw), rnn_loop(W0, H0, XS), rtol=1e-14)
    g = grad(rnn_loss, argnums=(0, 1, 2))(W0, H0, XS, **kw)
    ref = grad(rnn_loop, argnums=(0, 1, 2))(W0, H0, XS)
    for a, b in zip(g, ref):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("kw", BINOMIAL, ids=IDS)
def test_rnn_derivatives_against_finite_differences_to_order_two(kw):
    # the oracle: Richardson-extrapolated finite differences, forward and reverse, order 2
    check_grads(lambda W, h0: rnn_loss(W, h0, XS[:5], **kw), (W0, H0), order=2)


@pytest.mark.parametrize("kw", BINOMIAL, ids=IDS)
def test_linear_recurrence_against_its_closed_form(kw):
    # c_{k+1} = a c_k + x_k:  c_l = a^l c_0 + Σ_k a^{l-1-k} x_k,
    # ∂c_l/∂a = l a^{l-1} c_0 + Σ_k (l-1-k) a^{l-2-k} x_k,  ∂c_l/∂x_k = a^{l-1-k}
    l, a, c0 = 11, 0.9, 1.3
    xs = np.linspace(-1, 1, l)

    def f(a, c0, xs):
        return scan(lambda c, x: (a * c + x, None), c0, xs, **kw)[0]
    k = np.arange(l)
    assert np.isclose(f(a, c0, xs), a ** l * c0 + np.sum(a ** (l - 1 - k) * xs))
    ga, gc, gx = grad(f, argnums=(0, 1, 2))(a, c0, xs)
    assert np.isclose(ga, l * a ** (l - 1) * c0 + np.sum((l - 1 - k) * a ** (l - 2.0 - k) * xs))
    assert np.isclose(gc, a ** l)
    np.testing.assert_allclose(gx, a ** (l - 1 - k))
    # forward mode and second order: ∂²c_l/∂a² = l(l-1) a^{l-2} c_0 + Σ (l-1-k)(l-2-k) a^{l-3-k} x_k
    d2 = l * (l - 1) * a ** (l - 2) * c0 + np.sum((l - 1 - k) * (l - 2 - k) * a ** (l - 3.0 - k) * xs)
    assert np.isclose(jvp(lambda a: f(a, c0, xs), (a,), (1.0,))[1], ga)
    assert np.isclose(grad(grad(f))(a, c0, xs), d2)
    assert np.isclose(jvp(grad(f), (a, c0, xs), (1.0, 0.0, np.zeros(l)))[1], d2)
    assert np.isclose(jacobians.hessian(lambda a: f(a, c0, xs), np.array(a)), d2)


@pytest.mark.parametrize("l,s", [(1, 1), (2, 1), (7, 2), (10, 2), (30, 3), (50, 4), (7, 7),
                                 (20, 30), (64, 5)])
def test_advances_equal_the_binomial_bound(l, s):
    """Every evaluation of the step is counted by a user primitive inside it: the trace
    (1), the primal loop (l), and the reverse sweep: forward_steps(l, s) advances plus l
    taped steps. Nothing else runs the step."""
    count = [0]

    @dualad.primitive
    def counted(x):
        count[0] += 1
        return x
    counted.defvjp(lambda ct, ans, x: ct)
    counted.defjvp(lambda t, ans, x: t)

    def f(W):
        h, _ = scan(lambda h, x: (np.tanh(W @ counted(h)) + x, None), H0, np.ones((l, 3)),
                    checkpoints="binomial", snapshots=s)
        return np.sum(h)
    grad(f)(W0)
    assert count[0] == 1 + l + forward_steps(l, s) + l
    count[0] = 0
    f(W0)
    assert count[0] == 1 + l          # the value alone: trace + loop, nothing stored


def test_snapshots_bound_the_stored_carries():
    """The carries the step made that are alive at the start of a step (weak references
    to each): s with the binomial schedule (the s − 1 stored besides the initial carry,
    which the step did not make, and the current one), all l − 1 earlier ones with
    checkpoints=None (the tape keeps them: the test's own check).
    (No gc.collect: reference counting frees each carry; a collection per step takes
    seconds.)"""
    import weakref
    alive, peak = [], [0]

    @dualad.primitive
    def watch(h):
        out = h.copy()
        alive.append(weakref.ref(out))
        return out
    watch.defvjp(lambda ct, ans, h: ct)

    @dualad.primitive
    def probe(h):
        peak[0] = max(peak[0], sum(r() is not None for r in alive))
        return h
    probe.defvjp(lambda ct, ans, h: ct)

    def f(c0, **kw):
        return np.sum(scan(lambda h, x: (watch(np.sin(probe(h)) + x), None), c0,
                           np.ones((40, 200)), **kw)[0])
    for kw, bound in [(dict(checkpoints="binomial", snapshots=2), 2),
                      (dict(checkpoints="binomial", snapshots=4), 4),
                      (dict(checkpoints=None), 39)]:
        alive.clear()
        peak[0] = 0
        grad(f)(np.ones(200), **kw)
        assert peak[0] == bound, (kw, peak[0])


@pytest.mark.parametrize("kw", BINOMIAL[:2], ids=IDS[:2])
def test_pytrees_reverse_and_y_none(kw):
    def step(c, x):
        new = {"a": c["a"] * x["u"] + np.sum(c["b"]), "b": c["b"] * 0.5 + x["v"]}
        return new, (c["a"], [x["v"] * c["a"]])
    carry = {"a": 0.3, "b": np.array([1.0, 2.0])}
    xs = {"u": np.linspace(0.5, 1.5, 5), "v": np.arange(10.0).reshape(5, 2) / 10}
    for reverse in (False, True):
        c, (y1, [y2]) = scan(step, carry, xs, reverse=reverse, **kw)
        # reference: Python loop in the scan order, ys put back in xs's order
        ref_c, ys = carry, [None] * 5
        for i in (range(4, -1, -1) if reverse else range(5)):
            ref_c, ys[i] = step(ref_c, {"u": xs["u"][i], "v": xs["v"][i]})
        assert np.isclose(c["a"], ref_c["a"]) and np.allclose(c["b"], ref_c["b"])
        np.testing.assert_allclose(y1, [y[0] for y in ys])
        np.testing.assert_allclose(y2, np.stack([y[1][0] for y in ys]))

        def loss(u, b0):
            c, (y1, [y2]) = scan(step, {"a": 0.3, "b": b0}, {"u": u, "v": xs["v"]},
                                 reverse=reverse, **kw)
            return c["a"] + np.sum(y2 ** 2) + np.sum(np.sin(y1))
        check_grads(loss, (xs["u"], carry["b"]), order=1)
    c, ys = scan(lambda c, x: (c * 2.0, None), 1.5, length=4, **kw)
    assert ys is None and c == 24.0


@pytest.mark.parametrize("kw", BINOMIAL[:2], ids=IDS[:2])
def test_integer_leaves_are_carried_not_differentiated(kw):
    def step(c, x):
        i, h = c
        return (i + 1, h * x + i), h

    def f(h):
        (i, h), ys = scan(step, (0, h), np.arange(1.0, 6.0), **kw)
        assert i == 5 and np.asarray(i).dtype.kind == "i"
        return h + np.sum(ys)
    check_grads(f, (np.array(0.7),), order=2)


@pytest.mark.parametrize("kw", BINOMIAL[:2], ids=IDS[:2])
@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
def test_dtypes_are_kept(kw, dtype):
    xs = np.linspace(0.5, 1.0, 4).astype(dtype)
    c, ys = scan(lambda c, x: (c * x + x, c), dtype(0.3), xs, **kw)
    assert np.result_type(c) == dtype and ys.dtype == dtype
    ref = dtype(0.3)
    for x in xs:
        ref = ref * x + x
    np.testing.assert_allclose(c, ref, rtol=1e-6)
    if dtype is np.float32:
        g = grad(lambda c0: scan(lambda c, x: (c * x + x, c), c0, xs, **kw)[0])(dtype(0.3))
        assert np.result_type(g) == np.float32 and np.isclose(g, np.prod(xs), rtol=1e-6)
    else:   # a real loss of a complex carry: the JAX convention, ∂f/∂x − i ∂f/∂y
        def f(z):
            return np.abs(scan(lambda c, x: (c * c * 0.5 + x, None), z, xs, **kw)[0]) ** 2
        ref = grad(lambda z: np.abs(_loop_sq(z, xs)) ** 2)(0.3 + 0.2j)
        assert np.isclose(grad(f)(0.3 + 0.2j), ref)


def _loop_sq(z, xs):
    for x in xs:
        z = z * z * 0.5 + x
    return z


def test_zero_length_returns_the_carry_and_empty_ys():
    for kw in BINOMIAL[:2]:
        c, ys = scan(lambda c, x: (c + x, c * x), np.ones(2), np.zeros((0, 2)), **kw)
        assert np.array_equal(c, np.ones(2)) and ys.shape == (0, 2)
        g = grad(lambda c0: np.sum(scan(lambda c, x: (c * 3.0, None), c0, length=0, **kw)[0]))(
            np.ones(2))
        np.testing.assert_array_equal(g, np.ones(2))


@pytest.mark.parametrize("kw", BINOMIAL[:3], ids=IDS[:3])
def test_vmap_over_carry_closure_and_xs(kw):
    Hs = rng.normal(size=(4, 3))
    Ws = 0.5 * rng.normal(size=(4, 3, 3))
    XSs = rng.normal(size=(4, 6, 3))
    np.testing.assert_allclose(vmap(lambda h: rnn_loss(W0, h, XS, **kw))(Hs),
                               [rnn_loop(W0, h, XS) for h in Hs], rtol=1e-13)
    np.testing.assert_allclose(vmap(lambda W: rnn_loss(W, H0, XS, **kw))(Ws),
                               [rnn_loop(W, H0, XS) for W in Ws], rtol=1e-13)
    np.testing.assert_allclose(vmap(lambda xs: rnn_loss(W0, H0, xs, **kw))(XSs),
                               [rnn_loop(W0, H0, xs) for xs in XSs], rtol=1e-13)
    g = vmap(grad(lambda W, h: rnn_loss(W, h, XS, **kw)))(Ws, Hs)
    ref = [grad(rnn_loop)(W, h, XS) for W, h in zip(Ws, Hs)]
    np.testing.assert_allclose(g, ref, rtol=1e-12)


@pytest.mark.parametrize("kw", BINOMIAL[:2], ids=IDS[:2])
def test_jit_of_scan_and_grad(kw):
    f = jit(lambda W, xs: rnn_loss(W, H0, xs, **kw))
    for W in (W0, 0.9 * W0):
        assert np.isclose(f(W, XS), rnn_loop(W, H0, XS))
        np.testing.assert_allclose(grad(f)(W, XS), grad(rnn_loop)(W, H0, XS), rtol=1e-12)
    gj = jit(grad(lambda W: rnn_loss(W, H0, XS, **kw)))
    np.testing.assert_allclose(gj(W0), grad(rnn_loop)(W0, H0, XS), rtol=1e-12)
    prog = f.program(W0, XS)
    names = [e.prim.name for e in prog.eqns]
    if kw["checkpoints"] == "binomial":   # the loop is ONE equation of the program
        assert names.count("scan(step)") == 1 and "tanh" not in names
    else:   # under jit the Python loop is one loop equation too (dualad/transforms/scan/staged.py)
        assert names.count("scan_loop(step)") == 1 and "tanh" not in names


def test_jvp_of_grad_and_hvp_match_the_loop():
    v = rng.normal(size=(3, 3))
    kw = dict(checkpoints="binomial", snapshots=2)
    hv = jacobians.hvp(lambda W: rnn_loss(W, H0, XS, **kw), W0, v)
    ref = jacobians.hvp(lambda W: rnn_loop(W, H0, XS), W0, v)
    np.testing.assert_allclose(hv, ref, rtol=1e-11)
    H = jacobians.hessian(lambda h: rnn_loss(W0, h, XS, **kw), H0)
    np.testing.assert_allclose(H, jacobians.hessian(lambda h: rnn_loop(W0, h, XS), H0),
                               rtol=1e-11, atol=1e-13)


def test_vjp_with_a_batch_of_cotangents():
    kw = dict(checkpoints="binomial", snapshots=3)

    def f(W):
        return scan(lambda h, x: (np.tanh(W @ h + x), h * 2), H0, XS, **kw)

    def ref(W):
        return scan(lambda h, x: (np.tanh(W @ h + x), h * 2), H0, XS)
    (c, ys), pb = vjp(f, W0)
    (_, _), pb_ref = vjp(ref, W0)
    cts = (rng.normal(size=(2, 3)), rng.normal(size=(2, 9, 3)))
    np.testing.assert_allclose(pb(cts)[0], pb_ref(cts)[0], rtol=1e-12)


@settings(derandomize=True, max_examples=25, deadline=None)
@given(l=st.integers(1, 12), s=st.integers(1, 6), reverse=st.booleans(),
       seed=st.integers(0, 10 ** 6))
def test_binomial_equals_every_step_property(l, s, reverse, seed):
    r = np.random.default_rng(seed)
    W, h0, xs = 0.6 * r.normal(size=(2, 2)), r.normal(size=2), r.normal(size=(l, 2))
    kw = dict(reverse=reverse)

    def loss(W, h0, xs, **more):
        c, ys = scan(lambda h, x: (np.sin(W @ h) + x * h, np.cos(h)), h0, xs, **kw, **more)
        return np.sum(c) + np.sum(ys * xs)
    g_every = grad(loss, argnums=(0, 1, 2))(W, h0, xs)
    g_binom = grad(loss, argnums=(0, 1, 2))(W, h0, xs, checkpoints="binomial", snapshots=s)
    for a, b in zip(g_every, g_binom):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    t = r.normal(size=(2, 2))
    assert np.isclose(jvp(lambda W: loss(W, h0, xs, checkpoints="binomial", snapshots=s),
                          (W,), (t,))[1], np.sum(g_every[0] * t))


@pytest.mark.parametrize("snapshots,reverse", [(2, False), (3, True), (1, False)])
def test_the_primitive_passes_the_rule_checker(snapshots, reverse):
    """The loop primitive's rules (reverse by the schedule, forward, vmap, jit), to order 2,
    against the rule checker's finite differences."""
    from dualad.transforms.scan.rules import scan_primitive
    from dualad.verification import check_rule

    def body(lifted, carry, x):
        (W,), (h,), (x,) = lifted, carry, x
        h1 = np.tanh(W @ h + x)
        return [h1], [np.sum(h1 ** 2), h * x]
    f64 = np.dtype(float)
    prim, _ = scan_primitive(body, "rnn", [((3, 3), f64)], [((3,), f64)], [((3,), f64)],
                             [((), f64), ((3,), f64)], 5, snapshots, reverse, [True])
    r = np.random.default_rng(1)
    check_rule(prim, args=(0.5 * r.normal(size=(3, 3)), r.normal(size=3),
                           r.normal(size=(5, 3)))).raise_if_failed()


@pytest.mark.parametrize("inner", BINOMIAL[:2], ids=IDS[:2])
@pytest.mark.parametrize("outer", BINOMIAL[:2], ids=IDS[:2])
def test_nested_scans(inner, outer):
    """A scan inside another's step, closing over the outer carry and a differentiated W."""
    def f(W, inner, outer):
        def outer_step(c, x):
            ci, _ = scan(lambda h, y: (np.tanh(W @ h) * y + c, None), c, np.ones(3) * x, **inner)
            return ci, np.sum(ci)
        c, ys = scan(outer_step, np.ones(2), np.linspace(0.1, 1, 4), **outer)
        return np.sum(c) + np.sum(ys)
    W = np.array([[0.5, -0.2], [0.1, 0.3]])
    ref = grad(f)(W, {}, {})
    np.testing.assert_allclose(grad(f)(W, inner, outer), ref, rtol=1e-13)
    check_grads(lambda W: f(W, inner, outer), (W,), order=1)


@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_planner_jacobians_and_hessians(mode):
    W = np.array([[0.5, -0.2], [0.1, 0.3]])

    def f(h0, **kw):
        return scan(lambda h, x: (np.tanh(W @ h + x), h), h0, np.ones((5, 2)), **kw)[0]
    kw = dict(checkpoints="binomial", snapshots=2)
    h0 = np.array([0.3, -0.4])
    np.testing.assert_allclose(jacobians.jacobian(lambda h: f(h, **kw), h0, mode=mode),
                               jacobians.jacobian(f, h0, mode=mode), rtol=1e-13)
    hmode = f"{mode}-over-reverse"
    np.testing.assert_allclose(
        jacobians.hessian(lambda h: np.sum(f(h, **kw) ** 2), h0, mode=hmode),
        jacobians.hessian(lambda h: np.sum(f(h) ** 2), h0, mode=hmode), rtol=1e-12, atol=1e-15)
