"""dualad.scipy.ndimage against SciPy's values, SciPy's own matrices (for the exact
adjoint of the boundary-handled filters) and finite differences."""
import numpy as np
import pytest
import scipy.ndimage as si
from hypothesis import given, settings, strategies as st

from dualad import jvp, vjp
from dualad.scipy import ndimage as dn
from dualad.verification import check_grads

RNG = np.random.default_rng(7)
X = RNG.normal(size=(6, 7))
W2 = RNG.normal(size=(3, 4))
W1 = RNG.normal(size=4)
W3 = RNG.normal(size=3)
MODES = ["reflect", "mirror", "nearest", "wrap", "constant", "grid-wrap", "grid-mirror",
         "grid-constant"]


def _scipy_matrix(f, shape):
    """The dense matrix of SciPy's (linear) map, column j = f(e_j): an oracle for the JVP
    (J) and the VJP (Jᵀ) that shares no code with dualad."""
    n = int(np.prod(shape))
    return np.stack([np.ravel(f(np.eye(n)[j].reshape(shape))) for j in range(n)], axis=1)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fname,w", [("correlate", W2), ("convolve", W2), ("correlate1d", W1),
                                     ("convolve1d", W1), ("correlate1d", W3),
                                     ("convolve1d", W3)])
@pytest.mark.parametrize("origin", [0, 1, -1])
def test_filters_match_scipy_and_their_adjoint_is_exact(fname, w, mode, origin):
    m = w.shape[0] if w.ndim == 1 else min(w.shape)
    if not -(m // 2) <= origin <= (m - 1) // 2:
        pytest.skip("origin outside SciPy's range for this length")
    kw = dict(mode=mode, cval=0.0, origin=origin)
    ref = getattr(si, fname)(X, w, **kw)
    np.testing.assert_allclose(getattr(dn, fname)(X, w, **kw), ref, rtol=1e-12, atol=1e-12)
    J = _scipy_matrix(lambda x: getattr(si, fname)(x, w, **kw), X.shape)
    ct = RNG.normal(size=ref.shape)
    _, pullback = vjp(lambda x: getattr(dn, fname)(x, w, **kw), X)
    np.testing.assert_allclose(np.ravel(pullback(ct)[0] if isinstance(pullback(ct), tuple)
                                        else pullback(ct)), J.T @ ct.ravel(), atol=1e-12)
    t = RNG.normal(size=X.shape)
    _, tangent = jvp(lambda x: getattr(dn, fname)(x, w, **kw), (X,), (t,))
    np.testing.assert_allclose(np.ravel(tangent), J @ t.ravel(), atol=1e-12)


@pytest.mark.parametrize("mode", ["reflect", "constant", "wrap"])
def test_weights_and_cval_are_differentiable(mode):
    check_grads(lambda x, w: dn.correlate(x, w, mode=mode, cval=0.5, origin=(1, -1)),
                (X, W2), order=2)
    check_grads(lambda w: dn.convolve1d(X, w, axis=0, mode=mode), (W3,), order=2)
    check_grads(lambda c: dn.correlate(X, W2, mode="constant", cval=c), (np.array(0.3),),
                order=2)


def test_kernels_longer_than_the_input_and_single_samples():
    x = np.arange(1., 4.)
    for mode in MODES:
        np.testing.assert_allclose(dn.correlate1d(x, np.arange(9.), mode=mode),
                                   si.correlate1d(x, np.arange(9.), mode=mode), atol=1e-12)
        np.testing.assert_allclose(dn.correlate1d(x[:1], np.arange(4.), mode=mode),
                                   si.correlate1d(x[:1], np.arange(4.), mode=mode), atol=1e-12)


@pytest.mark.parametrize("mode", ["reflect", "mirror", "nearest", "wrap", "constant"])
def test_gaussian_and_uniform_match_scipy(mode):
    for args in [dict(sigma=[1.2, 0.7], order=[0, 1]), dict(sigma=0.9, order=2),
                 dict(sigma=(2.0, 0.0)), dict(sigma=1.5, radius=2, truncate=1.0)]:
        np.testing.assert_allclose(dn.gaussian_filter(X, mode=mode, **args),
                                   si.gaussian_filter(X, mode=mode, **args), atol=1e-12)
    np.testing.assert_allclose(dn.gaussian_filter1d(X, 2.5, axis=0, order=3, mode=mode),
                               si.gaussian_filter1d(X, 2.5, axis=0, order=3, mode=mode),
                               atol=1e-12)
    np.testing.assert_allclose(dn.uniform_filter(X, [3, 4], mode=mode, origin=[1, -1]),
                               si.uniform_filter(X, [3, 4], mode=mode, origin=[1, -1]),
                               atol=1e-12)
    np.testing.assert_allclose(dn.uniform_filter1d(X, 5, axis=0, mode=mode, cval=2.0),
                               si.uniform_filter1d(X, 5, axis=0, mode=mode, cval=2.0),
                               atol=1e-12)
    check_grads(lambda x: dn.gaussian_filter(x, 1.1, mode=mode), (X,), order=2)
    check_grads(lambda x: dn.uniform_filter(x, 3, mode=mode), (X,), order=1)


def test_gaussian_adjoint_is_scipys_transpose():
    J = _scipy_matrix(lambda x: si.gaussian_filter(x, 1.3, mode="nearest"), X.shape)
    ct = RNG.normal(size=X.shape)
    _, pullback = vjp(lambda x: dn.gaussian_filter(x, 1.3, mode="nearest"), X)
    np.testing.assert_allclose(np.ravel(pullback(ct)), J.T @ ct.ravel(), atol=1e-12)


def test_axes_and_output_dtype():
    np.testing.assert_allclose(dn.gaussian_filter(X, 1.0, axes=(1,)),
                               si.gaussian_filter(X, 1.0, axes=(1,)), atol=1e-12)
    np.testing.assert_allclose(dn.uniform_filter(X, 3, axes=0), si.uniform_filter(X, 3, axes=0),
                               atol=1e-12)
    assert dn.gaussian_filter(X, 1.0, output=np.float32).dtype == np.float32
    assert dn.correlate(np.arange(12).reshape(3, 4), np.ones((2, 2))).dtype == np.float64


def test_filter_errors_name_the_argument():
    with pytest.raises(ValueError, match="boundary mode not supported"):
        dn.correlate(X, W2, mode="nosuch")
    with pytest.raises(ValueError, match="invalid origin"):
        dn.correlate1d(X, W3, origin=2)
    with pytest.raises(RuntimeError, match="incorrect shape"):
        dn.correlate(X, W1)
    with pytest.raises(NotImplementedError, match="traced sigma"):
        from dualad import grad
        grad(lambda s: np.sum(dn.gaussian_filter(X, s)))(1.0)
    with pytest.raises(NotImplementedError, match="in place"):
        dn.correlate(X, W2, output=np.empty_like(X))
    with pytest.raises(NotImplementedError, match="complex"):
        dn.correlate(X + 0j, W2)


# --- map_coordinates -----------------------------------------------------------------------
IMG = RNG.normal(size=(5, 6))
COORDS = RNG.uniform(-2, 7, size=(2, 3, 4))
LINE = np.arange(5.) * 1.5 + np.arange(5.) ** 2
POINTS = np.array([[-1.2, -0.6, -0.4, -0.01, 0, 0.3, 0.5, 1.5, 2.5, 3.9, 4.0, 4.01, 4.3, 4.6,
                    5.2, 6.7, 7.5, 8, -4, 12, -12, -8, 16]])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("order", [0, 1, 3])
def test_map_coordinates_matches_scipy(mode, order):
    if order == 3 and mode in ("constant", "wrap"):
        with pytest.raises(NotImplementedError, match="order=3 with mode"):
            dn.map_coordinates(IMG, COORDS, order=3, mode=mode)
        return
    for img, c in [(IMG, COORDS), (LINE, POINTS)]:
        np.testing.assert_allclose(dn.map_coordinates(img, c, order=order, mode=mode, cval=-9.),
                                   si.map_coordinates(img, c, order=order, mode=mode, cval=-9.),
                                   atol=1e-10)


@pytest.mark.parametrize("mode", ["reflect", "nearest", "grid-wrap", "constant", "wrap",
                                  "grid-constant"])
def test_map_coordinates_derivatives(mode):
    inner = RNG.uniform(0.1, 3.9, size=(2, 3)) + 0.05       # away from the cell boundaries
    check_grads(lambda x, c: dn.map_coordinates(x, c, order=1, mode=mode, cval=0.5),
                (IMG, inner), order=2)
    if mode not in ("constant", "wrap"):
        check_grads(lambda x, c: dn.map_coordinates(x, c, order=3, mode=mode), (IMG, inner),
                    order=2)
    check_grads(lambda x: dn.map_coordinates(x, COORDS, order=0, mode=mode), (IMG,), order=1)


def test_map_coordinates_input_adjoint_is_scipys_transpose():
    for order, mode in [(1, "reflect"), (3, "mirror"), (3, "nearest"), (1, "constant")]:
        J = _scipy_matrix(lambda x: si.map_coordinates(x, COORDS, order=order, mode=mode),
                          IMG.shape)
        ct = RNG.normal(size=COORDS.shape[1:])
        _, pullback = vjp(lambda x: dn.map_coordinates(x, COORDS, order=order, mode=mode), IMG)
        np.testing.assert_allclose(np.ravel(pullback(ct)), J.T @ ct.ravel(), atol=1e-10)


def test_map_coordinates_kink_follows_the_right_cell():
    """At an integer coordinate order 1 has a kink; the derivative is the right cell's."""
    _, t = jvp(lambda c: dn.map_coordinates(LINE, c, order=1), (np.array([[2.0]]),),
               (np.ones((1, 1)),))
    assert np.allclose(t, LINE[3] - LINE[2])


def test_spline_filter_matches_and_differentiates():
    for mode in ["mirror", "reflect", "wrap", "nearest"]:
        np.testing.assert_allclose(dn.spline_filter(IMG, 3, mode=mode),
                                   si.spline_filter(IMG, 3, mode=mode), atol=1e-12)
    check_grads(lambda x: dn.spline_filter1d(x, 3, axis=0), (IMG,), order=2)


def test_map_coordinates_errors():
    with pytest.raises(RuntimeError, match="invalid shape for coordinate array"):
        dn.map_coordinates(IMG, COORDS[:1])
    with pytest.raises(NotImplementedError, match="order=2"):
        dn.map_coordinates(IMG, COORDS, order=2)


@settings(derandomize=True, max_examples=20, deadline=None)
@given(st.integers(1, 6), st.integers(1, 5), st.sampled_from(MODES), st.integers(-1, 1))
def test_random_lengths_match_scipy(n, m, mode, origin):
    if not -(m // 2) <= origin <= (m - 1) // 2:
        origin = 0
    x = np.random.default_rng(n * 7 + m).normal(size=n)
    w = np.arange(1.0, m + 1)
    np.testing.assert_allclose(dn.correlate1d(x, w, mode=mode, origin=origin, cval=1.5),
                               si.correlate1d(x, w, mode=mode, origin=origin, cval=1.5),
                               atol=1e-12)
    np.testing.assert_allclose(dn.convolve1d(x, w, mode=mode, origin=origin),
                               si.convolve1d(x, w, mode=mode, origin=origin), atol=1e-12)


def test_float32_stays_float32_and_prefilter_false():
    x32 = X.astype(np.float32)
    for f in (lambda x: dn.gaussian_filter(x, 1.0), lambda x: dn.uniform_filter(x, 3),
              lambda x: dn.correlate1d(x, W3), lambda x: dn.map_coordinates(x, COORDS[:, :2, :2],
                                                                           order=1)):
        assert f(x32).dtype == np.float32
    g = vjp(lambda x: dn.gaussian_filter(x, 1.0), x32)[1](np.ones_like(x32))[0]
    assert g.dtype == np.float32
    np.testing.assert_allclose(
        dn.map_coordinates(IMG, COORDS, order=3, mode="mirror", prefilter=False),
        si.map_coordinates(IMG, COORDS, order=3, mode="mirror", prefilter=False), atol=1e-12)


def test_empty_and_non_numeric_inputs():
    E = np.zeros((0, 3))
    assert dn.gaussian_filter(E, 1.0).shape == si.gaussian_filter(E, 1.0).shape
    assert dn.correlate1d(E, [1., 2.]).shape == (0, 3)
    assert dn.map_coordinates(IMG, np.zeros((2, 0)), order=1).shape == (0,)
    with pytest.raises(TypeError, match="gaussian_filter: input must be a real numeric"):
        dn.gaussian_filter(None, 1.0)


@pytest.mark.parametrize("mode", ["reflect", "constant", "wrap", ["nearest", "mirror"]])
def test_derivative_filters_match_scipy(mode):
    for ax in (0, 1, -1):
        np.testing.assert_allclose(dn.sobel(X, ax, mode=mode), si.sobel(X, ax, mode=mode),
                                   atol=1e-12)
        np.testing.assert_allclose(dn.prewitt(X, ax, mode=mode), si.prewitt(X, ax, mode=mode),
                                   atol=1e-12)
    np.testing.assert_allclose(dn.laplace(X, mode=mode), si.laplace(X, mode=mode), atol=1e-12)
    np.testing.assert_allclose(dn.gaussian_laplace(X, [1., .7], mode=mode),
                               si.gaussian_laplace(X, [1., .7], mode=mode), atol=1e-12)
    np.testing.assert_allclose(dn.gaussian_gradient_magnitude(X, 1.2, mode=mode, truncate=3.),
                               si.gaussian_gradient_magnitude(X, 1.2, mode=mode, truncate=3.),
                               atol=1e-12)


def test_derivative_filters_axes_and_derivatives():
    np.testing.assert_allclose(dn.laplace(X, axes=(1,)), si.laplace(X, axes=(1,)), atol=1e-12)
    np.testing.assert_allclose(dn.gaussian_laplace(X, 1., axes=(0,)),
                               si.gaussian_laplace(X, 1., axes=(0,)), atol=1e-12)
    np.testing.assert_allclose(dn.gaussian_gradient_magnitude(X, [1., 2.], axes=(1, 0)),
                               si.gaussian_gradient_magnitude(X, [1., 2.], axes=(1, 0)),
                               atol=1e-12)
    check_grads(lambda x: dn.gaussian_gradient_magnitude(x, 1.), (X,), order=2)
    check_grads(lambda x: dn.gaussian_laplace(x, 1.), (X,), order=1)
    check_grads(lambda x: dn.sobel(x, 0), (X,), order=1)
    # a flat image has a zero gradient: the magnitude's derivative there is 0, not NaN
    _, pullback = vjp(lambda x: dn.gaussian_gradient_magnitude(x, 1.), np.ones((4, 4)))
    g = pullback(np.ones((4, 4)))[0]
    assert np.all(np.isfinite(g))
