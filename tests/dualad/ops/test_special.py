"""scipy.special in both modes: values against SciPy, dispatch of SciPy's own ufuncs,
the SymPy oracle (first and second derivatives, with SciPy evaluating SymPy's special
functions), the rule checker at extra orders, and the documented conventions at poles,
kinks and ends of domains. The registry test runs check_rule on every primitive's
own samples (both modes, vector mode, broadcasting, order 2)."""
import mpmath
import numpy as np
import pytest
import scipy.special as sc
import sympy
from hypothesis import given, strategies as st

import dualad
import dualad.scipy.special as ds
from dualad.ops.special.common import NotDifferentiableError
from dualad.core.primitive import NUMPY_UFUNCS, REGISTRY
from dualad.verification import check_grads, check_rule
from dualad.verification.symbolic import (Sym, SymbolicTrace, rules_jacobian, sympy_jacobian,
                                          symbols_like)

RNG = np.random.default_rng(7)
X = (0.2, 4.0)
UNARY = {
    "gammaln": X, "loggamma": X, "digamma": X, "gamma": X, "rgamma": X,
    "erf": (-2, 2), "erfc": (-2, 2), "erfcx": (-2, 2), "erfi": (-2, 2), "dawsn": (-2, 2),
    "erfinv": (-0.9, 0.9), "erfcinv": (0.1, 1.9), "ndtr": (-3, 3), "log_ndtr": (-3, 3),
    "ndtri": (0.05, 0.95), "ndtri_exp": (-3, -0.05), "expit": (-4, 4), "logit": (0.05, 0.95),
    "log_expit": (-4, 4), "entr": X,
    "j0": X, "j1": X, "y0": X, "y1": X, "i0": X, "i1": X, "i0e": X, "i1e": X,
    "k0": X, "k1": X, "k0e": X, "k1e": X,
}
BINARY = {"beta": (X, X), "betaln": (X, X), "xlogy": ((-2, 2), X),
          "xlog1py": ((-2, 2), (-0.9, 3)), "rel_entr": (X, X), "kl_div": (X, X)}
REAL_ORDERS = np.array([0.0, 1.0, 2.5, -0.7])
ORDERED = {  # name: (plain first argument, domain of the differentiable one)
    "polygamma": (np.array([0, 1, 2, 3]), (0.5, 4)), "jv": (REAL_ORDERS, X),
    "yv": (REAL_ORDERS, X), "yn": (np.array([0, 1, 2, -3]), X), "iv": (REAL_ORDERS, X),
    "ive": (REAL_ORDERS, X), "kv": (REAL_ORDERS, X), "kve": (REAL_ORDERS, X),
    "gammainc": (np.array([0.5, 1.0, 2.5, 4.0]), X),
    "gammaincc": (np.array([0.5, 1.0, 2.5, 4.0]), X),
    "gammaincinv": (np.array([0.5, 1.0, 2.5, 4.0]), (0.1, 0.9)),
    "gammainccinv": (np.array([0.5, 1.0, 2.5, 4.0]), (0.1, 0.9)),
    "zeta": (np.array([1.5, 2.0, 3.0, 4.5]), (0.3, 3)),
    "stdtr": (np.array([1.0, 2.5, 4.0, 30.0]), (-3, 3)),
}
BETA_AB = (np.array([0.5, 1.0, 2.5, 4.0]), np.array([3.0, 0.7, 1.0, 2.0]))
TERNARY = {"betainc": (0.05, 0.95), "betaincc": (0.05, 0.95), "betaincinv": (0.05, 0.95)}
ALL = sorted(list(UNARY) + list(BINARY) + list(ORDERED) + list(TERNARY))


def _draw(dom, shape=(4,)):
    return RNG.uniform(dom[0] + 0.05, dom[1] - 0.05, size=shape)


def _call(name):
    """(plain args, index of the differentiable ones, f(*diff) -> value) for one function."""
    fn = getattr(ds, name)
    if name in UNARY:
        return [_draw(UNARY[name])], [0], fn
    if name in BINARY:
        return [_draw(d) for d in BINARY[name]], [0, 1], fn
    if name in ORDERED:
        order, dom = ORDERED[name]
        return [order, _draw(dom)], [1], lambda x: fn(order, x)
    return [*BETA_AB, _draw(TERNARY[name])], [2], lambda x: fn(*BETA_AB, x)


def _reference(name):
    return getattr(sc, name)


def test_every_function_is_registered_with_samples():
    for name in ALL:
        prim = REGISTRY[name]
        assert prim.samples and prim.elementwise, name
    assert isinstance(sc.gammaln, np.ufunc) and NUMPY_UFUNCS[sc.gammaln] is ds.gammaln


@pytest.mark.parametrize("name", ALL)
def test_value_matches_scipy_plain_and_traced(name):
    args, diff, f = _call(name)
    expected = _reference(name)(*args)
    np.testing.assert_array_equal(f(*[args[i] for i in diff]), expected)
    value, _ = dualad.jvp(f, tuple(args[i] for i in diff),
                          tuple(np.ones_like(args[i]) for i in diff))
    np.testing.assert_array_equal(value, expected)


@pytest.mark.parametrize("name", sorted(set(ALL) - {"polygamma"}))
def test_scipy_ufunc_on_traced_values_reaches_the_rule(name):
    """``scipy.special.<name>(traced)`` dispatches to the primitive: same value, JVP, VJP."""
    args, diff, f = _call(name)
    ufunc = _reference(name)
    assert isinstance(ufunc, np.ufunc) or name == "zeta"

    def via_scipy(*xs):
        full = list(args)
        for i, x in zip(diff, xs):
            full[i] = x
        return ufunc(*full)

    primals = tuple(args[i] for i in diff)
    tangents = tuple(RNG.standard_normal(np.shape(p)) for p in primals)
    v1, t1 = dualad.jvp(via_scipy, primals, tangents)
    v2, t2 = dualad.jvp(f, primals, tangents)
    np.testing.assert_array_equal(v1, v2)
    np.testing.assert_allclose(t1, t2, rtol=1e-14)
    g1 = dualad.grad(lambda *xs: np.sum(via_scipy(*xs)), argnums=tuple(range(len(diff))))(*primals)
    g2 = dualad.grad(lambda *xs: np.sum(f(*xs)), argnums=tuple(range(len(diff))))(*primals)
    np.testing.assert_allclose(np.asarray(g1), np.asarray(g2), rtol=1e-14)


# --- the SymPy oracle, with SciPy evaluating SymPy's special functions --------------------
def _lambdify(xs, expr):
    return sympy.lambdify(xs, expr, modules=["scipy", "numpy"])


def _sympy_oracle(f, values):
    """The rules' Jacobian on symbols (forward and reverse) against sympy.diff, both
    evaluated by SciPy at ``values`` (the registry's oracle evaluates with NumPy only)."""
    shapes = [np.shape(v) for v in values]
    J_sym, xs = sympy_jacobian(f, shapes)
    flat = [float(c) for v in values for c in np.ravel(v)]
    ref = np.asarray(_lambdify(xs, J_sym)(*flat), dtype=float)
    for mode in ("forward", "reverse"):
        J_ad, xs2 = rules_jacobian(f, shapes, mode=mode)
        names = {str(s): s for s in xs}
        J_ad = J_ad.xreplace({s: names[str(s)] for s in xs2})
        got = np.asarray(_lambdify(xs, J_ad)(*flat), dtype=float)
        np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-12, err_msg=mode)
    return J_sym


SYMPY = [n for n in ALL if REGISTRY[n].sympy is not None]


@pytest.mark.parametrize("name", SYMPY)
def test_rules_match_sympy_on_vectors(name):
    args, diff, f = _call(name)
    values = [args[i][:3] if np.ndim(args[i]) else args[i] for i in diff]
    if name in ORDERED or name in TERNARY:
        plain = [a[:3] for a in args[:-1]]
        fn = getattr(ds, name)
        J = _sympy_oracle(lambda x: fn(*plain, x), values)
    else:
        J = _sympy_oracle(f, values)
    assert J.shape[0] == 3


@pytest.mark.parametrize("name", sorted(n for n in BINARY))
def test_rules_match_sympy_broadcasting(name):
    x = _draw(BINARY[name][0], (2, 1))
    y = _draw(BINARY[name][1], (3,))
    J = _sympy_oracle(getattr(ds, name), [x, y])
    assert J.shape == (6, 5)


def test_sympy_oracle_on_the_functions_the_registry_leaves_out():
    # erfinv, erfcinv, ndtri, ndtri_exp: the registry's NumPy-only oracle cannot evaluate
    # their derivatives (erfinv inside); here SciPy does, on a scalar and a vector.
    for name in ("erfinv", "erfcinv", "ndtri", "ndtri_exp"):
        x = _draw(UNARY[name], (3,))
        _sympy_oracle(getattr(ds, name), [x])
        _sympy_oracle(getattr(ds, name), [x[0]])
        check_rule(REGISTRY[name], args=(np.asarray(x[0]),), sympy=False).raise_if_failed()


@pytest.mark.parametrize("name", sorted(n for n in UNARY if REGISTRY[n].sympy is not None))
def test_second_derivative_matches_sympy(name):
    """d²f/dx² by forward-over-forward on symbols against sympy.diff(f, x, 2)."""
    f = getattr(ds, name)
    trace = SymbolicTrace()
    s = symbols_like((), "x0")
    first = lambda x: dualad.jvp(f, (x,), (np.float64(1.0),))[1]  # noqa: E731
    d2 = dualad.jvp(first, (Sym(trace, s),), (np.float64(1.0),))[1]
    sym = s.item()
    ref = sympy.diff(REGISTRY[name].sympy(sympy, sym), sym, 2)
    ref = ref.replace(lambda e: isinstance(e, sympy.DiracDelta), lambda e: sympy.S.Zero)  # |x|
    pts = _draw(UNARY[name], (3,))
    got = [complex(_lambdify([sym], d2.expr.item())(p)) for p in pts]
    want = [complex(_lambdify([sym], ref)(p)) for p in pts]
    np.testing.assert_allclose(got, want, rtol=1e-9)
    np.testing.assert_allclose(np.real(got), dualad.derivative(f, 2)(pts), rtol=1e-9)


# --- the rule checker at more orders and parameters ----------------------------------------
EXTRA_ORDERS = [
    ("polygamma", 0), ("polygamma", 3), ("jv", -1.5), ("jv", 0), ("jv", 7.25), ("yv", 0.5),
    ("yn", 0), ("yn", -2), ("iv", 0), ("iv", -2.5), ("ive", 3), ("kv", 0), ("kv", 0.5),
    ("kve", -1.25), ("gammainc", 1.0), ("gammaincc", 0.3), ("gammaincinv", 6.0),
    ("zeta", 1.1), ("stdtr", 0.5),
]


@pytest.mark.parametrize("name,order", EXTRA_ORDERS)
def test_check_rule_at_more_orders(name, order):
    _, dom = ORDERED[name]
    x = _draw(dom, (3,))
    report = check_rule(REGISTRY[name], args=(order, x), sympy=False)
    assert report.ok, str(report)


@pytest.mark.parametrize("name", ["betainc", "betaincc", "betaincinv"])
def test_check_rule_incomplete_beta_parameters(name):
    for a, b in [(0.5, 0.5), (1.0, 1.0), (3.0, 7.5)]:
        report = check_rule(REGISTRY[name], args=(a, b, _draw(TERNARY[name], (3,))), sympy=False)
        assert report.ok, str(report)


def test_third_order_and_batched_tangents():
    x = np.array([0.7, 1.3, 2.9])
    for f in (ds.gammaln, ds.erf, lambda x: ds.jv(1.5, x), lambda x: ds.gammainc(2.0, x)):
        check_grads(f, (x,), order=3)
    # a batch of tangents and of cotangents: one sweep each, equal to the loop
    T = RNG.standard_normal((5, 3))
    _, jb = dualad.jvp(lambda x: ds.kve(0.5, x) * ds.log_ndtr(x), (x,), (T,))
    for k in range(5):
        _, jk = dualad.jvp(lambda x: ds.kve(0.5, x) * ds.log_ndtr(x), (x,), (T[k],))
        np.testing.assert_allclose(jb[k], jk, rtol=1e-13)
    _, pull = dualad.vjp(lambda x: ds.beta(x, 2.0 * x), x)
    (cb,) = pull(T)
    for k in range(5):
        np.testing.assert_allclose(cb[k], pull(T[k])[0], rtol=1e-13)


@given(st.floats(0.3, 6.0), st.floats(-2.0, 3.0))
def test_bessel_identity_d_xv_jv(x, v):
    """d/dx [xᵛ Jᵥ(x)] = xᵛ Jᵥ₋₁(x) (DLMF 10.6.6), in both modes, an independent identity."""
    f = lambda x: x ** v * ds.jv(v, x)  # noqa: E731
    want = x ** v * sc.jv(v - 1, x)
    assert np.isclose(dualad.grad(f)(x), want, rtol=1e-9, atol=1e-12)
    assert np.isclose(dualad.jvp(f, (x,), (1.0,))[1], want, rtol=1e-9, atol=1e-12)


@given(st.floats(0.2, 8.0))
def test_gamma_family_derivatives(x):
    assert np.isclose(dualad.grad(ds.gammaln)(x), sc.psi(x), rtol=1e-12)
    assert np.isclose(dualad.derivative(ds.gammaln, 2)(x), sc.polygamma(1, x), rtol=1e-12)
    assert np.isclose(dualad.grad(dualad.grad(ds.digamma))(x), sc.polygamma(2, x), rtol=1e-12)
    assert np.isclose(dualad.grad(ds.rgamma)(x), -sc.psi(x) / sc.gamma(x), rtol=1e-12)


# --- conventions at kinks, poles and ends of domains ---------------------------------------
def _grads(f, *args):
    """Gradients by reverse mode and by forward mode (one unit tangent per argument)."""
    rev = dualad.grad(f, argnums=tuple(range(len(args))))(*args)
    fwd = tuple(dualad.jvp(lambda x, i=i: f(*args[:i], x, *args[i + 1:]), (args[i],),
                           (np.ones_like(args[i]),))[1] for i in range(len(args)))
    return rev, fwd


def test_xlogy_at_x_zero():
    for x, y, want in [(0.0, 2.0, (np.log(2.0), 0.0)), (0.0, 0.0, (-np.inf, 0.0))]:
        with np.errstate(divide="ignore", invalid="ignore"):
            for g in _grads(ds.xlogy, np.float64(x), np.float64(y)):
                assert g[0] == want[0] and g[1] == want[1]
    with np.errstate(divide="ignore", invalid="ignore"):
        for g in _grads(ds.xlog1py, np.float64(0.0), np.float64(-1.0)):
            assert g[0] == -np.inf and g[1] == 0.0
        for g in _grads(ds.rel_entr, np.float64(0.0), np.float64(2.0)):
            assert g[0] == -np.inf and g[1] == 0.0
        for g in _grads(ds.rel_entr, np.float64(0.0), np.float64(0.0)):
            assert not np.isfinite(g[0]) and g[1] == 0.0     # rel_entr(h, 0) = inf
        assert dualad.grad(ds.entr)(0.0) == np.inf


def test_scaled_bessel_kink_at_zero_is_the_mean_of_one_sided_derivatives():
    h = 1e-6
    for f in (ds.i0e, ds.i1e, lambda x: ds.ive(2.0, x)):
        one_sided = [(f(h) - f(0.0)) / h, (f(0.0) - f(-h)) / h]
        for g in _grads(f, np.float64(0.0)):
            assert np.isclose(g[0], np.mean(one_sided), atol=1e-5)


def test_incomplete_gamma_derivative_at_zero_is_the_one_sided_limit():
    with np.errstate(divide="ignore"):
        assert dualad.grad(lambda x: ds.gammainc(2.5, x))(0.0) == 0.0
        assert dualad.grad(lambda x: ds.gammainc(1.0, x))(0.0) == 1.0
        assert dualad.grad(lambda x: ds.gammainc(0.5, x))(0.0) == np.inf
        assert dualad.grad(lambda x: ds.gammaincc(1.0, x))(0.0) == -1.0


def test_poles_give_nan_or_inf_never_a_finite_wrong_number():
    with np.errstate(all="ignore"):
        for x in (0.0, -1.0, -2.0):
            assert not np.isfinite(dualad.grad(ds.rgamma)(x))   # true value (-1)ⁿ n!
            assert not np.isfinite(dualad.grad(ds.gammaln)(x))
            assert not np.isfinite(dualad.grad(ds.digamma)(x))
    assert np.isclose(dualad.grad(ds.gammaln)(-1.5), sc.psi(-1.5))   # log|Γ| off the poles


def test_log_ndtr_derivative_stays_finite_in_the_far_left_tail():
    mpmath.mp.dps = 50
    for x in (-5.0, -20.0, -40.0):
        want = float(mpmath.npdf(x) / mpmath.ncdf(x))
        for g in _grads(ds.log_ndtr, np.float64(x)):
            assert np.isclose(g[0], want, rtol=1e-10)


def test_inverse_functions_use_their_output():
    y = np.array([-0.99, 0.0, 0.5])
    np.testing.assert_allclose(dualad.grad(lambda y: np.sum(ds.erfinv(y)))(y),
                               np.sqrt(np.pi) / 2 * np.exp(sc.erfinv(y) ** 2), rtol=1e-13)
    p = np.array([1e-10, 0.3, 0.999])
    np.testing.assert_allclose(dualad.grad(lambda p: np.sum(ds.ndtri(p)))(p),
                               1.0 / (np.exp(-sc.ndtri(p) ** 2 / 2) / np.sqrt(2 * np.pi)),
                               rtol=1e-12)


# --- errors: orders, complex inputs, bad parameters -----------------------------------------
def test_a_traced_order_raises_naming_the_function_and_argument():
    for f, arg in [(lambda v: ds.iv(v, 2.0), "v"), (lambda a: ds.gammainc(a, 1.0), "a"),
                   (lambda a: sc.gammaincc(a, 1.0), "a"), (lambda b: ds.betainc(1.0, b, 0.5), "b"),
                   (lambda k: ds.lambertw(0.5, k), "k")]:
        with pytest.raises(NotDifferentiableError, match=rf"(\(|: ){arg}[ )]"):
            dualad.grad(f)(1.5)
        with pytest.raises(NotDifferentiableError, match=rf"(\(|: ){arg}[ )]"):
            dualad.jvp(f, (1.5,), (1.0,))
    with pytest.raises(NotDifferentiableError, match="polygamma: n"):
        dualad.grad(lambda n: ds.polygamma(n, 2.0))(1.0)
    with pytest.raises(NotDifferentiableError, match="multigammaln: d"):
        dualad.grad(lambda d: ds.multigammaln(3.0, d))(2.0)


def test_bad_parameters_and_complex_inputs_raise():
    with pytest.raises(ValueError, match="polygamma: the order n must be a non-negative integer"):
        ds.polygamma(0.5, 2.0)
    with pytest.raises(ValueError, match="yn: the order n must be an integer"):
        ds.yn(1.5, 2.0)
    with pytest.raises(ValueError, match="multigammaln"):
        ds.multigammaln(0.8, 3)
    with pytest.raises(TypeError, match="gamma: complex argument"):
        dualad.grad(lambda x: np.real(sc.gamma(x * (1 + 1j))))(0.5)
    with pytest.raises(TypeError, match="logsumexp: complex"):
        ds.logsumexp(np.array([1j, 2.0]))


def test_scipy_copies_of_numpy_functions_and_riemann_zeta_value():
    x = np.array([0.3, 1.2])
    for f, d in [(sc.expm1, np.exp(x)), (sc.log1p, 1 / (1 + x)), (sc.exp2, np.log(2) * 2 ** x),
                 (sc.cbrt, x ** (-2 / 3) / 3), (sc.exp10, np.log(10) * 10 ** x)]:
        np.testing.assert_allclose(dualad.grad(lambda x: np.sum(f(x)))(x), d, rtol=1e-12)
    assert ds.zeta(2.0) == sc.zeta(2.0)
    np.testing.assert_allclose(dualad.grad(lambda x: np.sum(np.i0(x)))(x), sc.i1(x), rtol=1e-13)


# --- polygamma, zeta, multigammaln (SciPy functions that are not ufuncs) ---------------------
def test_polygamma_zeta_multigammaln():
    x = np.array([0.7, 1.5, 3.0])
    n = np.array([0, 1, 3])
    np.testing.assert_allclose(ds.polygamma(n, x), sc.polygamma(n, x), rtol=1e-14)
    np.testing.assert_allclose(dualad.grad(lambda x: np.sum(ds.polygamma(n, x)))(x),
                               sc.polygamma(n + 1, x), rtol=1e-12)
    np.testing.assert_allclose(dualad.grad(lambda q: np.sum(ds.zeta(2.5, q)))(x),
                               -2.5 * sc.zeta(3.5, x), rtol=1e-12)
    a = np.array([2.5, 4.0])
    np.testing.assert_allclose(ds.multigammaln(a, 3), sc.multigammaln(a, 3), rtol=1e-14)
    np.testing.assert_allclose(dualad.grad(lambda a: np.sum(ds.multigammaln(a, 3)))(a),
                               sum(sc.psi(a - j / 2) for j in range(3)), rtol=1e-12)
    check_grads(lambda a: ds.multigammaln(a, 4), (a,), order=2)


# --- logsumexp, softmax, log_softmax ---------------------------------------------------------
A = RNG.standard_normal((2, 3, 4))
B = RNG.uniform(0.1, 2.0, (3, 4))


@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2)])
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("b", [None, B, B - 1.0])
def test_logsumexp_values_match_scipy(axis, keepdims, b):
    for return_sign in (False, True):
        with np.errstate(invalid="ignore"):
            got = ds.logsumexp(A, axis=axis, b=b, keepdims=keepdims, return_sign=return_sign)
            want = sc.logsumexp(A, axis=axis, b=b, keepdims=keepdims, return_sign=return_sign)
        for g, w in zip(got if return_sign else [got], want if return_sign else [want]):
            assert np.shape(g) == np.shape(w)
            np.testing.assert_allclose(g, w, rtol=1e-13)


def test_logsumexp_edge_values_match_scipy():
    cases = [dict(a=np.array([-np.inf, -np.inf])), dict(a=np.array([np.inf, 1.0])),
             dict(a=np.array([np.inf, 1.0]), b=np.array([0.0, 1.0])),
             dict(a=np.array([1.0, 2.0]), b=np.array([1.0, -2.0])),
             dict(a=np.array([1.0, 2.0]), b=np.array([1.0, -2.0]), return_sign=True),
             dict(a=np.float64(3.0)), dict(a=np.array([1.0, 2.0]), b=np.array([0.0, 0.0]))]
    for kw in cases:
        with np.errstate(all="ignore"):
            np.testing.assert_array_equal(ds.logsumexp(**kw), sc.logsumexp(**kw))


def test_logsumexp_gradients_closed_forms_and_order_2():
    a, b = A[0], B
    g = dualad.grad(lambda a: np.sum(ds.logsumexp(a, axis=1)))(a)
    np.testing.assert_allclose(g, sc.softmax(a, axis=1), rtol=1e-13)
    out = sc.logsumexp(a, axis=1, b=b, keepdims=True)
    ga, gb = dualad.grad(lambda a, b: np.sum(ds.logsumexp(a, axis=1, b=b)), argnums=(0, 1))(a, b)
    np.testing.assert_allclose(ga, b * np.exp(a - out), rtol=1e-13)
    np.testing.assert_allclose(gb, np.exp(a - out), rtol=1e-13)
    check_grads(lambda a, b: ds.logsumexp(a, axis=0, b=b, keepdims=True), (a, b), order=2)
    # a negative weighted sum with return_sign: log|s| is differentiable, the sign is not
    check_grads(lambda a, b: ds.logsumexp(a, axis=1, b=b - 1.0, return_sign=True)[0], (a, b))
    # the term of weight 0 whose exponent is +inf is ignored (SciPy), its gradient is 0
    ga = dualad.grad(lambda a: ds.logsumexp(a, b=np.array([0.0, 1.0, 1.0])))(
        np.array([np.inf, 0.5, 1.5]))
    np.testing.assert_allclose(ga, [0.0, *sc.softmax([0.5, 1.5])], rtol=1e-13)


def test_softmax_and_log_softmax():
    x = A[1]
    np.testing.assert_allclose(ds.softmax(x, axis=0), sc.softmax(x, axis=0), rtol=1e-14)
    np.testing.assert_allclose(ds.log_softmax(x), sc.log_softmax(x), rtol=1e-14)
    np.testing.assert_allclose(ds.softmax(x), sc.softmax(x), rtol=1e-14)
    v = x[0]
    s = sc.softmax(v)
    J = dualad.jvp(ds.softmax, (v,), (np.eye(4),))[1].T          # vector forward mode
    np.testing.assert_allclose(J, np.diag(s) - np.outer(s, s), atol=1e-15)
    (Jr,) = dualad.vjp(ds.log_softmax, v)[1](np.eye(4))          # batched reverse sweep
    np.testing.assert_allclose(Jr, np.eye(4) - s[None, :], atol=1e-15)
    check_grads(lambda x: ds.softmax(x, axis=-1), (x,), order=2)
    check_grads(lambda x: ds.log_softmax(x, axis=0), (x,), order=2)


def test_float32_stays_float32():
    x = np.array([0.5, 1.5], dtype=np.float32)
    for f in (ds.gammaln, ds.erf, ds.erfinv, ds.ndtri, ds.log_ndtr, ds.expit,
              lambda x: ds.iv(1.5, x), lambda x: ds.stdtr(3.0, x), lambda x: ds.xlogy(x, x),
              ds.logsumexp, ds.softmax):
        value, tangent = dualad.jvp(f, (x,), (np.ones(2, np.float32),))
        g = dualad.grad(lambda x: np.sum(f(x)))(x)
        assert np.asarray(value).dtype == np.asarray(tangent).dtype == g.dtype == np.float32
