"""Sparse Jacobians of residuals written with scipy.sparse matrices, as PDE codes write them.

The sparsity detector runs ``A @ u`` through the ``sparse_matmul`` pattern rule (A's stored
pattern applied to u's), traced stored values through gather/scatter-add, and ``spsolve``
through the ``sparse_solve`` rule (connected components of A's graph). Oracles: central
differences of the plain function (dense, small n) and the known Jacobians.
"""
import numpy as np
import pytest
import scipy.sparse as sp

import dualad.scipy.sparse as dsp
from dualad import jacobians
from dualad.jacobians.sparsity import detect_jacobian
from dualad.jacobians._common import Problem
from dualad.scipy.sparse import linalg as dla
from dualad.verification.numeric import numerical_jacobian


def lap1d(n):
    return sp.diags([np.ones(n - 1), -2 * np.ones(n), np.ones(n - 1)], [-1, 0, 1], format="csr")


def lap2d(m):
    L, eye = lap1d(m), sp.eye(m)
    return (sp.kron(L, eye) + sp.kron(eye, L)).tocsr()


def _detect(f, x):
    return detect_jacobian(Problem("test", f, (x,), 0))


@pytest.mark.parametrize("A", [lap1d(12), lap2d(4), sp.csr_array(lap2d(3)), lap2d(4).tocsc()],
                         ids=["1d", "2d", "2d-sparray", "2d-csc"])
def test_residual_jacobian_is_exact_against_finite_differences(A):
    n = A.shape[0]
    f0 = np.linspace(0, 1, n)
    u = np.cos(np.arange(n))

    def residual(u):
        return A @ u + u ** 3 - f0
    for mode in ("forward", "reverse"):
        J = jacobians.sparse_jacobian(residual, u, mode=mode)
        np.testing.assert_allclose(J.toarray(), numerical_jacobian(residual, u), atol=1e-7)
        np.testing.assert_allclose(J.toarray(), A.toarray() + np.diag(3 * u ** 2), atol=1e-13)
    found = _detect(residual, u)
    assert not found.fallbacks
    expected = (abs(sp.csr_array(A)) + sp.eye(n)) != 0
    assert (found.pattern != expected).nnz == 0       # exactly the structural nonzeros


def test_right_products_and_transposes_have_the_transposed_pattern():
    A = sp.random(8, 6, density=0.3, format="csr", random_state=4)
    u = np.ones(8)
    pat = jacobians.jacobian_sparsity(lambda u: u @ A, u)
    assert (pat != (A.T != 0)).nnz == 0
    pat = jacobians.jacobian_sparsity(lambda U: A.T @ U, np.ones((8, 2)))
    assert (pat != (sp.kron(A.T, sp.eye(2)) != 0)).nnz == 0   # each column of U on its own


def test_large_2d_laplacian_colors_and_no_fallback():
    A = lap2d(100)                              # n = 10^4
    u = np.linspace(0, 1, A.shape[0])
    residual = lambda u: A @ u + u ** 3         # noqa: E731
    found = _detect(residual, u)
    assert not found.fallbacks and found.nnz == A.nnz
    assert jacobians.column_coloring(found.pattern).ncolors <= 8
    J = jacobians.sparse_jacobian(residual, u)
    assert abs(J - (A + sp.diags(3 * u ** 2))).max() == 0.0


def test_traced_stored_values_give_a_row_local_pattern():
    A = lap1d(7)
    A.sort_indices()
    u = np.arange(1.0, 8.0)

    def r(d):
        return dsp.csr_array((d, A.indices, A.indptr), shape=A.shape) @ u
    d = A.data.copy()
    J = jacobians.sparse_jacobian(r, d)
    np.testing.assert_allclose(J.toarray(), numerical_jacobian(r, d), atol=1e-8)
    rows = np.repeat(np.arange(7), np.diff(A.indptr))
    expected = sp.csr_array((np.ones(len(d), bool), (rows, np.arange(len(d)))), shape=(7, len(d)))
    assert (J != 0).sum() == len(d) and ((J != 0) != expected).nnz == 0


def test_spsolve_pattern_follows_the_components_of_the_matrix():
    blocks = sp.block_diag([lap1d(3) - 2 * sp.eye(3), lap1d(4) - 2 * sp.eye(4)]).tocsr()
    b = np.ones(7)
    pat = jacobians.jacobian_sparsity(lambda b: dla.spsolve(blocks, b), b)
    expected = sp.block_diag([np.ones((3, 3)), np.ones((4, 4))]) != 0
    assert (pat != expected).nnz == 0
    J = jacobians.sparse_jacobian(lambda b: dla.spsolve(blocks, b), b)
    np.testing.assert_allclose(J.toarray(), np.linalg.inv(blocks.toarray()), atol=1e-12)
    # in the stored values: each x_i depends on its own block's values only
    blocks.sort_indices()
    d = blocks.data.copy()

    def x_of(d):
        return dla.spsolve(dsp.csr_array((d, blocks.indices, blocks.indptr), shape=(7, 7)), b)
    Jd = jacobians.sparse_jacobian(x_of, d)
    np.testing.assert_allclose(Jd.toarray(), numerical_jacobian(x_of, d), atol=1e-7)
    first = blocks.indptr[3]                     # the first block's stored values
    assert Jd[:3, first:].nnz == 0 and Jd[3:, :first].nnz == 0


def test_hessian_through_a_sparse_product():
    """f(u) = ½ uᵀ A u + Σ u⁴: H = (A + Aᵀ)/2 + diag(12 u²), detected through the VJP."""
    A = lap2d(3)
    u = np.linspace(-1, 1, 9)
    H = jacobians.sparse_hessian(lambda u: 0.5 * u @ (A @ u) + (u ** 4).sum(), u)
    np.testing.assert_allclose(H.toarray(), A.toarray() + np.diag(12 * u ** 2), atol=1e-12)
