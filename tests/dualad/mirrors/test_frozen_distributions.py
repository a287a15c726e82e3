"""Frozen distributions: values against SciPy's frozen distributions, derivatives in the
frozen parameters and the argument against central differences of SciPy (step 1e-6,
compared at rtol 1e-6: truncation ~1e-12·f''', rounding ~1e-16/1e-6)."""
import numpy as np
import pytest
import scipy.stats as ss
from hypothesis import given, settings, strategies as st

import dualad
import dualad.scipy.stats as ds
from dualad.ops.special.common import NotDifferentiableError

CONTINUOUS = [  # name, parameters (SciPy's positional order), methods differentiable in them
    ("norm", (0.3, 1.5), "all"),
    ("t", (4.5, 0.2, 1.3), "all"),
    ("cauchy", (0.1, 2.0), "all"),
    ("logistic", (-0.4, 2.0), "all"),
    ("laplace", (1.0, 0.5), "all"),
    ("expon", (0.2, 2.0), "all"),
    ("uniform", (1.0, 3.0), "all"),
    ("gamma", (2.5, 0.1, 1.5), "density"),   # gammainc's shape derivative: not provided
    ("chi2", (3.5, 0.0, 2.0), "density"),
    ("beta", (2.0, 3.0, 0.1, 1.2), "density"),
]
POINT_METHODS = ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")
QUANTILES = ("ppf", "isf")
MOMENTS = ("mean", "var", "std", "entropy", "median")


def central(f, x, h=1e-6):
    x = np.asarray(x, dtype=float)
    out = []
    for i in range(x.size):
        e = np.zeros(x.size)
        e[i] = h
        out.append((f(x + e) - f(x - e)) / (2 * h))
    return np.array(out)


@pytest.mark.parametrize("name, params, _", CONTINUOUS)
def test_values_equal_scipys_frozen(name, params, _):
    mine, ref = getattr(ds, name)(*params), getattr(ss, name)(*params)
    x = ref.ppf(np.array([0.1, 0.5, 0.8]))
    for m in POINT_METHODS:
        np.testing.assert_allclose(getattr(mine, m)(x), getattr(ref, m)(x), rtol=1e-12,
                                   err_msg=f"{name}.{m}")
    for m in QUANTILES:
        np.testing.assert_allclose(getattr(mine, m)(np.array([0.1, 0.7])),
                                   getattr(ref, m)([0.1, 0.7]), rtol=1e-10, err_msg=m)
    for m in MOMENTS:
        np.testing.assert_allclose(getattr(mine, m)(), getattr(ref, m)(), rtol=1e-12,
                                   equal_nan=True, err_msg=f"{name}.{m}")


@pytest.mark.parametrize("name, params, which", CONTINUOUS)
def test_gradients_in_the_frozen_parameters_and_the_argument(name, params, which):
    ref_dist = getattr(ss, name)
    x0 = float(ref_dist(*params).ppf(0.4))
    methods = POINT_METHODS + QUANTILES if which == "all" else ("logpdf", "pdf")
    for m in methods:
        arg = 0.3 if m in QUANTILES else x0

        def f(p, m=m, arg=arg):
            return getattr(getattr(ds, name)(*p), m)(arg)
        g = dualad.grad(f)(np.array(params))
        g_ref = central(lambda p: getattr(ref_dist(*p), m)(arg), params)
        np.testing.assert_allclose(g, g_ref, rtol=1e-6, atol=1e-9, err_msg=f"{name}.{m}")
        # the argument, in forward mode
        _, d = dualad.jvp(lambda a: getattr(getattr(ds, name)(*params), m)(a), (arg,), (1.0,))
        d_ref = central(lambda a: getattr(ref_dist(*params), m)(a[0]), [arg])[0]
        assert d == pytest.approx(d_ref, rel=1e-6, abs=1e-9), f"{name}.{m}"
    for m in ("mean", "var", "std", "entropy"):
        ref = central(lambda p: getattr(ref_dist(*p), m)(), params)
        if not np.all(np.isfinite(ref)):
            continue   # cauchy: nan moments
        g = dualad.grad(lambda p: getattr(getattr(ds, name)(*p), m)())(np.array(params))
        np.testing.assert_allclose(g, ref, rtol=1e-6, atol=1e-9, err_msg=f"{name}.{m}")


def test_keyword_parameters_and_the_calling_convention():
    np.testing.assert_allclose(ds.norm(loc=1.0, scale=2.0).logpdf(0.5),
                               ss.norm(loc=1.0, scale=2.0).logpdf(0.5), rtol=1e-14)
    np.testing.assert_allclose(ds.t(3.0, scale=2.0).cdf(0.5), ss.t(3.0, scale=2.0).cdf(0.5))
    np.testing.assert_allclose(ds.gamma(a=2.0).pdf(1.5), ss.gamma(a=2.0).pdf(1.5))
    with pytest.raises(TypeError, match="norm.__call__: unexpected keyword argument 'sigma'"):
        ds.norm(0.0, sigma=1.0)
    with pytest.raises(TypeError, match="gamma.__call__: missing shape parameter"):
        ds.gamma(loc=1.0)
    with pytest.raises(AttributeError, match="frozen norm has no method 'logpmf'"):
        ds.norm(0, 1).logpmf(1)
    assert np.isnan(ds.norm(0.0, -1.0).logpdf(0.2))   # SciPy's nan for scale <= 0


def test_the_issue_example_and_a_traced_scale():
    g = dualad.grad(lambda x: ds.norm(0, 1).logpdf(x))(0.7)
    assert g == pytest.approx(-0.7)
    g = dualad.grad(lambda s: ds.norm(0.0, s).logpdf(np.array([0.5, -1.0])).sum())(2.0)
    assert g == pytest.approx(np.sum(-1.0 / 2.0 + np.array([0.5, -1.0]) ** 2 / 8.0))


def test_rvs_delegates_to_scipy_and_refuses_traced_parameters():
    np.testing.assert_array_equal(ds.gamma(2.0, scale=3.0).rvs(4, random_state=1),
                                  ss.gamma(2.0, scale=3.0).rvs(4, random_state=1))
    np.testing.assert_array_equal(ds.poisson(3.0).rvs(4, random_state=1),
                                  ss.poisson(3.0).rvs(4, random_state=1))
    with pytest.raises(NotDifferentiableError, match="norm.rvs: argument 0 is not differ"):
        dualad.grad(lambda m: ds.norm(m, 1.0).rvs(2, random_state=0).sum())(0.0)
    with pytest.raises(NotDifferentiableError, match="multivariate_normal.rvs: mean"):
        dualad.grad(lambda m: ds.multivariate_normal(m * np.ones(2)).rvs(random_state=0).sum())(
            1.0)


def test_poisson_frozen():
    mine, ref = ds.poisson(3.5), ss.poisson(3.5)
    k = np.arange(6)
    for m in ("logpmf", "pmf", "cdf", "logcdf", "sf", "logsf"):
        np.testing.assert_allclose(getattr(mine, m)(k), getattr(ref, m)(k), rtol=1e-12)
        g = dualad.grad(lambda mu, m=m: getattr(ds.poisson(mu), m)(k).sum())(3.5)
        assert g == pytest.approx(central(lambda mu: getattr(ss.poisson(mu[0]), m)(k).sum(),
                                          [3.5])[0], rel=1e-6), m
    for m in ("mean", "var", "std", "entropy"):
        assert getattr(mine, m)() == pytest.approx(getattr(ref, m)(), rel=1e-12)
    assert dualad.grad(lambda mu: ds.poisson(mu).std())(4.0) == pytest.approx(0.25)
    with pytest.raises(NotDifferentiableError, match="poisson.entropy: mu"):
        dualad.grad(lambda mu: ds.poisson(mu).entropy())(4.0)


def test_multivariate_normal_frozen():
    mean, cov = np.array([1.0, 2.0]), np.array([[2.0, 0.3], [0.3, 1.0]])
    x = np.array([[0.5, 1.0], [2.0, 3.0]])
    mine, ref = ds.multivariate_normal(mean, cov), ss.multivariate_normal(mean, cov)
    np.testing.assert_allclose(mine.logpdf(x), ref.logpdf(x), rtol=1e-12)
    np.testing.assert_allclose(mine.pdf(x), ref.pdf(x), rtol=1e-12)
    assert mine.entropy() == pytest.approx(ref.entropy(), rel=1e-12)
    np.testing.assert_array_equal(mine.mean, ref.mean)
    np.testing.assert_array_equal(mine.cov, ref.cov)
    g = dualad.grad(lambda m: ds.multivariate_normal(m, cov).logpdf(x).sum())(mean)
    np.testing.assert_allclose(g, central(lambda m: ss.multivariate_normal(m, cov).logpdf(x)
                                          .sum(), mean), rtol=1e-6)
    np.testing.assert_allclose(ds.multivariate_normal(cov=np.array([2.0, 3.0])).cov,
                               np.diag([2.0, 3.0]))


def test_dirichlet_frozen():
    alpha, x = np.array([1.5, 2.0, 3.0]), np.array([0.2, 0.3, 0.5])
    mine, ref = ds.dirichlet(alpha), ss.dirichlet(alpha)
    assert mine.logpdf(x) == pytest.approx(ref.logpdf(x), rel=1e-12)
    for m in ("mean", "var", "entropy"):
        np.testing.assert_allclose(getattr(mine, m)(), getattr(ref, m)(), rtol=1e-12)
        g = dualad.grad(lambda a, m=m: np.sum(getattr(ds.dirichlet(a), m)()))(alpha)
        np.testing.assert_allclose(
            g, central(lambda a: np.sum(getattr(ss.dirichlet(a), m)()), alpha), rtol=1e-6,
            err_msg=m)
    g = dualad.grad(lambda a: ds.dirichlet(a).logpdf(x))(alpha)
    np.testing.assert_allclose(g, central(lambda a: ss.dirichlet(a).logpdf(x), alpha),
                               rtol=1e-6)
    np.testing.assert_array_equal(mine.rvs(2, random_state=0), ref.rvs(2, random_state=0))
    with pytest.raises(ValueError, match="dirichlet.__call__: alpha must be"):
        ds.dirichlet(np.array([1.0, -1.0]))


def test_second_order_in_the_frozen_parameters():
    def f(p):
        return ds.t(p[0], p[1], p[2]).logpdf(0.7)
    p = np.array([4.0, 0.2, 1.3])
    H = np.array([dualad.jvp(dualad.grad(f), (p,), (e,))[1] for e in np.eye(3)])
    H_ref = central(lambda q: np.asarray(dualad.grad(f)(q)), p, h=1e-5)
    np.testing.assert_allclose(H, H_ref, rtol=1e-5, atol=1e-8)


@settings(derandomize=True, max_examples=40, deadline=None)
@given(st.sampled_from(CONTINUOUS), st.floats(0.05, 0.95),
       st.floats(-2.0, 2.0), st.floats(0.3, 3.0))
def test_property_frozen_equals_scipy_frozen(case, q, loc, scale):
    name, params, _ = case
    shapes = params[:len(getattr(ds, name).shape_names)]
    mine, ref = getattr(ds, name)(*shapes, loc, scale), getattr(ss, name)(*shapes, loc, scale)
    x = ref.ppf(q)
    for m in POINT_METHODS:
        np.testing.assert_allclose(getattr(mine, m)(x), getattr(ref, m)(x), rtol=1e-10,
                                   atol=1e-12, err_msg=f"{name}.{m}")
    np.testing.assert_allclose(mine.ppf(q), x, rtol=1e-9)
    for m in ("mean", "var", "entropy"):
        np.testing.assert_allclose(getattr(mine, m)(), getattr(ref, m)(), rtol=1e-10,
                                   equal_nan=True, err_msg=f"{name}.{m}")
