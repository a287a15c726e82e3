"""Sparsity detection is conservative (never misses a nonzero) and tight where it can be."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, strategies as st

from dualad import jacobians
from dualad.jacobians.sparsity import hessian_sparsity, jacobian_sparsity

rng = np.random.default_rng(1)
W_sparse = np.where(rng.random((5, 6)) < 0.3, rng.standard_normal((5, 6)), 0.0)
A = rng.standard_normal((3, 4))


def bratu(u, lam=1.0):
    h = 1.0 / (len(u) + 1)
    up = np.concatenate([np.zeros(1), u, np.zeros(1)])
    return (up[2:] - 2.0 * up[1:-1] + up[:-2]) / h ** 2 + lam * np.exp(u)


FUNCTIONS = {
    "elementwise": (lambda x: np.sin(x) * np.exp(x) + x ** 2, (6,)),
    "broadcast": (lambda x: x[:, None] * x[None, :2], (6,)),
    "scalar_broadcast": (lambda x: np.tanh(x) + x[0], (6,)),
    "bratu": (bratu, (6,)),
    "reshape_transpose": (lambda x: np.sin(x.reshape(2, 3).T).ravel(), (6,)),
    "advanced_index": (lambda x: x[np.array([0, 3, 3, 5])] * x[1], (6,)),
    "flip_concat": (lambda x: np.concatenate([np.flip(x), np.ones(2), x[:2]]), (6,)),
    "sum_axis": (lambda x: np.sum(x.reshape(2, 3) ** 2, axis=1), (6,)),
    "max_prod": (lambda x: np.array([np.max(x[:3]), np.prod(x[3:])]) if False else
                 np.concatenate([np.max(x.reshape(2, 3), axis=0), np.prod(x[3:], keepdims=True)]),
                 (6,)),
    "cumsum": (lambda x: np.cumsum(x[::-1]) * 2, (6,)),
    "matmul_constant_sparse": (lambda x: W_sparse @ np.sin(x), (6,)),
    "matmul_traced": (lambda x: x.reshape(2, 3) @ x.reshape(3, 2), (6,)),
    "matvec_traced": (lambda x: x.reshape(2, 3) @ np.cos(x[:3]), (6,)),
    "matvec_stack": (lambda x: (x[:12].reshape(2, 2, 3) @ x[12:]).ravel(), (15,)),
    "einsum": (lambda x: np.einsum("ij,jk->ik", A, x.reshape(4, 2) ** 2), (8,)),
    "einsum_diag": (lambda x: np.einsum("ii->i", x.reshape(3, 3)), (9,)),
    "diag_triu": (lambda x: np.triu(np.outer(x, x)).ravel() + np.diag(np.diag(np.outer(x, x))).ravel(), (3,)),
    "where_clip": (lambda x: np.where(x > 0, np.sqrt(np.abs(x)), x ** 2) + np.clip(x, -0.1, 0.1), (6,)),
    "mean_var": (lambda x: np.concatenate([x - np.mean(x), np.reshape(np.var(x), (1,))]), (5,)),
    "inv": (lambda x: np.linalg.inv(x.reshape(2, 2) + 3 * np.eye(2)).ravel()[:3], (4,)),
    "convolve_fallback": (lambda x: np.convolve(x[:2], x[2:]), (4,)),
    "comparison_constant": (lambda x: (x > 0).astype(float) + np.floor(x) * 0 + x[:1], (4,)),
}


def dense_nonzeros(f, x):
    return jacobians.jacobian(f, x, mode="forward").reshape(-1, x.size) != 0


@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_detection_never_misses_a_nonzero(name):
    f, shape = FUNCTIONS[name]
    for seed in range(3):
        x = np.random.default_rng(seed).standard_normal(shape)
        pattern = jacobian_sparsity(f, x).toarray()
        nz = dense_nonzeros(f, x)
        assert pattern.shape == nz.shape
        assert not (nz & ~pattern).any(), f"{name}: missed {np.argwhere(nz & ~pattern)}"


def test_detection_is_tight_on_structured_functions():
    x = rng.standard_normal(6)
    for name in ("elementwise", "bratu", "reshape_transpose", "advanced_index", "flip_concat",
                 "sum_axis", "cumsum", "matmul_constant_sparse", "einsum", "matvec_traced",
                 "matvec_stack"):
        f, shape = FUNCTIONS[name]
        x = rng.standard_normal(shape)
        assert np.array_equal(jacobian_sparsity(f, x).toarray(), dense_nonzeros(f, x)), name


def test_fallback_is_reported():
    """convolve declares no sparsity kind (inv did not either, before it was given one)."""
    f, shape = FUNCTIONS["convolve_fallback"]
    p = jacobians.plan(f, np.ones(4), sparse=True)
    assert "convolve" in p.sparsity.fallbacks
    assert "no pattern rule for convolve" in p.explain()


def test_tuple_outputs_and_several_arguments():
    f = lambda x, y: (x * y[0], np.sum(y) + x[:1])
    pattern = jacobian_sparsity(f, np.ones(3), np.ones(2), argnums=(0, 1)).toarray()
    expected = np.array([[1, 0, 0, 1, 0], [0, 1, 0, 1, 0], [0, 0, 1, 1, 0], [1, 0, 0, 1, 1]], bool)
    assert np.array_equal(pattern, expected)


def test_hessian_sparsity_conservative_and_tight():
    f = lambda x: np.sum(x[1:] ** 2 * x[:-1]) + np.sum(np.exp(x)) + x[0] * x[-1]
    x = rng.standard_normal(7)
    pattern = hessian_sparsity(f, x).toarray()
    nz = jacobians.hessian(f, x) != 0
    assert np.array_equal(pattern, nz)
    assert np.array_equal(pattern, pattern.T)
    g = lambda x: np.sum(x * 3.0) + x[0] * x[1]   # linear parts have no Hessian entries
    assert np.array_equal(hessian_sparsity(g, x).toarray().nonzero(), ([0, 1], [1, 0]))


def test_large_tridiagonal_never_dense_in_memory():
    import tracemalloc
    n = 20000
    x = rng.random(n) * 0.1
    tracemalloc.start()
    J = jacobians.sparse_jacobian(bratu, x)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert J.shape == (n, n) and J.nnz == 3 * n - 2
    assert peak < 40e6  # a dense 20000 x 20000 would be 3.2 GB
    np.testing.assert_allclose(J.diagonal(), -2.0 * (n + 1) ** 2 + np.exp(x))


ops = st.sampled_from(["sin", "mul_shift", "sum_pairs", "take", "concat", "cumsum", "matmul"])


@given(st.lists(ops, min_size=1, max_size=5), st.integers(0, 10_000))
def test_random_compositions_are_conservative(chain, seed):
    r = np.random.default_rng(seed)
    M = np.where(r.random((6, 6)) < 0.4, 1.0, 0.0)
    idx = r.integers(0, 6, size=6)

    def f(x):
        for op in chain:
            if op == "sin":
                x = np.sin(x) * x
            elif op == "mul_shift":
                x = x * np.concatenate([x[1:], x[:1]])
            elif op == "sum_pairs":
                x = np.repeat(np.sum(x.reshape(3, 2), axis=1), 2) if False else \
                    np.concatenate([np.sum(x.reshape(3, 2), axis=1), x[:3]])
            elif op == "take":
                x = x[idx]
            elif op == "concat":
                x = np.concatenate([x[:2] ** 2, x[2:]])
            elif op == "cumsum":
                x = np.cumsum(x)
            else:
                x = M @ x
        return x

    x = r.standard_normal(6)
    pattern = jacobian_sparsity(f, x).toarray()
    nz = dense_nonzeros(f, x)
    assert not (nz & ~pattern).any()


def test_dense_layers_stay_cheap_saturated_patterns():
    """After a dense linear map every element depends on every input: the pattern is kept
    as one shared set (saturated), so a second dense layer does not enumerate
    rows x width x width entries. Within a budget of 10^5 entries (the enumeration
    would need 8 * 10^6) the detected pattern is still exact."""
    rng = np.random.default_rng(1)
    U, V = rng.standard_normal((2, 200, 200))
    W = rng.standard_normal((3, 200))
    mask = np.ones(200)
    mask[:50] = 0.0                 # the last layer reads only part of the input directly

    def f(x):
        return np.tanh(W @ np.tanh(V @ np.sin(U @ x))).reshape(3, 1) * (mask * x)[:3]

    x = rng.standard_normal(200)
    pattern = jacobian_sparsity(f, x, budget=100_000)
    dense = jacobians.jacobian(f, x)
    assert pattern.shape == (9, 200) and pattern.nnz == 9 * 200
    assert ((dense.reshape(9, 200) != 0) <= pattern.toarray()).all()


@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_matrix_times_vector_jacobians_both_modes(mode):
    """A @ x is one matmul step (no column reshapes): its Jacobians in x and in A, for a
    matrix and for a stack, seeded one-hot in either mode, are the exact ones."""
    S = rng.standard_normal((2, 3, 4))
    v = rng.standard_normal(4)
    x = rng.standard_normal(4)
    J = jacobians.jacobian(lambda x: S @ np.sin(x), x, mode=mode)
    np.testing.assert_allclose(J, S * np.cos(x), rtol=1e-14)
    J = jacobians.jacobian(lambda A: A @ v, S, mode=mode)        # (2, 3) x (2, 3, 4)
    expect = np.einsum("sa,ib,k->siabk", np.eye(2), np.eye(3), v)
    np.testing.assert_allclose(J, expect, rtol=1e-14)
