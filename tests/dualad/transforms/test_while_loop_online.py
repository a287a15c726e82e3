"""dualad.while_loop, round 2: the Stumm–Walther placement (exact against store-all, its
repetition-2 optimality, the schedule argument), the batched reverse sweep of
vmap(grad(while_loop)), and the "iterate until converged, then differentiate" spelling."""
import numpy as np
import pytest

import dualad
from dualad.revolve import beta, forward_steps
from dualad.transforms.while_loop import rules
from dualad.transforms.while_loop.online import (DEFAULT_SCHEDULE, SCHEDULES,
                                                 online_forward_steps, online_positions)

W = np.array([[0.9, 0.2], [-0.3, 0.8]])
X = [np.array([1.0, 0.5]), np.array([0.2, 0.1]), np.array([0.03, 0.0]),
     np.array([0.005, 0.002])]   # 20, 14, 6 and zero trips


def _trips(x, w=W):
    c, n = np.asarray(x, float), 0
    while np.sum(c ** 2) > 1e-4:
        c, n = np.tanh(w @ c) * 0.9, n + 1
    return n


def looped(x, w=W, snapshots=3, schedule=None):
    return dualad.while_loop(lambda c: np.sum(c[0] ** 2) > 1e-4,
                             lambda c: (np.tanh(w @ c[0]) * 0.9, c[1] + 1), (x, 0),
                             snapshots=snapshots, schedule=schedule)[0]


def unrolled(x, w=W, n=0):
    for _ in range(n):
        x = np.tanh(w @ x) * 0.9
    return x


# --- the Stumm–Walther placement ----------------------------------------------------------
def test_repetition_two_is_optimal_online():
    """While n <= beta(c, 2) - 1 every gap is reversed with one advance per step: 2n - c
    advances, revolve's optimum (length known) plus the two of discovering the end; the
    gaps grow front first to c + 1, c, ..., 3 (Stumm and Walther's r = 2 placement)."""
    for c in range(2, 11):
        for n in range(c + 1, beta(c, 2)):
            on, peak = online_forward_steps(n, c, "stumm-walther")
            assert (on, peak) == (2 * n - c, c) and on == forward_steps(n, c) + 2, (n, c)
        pos = online_positions(beta(c, 2) - 1, c, "stumm-walther")
        assert np.diff(pos).tolist() == list(range(c + 1, 2, -1)), (c, pos)


def test_stumm_walther_is_the_default_and_beats_wang_moin_on_the_grid():
    assert DEFAULT_SCHEDULE == "stumm-walther" and set(SCHEDULES) == {"stumm-walther",
                                                                      "wang-moin"}
    worse = 0
    for n in (100, 300, 1000):
        for c in (5, 10, 15, 20):
            sw, wm = (online_forward_steps(n, c, s)[0] for s in ("stumm-walther",
                                                                  "wang-moin"))
            assert forward_steps(n, c) <= sw <= 1.03 * forward_steps(n, c), (n, c, sw)
            worse += sw > wm
    assert worse <= 1   # (1000, 5): 6389 against 6381


@pytest.mark.parametrize("schedule", sorted(SCHEDULES))
@pytest.mark.parametrize("snapshots", [1, 2, 4])
def test_both_schedules_give_the_store_all_gradient(schedule, snapshots):
    for x in X:
        n = _trips(x)
        g = dualad.grad(lambda v, w: looped(v, w, snapshots, schedule).sum(),
                        argnums=(0, 1))(x, W)
        ref = dualad.grad(lambda v, w: unrolled(v, w, n).sum(), argnums=(0, 1))(x, W)
        for a, b in zip(g, ref):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)
    f = dualad.jit(dualad.grad(lambda v: looped(v, snapshots=snapshots,
                                                schedule=schedule).sum()))
    for x in X[:3]:
        np.testing.assert_allclose(
            f(x), dualad.grad(lambda v: unrolled(v, n=_trips(x)).sum())(x), rtol=1e-12)


def test_bad_schedule_names_the_argument():
    with pytest.raises(ValueError, match=r"while_loop\(.*\): schedule must be one of "
                                         r"'stumm-walther', 'wang-moin'.* got 'revolve'"):
        dualad.while_loop(lambda c: c > 1, lambda c: c * 0.5, 4.0, schedule="revolve")


# --- vmap(grad(while_loop)): one batched reverse sweep ------------------------------------
def test_vmap_of_grad_is_one_batched_sweep(monkeypatch):
    calls = []
    real = rules._batch_reverse
    monkeypatch.setattr(rules, "_batch_reverse",
                        lambda *a: calls.append(1) or real(*a))
    xs = np.stack(X)                       # 20, 14, 6, 0 trips: the lanes differ
    g = dualad.vmap(dualad.grad(lambda v: looped(v).sum()))(xs)
    ref = [dualad.grad(lambda v: unrolled(v, n=_trips(x)).sum())(x) for x in X]
    np.testing.assert_allclose(g, ref, rtol=1e-12, atol=1e-15)
    assert calls == [1]                    # the batch rule, not a loop over 4 lanes
    gw = dualad.vmap(dualad.grad(lambda w, v: looped(v, w).sum()), in_axes=(None, 0))(W, xs)
    ref_w = [dualad.grad(lambda w: unrolled(x, w, _trips(x)).sum())(W) for x in X]
    np.testing.assert_allclose(gw, ref_w, rtol=1e-12, atol=1e-15)   # per lane, not summed
    same = np.stack([X[0], 1.01 * X[0]])   # equal trip counts: no lane masked
    assert _trips(same[0]) == _trips(same[1])
    np.testing.assert_allclose(
        dualad.vmap(dualad.grad(lambda v: looped(v).sum()))(same),
        [dualad.grad(lambda v: unrolled(v, n=_trips(x)).sum())(x) for x in same], rtol=1e-12)


def test_vmap_of_grad_under_jit_and_of_jacrev():
    xs = np.stack(X)
    ref = [dualad.grad(lambda v: unrolled(v, n=_trips(x)).sum())(x) for x in X]
    f = dualad.jit(dualad.vmap(dualad.grad(lambda v: looped(v).sum())))
    for order in (xs, xs[::-1]):
        np.testing.assert_allclose(f(order), ref if order is xs else ref[::-1],
                                   rtol=1e-12, atol=1e-15)
    hessian = dualad.jacobians.hessian
    np.testing.assert_allclose(dualad.vmap(hessian(lambda v: looped(v).sum()))(xs),
                               [hessian(lambda v: unrolled(v, n=_trips(x)).sum())(x)
                                for x in X], rtol=1e-12, atol=1e-15)
    g = dualad.grad(lambda w: dualad.vmap(dualad.grad(lambda v: looped(v, w).sum()))(xs)
                    .sum())(W)                 # the batched sweep, differentiated again
    ref_g = dualad.grad(lambda w: sum(dualad.grad(lambda v: unrolled(v, w, _trips(x))
                                                  .sum())(x).sum() for x in X))(W)
    np.testing.assert_allclose(g, ref_g, rtol=1e-12, atol=1e-15)
    jr = dualad.vmap(dualad.jacobians.jacrev(looped))(xs[:3])   # (lanes loop: seeds' axis)
    for x, j in zip(X[:3], jr):
        np.testing.assert_allclose(
            j, dualad.jacobians.jacfwd(lambda v: unrolled(v, n=_trips(x)))(x), rtol=1e-12)


# --- iterate until converged, then differentiate ------------------------------------------
def solve(a, b, tol=1e-12, max_iter=200):
    """x = cos(a x) + b by fixed-point iteration, stopped on the step size or after
    max_iter trips: the carry holds the iterate, the last step and a counter."""
    def keep_going(s):
        return np.logical_and(s[1] > tol, s[2] < max_iter)

    def step(s):
        x = np.cos(a * s[0]) + b
        return x, np.max(np.abs(x - s[0])), s[2] + 1
    x, _, trips = dualad.while_loop(keep_going, step, (0.0 * b, 1.0 + 0.0 * a, 0))
    return x, trips


def test_iterate_until_converged_then_differentiate():
    a, b = 0.7, np.array([0.3, 0.5])
    x, trips = solve(a, b)
    assert 5 < int(trips) < 200 and np.allclose(x, np.cos(a * x) + b, atol=1e-11)

    def unrolled_solve(a, b):
        x = 0.0 * b
        for _ in range(int(trips)):
            x = np.cos(a * x) + b
        return x
    for argnums in (0, 1):
        g = dualad.grad(lambda a, b: solve(a, b)[0].sum(), argnums=argnums)(a, b)
        ref = dualad.grad(lambda a, b: unrolled_solve(a, b).sum(), argnums=argnums)(a, b)
        np.testing.assert_allclose(g, ref, rtol=1e-12)
    # implicit function theorem: dx/db = 1 / (1 + a sin(a x)) at the fixed point
    np.testing.assert_allclose(dualad.jacobians.jacrev(lambda b: solve(a, b)[0])(b),
                               np.diag(1.0 / (1.0 + a * np.sin(a * x))), rtol=1e-9)
    _, capped = solve(a, b, max_iter=3)
    assert int(capped) == 3


# --- second order under jit ---------------------------------------------------------------
def test_second_order_under_jit_at_every_replay():
    hessian = dualad.jacobians.hessian
    h_x = dualad.jit(hessian(lambda v: looped(v).sum()))
    h_w = dualad.jit(hessian(lambda w, v: looped(v, w, 2, "wang-moin").sum()))
    gg = dualad.jit(dualad.grad(
        lambda w, v: dualad.grad(lambda u: looped(v, u).sum())(w)[0, 1]))
    for x in X + X[::-1]:                  # the trip count changes between replays
        n = _trips(x)
        np.testing.assert_allclose(h_x(x), hessian(lambda v: unrolled(v, n=n).sum())(x),
                                   rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(h_w(W, x), hessian(lambda w: unrolled(x, w, n).sum())(W),
                                   rtol=1e-12, atol=1e-15)
        ref = dualad.grad(lambda w: dualad.grad(lambda u: unrolled(x, u, n).sum())(w)[0, 1])
        np.testing.assert_allclose(gg(W, x), ref(W), rtol=1e-12, atol=1e-15)
