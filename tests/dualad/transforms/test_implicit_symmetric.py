"""custom_linear_solve(..., symmetric=True) is a promise the reverse sweep relies on: a
non-symmetric dense A (or matvec) is refused instead of giving A⁻¹ where A⁻ᵀ is needed
(issue 30)."""
import numpy as np
import pytest
import scipy.sparse as sp

import dualad

A = np.array([[4.0, 1.0], [0.0, 3.0]])
S = A + A.T
B = np.array([1.0, 2.0])


def _grad(op, **kw):
    return dualad.grad(lambda b: np.sum(dualad.custom_linear_solve(op, b, symmetric=True,
                                                                   **kw)))(B)


@pytest.mark.parametrize("method", ["auto", "direct", "gmres"])
def test_dense_nonsymmetric_is_refused(method):
    with pytest.raises(ValueError) as e:
        _grad(A, method=method)
    msg = str(e.value)
    for part in ("custom_linear_solve", "symmetric=true", "(2, 2)", "max |a − aᵀ| = 1",
                 "drop symmetric=true"):
        assert part in msg.lower()


def test_matvec_nonsymmetric_is_refused_by_a_probe():
    with pytest.raises(ValueError, match="custom_linear_solve: symmetric=True but the matvec"):
        _grad(lambda v: A @ v)


def test_jit_replay_checks_the_new_matrix():
    g = dualad.jit(lambda M, b: np.sum(dualad.custom_linear_solve(M, b, symmetric=True)))
    assert np.isclose(g(S, B), np.sum(np.linalg.solve(S, B)))
    with pytest.raises(ValueError, match="not symmetric"):
        g(A, B)


@pytest.mark.parametrize("op", [S, lambda v: S @ v, sp.csr_matrix(S)])
def test_symmetric_operators_pass_and_give_the_right_gradient(op):
    np.testing.assert_allclose(_grad(op), np.linalg.solve(S.T, np.ones(2)), rtol=1e-10)


def test_rounding_asymmetry_is_accepted():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((50, 30))
    G = X.T @ X + np.eye(30)
    G[0, 1] += 1e-13          # a matrix that is symmetric up to rounding
    b = rng.standard_normal(30)
    g = dualad.grad(lambda b: np.sum(dualad.custom_linear_solve(G, b, symmetric=True)))(b)
    np.testing.assert_allclose(g, np.linalg.solve(G.T, np.ones(30)), rtol=1e-8)


def test_float32_matrix_tolerance():
    G = (S + 1e-7 * np.array([[0.0, 1.0], [0.0, 0.0]])).astype(np.float32)
    x = dualad.custom_linear_solve(G, B.astype(np.float32), symmetric=True)
    assert x.dtype == np.float32


def test_the_probe_leaves_global_random_state_alone():
    np.random.seed(7)
    before = np.random.get_state()[1].copy()
    _grad(lambda v: S @ v)
    assert np.array_equal(np.random.get_state()[1], before)


def test_sparse_nonsymmetric_is_refused():
    with pytest.raises(ValueError, match=r"not symmetric: max \|A − Aᵀ\| = 1"):
        _grad(sp.csr_matrix(A))
    with pytest.raises(ValueError, match="not symmetric"):
        dualad.grad(lambda d: np.sum(dualad.custom_linear_solve(
            dualad.scipy.sparse.csr_array((d, ([0, 0, 1], [0, 1, 1])), shape=(2, 2)), B,
            symmetric=True)))(np.array([4.0, 1.0, 3.0]))


@pytest.mark.parametrize("n", [1, 5, 255, 256, 257, 600])
def test_the_tiled_asymmetry_is_the_plain_one(n):
    from dualad.transforms.implicit._symmetry import _max_asymmetry
    a = np.random.default_rng(n).standard_normal((n, n))
    assert _max_asymmetry(a) == np.max(np.abs(a - a.T))
    s = a + a.T
    assert _max_asymmetry(s) == 0.0
