"""The array-pass primal of logaddexp/logaddexp2 gives NumPy's values: same dtype,
same nan and infinity handling, equal to within two ulps everywhere (NumPy's own
formula, evaluated with the vectorized exp and log1p)."""
import numpy as np
import pytest

import dualad
from dualad.ops.special import _logaddexp

SPECIAL = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 1e308, -1e308, 5e-324, 1.0, -1.0,
                    700.0, -750.0, 88.0, -104.0])
PAIRS = [(_logaddexp.logaddexp, np.logaddexp), (_logaddexp.logaddexp2, np.logaddexp2)]


def _grid(dtype):
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.standard_normal(500) * 30, np.repeat(SPECIAL, SPECIAL.size)])
    y = np.concatenate([rng.standard_normal(500) * 30, np.tile(SPECIAL, SPECIAL.size)])
    with np.errstate(over="ignore"):
        return x.astype(dtype), y.astype(dtype)


def _assert_same(got, want, dtype):
    assert got.dtype == want.dtype and got.shape == want.shape
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    near = np.isclose(got, want, rtol=2 * np.finfo(dtype).eps, atol=0)
    bad = ~(same | near)
    assert not bad.any(), (got[bad][:5], want[bad][:5])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("fast, numpy", PAIRS)
def test_matches_numpy_including_infinities_and_nan(fast, numpy, dtype):
    x, y = _grid(dtype)
    with np.errstate(all="ignore"):
        _assert_same(fast(x, y), numpy(x, y), dtype)
        _assert_same(fast(y, x), numpy(y, x), dtype)
        _assert_same(fast(0.0, x), numpy(0.0, x), dtype)           # softplus
        col, row = x[:300, None], y[:4]
        _assert_same(fast(col, row), numpy(col, row), dtype)       # broadcasting


@pytest.mark.parametrize("fast, numpy", PAIRS)
def test_small_integer_and_scalar_arguments_fall_back_to_numpy(fast, numpy):
    ints = np.arange(400)
    assert fast(ints, ints[::-1]).dtype == numpy(ints, ints[::-1]).dtype == np.float64
    np.testing.assert_allclose(fast(ints, ints[::-1]), numpy(ints, ints[::-1]), rtol=1e-15)
    assert fast(1.0, 2.0) == numpy(1.0, 2.0)
    assert fast(np.ones(3), 2.0).tolist() == numpy(np.ones(3), 2.0).tolist()


def test_softplus_gradient_through_the_fast_primal():
    z = np.linspace(-40.0, 40.0, 1001)
    value, g = dualad.value_and_grad(lambda z: np.sum(np.logaddexp(0.0, z)))(z)
    assert value == pytest.approx(np.sum(np.logaddexp(0.0, z)), rel=1e-15)
    np.testing.assert_allclose(g, 1.0 / (1.0 + np.exp(-z)), rtol=1e-14)
