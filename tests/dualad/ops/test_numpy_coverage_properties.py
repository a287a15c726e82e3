"""Property tests (hypothesis, the bounded "ci" profile) for the NumPy-coverage rules
with the most structure: cumprod with zeros anywhere, sort and order statistics away
from ties, convolution of random sizes, interp at random points."""
import numpy as np
from hypothesis import given, strategies as st

import dualad

from coverage_helpers import check

floats = st.floats(-2.0, 2.0, allow_nan=False, allow_infinity=False)


@st.composite
def with_zeros(draw, max_len=6):
    n = draw(st.integers(1, max_len))
    x = np.array(draw(st.lists(floats, min_size=n, max_size=n)))
    zeros = draw(st.lists(st.integers(0, n - 1), max_size=3))
    x[zeros] = 0.0
    return x


@given(with_zeros())
def test_cumprod_partials_are_the_products_of_the_others(x):
    n = x.size
    J = np.array([[np.prod([x[j] for j in range(k + 1) if j != i]) if i <= k else 0.0
                   for i in range(n)] for k in range(n)])
    jf = dualad.jvp(np.cumprod, (x,), (np.eye(n),))[1].T
    (jr,) = dualad.vjp(np.cumprod, x)[1](np.eye(n))
    np.testing.assert_allclose(jf, J, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(jr, J, rtol=1e-12, atol=1e-12)


@given(with_zeros(max_len=5))
def test_cumprod_second_order_with_zeros(x):
    check(np.cumprod, x, batch=False, value_rtol=0)


@st.composite
def distinct(draw, n_min=2, n_max=7):
    n = draw(st.integers(n_min, n_max))
    vals = draw(st.lists(st.integers(-50, 50), min_size=n, max_size=n, unique=True))
    return np.array(vals, dtype=float) / 10.0 + 0.013


@given(distinct(), st.floats(0.0, 1.0))
def test_quantile_is_the_interpolation_of_two_order_statistics(x, q):
    s = np.sort(x)
    v = q * (x.size - 1)
    lo = min(int(np.floor(v)), x.size - 1)
    hi = min(lo + 1, x.size - 1)
    g = v - lo
    expected = np.zeros(x.size)
    order = np.argsort(x)
    expected[order[lo]] += 1.0 - g
    expected[order[hi]] += g
    grad = dualad.grad(lambda x: np.quantile(x, q))(x)
    np.testing.assert_allclose(grad, expected, atol=1e-12)
    np.testing.assert_allclose(dualad.jvp(lambda x: np.quantile(x, q), (x,), (np.eye(x.size),))[1],
                               expected, atol=1e-12)
    assert np.isclose(np.quantile(x, q), s[lo] + g * (s[hi] - s[lo]))


@given(distinct(1, 6))
def test_sort_jacobian_is_the_permutation(x):
    P = np.eye(x.size)[np.argsort(x)]
    np.testing.assert_array_equal(dualad.jvp(np.sort, (x,), (np.eye(x.size),))[1].T, P)
    np.testing.assert_array_equal(dualad.vjp(np.sort, x)[1](np.eye(x.size))[0], P)


@given(st.integers(1, 6), st.integers(1, 6), st.sampled_from(["full", "same", "valid"]))
def test_convolve_random_sizes(n, m, mode):
    rng = np.random.default_rng(n * 10 + m)
    check(lambda a, v: np.convolve(a, v, mode), rng.normal(size=n), rng.normal(size=m),
          order=1)


@given(st.lists(st.floats(-1.0, 4.0), min_size=1, max_size=6))
def test_interp_matches_numpy_and_differences(points):
    xp = np.array([0.0, 0.7, 1.5, 3.0])
    fp = np.array([1.0, -0.5, 2.0, 0.3])
    x = np.array(points) + 1e-3          # away from the knots
    check(lambda x, fp: np.interp(x, xp, fp), x, fp, order=1, batch=False)
