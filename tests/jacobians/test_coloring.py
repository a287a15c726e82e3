"""Colorings: valid, optimal on banded patterns and 5-point stencils, never worse than the
greedy, within their work budget."""
import random

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from dualad.jacobians import coloring, coloring_search
from dualad.jacobians.coloring import (ORDERINGS, column_coloring, is_column_coloring,
                                is_star_coloring, row_coloring, star_coloring, star_recoverable)


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
        c = column_coloring(p, budget=0)      # the greedy orderings only
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


# --- the search past the greedy ------------------------------------------------------------------
def five_point(rows, cols=None):
    """The 5-point stencil pattern of a rows x cols grid (row-major)."""
    cols = cols or rows
    path = lambda k: sp.diags([1.0, 1.0, 1.0], [-1, 0, 1], shape=(k, k))  # noqa: E731
    return (sp.kron(sp.identity(rows), path(cols)) + sp.kron(path(rows), sp.identity(cols))
            ).tocsr() != 0


def brute_force_star(adj, colors):
    """Proper, and no path a-b-c-d (distinct vertices) colored x, y, x, y: by enumeration."""
    nb = [set(adj.indices[adj.indptr[v]:adj.indptr[v + 1]]) for v in range(adj.shape[0])]
    for b in range(len(nb)):
        for c in nb[b]:
            if colors[b] == colors[c]:
                return False
            for a in nb[b] - {c}:
                for d in nb[c] - {b, a}:
                    if colors[a] == colors[c] and colors[b] == colors[d]:
                        return False
    return True


@pytest.fixture(autouse=True)
def no_cache():
    coloring._CACHE.clear()   # each test pays for its own colorings


@pytest.mark.parametrize("rows,cols", [(4, 4), (5, 5), (6, 9), (8, 8), (12, 12), (16, 16),
                                       (30, 30)])
def test_five_point_stencil_columns_get_the_optimal_5(rows, cols):
    """ρ = 5 at an interior point; greedy orderings alone find 6 or 7."""
    p = five_point(rows, cols)
    for c in (column_coloring(p), row_coloring(p)):
        assert c.ncolors == 5 and c.optimal and c.lower_bound == 5
        assert is_column_coloring(p, c.colors) and is_column_coloring(p.T, c.colors)
    greedy_only = column_coloring(p, budget=0)
    assert greedy_only.ncolors >= 5 and \
        set(greedy_only.tried) <= {"band", "periodic", *ORDERINGS}


@pytest.mark.parametrize("n", [4, 5, 8, 16, 24])
def test_star_coloring_of_grids_uses_the_optimal_5(n):
    """χs(grid) = 5 for n >= 4 (papers/gebremedhin2005.py certifies the lower bound)."""
    p = five_point(n)
    c = star_coloring(p)
    adj = coloring._adjacency(p)
    assert c.ncolors == 5 and is_star_coloring(adj, c.colors) and brute_force_star(adj, c.colors)


@pytest.mark.parametrize("n", [8, 12, 16])
def test_iterated_greedy_and_tabu_search_reach_5_from_the_natural_greedy(n):
    """Not only DSATUR: the local search alone takes the natural greedy (7 colors) to 5."""
    g = coloring._intersection_graph(five_point(n))
    start = coloring_search.greedy(g.indptr, g.indices, np.arange(n * n))
    assert start.max() + 1 == 7
    budget = coloring_search.Budget(10 ** 7)
    colors, stats = coloring_search.reduce_proper(g.indptr, g.indices, start, 5, budget)
    assert colors.max() + 1 == 5 and is_column_coloring(five_point(n), colors)
    assert stats["tabu search"] == 5 and stats["iterations"] > 0
    assert budget.spent < budget.total


def test_star_tabu_search_alone_reaches_5_on_a_grid():
    adj = coloring._adjacency(five_point(10))
    start = coloring._star_greedy(adj.indptr, adj.indices, np.arange(100))
    assert start.max() + 1 == 6
    colors, stats = coloring_search.reduce_star(adj.indptr, adj.indices, start, 5,
                                                coloring_search.Budget(10 ** 7))
    assert colors.max() + 1 == 5 and stats["tabu search"] == 5
    assert is_star_coloring(adj, colors) and brute_force_star(adj, colors)


def random_pattern(m, n, density, seed, symmetric=False):
    p = sp.random(m, n, density=density, random_state=seed, format="csr") != 0
    return ((p + p.T) != 0).tocsr() if symmetric else p


@settings(derandomize=True, max_examples=30, deadline=None)
@given(st.integers(1, 40), st.integers(1, 40), st.floats(0.02, 0.3), st.integers(0, 10 ** 6))
def test_random_column_colorings_are_valid_and_never_worse_than_the_greedy(m, n, density, seed):
    p = random_pattern(m, n, density, seed)
    c = column_coloring(p, budget=100_000)
    greedy_only = column_coloring(p, budget=0)
    assert is_column_coloring(p, c.colors)
    assert c.lower_bound <= c.ncolors <= greedy_only.ncolors
    assert c.tried[c.method] == c.ncolors == min(c.tried.values())
    assert c.effort["spent"] <= c.effort["budget"] == 100_000


@settings(derandomize=True, max_examples=30, deadline=None)
@given(st.integers(1, 40), st.floats(0.02, 0.3), st.integers(0, 10 ** 6))
def test_random_star_colorings_are_valid_and_never_worse_than_the_greedy(n, density, seed):
    p = random_pattern(n, n, density, seed, symmetric=True)
    adj = coloring._adjacency(p)
    c = star_coloring(p, budget=100_000)
    greedy_only = star_coloring(p, budget=0)
    assert is_star_coloring(adj, c.colors) and brute_force_star(adj, c.colors)
    assert c.lower_bound <= c.ncolors <= greedy_only.ncolors
    assert c.tried.get(c.method, c.ncolors) == c.ncolors == min(c.tried.values(), default=1)
    assert c.effort["spent"] <= c.effort["budget"] == 100_000


def test_the_search_beats_the_greedy_on_random_patterns():
    col_wins = star_wins = 0
    for seed in range(4):
        p = random_pattern(120, 120, 0.04, seed)
        col_wins += column_coloring(p).ncolors < column_coloring(p, budget=0).ncolors
        s = random_pattern(60, 60, 0.05, seed, symmetric=True)
        star_wins += star_coloring(s).ncolors < star_coloring(s, budget=0).ncolors
    assert col_wins >= 1 and star_wins >= 2


@pytest.mark.parametrize("k", [1, 2, 3])
def test_bands_meet_the_lower_bound_before_any_search(k):
    """Tridiagonal and banded: the band coloring is optimal; the search never starts."""
    p = banded(20000 if k == 1 else 500, 20000 if k == 1 else 500, k, k)
    c = column_coloring(p)
    assert c.ncolors == 2 * k + 1 and c.tried == {"band": 2 * k + 1}
    assert c.effort["spent"] == 0 and c.effort["iterations"] == 0
    s = star_coloring(banded(20000, 20000, 1, 1))
    assert s.ncolors == 3 == s.lower_bound and s.tried == {"band": 3} and s.effort["spent"] == 0


def test_the_search_stops_at_the_lower_bound():
    p = five_point(16)
    c = column_coloring(p)
    assert c.method == "dsatur" and "tabu search" not in c.tried and c.effort["iterations"] == 0


@pytest.mark.parametrize("budget", [0, 1, 5_000, 50_000, 400_000])
def test_the_budget_is_never_exceeded(budget):
    p = random_pattern(80, 80, 0.05, 3)
    for c in (column_coloring(p, budget=budget), star_coloring(p + p.T, budget=budget)):
        assert c.effort["budget"] == budget and c.effort["spent"] <= budget
        if budget == 0:
            assert set(c.tried) <= {"band", *ORDERINGS} and c.method in c.tried


def test_tabu_search_gives_up_after_its_patience():
    """Four colors for the stencil's column graph (it needs 5): the attempt fails, after at
    most ``patience`` iterations without fewer conflicts, spending no more than its budget."""
    g = coloring._intersection_graph(five_point(8))
    start = coloring_search.dsatur(g.indptr, g.indices)
    budget = coloring_search.Budget(10 ** 8)
    found, iterations = coloring_search.tabu_proper(g.indptr, g.indices, start, 4, budget,
                                                    random.Random(0), patience=50)
    assert found is None and 50 <= iterations < 10 ** 4
    small = coloring_search.Budget(30_000)
    found, _ = coloring_search.tabu_proper(g.indptr, g.indices, start, 4, small,
                                           random.Random(0), patience=10 ** 6)
    assert found is None and small.spent <= small.total


def test_colorings_are_deterministic_and_cached_copies():
    p = random_pattern(60, 60, 0.05, 1)
    a = star_coloring(p + p.T)
    coloring._CACHE.clear()
    b = star_coloring(p + p.T)
    assert np.array_equal(a.colors, b.colors) and a.tried == b.tried
    b.colors[:] = 0                                   # a caller's copy, not the cache's
    assert np.array_equal(star_coloring(p + p.T).colors, a.colors)


def test_budget_takes_only_what_is_left():
    b = coloring_search.Budget(10)
    assert b.take(4) and b.take(6) and not b.take(1) and b.spent == 10 and b.left == 0


def test_dsatur_colors_odd_cycles_and_bipartite_graphs_optimally():
    cycle = sp.diags([1.0, 1.0], [-1, 1], shape=(7, 7), format="lil")
    cycle[0, 6] = cycle[6, 0] = 1
    cycle = cycle.tocsr()
    assert coloring_search.dsatur(cycle.indptr, cycle.indices).max() + 1 == 3
    crown = sp.csr_matrix(np.kron([[0, 1], [1, 0]], 1 - np.eye(6)))   # bipartite, greedy-hard
    colors = coloring_search.dsatur(crown.indptr, crown.indices)
    assert colors.max() + 1 == 2 and np.all(colors[crown.tocoo().row] != colors[crown.tocoo().col])


def test_the_plan_explains_which_heuristic_won():
    from dualad import jacobians

    def residual(u):                     # the 5-point Laplacian, zero outside, plus u³
        z = np.pad(u, 1)
        return (4 * u - z[:-2, 1:-1] - z[2:, 1:-1] - z[1:-1, :-2] - z[1:-1, 2:] + u ** 3).ravel()
    u = np.linspace(0, 1, 64).reshape(8, 8)
    text = jacobians.plan(residual, u, mode="sparse-forward").explain()
    line = next(ln for ln in text.splitlines() if ln.startswith("Coloring of columns"))
    # j mod 5 is valid on the 8 x 8 stencil (offsets 0, ±1, ±8 stay apart mod 5): the
    # periodic candidate meets the bound before any greedy pass or search runs
    assert "5 colors by periodic (lower bound 5, optimal; tried: periodic 5)" in line


def test_one_color_is_singular_in_the_repr_and_the_plan():
    import scipy.sparse as sp
    from dualad import jacobians
    assert repr(jacobians.column_coloring(sp.csr_matrix(np.ones((3, 1))))).startswith(
        "Coloring(1 color by")
    p = jacobians.plan(lambda x: x * 2.0, np.ones(1))
    assert "1 direction in" in repr(p) and "— 1 direction in" in p.explain()
