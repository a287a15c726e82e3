"""boxcox, boxcox1p, inv_boxcox, inv_boxcox1p, stdtr/stdtrit in df, owens_t, spence,
lambertw and Riemann's and Hurwitz's zeta in x: values equal to SciPy's (plain, traced, and
through SciPy's own ufuncs), finite differences to order 2 in both modes, closed forms and
mpmath at higher orders, the limits (λ → 0, z → 1, z → 0), complex arguments, the errors.
The registry test runs check_rule on each primitive's samples."""
import mpmath as mp
import numpy as np
import pytest
import scipy.special as sc
import scipy.stats as ss
import sympy
from hypothesis import given, strategies as st

import dualad
import dualad.scipy.special as ds
import dualad.scipy.stats as dst
from dualad.ops.special.common import NotDifferentiableError
from dualad.core.primitive import REGISTRY
from dualad.verification import check_grads, check_rule
from dualad.verification.symbolic import Sym, SymbolicTrace, symbols_like

pytestmark = pytest.mark.slow   # per-primitive rule checks: in the full suite, not the quick subset

mp.mp.dps = 40
X = np.array([0.3, 1.7, 4.2])
LAM = np.array([-0.8, 0.0, 1.3])


def _rev(f, n):
    """The n-th derivative of a scalar function by nested reverse sweeps."""
    for _ in range(n):
        f = dualad.grad(f)
    return f


def _both(f, n, x):
    """n-th derivative by nested forward sweeps and by nested reverse sweeps."""
    return dualad.derivative(f, n)(x), _rev(f, n)(x)


# --- values and dispatch -----------------------------------------------------------------------
CASES = {  # name: plain args; differentiable positions
    "boxcox": ((X, LAM), (0, 1)), "boxcox1p": ((X - 0.5, LAM), (0, 1)),
    "inv_boxcox": ((np.array([-0.4, 0.2, 1.1]), np.array([-0.5, 0.0, 0.4])), (0, 1)),
    "inv_boxcox1p": ((np.array([-0.4, 0.2, 1.1]), np.array([-0.5, 0.0, 0.4])), (0, 1)),
    "stdtr": ((np.array([0.8, 2.5, 30.0]), np.array([-1.3, 0.4, 2.2])), (0, 1)),
    "stdtrit": ((np.array([0.8, 2.5, 30.0]), np.array([0.1, 0.55, 0.97])), (0, 1)),
    "owens_t": ((np.array([-1.2, 0.3, 2.0]), np.array([0.5, -1.5, 3.0])), (0, 1)),
    "spence": ((np.array([0.2, 1.0, 2.7]),), (0,)),
    "lambertw": ((np.array([-0.3, 0.0, 2.5]),), (0,)),
    "zeta": ((np.array([1.5, 2.0, 3.3]), np.array([0.4, 1.0, 2.5])), (0, 1)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_are_scipys_plain_traced_and_through_scipy(name):
    args, diff = CASES[name]
    want = getattr(sc, name)(*args)
    np.testing.assert_array_equal(getattr(ds, name)(*args), want)

    def via(fn):
        def f(*xs):
            full = list(args)
            for i, x in zip(diff, xs):
                full[i] = x
            return fn(*full)
        return f
    primals = tuple(args[i] for i in diff)
    tangents = tuple(np.ones(3) for _ in diff)
    for fn in (getattr(ds, name), getattr(sc, name)):
        value, t = dualad.jvp(via(fn), primals, tangents)
        np.testing.assert_array_equal(value, want)
        _, t2 = dualad.jvp(via(getattr(ds, name)), primals, tangents)
        np.testing.assert_allclose(t, t2, rtol=1e-15)


@pytest.mark.parametrize("name", sorted(CASES))
def test_order_2_both_modes_against_finite_differences(name):
    args, diff = CASES[name]
    fn = getattr(ds, name)

    def f(*xs):
        full = list(args)
        for i, x in zip(diff, xs):
            full[i] = x
        return fn(*full)
    check_grads(f, tuple(args[i] for i in diff), order=2)


def test_riemann_zeta_order_2_and_the_scipy_function():
    check_grads(ds.zeta, (np.array([-3.3, -0.2, 0.6, 1.5, 4.0]),), order=2)
    x = np.array([-2.5, 0.3, 2.0])
    np.testing.assert_array_equal(dualad.jvp(sc.zeta, (x,), (np.ones(3),))[1],
                                  dualad.jvp(ds.zeta, (x,), (np.ones(3),))[1])


# --- Box-Cox: closed forms and the limit λ → 0 -------------------------------------------------
def _mp_boxcox(x, lam, one_p=False):
    x = mp.mpf(x) + (1 if one_p else 0)
    return mp.log(x) if lam == 0 else (x ** lam - 1) / lam


def test_boxcox_closed_forms():
    x, lam = X[:, None], np.array([-0.8, 0.4, 1.3])[None, :]
    gx, gl = dualad.grad(lambda x, lm: np.sum(ds.boxcox(x, lm)), argnums=(0, 1))(x, lam)
    np.testing.assert_allclose(gx, np.sum(x ** (lam - 1), axis=1, keepdims=True), rtol=1e-13)
    want = x ** lam * np.log(x) / lam - (x ** lam - 1) / lam ** 2
    np.testing.assert_allclose(gl, np.sum(want, axis=0, keepdims=True), rtol=1e-12)
    g1 = dualad.grad(lambda x, lm: np.sum(ds.boxcox1p(x, lm)), argnums=(0, 1))(x - 0.5, lam)
    np.testing.assert_allclose(g1[0], np.sum((x + 0.5) ** (lam - 1), axis=1, keepdims=True),
                               rtol=1e-13)


@pytest.mark.parametrize("lam", [0.0, 1e-12, -3e-9, 1e-4, 0.2, -0.5])
def test_boxcox_lambda_derivatives_near_zero_are_exact_to_order_3(lam):
    for x in (0.4, 2.0, 9.0):
        for n in (1, 2, 3):
            if lam == 0:
                want = float(mp.log(x) ** (n + 1) / (n + 1))      # (log x)ⁿ⁺¹/(n+1)
                want1p = float(mp.log(1 + x) ** (n + 1) / (n + 1))
            else:
                want = float(mp.diff(lambda lm: _mp_boxcox(x, lm), mp.mpf(lam), n))
                want1p = float(mp.diff(lambda lm: _mp_boxcox(x, lm, True), mp.mpf(lam), n))
            for got in _both(lambda lm: ds.boxcox(x, lm), n, lam):
                assert np.isclose(got, want, rtol=1e-13, atol=1e-15), (x, n, got, want)
            for got in _both(lambda lm: ds.boxcox1p(x, lm), n, lam):
                assert np.isclose(got, want1p, rtol=1e-13, atol=1e-15), (x, n, got, want1p)


def test_boxcox_at_the_switch_between_series_and_closed_form():
    # |λ log x| = 1 is where the rule changes formula: both sides agree with mpmath
    x = np.e ** 2
    for lam in (0.5 - 1e-9, 0.5 + 1e-9, -0.5 + 1e-9, -0.5 - 1e-9):
        for n in (1, 2):
            want = float(mp.diff(lambda lm: _mp_boxcox(x, lm), mp.mpf(lam), n))
            for got in _both(lambda lm: ds.boxcox(x, lm), n, lam):
                assert np.isclose(got, want, rtol=1e-12)


def test_inverse_boxcox_derivatives_and_the_lambda_zero_limit():
    y = np.array([-0.4, 0.2, 1.1])
    gy, gl = dualad.grad(lambda y, lm: np.sum(ds.inv_boxcox(y, lm)), argnums=(0, 1))(y, 0.0)
    np.testing.assert_allclose(gy, np.exp(y), rtol=1e-14)
    np.testing.assert_allclose(gl, np.sum(-np.exp(y) * y ** 2 / 2), rtol=1e-13)
    gy, gl = dualad.grad(lambda y, lm: np.sum(ds.inv_boxcox1p(y, lm)), argnums=(0, 1))(y, 0.0)
    np.testing.assert_allclose(gy, np.exp(y), rtol=1e-14)
    np.testing.assert_allclose(gl, np.sum(-np.exp(y) * y ** 2 / 2), rtol=1e-13)
    for lam in (0.0, 1e-10, 0.3, -0.45):
        for yy in (-0.4, 1.1):
            for name, shift in (("inv_boxcox", 0), ("inv_boxcox1p", 1)):
                def inv(lm, yy=yy, shift=shift):
                    return mp.exp(yy) - shift if lm == 0 else (1 + lm * yy) ** (1 / lm) - shift
                for n in (1, 2):
                    want = float(mp.diff(inv, mp.mpf(lam), n))
                    for got in _both(lambda lm: getattr(ds, name)(yy, lm), n, lam):
                        assert np.isclose(got, want, rtol=1e-12, atol=1e-15), (name, lam, n)
    # a round trip is the identity, in both arguments
    x, lam = np.array([0.5, 3.0]), np.array([0.0, -0.7])
    gx, gl = dualad.grad(lambda x, lm: np.sum(ds.inv_boxcox(ds.boxcox(x, lm), lm)),
                         argnums=(0, 1))(x, lam)
    np.testing.assert_allclose(gx, 1.0, rtol=1e-13)
    np.testing.assert_allclose(gl, 0.0, atol=1e-13)


@given(st.floats(0.1, 10.0), st.floats(-2.0, 2.0), st.sampled_from([0.0, 1e-9, -1e-5]))
def test_boxcox_round_trip_is_the_identity(x, lam, nudge):
    """inv_boxcox(boxcox(x, λ), λ) = x for every λ, also at and next to 0: ∂x = 1, ∂λ = 0."""
    lam = nudge if abs(lam) < 0.1 else lam
    for inv, fwd in ((ds.inv_boxcox, ds.boxcox), (ds.inv_boxcox1p, ds.boxcox1p)):
        gx, gl = dualad.grad(lambda x, lm: inv(fwd(x, lm), lm), argnums=(0, 1))(x, lam)
        assert np.isclose(gx, 1.0, rtol=1e-10) and abs(gl) <= 1e-10 * max(1.0, x)


@given(st.floats(0.05, 20.0))
def test_spence_reflection_identity(z):
    """spence(z) + spence(1/z) = -π²/6 - log²(z)/2 (z > 0), differentiated twice."""
    f = lambda z: ds.spence(z) + ds.spence(1.0 / z)  # noqa: E731
    assert np.isclose(dualad.grad(f)(z), -np.log(z) / z, rtol=1e-11, atol=1e-14)
    assert np.isclose(dualad.derivative(f, 2)(z), (np.log(z) - 1) / z ** 2, rtol=1e-10,
                      atol=1e-13)


def test_boxcox_at_x_zero_is_the_one_sided_limit():
    with np.errstate(divide="ignore", invalid="ignore"):
        for lam, want in ((2.0, 0.0), (1.0, 1.0), (0.5, np.inf)):
            assert dualad.grad(lambda x: ds.boxcox(x, lam))(0.0) == want
        assert np.isclose(dualad.grad(lambda lm: ds.boxcox(0.0, lm))(0.5), 4.0, rtol=1e-14)
        assert np.isclose(dualad.grad(lambda lm: ds.boxcox1p(-1.0, lm))(0.5), 4.0, rtol=1e-14)
        assert np.isnan(dualad.grad(lambda x: ds.boxcox(x, 0.5))(-1.0))   # SciPy: nan


# --- Student's t: stdtr and stdtrit in df, t.ppf / t.isf ----------------------------------------
def _mp_stdtr(v, t):
    v, t = mp.mpf(v), mp.mpf(t)
    tail = mp.betainc(v / 2, mp.mpf(1) / 2, 0, v / (v + t * t), regularized=True) / 2
    return 1 - tail if t > 0 else tail


def test_stdtr_df_derivatives_against_mpmath_to_order_3():
    for v, t in [(0.6, 1.4), (2.5, -0.7), (4.0, 12.0), (30.0, 2.0), (1.0, 1e4)]:
        for n in (1, 2, 3):
            want = float(mp.diff(lambda vv: _mp_stdtr(vv, t), mp.mpf(v), n))
            for got in _both(lambda vv: ds.stdtr(vv, t), n, v):
                assert np.isclose(got, want, rtol=1e-11), (v, t, n, got, want)
    # mixed: ∂t∂ν stdtr = ∂ν of the density
    v, t = 3.5, 0.9
    g = dualad.grad(dualad.grad(ds.stdtr, argnums=1), argnums=0)(v, t)
    want = float(mp.diff(lambda vv: mp.diff(lambda tt: _mp_stdtr(vv, tt), mp.mpf(t)),
                         mp.mpf(v)))
    assert np.isclose(g, want, rtol=1e-10)


def test_stdtrit_derivatives_are_implicit_differentiation():
    df, p = np.array([0.8, 2.5, 7.0, 30.0]), np.array([0.02, 0.4, 0.75, 0.999])
    t = sc.stdtrit(df, p)
    gdf, gp = dualad.grad(lambda d, p: np.sum(ds.stdtrit(d, p)), argnums=(0, 1))(df, p)
    np.testing.assert_allclose(gp, 1.0 / ss.t.pdf(t, df), rtol=1e-12)
    for k in range(4):
        dF = mp.diff(lambda v: _mp_stdtr(v, t[k]), mp.mpf(df[k]))
        assert np.isclose(gdf[k], float(-dF) / ss.t.pdf(t[k], df[k]), rtol=1e-10)
    # stdtr(ν, stdtrit(ν, p)) = p for every ν: its derivatives are 0 in ν and 1 in p
    for d in (dualad.grad(lambda d: np.sum(ds.stdtr(d, ds.stdtrit(d, p))))(df),
              dualad.jvp(lambda d: ds.stdtr(d, ds.stdtrit(d, p)), (df,), (np.ones(4),))[1]):
        np.testing.assert_allclose(d, 0.0, atol=1e-12)
    for h in _both(lambda d: ds.stdtr(d, ds.stdtrit(d, 0.3)), 2, 2.5):
        assert abs(h) < 1e-10


def test_stdtr_df_derivative_far_in_the_tails_keeps_its_relative_accuracy():
    for v, t in [(3.0, 1e3), (0.4, 1e8), (12.0, -80.0)]:
        want = float(mp.diff(lambda vv: _mp_stdtr(vv, t), mp.mpf(v)))
        assert np.isclose(dualad.grad(lambda vv: ds.stdtr(vv, t))(v), want, rtol=1e-12)
    assert dualad.grad(lambda v: ds.stdtr(v, np.inf))(3.0) == 0.0


def test_t_ppf_isf_closed_forms_and_values():
    q = np.array([0.0, 0.1, 0.5, 0.8, 1.0])
    for m in ("ppf", "isf"):
        np.testing.assert_allclose(getattr(dst.t, m)(q, 2.5, 0.3, 1.7),
                                   getattr(ss.t, m)(q, 2.5, 0.3, 1.7), rtol=1e-14)
    qs = q[1:-1]
    # df = 1 is Cauchy: ppf = tan(π(q − ½)), ∂q = π/cos²
    gq = dualad.grad(lambda q: np.sum(dst.t.ppf(q, 1.0)))(qs)
    np.testing.assert_allclose(gq, np.pi / np.cos(np.pi * (qs - 0.5)) ** 2, rtol=1e-12)
    # in loc and scale, isf = -ppf of the standard
    gq, gdf, gl, gs = dualad.grad(lambda *a: np.sum(dst.t.isf(*a)), argnums=(0, 1, 2, 3))(
        qs, 4.0, 0.3, 1.7)
    z = ss.t.isf(qs, 4.0)
    np.testing.assert_allclose(gq, -1.7 / ss.t.pdf(z, 4.0), rtol=1e-12)
    assert gl == 3.0 and np.isclose(gs, np.sum(z), rtol=1e-13)
    want = sum(float(mp.diff(lambda v: mp.findroot(lambda t: _mp_stdtr(v, t) - (1 - qq), z[i]),
                             mp.mpf(4.0))) for i, qq in enumerate(qs))
    assert np.isclose(gdf, 1.7 * want, rtol=1e-10)
    # at q = 0 and 1 the value and the derivative are infinite (scipy.stats' ends)
    with np.errstate(all="ignore"):
        assert dualad.grad(lambda q: dst.t.ppf(q, 3.0))(0.0) == np.inf
        assert dualad.grad(lambda q: dst.t.ppf(q, 3.0))(1.0) == np.inf


# --- Owen's T -----------------------------------------------------------------------------------
def test_owens_t_closed_forms():
    h, a = np.array([-1.2, 0.3, 2.0]), np.array([0.5, -1.5, 3.0])
    gh, ga = dualad.grad(lambda h, a: np.sum(ds.owens_t(h, a)), argnums=(0, 1))(h, a)
    phi = np.exp(-h * h / 2) / np.sqrt(2 * np.pi)
    np.testing.assert_allclose(gh, -phi * sc.erf(a * h / np.sqrt(2)) / 2, rtol=1e-13)
    np.testing.assert_allclose(ga, np.exp(-h * h * (1 + a * a) / 2) / (2 * np.pi * (1 + a * a)),
                               rtol=1e-13)
    # T(0, a) = arctan(a)/(2π) and T(h, 1) = Φ(h)(1 − Φ(h))/2, differentiated
    x = np.array([-0.7, 0.4, 2.2])
    np.testing.assert_allclose(dualad.grad(lambda a: np.sum(ds.owens_t(0.0, a)))(x),
                               1 / (2 * np.pi * (1 + x * x)), rtol=1e-14)
    np.testing.assert_allclose(dualad.grad(lambda h: np.sum(ds.owens_t(h, 1.0)))(x),
                               ss.norm.pdf(x) * (1 - 2 * ss.norm.cdf(x)) / 2, rtol=1e-12)
    for n in (2, 3):
        want = float(mp.diff(lambda t: mp.quad(lambda s: mp.exp(-t * t * (1 + s * s) / 2) /
                                               (1 + s * s), [0, 0.8]) / (2 * mp.pi),
                             mp.mpf(0.6), n))
        for got in _both(lambda h: ds.owens_t(h, 0.8), n, 0.6):
            assert np.isclose(got, want, rtol=1e-11)


# --- spence: the limit z → 1 ----------------------------------------------------------------------
def test_spence_derivative_and_its_limit_at_one():
    z = np.array([0.2, 0.9, 1.5, 2.7])
    np.testing.assert_allclose(dualad.grad(lambda z: np.sum(ds.spence(z)))(z),
                               np.log(z) / (1 - z), rtol=1e-14)
    # spence' = −Σ (1−z)ᵏ/(k+1): at z = 1 the derivatives are −1, ½, −⅔, 3/2
    for n, want in ((1, -1.0), (2, 0.5), (3, -2 / 3), (4, 1.5)):
        for got in _both(ds.spence, n, 1.0):
            assert np.isclose(got, want, rtol=1e-14), (n, got)
    for z0 in (1 + 1e-9, 1 - 3e-7, 1.049, 1.051, 0.95):
        for n in (1, 2, 3):
            want = float(mp.diff(lambda t: mp.polylog(2, 1 - t), mp.mpf(z0), n))
            for got in _both(ds.spence, n, z0):
                assert np.isclose(got, want, rtol=1e-12), (z0, n, got, want)
    with np.errstate(divide="ignore", invalid="ignore"):
        assert dualad.grad(ds.spence)(0.0) == -np.inf
        assert np.isnan(dualad.grad(ds.spence)(-1.0))


def test_spence_is_holomorphic():
    z = np.array([0.5 + 0.8j, 1.0 + 0.01j, 2.0 - 1.0j])
    g = np.array([dualad.grad(ds.spence, holomorphic=True)(zk) for zk in z])
    np.testing.assert_allclose(g, np.log(z) / (1 - z), rtol=1e-13)
    check_grads(ds.spence, (z,), order=2)


# --- Lambert W: complex values, every branch ----------------------------------------------------
def test_lambertw_derivative_every_branch_and_at_zero():
    x = np.array([-0.2, 0.5, 3.0])
    for k in (0, 1, -1, 2):
        w = sc.lambertw(x, k)
        _, t = dualad.jvp(lambda x: ds.lambertw(x, k), (x,), (np.ones(3),))
        np.testing.assert_allclose(t, w / (x * (1 + w)), rtol=1e-13)
        _, t = dualad.jvp(lambda x: sc.lambertw(x, k), (x,), (np.ones(3),))   # SciPy's own
        np.testing.assert_allclose(t, w / (x * (1 + w)), rtol=1e-13)
        z = x + 0.7j
        g = np.array([dualad.grad(lambda z: ds.lambertw(z, k), holomorphic=True)(zk) for zk in z])
        wz = sc.lambertw(z, k)
        np.testing.assert_allclose(g, wz / (z * (1 + wz)), rtol=1e-13)
    # W'(0) = 1, W''(0) = −2, W'''(0) = 9, in both modes (the real part of a real-input call)
    for n, want in ((1, 1.0), (2, -2.0), (3, 9.0)):
        assert dualad.derivative(ds.lambertw, n)(0.0) == want
        assert np.isclose(_rev(lambda x: np.real(ds.lambertw(x)), n)(0.0), want, rtol=1e-14)


def test_lambertw_real_input_complex_output_convention():
    x = np.array([-0.3, 0.5, 2.0])
    w = sc.lambertw(x)
    value, t = dualad.jvp(ds.lambertw, (x,), (np.ones(3),))
    assert np.iscomplexobj(value) and np.iscomplexobj(t)
    # reverse mode: a real input's cotangent is the real part of ū·W'
    u = np.array([1.0 + 2.0j, -0.5j, 3.0])
    (c,) = dualad.vjp(ds.lambertw, x)[1](u)
    assert not np.iscomplexobj(c)
    np.testing.assert_allclose(c, np.real(u * w / (x * (1 + w))), rtol=1e-13)
    # W(x eˣ) = x on the principal branch (x > −1): the composition's derivative is 1
    y = np.array([-0.5, 0.2, 1.5])
    g = dualad.grad(lambda y: np.sum(np.real(ds.lambertw(y * np.exp(y)))))(y)
    np.testing.assert_allclose(g, 1.0, rtol=1e-12)
    # below −1/e (on the cut) the derivative is that of the branch SciPy's value lies on
    check_grads(lambda x: ds.lambertw(x), (np.array([-0.9, -0.5]),), order=2)
    check_grads(lambda z: ds.lambertw(z, 1), (np.array([0.3 + 0.4j, -2.0 + 1.0j]),), order=2)


# --- zeta in x: Riemann and Hurwitz ------------------------------------------------------------
def test_riemann_zeta_derivatives_against_mpmath_and_known_values():
    for x in (-7.5, -2.0, -0.5, 0.0, 0.4, 0.99, 1.01, 1.5, 2.0, 6.0, 30.0):
        for n in (1, 2, 3):
            want = float(mp.zeta(x, 1, n))
            for got in _both(ds.zeta, n, x):
                assert np.isclose(got, want, rtol=2e-13), (x, n, got, want)
    assert np.isclose(dualad.grad(ds.zeta)(0.0), -0.5 * np.log(2 * np.pi), rtol=1e-14)
    assert np.isclose(dualad.grad(ds.zeta)(-2.0), -sc.zeta(3.0) / (4 * np.pi ** 2), rtol=1e-13)
    x = np.linspace(1.05, 12.0, 40)                    # near machine precision for x > 1
    got = dualad.grad(lambda x: np.sum(ds.zeta(x)))(x)
    want = np.array([float(mp.zeta(v, 1, 1)) for v in x])
    np.testing.assert_allclose(got, want, rtol=4e-15)
    with np.errstate(all="ignore"):
        assert not np.isfinite(dualad.grad(ds.zeta)(1.0))     # the pole


def test_hurwitz_zeta_in_x_and_the_mixed_derivatives():
    x, q = np.array([1.3, 2.0, 4.5]), np.array([0.2, 1.0, 3.5])
    gx, gq = dualad.grad(lambda x, q: np.sum(ds.zeta(x, q)), argnums=(0, 1))(x, q)
    np.testing.assert_allclose(gx, [float(mp.zeta(a, b, 1)) for a, b in zip(x, q)], rtol=1e-14)
    np.testing.assert_allclose(gq, -x * sc.zeta(x + 1, q), rtol=1e-13)
    h = dualad.grad(dualad.grad(lambda x, q: ds.zeta(x, q), argnums=0), argnums=1)(2.5, 0.7)
    assert np.isclose(h, float(mp.diff(lambda a, b: mp.zeta(a, b), (2.5, 0.7), (1, 1))),
                      rtol=1e-12)


# --- the SymPy oracle: second derivatives on symbols, SciPy evaluating ---------------------------
def _second_on_symbols(f, point):
    """d²f/dx² by forward-over-forward on a symbol against sympy.diff, both at ``point``."""
    trace = SymbolicTrace()
    s = symbols_like((), "x0")
    first = lambda x: dualad.jvp(f, (x,), (np.float64(1.0),))[1]  # noqa: E731
    d2 = dualad.jvp(first, (Sym(trace, s),), (np.float64(1.0),))[1]
    sym = s.item()
    ref = sympy.diff(f(Sym(SymbolicTrace(), s)).expr.item(), sym, 2)
    ev = [complex(sympy.lambdify([sym], e, modules=["scipy", "numpy"])(point))
          for e in (d2.expr.item(), ref)]
    return ev


@pytest.mark.parametrize("f,point", [
    (lambda lm: ds.boxcox(2.5, lm), 0.3), (lambda lm: ds.boxcox(2.5, lm), 0.8),
    (lambda x: ds.boxcox(x, -0.6), 1.7), (lambda lm: ds.boxcox1p(0.4, lm), -0.2),
    (lambda lm: ds.inv_boxcox(0.7, lm), 0.4), (lambda y: ds.inv_boxcox1p(y, 0.3), 0.9),
    (ds.spence, 0.4), (ds.spence, 1.02), (ds.lambertw, 0.6), (lambda z: ds.lambertw(z, 1), 2.0)])
def test_second_derivatives_match_sympy(f, point):
    got, want = _second_on_symbols(f, point)
    assert np.isclose(got, want, rtol=1e-9), (got, want)
    assert np.isclose(dualad.derivative(f, 2)(point), want, rtol=1e-9)


# --- the rule checker at more points, and the errors ---------------------------------------------
def test_check_rule_at_more_points():
    rng = np.random.default_rng(5)
    # (finite-difference steps scale with the largest entry: small and large df apart)
    cases = [("stdtr", (np.array([0.6, 1.0, 6.0]), rng.uniform(-8, 8, 3))),
             ("stdtr", (np.array([40.0, 60.0, 90.0]), rng.uniform(-8, 8, 3))),
             ("stdtrit", (np.array([0.5, 0.9, 3.0]), np.array([0.05, 0.3, 0.97]))),
             ("stdtrit", (np.array([30.0, 100.0]), np.array([0.02, 0.7]))),
             ("boxcox", (rng.uniform(0.05, 9, 4), np.array([0.0, 1e-7, -2.5, 4.0]))),
             ("inv_boxcox1p", (rng.uniform(-0.5, 2, 3), np.array([0.0, -1e-6, 0.3]))),
             ("spence", (np.array([0.99, 1.0, 1.01]),)),
             ("riemann_zeta", (np.array([-11.5, -0.5, 0.5, 1.2, 25.0]),)),
             ("lambertw", (np.array([-0.35, 1e-3, 2.0]), np.int64(0), 1e-8)),
             ("lambertw", (np.array([40.0, 300.0]), np.array([0, -1]), 1e-8))]
    for name, args in cases:
        report = check_rule(REGISTRY[name], args=args, sympy=False)
        assert report.ok, str(report)
    report = check_rule(REGISTRY["zeta_deriv"],
                        args=(4, np.array([1.5, 3.0]), np.array([0.5, 2.0])), sympy=False)
    assert report.ok, str(report)


def test_errors_name_the_function_and_argument():
    with pytest.raises(NotDifferentiableError, match="lambertw: k"):
        dualad.grad(lambda k: np.real(ds.lambertw(0.5, k)))(1.0)
    with pytest.raises(NotDifferentiableError, match="lambertw: tol"):
        dualad.grad(lambda t: np.real(ds.lambertw(0.5, 0, t)))(1e-8)
    with pytest.raises(NotDifferentiableError, match=r"stdtr_ddf: argument 0 \(n\)"):
        dualad.grad(lambda n: REGISTRY["stdtr_ddf"](n, 2.0, 0.5))(1.0)
    with pytest.raises(ValueError, match="stdtr_ddf: the order n must be a positive integer"):
        REGISTRY["stdtr_ddf"](0, 2.0, 0.5)
    with pytest.raises(ValueError, match="zeta_deriv: the order k must be an integer"):
        REGISTRY["zeta_deriv"](1.5, 2.0, 1.0)
    with pytest.raises(TypeError, match="owens_t: complex argument"):
        ds.owens_t(0.5 + 1j, 1.0)


def test_float32_stays_float32():
    x = np.array([0.5, 1.5], dtype=np.float32)
    for f in (lambda x: ds.boxcox(x, 0.5), lambda x: ds.boxcox1p(x, -1.5), ds.zeta,
              lambda x: ds.inv_boxcox(x, 0.5), lambda x: ds.owens_t(x, 0.5), ds.spence,
              lambda x: ds.stdtrit(3.0, x / 2), lambda x: ds.stdtr(x + 1, 0.5)):
        value, tangent = dualad.jvp(f, (x,), (np.ones(2, np.float32),))
        assert np.asarray(value).dtype == np.asarray(tangent).dtype == np.float32
