"""Dense and nearly dense patterns: colored one color per column without building the
column intersection graph, and the graph itself built by a dense product when cheaper."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from dualad.jacobians import coloring
from dualad.jacobians.coloring import column_coloring, is_column_coloring, row_coloring


def _no_graph(pattern):
    raise AssertionError("the intersection graph was built")


@pytest.fixture
def no_graph(monkeypatch):
    monkeypatch.setattr(coloring, "_intersection_graph", _no_graph)
    coloring._CACHE.clear()


def test_a_dense_pattern_is_colored_trivially_without_the_graph(no_graph):
    p = np.ones((2000, 2000), bool)
    for c in (column_coloring(p), row_coloring(p)):
        assert c.ncolors == 2000 and c.optimal and c.method == "dense"
        assert c.tried == {"dense": 2000} and c.effort["spent"] == 0
        assert np.array_equal(c.colors, np.arange(2000))


def test_one_full_row_is_enough(no_graph):
    p = sp.random(300, 200, density=0.01, random_state=0, format="lil") != 0
    p = sp.lil_matrix(p)
    p[17, :] = True
    c = column_coloring(p)
    assert c.ncolors == 200 and c.optimal and c.method == "dense"
    assert is_column_coloring(sp.csr_matrix(p), c.colors)


def test_nearly_dense_empty_columns_share_a_color(no_graph):
    rng = np.random.default_rng(1)
    p = rng.random((200, 400)) < 0.97
    p[:, [3, 200, 399]] = False
    csr = sp.csr_matrix(p)
    assert np.diff(csr.indptr).max() < 400
    c = column_coloring(csr)
    assert c.method == "dense" and c.ncolors == 397 and not c.optimal
    assert c.lower_bound == np.diff(csr.indptr).max()
    assert c.colors[3] == c.colors[200] == c.colors[399] == 0
    assert is_column_coloring(csr, c.colors)


def test_a_small_nearly_dense_pattern_is_still_searched():
    p = np.ones((6, 10), bool)
    p[:, 0] = False
    p[0, 0] = p[1, 1] = True
    p[1, 0] = False
    p[0, 1] = False              # rows 0 and 1 hold 9 of the 10 columns: under DENSE_WORK
    coloring._CACHE.clear()
    c = column_coloring(p)
    assert c.method != "dense" and is_column_coloring(sp.csr_matrix(p), c.colors)


def test_a_complete_intersection_graph_stops_after_the_graph():
    p = sp.random(400, 300, density=0.3, random_state=2, format="csr") != 0
    coloring._CACHE.clear()
    c = column_coloring(p)
    assert c.method == "dense" and c.ncolors == 300 and c.lower_bound == 300 and c.optimal
    assert c.tried == {"dense": 300}


@settings(derandomize=True, max_examples=25, deadline=None)
@given(st.integers(1, 30), st.integers(1, 30), st.floats(0.0, 0.9), st.integers(0, 10 ** 6))
def test_the_dense_product_builds_the_same_graph(m, n, density, seed):
    p = sp.random(m, n, density=density, random_state=seed, format="csr") != 0
    p = sp.csr_matrix(p)
    old = coloring.BLAS_SPEEDUP
    try:
        coloring.BLAS_SPEEDUP = 0                  # never the dense product
        sparse_way = coloring._intersection_graph(p)
        coloring.BLAS_SPEEDUP = 10 ** 12           # always, when any row has an entry
        dense_way = coloring._intersection_graph(p)
    finally:
        coloring.BLAS_SPEEDUP = old
    assert sparse_way.has_sorted_indices and dense_way.has_sorted_indices
    assert np.array_equal(sparse_way.indptr, dense_way.indptr)     # the same edges
    assert np.array_equal(sparse_way.indices, dense_way.indices)
    assert not sparse_way.diagonal().any() and not dense_way.diagonal().any()


@pytest.mark.parametrize("speedup", [0, coloring.BLAS_SPEEDUP])
def test_columns_sharing_256_rows_stay_adjacent(monkeypatch, speedup):
    # an int8 count of the shared rows wrapped to 0 and dropped the edge: columns 0 and 2
    # got one color though 256 rows hold both
    monkeypatch.setattr(coloring, "BLAS_SPEEDUP", speedup)
    coloring._CACHE.clear()
    p = np.zeros((513, 3), bool)
    p[:512, 0] = p[:512, 2] = True
    p[512, 1] = True
    graph = coloring._intersection_graph(sp.csr_matrix(p))
    assert graph[0, 2] and graph[2, 0] and graph.nnz == 2
    c = column_coloring(p)
    assert is_column_coloring(sp.csr_matrix(p), c.colors) and c.ncolors == 2


def test_a_dense_hessian_pattern_gets_one_color_per_vertex():
    # the star greedy's O(n d³) loops took ~36 s on a dense 100 x 100 pattern
    coloring._CACHE.clear()
    c = coloring.star_coloring(np.ones((400, 400), bool))
    assert c.method == "dense" and c.ncolors == 400 and c.lower_bound == 400 and c.optimal


def test_a_nearly_complete_graph_is_colored_trivially_only_when_costly():
    rng = np.random.default_rng(4)
    upper = np.triu(rng.random((300, 300)) < 0.98, 1)
    p = upper | upper.T
    adj = coloring._adjacency(p)
    assert np.diff(adj.indptr).min() >= 0.9 * 299
    coloring._CACHE.clear()
    c = coloring.star_coloring(p)
    assert c.method == "dense" and c.ncolors == 300 and not c.optimal
    assert coloring.is_star_coloring(adj, c.colors)
    small = np.ones((6, 6), bool)
    small[0, 1] = small[1, 0] = False
    coloring._CACHE.clear()
    s = coloring.star_coloring(small)
    assert s.method != "dense" and s.ncolors == 5
    assert coloring.is_star_coloring(coloring._adjacency(small), s.colors)
