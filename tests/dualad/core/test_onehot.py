"""One-hot seed batches (dualad.core.onehot): every operation equals its dense counterpart,
and Jacobians and Hessians seeded one-hot equal those seeded with dense identity rows."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import dualad
from dualad import jacobians
from dualad.core.onehot import OneHotBatch, onehot_rows
from dualad.jacobians._common import Problem
from dualad.jacobians.dense import forward_flat, reverse_flat

from fuzz_programs import BINARY, UNARY, points, programs

rng = np.random.default_rng(3)


def batch(pshape, full=True, b=None):
    """A one-hot batch with random values (and empty rows unless ``full``)."""
    size = int(np.prod(pshape))
    b = size if b is None else b
    idx = rng.permutation(size)[:b] if b <= size else rng.integers(0, size, b)
    if not full:
        idx[::3] = -1
    val = rng.standard_normal(b)
    val[idx < 0] = 0.0
    return OneHotBatch(idx, val, pshape)


def same(structured, dense_result):
    got = structured.dense() if isinstance(structured, OneHotBatch) else structured
    assert np.shape(got) == np.shape(dense_result)
    np.testing.assert_array_equal(got, dense_result)


@pytest.mark.parametrize("full", [True, False])
@pytest.mark.parametrize("pshape", [(4,), (2, 3), (3, 1)])
def test_elementwise_products_stay_one_hot(pshape, full):
    t = batch(pshape, full)
    d = t.dense()
    for c in (rng.standard_normal(pshape), rng.standard_normal(pshape[-1:]), 2.5,
              np.float64(-1.5), rng.standard_normal((1,) + pshape),
              rng.standard_normal((len(t),) + pshape)):
        assert isinstance(t * c, OneHotBatch) and isinstance(c * t, OneHotBatch)
        same(t * c, d * c)
        same(c * t, c * d)
        same(t / (np.abs(c) + 1.0), d / (np.abs(c) + 1.0))
    same(-t, -d)
    same(+t, d)


def test_products_that_enlarge_a_direction_are_dense():
    t = batch((3,))
    c = rng.standard_normal((2, 3))             # broadcasts (B, 3) against (2, 3): new axis
    with pytest.raises(ValueError):
        _ = t * c                               # as dense: (3, 3) * (2, 3) does not broadcast
    t = batch((1, 3), b=2)
    c = rng.standard_normal((2, 3))
    same(t * c, t.dense() * c)                  # (2, 1, 3) * (2, 3): dense result


def test_structural_zeros_stay_zero_where_the_factor_is_not_finite():
    t = onehot_rows(0, 3, 0, (3,), np.float64)
    c = np.array([1.0, np.inf, 2.0])
    out = (t * c).dense()
    with np.errstate(invalid="ignore"):
        assert out[1, 1] == np.inf and np.isnan(t.dense() * c).any()
    assert np.isfinite(out[[0, 0, 2, 2], [1, 2, 0, 1]]).all() and out[0, 1] == 0.0


@pytest.mark.parametrize("full", [True, False])
def test_sums_and_differences(full):
    t = batch((2, 3), full)
    u = OneHotBatch(t.idx, rng.standard_normal(len(t)), t.pshape)
    u.val[t.idx < 0] = 0.0
    d = rng.standard_normal(t.shape)
    assert isinstance(t + u, OneHotBatch)
    same(t + u, t.dense() + u.dense())
    same(t - u, t.dense() - u.dense())
    for a, b in ((t, d), (d, t)):
        same(a + b, np.asarray(a) + np.asarray(b))
        same(a - b, np.asarray(a) - np.asarray(b))
    other = batch((2, 3), full)                 # other positions: a dense sum
    same(t + other, t.dense() + other.dense())
    same(t + 1.0, t.dense() + 1.0)              # anything else: on the dense array


@pytest.mark.parametrize("full", [True, False])
@pytest.mark.parametrize("r", [1, 3])
def test_matrix_products_are_gathers(r, full):
    a = rng.standard_normal((5, 4))
    t = batch((4, r), full)
    same(a @ t, a @ t.dense())
    same(np.matmul(a, t), np.matmul(a, t.dense()))
    b = rng.standard_normal((r, 2))
    same(t @ b, t.dense() @ b)
    t1 = onehot_rows(1, 3, 0, (4, 1), np.float64)   # a run of positions: a view of columns
    same(a @ t1, a @ t1.dense())
    row = onehot_rows(0, 4, 0, (1, 4), np.float64)
    same(row @ a.T, row.dense() @ a.T)


@pytest.mark.parametrize("full", [True, False])
def test_shape_operations(full):
    t = batch((2, 3, 2), full)
    d = t.dense()
    b = len(t)
    same(t.reshape(b, 6, 2), d.reshape(b, 6, 2))
    same(np.reshape(t, (b, 12)), d.reshape(b, 12))
    same(t.reshape(-1, 3, 4), d.reshape(-1, 3, 4))
    same(t.reshape(6, -1), d.reshape(6, -1))        # mixes the batch axis: dense
    same(np.transpose(t, (0, 3, 1, 2)), d.transpose(0, 3, 1, 2))
    same(t.transpose(0, 2, 1, 3), d.transpose(0, 2, 1, 3))
    same(np.transpose(t), d.T)
    for axis in (1, 2, 3, (1, 3), (1, 2, 3), None, 0, (0, 2)):
        for keepdims in (False, True):
            same(np.sum(t, axis=axis, keepdims=keepdims), d.sum(axis=axis, keepdims=keepdims))
            same(t.sum(axis=axis, keepdims=keepdims), d.sum(axis=axis, keepdims=keepdims))
    assert np.broadcast_to(t, t.shape) is t
    u = batch((1, 3), full, b=4)
    same(np.broadcast_to(u, (4, 2, 3)), np.broadcast_to(u.dense(), (4, 2, 3)))


def test_everything_else_sees_the_dense_array():
    t = batch((3,), full=False)
    d = t.dense()
    same(np.sin(t), np.sin(d))
    same(np.concatenate([t, d]), np.concatenate([d, d]))
    same(t[1:, ::2], d[1:, ::2])
    same(t.cumsum(axis=1), d.cumsum(axis=1))
    assert np.shape(t) == d.shape and np.ndim(t) == 2 and t.size == d.size
    assert t.astype(np.float32).dtype == np.float32
    out = np.zeros_like(d)
    np.add(t, d, out=out)
    same(out, 2 * d)


def test_onehot_rows_cut_to_a_leaf():
    t = onehot_rows(2, 4, 3, (2, 2), np.float64)    # global rows 2..5 of a leaf at 3..6
    dense = np.eye(8)[2:6, 3:7].reshape(4, 2, 2)
    same(t, dense)
    assert not t.full


# --- whole Jacobians and Hessians: one-hot seeds against dense identity seeds ---------------
def vector_program(program):
    def f(x):
        values = [x]
        for name, i, j in program:
            a, b = values[i % len(values)], values[j % len(values)]
            values.append(UNARY[name](a) if name in UNARY else BINARY[name](a, b))
        return values[-1] * np.tanh(values[len(values) // 2]) + 0.1 * x
    return f


def dense_seeded(f, x):
    p = Problem("jacobian", f, (x,))
    eye = np.eye(p.n)
    return forward_flat(p, 3, seeds=eye), reverse_flat(Problem("jacobian", f, (x,)), 3,
                                                       seeds=np.eye(4))


@settings(max_examples=25, deadline=None)
@given(programs, points)
def test_jacobians_seeded_one_hot_equal_dense_seeds(program, x):
    f = vector_program(program)
    fwd_dense, rev_dense = dense_seeded(f, x)
    for chunk in (None, 3):                 # 3: chunks cut across the identity
        jf = jacobians.jacobian(f, x, mode="forward", chunk_size=chunk)
        jr = jacobians.jacobian(f, x, mode="reverse", chunk_size=chunk)
        np.testing.assert_allclose(jf, fwd_dense, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(jr, rev_dense, rtol=1e-12, atol=1e-12)


@settings(max_examples=20, deadline=None)
@given(programs, points)
def test_hessians_seeded_one_hot_equal_dense_directions(program, x):
    f = lambda x: np.sum(np.tanh(vector_program(program)(x)))  # noqa: E731
    h = jacobians.hessian(f, x, mode="forward-over-reverse", chunk_size=3)
    h_dense = jacobians.hessian(f, x, mode="reverse-over-reverse")
    np.testing.assert_allclose(h, h_dense, rtol=1e-10, atol=1e-10)


def test_several_inputs_get_leaves_cut_from_one_identity():
    W = rng.standard_normal((3, 5))

    def f(a, b):
        return np.tanh(W @ np.concatenate([a, b.ravel()])) * np.sum(b)

    a, b = rng.standard_normal(1), rng.standard_normal((2, 2))
    for mode in ("forward", "reverse"):
        ja, jb = jacobians.jacobian(f, a, b, argnums=(0, 1), mode=mode, chunk_size=2)
        ref = jacobians.jacobian(f, a, b, argnums=(0, 1), mode=mode, chunk_size=1)
        num_a = (f(a + 1e-6, b) - f(a - 1e-6, b))[:, None] / 2e-6
        np.testing.assert_allclose(ja, num_a, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(jb, ref[1], rtol=1e-13)


def test_a_user_sees_plain_arrays():
    out, t = dualad.jvp(lambda x: x, (np.ones(3),), (onehot_rows(0, 3, 0, (3,), float),))
    assert isinstance(t, OneHotBatch)          # internal seeds pass through jvp unchanged
    assert isinstance(jacobians.jacobian(lambda x: x, np.ones(3)), np.ndarray)
    assert isinstance(jacobians.hessian(lambda x: np.sum(x ** 3), np.ones(3)), np.ndarray)


def test_jacobian_zeros_are_structural_where_a_derivative_is_infinite():
    x = np.array([0.0, 1.0])
    for mode in ("forward", "reverse"):
        with np.errstate(divide="ignore"):
            J = jacobians.jacobian(np.sqrt, x, mode=mode)
        assert J[0, 0] == np.inf and J[1, 1] == 0.5
        assert J[0, 1] == 0.0 and J[1, 0] == 0.0        # dense seeds: 0 · inf = nan


@pytest.mark.parametrize("x", [2.0, np.array(2.0), np.float32(2.0)])
@pytest.mark.parametrize("mode", ["auto", "fwd", "rev"])
def test_a_sum_over_no_axes_of_a_0d_input(x, mode):
    """np.sum of a 0-d value sums over no axes: the one-hot seeds pass through (it was a
    ValueError from np.unravel_index in forward mode)."""
    got = jacobians.jacobian(lambda v: np.sum(v * v), x, mode=mode)
    assert np.shape(got) == () and float(got) == 4.0
    assert np.asarray(got).dtype == np.asarray(x).dtype
