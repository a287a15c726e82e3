"""dualad.scipy.stats: values against scipy.stats (inside and outside the supports, invalid
parameters), derivatives in every differentiable argument against finite differences to
order 2 and against closed forms, batched sweeps, and the errors for what is not
differentiable."""
import numpy as np
import pytest
import scipy.special as sc
import scipy.stats as ss
from hypothesis import given, strategies as st

import dualad
import dualad.scipy.stats as ds
from dualad.ops.special.common import NotDifferentiableError
from dualad.verification import check_grads

RNG = np.random.default_rng(3)
# name: (shape parameters, x inside the support for loc=-0.2, scale=1.3)
CONTINUOUS = {
    "norm": ((), (-2.0, 2.0)), "t": ((3.5,), (-2.0, 2.0)), "cauchy": ((), (-2.0, 2.0)),
    "logistic": ((), (-2.0, 2.0)), "laplace": ((), (-2.0, 2.0)), "expon": ((), (0.0, 3.0)),
    "uniform": ((), (-0.1, 1.0)), "gamma": ((2.5,), (0.0, 3.0)), "chi2": ((3.0,), (0.0, 3.0)),
    "beta": ((2.0, 3.0), (-0.1, 1.0)),
}
METHODS = ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")
LOC, SCALE = -0.2, 1.3


@pytest.mark.parametrize("name", sorted(CONTINUOUS))
def test_values_match_scipy_inside_outside_and_at_invalid_parameters(name):
    shapes, _ = CONTINUOUS[name]
    D, S = getattr(ds, name), getattr(ss, name)
    x = np.concatenate([np.linspace(-3.0, 4.0, 15), [LOC, LOC + SCALE]])   # ends of supports
    loc = np.array([[LOC], [0.4]])
    scale = np.array([[SCALE], [-1.0]])                                     # invalid: nan
    for m in METHODS:
        got = np.asarray(getattr(D, m)(x, *shapes, loc=loc, scale=scale))
        with np.errstate(all="ignore"):
            want = getattr(S, m)(x, *shapes, loc=loc, scale=scale)
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-300, err_msg=m)
        assert got.shape == want.shape
    q = np.array([0.0, 0.05, 0.5, 0.93, 1.0, 1.5])
    for m in ("ppf", "isf"):
        np.testing.assert_allclose(getattr(D, m)(q, *shapes, loc=LOC, scale=SCALE),
                                   getattr(S, m)(q, *shapes, loc=LOC, scale=SCALE),
                                   rtol=1e-9, err_msg=m)


def test_shape_parameters_positional_or_by_name_and_invalid_shapes():
    x = np.array([0.2, 0.5])
    np.testing.assert_allclose(ds.beta.logpdf(x, 2.0, 3.0, -0.1, 1.5),
                               ds.beta.logpdf(x, b=3.0, a=2.0, scale=1.5, loc=-0.1))
    np.testing.assert_allclose(ds.gamma.cdf(x, -1.0), [np.nan, np.nan])       # a <= 0
    np.testing.assert_allclose(ds.t.logpdf(x, 0.0), ss.t.logpdf(x, 0.0))
    with pytest.raises(TypeError, match="missing shape parameter"):
        ds.gamma.logpdf(x)
    with pytest.raises(TypeError, match="unexpected keyword argument 'mu'"):
        ds.norm.logpdf(x, mu=1.0)
    with pytest.raises(TypeError, match="multiple values"):
        ds.norm.logpdf(x, 0.0, loc=1.0)


@pytest.mark.parametrize("name", sorted(CONTINUOUS))
def test_derivatives_in_x_loc_scale_and_shapes_to_order_2(name):
    shapes, (lo, hi) = CONTINUOUS[name]
    D = getattr(ds, name)
    x = RNG.uniform(lo + 0.3, hi - 0.3, size=3)
    args = (x, np.float64(LOC), np.float64(SCALE))
    for m in METHODS:
        sh = tuple(np.float64(s) for s in shapes) if m in ("logpdf", "pdf") else ()

        def f(x, loc, scale, *s, m=m):
            return getattr(D, m)(x, *(s or shapes), loc=loc, scale=scale)
        check_grads(f, args + sh, order=2)
    q = np.array([0.2, 0.55, 0.8])
    for m in ("ppf", "isf"):
        check_grads(lambda q, loc, scale, m=m: getattr(D, m)(q, *shapes, loc=loc, scale=scale),
                    (q, np.float64(LOC), np.float64(SCALE)), order=2)


def test_closed_form_gradients():
    x, loc, scale = np.array([-0.4, 0.3, 1.9]), 0.2, 1.7
    z = (x - loc) / scale
    gx, gl, gs = dualad.grad(lambda x, l, s: np.sum(ds.norm.logpdf(x, l, s)), argnums=(0, 1, 2))(
        x, loc, scale)
    np.testing.assert_allclose(gx, -z / scale, rtol=1e-13)
    np.testing.assert_allclose(gl, np.sum(z / scale), rtol=1e-13)
    np.testing.assert_allclose(gs, np.sum((z * z - 1) / scale), rtol=1e-13)
    # derivative of each distribution function in x is the density
    for name, shapes in [("t", (2.5,)), ("gamma", (1.7,)), ("beta", (2.0, 0.8)), ("chi2", (4.0,)),
                         ("logistic", ()), ("cauchy", ()), ("laplace", ())]:
        D = getattr(ds, name)
        xs = np.array([0.15, 0.35, 0.6])
        np.testing.assert_allclose(dualad.grad(lambda x: np.sum(D.cdf(x, *shapes)))(xs),
                                   getattr(ss, name).pdf(xs, *shapes), rtol=1e-11, err_msg=name)
        _, t = dualad.jvp(lambda x: D.sf(x, *shapes), (xs,), (np.ones(3),))
        np.testing.assert_allclose(t, -getattr(ss, name).pdf(xs, *shapes), rtol=1e-11)
    # shape parameters in the densities
    xs, a, b = np.array([0.2, 0.7]), 2.3, 0.9
    ga = dualad.grad(lambda a: np.sum(ds.gamma.logpdf(xs, a)))(a)
    np.testing.assert_allclose(ga, np.sum(np.log(xs) - sc.psi(a)), rtol=1e-13)
    ga, gb = dualad.grad(lambda a, b: np.sum(ds.beta.logpdf(xs, a, b)), argnums=(0, 1))(a, b)
    np.testing.assert_allclose(ga, np.sum(np.log(xs) - sc.psi(a) + sc.psi(a + b)), rtol=1e-13)
    np.testing.assert_allclose(gb, np.sum(np.log1p(-xs) - sc.psi(b) + sc.psi(a + b)), rtol=1e-13)
    nu = 3.3
    gnu = dualad.grad(lambda nu: ds.t.logpdf(0.7, nu))(nu)
    want = 0.5 * (sc.psi((nu + 1) / 2) - sc.psi(nu / 2) - 1 / nu - np.log1p(0.49 / nu)
                  + (nu + 1) * 0.49 / (nu * nu * (1 + 0.49 / nu)))
    np.testing.assert_allclose(gnu, want, rtol=1e-12)


def test_outside_the_support_the_derivative_is_zero_and_inside_untouched():
    x = np.array([-1.0, 0.5, 2.0])
    _, t = dualad.jvp(lambda x: ds.gamma.logpdf(x, 2.5), (x,), (np.ones(3),))
    (g,) = dualad.vjp(lambda x: ds.gamma.logpdf(x, 2.5), x)[1](np.ones(3))
    for d in (t, g):
        assert d[0] == 0.0 and np.all(np.isfinite(d))
        np.testing.assert_allclose(d[1:], 1.5 / x[1:] - 1.0, rtol=1e-13)
    ga = dualad.grad(lambda a: np.sum(np.where(x > 0, ds.gamma.logpdf(x, a), 0.0)))(2.5)
    np.testing.assert_allclose(ga, np.sum(np.log(x[1:]) - sc.psi(2.5)), rtol=1e-13)
    for m in ("cdf", "sf"):
        gx = dualad.grad(lambda x, m=m: np.sum(getattr(ds.beta, m)(x, 2.0, 3.0)))(
            np.array([-0.5, 0.4, 1.5]))
        assert gx[0] == 0.0 and gx[2] == 0.0 and gx[1] != 0.0
    gl = dualad.grad(lambda loc: ds.uniform.logpdf(3.0, loc, 1.0))(0.0)
    assert gl == 0.0


@given(st.floats(-3, 3), st.floats(-1, 1), st.floats(0.2, 3))
def test_norm_cdf_derivatives_are_the_density(x, loc, scale):
    gx, gl, gs = dualad.grad(ds.norm.cdf, argnums=(0, 1, 2))(x, loc, scale)
    pdf = ss.norm.pdf(x, loc, scale)
    assert np.isclose(gx, pdf, rtol=1e-12) and np.isclose(gl, -pdf, rtol=1e-12)
    assert np.isclose(gs, -pdf * (x - loc) / scale, rtol=1e-12, atol=1e-300)


def test_shape_parameters_of_distribution_functions_are_not_differentiable():
    for f in (lambda a: ds.gamma.sf(0.3, a),
              lambda a: ds.beta.cdf(0.3, a, 2.0), lambda df: ds.chi2.ppf(0.3, df)):
        with pytest.raises(NotDifferentiableError, match="not differentiable"):
            dualad.grad(f)(2.0)


# --- poisson -------------------------------------------------------------------------------
def test_poisson_values_and_gradients_in_mu():
    k = np.array([-1, 0, 1, 2.5, 3, 7])
    for m in ("logpmf", "pmf", "cdf", "logcdf", "sf", "logsf"):
        for mu in (2.3, np.array([0.0, 0.5, 1.0, 2.0, 3.0, -1.0])):
            with np.errstate(all="ignore"):
                np.testing.assert_allclose(getattr(ds.poisson, m)(k, mu),
                                           getattr(ss.poisson, m)(k, mu), rtol=1e-11, err_msg=m)
        np.testing.assert_allclose(getattr(ds.poisson, m)(k, 2.3, loc=1),
                                   getattr(ss.poisson, m)(k, 2.3, loc=1), rtol=1e-11)
    kk, mu = np.array([0.0, 1.0, 4.0]), 2.3
    _, dlog = dualad.jvp(lambda mu: ds.poisson.logpmf(kk, mu), (mu,), (1.0,))
    np.testing.assert_allclose(dlog, kk / mu - 1, rtol=1e-13)
    g = dualad.grad(lambda mu: np.sum(ds.poisson.logpmf(kk, mu)))(mu)
    np.testing.assert_allclose(g, np.sum(kk / mu - 1), rtol=1e-13)
    k2 = np.array([0.0, 1.5, 4.0])
    _, dcdf = dualad.jvp(lambda mu: ds.poisson.cdf(k2, mu), (mu,), (1.0,))
    np.testing.assert_allclose(dcdf, -ss.poisson.pmf(np.floor(k2), mu), rtol=1e-12)
    g = dualad.grad(lambda mu: np.sum(ds.poisson.sf(k2, mu)))(mu)
    np.testing.assert_allclose(g, np.sum(ss.poisson.pmf(np.floor(k2), mu)), rtol=1e-12)
    assert dualad.grad(lambda mu: ds.poisson.pmf(0, mu))(0.0) == -1.0
    for m in ("logpmf", "pmf", "cdf", "logcdf", "sf", "logsf"):
        kk_m = kk if m in ("logpmf", "pmf") else k2   # a non-integer k has logpmf -inf
        check_grads(lambda mu, m=m, k=kk_m: getattr(ds.poisson, m)(k, mu),
                    (np.array([0.7, 2.0, 5.0]),))
    with pytest.raises(NotDifferentiableError, match="poisson.logpmf: k"):
        dualad.grad(lambda k: ds.poisson.logpmf(k, 2.0))(1.0)
    with pytest.raises(TypeError, match="missing shape parameter mu"):
        ds.poisson.pmf(1)


# --- multivariate normal -----------------------------------------------------------------------
def _spd(d, seed):
    A = np.random.default_rng(seed).standard_normal((d, d))
    return A @ A.T + d * np.eye(d)


def test_multivariate_normal_values_match_scipy_for_every_input_form():
    S, m = _spd(3, 1), np.array([0.3, -0.5, 1.0])
    X = RNG.standard_normal((2, 4, 3))
    cases = [(X, m, S), (X[0], m, S), (X[0, 0], m, S), (X[0], None, S), (X[0], m, 2.0),
             (X[0], m, np.array([1.0, 2.0, 0.5])), (np.array([0.1, 0.5, 0.9]), 0.2, 2.0),
             (0.1, 0.2, 2.0), (np.array([0.1, 0.4]), np.array([0.3, 0.0]), np.array([[2.0, 0.3],
                                                                               [0.3, 1.0]]))]
    for x, mean, cov in cases:
        got = ds.multivariate_normal.logpdf(x, mean, cov)
        want = ss.multivariate_normal.logpdf(x, mean, cov)
        np.testing.assert_allclose(got, want, rtol=1e-12)
        assert np.shape(got) == np.shape(want)
        np.testing.assert_allclose(ds.multivariate_normal.pdf(x, mean, cov),
                                   ss.multivariate_normal.pdf(x, mean, cov), rtol=1e-12)


def test_multivariate_normal_gradients_closed_forms():
    S, m, x = _spd(3, 2), np.array([0.3, -0.5, 1.0]), np.array([1.0, 0.2, -0.4])
    P = np.linalg.inv(S)
    r = x - m
    gx, gm, gS = dualad.grad(ds.multivariate_normal.logpdf, argnums=(0, 1, 2))(x, m, S)
    np.testing.assert_allclose(gx, -P @ r, rtol=1e-12)
    np.testing.assert_allclose(gm, P @ r, rtol=1e-12)
    np.testing.assert_allclose(gS, 0.5 * (P @ np.outer(r, r) @ P - P), rtol=1e-11, atol=1e-14)
    # forward mode: the same numbers, all 9 directions of cov in one sweep
    _, JS = dualad.jvp(lambda S: ds.multivariate_normal.logpdf(x, m, S), (S,),
                       (np.eye(9).reshape(9, 3, 3),))
    np.testing.assert_allclose(JS.reshape(3, 3), gS, rtol=1e-11, atol=1e-14)


def test_multivariate_normal_order_2_and_batches():
    S, m = _spd(3, 4), np.array([0.3, -0.5, 1.0])
    X = RNG.standard_normal((4, 3))
    check_grads(lambda X, m, S: ds.multivariate_normal.logpdf(X, m, S), (X, m, S), order=2)
    check_grads(lambda x, v: ds.multivariate_normal.logpdf(x, cov=v), (X[0], np.array([1.0, 2.0,
                                                                                      0.5])))
    T = RNG.standard_normal((5, 3, 3))
    f = lambda S: ds.multivariate_normal.logpdf(X, m, S)  # noqa: E731
    _, jb = dualad.jvp(f, (S,), (T,))
    for k in range(5):
        np.testing.assert_allclose(jb[k], dualad.jvp(f, (S,), (T[k],))[1], rtol=1e-12)


def test_multivariate_normal_errors():
    with pytest.raises(ValueError, match="not positive definite"):
        ds.multivariate_normal.logpdf(np.zeros(2), cov=np.array([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(ValueError, match="does not have the dimension 3"):
        ds.multivariate_normal.logpdf(np.zeros(2), np.zeros(3), np.eye(3))
    with pytest.raises(ValueError, match="does not match the dimension"):
        ds.multivariate_normal.logpdf(np.zeros(3), np.zeros(3), np.eye(2))


# --- dirichlet -------------------------------------------------------------------------------
def test_dirichlet_values_and_gradients():
    alpha = np.array([1.5, 2.0, 0.7])
    X = np.array([[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]]).T        # components along axis 0
    for x in (X, X[:2], X[:, 0], X[:2, 0]):
        np.testing.assert_allclose(ds.dirichlet.logpdf(x, alpha), ss.dirichlet.logpdf(x, alpha),
                                   rtol=1e-13)
        np.testing.assert_allclose(ds.dirichlet.pdf(x, alpha), ss.dirichlet.pdf(x, alpha),
                                   rtol=1e-13)
    x = X[:, 0]
    gx, ga = dualad.grad(ds.dirichlet.logpdf, argnums=(0, 1))(x, alpha)
    np.testing.assert_allclose(ga, sc.psi(alpha.sum()) - sc.psi(alpha) + np.log(x), rtol=1e-13)
    np.testing.assert_allclose(gx, (alpha - 1) / x, rtol=1e-13)
    # K-1 components: the last is 1 - Σ, differentiated through
    g2 = dualad.grad(ds.dirichlet.logpdf)(x[:2], alpha)
    np.testing.assert_allclose(g2, (alpha[:2] - 1) / x[:2] - (alpha[2] - 1) / x[2], rtol=1e-13)
    check_grads(ds.dirichlet.logpdf, (X[:2], alpha), order=2)


def test_dirichlet_errors_as_scipy():
    alpha = np.array([1.5, 2.0, 0.7])
    for x, msg in [(np.array([0.2, 0.3, 0.6]), "simplex"), (np.array([0.5, 0.6, -0.1]), "zero"),
                   (np.array([0.5, 0.5, 0.0]), "greater than zero if its alpha"),
                   (np.array([0.5, 0.4]), None), (np.ones(5) / 5, "same number of entries")]:
        if msg is None:
            ds.dirichlet.logpdf(x, alpha)
            continue
        with pytest.raises(ValueError, match=msg):
            ds.dirichlet.logpdf(x, alpha)
    with pytest.raises(ValueError, match="greater than 0"):
        ds.dirichlet.logpdf(np.array([0.5, 0.5]), np.array([1.0, -1.0]))
