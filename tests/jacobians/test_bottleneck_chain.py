"""Chains of bottleneck cuts (jacobians.chain) and plan(mode="mixed"): the pieces, the
matrix-chain order of their product, exactness against the dense Jacobian, refusals."""
import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import dualad
from dualad import jacobians
from dualad.jacobians import chain
from dualad.jacobians.bottleneck import find_bottleneck, product

RNG = np.random.default_rng(3600)
N = 120


def mat(a, b):
    return RNG.standard_normal((a, b)) / np.sqrt(b)


W1, W2, W4, W5 = mat(10, N), mat(100, 10), mat(8, 100), mat(N, 8)
MIDDLE = [mat(100, 100) for _ in range(8)]


def heavy(x):
    """N -> 10 -> 100 -> (eight 100 x 100 layers) -> 8 -> N: two narrow cuts around work
    (the chain pays when the 10 forward directions through the middle cost less than
    8 reverse ones, RHO = 1.3 times a forward one each)."""
    y = np.tanh(W2 @ np.sin(W1 @ x))
    for M in MIDDLE:
        y = np.tanh(M @ y)
    return np.tanh(W5 @ np.sin(W4 @ y))


def reference(f, x):
    return np.asarray(jacobians.jacobian(f, x, mode="reverse"))


def as_array(J):
    return J.toarray() if sp.issparse(J) else np.asarray(J)


@pytest.fixture
def cheap_pieces(monkeypatch):
    """Pieces with no fixed cost: the shortest path takes every cut that saves work."""
    monkeypatch.setattr(chain, "PIECE", 0)


def _program(f, x):
    program = dualad.jit(f).program(x)
    cut, _ = find_bottleneck(program, x.size, x.size)
    return cut


def test_the_separators_are_the_single_value_cuts_in_order():
    x = RNG.standard_normal(N)
    cut = _program(heavy, x)
    found = chain.separators(cut.program, N)
    sizes = [int(np.prod(cut.program.avals[v][1])) for v in found]
    assert sizes[:2] == [10, 10] and sizes[-2:] == [8, 8]
    assert all(s == 100 for s in sizes[2:-2])
    assert found == sorted(found)
    # a skip connection around a value: it no longer cuts
    def skip(x):
        a = np.tanh(W1 @ x)
        return W5 @ np.sin(W4 @ (W2 @ a)) + x[:1]
    program = dualad.jit(skip).program(x).pruned()
    assert chain.separators(program, N) == []


def test_a_chain_is_taken_where_it_pays_and_equals_the_dense_jacobian(cheap_pieces):
    x = RNG.standard_normal(N)
    cut = _program(heavy, x)
    pieces = chain.find_chain(cut.program, cut.cut)
    widths = [p.widths for p in pieces]
    assert widths == [(N, 10), (10, 8), (8, N)], widths
    p = jacobians.plan(heavy, x, mode="mixed")
    assert p.mode == "mixed" and len(p.through.plans) == 3
    assert p.through.summary == "a chain of 2 cuts (k = 10, 8)"
    for y in (x, RNG.standard_normal(N)):
        np.testing.assert_allclose(as_array(p(y)), reference(heavy, y), rtol=1e-12,
                                   atol=1e-13)
    text = p.explain()
    assert "Mixed mode (cross-country): a chain of 2 cuts (k = 10, 8)" in text
    assert "widths 120 -> 10 -> 8 -> 120" in text
    assert "Product in the order J_3 (J_2 J_1)" in text
    assert "  Measured (last call): J_1 " in text


def test_with_the_fixed_cost_of_a_piece_one_cut_is_kept():
    x = RNG.standard_normal(N)
    cut = _program(heavy, x)
    assert len(chain.find_chain(cut.program, cut.cut)) == 2
    assert len(chain.find_chain(cut.program, cut.cut, max_pieces=2)) == 2


def test_a_piece_that_is_not_cut_off_is_refused():
    x = RNG.standard_normal(N)
    cut = _program(heavy, x)
    program = cut.program
    with pytest.raises(ValueError, match="not a cut"):
        chain.Piece(program, [], [program.outvars[0]])


def _brute(dims):
    """The fewest multiply-adds over every association of the chain (Catalan many)."""
    def best(i, j):
        if i == j:
            return 0
        return min(best(i, s) + best(s + 1, j) + dims[j] * dims[s] * dims[i - 1]
                   for s in range(i, j))
    return best(1, len(dims) - 1)


@settings(derandomize=True, max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 9), min_size=2, max_size=7))
def test_the_chain_order_is_the_cheapest_and_its_product_is_exact(dims):
    cost, split = chain.chain_order(dims)
    assert cost == _brute(dims)
    rng = np.random.default_rng(len(dims))
    factors = [rng.standard_normal((dims[i], dims[i - 1])) for i in range(1, len(dims))]
    left_to_right = factors[0]
    for f in factors[1:]:
        left_to_right = f @ left_to_right
    np.testing.assert_allclose(chain.chain_product(factors, split, product), left_to_right,
                               rtol=1e-12, atol=1e-12)


def test_the_order_multiplies_across_the_narrow_cuts_first():
    dims = [2000, 10, 500, 8, 2000]
    cost, split = chain.chain_order(dims)
    left_first = sum(dims[j] * dims[j - 1] * dims[0] for j in range(2, len(dims)))
    assert cost < left_first
    assert split[(1, 4)] == 3            # J_4 (J_3 J_2 J_1): the 8-wide cut last


def test_mode_mixed_takes_one_cut_where_auto_does_not_look():
    A, B = mat(3, 30), mat(30, 3)

    def small(x):
        return np.tanh(B @ np.sin(A @ x))
    x = RNG.standard_normal(30)
    auto = jacobians.plan(small, x)
    assert auto.through is None and "Mixed mode" not in auto.explain()     # n < MIN_SIZE
    p = jacobians.plan(small, x, mode="mixed")
    assert p.mode == "mixed" and p.through.k == 3
    assert "mode='mixed' was asked for" in p.explain() or "cheaper than" in p.explain()
    np.testing.assert_allclose(as_array(p(x)), reference(small, x), rtol=1e-12, atol=1e-14)
    sparse_out = jacobians.plan(small, x, mode="mixed", output="sparse")(x)
    assert sp.issparse(sparse_out)


def _refusal(f, *args, **kwargs):
    with pytest.raises(ValueError) as info:
        jacobians.plan(f, *args, mode="mixed", **kwargs)
    return str(info.value)


def test_mode_mixed_is_refused_with_the_reason():
    x = RNG.standard_normal(N)

    def elementwise(x):
        return np.tanh(x) * 2.0
    text = _refusal(elementwise, x)
    assert text.startswith("plan(elementwise): mode='mixed'") and "no cut was found" in text
    assert "no fewer than min(n, m) = 120" in text and "mode='auto'" in text

    def guarded(x):
        z = W1 @ x
        return W5 @ np.sin(W4 @ (W2 @ z)) if z.sum() > 0 else W5 @ np.cos(W4 @ (W2 @ z))
    assert "guard(s)" in _refusal(guarded, x)
    assert "float64 arrays" in _refusal(heavy, x.astype(np.float32))
    assert "sparsity= was given" in _refusal(heavy, x, sparsity=np.ones((N, N), bool))

    def two(x, s):
        return heavy(x) * s
    assert "argnums=(0,)" in _refusal(two, x, 2.0)


def test_mode_mixed_is_in_the_planner_vocabulary():
    with pytest.raises(ValueError, match="'mixed'"):
        jacobians.plan(heavy, RNG.standard_normal(N), mode="mixd")


def test_every_association_of_three_factors_gives_the_same_jacobian(cheap_pieces):
    x = RNG.standard_normal(N)
    p = jacobians.plan(heavy, x, mode="mixed")
    chain_, plans, _ = p.through.state
    expected = reference(heavy, x)
    from dualad.jacobians.bottleneck import _flat
    values, factors = [x], []
    for piece, plan in zip(chain_.pieces, plans):
        factors.append(_flat(plan(*values), plan))
        values = piece.run(values)
    for order in itertools.permutations(range(2)):
        split = {(1, 3): 1 if order[0] == 0 else 2, (2, 3): 2, (1, 2): 1}
        np.testing.assert_allclose(as_array(chain.chain_product(factors, split, product)),
                                   expected, rtol=1e-12, atol=1e-13)


def _separators_by_search(program, limit):
    """The definition: values whose removal leaves no path from the inputs to the output."""
    readers = {}
    for e in program.body:
        for a in e.ins:
            if a.__class__ is int:
                readers.setdefault(a, []).append(e.out)
    out, found = program.outvars[0], []
    for e in program.body:
        if e.out == out or int(np.prod(program.avals[e.out][1])) >= limit:
            continue
        seen = {e.out} | set(program.invars)
        stack = [u for u in program.invars if u != e.out]
        while stack:
            for w in readers.get(stack.pop(), ()):
                if w not in seen:
                    seen.add(w)
                    stack.append(w)
        if out not in seen:
            found.append(e.out)
    return found


R = [mat(8, 8) for _ in range(4)]


def residual(x):
    """Residual blocks (y + tanh(R y)), a branch that rejoins, a value from constants."""
    y = W1[:8] @ x
    for M in R:
        y = y + np.tanh(M @ y)
    a, b = np.sin(y), np.cos(y) * np.tanh(np.ones(8))
    return W5[:, :8] @ (a * b + y)


def two_inputs(x, s):
    return W5 @ np.tanh(W4 @ np.tanh(W2 @ (W1 @ x) * s))


@pytest.mark.parametrize("f, args", [(heavy, (RNG.standard_normal(N),)),
                                     (residual, (RNG.standard_normal(N),)),
                                     (two_inputs, (RNG.standard_normal(N), 0.5))])
def test_the_dominators_are_the_separators(f, args):
    program = dualad.jit(f).program(*args).pruned()
    found = chain.separators(program, N)
    assert found == _separators_by_search(program, N)
    assert found


def test_jacobian_mode_mixed_equals_the_dense_jacobian():
    """jacobians.jacobian(mode="mixed") (and its curried form) goes through the cut that
    plan(mode="mixed") takes, with containers and argnums as the other modes; refused, as
    jacobian, when there is none."""
    x = RNG.standard_normal(N)
    want = reference(heavy, x)
    np.testing.assert_allclose(jacobians.jacobian(heavy, x, mode="mixed"), want,
                               rtol=1e-11, atol=1e-13)
    np.testing.assert_allclose(jacobians.jacobian(heavy, mode="mixed")(x), want,
                               rtol=1e-11, atol=1e-13)

    def two(a, b):
        return {"y": heavy(a + 2.0 * b)}
    b = RNG.standard_normal(N)
    got = jacobians.jacobian(two, x, b, mode="mixed", argnums=(0, 1))
    ref = jacobians.jacobian(two, x, b, mode="reverse", argnums=(0, 1))
    for g, r in zip(got["y"], ref["y"]):
        np.testing.assert_allclose(g, r, rtol=1e-11, atol=1e-13)
    with pytest.raises(ValueError, match=r"^jacobian\(elementwise\): mode='mixed'"):
        def elementwise(x):
            return np.tanh(x) * 2.0
        jacobians.jacobian(elementwise, x, mode="mixed")
    with pytest.raises(ValueError, match="'mixed'"):
        jacobians.jacobian(heavy, x, mode="mixd")
