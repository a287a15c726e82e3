"""The planner's cost model knows that a dense Jacobian's sweeps are seeded one-hot
(issue 31): ``mode="auto"`` chose reverse at 1000 -> 100 (and 2000 -> 10, 1000 -> 10) of
the planner table, where forward was 1.3-1.8x faster. No wall-clock winner is asserted
(flaky on a shared machine): the census' time of one call is fixed by a stub stopwatch,
so every decision here is the model's on fixed numbers.
"""
import math

import numpy as np
import pytest

import dualad
from dualad.interpreters.forward import dual as forward
from dualad.jacobians import cost
from dualad.jacobians._common import Problem
from dualad.core.onehot import OneHotBatch

T_PLAIN = 40e-6    # what the census' stopwatch reads: a small function's one call


class FixedStopwatch:
    """Reads T_PLAIN whatever happened: the census' time of f is fixed."""

    def seconds(self):
        return T_PLAIN


@pytest.fixture
def fixed_clock(monkeypatch):
    monkeypatch.setattr(cost, "Stopwatch", FixedStopwatch)


def table_f(n, m, seed=0):
    """bench/workloads_jacobians.py's planner table function, R^n -> R^m."""
    rng = np.random.default_rng(seed)
    B = rng.standard_normal((m, n)) / np.sqrt(n)
    return (lambda x: np.tanh(B @ np.sin(x)) * 2.0 + np.cos(B @ x)), rng.standard_normal(n)


def census_of(f, x):
    return cost.census(Problem("plan", f, (x,), 0))[0]


TABLE = [(10, 2000), (2000, 10)] + [(n, m) for n in (10, 100, 1000) for m in (10, 100, 1000)]


# --- the decisions on the planner table ------------------------------------------------------
@pytest.mark.parametrize("n,m", TABLE)
def test_auto_takes_forward_on_every_shape_of_the_planner_table(fixed_clock, n, m):
    # Measured (bench/run.py --only planner, prepared plans interleaved, two runs): forward
    # is the faster fixed mode on all eleven shapes, by 1.05x-1.9x. The old model charged
    # every direction the whole product B @ x and chose reverse at 1000 -> 100, 1000 -> 10
    # and 2000 -> 10.
    f, x = table_f(n, m)
    p = dualad.jacobians.plan(f, x, sparse=False, calibrate=False, jit=False)   # eager sweeps
    assert p.mode == "forward", p.explain()


def test_the_one_hot_work_of_a_direction_is_the_far_side_of_the_products():
    # tanh(B @ sin(x)) * 2 + cos(B @ x): a forward direction carries a one-hot tangent
    # through sin and gathers a column of B (m numbers), a reverse one a one-hot cotangent
    # through tanh, * 2, cos and + and gathers a row (n numbers): O(m) and O(n), not 2mn.
    for n, m in [(10, 100), (1000, 100), (100, 10), (100, 1000)]:
        (ef, bf), (er, br) = census_of(*table_f(n, m)).flow.counts()
        assert bf == br == 0                    # no matrix product: gathers
        assert 7 * m <= ef <= 9 * m + 1, (n, m, ef)
        assert 4 * n <= er <= 4 * n + 8, (n, m, er)


def test_the_census_model_with_general_seeds_is_unchanged():
    # Compressed (sparse) sweeps seed general directions: there each still costs the
    # census' whole arithmetic, the product included.
    c = census_of(*table_f(100, 100))
    c.t_plain = T_PLAIN
    whole = cost.work_per_direction(c)
    assert cost.seeded_work(c, "forward") < whole / 3
    assert cost.model(c, 100, 1000, "forward") == pytest.approx(
        c.n_ops * cost.O_JVP + T_PLAIN + 100 * whole)


# --- reverse where reverse pays --------------------------------------------------------------
def deep(n, m, h=100, layers=3, seed=1):
    rng = np.random.default_rng(seed)
    Ws = [rng.standard_normal((h, n)) / np.sqrt(n)] + \
        [rng.standard_normal((h, h)) / np.sqrt(h) for _ in range(layers - 1)]
    V = rng.standard_normal((m, h)) / np.sqrt(h)

    def f(x):
        for W in Ws:
            x = np.tanh(W @ x)
        return V @ x
    return f, rng.standard_normal(n)


@pytest.mark.parametrize("make,n,mode", [
    # measured forward/reverse on the issue-31 VM: 4.9x, 1.4x (reverse faster); 0.10x
    (lambda: deep(2000, 1), 2000, "reverse"),
    (lambda: deep(500, 5), 500, "reverse"),
    (lambda: deep(5, 500), 5, "forward"),
    # a scalar loss of 20000 inputs: forward would need several sweeps of the whole chain
    (lambda: (lambda x: np.sum(np.sin(x) ** 2), np.linspace(0, 1, 20000)), 20000, "reverse"),
])
def test_reverse_is_kept_where_its_directions_are_few_and_dense(fixed_clock, make, n, mode):
    f, x = make()
    p = dualad.jacobians.plan(f, x, sparse=False, calibrate=False, jit=False)   # eager sweeps
    assert p.mode == mode, p.explain()


def test_reverse_is_charged_the_fingerprints_of_the_constants():
    # vjp checksums every plain array f reads when it records and at each pullback
    # (dualad.interpreters.reverse.versions): B, read twice, is counted once.
    f, x = table_f(1000, 100)
    c = census_of(f, x)
    assert c.const_bytes == 100 * 1000 * 8
    c.t_plain = T_PLAIN
    without = cost.model(c, 100, 10**6, "reverse", onehot=True)
    c.const_bytes = 0
    assert without - cost.model(c, 100, 10**6, "reverse", onehot=True) == pytest.approx(
        2 * 800_000 * cost.BYTE_CHECK)


# --- the flow's rules are the interpreter's --------------------------------------------------
def _tangent_kinds(f, x, monkeypatch):
    """Per primitive of a one-hot seeded forward sweep of f: is its tangent one-hot?"""
    seen = []
    rules = forward.JVPTrace._process_rules

    def logged(self, prim, args, params, primals, ans):
        out = rules(self, prim, args, params, primals, ans)
        seen.append(isinstance(getattr(out, "tangent", None), OneHotBatch))
        return out
    monkeypatch.setattr(forward.JVPTrace, "_process_rules", logged)
    p = Problem("plan", f, (x,), 0)
    dualad.jvp(f, (x,), p.onehot_tangent_seeds(0, x.size, np.dtype(float)))
    return seen


_A = np.arange(6.0).reshape(3, 2) / 7.0
_B = np.arange(24.0).reshape(4, 6) / 11.0
FUNCTIONS = {
    "table": lambda x: np.tanh(_B @ np.sin(x)) * 2.0 + np.cos(_B @ x),
    "slices": lambda x: x[1:] ** 2 - x[:-1],
    "permuted sum": lambda x: np.exp(x) * x + x.reshape(2, 3).T.reshape(-1),
    "rational": lambda x: 1.0 / (1.0 + x ** 2) - np.log1p(x ** 2),
    "sums": lambda x: x.reshape(2, 3).sum(axis=1) * np.sum(x ** 2),
    "selections": lambda x: np.maximum(x, 0.0) + np.where(x > 0, x, 0.0),
    "products": lambda x: np.sum(x.reshape(2, 3) @ _A) + np.sum(_A @ x.reshape(2, 3)),
    "broadcast": lambda x: (x[:, None] * x[None, :]).sum(axis=0) + np.concatenate([x[:3], x[3:]]),
}


@pytest.mark.parametrize("name", FUNCTIONS)
def test_the_predicted_one_hot_tangents_are_the_interpreters(name, monkeypatch):
    f, x = FUNCTIONS[name], np.linspace(-1.0, 1.2, 6)
    predicted = census_of(f, x).flow.forward_onehot()
    assert predicted == _tangent_kinds(f, x, monkeypatch)


# --- the decision rule, for modelled or measured numbers -------------------------------------
def test_pick_takes_the_cheapest_finite_estimate():
    assert cost.pick({"forward": 3e-3, "reverse": 2e-3}) == ("reverse", 1.5)
    assert cost.pick({"forward": 3e-3, "reverse": None, "sparse-forward": math.inf}) == \
        ("forward", math.inf)
    with pytest.raises(ValueError, match="no alternative"):
        cost.pick({"forward": math.inf})


def test_pick_keeps_the_current_choice_within_the_margin():
    # a jitted plan re-deciding from measured replays: a 5% difference is noise
    times = {"forward": 1.00e-3, "reverse": 0.95e-3}
    assert cost.pick(times, current="forward", margin=1.1)[0] == "forward"
    assert cost.pick(times, current="forward", margin=1.01)[0] == "reverse"
    assert cost.pick(times)[0] == "reverse"


@pytest.mark.parametrize("n,m,mode", [(2000, 10, "reverse"), (1000, 10, "reverse"),
                                      (100, 10, "reverse"), (10, 10, "forward"),
                                      (100, 100, "forward"), (1000, 1000, "forward"),
                                      (1000, 100, "reverse"), (10, 2000, "forward"),
                                      (10, 1000, "forward"), (100, 1000, "forward")])
def test_a_replayed_plan_is_modelled_by_its_arithmetic(fixed_clock, n, m, mode):
    # Under dualad.jit (plan's default) the replayed sweeps keep no one-hot seeds and run
    # no checksums: measured (bench/run.py --only planner, jit plans) at 2000 -> 10
    # forward 18 ms against reverse 0.22 ms, at 1000 -> 100 9.3 ms against 1.7 ms; the
    # eager model (one-hot seeds) chose forward there, 82x slower under jit.
    f, x = table_f(n, m)
    p = dualad.jacobians.plan(f, x, sparse=False)
    assert p.mode == mode, p.explain()
