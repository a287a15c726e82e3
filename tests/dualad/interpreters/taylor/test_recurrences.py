"""The recurrences of dualad/interpreters/taylor/special.py: each against SymPy to order
10 (the checker's SymPy oracle, ``check_taylor(order=10)``), their fallbacks at the points
where a recurrence would divide by zero or meet a convention against nested forward mode,
and their kind in the coverage table."""
import math

import numpy as np
import pytest

import dualad
import dualad.scipy.special as sc
from dualad.extend import REGISTRY, taylor_coverage
from dualad.verification.taylor import check_taylor, nested_coefficients, taylor_coefficients

QUICK = ["absolute", "dawsn", "entr", "erfcx", "erfi", "log_expit", "logit", "maximum",
         "minimum", "ndtr", "sinc", "xlog1py", "xlogy", "expit", "fmax", "fmin", "std_sqrt"]
SLOW = ["arctan2", "hypot", "log_ndtr", "logaddexp", "logaddexp2", "power"]   # SymPy > 5 s


def _check(name):
    assert taylor_coverage()[name] == "recurrence", name
    report = check_taylor(REGISTRY[name], order=10)
    assert report.ok, str(report)
    assert any("0..10 vs SymPy" in r.check for r in report.rows), name


@pytest.mark.parametrize("name", QUICK)
def test_recurrence_matches_sympy_to_order_10(name):
    _check(name)


@pytest.mark.slow
@pytest.mark.parametrize("name", SLOW)
def test_two_argument_recurrence_matches_sympy_to_order_10(name):
    _check(name)


def _sympy_coefs(expr_of, x0, order):
    import sympy as sp
    t = sp.Symbol("t", real=True)
    e = expr_of(sp, sp.Float(x0, 30) + t)
    out = []
    for k in range(order + 1):
        out.append(float(e.subs(t, 0).evalf(30)) / math.factorial(k))
        e = sp.diff(e, t)
    return np.array(out)


@pytest.mark.parametrize("name, f, expr, x0", [
    ("erfinv", sc.erfinv, lambda sp, x: sp.erfinv(x), 0.3),
    ("erfcinv", sc.erfcinv, lambda sp, x: sp.erfinv(1 - x), 0.6),
    ("ndtri", sc.ndtri, lambda sp, p: sp.sqrt(2) * sp.erfinv(2 * p - 1), 0.8),
])
def test_inverse_error_functions_match_sympy_to_order_10(name, f, expr, x0):
    """Their registry entries carry no SymPy translation for the checker; SymPy knows
    erfinv's derivative (and evaluates erfinv, not erfcinv), so its series is taken here."""
    assert taylor_coverage()[name] == "recurrence"
    got = dualad.taylor(f, 10)(x0)
    want = _sympy_coefs(expr, x0, 10)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12 * np.max(np.abs(want)))


def _against_nested(f, *args):
    vals = [np.asarray(a, dtype=float) for a in args]
    diff = list(range(len(vals)))
    rng = np.random.default_rng(0)
    vs = [rng.standard_normal(np.shape(v)) for v in vals]
    got = taylor_coefficients(lambda *xs: f(*xs), vals, diff, {}, vs, 4)
    want = nested_coefficients(lambda *xs: f(*xs), vals, diff, {}, vs, 3)
    for g, w in zip(got, want):
        for k in range(1, 4):
            np.testing.assert_allclose(g[k], w[k - 1], rtol=1e-10, atol=1e-12)
    return got


@pytest.mark.parametrize("f, args", [
    # 0·log y = 0 for every y, 0 included: the fallback (along y alone; along x, log 0)
    (lambda y: sc.xlogy(np.array([0.0, 1.5, 0.0]), y), ([0.0, 2.0, 1.0],)),
    (lambda y: sc.xlog1py(np.array([0.0, 1.5]), y), ([-1.0, 0.5],)),
    (sc.xlogy, ([0.5, 1.5, -1.0], [0.5, 2.0, 1.0])),
    (np.sinc, ([0.0, 0.5, -1.5],)),                           # sinc(0) = 1
    (np.hypot, ([0.0, 3.0], [0.0, 4.0])),                     # hypot(0, 0) = 0
    (np.arctan2, ([0.0, 1.0], [0.0, -2.0])),
    (np.maximum, ([1.0, 2.0, np.nan], [1.0, 0.5, 0.0])),      # a tie, a win, a nan
    (np.minimum, ([1.0, 2.0, 3.0], [1.0, 0.5, 4.0])),
    (np.fmax, ([1.0, 2.0, np.nan], [1.0, 0.5, 0.0])),             # fmax ignores the nan
    (lambda v: dualad.REGISTRY["std_sqrt"](v), ([0.0, 2.0],)),    # derivative 0 at 0
    (np.logaddexp, ([np.inf, 1.0], [np.inf, 2.0])),           # equal infinities
    (lambda x, p: x ** p, ([0.0, 2.0, -1.0], [2.0, 0.5, 3.0])),   # bases <= 0, traced p
    (lambda x, p: x ** p, ([0.5, 2.0], [2.0, -0.5])),             # the exp(p log x) recurrence
    (np.abs, ([0.0, -2.0, 3.0],)),                                # |x| at 0: derivative 0
])
def test_recurrences_and_their_fallbacks_match_nested_forward_mode(f, args):
    with np.errstate(all="ignore"):
        _against_nested(f, *args)


def test_abs_at_zero_has_zero_coefficients_and_complex_abs_falls_back():
    c = dualad.taylor(np.abs, 5)(np.array([0.0, -2.0]))
    assert np.array_equal(c[:, 0], np.zeros(6))
    np.testing.assert_array_equal(c[1:, 1], [-1.0, 0.0, 0.0, 0.0, 0.0])
    z = np.array([0.5 + 0.3j])
    got = dualad.taylor(np.abs, 3)(z, np.array([0.2 - 0.1j]))
    h = lambda t: np.abs(z + t * np.array([0.2 - 0.1j]))   # noqa: E731
    d1 = dualad.jvp(h, (0.0,), (1.0,))[1]
    np.testing.assert_allclose(got[1], d1, rtol=1e-13)


def test_maximum_with_a_constant_broadcasts():
    c = dualad.taylor(lambda x: np.maximum(x, np.array([[0.0], [2.0]])), 3)(np.array([1.0, -1.0]))
    assert c.shape == (4, 2, 2)
    np.testing.assert_array_equal(c[1], [[1.0, 0.0], [0.0, 0.0]])


def test_traced_exponent_power_is_float32_in_float32():
    x = np.float32([0.5, 2.0])
    c = dualad.taylor(lambda p: x ** p, 4)(np.float32([1.5, 0.5]))
    assert c.dtype == np.float32


@pytest.mark.parametrize("f", [lambda x: np.maximum(x, 0.3), lambda x: np.minimum(x, x * x),
                               np.sinc, lambda x: np.hypot(x, 2.0 * x), np.abs])
def test_under_vmap_and_jit_each_point_decides(f):
    """maximum's selection compares traced values (a mask computed on the whole batch
    would not fit one example); the fallback decisions re-trace under jit."""
    xs = np.array([0.5, 0.1, 0.0, -0.4])
    direct = dualad.taylor(f, 3)(xs)
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(dualad.vmap(dualad.taylor(f, 3))(xs).T, direct)
        jitted = dualad.jit(dualad.taylor(f, 3))
        jitted(np.array([0.5, 0.7, 0.2, 0.4]))
        np.testing.assert_allclose(jitted(xs), direct)
