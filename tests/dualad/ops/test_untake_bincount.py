"""Issue 31: the VJP of an integer-array selection (``untake``) scatters float64 cotangents
with ``np.bincount`` instead of ``np.add.at``: bitwise the same sums, several times faster."""
import numpy as np
from hypothesis import given, settings, strategies as st

import dualad
from dualad.ops.core.indexing import _scatter_by_bincount, untake


@settings(derandomize=True, max_examples=60, deadline=None)
@given(st.data())
def test_scatter_by_bincount_is_np_add_at_bitwise(data):
    nd = data.draw(st.integers(1, 3))
    shape = tuple(data.draw(st.lists(st.integers(1, 5), min_size=nd, max_size=nd)))
    axis = data.draw(st.integers(0, nd - 1))
    targets = np.array(data.draw(st.lists(st.integers(-shape[axis], shape[axis] - 1),
                                          min_size=1, max_size=12)))
    idx = tuple(targets if a == axis else slice(None) for a in range(nd))
    picked = np.zeros(shape)[idx].shape
    scale = 10.0 ** np.array(data.draw(st.lists(st.integers(-8, 8), min_size=1, max_size=1)))
    u = np.random.default_rng(len(targets)).standard_normal(picked) * scale
    for cotangent in (u, u[..., :1], np.float64(-0.0), np.float64(2.5)):   # broadcasts too
        want = np.zeros(shape)
        np.add.at(want, idx, cotangent)
        for _ in range(2):                          # the second call reuses the positions
            got = _scatter_by_bincount(cotangent, idx, shape)
            assert got.dtype == np.float64 and np.array_equal(got, want)
            assert np.array_equal(np.signbit(got), np.signbit(want))


def test_nothing_scattered_is_float64_zeros():
    # np.bincount of an empty index is int64 even with weights; the cotangent stays float64
    for idx, shape in [((np.zeros(0, int),), (4,)), ((slice(None), np.zeros(0, int)), (2, 3)),
                       ((np.array([1, 2]),), (0,) * 0 + (3,))]:
        u = np.zeros(np.zeros(shape)[idx].shape)
        if u.size:
            continue
        out = untake(u, idx=idx, shape=shape)
        assert out.dtype == np.float64 and out.shape == shape and not out.any()
    g = dualad.grad(lambda x: np.sum(np.sin(np.repeat(x, 0, axis=1))))(np.ones((2, 3)))
    assert g.dtype == np.float64 and np.array_equal(g, np.zeros((2, 3)))


def test_untake_keeps_other_dtypes_on_np_add_at():
    rows = np.array([0, 2, 0])
    for dtype in (np.float32, np.complex128, np.int64):
        u = np.arange(3).astype(dtype) + 1
        out = untake(u, idx=(rows,), shape=(3,))
        assert out.dtype == dtype and np.array_equal(out, np.array([4, 0, 2], dtype))


def test_a_gather_gradient_with_repeats_is_exact():
    rows = np.array([3, 1, 3, 3, 0])
    x = np.linspace(0.5, 2.0, 4)
    g = dualad.grad(lambda x: np.sum(np.sin(x[rows]) * np.arange(1.0, 6.0)))(x)
    want = np.zeros(4)
    np.add.at(want, rows, np.cos(x[rows]) * np.arange(1.0, 6.0))
    assert np.array_equal(g, want)
