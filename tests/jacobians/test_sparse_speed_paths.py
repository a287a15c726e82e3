"""The fast paths of a prepared sparse Jacobian give exactly the dense Jacobian.

What is new (issue 35, evaluation speed): the compressed sweeps' seeds, gather positions
and CSR index arrays made once per pattern and coloring (``jacobians.sparse.Decompression``);
``dualad.jit``'s sparse results rebuilt on the traced CSR layout instead of through COO;
``plan(..., jit="numba")``. Each is compared here with ``jacobians.jacfwd`` (forward and
reverse colorings, several argnums, complex, float32, a plan at new points, a pattern that
becomes invalid at a new point), and a result's in-place edit must not reach the next one.
"""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import dualad
import dualad.scipy.sparse as dsp
from dualad import jacobians
from dualad.jacobians.sparse import Decompression, decompression


def band(x):
    """Tridiagonal plus a wrap-around: 3 column colors, 3 row colors."""
    return x ** 2 * np.roll(x, 1) + np.sin(np.roll(x, -1))


def two_args(x, y):
    return np.concatenate([x * y[:3] ** 2, np.exp(y[1:] - y[:-1])])


def dense_of(f, args, argnums=0):
    jac = jacobians.jacfwd(f, argnums=argnums)(*args)
    blocks = jac if isinstance(argnums, tuple) else (jac,)
    m = np.size(f(*args))
    return np.concatenate([np.reshape(b, (m, -1)) for b in blocks], axis=1)


@pytest.mark.parametrize("jit", [False, True])
@pytest.mark.parametrize("mode", ["sparse-forward", "sparse-reverse"])
def test_plan_at_new_points_is_dense_jacobian(mode, jit):
    x0 = np.linspace(0.1, 1.0, 12)
    p = jacobians.plan(band, x0, mode=mode, output="sparse", jit=jit)
    for k in range(3):
        x = x0 * (1.0 + 0.3 * k) - 0.2 * k
        J = p(x)
        assert sp.issparse(J) and J.shape == (12, 12)
        np.testing.assert_allclose(J.toarray(), dense_of(band, (x,)), rtol=1e-14, atol=1e-14)


@pytest.mark.parametrize("jit", [False, True])
@pytest.mark.parametrize("argnums", [0, 1, (0, 1), (1, 0)])
def test_several_argnums(argnums, jit):
    x, y = np.array([0.3, -0.5, 2.0]), np.array([1.0, 0.2, -0.7, 0.4])
    p = jacobians.plan(two_args, x, y, argnums=argnums, mode="sparse-forward",
                       output="sparse", jit=jit)
    for s in (1.0, -1.5):
        J = p(x * s, y + s)
        np.testing.assert_allclose(J.toarray(), dense_of(two_args, (x * s, y + s), argnums),
                                   rtol=1e-14, atol=1e-14)


@pytest.mark.parametrize("jit", [False, True])
@pytest.mark.parametrize("mode", ["sparse-forward", "sparse-reverse"])
def test_complex_and_float32(mode, jit):
    xc = np.linspace(0.1, 1.0, 9) + 0.5j
    p = jacobians.plan(band, xc, mode=mode, output="sparse", jit=jit)
    for s in (1 - 0.2j, 0.5 + 1j):
        J = p(xc * s)
        assert J.dtype == np.complex128
        np.testing.assert_allclose(J.toarray(), dense_of(band, (xc * s,)), rtol=1e-13)
    x32 = np.linspace(0.1, 1.0, 9, dtype=np.float32)
    p32 = jacobians.plan(band, x32, mode=mode, output="sparse", jit=jit)
    for s in (2, -1):
        J32 = p32(x32 * s)
        assert J32.dtype == np.float32
        np.testing.assert_allclose(J32.toarray(), dense_of(band, (x32 * s,)), rtol=1e-6)


@pytest.mark.parametrize("jit", [False, True])
def test_result_edits_do_not_reach_the_plan(jit):
    """eliminate_zeros (in place, on the index arrays) of one result, then the next call:
    before, the result shared the plan's pattern arrays and the next call failed."""
    x = np.linspace(0.1, 1.0, 10)
    p = jacobians.plan(band, x, mode="sparse-forward", output="sparse", jit=jit)
    J = p(x)
    nnz = J.nnz
    J.data[:] = 0.0
    J.eliminate_zeros()
    assert J.nnz == 0
    J2 = p(x)
    assert J2.nnz == nnz
    np.testing.assert_allclose(J2.toarray(), dense_of(band, (x,)), rtol=1e-14)


def test_decompression_made_once_per_pattern():
    x = np.linspace(0.1, 1.0, 10)
    p = jacobians.plan(band, x, mode="sparse-forward", output="sparse", jit=False)
    p(x)
    d = decompression(p.sparsity.pattern, p.column_coloring, "forward")
    p(x * 2)
    assert decompression(p.sparsity.pattern, p.column_coloring, "forward") is d
    assert isinstance(d, Decompression)
    seeds = d.seeds(p.column_coloring, np.float64)
    assert not seeds.flags.writeable
    np.testing.assert_array_equal(seeds, p.column_coloring.seed(np.float64))


def test_pattern_invalid_at_new_point_is_detected_again():
    """f's pattern depends on a comparison: at a point taking the other branch the check
    detects the pattern again (no stale decompression) and the result is still exact."""
    def branchy(x):
        if np.sum(x) > 0:
            return x ** 2
        return x * np.roll(x, 1)
    x0 = np.linspace(0.1, 1.0, 8)
    for jit in (False, True):
        p = jacobians.plan(branchy, x0, mode="sparse-forward", output="sparse", jit=jit)
        assert p(x0).nnz == 8
        x1 = -x0
        J = p(x1)
        np.testing.assert_allclose(J.toarray(), dense_of(branchy, (x1,)), rtol=1e-14)
        np.testing.assert_allclose(p(x0).toarray(), dense_of(branchy, (x0,)), rtol=1e-14)


@settings(derandomize=True, max_examples=25, deadline=None)
@given(n=st.integers(2, 6), m=st.integers(2, 6), density=st.floats(0.1, 0.9),
       seed=st.integers(0, 1000), fmt=st.sampled_from(["csr", "csc"]))
def test_jit_sparse_rebuild_equals_scipy(n, m, density, seed, fmt):
    """A traced CSR/CSC matrix returned by dualad.jit, rebuilt on its layout (sorted or not,
    duplicates or not), equals SciPy's matrix of the same stored values."""
    rng = np.random.default_rng(seed)
    base = getattr(sp.random(n, m, density=density, random_state=seed, format=fmt),
                   "copy")()
    indices = base.indices.copy()
    for a, b in zip(base.indptr[:-1], base.indptr[1:]):   # shuffle within each row
        indices[a:b] = rng.permutation(indices[a:b])
    if len(indices) > 1 and seed % 3 == 0:      # a duplicate coordinate in the first row
        if base.indptr[1] - base.indptr[0] >= 2:
            indices[base.indptr[0] + 1] = indices[base.indptr[0]]
    indptr = base.indptr.copy()
    build = getattr(dsp, f"{fmt}_matrix")
    f = dualad.jit(lambda d: build((d * 2.0, indices, indptr), shape=(n, m)))
    data = rng.standard_normal(len(indices))
    want = getattr(sp, f"{fmt}_matrix")((data * 2.0, indices, indptr), shape=(n, m))
    for _ in range(3):            # trace, then replays (the later ones copy a built matrix)
        got = f(data)
        assert type(got) is type(want) and got.format == fmt and got.dtype == want.dtype
        assert got.shape == want.shape and got.nnz == want.nnz
        np.testing.assert_allclose(got.toarray(), want.toarray(), rtol=1e-15)
        x = np.arange(1.0, m + 1.0)
        np.testing.assert_allclose(got @ x, want @ x, rtol=1e-14)
        np.testing.assert_allclose(got.T.toarray(), want.T.toarray(), rtol=1e-15)
        sorted_unique = all(np.all(np.diff(indices[a:b]) > 0)
                            for a, b in zip(indptr[:-1], indptr[1:]))
        assert got.has_canonical_format == sorted_unique
        assert set(vars(got)) <= set(vars(want)) | {"_has_canonical_format",
                                                   "_has_sorted_indices"}
    got.sort_indices()
    got.sum_duplicates()
    np.testing.assert_allclose(got.toarray(), want.toarray(), rtol=1e-15)
    assert np.array_equal(f(data).indices, indices)   # the next call's layout is intact


def test_jit_takes_numba_or_bools():
    with pytest.raises(TypeError, match="'numba'"):
        jacobians.plan(band, np.ones(5), mode="sparse-forward", jit="fast")


def test_numba_replay_is_dense_jacobian():
    pytest.importorskip("numba")
    x0 = np.linspace(0.1, 1.0, 12)
    p = jacobians.plan(band, x0, mode="sparse-forward", output="sparse", jit="numba")
    J_first = p(x0)               # the NumPy program answers while Numba compiles
    assert p.wait_compiled(120)
    assert list(p.replayed.jitted.cache_info(tiers=True).values()) == [["numba"]]
    np.testing.assert_allclose(J_first.toarray(), dense_of(band, (x0,)), rtol=1e-14)
    for s in (1.0, -0.5, 2.0):
        J = p(x0 * s)
        np.testing.assert_allclose(J.toarray(), dense_of(band, (x0 * s,)), rtol=1e-13,
                                   atol=1e-14)


@pytest.mark.parametrize("kind, size", [("1-D", 30), ("2-D", 6)])
def test_bench_bratu_rows_state_the_exact_jacobian(kind, size):
    """bench/sparse_peers.py checks every participant against its exact Bratu Jacobian:
    that matrix is the planner's too (so the benchmark's check can fail only on a peer)."""
    import os
    import sys
    bench = os.path.join(os.path.dirname(__file__), "..", "..", "bench")
    saved = list(sys.path)
    sys.path.insert(0, os.path.abspath(bench))
    try:
        from sparse_peers import bratu_case, check
    finally:
        sys.path[:] = saved
    name, f, u0, exact, _ = bratu_case(kind, size)
    J = jacobians.plan(f, u0, output="sparse")(u0)
    assert check(name, J, exact) <= 1e-12
    with pytest.raises(AssertionError, match="rel. error"):
        check(name, J * 1.001, exact)
