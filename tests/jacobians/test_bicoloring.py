"""Star bicoloring (jacobians/bicoloring.py) and the planner's bidirectional mode.

Every sparse result is compared with the dense Jacobian (jacfwd); every bicoloring is
checked directly (each entry read alone from one of the two compressed products).
"""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import dualad
from dualad import jacobians
from dualad.jacobians.bicoloring import (Bicoloring, bipartite_graph, from_symmetric,
                                         is_star_bicoloring, star_bicoloring)
from dualad.jacobians.coloring import star_coloring


def arrow(x):                   # diagonal + dense first column + dense first row
    y = x ** 2 + x[0]
    return np.concatenate([[np.sum(np.sin(x))], y[1:]])


def arrow_pattern(n):
    p = sp.lil_matrix((n, n), dtype=bool)
    p.setdiag(True)
    p[0, :] = True
    p[:, 0] = True
    return p.tocsr()


def block_arrow(x, block=3, border=2):
    """Diagonal blocks coupled inside each block, every residual reading the first
    ``border`` inputs, and ``border`` dense rows at the end."""
    core = x[border:]
    blocks = core.reshape(-1, block)
    inner = blocks * np.sum(blocks, axis=1, keepdims=True)
    coupled = inner.reshape(-1) + np.sum(x[:border] ** 2)
    dense = np.stack([np.sum(np.cos(x) * (k + 1)) for k in range(border)])
    return np.concatenate([coupled, dense])


def _values(pattern, rng, dtype=float):
    j = sp.csr_matrix(pattern, dtype=dtype)
    j.data = rng.standard_normal(j.nnz).astype(dtype)
    return j


def _decompressed(pattern, bic, jac):
    return bic.decompress(pattern, jac @ bic.forward_seed(), bic.reverse_seed().T @ jac)


# --- the coloring ----------------------------------------------------------------------------
@pytest.mark.parametrize("n", [3, 6, 50, 2000])
def test_arrowhead_needs_two_forward_and_one_reverse_color(n):
    p = arrow_pattern(n)
    b = star_bicoloring(p)
    assert (b.ncolors_forward, b.ncolors_reverse, b.ncolors) == (2, 1, 3)
    assert is_star_bicoloring(p, b)
    assert b.forward_seed().shape == (n, 2) and b.reverse_seed().shape == (n, 1)
    j = _values(p, np.random.default_rng(n))
    assert abs(_decompressed(p, b, j) - j).max() == 0


def test_one_sided_patterns_and_the_bound():
    diag = sp.identity(7, format="csr", dtype=bool)
    b = star_bicoloring(diag)
    assert b.ncolors == 1 == b.lower_bound and b.optimal
    empty = sp.csr_matrix((4, 5), dtype=bool)
    b = star_bicoloring(empty)
    assert b.ncolors == 0 and list(b.row_colors) == [-1] * 4
    assert b.decompress(empty, np.zeros((4, 0)), np.zeros((0, 5))).nnz == 0
    assert star_bicoloring(arrow_pattern(5)).lower_bound == 3


def test_the_check_catches_a_wrong_bicoloring():
    p = arrow_pattern(6)
    one = Bicoloring(np.zeros(6), np.full(6, -1), "by hand", 0)   # every column color 0
    assert not is_star_bicoloring(p, one)
    with pytest.raises(ValueError, match="neither sweep"):
        one.positions(p)
    assert from_symmetric(p, np.zeros(12, np.int64), "by hand") is None
    assert not is_star_bicoloring(p, Bicoloring(np.zeros(5), np.zeros(6), "short", 0))


def test_block_arrow_pattern():
    x = np.linspace(0.2, 1.3, 2 + 3 * 40)
    p = jacobians.jacobian_sparsity(block_arrow, x)
    b = star_bicoloring(p)
    assert is_star_bicoloring(p, b)
    assert b.ncolors < min(jacobians.column_coloring(p).ncolors,
                           jacobians.row_coloring(p).ncolors)
    assert b.ncolors <= 7
    j = _values(p, np.random.default_rng(1))
    assert abs(_decompressed(p, b, j) - j).max() == 0


@settings(derandomize=True, max_examples=40, deadline=None)
@given(m=st.integers(1, 25), n=st.integers(1, 25), density=st.floats(0.02, 0.6),
       seed=st.integers(0, 2 ** 16), dense_row=st.booleans(), dense_col=st.booleans())
def test_random_patterns(m, n, density, seed, dense_row, dense_col):
    rng = np.random.default_rng(seed)
    p = sp.random(m, n, density=density, random_state=rng, format="lil") != 0
    p = p.tolil()
    if dense_row:
        p[rng.integers(m), :] = True
    if dense_col:
        p[:, rng.integers(n)] = True
    p = p.tocsr()
    for b in (star_bicoloring(p), star_bicoloring(p, symmetric=star_coloring)):
        assert is_star_bicoloring(p, b)
        assert b.ncolors >= b.lower_bound
        j = _values(p, rng)
        assert abs(_decompressed(p, b, j) - j).max() == 0 if j.nnz else True


def test_the_bipartite_graph():
    p = sp.csr_matrix(np.array([[1, 0, 1], [0, 1, 0]], bool))
    h = bipartite_graph(p).toarray()
    assert h.shape == (5, 5) and (h == h.T).all()
    assert h[3, 0] and h[3, 2] and h[4, 1] and h[:3, :3].sum() == 0 and h[3:, 3:].sum() == 0


# --- the planner ------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [4, 30, 1200])
def test_sparse_jacobian_bidirectional_equals_dense(n):
    x = np.linspace(0.1, 1.7, n)
    dense = jacobians.jacfwd(arrow, x)
    for mode in ("bidirectional", "auto"):
        j = jacobians.sparse_jacobian(arrow, x, mode=mode)
        assert sp.issparse(j) and np.array_equal(j.toarray(), dense)


def test_auto_picks_bidirectional_on_the_arrowhead_not_on_a_band():
    x = np.linspace(0.1, 1.7, 1500)
    p = jacobians.plan(arrow, x)
    assert p.mode == "sparse-bidirectional" and p.directions == 3 and p.n_chunks == 2
    x2 = x[::-1].copy()
    assert np.array_equal(p(x2).toarray(), jacobians.jacfwd(arrow, x2))

    def tridiagonal(x):
        return x[1:-1] ** 2 - x[:-2] + np.sin(x[2:])
    q = jacobians.plan(tridiagonal, np.linspace(0, 1, 1500))
    assert q.mode in ("sparse-forward", "sparse-reverse")
    assert q.bicoloring is None and "Bicoloring not tried" in q.explain()


def test_explain_shows_the_split():
    x = np.linspace(0.1, 1.7, 800)
    text = jacobians.plan(arrow, x, mode="bidirectional").explain()
    line = next(t for t in text.splitlines() if t.startswith("Bicoloring:"))
    assert "2 forward colors + 1 reverse color = 3 directions instead of" in line
    assert "Chosen: sparse-bidirectional — 3 directions in 2 sweep(s)" in text
    row = next(t for t in text.splitlines() if t.strip().startswith("sparse-bidirectional"))
    assert "3 directions" in row and "<- chosen" in row


def test_jacobian_auto_uses_it_and_stays_dense():
    x = np.linspace(0.1, 1.7, 1500)
    j = jacobians.jacobian(arrow, x)
    assert isinstance(j, np.ndarray) and np.array_equal(j, jacobians.jacfwd(arrow, x))
    j2 = jacobians.jacobian(arrow, x + 1.0)      # the cached choice, at a new point
    assert np.array_equal(j2, jacobians.jacfwd(arrow, x + 1.0))


@pytest.mark.parametrize("jit", [True, False])
def test_plan_with_decisions_is_rechecked(jit):
    def f(x):        # which residual reads the border depends on the sign of x[1]
        border = np.where(x[1] > 0, x[0], x[-1])
        y = x ** 2 + border
        return np.concatenate([[np.sum(np.sin(x))], y[1:]])
    x = np.linspace(0.1, 1.7, 40)
    p = jacobians.plan(f, x, mode="bidirectional", jit=jit)
    for pt in (x, -x, x + 0.5):
        assert np.array_equal(p(pt).toarray(), jacobians.jacfwd(f, pt))
    if not jit:        # -x takes the other branch: its pattern was detected again
        assert p.redetections == 1 and p.bicoloring.ncolors >= 3


@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
def test_dtypes(dtype):
    x = (np.linspace(0.1, 1.7, 60) * (1 + 0.5j if dtype == np.complex128 else 1)).astype(dtype)
    j = jacobians.sparse_jacobian(arrow, x, mode="bidirectional")
    dense = jacobians.jacfwd(arrow, x)
    assert j.dtype == dense.dtype
    np.testing.assert_allclose(j.toarray(), dense, rtol=1e-6 if dtype == np.float32 else 1e-14)


def test_several_argnums_and_shaped_output():
    def g(a, b):          # (2, n) output; a dense border in a and b
        top = a ** 2 + b[0] * a[0]
        bottom = np.concatenate([[np.sum(a) + np.sum(b)], b[1:] * 3.0])
        return np.stack([top, bottom])
    a, b = np.linspace(0.1, 1, 25), np.linspace(1, 2, 25)
    j = jacobians.sparse_jacobian(g, a, b, argnums=(0, 1), mode="bidirectional")
    dense = np.concatenate([jacobians.jacfwd(g, a, b, argnums=0).reshape(50, 25),
                            jacobians.jacfwd(g, a, b, argnums=1).reshape(50, 25)], axis=1)
    assert j.shape == (50, 50) and np.array_equal(j.toarray(), dense)


def test_plan_inside_a_transformation():
    x = np.linspace(0.1, 1.7, 30)
    p = jacobians.plan(arrow, x, mode="bidirectional", jit=False)

    def loss(x):
        return p(x).toarray().sum()

    g = dualad.grad(loss)(x)
    h = jacobians.jacfwd(lambda z: jacobians.jacfwd(arrow, z).sum(), x)
    np.testing.assert_allclose(g, h, rtol=1e-12)


def test_sparse_jacobian_bidirectional_on_traced_values():
    x = np.linspace(0.1, 1.7, 30)
    w = np.linspace(1.0, 2.0, 30)

    def loss(x):
        return (jacobians.sparse_jacobian(arrow, x, mode="bidirectional") @ w).sum()

    g = dualad.grad(loss)(x)
    h = jacobians.jacfwd(lambda z: (jacobians.jacfwd(arrow, z) @ w).sum(), x)
    np.testing.assert_allclose(g, h, rtol=1e-12)


def test_the_symmetric_view_for_a_substitution_decompression():
    """H S assembled from the two sweeps, read directly under the combined coloring of H,
    gives J again: the plug-in point of an acyclic (substitution) variant."""
    p = arrow_pattern(9)
    b = star_bicoloring(p)
    j = _values(p, np.random.default_rng(3))
    hs = b.symmetric_product(j @ b.forward_seed(), b.reverse_seed().T @ j)
    h = sp.bmat([[None, j.T], [j, None]]).tocsr()
    colors = b.symmetric_colors()
    seed = np.zeros((18, b.ncolors))
    on = colors >= 0
    seed[np.flatnonzero(on), colors[on]] = 1
    assert np.array_equal(hs, h @ seed)


def test_orderings():
    p = arrow_pattern(40)
    for name in ("smallest-first", "natural", "largest-first", "smallest-last"):
        b = star_bicoloring(p, orderings=(name,))
        assert is_star_bicoloring(p, b) and b.method == name
    assert star_bicoloring(p, orderings=("smallest-first",)).ncolors == 3
    with pytest.raises(ValueError, match="unknown ordering 'random'"):
        star_bicoloring(p, orderings=("random",))


def test_a_budget_abandons_the_passes():
    p = arrow_pattern(300)
    assert star_bicoloring(p, budget=50) is None
    b = star_bicoloring(p, budget=10 ** 7)
    assert b.ncolors == 3 and is_star_bicoloring(p, b)
    assert star_bicoloring(p, budget=0) is None


def test_auto_on_a_block_arrow_function():
    x = np.linspace(0.2, 1.3, 2 + 3 * 400)
    p = jacobians.plan(block_arrow, x)
    assert p.mode == "sparse-bidirectional" and p.directions <= 7
    assert np.array_equal(p(x + 0.1).toarray(), jacobians.jacfwd(block_arrow, x + 0.1))


def _fewest_directions(p, most):
    """The fewest directions (k1 + k2 <= ``most``) of any bicoloring of the tiny pattern
    ``p``, by enumeration (None if more are needed)."""
    import itertools
    m, n = p.shape
    for total in range(most + 1):
        for k1 in range(total + 1):
            k2 = total - k1
            for cc in itertools.product(range(-1, k1), repeat=n):
                for rc in itertools.product(range(-1, k2), repeat=m):
                    if is_star_bicoloring(p, Bicoloring(cc, rc, "enumerated", 0)):
                        return total
    return None


@settings(derandomize=True, max_examples=40, deadline=None)
@given(m=st.integers(1, 4), n=st.integers(1, 4), density=st.floats(0.2, 0.9),
       seed=st.integers(0, 2 ** 16))
def test_the_lower_bound_is_sound(m, n, density, seed):
    p = sp.random(m, n, density=density, random_state=np.random.default_rng(seed),
                  format="csr") != 0
    b = star_bicoloring(p)
    fewest = _fewest_directions(p, b.lower_bound - 1) if b.lower_bound else None
    assert fewest is None, (p.toarray(), b.lower_bound, fewest)
    assert b.ncolors >= b.lower_bound


def test_the_bound_is_three_on_the_arrowhead():
    assert star_bicoloring(arrow_pattern(4)).lower_bound == 3
    assert _fewest_directions(arrow_pattern(4), 2) is None
    b = star_bicoloring(arrow_pattern(5000))
    assert b.optimal and b.tried == {"smallest-first": 3}   # no other pass needed


def test_on_an_executor():
    from concurrent.futures import ThreadPoolExecutor
    x = np.linspace(0.1, 1.7, 200)
    with ThreadPoolExecutor(2) as pool:
        j = jacobians.sparse_jacobian(arrow, x, mode="bidirectional", executor=pool,
                                      chunk_size=1)
        p = jacobians.plan(arrow, x, mode="bidirectional", executor=pool, chunk_size=1)
        assert p.n_chunks == 3 and np.array_equal(p(x + 1).toarray(),
                                                  jacobians.jacfwd(arrow, x + 1))
    assert np.array_equal(j.toarray(), jacobians.jacfwd(arrow, x))
