"""Sums over a short last axis add its slices (dualad.ops.core.linear.sum_last): the same
values as NumPy's reduce, eager and in jit programs, and the same derivatives."""
import numpy as np
import pytest

import dualad
from dualad.ops.core.linear import SHORT_AXIS, short_last_axis, sum_last

RNG = np.random.default_rng(11)


@pytest.mark.parametrize("k", range(2, SHORT_AXIS + 1))
def test_the_slices_added_are_numpys_reduce_to_the_bit(k):
    x = RNG.standard_normal((3000, k)) * 10.0 ** RNG.integers(-8, 8, (3000, k))
    assert short_last_axis(x.shape, x.dtype, (1,)) == k
    assert np.array_equal(sum_last(x, k, False), np.add.reduce(x, axis=1))
    assert np.array_equal(sum_last(x, k, True), np.add.reduce(x, axis=1, keepdims=True))


def test_which_sums_take_it():
    assert short_last_axis((5000, 3), np.float64, (-1,)) == 3
    assert short_last_axis((2, 5000, 2), np.complex128, (2,)) == 2
    assert short_last_axis((5000, 8), np.float64, (1,)) == 0        # too long an axis
    assert short_last_axis((100, 3), np.float64, (1,)) == 0         # too small an array
    assert short_last_axis((5000, 3), np.float64, (0,)) == 0        # not the last axis
    assert short_last_axis((5000, 3), np.float64, (0, 1)) == 0      # two axes
    assert short_last_axis((5000, 3), np.int64, (1,)) == 0          # integers: NumPy's


def test_eager_jit_and_derivatives_agree():
    x = RNG.standard_normal((4000, 3))

    def f(x):
        return np.sum(np.sin(x) * x, axis=1)
    eager = f(x)
    jitted = dualad.jit(f)
    assert "sum_last" in jitted.source(x)
    assert np.array_equal(jitted(x), eager)
    assert np.array_equal(eager, np.add.reduce(np.sin(x) * x, axis=1))
    g = dualad.grad(lambda x: np.sum(f(x) ** 2))(x)
    s = np.sum(np.sin(x) * x, axis=1, keepdims=True)
    np.testing.assert_allclose(g, 2 * s * (np.cos(x) * x + np.sin(x)), rtol=1e-12)
