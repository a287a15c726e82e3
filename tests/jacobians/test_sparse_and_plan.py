"""Sparse Jacobians and Hessians against dense ones; the planner's choices and explain()."""
import numpy as np
import pytest
import scipy.sparse as sp

from dualad import jacobians

rng = np.random.default_rng(2)


def bratu(u, lam=1.0):
    h = 1.0 / (len(u) + 1)
    up = np.concatenate([np.zeros(1), u, np.zeros(1)])
    return (up[2:] - 2.0 * up[1:-1] + up[:-2]) / h ** 2 + lam * np.exp(u)


def arrow(x):  # a dense first row: forward needs n column colors, reverse 2 row colors
    return np.concatenate([np.sum(x ** 2, keepdims=True), np.sin(x[1:]) * 2.0])


@pytest.mark.parametrize("f", [bratu, arrow, lambda x: np.sin(x.reshape(4, 3)).sum(axis=1)])
@pytest.mark.parametrize("mode", ["auto", "forward", "reverse"])
def test_sparse_jacobian_equals_dense(f, mode):
    x = rng.standard_normal(12)
    J = jacobians.sparse_jacobian(f, x, mode=mode)
    assert sp.isspmatrix_csr(J) and J.has_sorted_indices
    np.testing.assert_allclose(J.toarray(), jacobians.jacobian(f, x).reshape(J.shape),
                               rtol=1e-12, atol=1e-12)


def test_sparse_jacobian_chunks_and_curried_form():
    x = rng.standard_normal(30)
    J = jacobians.sparse_jacobian(bratu, chunk_size=2)(x)
    np.testing.assert_allclose(J.toarray(), jacobians.jacfwd(bratu, x), rtol=1e-12)


def test_user_supplied_pattern():
    x = rng.standard_normal(8)
    pattern = sp.diags([1, 1, 1], [-1, 0, 1], shape=(8, 8), dtype=bool)
    J = jacobians.sparse_jacobian(bratu, x, sparsity=pattern)
    np.testing.assert_allclose(J.toarray(), jacobians.jacobian(bratu, x), rtol=1e-12)
    Jd = jacobians.sparse_jacobian(bratu, x, sparsity=pattern.toarray() != 0, mode="reverse")
    np.testing.assert_allclose(Jd.toarray(), J.toarray(), rtol=1e-12)
    with pytest.raises(ValueError, match=r"pattern has shape \(8, 9\).*\(8, 8\)"):
        jacobians.sparse_jacobian(bratu, x, sparsity=np.ones((8, 9)))


def tridiag_energy(x):
    return np.sum((x[1:] - x[:-1] ** 2) ** 2) + np.sum(np.log(np.cosh(x))) + x[0] * x[-1]


@pytest.mark.parametrize("n", [2, 7, 40])
def test_sparse_hessian_equals_dense_and_is_symmetric(n):
    x = rng.standard_normal(n)
    H = jacobians.sparse_hessian(tridiag_energy, x)
    assert (H != H.T).nnz == 0
    np.testing.assert_allclose(H.toarray(), jacobians.hessian(tridiag_energy, x), rtol=1e-12,
                               atol=1e-12)


def test_sparse_hessian_user_pattern_and_random_structure():
    n = 30
    M = sp.random(n, n, density=0.08, random_state=3)
    M = ((M + M.T) != 0).astype(float).toarray()
    f = lambda x: np.sum((M @ x) ** 2 * x) + np.sum(x ** 4)
    x = rng.standard_normal(n)
    np.testing.assert_allclose(jacobians.sparse_hessian(f, x).toarray(), jacobians.hessian(f, x),
                               rtol=1e-10, atol=1e-10)
    pattern = jacobians.hessian_sparsity(f, x)
    H = jacobians.sparse_hessian(f)(x)
    assert (H != 0).nnz <= pattern.nnz


# --- the planner ------------------------------------------------------------------------------
def test_plan_prepares_once_and_evaluates_at_new_points():
    x = rng.standard_normal(50)
    # calibrate=False: the cost model decides, not a timing of close alternatives (at
    # n = 50, 50 dense directions and 3 colored ones can time alike on a loaded machine:
    # CI once picked dense forward). This test is about preparing once, not the choice.
    p = jacobians.plan(bratu, x, calibrate=False)
    assert p.mode in ("sparse-forward", "sparse-reverse") and p.directions == 3
    y = rng.standard_normal(50)
    J = p(y)
    assert sp.issparse(J)
    np.testing.assert_allclose(J.toarray(), jacobians.jacobian(bratu, y), rtol=1e-12)
    dense = jacobians.plan(bratu, x, output="dense")(y)
    assert isinstance(dense, np.ndarray) and dense.shape == (50, 50)
    with pytest.raises(ValueError, match=r"planned for inputs of shapes \[\(50,\)\].*\(3,\)"):
        p(np.ones(3))


def test_explain_says_everything_in_words_and_numbers():
    x = rng.standard_normal(400)   # large enough that 3 colors beat 400 directions on any clock
    text = jacobians.plan(bratu, x).explain()
    for needle in ("n = 400 inputs", "m = 400 outputs", "Chosen: sparse-forward", "3 directions",
                   "3 colors by band", "optimal", "structural nonzeros", "Why:", "forward ",
                   "reverse ", "sparse-reverse", "primitives", "sweep"):
        assert needle in text, needle


def test_plan_picks_reverse_coloring_for_an_arrow():
    # n = 3000: 3000 dense directions against 2 colored ones, so no timing noise can
    # bring them close (at n = 1000 the model's margin was near the timing threshold)
    p = jacobians.plan(arrow, rng.standard_normal(3000))
    assert p.mode == "sparse-reverse" and p.row_coloring.ncolors == 2
    x = p.problem.leaves[0]
    exact = sp.diags(np.concatenate([[0.0], 2.0 * np.cos(x[1:])]), format="lil")
    exact[0, :] = 2.0 * x                      # the first row: ∂ Σ x²
    np.testing.assert_allclose(p().toarray(), exact.toarray(), rtol=1e-14)


def test_plan_fixed_modes_and_dense_outputs():
    W = rng.standard_normal((20, 5))
    f = lambda x: np.tanh(W @ x)
    x = rng.standard_normal(5)
    ref = jacobians.jacobian(f, x)
    for mode in ("forward", "reverse", "sparse-forward", "sparse-reverse"):
        p = jacobians.plan(f, x, mode=mode)
        assert p.mode == mode
        out = p(x)
        np.testing.assert_allclose(out.toarray() if sp.issparse(out) else out, ref, rtol=1e-12)
    # n = 5 directions against m = 20: the model picks forward. (With calibrate=True the
    # choice is timed, and one sweep of each is too close to call on a noisy machine.)
    assert jacobians.plan(f, x, sparse=False, calibrate=False).mode == "forward"
    assert "not considered (sparse=False)" in jacobians.plan(f, x, sparse=False).explain()


def test_too_dense_patterns_stop_detection():
    f = lambda x: np.sin(x) * np.sum(x)
    p = jacobians.plan(f, rng.standard_normal(300), max_memory=2 ** 24)
    assert p.mode in ("forward", "reverse")
    text = p.explain()
    assert "detection stopped" in text or "no compression" in text


def test_plan_errors():
    with pytest.raises(ValueError, match="output='csr'"):
        jacobians.plan(bratu, np.ones(4), output="csr")
    with pytest.raises(ValueError, match="mode='diagonal'"):
        jacobians.plan(bratu, np.ones(4), mode="diagonal")
