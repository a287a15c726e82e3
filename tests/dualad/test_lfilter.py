"""dualad.scipy.signal.lfilter against SciPy's values, the rule checker and finite
differences in x, b, a and zi."""
import numpy as np
import pytest
import scipy.signal as ss
from hypothesis import given, settings, strategies as st

from dualad import grad, vjp
from dualad.scipy import signal as ds
from dualad.verification import check_grads, check_registry

RNG = np.random.default_rng(11)
X = RNG.normal(size=(3, 9))
B = np.array([0.5, 0.3, -0.2])
A = np.array([1.2, -0.4, 0.1, 0.05])
ZI = RNG.normal(size=(3, 3))


def test_iir_primitive_passes_the_rule_checker():
    report = check_registry(["iir_filter"], order=2)
    assert "1 of 1 primitives pass" in str(report)


@pytest.mark.parametrize("b,a", [(B, A), (B, np.array([2.0])), (np.array([1.0]), A),
                                 (np.array([0.3, 0.1, 0.2, 0.1, 0.05]), np.array([1., -0.5]))])
def test_values_match_scipy(b, a):
    np.testing.assert_allclose(ds.lfilter(b, a, X), ss.lfilter(b, a, X), atol=1e-12)
    K = max(len(a), len(b)) - 1
    zi = RNG.normal(size=(3, K))
    for x, z in [(X, zi), (X[:, :2], zi), (X[:, :1], zi)]:
        y, zf = ds.lfilter(b, a, x, zi=z)
        y_ref, zf_ref = ss.lfilter(b, a, x, zi=z)
        np.testing.assert_allclose(y, y_ref, atol=1e-12)
        np.testing.assert_allclose(zf, zf_ref, atol=1e-12)
    y, zf = ds.lfilter(b, a, X.T, axis=0, zi=zi.T)
    y_ref, zf_ref = ss.lfilter(b, a, X.T, axis=0, zi=zi.T)
    np.testing.assert_allclose(y, y_ref, atol=1e-12)
    np.testing.assert_allclose(zf, zf_ref, atol=1e-12)


def test_derivatives_in_every_argument():
    check_grads(lambda b, a, x, zi: ds.lfilter(b, a, x, zi=zi), (B, A, X, ZI), order=2)
    check_grads(lambda b, a, x: ds.lfilter(b, a, x, axis=0), (B, A, X.T), order=2)
    check_grads(lambda x: ds.lfilter(B, A, x[0]), (X,), order=1)


def test_vjp_in_x_is_the_transposed_filter():
    """The map x → y is linear: its VJP against SciPy's own matrix (filtered unit
    impulses), transposed."""
    n = X.shape[1]
    J = np.stack([ss.lfilter(B, A, np.eye(n)[j]) for j in range(n)], axis=1)
    ct = RNG.normal(size=n)
    _, pullback = vjp(lambda x: ds.lfilter(B, A, x), X[0])
    np.testing.assert_allclose(pullback(ct)[0], J.T @ ct, atol=1e-12)


def test_one_dimensional_zi_and_errors():
    y, zf = ds.lfilter(B, A, X[0], zi=ZI[0])
    y_ref, zf_ref = ss.lfilter(B, A, X[0], zi=ZI[0])
    np.testing.assert_allclose(zf, zf_ref, atol=1e-12)
    with pytest.raises(ValueError, match="unexpected shape for zi"):
        ds.lfilter(B, A, X, zi=np.ones((3, 2)))
    with pytest.raises(ValueError, match="a\\[0\\] must not be 0"):
        ds.lfilter(B, np.array([0., 1.]), X)
    with pytest.raises(ValueError, match="b must be a 1-D"):
        ds.lfilter(np.ones((2, 2)), A, X)
    with pytest.raises(NotImplementedError, match="complex x"):
        ds.lfilter(B, A, X + 0j)
    np.testing.assert_allclose(ds.lfilter(B, A, np.arange(5)), ss.lfilter(B, A, np.arange(5)))
    f32 = [v.astype(np.float32) for v in (B, A, X[0])]
    assert ds.lfilter(*f32).dtype == ss.lfilter(*f32).dtype == np.float32
    g = grad(lambda x: np.sum(ds.lfilter(f32[0], f32[1], x)))(f32[2])
    assert g.dtype == np.float32


@settings(derandomize=True, max_examples=15, deadline=None)
@given(st.integers(1, 4), st.integers(1, 4), st.integers(1, 7))
def test_random_orders(nb, na, n):
    rng = np.random.default_rng(nb * 100 + na * 10 + n)
    b = rng.normal(size=nb)
    a = np.concatenate([[1.0], 0.3 * rng.normal(size=na - 1)])
    x = rng.normal(size=n)
    zi = rng.normal(size=max(na, nb) - 1)
    if zi.size:
        y, zf = ds.lfilter(b, a, x, zi=zi)
        y_ref, zf_ref = ss.lfilter(b, a, x, zi=zi)
        np.testing.assert_allclose(zf, zf_ref, atol=1e-12)
    else:
        y, y_ref = ds.lfilter(b, a, x), ss.lfilter(b, a, x)
    np.testing.assert_allclose(y, y_ref, atol=1e-12)
    check_grads(lambda b, a, x: ds.lfilter(b, a, x), (b, a, x), order=1)
