"""The acyclic bicoloring (jacobians/acyclic_bicoloring.py): forward and reverse sweeps
whose entries are recovered by substitution along the two-colored trees of the
bipartite graph, taken where it needs fewer directions than the star bicoloring."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import dualad
from dualad import jacobians
from dualad.jacobians.acyclic_bicoloring import (AcyclicBicoloring, acyclic_bicoloring,
                                                 bicoloring)
from dualad.jacobians.bicoloring import star_bicoloring

rng = np.random.default_rng(7)


def _products(b, J):
    """J S_f and S_rᵀ J for the bicoloring ``b`` (the two sweeps, as matrices)."""
    fwd = J @ np.asarray(b.forward_seed()) if b.ncolors_forward else np.zeros((J.shape[0], 0))
    rev = np.asarray(b.reverse_seed()).T @ J if b.ncolors_reverse else \
        np.zeros((0, J.shape[1]))
    return fwd, rev


def _values(pattern, seed=0):
    p = sp.csr_matrix(pattern, dtype=bool)
    p.sort_indices()
    values = np.random.default_rng(seed).standard_normal(p.nnz)
    return p, sp.csr_matrix((values, p.indices, p.indptr), shape=p.shape)


@settings(derandomize=True, max_examples=40, deadline=None)
@given(m=st.integers(1, 40), n=st.integers(1, 40), density=st.floats(0.02, 0.4),
       seed=st.integers(0, 10_000), dense_row=st.booleans())
def test_substitution_recovers_every_entry_of_random_patterns(m, n, density, seed, dense_row):
    p = sp.random(m, n, density=density, random_state=seed, format="lil")
    if dense_row:
        p[0, :] = 1.0
    p, J = _values(p, seed)
    b = acyclic_bicoloring(p)
    assert b.ncolors == b.ncolors_forward + b.ncolors_reverse
    got = b.decompress(p, *_products(b, J))
    assert np.array_equal(got.indices, J.indices) and np.array_equal(got.indptr, J.indptr)
    np.testing.assert_allclose(got.toarray(), J.toarray(), rtol=1e-12, atol=1e-12)


def test_fewer_directions_than_the_star_bicoloring_on_a_random_pattern():
    p, J = _values(sp.random(300, 300, density=0.01, random_state=3) + sp.eye(300))
    star, acyclic = star_bicoloring(p), acyclic_bicoloring(p)
    assert acyclic.ncolors < star.ncolors            # measured: 10 against 12
    chosen = bicoloring(p)
    assert isinstance(chosen, AcyclicBicoloring)
    assert chosen.tried == {"star": star.ncolors, "acyclic": acyclic.ncolors}
    np.testing.assert_allclose(chosen.decompress(p, *_products(chosen, J)).toarray(),
                               J.toarray(), rtol=1e-12, atol=1e-12)


def test_ties_and_optimal_star_bicolorings_stay_star():
    arrow = np.eye(40, dtype=bool)
    arrow[0, :] = arrow[:, 0] = True
    b = bicoloring(arrow)                      # the star 2 + 1 is optimal: no acyclic pass
    assert not isinstance(b, AcyclicBicoloring) and b.ncolors == 3
    assert isinstance(bicoloring(arrow, "acyclic"), AcyclicBicoloring)
    with pytest.raises(ValueError, match="kind='cyclic' is not one of"):
        bicoloring(arrow, "cyclic")
    with pytest.raises(ValueError, match="no entry directly"):
        acyclic_bicoloring(arrow).positions(sp.csr_matrix(arrow))


A = (sp.random(300, 300, density=0.01, random_state=3) + sp.eye(300)).tocsr()


def sparse_model(x):
    return A @ (x ** 2) + np.sin(x)


def test_sparse_jacobian_bidirectional_uses_it_and_equals_the_dense_jacobian():
    x = rng.standard_normal(300)
    J = jacobians.sparse_jacobian(sparse_model, x, mode="bidirectional")
    np.testing.assert_allclose(J.toarray(), jacobians.jacfwd(sparse_model, x), rtol=1e-12,
                               atol=1e-12)
    p = jacobians.plan(sparse_model, x, mode="bidirectional", output="sparse")
    assert isinstance(p.bicoloring, AcyclicBicoloring)
    assert "by acyclic" in p.explain()
    y = rng.standard_normal(300)                 # the prepared plan at a new point
    np.testing.assert_allclose(p(y).toarray(), jacobians.jacfwd(sparse_model, y),
                               rtol=1e-12, atol=1e-12)


def test_traced_values_take_the_star_bicoloring_whose_reads_are_gathers():
    x = rng.standard_normal(300)

    def total(x):
        return jacobians.sparse_jacobian(sparse_model, x, mode="bidirectional").sum()
    g = dualad.grad(lambda x: jacobians.jacfwd(sparse_model, x).sum())(x)
    np.testing.assert_allclose(dualad.grad(total)(x), g, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
def test_float32_and_complex_inputs(dtype):
    x = rng.standard_normal(300).astype(dtype)
    if np.iscomplexobj(x):
        x = x + 0.3j * rng.standard_normal(300)
    J = jacobians.sparse_jacobian(sparse_model, x, mode="bidirectional")
    ref = jacobians.jacfwd(sparse_model, x)
    tol = 1e-4 if dtype == np.float32 else 1e-12
    assert J.dtype == ref.dtype
    np.testing.assert_allclose(J.toarray(), ref, rtol=tol, atol=tol)
