"""The tape frees, during the forward pass, what no output can need (dualad.interpreters.reverse.compaction):
bounded peak memory, unchanged derivatives."""
import tracemalloc

import numpy as np
import pytest

import dualad
from dualad.interpreters.reverse import compaction
from dualad.autograd import Variable

N = 1000   # one (N, N) float64 array: 8 MB
ONE = N * N * 8


def _peak(run):
    x = np.zeros((N, N))
    tracemalloc.start()
    try:
        run(x)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_chain_of_adds_keeps_few_arrays():
    # HIPS autograd's peakmem_needless_nodes workload: every x is on the path to the output,
    # but ∂(x + 1)/∂x = 1 reads none of them. The old tape held all 100 (800 MB).
    def f(x):
        for _ in range(100):
            x = x + 1
        return np.sum(x)
    peak = _peak(lambda x: np.testing.assert_array_equal(dualad.grad(f)(x)[:2, :2], 1.0))
    assert peak < 5 * ONE, f"peak {peak / 1e6:.0f} MB"


def test_discarded_temporaries_are_freed():
    # Values no output depends on (overwritten temporaries) leave the tape.
    def f(x):
        for _ in range(60):
            t = np.sin(x) * 2.0   # noqa: F841 (needless: never used)
        return np.sum(x * 3.0)
    peak = _peak(lambda x: np.testing.assert_array_equal(dualad.grad(f)(x)[:2, :2], 3.0))
    assert peak < 6 * ONE, f"peak {peak / 1e6:.0f} MB"


def test_vjp_needless_nodes_freed_and_pullback_repeats():
    def f(x):
        for _ in range(60):
            x = np.add(x, 1.0)
            np.exp(x)             # a discarded value
        return x - 2.0
    def run(x):
        y, pb = dualad.vjp(f, x)
        for _ in range(2):
            np.testing.assert_array_equal(pb(np.ones_like(y))[0][:2, :2], 1.0)
    assert _peak(run) < 8 * ONE


@pytest.fixture
def always_compact(monkeypatch):
    """Compact at every recorded array: every node is examined while it can be."""
    monkeypatch.setattr(compaction, "MIN_BYTES", 0)


def _cases():
    c = np.linspace(0.5, 1.5, 6)
    kept = []

    def chain(x):
        for _ in range(4):
            x = x + c
            t = np.exp(x)        # noqa: F841
        return np.sum(np.sin(x) - x)

    def shared(x):
        a = x + 1.0
        b = a - x            # a used twice, by shape-only rules
        return np.sum(b * a)   # then by multiply, which reads it

    def held(x):
        y = x + 1.0
        kept.append(y)       # the user keeps an intermediate
        z = y + 2.0
        return np.sum(z * kept[-1])

    def indexed(x):
        y = x + 1.0
        s = 0.0
        for i in range(3):
            s = s + y[i] * y[i]
        return s + np.sum(y - 1.0)

    def broadcast(x):
        m = x[:, None] + c[None, :]
        for _ in range(3):       # the earlier m's are replaced by stand-ins: their shapes
            m = m + c            # still drive unbroadcasting in the sweep
            m = m - x[:, None]
        return np.sum((m - 1.0) ** 2)

    return [chain, shared, held, indexed, broadcast]


@pytest.mark.parametrize("f", _cases(), ids=lambda f: f.__name__)
def test_derivatives_unchanged_by_compaction(f, always_compact, monkeypatch):
    x = np.linspace(-1.0, 1.0, 6)
    got = [dualad.grad(f)(x), dualad.vjp(f, x)[1](1.0)[0],
           dualad.hvp(f, x, np.ones(6)), dualad.grad(lambda v: np.sum(dualad.grad(f)(v)))(x)]
    with dualad.detect_anomaly():
        got.append(dualad.grad(f)(x))
    monkeypatch.setattr(compaction, "ENABLED", False)
    want = [dualad.grad(f)(x), dualad.vjp(f, x)[1](1.0)[0],
            dualad.hvp(f, x, np.ones(6)), dualad.grad(lambda v: np.sum(dualad.grad(f)(v)))(x),
            dualad.grad(f)(x)]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


def test_intermediate_held_by_user_keeps_its_value(always_compact):
    seen = []

    def f(x):
        y = x + 1.0
        seen.append(y)
        for _ in range(3):
            x = x + 1.0
        return np.sum(x)
    x = np.arange(4.0)
    dualad.grad(f)(x)
    np.testing.assert_array_equal(seen[0].value, x + 1.0)   # not replaced by a stand-in


def test_imperative_tape_unaffected(always_compact):
    x = Variable(np.arange(3.0), requires_grad=True)
    y = x + 1.0
    for _ in range(3):
        y = y + 1.0
    (y * y).sum().backward()
    np.testing.assert_allclose(x.grad, 2 * (np.arange(3.0) + 4.0))


def test_scalar_code_never_compacts(monkeypatch):
    calls = []
    monkeypatch.setattr(compaction, "compact", lambda tape, *start: calls.append(len(tape)))
    monkeypatch.setattr(compaction, "MIN_BYTES", 0)

    def rosen(x):
        total = 0.0
        for i in range(len(x) - 1):
            total = total + 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1.0 - x[i]) ** 2
        return total
    dualad.grad(rosen)(np.linspace(-1, 1, 10))
    assert calls == []


def test_passes_scan_amortised_constant_nodes_per_recorded_node(monkeypatch):
    # Issue 31: a pass at every 4 MiB rescanned the whole tape, so a long tape of large
    # arrays cost O(len(tape)) per pass (GradBench's ode: 56% of the gradient). Here
    # every recorded array starts a pass, which scans the new node and OVERLAP older ones
    # (set small here): the nodes scanned stay within a few per node.
    monkeypatch.setattr(compaction, "MIN_BYTES", 0)
    monkeypatch.setattr(compaction, "OVERLAP", 2, raising=False)
    scanned = []
    orig = compaction.compact

    def counting(tape, *start):
        scanned.append(len(tape) - (start[0] if start else 0))
        return orig(tape, *start)
    monkeypatch.setattr(compaction, "compact", counting)
    steps = 150

    def f(x):
        for _ in range(steps):
            x = x * 1.0001       # multiply reads x: every node stays, with its value
        return np.sum(x)
    x = np.ones(20_000)          # 160 KB per node
    np.testing.assert_allclose(dualad.grad(f)(x), 1.0001 ** steps)
    assert len(scanned) >= steps // 2
    assert sum(scanned) <= 5 * steps, f"{sum(scanned)} nodes scanned for {steps} recorded"
