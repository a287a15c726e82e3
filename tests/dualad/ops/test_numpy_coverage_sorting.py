"""Sorting and order statistics (issue 4): sort, partition, unique, median, quantile,
percentile and their NaN-aware forms, traced against NumPy in both modes, and the tie
convention (the derivative is shared evenly among tied entries, as in max)."""
import warnings

import numpy as np
import pytest

import dualad
from dualad.core.primitive import REGISTRY
from dualad.verification import check_rule

from coverage_helpers import both_modes_grad, check

R = np.random.default_rng(2)
X34 = R.normal(size=(3, 4))
X5 = R.normal(size=5)
X235 = R.normal(size=(2, 3, 5))

SORTING = {
    "sort": (lambda x: np.sort(x), (X34,)),
    "sort_axis0": (lambda x: np.sort(x, axis=0), (X34,)),
    "sort_none": (lambda x: np.sort(x, axis=None), (X34,)),
    "partition": (lambda x: np.partition(x, 2, axis=1)[:, 2], (X34,)),
    "unique": (lambda x: np.unique(np.round(x * 0.0) + x), (X34,)),
    "median": (lambda x: np.median(x), (X34,)),
    "median_axis": (lambda x: np.median(x, axis=1, keepdims=True), (X34,)),
    "median_odd": (lambda x: np.median(x), (X5,)),
    "median_axes": (lambda x: np.median(x, axis=(0, 2)), (X235,)),
    "quantile": (lambda x: np.quantile(x, 0.3), (X34,)),
    "quantile_array_q": (lambda x: np.quantile(x, [0.0, 0.25, 0.9, 1.0], axis=0), (X34,)),
    "quantile_keepdims": (lambda x: np.quantile(x, np.array([[0.1], [0.7]]), axis=(0, 1),
                                                keepdims=True), (X235,)),
    "percentile": (lambda x: np.percentile(x, [10.0, 50.0, 95.0], axis=1), (X34,)),
    "quantile_traced_q": (lambda x, q: np.quantile(x, q, axis=1), (X34, np.array([0.2, 0.65]))),
    "percentile_traced_q": (lambda q: np.percentile(X5, q), (np.float64(37.0),)),
}


@pytest.mark.parametrize("name", sorted(SORTING))
def test_sorting(name):
    f, args = SORTING[name]
    check(f, *args)


METHODS = ["linear", "lower", "higher", "nearest", "midpoint", "inverted_cdf",
           "averaged_inverted_cdf", "closest_observation", "interpolated_inverted_cdf",
           "hazen", "weibull", "median_unbiased", "normal_unbiased"]


@pytest.mark.parametrize("method", METHODS)
def test_quantile_methods_match_numpy(method):
    q = np.array([0.0, 0.1, 0.25, 0.5, 0.62, 0.9, 1.0])
    check(lambda x: np.quantile(x, q, axis=1, method=method), X34, order=1)
    # q = k/(n-1) and other round-number positions hit the integer branches
    check(lambda x: np.quantile(x, [0.2, 0.4, 0.6], method=method), X5 + 0.1, order=1,
          batch=False)


@pytest.mark.parametrize("method", ["linear", "hazen", "weibull", "median_unbiased"])
def test_quantile_traced_q_continuous_methods(method):
    check(lambda x, q: np.quantile(x, q, method=method), X5, np.array([0.33, 0.71]), order=1)


def test_nan_aware_order_statistics():
    x = X34.copy()
    mask = np.ones_like(x)
    mask[0, 1] = mask[2, 0] = mask[2, 3] = 0.0
    nan_at = np.where(mask == 0, np.nan, 0.0)
    for f in (lambda x: np.nanmedian(x, axis=1), lambda x: np.nanquantile(x, [0.3, 0.8], axis=1),
              lambda x: np.nanpercentile(x, 40.0, axis=1, method="midpoint"),
              lambda x: np.nanmedian(x)):
        check(lambda x: f(x * mask + nan_at), x)
        g = dualad.grad(lambda x: np.sum(f(x * mask + nan_at)))(x)
        assert np.all(g[mask == 0] == 0.0)


def test_nan_slices():
    x = np.array([[1.0, np.nan, 3.0, 2.0], [np.nan] * 4, [4.0, 1.0, 2.0, 0.5]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for f in (lambda x: np.median(x, axis=1), lambda x: np.quantile(x, 0.3, axis=1),
                  lambda x: np.nanmedian(x, axis=1), lambda x: np.nanquantile(x, [0.1, 1.0],
                                                                              axis=1)):
            val = dualad.jvp(f, (x,), (np.ones_like(x),))[0]
            np.testing.assert_array_equal(val, f(x))
            g = dualad.grad(lambda x: np.nansum(f(x)))(x)
            assert np.all(np.isfinite(g)) and np.all(g[1] == 0.0)


# --- ties ------------------------------------------------------------------------------------
def test_sort_ties_share_the_derivative_evenly():
    x = np.array([2.0, 1.0, 2.0, 2.0, 0.5])
    for g in both_modes_grad(lambda x: np.sort(x)[-1], x):
        np.testing.assert_allclose(g, [1 / 3, 0, 1 / 3, 1 / 3, 0])
    # consistent with max's convention
    for g, h in zip(both_modes_grad(lambda x: np.sort(x)[-1], x), both_modes_grad(np.max, x)):
        np.testing.assert_allclose(g, h)
    # the sorted vector's Jacobian averages within the tie group
    J = dualad.jvp(np.sort, (x,), (np.eye(5),))[1].T
    expected = np.zeros((5, 5))
    expected[0, 4] = expected[1, 1] = 1.0
    expected[2:, [0, 2, 3]] = 1 / 3
    np.testing.assert_allclose(J, expected)
    (C,) = dualad.vjp(np.sort, x)[1](np.eye(5))
    np.testing.assert_allclose(C, expected)


def test_sort_tie_pairs_match_central_differences():
    # for a tied pair, central differences see exactly the average
    x = np.array([[0.3, -1.0, 0.3, 2.0], [1.5, -0.2, 1.5, 0.1]])
    report = check_rule(REGISTRY["sort"], args=(x,), params={"axis": 1}, order=1)
    assert report.ok, str(report)
    report = check_rule(REGISTRY["sort"], args=(x.T.copy(),), params={"axis": 0}, order=1)
    assert report.ok, str(report)


def test_median_ties():
    x = np.array([1.0, 2.0, 2.0, 5.0, 2.0])
    for g in both_modes_grad(np.median, x):
        np.testing.assert_allclose(g, [0, 1 / 3, 1 / 3, 0, 1 / 3])
    for g in both_modes_grad(np.median, np.array([1.0, 2.0, 2.0, 5.0])):
        np.testing.assert_allclose(g, [0, 0.5, 0.5, 0])


def test_unique_values_and_extras():
    x = np.array([3.0, 1.0, 3.0, 2.0, 1.0, 3.0])
    out = dualad.jvp(lambda x: np.unique(x, return_index=True, return_inverse=True,
                                         return_counts=True), (x,), (np.ones(6),))[0]
    ref = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
    for a, b in zip(out, ref):
        np.testing.assert_array_equal(dualad.extend.primal_value(a), b)
    for g in both_modes_grad(lambda x: np.unique(x) * np.array([1.0, 10.0, 100.0]), x):
        np.testing.assert_allclose(g, [100 / 3, 0.5, 100 / 3, 10.0, 0.5, 100 / 3])
    res = dualad.jvp(lambda x: np.unique_counts(x).values, (x,), (np.ones(6),))[0]
    np.testing.assert_array_equal(res, np.unique_counts(x).values)
    with pytest.raises(NotImplementedError, match="unique: axis"):
        dualad.grad(lambda x: np.sum(np.unique(x, axis=0)))(X34)


def test_partition_is_a_valid_partition():
    for kth in (0, 2, [1, 3], -1):
        y = dualad.jvp(lambda x: np.partition(x, kth, axis=1), (X34,), (np.ones_like(X34),))[0]
        for k in np.atleast_1d(kth):
            np.testing.assert_array_equal(y[:, k], np.partition(X34, kth, axis=1)[:, k])
        assert np.all(np.sort(y, axis=1) == np.sort(X34, axis=1))
    with pytest.raises(ValueError, match="partition: kth"):
        dualad.grad(lambda x: np.sum(np.partition(x, 4)))(X34)


def test_quantile_errors():
    with pytest.raises(ValueError, match="range"):
        dualad.grad(lambda x: np.quantile(x, 1.5))(X5)
    with pytest.raises(ValueError, match="not a valid method"):
        dualad.grad(lambda x: np.quantile(x, 0.5, method="bogus"))(X5)
    with pytest.raises(NotImplementedError, match="weights"):
        dualad.grad(lambda x: np.quantile(x, 0.5, weights=np.ones(5),
                                          method="inverted_cdf"))(X5)


def test_lexsort_of_traced_keys_is_a_value_with_zero_derivative():
    # The keys come in a tuple (or one 2-d array; NumPy dispatches on a tuple's entries, not
    # a list's): the value-only wrapper unwraps nested sequences; the order is the primal's.
    from dualad.verification import check_grads
    x, y = np.round(X34[0], 1), X34[1]
    keys_cases = [lambda x, y: (x, y), lambda x, y: (y, x, y), lambda x, y: np.stack([x, y])]
    for keys in keys_cases:
        out, tan = dualad.jvp(lambda x, y: np.lexsort(keys(x, y)), (x, y), (x, y))
        np.testing.assert_array_equal(out, np.lexsort(keys(x, y)))
        assert not np.any(tan)
        g = dualad.grad(lambda x, y: np.sum(np.lexsort(keys(x, y)) * x * y),
                        argnums=(0, 1))(x, y)
        order = np.lexsort(keys(x, y))
        np.testing.assert_allclose(g[0], order * y)       # the index array is a constant
        np.testing.assert_allclose(g[1], order * x)
    # through a gather, the derivative is that of the entries picked (in both modes)
    f = lambda x, y: x[np.lexsort((x, y))] * y[np.lexsort((y, x), axis=0)]  # noqa: E731
    check_grads(f, (x, y), order=2)
    check(f, x, y)
    # other index functions with nested traced arguments unwrap the same way
    out = dualad.jvp(lambda x: np.searchsorted([x[0] - 1.0, x[0], x[0] + 1.0], x[1]),
                     (X5,), (X5,))[0]
    assert out == np.searchsorted([X5[0] - 1.0, X5[0], X5[0] + 1.0], X5[1])
