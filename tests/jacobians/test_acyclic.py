"""Acyclic coloring and recovery of sparse Hessians by substitution (issue 35).

Every two-colored subgraph of an acyclic coloring is a forest; the Hessian's entries are
recovered leaves first along each tree. Checked here: the coloring is acyclic on random
patterns, its lower bound is sound (exhaustively, on small graphs), it needs fewer
colors than the star coloring where the literature says so (bands, grids), the
recovered Hessian equals the dense one, and the planner takes it where it wins."""
import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import dualad
from dualad import jacobians
from dualad.jacobians._common import Problem
from dualad.jacobians.acyclic import (Trees, acyclic_coloring, acyclic_lower_bound,
                                      decompress_acyclic, hessian_coloring,
                                      is_acyclic_coloring, tree_structure)
from dualad.jacobians.coloring import is_star_coloring, star_coloring
from dualad.jacobians.sparsity import detect_hessian
from dualad.jacobians.validity import CheckedPattern
from sweep_counting import directions  # noqa: F401  (a fixture)

rng = np.random.default_rng(35)


def band(n, half):
    offsets = range(-half, half + 1)
    return sp.diags([np.ones(n - abs(k)) for k in offsets], list(offsets), shape=(n, n),
                    format="csr")


def grid(*sides):
    """The 5-point (2-D) or 7-point (3-D) stencil's pattern: a Kronecker sum of paths."""
    out = sp.csr_matrix((1, 1))
    for m in sides:
        out = sp.kron(out, sp.identity(m)) + sp.kron(sp.identity(out.shape[0]), band(m, 1))
    return ((out + sp.identity(out.shape[0])) != 0).tocsr()


def random_symmetric(n, density, seed):
    a = sp.random(n, n, density=density, random_state=seed, format="csr")
    return ((a + a.T + sp.identity(n)) != 0).tocsr()


def values_on(pattern, seed=0, spread=0.0):
    """A symmetric matrix with ``pattern``'s entries, random values (magnitudes 10^±spread)."""
    g = np.random.default_rng(seed)
    upper = sp.triu(pattern, format="csr").astype(float)
    upper.data = g.standard_normal(upper.nnz) * 10.0 ** g.uniform(-spread, spread, upper.nnz)
    return (upper + sp.triu(upper, k=1).T).tocsr()


def recovered(pattern, coloring, h):
    compressed = (h @ coloring.seed(h.dtype).T).T    # (H S)ᵀ, c x n
    return decompress_acyclic(pattern, coloring, compressed)


def adjacency(pattern):
    a = ((pattern + pattern.T) != 0).tocsr().astype(np.int8)
    a.setdiag(0)
    a.eliminate_zeros()
    return a


# --- the coloring ---------------------------------------------------------------------------------
def test_is_acyclic_coloring_rejects_a_two_colored_cycle_and_a_clash():
    square = sp.csr_matrix(np.array([[0, 1, 0, 1], [1, 0, 1, 0], [0, 1, 0, 1], [1, 0, 1, 0]]))
    assert not is_acyclic_coloring(square, np.array([0, 1, 0, 1]))   # a 2-colored 4-cycle
    assert is_acyclic_coloring(square, np.array([0, 1, 0, 2]))
    assert not is_acyclic_coloring(square, np.array([0, 0, 1, 2]))   # neighbours clash
    path = band(6, 1)
    assert is_acyclic_coloring(path, np.arange(6) % 2)               # a path is a tree
    assert not is_star_coloring(adjacency(path), np.arange(6) % 2)   # but not a star


@settings(derandomize=True, max_examples=60, deadline=None)
@given(n=st.integers(1, 40), density=st.floats(0.0, 0.3), seed=st.integers(0, 10**6))
def test_random_patterns_are_colored_acyclically_and_recovered(n, density, seed):
    pattern = random_symmetric(n, density, seed)
    c = acyclic_coloring(pattern)
    assert is_acyclic_coloring(pattern, c.colors)
    assert c.lower_bound <= c.ncolors
    assert c.method.startswith("acyclic")
    h = values_on(pattern, seed)
    got = recovered(pattern, c, h)
    assert (got != got.T).nnz == 0
    assert got.nnz == pattern.nnz
    np.testing.assert_allclose(got.toarray(), h.toarray(), rtol=1e-12, atol=1e-12)


def brute_force_acyclic_number(adj):
    n = adj.shape[0]
    for k in range(1, n + 1):
        for colors in itertools.product(range(k), repeat=n):
            if colors[0] == 0 and is_acyclic_coloring(adj, np.array(colors)):
                return k
    return n


@settings(derandomize=True, max_examples=25, deadline=None)
@given(n=st.integers(2, 5), density=st.floats(0.2, 0.9), seed=st.integers(0, 10**6))
def test_the_lower_bound_never_exceeds_the_acyclic_chromatic_number(n, density, seed):
    adj = adjacency(random_symmetric(n, density, seed))
    assert acyclic_lower_bound(adj) <= brute_force_acyclic_number(adj)


def test_the_lower_bound_on_known_graphs():
    assert acyclic_lower_bound(band(30, 1)) == 2          # a path: a forest
    assert acyclic_lower_bound(band(30, 3)) == 4          # a full band: β + 1
    assert acyclic_lower_bound(grid(8, 8)) == 3           # has cycles
    assert acyclic_lower_bound(sp.csr_matrix((5, 5))) == 1
    assert acyclic_lower_bound(band(6, 5)) == 6   # K6


@pytest.mark.parametrize("half", [1, 2, 3, 5])
def test_a_band_needs_half_bandwidth_plus_one_where_star_needs_more(half):
    pattern = band(200, half)
    a, s = acyclic_coloring(pattern), star_coloring(pattern)
    assert a.ncolors == half + 1 == a.lower_bound and a.optimal
    assert s.ncolors > a.ncolors
    chosen, why = hessian_coloring(pattern)
    assert chosen.ncolors == half + 1 and "acyclic" in why and str(s.ncolors) in why


def test_grids_need_fewer_acyclic_colors_than_star_colors():
    """The 5-point grid: star chromatic number 5, acyclic 3 (the greedy finds 4); the 7-point
    grid: star 7 (after the search), acyclic 5 by the greedy (lower bound 4)."""
    for sides, acyclic_most, star_least in [((12, 12), 4, 5), ((6, 6, 6), 5, 7)]:
        pattern = grid(*sides)
        a, s = acyclic_coloring(pattern), star_coloring(pattern)
        assert is_acyclic_coloring(pattern, a.colors)
        assert a.ncolors <= acyclic_most < star_least <= s.ncolors
        assert a.lower_bound == len(sides) + 1


def test_a_star_forest_ties_and_keeps_the_star_coloring():
    arrow = sp.lil_matrix((8, 8))
    arrow[0, :] = 1
    arrow[:, 0] = 1
    arrow.setdiag(1)
    chosen, why = hessian_coloring(arrow.tocsr())
    assert not hasattr(chosen, "kind") and chosen.ncolors == 2 and "star" in why


# --- substitution ---------------------------------------------------------------------------------
def leaves_first_loop(pattern, colors, h):
    """The textbook substitution, one leaf at a time (an independent oracle for Trees)."""
    b = h @ np.eye(int(colors.max()) + 1)[colors]       # H S, n x c
    adj = adjacency(pattern).tolil()
    out, nb = {}, [set(r) for r in adj.rows]
    remaining = {frozenset((i, j)) for i in range(len(colors)) for j in nb[i]}
    while remaining:
        for e in list(remaining):
            i, j = tuple(e)
            for leaf, other in ((i, j), (j, i)):
                tree = [u for u in nb[leaf] if colors[u] == colors[other]]
                if tree == [other]:
                    out[e] = b[leaf, colors[other]]
                    b[other, colors[leaf]] -= out[e]
                    nb[leaf].discard(other)
                    nb[other].discard(leaf)
                    remaining.discard(e)
                    break
    return out


def test_trees_solve_is_the_leaves_first_substitution():
    pattern = grid(5, 5)
    c = acyclic_coloring(pattern)
    h = values_on(pattern, 3).toarray()
    want = leaves_first_loop(pattern, c.colors, h)
    got = recovered(pattern, c, sp.csr_matrix(h)).toarray()
    for e, value in want.items():
        i, j = tuple(e)
        assert got[i, j] == pytest.approx(value, rel=1e-13, abs=1e-13) == pytest.approx(h[i, j])


def test_trees_of_a_path_are_one_tree_rooted_at_its_center():
    trees = tree_structure(band(9, 1), np.arange(9) % 2)
    assert isinstance(trees, Trees) and trees.ntrees == 1 and trees.depth == 4
    assert sorted(trees.subtree_sizes().astype(int)) == [1, 1, 2, 2, 3, 3, 4, 4]
    edges = zip(trees.child.tolist(), trees.parent.tolist())
    assert {frozenset(e) for e in edges} == {frozenset((i, i + 1)) for i in range(8)}
    assert 4 in trees.parent and 4 not in trees.child      # the root: vertex 4


@settings(derandomize=True, max_examples=30, deadline=None)
@given(n=st.integers(2, 60), seed=st.integers(0, 10**6))
def test_no_chain_is_longer_than_the_radius_of_its_tree(n, seed):
    """A random tree (each vertex joined to an earlier one), 2-colored by depth parity:
    one two-colored tree, rooted at a center, so depth = ceil(diameter / 2)."""
    g = np.random.default_rng(seed)
    up = np.array([g.integers(0, v) for v in range(1, n)], np.int64)
    adj = sp.coo_matrix((np.ones(n - 1), (np.arange(1, n), up)), shape=(n, n)).tocsr()
    adj = adj + adj.T
    dist = sp.csgraph.shortest_path(adj, unweighted=True)
    level = dist[0].astype(int)
    trees = tree_structure(adj, level % 2)
    assert trees.ntrees == 1
    assert trees.depth == -(-int(dist.max()) // 2)


def test_accumulated_magnitudes_bound_the_recovered_values():
    pattern = grid(6, 6)
    c = acyclic_coloring(pattern)
    h = values_on(pattern, 4, spread=3)
    recovery_values = recovered(pattern, c, h)
    trees = c.recovery.trees
    b = (h @ c.seed().T)[trees.child, c.colors[trees.parent]]
    s = trees.accumulated(b)
    assert np.all(np.abs(np.asarray(recovery_values[trees.child, trees.parent]).ravel())
                  <= s * (1 + 1e-12))
    assert np.all(s >= np.abs(b))


def test_a_coloring_with_a_two_colored_cycle_is_refused():
    pattern = grid(3, 3)
    bad = star_coloring(band(9, 1))      # a proper 3-coloring of the path, not of the grid
    bad.colors = np.array([0, 1, 0, 1, 0, 1, 0, 1, 0])
    with pytest.raises(ValueError, match="not acyclic"):
        decompress_acyclic(pattern, bad, np.zeros((2, 9)))


def test_repeat_decompression_reuses_the_trees():
    pattern = band(50, 2)
    c = acyclic_coloring(pattern)
    h = values_on(pattern, 1)
    recovered(pattern, c, h)
    kept = c.recovery
    np.testing.assert_allclose(recovered(pattern, c, 2 * h).toarray(), 2 * h.toarray(),
                               rtol=1e-12, atol=1e-12)
    assert c.recovery is kept


@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
def test_substitution_keeps_the_dtype(dtype):
    pattern = band(40, 2)
    c = acyclic_coloring(pattern)
    h = values_on(pattern, 2).astype(dtype)
    if dtype == np.complex128:
        h = h + 1j * values_on(pattern, 5)
    got = recovered(pattern, c, h)
    assert got.dtype == dtype
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got.toarray(), h.toarray(), rtol=tol, atol=tol)


# --- the planner ----------------------------------------------------------------------------------
def banded_loss(x):
    """A Hessian of half-bandwidth 2: star 5 colors, acyclic 3."""
    return np.sum(np.sin(x[2:] * x[:-2]) + (x[1:-1] - x[:-2]) ** 2 * x[2:]) + np.sum(x ** 4)




@pytest.mark.parametrize("coloring, colors", [("auto", 3), ("acyclic", 3), ("star", 5)])
def test_sparse_hessian_takes_the_acyclic_coloring_where_it_wins(coloring, colors, directions):
    x = rng.uniform(0.5, 1.5, 60)
    H = jacobians.sparse_hessian(banded_loss, x, coloring=coloring)
    assert sum(directions) == colors
    dense = jacobians.hessian(banded_loss, x, mode="forward-over-reverse")
    np.testing.assert_allclose(H.toarray(), dense, rtol=1e-12, atol=1e-12)
    assert (H != H.T).nnz == 0


def test_hessian_auto_takes_the_acyclic_coloring_and_says_so(directions):
    from dualad.jacobians.auto import _CHOICES
    x = rng.uniform(0.5, 1.5, 3000)
    H = jacobians.hessian(banded_loss, x)
    assert sum(directions) <= 3
    np.testing.assert_allclose(H, jacobians.sparse_hessian(banded_loss, x, coloring="star")
                               .toarray(), rtol=1e-12, atol=1e-12)
    assert np.array_equal(H, H.T)
    whys = [c.why for c in _CHOICES._by_fun[banded_loss].values()]
    assert any("acyclic coloring, 3 colors against 5 star colors" in w for w in whys)


def test_several_arguments():
    x, y = rng.uniform(0.5, 1.5, 20), rng.uniform(0.5, 1.5, 20)

    def two(x, y):
        return np.sum(x[1:] * x[:-1] * y[1:]) + np.sum(np.cos(y[:-1] * y[1:]))
    dense = jacobians.hessian(two, x, y, argnums=(0, 1), mode="forward-over-reverse")
    flat = np.block([[dense[0][0], dense[0][1]], [dense[1][0], dense[1][1]]])
    for c in ("acyclic", "star"):
        H = jacobians.sparse_hessian(two, x, y, argnums=(0, 1), coloring=c)
        np.testing.assert_allclose(H.toarray(), flat, rtol=1e-12, atol=1e-12)


def test_float32_inputs():
    x = rng.uniform(0.5, 1.5, 30).astype(np.float32)
    got = jacobians.sparse_hessian(banded_loss, x, coloring="acyclic")
    want = jacobians.sparse_hessian(banded_loss, x, coloring="star")
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got.toarray(), want.toarray(), rtol=1e-4, atol=1e-4)


def test_an_unknown_coloring_is_refused_naming_the_function():
    with pytest.raises(ValueError, match=r"sparse_hessian\(banded_loss\): coloring='cyclic'"):
        jacobians.sparse_hessian(banded_loss, coloring="cyclic")


def test_a_checked_pattern_with_an_acyclic_coloring_follows_the_decisions():
    def branchy(x):
        if x[0] > 1.0:                                        # a wider band past x[0] = 1
            return banded_loss(x) + np.sum((x[3:] * x[:-3]) ** 2)
        return banded_loss(x)
    x = np.linspace(0.2, 0.9, 16)
    sparsity = detect_hessian(Problem("hessian", branchy, (x,)))
    coloring = hessian_coloring(sparsity.pattern)[0]
    assert coloring.method.startswith("acyclic")
    checked = CheckedPattern("hessian", sparsity, coloring)
    for point in (x + 0.01, x + 1.0, x - 0.1):
        got = checked.evaluate(Problem("hessian", branchy, (point,)), 4)[0]
        want = jacobians.hessian(branchy, point, mode="forward-over-reverse")
        np.testing.assert_allclose(got.toarray(), want, rtol=1e-12, atol=1e-12)
    assert checked.redetections == 1


SPREAD = 10.0 ** np.random.default_rng(8).uniform(-8, 8, 79)


def spread_loss(x):
    """A path Hessian whose couplings span 10^±8: substitution would lose digits."""
    return np.sum(SPREAD * (x[1:] * x[:-1]) ** 2) + np.sum(x ** 4)


def test_auto_falls_back_to_the_star_products_where_digits_would_be_lost(directions):
    x = rng.uniform(0.5, 1.5, 80)
    dense = jacobians.hessian(spread_loss, x, mode="forward-over-reverse")
    directions.clear()
    H = jacobians.sparse_hessian(spread_loss, x)          # acyclic 2 colors, then star 3
    assert sum(directions) == 2 + 3
    rel = np.abs(H.toarray() - dense)[dense != 0] / np.abs(dense[dense != 0])
    assert rel.max() < 1e-13
    forced = jacobians.sparse_hessian(spread_loss, x, coloring="acyclic").toarray()
    assert (np.abs(forced - dense)[dense != 0] / np.abs(dense[dense != 0])).max() > 1e-10
    directions.clear()
    jacobians.sparse_hessian(banded_loss, x)               # same magnitudes: no fallback
    assert sum(directions) == 3


def test_after_a_fallback_the_pattern_goes_straight_to_the_star_products(directions):
    x = rng.uniform(0.5, 1.5, 80)
    pattern = jacobians.hessian_sparsity(spread_loss, x)
    jacobians.sparse_hessian(spread_loss, x, sparsity=pattern)
    directions.clear()
    H = jacobians.sparse_hessian(spread_loss, x * 1.1, sparsity=pattern)
    assert sum(directions) == 3
    dense = jacobians.hessian(spread_loss, x * 1.1, mode="forward-over-reverse")
    np.testing.assert_allclose(H.toarray(), dense, rtol=1e-13, atol=0)


def test_under_jit_the_star_coloring_is_used_and_a_bad_coloring_refused():
    x = rng.uniform(0.5, 1.5, 30)
    jitted = dualad.jit(lambda v: jacobians.sparse_hessian(banded_loss, v, coloring="acyclic"))
    np.testing.assert_allclose(jitted(x).toarray(), jacobians.hessian(
        banded_loss, x, mode="forward-over-reverse"), rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="coloring='bad'"):
        dualad.jit(lambda v: jacobians.sparse_hessian(banded_loss, v, coloring="bad"))(x)
