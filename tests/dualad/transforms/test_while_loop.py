"""dualad.while_loop: values, derivatives in both modes (against the store-all Python
loop of the same length), the online schedule, vmap, jit and the errors."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import dualad
import dualad.jacobians
from dualad.revolve import forward_steps
from dualad.transforms.while_loop.online import (SCHEDULES, OnlineSnapshots, placement,
                                                 online_forward_steps, online_positions)

W = np.array([[0.9, 0.2], [-0.3, 0.8]])


def _trips(x, w=W):
    c, n = np.asarray(x, float), 0
    while np.sum(c ** 2) > 1e-4:
        c, n = np.tanh(w @ c) * 0.9, n + 1
    return n


def looped(x, w=W, snapshots=3):
    """The while loop: iterate until the state is small (length depends on x and w)."""
    def cond(c):
        return np.sum(c["x"] ** 2) > 1e-4

    def body(c):
        return {"x": np.tanh(w @ c["x"]) * 0.9, "i": c["i"] + 1}
    return dualad.while_loop(cond, body, {"x": x, "i": 0}, snapshots=snapshots)["x"]


def unrolled(x, w=W, n=None):
    """The same loop unrolled in Python for a known length: every step stored."""
    c = x
    for _ in range(n):
        c = np.tanh(w @ c) * 0.9
    return c


X = [np.array([1.0, 0.5]), np.array([0.2, 0.1]), np.array([0.03, 0.0]),
     np.array([0.005, 0.002])]   # 20, 14, 6 and zero trips


# --- the online schedule ------------------------------------------------------------------
def _replay(n, c, schedule):
    """Execute the online sweep and reversal on positions: each reverse i must find
    x_i current, in the order n-1 .. 0; at most c states held. Returns the advances."""
    slots = placement(schedule, c)
    held, advances = {0}, n
    for i in range(1, n):
        kept, dropped = slots.offer(i)
        held.discard(dropped)
        if kept:
            held.add(i)
        assert len(held) <= c
    here, expect = None, n - 1
    for act in slots.reverse_actions(n):
        kind = act[0]
        if kind == "restore":
            assert act[1] in held
            here = act[1]
        elif kind == "store":
            held.add(here)
            assert len(held) <= c
        elif kind == "free":
            held.discard(act[1])
        elif kind == "advance":
            assert here == act[1]
            advances += act[2] - act[1]
            here = act[2]
        else:
            assert here == act[1] == expect
            expect -= 1
            here = None
    assert expect == -1 and not held
    return advances


@pytest.mark.parametrize("schedule", sorted(SCHEDULES))
@settings(derandomize=True, max_examples=60, deadline=None)
@given(n=st.integers(0, 400), c=st.integers(1, 12))
def test_online_schedule_reverses_every_step_within_its_slots(schedule, n, c):
    advances = _replay(n, c, schedule)
    assert (advances, online_forward_steps(n, c, schedule)[1] <= c) == (
        online_forward_steps(n, c, schedule)[0], True)
    pos = online_positions(n, c, schedule) + [n]
    offline_parts = sum(forward_steps(pos[k + 1] - pos[k], c - k) for k in range(len(pos) - 1))
    assert advances == max(n, 0) + offline_parts


@pytest.mark.parametrize("schedule", sorted(SCHEDULES))
def test_online_costs_close_to_offline_binomial(schedule):
    """Online (length unknown) against revolve (length known), same slots: never fewer
    advances than the optimum, within 25 % of it plus the one extra sweep bound."""
    for n in (100, 1000, 10000):
        for c in (5, 10, 20):
            online, peak = online_forward_steps(n, c, schedule)
            offline = forward_steps(n, c)
            assert peak <= c
            assert offline <= online <= 1.25 * offline, (n, c, online, offline)


def test_levels_thin_out_behind_the_front():
    slots = OnlineSnapshots(4)
    for i in range(1, 20):
        slots.offer(i)
    assert slots.positions[0] == 0 and len(slots.positions) == 4
    assert slots.positions == sorted(slots.positions)
    for schedule in SCHEDULES:
        assert online_positions(3, 10, schedule) == [0, 1, 2]     # room for every state
        assert online_positions(50, 1, schedule) == [0]


# --- values and derivatives ---------------------------------------------------------------
@pytest.mark.parametrize("x", X, ids=["a", "b", "c", "zero-trips"])
@pytest.mark.parametrize("snapshots", [1, 2, 3, 20])
def test_value_and_grad_equal_the_store_all_loop(x, snapshots):
    n = _trips(x)
    np.testing.assert_allclose(looped(x, snapshots=snapshots), unrolled(x, n=n), rtol=1e-14)
    g = dualad.grad(lambda v, w: looped(v, w, snapshots).sum(), argnums=(0, 1))(x, W)
    ref = dualad.grad(lambda v, w: unrolled(v, w, n).sum(), argnums=(0, 1))(x, W)
    for a, b in zip(g, ref):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("x", X[:3], ids=["a", "b", "c"])
def test_jacobians_both_modes_and_hessian(x):
    n = _trips(x)
    ref = dualad.jacobians.jacfwd(lambda v: unrolled(v, n=n))(x)
    np.testing.assert_allclose(dualad.jacobians.jacfwd(looped)(x), ref, rtol=1e-12)
    np.testing.assert_allclose(dualad.jacobians.jacrev(looped)(x), ref, rtol=1e-12)
    _, t = dualad.jvp(lambda w: looped(x, w), (W,), (np.ones((2, 2)),))
    _, t_ref = dualad.jvp(lambda w: unrolled(x, w, n), (W,), (np.ones((2, 2)),))
    np.testing.assert_allclose(t, t_ref, rtol=1e-12)
    h = dualad.jacobians.hessian(lambda v: looped(v).sum())(x)
    h_ref = dualad.jacobians.hessian(lambda v: unrolled(v, n=n).sum())(x)
    np.testing.assert_allclose(h, h_ref, rtol=1e-10, atol=1e-14)


def test_newton_root_derivative():
    def root(a):
        return dualad.while_loop(lambda x: np.abs(x * x - a) > 1e-13,
                                 lambda x: 0.5 * (x + a / x), 1.0 + 0.0 * a)
    assert root(2.0) == pytest.approx(np.sqrt(2.0), rel=1e-15)
    assert dualad.grad(root)(2.0) == pytest.approx(0.5 / np.sqrt(2.0), rel=1e-12)


def test_float32_and_integer_leaves_keep_their_dtypes():
    out = dualad.while_loop(lambda c: c[1] < 5, lambda c: (c[0] * np.float32(1.5), c[1] + 1),
                            (np.ones(2, np.float32), np.int64(0)))
    assert out[0].dtype == np.float32 and int(out[1]) == 5
    g = dualad.grad(lambda x: dualad.while_loop(
        lambda c: c[1] < 5, lambda c: (c[0] * 1.5, c[1] + 1), (x, 0))[0].sum())(
        np.ones(2, np.float32))
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, 1.5 ** 5)


# --- vmap and jit -------------------------------------------------------------------------
def test_vmap_runs_while_any_lane_holds_and_freezes_the_others():
    xs = np.stack(X)
    assert len({_trips(x) for x in X}) == len(X)   # every lane its own length
    np.testing.assert_allclose(dualad.vmap(looped)(xs),
                               [unrolled(x, n=_trips(x)) for x in X], rtol=1e-14)
    g = dualad.vmap(dualad.grad(lambda v: looped(v).sum()))(xs)
    ref = [dualad.grad(lambda v: unrolled(v, n=_trips(x)).sum())(x) for x in X]
    np.testing.assert_allclose(g, ref, rtol=1e-12, atol=1e-15)
    g2 = dualad.grad(lambda v: dualad.vmap(looped)(v).sum())(xs)
    np.testing.assert_allclose(g2, ref, rtol=1e-12, atol=1e-15)


def test_jit_counts_the_trips_at_every_replay():
    f = dualad.jit(looped)
    g = dualad.jit(dualad.grad(lambda v: looped(v).sum()))
    prog = dualad.jit(dualad.grad(lambda v: looped(v).sum())).program(X[0])
    assert len(prog.body) < 12   # one loop equation, not a step per trip
    for x in X + X[::-1]:
        n = _trips(x)
        np.testing.assert_allclose(f(x), unrolled(x, n=n), rtol=1e-14)
        np.testing.assert_allclose(g(x), dualad.grad(lambda v: unrolled(v, n=n).sum())(x),
                                   rtol=1e-12, atol=1e-15)
    jf = dualad.jit(dualad.jacobians.jacfwd(looped))
    jr = dualad.jit(dualad.jacobians.jacrev(looped))
    for x in X[:3]:
        ref = dualad.jacobians.jacfwd(lambda v: unrolled(v, n=_trips(x)))(x)
        np.testing.assert_allclose(jf(x), ref, rtol=1e-12)
        np.testing.assert_allclose(jr(x), ref, rtol=1e-12, atol=1e-16)
    jv = dualad.jit(dualad.vmap(looped))
    for xs in (np.stack(X), np.stack(X[::-1])):
        np.testing.assert_allclose(jv(xs), [unrolled(x, n=_trips(x)) for x in xs], rtol=1e-14)


# --- errors -------------------------------------------------------------------------------
@pytest.mark.parametrize("cond,body,init,match", [
    (lambda c: c > 1, lambda c: c * 0.5, np.ones(3), r"cond_fun .* boolean scalar, got shape \(3,\)"),
    (lambda c: np.sum(c), lambda c: c * 0.5, np.ones(3), r"got shape \(\) and dtype float64"),
    (lambda c: np.sum(c) > 1, lambda c: c[:2], np.ones(3),
     r"body_fun .* leaf 0 with shape \(2,\).* has shape \(3,\)"),
    (lambda c: np.sum(c) > 1, lambda c: c.astype(np.float32), np.ones(3), r"astype\(float64\)"),
    (lambda c: np.sum(c) > 1, lambda c: (c, c), np.ones(3), r"body_fun returned a tuple"),
    (lambda c: c[0] > 1, lambda c: (c[0] * 0.5,), (4.0, 1.0), r"same structure"),
    (lambda c: c > 1, lambda c: "x", 4.0, r"body_fun .* returned carry leaf 0 is str"),
    (lambda c: c > 1, lambda c: c, "abc", r"init_val leaf 0 is str"),
])
def test_errors_name_the_function_leaf_and_shapes(cond, body, init, match):
    with pytest.raises(TypeError, match=match):
        dualad.while_loop(cond, body, init)


def test_branching_bad_snapshots_and_non_functions():
    with pytest.raises(ValueError, match=r"body_fun .* branches on a traced value"):
        dualad.while_loop(lambda c: c > 1, lambda c: c * 0.5 if c > 2 else c * 0.7, 4.0)
    with pytest.raises(ValueError, match="snapshots must be >= 1"):
        dualad.while_loop(lambda c: c > 1, lambda c: c * 0.5, 4.0, snapshots=0)
    with pytest.raises(TypeError, match="body_fun must be a function"):
        dualad.while_loop(lambda c: c > 1, 3, 4.0)
    assert dualad.lax.while_loop is dualad.while_loop


def test_nested_loops_counters_under_jit_and_inside_scan():
    def inner(x):
        return dualad.while_loop(lambda s: s[1] < 3,
                                 lambda s: (np.sin(s[0]) + 0.1, s[1] + 1), (x, 0))[0]

    def outer(x):
        h, k = dualad.while_loop(lambda s: np.sum(s[0]) < 2.4,
                                 lambda s: (inner(s[0]) * 1.1 + 0.2, s[1] + 1), (x, 0),
                                 snapshots=2)
        return h.sum() + 0.0 * k, k

    def ref(x):
        k = 0
        while np.sum(x) < 2.4:
            for _ in range(3):
                x = np.sin(x) + 0.1
            x, k = x * 1.1 + 0.2, k + 1
        return x.sum(), k

    f = dualad.jit(outer)
    assert not dualad.jit(outer).program(np.array([0.3, 0.7])).guards
    for x in (np.array([0.3, 0.7]), np.array([1.5, 1.0]), np.array([-2.0, -1.0])):
        (v, k), (v_ref, k_ref) = f(x), ref(x)
        assert int(k) == k_ref and v == pytest.approx(v_ref, rel=1e-14)
        g = dualad.jit(dualad.grad(lambda v: outer(v)[0]))(x)
        np.testing.assert_allclose(g, dualad.grad(lambda v: ref(v)[0])(x), rtol=1e-12)

    def in_scan(x):
        c, _ = dualad.scan(lambda c, a: (inner(c * a), None), x, np.array([1.0, 1.2, 0.9]),
                           checkpoints="binomial", snapshots=2)
        return c.sum()

    def in_scan_ref(x):
        for a in (1.0, 1.2, 0.9):
            x = x * a
            for _ in range(3):
                x = np.sin(x) + 0.1
        return x.sum()
    x = np.array([0.3, 0.7])
    np.testing.assert_allclose(dualad.grad(in_scan)(x), dualad.grad(in_scan_ref)(x),
                               rtol=1e-12)
