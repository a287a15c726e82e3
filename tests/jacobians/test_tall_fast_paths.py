"""The tall Jacobian's fast paths (issue 19): one sweep's tangents returned without a copy,
one-hot seeds inside their leaf, a constant matrix transposed as a view in matmul's rules."""
import numpy as np
import pytest

from dualad import jacobians
from dualad.core.onehot import OneHotBatch, onehot_rows


def fd_jacobian(f, x, eps=1e-6):
    cols = [(f(x + eps * e) - f(x - eps * e)) / (2 * eps) for e in np.eye(x.size)]
    return np.stack(cols, axis=-1)


rng = np.random.default_rng(0)
B = rng.standard_normal((300, 10)) / np.sqrt(10)


def tall(x):
    return np.tanh(B @ np.sin(x)) * 2.0 + np.cos(B @ x)


def tall_closed_form(x):
    th = np.tanh(B @ np.sin(x))
    return 2.0 * (1 - th ** 2)[:, None] * B * np.cos(x) - np.sin(B @ x)[:, None] * B


@pytest.mark.parametrize("api", [jacobians.jacobian, jacobians.jacfwd])
@pytest.mark.parametrize("chunk", [None, 3, 10])
def test_tall_jacobian_against_closed_form(api, chunk):
    x = rng.standard_normal(10)
    J = api(tall, x, chunk_size=chunk)
    assert J.shape == (300, 10)
    np.testing.assert_allclose(J, tall_closed_form(x), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(J, fd_jacobian(tall, x), rtol=1e-6, atol=1e-8)


def test_result_is_the_callers_own_array():
    """A Jacobian returned without a copy is still a fresh, writeable array: changing it
    changes no later result, no input and no constant of ``f``."""
    x = rng.standard_normal(10)
    B_before, x_before = B.copy(), x.copy()
    J = jacobians.jacfwd(tall, x)
    assert J.flags.writeable
    J[:] = 7.0
    np.testing.assert_array_equal(B, B_before)
    np.testing.assert_array_equal(x, x_before)
    np.testing.assert_allclose(jacobians.jacfwd(tall, x), tall_closed_form(x), rtol=1e-12)


@pytest.mark.parametrize("f, expected", [
    (lambda x: x, lambda x: np.eye(4)),                          # the seed itself
    (lambda x: x[::-1], lambda x: np.eye(4)[::-1]),              # a view of it
    (lambda x: np.broadcast_to(x[0], (4,)) * 1.0, lambda x: np.eye(4)[[0, 0, 0, 0]]),
    (lambda x: B[:4, :4] @ x, lambda x: B[:4, :4]),              # columns of a constant
    (lambda x: np.zeros(4) * x, lambda x: np.zeros((4, 4))),
])
def test_results_never_alias_seeds_inputs_or_constants(f, expected):
    x = np.linspace(-1, 1, 4)
    J = jacobians.jacfwd(f, x)
    np.testing.assert_allclose(J, expected(x), atol=1e-15)
    assert J.flags.writeable
    assert not np.shares_memory(J, B) and not np.shares_memory(J, x)
    J[...] = 3.0                                                 # changes nothing else
    np.testing.assert_allclose(jacobians.jacfwd(f, x), expected(x), atol=1e-15)


def test_float32_and_complex_outputs_keep_their_dtype():
    x = rng.standard_normal(10).astype(np.float32)
    B32 = B.astype(np.float32)
    J = jacobians.jacfwd(lambda x: np.tanh(B32 @ x), x)
    assert J.dtype == np.float32
    th = np.tanh(B32.astype(float) @ x.astype(float))
    np.testing.assert_allclose(J, (1 - th ** 2)[:, None] * B, rtol=1e-5, atol=1e-6)
    xd = rng.standard_normal(3)
    Jc = jacobians.jacfwd(lambda x: np.exp(1j * x) * 2.0, xd)
    assert Jc.dtype == np.complex128
    np.testing.assert_allclose(Jc, np.diag(2j * np.exp(1j * xd)), atol=1e-15)


@pytest.mark.parametrize("start, count, offset, shape", [
    (0, 4, 0, (4,)), (1, 2, 0, (4,)), (3, 4, 2, (2, 3)), (0, 5, 2, (2,)), (6, 3, 0, (4,)),
    (0, 0, 0, (3,)), (2, 3, 4, (3,)),
])
@pytest.mark.parametrize("dtype, scale", [(np.float64, 1.0), (np.float32, 0.5),
                                          (np.complex128, 0.5)])
def test_onehot_rows_are_rows_of_the_identity(start, count, offset, shape, dtype, scale):
    t = onehot_rows(start, count, offset, shape, dtype, scale)
    assert isinstance(t, OneHotBatch) and t.dtype == dtype
    size = int(np.prod(shape))
    full = np.eye(offset + size + start + count + 1, dtype=dtype) * dtype(scale)
    expected = full[start:start + count, offset:offset + size].reshape((count,) + shape)
    np.testing.assert_array_equal(t.dense(), expected)
    assert t.full == bool(0 <= start - offset and start - offset + count <= size)
