"""mode="auto" uses what the planner knows: the sparse route into a dense result, the
max_memory refusal, first-call evaluations of f, plans reused by fresh lambdas, and what
explain() says was timed (issue 18)."""
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp

from dualad import jacobians
from dualad.jacobians import cost
from dualad.jacobians.memory import DenseTooLarge
from sweep_counting import directions  # noqa: F401  (a fixture)

rng = np.random.default_rng(18)


class Counter:
    """Counts calls; its signature in a closure is its identity, whatever the count."""

    def __init__(self):
        self.calls = 0


def counted_tri(counter, scale=1.0):
    """A tridiagonal residual (a 1-D Bratu-like stencil) that counts its evaluations."""
    def tri(u):
        counter.calls += 1
        up = np.concatenate([np.zeros(1, u.dtype), u, np.zeros(1, u.dtype)])
        return up[2:] - 2.0 * up[1:-1] + up[:-2] + np.exp(u) * scale
    return tri


def tri_exact(u, scale=1.0):
    n = len(u)
    return (np.diag(np.full(n - 1, 1.0), -1) + np.diag(np.full(n - 1, 1.0), 1)
            + np.diag(-2.0 + scale * np.exp(u)))


@pytest.fixture(autouse=True)
def fresh_mode_cache():
    """Each test counts evaluations from an empty code-keyed mode cache: a Counter of an
    earlier test, garbage-collected, can leave its id to this test's Counter, and the
    closure signature (which keys a mode choice by that id, jacobians/reuse.py) would then
    hit and skip a census. That costs speed only, never a value; here it moves counts."""
    from dualad.jacobians import reuse
    reuse.MODES.clear()
    yield
    reuse.MODES.clear()




# --- 1. the sparse route, decompressed into the dense result --------------------------------
def test_auto_takes_the_coloring_for_a_large_tridiagonal_and_equals_the_dense_modes(directions):
    x = rng.standard_normal(2000)
    tri = counted_tri(Counter(), 0.01)
    J = jacobians.jacobian(tri, x)
    # 3 colored directions in one sweep, not 2000 one-hot ones
    assert directions == [3]
    assert isinstance(J, np.ndarray) and J.shape == (2000, 2000)
    np.testing.assert_allclose(J, tri_exact(x, 0.01), rtol=1e-13, atol=1e-13)
    directions.clear()
    np.testing.assert_allclose(J, jacobians.jacfwd(tri, x), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(J, jacobians.jacrev(tri, x), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(J, jacobians.sparse_jacobian(tri, x).toarray(), rtol=1e-12,
                               atol=1e-12)


def test_small_problems_are_never_detected(directions):
    x = rng.standard_normal(30)
    counter = Counter()
    J = jacobians.jacobian(counted_tri(counter), x)
    assert directions == [30]           # dense forward: trivially cheap, no detection
    assert counter.calls == 2           # census + the one sweep: no pattern run, no timing
    np.testing.assert_allclose(J, tri_exact(x), rtol=1e-13)
    text = jacobians.plan(counted_tri(Counter()), x, output="dense", detect="worth").explain()
    assert "Sparsity detection: skipped" in text and "trivially cheap" in text
    text = jacobians.plan(counted_tri(Counter()), rng.standard_normal(2000), output="dense",
                          detect="worth").explain()
    assert "Sparsity detection: run: the dense result is modelled at" in text
    assert "Chosen: sparse-forward" in text


def test_auto_route_with_several_arguments_and_shaped_outputs():
    a, b = rng.standard_normal(1200), rng.standard_normal(1200)

    def f(u, v):
        up = np.concatenate([np.zeros(1), u, np.zeros(1)])
        r = up[2:] - 2.0 * up[1:-1] + up[:-2] + np.sin(v) * u
        return r.reshape(40, 30), np.exp(v)
    auto = jacobians.jacobian(f, a, b, argnums=(0, 1))
    fwd = jacobians.jacobian(f, a, b, argnums=(0, 1), mode="forward")
    for out_a, out_f in zip(auto, fwd):
        for blk_a, blk_f in zip(out_a, out_f):
            assert blk_a.shape == blk_f.shape
            np.testing.assert_allclose(blk_a, blk_f, rtol=1e-12, atol=1e-12)
    assert auto[0][0].shape == (40, 30, 1200)


@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
def test_auto_route_keeps_float32_and_complex(dtype):
    x = rng.standard_normal(2000).astype(dtype)
    if np.iscomplexobj(x):
        x = x + 0.5j * rng.standard_normal(2000)
    tri = counted_tri(Counter(), 0.01)
    J = jacobians.jacobian(tri, x)
    ref = jacobians.jacfwd(tri, x)
    assert J.dtype == ref.dtype == np.result_type(dtype, np.float32)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(J, ref, rtol=tol, atol=tol)
    np.testing.assert_allclose(J, tri_exact(x.astype(np.complex128), 0.01), rtol=tol,
                               atol=tol)


def test_hessian_auto_takes_the_star_coloring_and_equals_dense(directions):
    x = rng.uniform(0.5, 1.5, 2000)

    def rosen(x):
        return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
    H = jacobians.hessian(rosen, x)
    assert sum(directions) < 10        # a few star colors, not 2000 directions
    directions.clear()
    dense = jacobians.hessian(rosen, x, mode="forward-over-reverse")
    assert sum(directions) == 2000
    np.testing.assert_allclose(H, dense, rtol=1e-12, atol=1e-12)
    assert np.array_equal(H, H.T)
    np.testing.assert_allclose(H, jacobians.sparse_hessian(rosen, x).toarray(), rtol=1e-12,
                               atol=1e-12)


def test_a_census_that_waited_for_the_processor_still_takes_the_star_coloring(
        directions, monkeypatch):
    """The census is timed by cost.Stopwatch, min(wall, process CPU): a call that waited
    50 ms while another process ran (two CI jobs on two cores) is charged only its
    computing, so the auto choice does not flip to 2000 dense directions. The wait is
    simulated by a wall clock that jumps 50 ms inside f's first (census) call; read by
    the wall clock alone (as on a coarse CPU clock) the same wait does flip it."""
    import time as real_time
    import types
    jump = [0.0]
    clock = types.SimpleNamespace(perf_counter=lambda: real_time.perf_counter() + jump[0],
                                  process_time=real_time.process_time)
    monkeypatch.setattr(cost, "time", clock)
    x = rng.uniform(0.5, 1.5, 2000)

    def waiting_rosen():
        first = [True]

        def rosen(x):
            if first[0]:
                first[0] = False
                jump[0] += 0.05          # the census call "waits" 50 ms
            return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
        return rosen

    monkeypatch.setattr(cost, "_CPU_CLOCK_FINE", False)
    H_wall = jacobians.hessian(waiting_rosen(), x)
    assert sum(directions) == 2000       # the wait, charged, makes detection look dear
    directions.clear()
    monkeypatch.setattr(cost, "_CPU_CLOCK_FINE", True)
    H = jacobians.hessian(waiting_rosen(), x)
    assert jump[0] == 0.1
    assert sum(directions) < 10, directions
    np.testing.assert_allclose(H, H_wall, rtol=1e-12, atol=1e-12)


def test_a_census_that_ran_a_full_collection_still_takes_the_star_coloring(directions):
    """A full garbage collection inside the census call (in a long test session's heap,
    tens of ms of CPU time: the CI failure of stop 46) is not charged to f. The census
    sees the collection (cost._interruptions, read only) and takes its modelled time."""
    import gc
    x = rng.uniform(0.5, 1.5, 2000)
    heap = [[i] for i in range(1_500_000)]      # a large heap: a full collection is dear
    first = [True]

    def rosen(x):
        if first[0]:
            first[0] = False
            gc.collect()                         # the census call runs a full collection
        return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
    H = jacobians.hessian(rosen, x)
    del heap
    assert sum(directions) < 10, directions
    np.testing.assert_allclose(H, jacobians.hessian(rosen, x, mode="forward-over-reverse"),
                               rtol=1e-12, atol=1e-12)


def test_census_time_is_read_as_measured_when_nothing_interrupted_it():
    """Without a collection or an import inside it, the census keeps its own reading."""
    from dualad.jacobians import sweeps
    from dualad.jacobians._common import Problem
    x = rng.uniform(0.5, 1.5, 200)

    def slow(x):
        t = cost.Stopwatch()
        while t.seconds() < 0.01:                # 10 ms of computing no primitive shows
            pass
        return np.sum(x ** 2)
    c = sweeps.get_census(Problem("jacobian", slow, (x,), 0))
    assert c.t_plain >= 0.01


def test_stopwatch_reads_the_lesser_of_wall_and_cpu_time(monkeypatch):
    """A wait is not charged (CPU time is less); threads are not summed (wall is less)."""
    import types
    now = {"wall": 10.0, "cpu": 5.0}
    clock = types.SimpleNamespace(perf_counter=lambda: now["wall"],
                                  process_time=lambda: now["cpu"])
    monkeypatch.setattr(cost, "time", clock)
    monkeypatch.setattr(cost, "_CPU_CLOCK_FINE", True)
    watch = cost.Stopwatch()
    now["wall"] += 0.050
    now["cpu"] += 0.002          # preempted: 2 ms of computing in 50 ms
    assert watch.seconds() == pytest.approx(0.002)
    watch = cost.Stopwatch()
    now["wall"] += 0.010
    now["cpu"] += 0.040          # four BLAS threads busy for 10 ms
    assert watch.seconds() == pytest.approx(0.010)
    monkeypatch.setattr(cost, "_CPU_CLOCK_FINE", False)
    watch = cost.Stopwatch()
    now["wall"] += 0.050
    now["cpu"] += 0.002
    assert watch.seconds() == pytest.approx(0.050)   # coarse CPU clock: wall time only


# --- 2. a dense result over max_memory is refused, before anything is allocated -----------------
def test_refusal_names_function_shapes_bytes_and_the_sparse_call():
    x = rng.standard_normal(2000)
    tri = counted_tri(Counter())
    with pytest.raises(DenseTooLarge) as e:
        jacobians.jacobian(tri, x, max_memory=16 * 2 ** 20)
    msg = str(e.value)
    for needle in ("jacobian(tri)", "2000 x 2000", "(2000,)", "32,000,000 bytes", "float64",
                   "max_memory=16,777,216", "jacobians.sparse_jacobian(tri, x)",
                   "scipy.sparse", "max_memory=32000000"):
        assert needle in msg, needle
    assert isinstance(e.value, ValueError)
    # the sparse call it names works within the same budget
    J = jacobians.sparse_jacobian(tri, x, max_memory=16 * 2 ** 20)
    assert sp.issparse(J) and J.nnz == 3 * 2000 - 2
    # so does a plan, which marks the dense modes infeasible and takes the coloring
    p = jacobians.plan(tri, x, max_memory=16 * 2 ** 20)
    assert p.mode == "sparse-forward" and "infeasible" in p.explain()
    # detect="worth" detects whenever the dense result cannot be had at all
    small = rng.standard_normal(300)
    p = jacobians.plan(tri, small, max_memory=300 * 300 * 8 - 1, detect="worth")
    assert p.mode == "sparse-forward" and p.directions == 3
    with pytest.raises(DenseTooLarge, match=r"plan\(tri\)"):
        jacobians.plan(tri, x, max_memory=16 * 2 ** 20, output="dense")


@pytest.mark.parametrize("call", ["jacfwd", "jacrev", "jacfwd-chunked", "auto", "hessian"])
def test_refusal_comes_before_the_dense_result_is_allocated(call):
    x = rng.standard_normal(3000)          # a dense result of 72 MB
    tri = counted_tri(Counter())
    tracemalloc.start()
    try:
        with pytest.raises(DenseTooLarge) as e:
            if call == "jacfwd":
                jacobians.jacfwd(tri, x, max_memory=2 ** 20)
            elif call == "jacrev":
                jacobians.jacrev(tri, x, max_memory=2 ** 20)
            elif call == "jacfwd-chunked":   # no census: refused after the first sweep
                jacobians.jacfwd(tri, x, chunk_size=16, max_memory=2 ** 20)
            elif call == "auto":
                jacobians.jacobian(tri, x, max_memory=2 ** 20)
            else:
                jacobians.hessian(lambda u: np.sum(tri(u) ** 2), x, max_memory=2 ** 20)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 * 2 ** 20, peak
    assert ("sparse_hessian" if call == "hessian" else "sparse_jacobian") in str(e.value)


def test_refusal_names_argnums_and_other_arguments():
    def f(c, u):
        return np.sin(u) * c
    with pytest.raises(DenseTooLarge, match=r"sparse_jacobian\(f, arg0, x, argnums=1\)"):
        jacobians.jacobian(f, 2.0, rng.standard_normal(1000), argnums=1, max_memory=10 ** 6)


# --- 3. first-call evaluations of f ---------------------------------------------------------
@pytest.mark.parametrize("api", ["jacfwd", "jacrev", "jacobian"])
def test_first_call_evaluates_f_once_beyond_its_sweeps(api):
    x = rng.standard_normal(50)
    counter = Counter()
    tri = counted_tri(counter)
    getattr(jacobians, api)(tri, x)
    assert counter.calls == 2           # the census and one sweep (before: 3, 3 and 9)
    getattr(jacobians, api)(tri, x)
    assert counter.calls == 3           # the census is cached: the sweep only
    counter.calls = 0
    jacobians.jacfwd(counted_tri(counter), x, chunk_size=10)
    assert counter.calls == 5           # chunk_size given: no census, the 5 sweeps only


def test_sparse_route_first_call_and_reuse():
    x = rng.standard_normal(2000)
    counter = Counter()
    tri = counted_tri(counter, 0.01)
    jacobians.jacobian(tri, x)
    assert counter.calls == 3           # census, pattern detection, one compressed sweep
    jacobians.jacobian(tri, x + 0.1)
    assert counter.calls == 4           # the pattern is kept (checked at the new point)


def test_fresh_lambdas_in_a_loop_reuse_the_mode_choice():
    x = rng.standard_normal(60)
    A = rng.standard_normal((60, 60))
    counter = Counter()
    calls = []
    for k in range(4):
        before = counter.calls
        J = jacobians.jacobian(lambda v: (counter.__setattr__("calls", counter.calls + 1),
                                          np.tanh(A @ v))[1], x)
        calls.append(counter.calls - before)
        np.testing.assert_allclose(J, (1 - np.tanh(A @ x) ** 2)[:, None] * A, rtol=1e-12)
    assert calls == [2, 1, 1, 1]        # census + sweep, then the sweep only
    # another closure signature (A of another shape) plans afresh
    B = rng.standard_normal((30, 60))
    before = counter.calls
    jacobians.jacobian(lambda v: (counter.__setattr__("calls", counter.calls + 1),
                                  np.tanh(B @ v))[1], x)
    assert counter.calls - before == 2


def test_fresh_lambdas_never_share_a_sparsity_pattern():
    x = rng.standard_normal(2000)
    counter = Counter()
    calls = []
    for k in range(3):
        before = counter.calls
        tri = counted_tri(counter, 0.01)       # a fresh function object of the same code
        J = jacobians.jacobian(tri, x)
        calls.append(counter.calls - before)
    assert calls == [3, 2, 2]          # then each detects its own pattern and sweeps once
    np.testing.assert_allclose(J, tri_exact(x, 0.01), rtol=1e-13, atol=1e-13)


def test_same_code_with_another_structure_is_still_right():
    # The same code, the same closure signature, two different Jacobian structures: the
    # mode choice is shared, the pattern is not, and both results are exact.
    x = rng.standard_normal(2000)

    def make(shift):
        def f(u):
            return np.roll(u, shift) * np.exp(u)
        return f
    for shift in (1, 7):
        f = make(shift)
        np.testing.assert_allclose(jacobians.jacobian(f, x), jacobians.jacfwd(f, x),
                                   rtol=1e-12, atol=1e-12)


# --- explain(): what was timed, or why nothing was ---------------------------------------------
def test_explain_says_nothing_was_timed_and_why():
    x = rng.standard_normal(2000)
    text = jacobians.plan(counted_tri(Counter()), x).explain()
    assert "Nothing timed: the modelled estimates are more than 30x apart" in text
    assert "Planning evaluated tri 2 time(s)" in text
    assert "census (one counted run of f): 1 evaluation(s)" in text
    assert "sparsity detection (one run on index-set patterns): 1 evaluation(s)" in text
    small = jacobians.plan(counted_tri(Counter()), rng.standard_normal(20), sparse=False)
    assert "Nothing timed" in small.explain() and "under 20.00 ms" in small.explain()
    off = jacobians.plan(counted_tri(Counter()), x, calibrate=False).explain()
    assert "Nothing timed: calibrate=False" in off


def test_explain_says_what_was_timed(monkeypatch):
    monkeypatch.setattr(cost, "TIME_MIN_SECONDS", 0.0)   # time even a tiny close call
    x = rng.standard_normal(40)
    counter = Counter()
    W = rng.standard_normal((40, 40))
    f = lambda v: (counter.__setattr__("calls", counter.calls + 1), np.tanh(W @ v))[1]
    p = jacobians.plan(f, x, sparse=False, jit=False)   # jit plans time nothing
    text = p.explain()
    assert "Timed: forward, reverse were modelled within 30x" in text
    assert "one JVP of 40 one-hot directions" in text and "recording one tape" in text
    assert "one pullback of 40 cotangents" in text
    # census 1, the timed JVP and the timed recording 2 each (best of 2)
    assert counter.calls == p.evaluations == 5
    assert "Planning evaluated <lambda> 5 time(s)" in text
    assert p.estimates["forward"][1] == p.estimates["reverse"][1] == "timed"


def test_plan_argument_errors():
    with pytest.raises(ValueError, match="detect='sometimes'"):
        jacobians.plan(np.sin, np.ones(3), detect="sometimes")


def test_closure_signatures():
    from dualad.jacobians.reuse import code_key

    def make(A, count, n):
        def f(v):
            count[0] += 1
            return A @ v * n
        return f
    k = code_key(make(np.ones((3, 3)), [0], 2))
    assert k == code_key(make(np.zeros((3, 3)), [7], 2))      # shapes, list item types
    assert k != code_key(make(np.ones((4, 3)), [0], 2))       # another shape
    assert k != code_key(make(np.ones((3, 3), np.float32), [0], 2))   # another dtype
    assert k != code_key(make(np.ones((3, 3)), [0], 3))       # another top-level number
    assert code_key(np.sin) is None and code_key(Counter()) is None
