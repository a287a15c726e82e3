"""dualad.scipy.spatial.distance against SciPy's values and finite differences."""
import numpy as np
import pytest
import scipy.spatial.distance as sd
from hypothesis import given, settings, strategies as st

from dualad import grad, jvp
from dualad.scipy.spatial import distance as dd
from dualad.verification import check_grads

RNG = np.random.default_rng(3)
A = RNG.normal(size=(7, 3))
B = RNG.normal(size=(5, 3))
METRICS = [("euclidean", {}), ("sqeuclidean", {}), ("cityblock", {}), ("chebyshev", {}),
           ("minkowski", {"p": 3.0}), ("minkowski", {"p": 1.5}), ("cosine", {}),
           ("correlation", {}), ("seuclidean", {}), ("seuclidean", {"V": np.array([1., 2., 3.])}),
           ("mahalanobis", {}), ("euclidean", {"w": np.array([1., 2., .5])}),
           ("cityblock", {"w": np.array([1., 0., .5])}), ("cosine", {"w": np.array([1., 2., .5])}),
           ("braycurtis", {}), ("canberra", {}), ("canberra", {"w": np.array([1., 2., .5])})]


@pytest.mark.parametrize("metric,kw", METRICS)
def test_values_match_scipy(metric, kw):
    np.testing.assert_allclose(dd.cdist(A, B, metric, **kw), sd.cdist(A, B, metric, **kw),
                               rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(dd.pdist(A, metric, **kw), sd.pdist(A, metric, **kw), rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("metric,kw", METRICS)
def test_derivatives_against_finite_differences(metric, kw):
    check_grads(lambda a, b: dd.cdist(a, b, metric, **kw), (A, B), order=2)
    check_grads(lambda a: dd.pdist(a, metric, **kw), (A,), order=2)


def test_weights_v_and_vi_are_differentiable():
    w = np.array([1., 2., .5])
    check_grads(lambda w: dd.cdist(A, B, "euclidean", w=w), (w,), order=2)
    check_grads(lambda V: dd.pdist(A, "seuclidean", V=V), (np.array([1., 2., 3.]),), order=2)
    VI = np.array([[2., .3, 0.], [.3, 1., .1], [0., .1, 1.5]])
    check_grads(lambda VI: dd.cdist(A, B, "mahalanobis", VI=VI), (VI,), order=2)


def test_single_pair_functions():
    u, v = A[0], B[1]
    for name in ("euclidean", "sqeuclidean", "cityblock", "chebyshev", "cosine", "correlation"):
        assert np.isclose(getattr(dd, name)(u, v), getattr(sd, name)(u, v))
        check_grads(getattr(dd, name), (u, v), order=2)
    assert np.isclose(dd.minkowski(u, v, 3), sd.minkowski(u, v, 3))
    V = np.array([1., 2., 3.])
    assert np.isclose(dd.seuclidean(u, v, V), sd.seuclidean(u, v, V))


def test_zero_distance_has_zero_derivative_not_nan():
    """The documented convention: at coincident points the root-type metrics have the
    subgradient 0 in both modes (plain √Σd² would give 0·∞ = NaN)."""
    X = np.array([[1., 2.], [1., 2.], [0., 1.]])
    for metric, kw in [("euclidean", {}), ("minkowski", {"p": 3.}), ("seuclidean", {}),
                       ("cityblock", {}), ("chebyshev", {})]:
        g = grad(lambda x: dd.pdist(x, metric, **kw)[0])(X)
        np.testing.assert_array_equal(g, np.zeros_like(X))
        _, t = jvp(lambda x: dd.pdist(x, metric, **kw)[0], (X,), (np.ones_like(X),))
        assert t == 0.0
    # the other pairs are untouched by the guard
    check_grads(lambda x: dd.pdist(x)[1:], (X,), order=2)


def test_squareform_roundtrip_and_derivatives():
    v = sd.pdist(A)
    np.testing.assert_array_equal(dd.squareform(v), sd.squareform(v))
    np.testing.assert_array_equal(dd.squareform(sd.squareform(v)), v)
    check_grads(dd.squareform, (v,), order=2)
    check_grads(lambda a: dd.squareform(dd.squareform(dd.pdist(a))), (A,), order=1)
    assert dd.squareform(np.zeros(0)).shape == (1, 1)
    with pytest.raises(ValueError, match="binomial"):
        dd.squareform(np.ones(4))
    with pytest.raises(ValueError, match="symmetric"):
        dd.squareform(np.arange(4.).reshape(2, 2))


def test_errors_name_function_and_argument():
    with pytest.raises(ValueError, match="cdist: XA and XB"):
        dd.cdist(A, B[:, :2])
    with pytest.raises(ValueError, match="pdist: X must be a 2-dimensional"):
        dd.pdist(A[0])
    with pytest.raises(NotImplementedError, match="hamming"):
        dd.cdist(A, B, "hamming")
    with pytest.raises(ValueError, match="unknown metric"):
        dd.cdist(A, B, "nosuch")
    with pytest.raises(NotImplementedError, match="callable"):
        dd.cdist(A, B, lambda u, v: 0.0)
    with pytest.raises(TypeError, match="unexpected keyword"):
        dd.cdist(A, B, "euclidean", p=3, q=1)
    with pytest.raises(ValueError, match="weights w must have shape"):
        dd.cdist(A, B, "euclidean", w=np.ones(2))
    with pytest.raises(NotImplementedError, match="complex"):
        dd.cdist(A + 0j, B)
    with pytest.raises(ValueError, match="too small"):
        dd.pdist(A[:3], "mahalanobis")


def test_integer_and_float32_inputs():
    Ai = np.arange(6).reshape(3, 2)
    np.testing.assert_allclose(dd.pdist(Ai), sd.pdist(Ai))
    g = grad(lambda a: np.sum(dd.pdist(a)))(A.astype(np.float32))
    assert g.dtype == np.float32


@settings(derandomize=True, max_examples=25, deadline=None)
@given(st.integers(2, 5), st.integers(1, 4), st.sampled_from(["euclidean", "cityblock",
                                                              "sqeuclidean", "cosine"]))
def test_random_shapes(m, n, metric):
    X = np.random.default_rng(m * 10 + n).normal(size=(m, n))
    np.testing.assert_allclose(dd.pdist(X, metric), sd.pdist(X, metric), rtol=1e-12, atol=1e-15)
    check_grads(lambda x: dd.pdist(x, metric), (X,), order=1)


def test_canberra_drops_zero_over_zero_terms():
    u, v = np.array([0., 1.]), np.array([0., 3.])
    assert dd.canberra(u, v) == sd.canberra(u, v)
    g = grad(lambda u: dd.canberra(u, v))(u)
    assert np.all(np.isfinite(g)) and g[0] == 0.0


@pytest.mark.parametrize("p", [1, 2, 3, np.inf])
def test_distance_matrix_and_minkowski_distance(p):
    import scipy.spatial as sp
    from dualad.scipy import spatial as dsp
    np.testing.assert_allclose(dsp.distance_matrix(A, B, p), sp.distance_matrix(A, B, p))
    np.testing.assert_allclose(dsp.minkowski_distance(A[:, None], B[None], p),
                               sp.minkowski_distance(A[:, None], B[None], p))
    np.testing.assert_allclose(dsp.minkowski_distance_p(A[:, None], B[None], p),
                               sp.minkowski_distance_p(A[:, None], B[None], p))
    check_grads(lambda a: dsp.distance_matrix(a, B, p), (A,), order=2 if p != np.inf else 1)
