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


BUTTER_B, BUTTER_A = ss.butter(3, 0.2)
SOS = ss.butter(4, 0.3, output="sos")
SIG = np.random.default_rng(5).normal(size=(2, 40))


def test_lfilter_zi_and_sosfilt_zi():
    np.testing.assert_allclose(ds.lfilter_zi(BUTTER_B, BUTTER_A),
                               ss.lfilter_zi(BUTTER_B, BUTTER_A), atol=1e-12)
    # a leading zero of a is stripped (SciPy 1.17 does so; 1.18 raises instead)
    np.testing.assert_allclose(ds.lfilter_zi([1, 2.], [0., 2, 1, .5]),
                               ss.lfilter_zi([1, 2.], [2, 1, .5]), atol=1e-12)
    np.testing.assert_allclose(ds.sosfilt_zi(SOS), ss.sosfilt_zi(SOS), atol=1e-12)
    check_grads(ds.lfilter_zi, (BUTTER_B, BUTTER_A), order=2)
    check_grads(ds.sosfilt_zi, (SOS,), order=1)


@pytest.mark.parametrize("padtype", ["odd", "even", "constant", None])
def test_filtfilt_and_sosfiltfilt_match_scipy(padtype):
    np.testing.assert_allclose(ds.filtfilt(BUTTER_B, BUTTER_A, SIG, padtype=padtype),
                               ss.filtfilt(BUTTER_B, BUTTER_A, SIG, padtype=padtype), atol=1e-12)
    np.testing.assert_allclose(
        ds.filtfilt(BUTTER_B, BUTTER_A, SIG.T, axis=0, padlen=5, padtype=padtype),
        ss.filtfilt(BUTTER_B, BUTTER_A, SIG.T, axis=0, padlen=5, padtype=padtype), atol=1e-12)
    np.testing.assert_allclose(ds.sosfiltfilt(SOS, SIG, padtype=padtype),
                               ss.sosfiltfilt(SOS, SIG, padtype=padtype), atol=1e-12)


def test_sosfilt_and_derivatives():
    np.testing.assert_allclose(ds.sosfilt(SOS, SIG), ss.sosfilt(SOS, SIG), atol=1e-12)
    zi = np.random.default_rng(6).normal(size=(2, 2, 2))
    y, zf = ds.sosfilt(SOS, SIG, zi=zi)
    y_ref, zf_ref = ss.sosfilt(SOS, SIG, zi=zi)
    np.testing.assert_allclose(y, y_ref, atol=1e-12)
    np.testing.assert_allclose(zf, zf_ref, atol=1e-12)
    check_grads(lambda b, a, x: ds.filtfilt(b, a, x), (BUTTER_B, BUTTER_A, SIG[0, :15]), order=1)
    # SciPy's sections have a0 = 1: differentiate in the other five coefficients
    with_a0 = lambda s: np.concatenate([s[:, :3], np.ones((s.shape[0], 1)), s[:, 3:]],  # noqa
                                       axis=1)
    free = np.delete(SOS, 3, axis=1)
    check_grads(lambda s, x: ds.sosfiltfilt(with_a0(s), x), (free, SIG[0, :20]), order=1)
    check_grads(lambda s, x, z: ds.sosfilt(with_a0(s), x, zi=z), (free, SIG[0, :6], zi[:, 0]),
                order=2)
    with pytest.raises(ValueError, match="greater than padlen"):
        ds.filtfilt(BUTTER_B, BUTTER_A, SIG[:, :5])
    with pytest.raises(NotImplementedError, match="method='gust'"):
        ds.filtfilt(BUTTER_B, BUTTER_A, SIG, method="gust")
    with pytest.raises(ValueError, match="n_sections, 6"):
        ds.sosfilt(SOS[:, :5], SIG)
    with pytest.raises(ValueError, match="should be all ones"):
        ds.sosfilt(SOS * 2.0, SIG)
