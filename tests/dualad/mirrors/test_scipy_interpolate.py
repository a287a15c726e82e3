"""dualad.scipy.interpolate against SciPy's values, SciPy's own linear maps and finite
differences, in the data values and at the evaluation points."""
import numpy as np
import pytest
import scipy.interpolate as si
from hypothesis import given, settings, strategies as st

import dualad
from dualad import grad, jvp, vjp
from dualad.scipy import interpolate as di
from dualad.verification import check_grads

pytestmark = pytest.mark.slow   # per-primitive rule checks: in the full suite, not the quick subset

X = np.array([0., 0.5, 1.3, 2., 3.1, 4.])
Y = np.sin(X) * 3 + X
Y2 = np.stack([Y, Y ** 2], axis=1)
PTS = np.array([-0.5, 0.2, 0.5, 1.7, 2.9, 4.0, 4.4, 1.3])
INNER = np.array([0.2, 0.7, 1.7, 2.9, 3.3])           # away from the knots
BCS = ["not-a-knot", "natural", "clamped", ((1, 0.5), (2, -1.0)), "periodic"]


def _periodic(y):
    return np.concatenate([y[:-1], y[:1]])


def _data(bc):
    return _periodic(Y) if bc == "periodic" else Y


@pytest.mark.parametrize("bc", BCS, ids=str)
def test_cubic_spline_values_derivatives_integrals_match_scipy(bc):
    y = _data(bc)
    ref, ours = si.CubicSpline(X, y, bc_type=bc), di.CubicSpline(X, y, bc_type=bc)
    for nu in range(4):
        np.testing.assert_allclose(ours(PTS, nu), ref(PTS, nu), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ours.derivative(2)(PTS), ref.derivative(2)(PTS), atol=1e-12)
    np.testing.assert_allclose(ours.antiderivative(2)(PTS), ref.antiderivative(2)(PTS),
                               atol=1e-12, equal_nan=True)
    for a, b in [(-1., 7.3), (3.9, 0.3), (0.2, 0.2), (-2.5, 13.)]:
        np.testing.assert_allclose(ours.integrate(a, b), ref.integrate(a, b), atol=1e-11)
    np.testing.assert_allclose(ours(PTS, extrapolate=False), ref(PTS, extrapolate=False),
                               atol=1e-12, equal_nan=True)


@pytest.mark.parametrize("bc", BCS, ids=str)
def test_cubic_spline_derivatives_in_data_and_points(bc):
    if bc == "periodic":     # SciPy requires y[0] == y[-1]: differentiate the free values
        f = lambda yh, xs: di.CubicSpline(X, _periodic(np.concatenate([yh, yh[:1]])),  # noqa
                                          bc_type=bc)(xs)
        args = (Y[:-1], INNER)
    else:
        f = lambda y, xs: di.CubicSpline(X, y, bc_type=bc)(xs)  # noqa: E731
        args = (Y, INNER)
    check_grads(f, args, order=2)
    check_grads(lambda y: di.CubicSpline(X, y, bc_type="natural").integrate(0.3, 3.3), (Y,),
                order=2)
    check_grads(lambda a, b: di.CubicSpline(X, Y).integrate(a, b), (np.array(0.3),
                                                                    np.array(3.3)), order=2)


def test_data_derivative_is_scipys_own_linear_map():
    """The spline is linear in y: dualad's JVP/VJP in y against the matrix SciPy's own
    constructor applies (columns = SciPy run on each unit vector)."""
    n = X.size
    J = np.stack([si.CubicSpline(X, np.eye(n)[j], bc_type="not-a-knot")(PTS)
                  for j in range(n)], axis=1)
    ct = np.random.default_rng(0).normal(size=PTS.size)
    _, pullback = vjp(lambda y: di.CubicSpline(X, y)(PTS), Y)
    np.testing.assert_allclose(pullback(ct)[0], J.T @ ct, atol=1e-12)
    t = np.random.default_rng(1).normal(size=n)
    _, tangent = jvp(lambda y: di.CubicSpline(X, y)(PTS), (Y,), (t,))
    np.testing.assert_allclose(tangent, J @ t, atol=1e-12)


def test_derivative_in_points_is_the_spline_derivative():
    ref = si.CubicSpline(X, Y)
    g = dualad.jacobians.jacfwd(lambda xs: di.CubicSpline(X, Y)(xs))(INNER)
    np.testing.assert_allclose(np.diag(g), ref(INNER, 1), atol=1e-12)
    h = grad(grad(lambda s: di.CubicSpline(X, Y)(s)))(1.7)
    np.testing.assert_allclose(h, ref(1.7, 2), atol=1e-12)


def test_kink_at_a_knot_follows_the_right_piece():
    lin = di.interp1d(X, Y)
    slope_right = (Y[3] - Y[2]) / (X[3] - X[2])
    assert np.isclose(grad(lin)(X[2]), slope_right)
    assert np.isclose(grad(lin)(X[-1]), (Y[-1] - Y[-2]) / (X[-1] - X[-2]))


def test_cubic_spline_axis_and_trailing_axes():
    for axis, y in [(0, Y2), (1, Y2.T), (-1, Y2.T)]:
        ref, ours = si.CubicSpline(X, y, axis=axis), di.CubicSpline(X, y, axis=axis)
        np.testing.assert_allclose(ours(PTS[:, None]), ref(PTS[:, None]), atol=1e-12)
    check_grads(lambda y, xs: di.CubicSpline(X, y, axis=1)(xs), (Y2.T, INNER), order=2)
    bc = ((1, np.array([0.5, 1.])), (2, np.zeros(2)))
    np.testing.assert_allclose(di.CubicSpline(X, Y2, bc_type=bc)(PTS),
                               si.CubicSpline(X, Y2, bc_type=bc)(PTS), atol=1e-12)


@pytest.mark.parametrize("n", [2, 3])
def test_short_data(n):
    x, y = X[:n], Y[:n]
    np.testing.assert_allclose(di.CubicSpline(x, y)(PTS), si.CubicSpline(x, y)(PTS), atol=1e-12)
    check_grads(lambda y: di.CubicSpline(x, y)(INNER), (y,), order=2)


@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_make_interp_spline_and_bspline(k):
    ref, ours = si.make_interp_spline(X, Y, k=k), di.make_interp_spline(X, Y, k=k)
    np.testing.assert_array_equal(ours.t, ref.t)
    for nu in range(k + 1):
        np.testing.assert_allclose(ours(PTS, nu), ref(PTS, nu), atol=1e-10)
    np.testing.assert_allclose(ours.derivative()(PTS), ref.derivative()(PTS), atol=1e-10)
    check_grads(lambda y, xs: di.make_interp_spline(X, y, k=k)(xs), (Y, INNER), order=2)
    # traced coefficients directly
    spl = di.BSpline(ref.t, ref.c, k)
    np.testing.assert_allclose(spl(PTS), ref(PTS), atol=1e-12)
    check_grads(lambda c, xs: di.BSpline(ref.t, c, k)(xs), (ref.c, INNER), order=2)
    np.testing.assert_allclose(ours.integrate(0.1, 3.9), ref.integrate(0.1, 3.9), atol=1e-12)


def test_make_interp_spline_boundary_conditions():
    for bc in ["natural", "clamped", ([(1, 0.3)], [(2, -1.0)])]:
        ref = si.make_interp_spline(X, Y, k=3, bc_type=bc)
        np.testing.assert_allclose(di.make_interp_spline(X, Y, k=3, bc_type=bc)(PTS), ref(PTS),
                                   atol=1e-12)
        check_grads(lambda y: di.make_interp_spline(X, y, bc_type=bc)(INNER), (Y,), order=1)
    yp = _periodic(Y)
    ref = si.make_interp_spline(X, yp, k=3, bc_type="periodic")
    ours = di.make_interp_spline(X, yp, k=3, bc_type="periodic")
    np.testing.assert_allclose(ours(PTS), ref(PTS), atol=1e-12)
    check_grads(lambda yh: di.make_interp_spline(X, np.concatenate([yh, yh[:1]]),
                                                 bc_type="periodic")(INNER), (Y[:-1],), order=2)


def test_bspline_repeated_knots_and_extrapolate():
    t = np.array([0, 0, 0, 0, 1, 1, 2, 3, 3, 3, 3.])
    c = np.arange(7.) ** 1.5
    ref = si.BSpline(t, c, 3)
    for ext in (True, False, "periodic"):
        np.testing.assert_allclose(di.BSpline(t, c, 3, extrapolate=ext)(PTS),
                                   si.BSpline(t, c, 3, extrapolate=ext)(PTS), atol=1e-12,
                                   equal_nan=True)
        np.testing.assert_allclose(di.BSpline(t, c, 3, extrapolate=ext)(PTS, 2),
                                   si.BSpline(t, c, 3, extrapolate=ext)(PTS, 2), atol=1e-10,
                                   equal_nan=True)
    np.testing.assert_allclose(di.BSpline(t, c, 3).derivative(2)(PTS),
                               ref.derivative(2)(PTS), atol=1e-10)
    check_grads(lambda c, x: di.BSpline(t, c, 3)(x), (c, np.array([0.3, 1.5, 2.2])), order=2)


KINDS = ["linear", "nearest", "nearest-up", "previous", "next", "zero", "slinear", "quadratic",
         "cubic", 5]


@pytest.mark.parametrize("kind", KINDS, ids=str)
def test_interp1d_matches_scipy(kind):
    for fv in [np.nan, "extrapolate", (-1., 7.), 2.5]:
        for y, axis, pts in [(Y, -1, PTS), (Y2.T, -1, PTS[:, None]), (Y2, 0, PTS)]:
            ref = si.interp1d(X, y, kind=kind, axis=axis, bounds_error=False, fill_value=fv)
            ours = di.interp1d(X, y, kind=kind, axis=axis, bounds_error=False, fill_value=fv)
            np.testing.assert_allclose(ours(pts), ref(pts), atol=1e-10, equal_nan=True)
    check_grads(lambda y, xs: di.interp1d(X, y, kind=kind, fill_value="extrapolate")(xs),
                (Y2.T, INNER), order=2)


def test_interp1d_unsorted_bounds_and_fill_derivatives():
    perm = np.array([3, 0, 5, 1, 4, 2])
    np.testing.assert_allclose(di.interp1d(X[perm], Y[perm])(INNER), si.interp1d(X, Y)(INNER))
    check_grads(lambda y: di.interp1d(X[perm], y)(INNER), (Y[perm],), order=1)
    with pytest.raises(ValueError, match="below the interpolation range"):
        di.interp1d(X, Y)(np.array([-1.0]))
    with pytest.raises(ValueError, match="above the interpolation range"):
        di.interp1d(X, Y)(np.array([5.0]))
    check_grads(lambda f: di.interp1d(X, Y, bounds_error=False, fill_value=f)(PTS),
                (np.array(1.5),), order=1)


def test_regular_grid_interpolator():
    g = (np.array([0, 1., 2.5, 3]), np.array([0, 0.5, 1., 2., 2.2]))
    V = np.random.default_rng(0).normal(size=(4, 5, 2))
    P = np.random.default_rng(1).uniform(-0.3, 3.3, size=(6, 2))
    for m in ["linear", "slinear", "nearest"]:
        for fv in [np.nan, None, 2.0]:
            ref = si.RegularGridInterpolator(g, V, method=m, bounds_error=False, fill_value=fv)
            ours = di.RegularGridInterpolator(g, V, method=m, bounds_error=False, fill_value=fv)
            np.testing.assert_allclose(ours(P), ref(P), atol=1e-12, equal_nan=True)
        inside = np.random.default_rng(2).uniform(0.1, 1.9, size=(6, 2))
        check_grads(lambda V, p: di.RegularGridInterpolator(g, V, method=m)(p), (V, inside),
                    order=2)
        np.testing.assert_allclose(di.interpn(g, V, inside, method=m),
                                   si.interpn(g, V, inside, method=m), atol=1e-12)
    with pytest.raises(ValueError, match="out of bounds in dimension"):
        di.RegularGridInterpolator(g, V)(P)
    with pytest.raises(NotImplementedError, match="method='pchip'"):
        di.RegularGridInterpolator(g, V, method="pchip")


@pytest.mark.parametrize("method", ["cubic", "quintic"])
def test_regular_grid_splines(method):
    """Tensor-product not-a-knot splines; SciPy's reference with a direct solver (its default
    iterative solver agrees only to ~1e-6)."""
    import scipy.sparse.linalg as ssl
    g = (np.array([0, 1., 2.5, 3, 4., 5., 5.5]), np.array([0, 0.5, 1., 2., 2.2, 3., 3.5]))
    V = np.random.default_rng(0).normal(size=(7, 7, 2))
    P = np.random.default_rng(1).uniform(-0.3, 5.8, size=(7, 2))
    for fv in [np.nan, None]:
        ref = si.RegularGridInterpolator(g, V, method=method, bounds_error=False, fill_value=fv,
                                         solver=ssl.spsolve)
        ours = di.RegularGridInterpolator(g, V, method=method, bounds_error=False, fill_value=fv)
        np.testing.assert_allclose(ours(P), ref(P), atol=1e-11, equal_nan=True)
    inside = np.random.default_rng(2).uniform(0.1, 1.9, size=(4, 2))
    check_grads(lambda V, p: di.RegularGridInterpolator(g, V, method=method)(p), (V, inside),
                order=2)
    with pytest.raises(ValueError, match="at least"):
        di.RegularGridInterpolator((np.arange(3.),), np.arange(3.), method=method)


@pytest.mark.parametrize("kind", ["linear", "slinear", "nearest", "previous", "next", "zero"])
def test_interp1d_traced_abscissae(kind):
    """For the linear and piecewise-constant kinds the abscissae may be traced (the linear
    formula is differentiated in x_i; the constant kinds have derivative 0 in x)."""
    check_grads(lambda x, y, xs: di.interp1d(x, y, kind=kind, fill_value="extrapolate")(xs),
                (X, Y, INNER), order=2)


def test_regular_grid_traced_grid_points():
    g = (np.array([0, 1., 2.5, 3]), np.array([0, 0.5, 1., 2., 2.2]))
    V = np.random.default_rng(0).normal(size=(4, 5))
    P = np.random.default_rng(1).uniform(0.1, 1.9, size=(6, 2))
    for m in ["linear", "nearest"]:
        check_grads(lambda g0, g1, V, p: di.RegularGridInterpolator((g0, g1), V, method=m)(p),
                    (g[0], g[1], V, P), order=2)


def test_traced_abscissae_raise_naming_them():
    for make, name in [(lambda x: di.CubicSpline(x, Y), "abscissae x"),
                       (lambda x: di.interp1d(x, Y, kind="cubic"), "abscissae x"),
                       (lambda x: di.make_interp_spline(x, Y), "abscissae x"),
                       (lambda t: di.RegularGridInterpolator((t,), Y, method="cubic"),
                        "grid points")]:
        with pytest.raises(NotImplementedError, match=name + " are traced"):
            grad(lambda x: np.sum(make(x)(INNER)))(X)
    with pytest.raises(NotImplementedError, match="bc_type"):
        grad(lambda v: np.sum(di.CubicSpline(X, Y, bc_type=((1, v), (1, 0.)))(INNER)))(0.5)


def test_misuse_errors():
    with pytest.raises(ValueError, match="identical"):
        grad(lambda y: np.sum(di.CubicSpline(X, y, bc_type="periodic")(INNER)))(Y)
    with pytest.raises(NotImplementedError, match="unsupported"):
        di.interp1d(X, Y, kind="spline-ish")
    with pytest.raises(ValueError, match="equal in length"):
        di.interp1d(X, Y[:-1])
    with pytest.raises(NotImplementedError, match="complex"):
        di.CubicSpline(X, Y + 0j)
    assert di.CubicSpline(X, Y.astype(np.float32))(INNER).dtype == np.float64


def test_forward_over_reverse_through_a_repeated_gather():
    """A reverse sweep run on dual numbers through an indexed plain-valued node whose
    cotangent mixes a plain scatter with a traced dense part (cotangents.IndexedCotangent)."""
    M = np.arange(12.).reshape(4, 3)
    idx = np.array([0, 2, 2, 1])

    def f(y, t):
        c = np.tensordot(M, y, axes=([1], [0]))
        return c[idx] + c * t

    def g(t):
        return vjp(lambda y: f(y, t), np.ones(3))[1](np.ones(4))
    _, tangent = jvp(g, (np.linspace(0, 1, 4),), (np.ones(4),))
    np.testing.assert_allclose(np.ravel(tangent), M.sum(axis=0))


@settings(derandomize=True, max_examples=20, deadline=None)
@given(st.integers(4, 9), st.sampled_from(["not-a-knot", "natural", "clamped"]))
def test_random_data(n, bc):
    rng = np.random.default_rng(n)
    x = np.cumsum(rng.uniform(0.2, 1.0, n))
    y = rng.normal(size=n)
    pts = rng.uniform(x[0] - 0.5, x[-1] + 0.5, size=7)
    np.testing.assert_allclose(di.CubicSpline(x, y, bc_type=bc)(pts),
                               si.CubicSpline(x, y, bc_type=bc)(pts), atol=1e-10)
    check_grads(lambda y: di.CubicSpline(x, y, bc_type=bc)(pts), (y,), order=1)


def test_grid_point_forms_and_copied_data():
    g = (np.arange(4.), np.arange(4.) + 1)
    V = np.add.outer(g[0], g[1] ** 2)
    for xi in [[1.5, 2.5], np.array([[1.5, 2.5]]), ([1.5, 2.], [2.5, 3.]),
               (np.array([[1.5], [2.]]), np.array([2.5, 3., 3.5]))]:
        ref = si.RegularGridInterpolator(g, V)(xi)
        ours = di.RegularGridInterpolator(g, V)(xi)
        assert ours.shape == ref.shape
        np.testing.assert_allclose(ours, ref)
    x, y = np.arange(4.), np.arange(4.) ** 2
    made = [di.interp1d(x, y), di.RegularGridInterpolator((x,), y), di.CubicSpline(x, y),
            di.BSpline(np.r_[0, 0, x, 3.], y, 2)]
    before = [float(np.ravel(f(np.array([1.5])))[0]) for f in made]
    y[:] = 0.0            # SciPy copies the data: so do these
    assert [float(np.ravel(f(np.array([1.5])))[0]) for f in made] == before


def test_ppoly_and_bspline_with_trailing_axes():
    rng = np.random.default_rng(0)
    c = rng.normal(size=(4, 5, 2))
    x = np.cumsum(rng.uniform(.2, 1, 6))
    xs = rng.uniform(x[0] - 1, x[-1] + 1, 7)
    ref, ours = si.PPoly(c, x), di.PPoly(c, x)
    np.testing.assert_allclose(ours(xs), ref(xs), atol=1e-12)
    np.testing.assert_allclose(ours(xs, 2), ref(xs, 2), atol=1e-10)
    np.testing.assert_allclose(ours.antiderivative()(xs), ref.antiderivative()(xs), atol=1e-10)
    np.testing.assert_allclose(ours.integrate(x[0] - .5, x[-1]), ref.integrate(x[0] - .5, x[-1]))
    check_grads(lambda c, xs: di.PPoly(c, x)(xs, 1), (c, np.array([x[0] + .1, x[2] + .05])),
                order=2)
    t = np.r_[[0.] * 4, 1, 2, 3, [4.] * 4]
    cc = rng.normal(size=(3, 7))
    ref, ours = si.BSpline(t, cc, 3, axis=1), di.BSpline(t, cc, 3, axis=1)
    assert ours(xs).shape == ref(xs).shape == (3, 7)
    np.testing.assert_allclose(ours(xs), ref(xs), atol=1e-12)
    np.testing.assert_allclose(ours.derivative()(xs), ref.derivative()(xs), atol=1e-10)
    check_grads(lambda c, xs: di.BSpline(t, c, 3, axis=1)(xs), (cc, np.array([.5, 1.5, 3.2])),
                order=2)
