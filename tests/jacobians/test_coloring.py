"""Colorings: valid, optimal on banded patterns, fewest over the orderings."""
import numpy as np
import pytest
import scipy.sparse as sp

from jacobians import coloring
from jacobians.coloring import (ORDERINGS, column_coloring, is_column_coloring, row_coloring,
                                star_coloring, star_recoverable)


def banded(m, n, lower, upper):
    return sp.diags([np.ones(max(m, n))] * (lower + upper + 1), list(range(-lower, upper + 1)),
                    shape=(m, n), format="csr").astype(bool)


@pytest.mark.parametrize("k", [0, 1, 2, 3, 5])
def test_banded_patterns_get_the_optimal_2k_plus_1_colors(k):
    p = banded(40, 40, k, k)
    for c in (column_coloring(p), row_coloring(p)):
        assert c.ncolors == 2 * k + 1 and c.optimal
    assert column_coloring(banded(30, 30, 1, 1)).ncolors == 3  # tridiagonal


@pytest.mark.parametrize("k", [1, 2, 3])
def test_every_greedy_ordering_is_optimal_on_bands(k):
    p = banded(40, 40, k, k).tocsc().astype(np.int8)
    graph = (p.T @ p).tocsr()
    graph.setdiag(0)
    graph.eliminate_zeros()
    for name in ORDERINGS:
        order = coloring._ordering(name, graph.indptr, graph.indices)
        assert sorted(order.tolist()) == list(range(40))
        colors = coloring.greedy(graph.indptr, graph.indices, order)
        assert colors.max() + 1 == 2 * k + 1, name


def test_unsymmetric_band():
    p = banded(25, 25, 1, 3)
    c = column_coloring(p)
    assert c.ncolors == 5 and is_column_coloring(p, c.colors)


@pytest.mark.parametrize("seed", range(6))
def test_random_patterns_are_validly_colored_with_the_fewest_tried(seed):
    p = sp.random(60, 45, density=0.07, random_state=seed, format="csr") != 0
    c = column_coloring(p)
    assert is_column_coloring(p, c.colors)
    assert c.ncolors >= c.lower_bound
    assert c.ncolors == min(c.tried.values())
    r = row_coloring(p)
    assert is_column_coloring(p.T, r.colors)


def test_largest_first_and_smallest_last_are_tried_and_can_win():
    wins = set()
    for seed in range(20):
        p = sp.random(50, 50, density=0.06, random_state=seed, format="csr") != 0
        c = column_coloring(p)
        if len(c.tried) > 1:
            wins.add(c.method)
    assert wins - {"natural", "band"}


@pytest.mark.parametrize("seed", range(6))
def test_star_coloring_allows_direct_recovery(seed):
    a = sp.random(50, 50, density=0.06, random_state=seed, format="csr")
    a = (a + a.T) != 0
    c = star_coloring(a)
    adj = coloring._adjacency(a)
    assert star_recoverable(adj, c.colors)
    coo = adj.tocoo()
    assert np.all(c.colors[coo.row] != c.colors[coo.col])  # a distance-1 coloring


def test_star_coloring_of_an_arrowhead_uses_two_colors():
    a = sp.lil_matrix((30, 30))
    a[0, :] = 1
    a[:, 0] = 1
    a.setdiag(1)
    assert star_coloring(a.tocsr()).ncolors == 2


def test_star_coloring_of_a_path_uses_three():
    assert star_coloring(banded(20, 20, 1, 1)).ncolors == 3


def test_seed_matrix():
    c = column_coloring(banded(6, 6, 1, 1))
    s = c.seed()
    assert s.shape == (3, 6) and np.array_equal(s.sum(axis=0), np.ones(6))
