"""Mixed-mode Jacobians through a bottleneck of f's program: J_f = J_g J_h
(jacobians.bottleneck), and vertex elimination orders (jacobians.elimination)."""
import numpy as np
import pytest
import scipy.sparse as sp

import dualad
from dualad import jacobians
from dualad.jacobians.bottleneck import find_bottleneck, product

RNG = np.random.default_rng(36)
N, K = 300, 5
W1 = RNG.standard_normal((N, N)) / np.sqrt(N)
W2 = RNG.standard_normal((N, N)) / np.sqrt(N)
A = RNG.standard_normal((K, N)) / np.sqrt(N)
B = RNG.standard_normal((N, K))
C = RNG.standard_normal((N, 3))


def through_k(x):
    """n -> n -> k -> n -> n: wide on both sides of a k = 5 bottleneck."""
    z = A @ np.tanh(W1 @ x)
    return np.tanh(W2 @ np.sin(B @ z))


def dense(f, *args):
    argnums = tuple(range(len(args)))
    J = jacobians.jacobian(f, *args, mode="forward", argnums=argnums)
    blocks = [np.asarray(b).reshape(N, -1) for b in (J if isinstance(J, tuple) else (J,))]
    return np.hstack(blocks)


def as_array(J):
    return J.toarray() if sp.issparse(J) else np.asarray(J)


def test_the_plan_goes_through_the_bottleneck_and_equals_the_dense_jacobian():
    x = RNG.standard_normal(N)
    p = jacobians.plan(through_k, x)
    assert p.through is not None and p.through.kind == "mixed", p.explain()
    assert p.through.k == K and p.mode == "mixed"
    assert p.directions == 2 * K     # K reverse sweeps for J_h, K forward ones for J_g
    assert "J_f = J_g J_h through a cut of 5 values" in repr(p)
    for y in (x, RNG.standard_normal(N)):
        np.testing.assert_allclose(as_array(p(y)), dense(through_k, y), rtol=1e-12,
                                   atol=1e-13)


def test_without_jit_both_sides_are_eager_plans():
    # the eager cost model (it includes the measured call time) may weigh J_h's 300 forward
    # directions against its 5 reverse ones either way: only the composition is checked
    x = RNG.standard_normal(N)
    p = jacobians.plan(through_k, x, jit=False)
    if p.through is None:
        assert "Mixed mode: through a cut of k = 5 values" in p.explain()
    else:
        assert p.through.h_plan.replayed is None and p.through.g_plan.replayed is None
    for y in (x, RNG.standard_normal(N)):
        np.testing.assert_allclose(as_array(p(y)), dense(through_k, y), rtol=1e-12,
                                   atol=1e-13)


def test_explain_shows_the_cut_the_sides_and_their_costs():
    x = RNG.standard_normal(N)
    p = jacobians.plan(through_k, x)
    text = p.explain()
    assert "Mixed mode (cross-country): the narrowest cut between through_k's inputs and " \
           "its output is k = 5 values (v" in text
    assert "J_h (5 x 300) by reverse" in text and "J_g (300 x 5) by forward" in text
    assert "  Estimated: J_h " in text and "product" in text
    assert "Chosen: mixed (J_f = J_g J_h through a cut of 5 values)" in text
    assert "Why: mixed mode through a cut of k = 5 values" in text
    assert "Measured (last call)" not in text
    p(x)
    assert "  Measured (last call): J_h " in p.explain()


def test_an_input_g_reads_directly_belongs_to_the_cut():
    def f(x, s):
        return np.tanh(W2 @ np.sin(B @ (A @ np.tanh(W1 @ x)))) + C @ s
    x, s = RNG.standard_normal(N), RNG.standard_normal(3)
    program = dualad.jit(f).program(x, s)
    cut, why = find_bottleneck(program, N + 3, N)
    assert why is None and cut.selected == K + 3
    assert program.invars[1] in cut.cut              # s, read by g directly
    p = jacobians.plan(f, x, s, argnums=(0, 1))
    assert p.through is not None and p.through.k == K + 3
    assert "input 1, 3 values, read by g directly" in p.explain()
    J = p(x, s)
    got = np.hstack([np.asarray(b).reshape(N, -1) for b in J])
    np.testing.assert_allclose(got, dense(f, x, s), rtol=1e-12, atol=1e-13)


def test_no_cut_narrower_than_the_pure_modes():
    def wide(x):
        return np.tanh(W2 @ np.tanh(W1 @ x))
    x = RNG.standard_normal(N)
    cut, why = find_bottleneck(dualad.jit(wide).program(x), N, N)
    assert cut is None and "narrowest cut between the inputs and the output has 300" in why
    p = jacobians.plan(wide, x)
    assert p.through is None
    assert "Mixed mode: no cut: the narrowest cut" in p.explain()
    np.testing.assert_allclose(as_array(p(x)), dense(wide, x), rtol=1e-12, atol=1e-13)


def test_a_function_with_a_guard_has_no_cut_and_says_why():
    def guarded(x):
        z = A @ np.tanh(W1 @ x)
        if z.sum() > 0:                  # a branch on a value: a guard in the program
            z = 2.0 * z
        return np.tanh(W2 @ np.sin(B @ z))
    x = RNG.standard_normal(N)
    cut, why = find_bottleneck(dualad.jit(guarded).program(x), N, N)
    assert cut is None and "guard" in why
    p = jacobians.plan(guarded, x)
    assert p.through is None
    assert "Mixed mode: no cut: the program has 1 guard(s)" in p.explain()
    for y in (x, -x):
        np.testing.assert_allclose(as_array(p(y)), dense(guarded, y), rtol=1e-12,
                                   atol=1e-13)


def test_a_rebound_closure_variable_finds_the_cut_again():
    narrow = {"A": A, "B": B}

    def f(x):
        return np.tanh(W2 @ np.sin(narrow["B"] @ (narrow["A"] @ np.tanh(W1 @ x))))
    x = RNG.standard_normal(N)
    p = jacobians.plan(f, x)
    assert p.through.k == K
    narrow["A"], narrow["B"] = A[:3], B[:, :3]        # a narrower bottleneck
    np.testing.assert_allclose(as_array(p(x)), dense(f, x), rtol=1e-12, atol=1e-13)
    assert p.through.refound == 1 and p.through.k == 3
    assert "The cut was found again 1 time(s)" in p.explain()


def test_wrong_shapes_are_refused_with_both_shapes():
    p = jacobians.plan(through_k, RNG.standard_normal(N))
    with pytest.raises(ValueError, match=r"planned for inputs of shapes \[\(300,\)\], got "
                                         r"\[\(301,\)\]"):
        p(np.ones(N + 1))


def test_traced_calls_take_the_direct_way():
    x = RNG.standard_normal(N)
    p = jacobians.plan(through_k, x)
    assert p.through is not None
    got = dualad.jit(lambda y: p(y))(x)
    np.testing.assert_allclose(np.asarray(got), dense(through_k, x), rtol=1e-12, atol=1e-13)


def test_the_product_is_sparse_when_both_factors_are():
    jg = sp.random(40, 6, density=0.05, random_state=1, format="csr")
    jh = sp.random(6, 50, density=0.05, random_state=2, format="csr")
    out = product(jg, jh)
    assert sp.issparse(out)
    np.testing.assert_allclose(out.toarray(), jg.toarray() @ jh.toarray(), rtol=1e-15)
    full = product(jg.toarray() + 1.0, jh)
    assert isinstance(full, np.ndarray)
    np.testing.assert_allclose(full, (jg.toarray() + 1.0) @ jh.toarray(), rtol=1e-14)


def test_small_functions_are_not_recorded_again():
    def small(x):
        return np.tanh(B[:20] @ (A[:, :20] @ x))
    p = jacobians.plan(small, RNG.standard_normal(20))
    assert p.through is None and "Mixed mode" not in p.explain()


# --- vertex elimination (jacobians.elimination): the orders' costs against the cut --------
def small_bottleneck(x):
    return np.tanh(W2[:60, :60] @ np.sin(B[:60] @ (A[:, :60] @ np.tanh(W1[:60, :60] @ x))))


@pytest.mark.parametrize("order", ["forward", "reverse", "markowitz", "cut"])
def test_every_elimination_order_gives_the_jacobian(order):
    from dualad.jacobians.elimination import eliminate
    x = RNG.standard_normal(60)
    program = dualad.jit(small_bottleneck).program(x)
    cut, _ = find_bottleneck(program, 60, 60)
    J, flops, done = eliminate(program, [x], order, cut=cut)
    ref = np.asarray(jacobians.jacobian(small_bottleneck, x, mode="reverse"))
    np.testing.assert_allclose(J, ref, rtol=1e-12, atol=1e-14)
    assert flops > 0 and len(done) == len(program.pruned().body) - 1


def test_the_cut_order_costs_less_than_the_pure_orders_and_greedy_markowitz():
    from dualad.jacobians.elimination import eliminate
    x = RNG.standard_normal(60)
    program = dualad.jit(small_bottleneck).program(x)
    cut, _ = find_bottleneck(program, 60, 60)
    cost = {o: eliminate(program, [x], o, cut=cut)[1]
            for o in ("forward", "reverse", "markowitz", "cut")}
    assert cost["cut"] < cost["markowitz"] <= cost["forward"]
    assert cost["cut"] < cost["reverse"]
    with pytest.raises(ValueError, match="order='cut' needs cut="):
        eliminate(program, [x], "cut")


def test_a_closed_over_matrix_changed_in_place_is_read_by_the_next_call():
    a = A.copy()

    def f(x):
        return np.tanh(W2 @ np.sin(B @ (a @ np.tanh(W1 @ x))))
    x = RNG.standard_normal(N)
    p = jacobians.plan(f, x)
    assert p.through is not None
    a *= 3.0                       # the same array, other values: the same cut
    np.testing.assert_allclose(as_array(p(x)), dense(f, x), rtol=1e-12, atol=1e-13)
    assert p.through.refound == 0
