"""A SciPy function that converts a traced value (np.asarray, float(), compiled code)
instead of dispatching on it: the error names the public function the user called and
its dualad.scipy replacement, or says that none exists and what to do
(dualad/frontend/scipy_errors.py)."""
import numpy as np
import pytest
import scipy.integrate
import scipy.interpolate
import scipy.linalg
import scipy.optimize
import scipy.special
import scipy.stats

import dualad
from dualad.frontend import scipy_errors

X3 = np.array([0.3, 0.5, 0.7])
A = np.eye(3) * 0.5


@pytest.mark.parametrize("call, name, replacement", [
    (lambda x: np.sum(scipy.linalg.expm(x[:, None] * A)), "scipy.linalg.expm",
     "dualad.scipy.linalg.expm"),
    # solve_triangular is wrapped by a private decorator, which converts first
    (lambda x: np.sum(scipy.linalg.solve_triangular(A + np.triu(np.ones((3, 3))), x)),
     "scipy.linalg.solve_triangular", "dualad.scipy.linalg.solve_triangular"),
    (lambda x: np.sum(scipy.linalg.cho_solve((np.eye(3), False), x)),
     "scipy.linalg.cho_solve", "dualad.scipy.linalg.cho_solve"),
    (scipy.special.logsumexp, "scipy.special.logsumexp", "dualad.scipy.special.logsumexp"),
    (lambda x: np.sum(scipy.stats.norm.logpdf(x)), "scipy.stats.norm.logpdf",
     "dualad.scipy.stats.norm.logpdf"),
    (lambda x: np.sum(scipy.stats.norm(0, 1).logpdf(x)), "scipy.stats.norm.logpdf",
     "dualad.scipy.stats.norm.logpdf"),                      # a frozen distribution
    (lambda x: np.sum(scipy.integrate.odeint(lambda y, t: -x[0] * y, 1.0, [0.0, 1.0])),
     "scipy.integrate.odeint", "dualad.scipy.integrate.odeint"),   # a closure, compiled code
    (lambda x: scipy.stats.multivariate_normal.logpdf(x, np.zeros(3), np.eye(3)),
     "scipy.stats.multivariate_normal.logpdf",
     "dualad.scipy.stats.multivariate_normal.logpdf"),       # a multi_rv_generic method
    (lambda x: scipy.integrate.quad(lambda t: x[0] * t, 0.0, 1.0)[0],
     "scipy.integrate.quad", "dualad.scipy.integrate.quad"),       # float() of the callback's
])
def test_the_error_names_the_function_and_its_replacement(call, name, replacement):
    with pytest.raises(TypeError) as info:
        dualad.grad(call)(X3)
    msg = str(info.value)
    assert msg.startswith(f"{name} met a traced value of shape")
    assert f"Call {replacement} instead" in msg
    with pytest.raises(TypeError, match=name.replace(".", r"\.")):
        dualad.jvp(lambda x: call(x), (X3,), (X3,))              # forward mode too


@pytest.mark.parametrize("call, name, sub, path", [
    (scipy.optimize.rosen, "scipy.optimize.rosen", "optimize", ("rosen",)),
    (lambda x: np.sum(scipy.interpolate.CubicSpline([0.0, 1.0, 2.0], x)(0.5)),
     "scipy.interpolate.CubicSpline", "interpolate", ("CubicSpline",)),   # a class
])
def test_without_a_replacement_the_error_says_what_to_do(call, name, sub, path):
    with pytest.raises(TypeError) as info:
        dualad.grad(call)(X3)
    msg = str(info.value)
    assert msg.startswith(f"{name} met a traced value of shape (3,)")
    alt = scipy_errors.replacement(sub, path)
    if alt is None:      # (another part of issue 17 may add one: then it is named)
        assert f"dualad.scipy has no replacement for {name}" in msg
        assert "@dualad.primitive" in msg and "SCIPY_ARRAY_API=1" in msg
        assert "docs/array_api.md" in msg
    else:
        assert f"Call {alt} instead" in msg


def test_replacement_lookup():
    assert scipy_errors.replacement("linalg", ("expm",)) == "dualad.scipy.linalg.expm"
    assert scipy_errors.replacement("stats", ("norm", "logpdf")) == \
        "dualad.scipy.stats.norm.logpdf"
    assert scipy_errors.replacement("linalg", ("no_such_function",)) is None
    assert scipy_errors.replacement("no_such_subpackage", ("f",)) is None


def test_private_module_names_map_to_public_ones():
    assert scipy_errors._public_package("scipy.linalg._matfuncs") == "linalg"
    assert scipy_errors._public_package("scipy.spatial.distance") == "spatial.distance"
    assert scipy_errors._public_package("scipy.stats._continuous_distns") == "stats"


def test_non_scipy_callers_keep_the_generic_message():
    with pytest.raises(TypeError, match="cannot convert a traced value.*dualad.numpy"):
        dualad.grad(lambda x: np.sum(np.asarray(x, dtype=float)))(X3)
    with pytest.raises(TypeError, match=r"cannot convert a traced value of shape \(\) with "
                                        r"float\(\)"):
        dualad.grad(lambda x: float(x[0]))(X3)


def test_scipy_special_ufuncs_still_dispatch():
    # scipy.special's ufuncs reach the registry through __array_ufunc__: no error
    g = dualad.grad(lambda x: np.sum(scipy.special.gammaln(x)))(X3)
    np.testing.assert_allclose(g, scipy.special.digamma(X3))
