"""Jacobians through the input selections: J_f = J_g S (jacobians.gathers, .gathered)."""
import threading

import numpy as np
import pytest
import scipy.sparse as sp

import dualad
from dualad import jacobians
from dualad.jacobians.gathers import Composition, find_cut

RNG = np.random.default_rng(7)
N, E = 300, 20000
SRC = RNG.integers(0, N, E)
DST = (SRC + RNG.integers(1, N, E)) % N


def edges(x):
    """Each edge reads its two ends: a graph model's residual."""
    a, b = x[SRC], x[DST]
    return np.concatenate([np.sin(a) * b, a - b ** 2])


def dense(f, x):
    return np.asarray(jacobians.jacobian(f, x, mode="forward"))


def test_the_plan_goes_through_the_selections_and_equals_the_dense_jacobian():
    x = RNG.standard_normal(N)
    p = jacobians.plan(edges, x)
    assert "through the input selections" in repr(p)
    assert p.directions == 2            # J_g: each edge's two rows share its two values
    y = RNG.standard_normal(N)
    J = p(y)
    assert sp.issparse(J) and J.shape == (2 * E, N)
    np.testing.assert_allclose(J.toarray(), dense(edges, y), rtol=1e-13, atol=1e-13)
    text = p.explain()
    assert "Through the input selections: edges starts with" in text
    assert "Chosen: sparse-" in text and "through the input selections" in text
    # the direct ways were weighed on the composed pattern, which is J_f's
    assert (p.sparsity.pattern != (abs(J) > 0)).nnz == 0


def test_without_jit_and_with_sparse_jacobian_too():
    x = RNG.standard_normal(N)
    p = jacobians.plan(edges, x, jit=False)
    assert p.through is not None
    np.testing.assert_allclose(p(x).toarray(), dense(edges, x), rtol=1e-13, atol=1e-13)


def test_a_row_that_reads_one_input_twice_adds_both_entries():
    idx = np.arange(50) % 20
    same = idx.copy()

    def f(x):
        return x[idx] * x[same] + np.cos(x[idx])     # d/dx_i of x_i * x_i is 2 x_i
    x = RNG.standard_normal(20)
    p = jacobians.plan(f, x)
    assert p.through is not None
    np.testing.assert_allclose(p(x).toarray(), dense(f, x), rtol=1e-14, atol=1e-14)


def test_a_closed_over_index_array_changed_in_place_is_seen():
    src = SRC.copy()

    def f(x):
        return np.sin(x[src]) * x[DST]
    x = RNG.standard_normal(N)
    p = jacobians.plan(f, x)
    assert p.through is not None
    src[:] = src[::-1]                     # the same array, new values
    np.testing.assert_allclose(p(x).toarray(), dense(f, x), rtol=1e-14, atol=1e-14)
    assert p.through.refound == 1


def test_a_rebound_closure_variable_is_seen():
    box = {"scale": 2.0}

    def f(x):
        return box["scale"] * np.sin(x[SRC]) * x[DST]
    x = RNG.standard_normal(N)
    p = jacobians.plan(f, x)
    box["scale"] = 5.0
    np.testing.assert_allclose(p(x).toarray(), dense(f, x), rtol=1e-14, atol=1e-14)


def test_wrong_shapes_are_refused_with_both_shapes():
    p = jacobians.plan(edges, RNG.standard_normal(N))
    with pytest.raises(ValueError, match=r"planned for inputs of shapes \[\(300,\)\], got "
                                         r"\[\(299,\)\]"):
        p(np.ones(N - 1))


def test_a_float32_point_is_taken_as_float64():
    x = RNG.standard_normal(N)
    p = jacobians.plan(edges, x)
    want = dense(edges, x.astype(np.float32).astype(np.float64))
    np.testing.assert_allclose(p(x.astype(np.float32)).toarray(), want, rtol=1e-12,
                               atol=1e-12)


def test_calls_from_threads_agree():
    x = RNG.standard_normal(N)
    p = jacobians.plan(edges, x)
    want = dense(edges, x)
    out = [None] * 4

    def run(k):
        out[k] = p(x).toarray()
    ts = [threading.Thread(target=run, args=(k,)) for k in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for o in out:
        np.testing.assert_allclose(o, want, rtol=1e-13, atol=1e-13)


def test_traced_calls_take_the_planners_traced_path():
    x = RNG.standard_normal(N)
    p = jacobians.plan(edges, x)
    total = dualad.jit(lambda y: p(y).sum())
    assert np.isclose(total(x), dense(edges, x).sum())


def test_no_cut_without_a_repeated_selection_or_with_a_branch():
    def slices(x):
        return np.sin(x[1:]) * x[:-1]
    p = jacobians.plan(slices, RNG.standard_normal(2000))
    assert p.through is None and "Input selections" not in p.explain()   # not looked for

    def once(x):
        return np.sin(x[np.arange(N)[::-1]])      # a permutation: nothing read twice
    p = jacobians.plan(once, RNG.standard_normal(N))
    assert p.through is None and "Input selections: none" in p.explain()

    def branchy(x):
        a = x[SRC]
        return np.sin(a) if np.sum(x) > 0 else np.cos(a)
    p = jacobians.plan(branchy, np.ones(N))
    assert p.through is None


def test_find_cut_positions_are_the_selected_inputs():
    jf = dualad.jit(edges)
    cut = find_cut(jf.program(np.zeros(N)), [(N,)])
    assert cut is not None
    got = sorted(tuple(pos.ravel()) for pos in cut.positions)
    assert got == sorted([tuple(SRC), tuple(DST)])
    x = RNG.standard_normal(N)
    assert all(np.array_equal(v, x[p]) for v, p in zip(cut.select([x]), cut.positions))


def test_composition_is_the_product_with_the_selection_matrix():
    rng = np.random.default_rng(3)
    jg = sp.random(60, 90, density=0.08, format="csr", random_state=rng)
    pos = [rng.integers(0, 25, 40), rng.integers(0, 25, (25, 2))]
    flat = np.concatenate([q.ravel() for q in pos])
    S = sp.csr_matrix((np.ones(90), (np.arange(90), flat)), shape=(90, 25))
    c = Composition(jg, pos, 25)
    assert c.sums is not None          # some rows read one input twice
    np.testing.assert_allclose(c.csr(jg).toarray(), (jg @ S).toarray(), rtol=1e-15)


def test_a_pattern_without_decisions_is_not_detected_again_in_the_jit_trace(monkeypatch):
    from dualad.jacobians import nested
    calls = []
    detect = nested.detect_jacobian

    def counting(problem, *a, **k):
        calls.append(1)
        return detect(problem, *a, **k)
    monkeypatch.setattr(nested, "detect_jacobian", counting)

    def tridiagonal(x):                      # no comparison, mask or branch
        return np.concatenate([x[:1], x[1:] * x[:-1]]) + np.sin(x)
    p = jacobians.plan(tridiagonal, RNG.standard_normal(500), mode="sparse-forward")
    p(RNG.standard_normal(500))
    assert calls == []

    def masked(x):                           # a decision: the trace detects at its point
        return np.where(x > 0, x, 0.0) * x[::-1]
    p = jacobians.plan(masked, RNG.standard_normal(500), mode="sparse-forward")
    np.testing.assert_allclose(p(np.ones(500)).toarray(), dense(masked, np.ones(500)))
    assert calls == [1]


@pytest.mark.parametrize("block", [1, 7, 50, 1 << 22])
def test_composition_in_row_blocks_is_the_same_product(monkeypatch, block):
    """The sort runs per block of rows (memory ∝ block): blocks of one entry, blocks
    smaller than a row, and one block give the same J_f, duplicates added."""
    from dualad.jacobians import gathers
    monkeypatch.setattr(gathers, "_BLOCK", block)
    rng = np.random.default_rng(4)
    jg = sp.random(40, 70, density=0.2, format="csr", random_state=rng)
    keep = np.ones(40)
    keep[5] = 0.0       # an empty row
    jg = (sp.diags(keep) @ jg).tocsr()
    jg.eliminate_zeros()
    pos = [rng.integers(0, 19, 70)]
    S = sp.csr_matrix((np.ones(70), (np.arange(70), pos[0])), shape=(70, 19))
    c = Composition(jg, pos, 19)
    got = c.csr(jg)
    want = (jg @ S).tocsr()
    want.sort_indices()
    np.testing.assert_allclose(got.toarray(), want.toarray(), rtol=1e-15)
    assert np.array_equal(got.indptr, want.indptr) and np.array_equal(got.indices, want.indices)


@pytest.mark.parametrize("mode", ["sparse-forward", "sparse-reverse", "sparse-bidirectional"])
def test_the_jit_trace_of_a_decision_free_plan_takes_the_plans_coloring(monkeypatch, mode):
    """A pattern that took no decisions is the plan's at every point: the trace under jit
    neither counts f again nor colors again, and the replay equals the dense Jacobian."""
    from dualad.jacobians import nested
    calls = []
    monkeypatch.setattr(nested, "jacobian_colorings",
                        lambda *a, **k: calls.append("colored") or (None, None, None))
    monkeypatch.setattr(nested, "_census", lambda *a, **k: calls.append("census"))

    def arrow(x):
        y = x ** 2 + x[0]
        return np.concatenate([[np.sum(np.sin(x))], y[1:]])
    x = RNG.standard_normal(60)
    p = jacobians.plan(arrow, x, mode=mode)
    for at in (x, RNG.standard_normal(60)):
        np.testing.assert_allclose(p(at).toarray(), dense(arrow, at), rtol=1e-13, atol=1e-14)
    assert calls == []


def test_g_drops_each_value_after_its_last_read():
    """The rest of the program frees what it no longer reads (a detection run of g holds
    one pattern per live value, not one per equation)."""
    from dualad.jacobians.gathers import _last_reads
    cams, obs = RNG.standard_normal((6, 3)), np.arange(40) % 6

    def f(c):
        a = c[obs]
        b = np.sin(a) * a
        return np.sum(b * b, axis=1)
    cut = find_cut(dualad.jit(f).program(cams), [(6, 3)])
    dies = _last_reads(cut.rest, cut.program.outvars)
    listed = [v for vs in dies.values() for v in vs]
    read = {a for e in cut.rest for a in e.ins if a.__class__ is int}
    assert sorted(listed) == sorted(read - set(cut.program.outvars))
    for k, vs in dies.items():
        assert all(not any(v in e.ins for e in cut.rest[k + 1:]) for v in vs)
    np.testing.assert_allclose(cut.g(*cut.select([cams])), f(cams))


def test_composition_in_order_shares_the_data_of_j_g():
    """Rows whose selected values come in the order of their inputs (bundle adjustment's
    cameras before points): no permutation is kept and J_f's data is J_g's."""
    rng = np.random.default_rng(5)
    jg = sp.random(30, 45, density=0.3, format="csr", random_state=rng)
    pos = [np.arange(45) * 2]          # increasing: each row's columns stay in order
    c = Composition(jg, pos, 90)
    assert c.order is None and c.sums is None
    got = c.csr(jg)
    assert np.shares_memory(got.data, jg.data)     # no copy, no gather
    S = sp.csr_matrix((np.ones(45), (np.arange(45), pos[0])), shape=(45, 90))
    np.testing.assert_array_equal(got.toarray(), (jg @ S).toarray())


def test_a_result_edited_in_place_and_dropped_does_not_reach_the_next():
    """Each result's arrays are its own (the caller may edit them); once dropped their
    memory is written again by a later call (dualad.extend.Recycled), with the pattern's
    indices and the call's values, whatever the caller left there."""
    x = RNG.standard_normal(N)
    p = jacobians.plan(edges, x)
    want = dense(edges, x)
    J = p(x)
    first = J
    J = p(x)                       # first is held: no memory shared
    assert not np.shares_memory(first.indices, J.indices)
    assert not np.shares_memory(first.data, J.data)
    for _ in range(3):
        J.indices[:] = 0           # a caller's in-place edit, then the result dropped
        J.data[:] = np.nan
        J.indptr[1:] = 0
        J = p(x)
        np.testing.assert_array_equal(J.toarray(), want)
    np.testing.assert_array_equal(first.toarray(), want)
