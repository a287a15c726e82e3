"""NumPy coverage (issue 4): elementwise extras, reductions and scans, zero-derivative
functions and ndarray methods, each traced against NumPy's value and central
differences in both modes, batched, to order 2 (see coverage_helpers.check), plus the
documented conventions at kinks."""
import warnings

import numpy as np
import pytest

import dualad
import dualad.numpy as dnp
from dualad.core.primitive import REGISTRY
from dualad.verification import check_rule

from coverage_helpers import both_modes_grad, check

R = np.random.default_rng(1)
X23 = R.uniform(-2, 2, (2, 3))
POS23 = R.uniform(0.5, 2.0, (2, 3))
W3 = np.array([0.5, 1.5, 2.0])

NEW_PRIMITIVES = ["sinc", "remainder", "fmod", "copysign", "heaviside", "floor_divide",
                  "logical_xor", "signbit", "spacing", "cumprod", "sort", "convolve"]


@pytest.mark.parametrize("name", NEW_PRIMITIVES)
def test_new_primitives_pass_the_rule_checker(name):
    report = check_rule(REGISTRY[name])
    assert report.ok, str(report)


@pytest.mark.parametrize("name", ["sinc", "copysign", "cumprod", "convolve"])
def test_sympy_oracle_ran(name):
    report = check_rule(REGISTRY[name])
    assert any("SymPy oracle" in r.check and r.ok for r in report.rows), str(report)


# --- elementwise --------------------------------------------------------------------------
ELEMENTWISE = {
    "sinc": (np.sinc, (X23,)),
    "mod": (lambda x, y: np.mod(x, y), (X23 * 3, POS23)),
    "remainder_neg_divisor": (lambda x, y: np.remainder(x, -y), (X23 * 3, POS23)),
    "fmod": (np.fmod, (X23 * 3, POS23)),
    "copysign": (lambda x, y: np.copysign(x, y), (X23, R.uniform(-1, 1, 3))),
    "heaviside": (lambda x, h: np.heaviside(x, h) * x, (X23, W3)),
    "nan_to_num": (lambda x: np.nan_to_num(x) * x, (X23,)),
    "ldexp": (lambda x: np.ldexp(x, np.array([1, -2, 3])), (X23,)),
    "frexp": (lambda x: np.frexp(x)[0], (X23,)),
    "modf": (lambda x: np.modf(x)[0] * np.modf(x)[1], (X23 * 3,)),
    "divmod": (lambda x, y: np.divmod(x, y)[1] + np.divmod(x, y)[0], (X23 * 3, POS23)),
    "operators": (lambda x, y: x % y + divmod(x, 0.7)[1] + (x // y) * x + 2.5 % y,
                  (X23 * 3, POS23)),
    "float_power": (lambda x, y: np.float_power(x, y), (POS23, X23)),
    "round_fix": (lambda x: x * np.round(x) + np.around(x, 1) + np.fix(x) * x + x.round(),
                  (X23 * 3,)),
}


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_elementwise(name):
    f, args = ELEMENTWISE[name]
    check(f, *args)


def test_sinc_at_zero_every_order():
    assert dualad.grad(np.sinc)(0.0) == 0.0
    d2 = dualad.derivative(np.sinc, 2)(0.0)
    assert np.isclose(d2, -np.pi ** 2 / 3, rtol=1e-12)
    d4 = dualad.derivative(np.sinc, 4)(0.0)
    assert np.isclose(d4, np.pi ** 4 / 5, rtol=1e-10)
    # both branches of the derivative agree where they meet (|x| = 1e-2)
    for x in (0.0099999, 0.0100001, 0.3):
        h = 1e-6
        fd = (np.sinc(x + h) - np.sinc(x - h)) / (2 * h)
        assert np.isclose(dualad.grad(np.sinc)(x), fd, rtol=1e-7)


def test_remainder_uses_the_branch_of_the_value():
    # x/y = 2 exactly: remainder is 0 = x - 2y, so ∂/∂y = -2 (the right-hand branch)
    gx, gy = dualad.grad(lambda x, y: np.remainder(x, y), argnums=(0, 1))(2.0, 1.0)
    assert (gx, gy) == (1.0, -2.0)
    gx, gy = dualad.grad(lambda x, y: np.fmod(x, y), argnums=(0, 1))(-2.5, 1.0)
    assert (gx, gy) == (1.0, 2.0)   # fmod(-2.5, 1) = -0.5 = -2.5 - k·1 with k = -2


def test_copysign_at_zero_and_signed_zero():
    for g in both_modes_grad(lambda x: np.copysign(x, np.array([1.0, -1.0, -0.0, 0.0])),
                             np.array([0.0, 2.0, 3.0, -4.0])):
        np.testing.assert_array_equal(g, [0.0, -1.0, -1.0, -1.0])


def test_heaviside_derivative_in_h0_where_x_is_zero():
    x = np.array([-1.0, 0.0, 2.0])
    gh = dualad.grad(lambda h: np.sum(np.heaviside(x, h)))(np.array([0.3, 0.5, 0.7]))
    np.testing.assert_array_equal(gh, [0.0, 1.0, 0.0])
    for g in both_modes_grad(lambda x: np.heaviside(x, 0.5), x):
        np.testing.assert_array_equal(g, np.zeros(3))


def test_nan_to_num_zero_derivative_where_not_finite():
    x = np.array([1.0, np.nan, np.inf, -np.inf, -2.0])
    for g in both_modes_grad(lambda x: np.nan_to_num(x, nan=5.0, posinf=9.0, neginf=-9.0), x):
        np.testing.assert_array_equal(g, [1.0, 0.0, 0.0, 0.0, 1.0])
    out = dualad.jvp(np.nan_to_num, (x,), (np.ones(5),))[0]
    np.testing.assert_array_equal(out, np.nan_to_num(x))
    # a traced replacement value gets the derivative of the entries it replaced
    gn = dualad.grad(lambda v: np.sum(dnp.nan_to_num(x, nan=v)))(2.0)
    assert gn == 1.0


ZERO_DERIVATIVE = [np.round, np.around, np.fix, np.rint, np.signbit, np.spacing,
                   np.isposinf, np.isneginf, lambda x: np.floor_divide(x, 0.7),
                   lambda x: np.logical_xor(x > 0, x < 1), lambda x: np.heaviside(x, 0.5),
                   np.all, np.any, np.count_nonzero, np.argsort, np.argmax,
                   lambda x: np.argpartition(x, 1), np.argwhere, np.flatnonzero,
                   lambda x: np.searchsorted(np.sort(x), 0.3), lambda x: np.digitize(x, W3),
                   np.nanargmax, np.nanargmin, lambda x: np.isin(x, [0.5]),
                   lambda x: np.array_equal(x, x), np.iscomplexobj, np.isreal,
                   lambda x: x.argmax(), lambda x: x.argsort(), lambda x: x.all(),
                   lambda x: x.any(), lambda x: x.nonzero()]


@pytest.mark.parametrize("k", range(len(ZERO_DERIVATIVE)))
def test_zero_derivative_functions_pass_through(k):
    f = ZERO_DERIVATIVE[k]
    x = np.array([0.4, -1.6, 2.5, np.inf, -np.inf, 0.0])
    with np.errstate(all="ignore"):
        _check_zero_derivative(f, x)


def _check_zero_derivative(f, x):
    expected = f(x)
    for mode in ("rev", "fwd"):
        def g(x):
            y = f(x)
            y = y[0] if isinstance(y, tuple) else y
            return np.sum(x[:3]) + np.sum(np.asarray(dualad.extend.primal_value(y),
                                                     dtype=float) * 0.0)
        if mode == "rev":
            grad = dualad.grad(g)(x)
        else:
            grad = dualad.jvp(g, (x,), (np.eye(6),))[1]
        np.testing.assert_array_equal(grad, [1, 1, 1, 0, 0, 0])
    value = dualad.jvp(lambda x: f(x), (x,), (np.zeros(6),))[0]
    for a, b in zip(value if isinstance(value, tuple) else (value,),
                    expected if isinstance(expected, tuple) else (expected,)):
        np.testing.assert_array_equal(dualad.extend.primal_value(a), b)


def test_zero_derivative_results_used_in_products():
    x = np.array([0.4, -1.6, 2.5])
    np.testing.assert_array_equal(dualad.grad(lambda x: np.sum(x * np.round(x)))(x),
                                  np.round(x))
    np.testing.assert_array_equal(dualad.grad(lambda x: np.sum(x * np.fix(x)))(x), np.fix(x))


# --- reductions -----------------------------------------------------------------------------
def _nan(x):
    x = np.array(x, dtype=float)
    x[0, 1] = np.nan
    return x


def _nan_everywhere_else(f):
    """f of an array whose entry (0, 1) is NaN, differentiated in the other entries."""
    def g(x):
        return f(x * MASK + NAN_AT)
    return g


MASK = np.ones((2, 3))
MASK[0, 1] = 0.0
NAN_AT = np.zeros((2, 3))
NAN_AT[0, 1] = np.nan

REDUCTIONS = {
    "cumprod": (lambda x: np.cumprod(x, axis=1), (X23,)),
    "cumprod_flat": (lambda x: np.cumprod(x) + x.cumprod(axis=0).sum(), (X23,)),
    "cumulative_sum": (lambda x: np.cumulative_sum(x, axis=1, include_initial=True), (X23,)),
    "cumulative_prod": (lambda x: np.cumulative_prod(x, axis=0), (X23,)),
    "nansum": (_nan_everywhere_else(lambda x: np.nansum(x, axis=1)), (X23,)),
    "nanprod": (_nan_everywhere_else(lambda x: np.nanprod(x, axis=0)), (X23,)),
    "nanmean": (_nan_everywhere_else(lambda x: np.nanmean(x, axis=1, keepdims=True)), (X23,)),
    "nanvar": (_nan_everywhere_else(lambda x: np.nanvar(x, axis=1, ddof=1)), (X23,)),
    "nanvar_all": (_nan_everywhere_else(np.nanvar), (X23,)),
    "nanstd": (_nan_everywhere_else(lambda x: np.nanstd(x, axis=1)), (X23,)),
    "nanmax": (_nan_everywhere_else(lambda x: np.nanmax(x, axis=1)), (X23,)),
    "nanmin": (_nan_everywhere_else(lambda x: np.nanmin(x)), (X23,)),
    "nancumsum": (_nan_everywhere_else(lambda x: np.nancumsum(x, axis=1)), (X23,)),
    "nancumprod": (_nan_everywhere_else(lambda x: np.nancumprod(x)), (X23,)),
    "average": (lambda x, w: np.average(x, axis=1, weights=w), (X23, W3)),
    "average_full_weights": (lambda x, w: np.average(x, weights=w), (X23, POS23)),
    "average_returned": (lambda x, w: np.average(x, axis=0, weights=w, returned=True)[0]
                         * np.average(x, axis=0, weights=w, returned=True)[1],
                         (X23, POS23)),
    "average_plain": (lambda x: np.average(x, axis=0, keepdims=True), (X23,)),
    "ptp": (lambda x: np.ptp(x, axis=1), (X23,)),
    "diff": (lambda x: np.diff(x), (X23,)),
    "diff_n2_axis0": (lambda x: np.diff(x, n=2, axis=1, prepend=0.5), (X23,)),
    "diff_append": (lambda x, a: np.diff(x, axis=0, prepend=a, append=x[:1] * 2), (X23, W3[None])),
    "ediff1d": (lambda x: np.ediff1d(x, to_begin=x[0, :1], to_end=[7.0]), (X23,)),
    "trapezoid": (lambda y: np.trapezoid(y), (X23,)),
    "trapezoid_x": (lambda y, x: np.trapezoid(y, x, axis=1), (X23, np.cumsum(W3))),
    "trapezoid_dx": (lambda y, dx: np.trapezoid(y, dx=dx, axis=0), (X23, np.float64(0.3))),
    "gradient": (lambda f: np.gradient(f[0]), (X23,)),
    "gradient_2d": (lambda f: np.stack(np.gradient(f, 0.5, edge_order=2)),
                    (R.normal(size=(3, 4)),)),
    "gradient_coords": (lambda f, x: np.gradient(f, x, axis=1, edge_order=2),
                        (R.normal(size=(2, 4)), np.array([0.0, 0.3, 1.0, 1.4]))),
    "gradient_coords_1": (lambda f, x: np.gradient(f, x), (R.normal(size=4),
                                                          np.array([0.0, 0.3, 1.0, 1.4]))),
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reductions(name):
    f, args = REDUCTIONS[name]
    check(f, *args)


def test_cumprod_exact_with_zeros_both_modes_and_order_2():
    x = np.array([[0.5, 0.0, 2.0, -1.5, 0.0], [0.0, 1.2, 0.0, 0.7, 3.0], [1.0, 2.0, 3.0, 0.0, 1.0]])
    check(lambda x: np.cumprod(x, axis=1), x, value_rtol=0)
    # the partials ∂y_k/∂x_i = ∏_{j≤k, j≠i} x_j, written out
    J = np.zeros((5, 5))
    row = x[0]
    for k in range(5):
        for i in range(k + 1):
            J[k, i] = np.prod([row[j] for j in range(k + 1) if j != i])
    jac = dualad.jvp(lambda r: np.cumprod(r), (row,), (np.eye(5),))[1].T
    np.testing.assert_array_equal(jac, J)
    (ct,) = dualad.vjp(np.cumprod, row)[1](np.eye(5))
    np.testing.assert_array_equal(ct, J)


def test_cumprod_third_order_at_zeros():
    x = np.array([0.0, 2.0, 0.0, 3.0])
    # y_3 = x0 x1 x2 x3: ∇ ∂²y_3/∂x0∂x2 = ∇(x1 x3) = (0, x3, 0, x1)
    f = lambda x: np.cumprod(x)[3]  # noqa: E731
    H3 = dualad.grad(lambda x: dualad.grad(lambda x: dualad.grad(f)(x)[0])(x)[2])(x)
    np.testing.assert_array_equal(H3, [0.0, 3.0, 0.0, 2.0])
    T = dualad.jvp(lambda x: dualad.jvp(lambda x: dualad.grad(f)(x), (x,), (np.eye(4)[0],))[1],
                   (x,), (np.eye(4)[2],))[1]
    np.testing.assert_array_equal(T, [0.0, 3.0, 0.0, 2.0])


def test_nan_reductions_give_nan_entries_zero_derivative_and_all_nan_slices_nan():
    x = np.array([[1.0, np.nan, 3.0], [np.nan, np.nan, np.nan]])
    for f in (lambda x: np.nansum(x, axis=1), lambda x: np.nanmean(x, axis=1),
              lambda x: np.nanmax(x, axis=1), lambda x: np.nanvar(x, axis=1),
              lambda x: np.nanmedian(x, axis=1), lambda x: np.nancumprod(x, axis=1)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            val = dualad.jvp(f, (x,), (np.ones_like(x),))[0]
            np.testing.assert_array_equal(val, f(x))
            g = dualad.grad(lambda x: np.nansum(f(x)))(x)
        assert g[0, 1] == 0.0 and np.all(g[1] == 0.0)
        assert np.all(np.isfinite(g))


def test_ptp_and_nanmax_ties_split_evenly():
    for g in both_modes_grad(lambda x: np.ptp(x), np.array([3.0, 1.0, 3.0, 1.0])):
        np.testing.assert_allclose(g, [0.5, -0.5, 0.5, -0.5])
    for g in both_modes_grad(lambda x: np.nanmax(x), np.array([3.0, np.nan, 3.0])):
        np.testing.assert_allclose(g, [0.5, 0.0, 0.5])


def test_average_zero_weights_raise():
    with pytest.raises(ZeroDivisionError, match="average"):
        dualad.grad(lambda x: np.average(x, weights=np.zeros(3)))(W3)
    with pytest.raises(ValueError, match="average"):
        dualad.grad(lambda x: np.average(x, axis=1, weights=np.ones(2)))(X23)


# --- ndarray methods ---------------------------------------------------------------------------
def test_box_methods():
    check(lambda x: x.cumprod(axis=1) + x.round() + x.repeat(2, axis=1)[:, ::2]
          + x.take([0, 0, 1], axis=1) + x.compress([True, False], axis=0) + x.copy(), X23)


@pytest.mark.parametrize("method,args", [("resize", ((3, 2),))])
def test_in_place_methods_raise_and_name_the_alternative(method, args):
    with pytest.raises(TypeError, match=f"x.{method}.*in place.*np|x.{method}.*in place.*dualad"):
        dualad.grad(lambda x: np.sum(getattr(x, method)(*args)))(X23)


@pytest.mark.parametrize("method,args", [("sort", ()), ("partition", (1,)), ("fill", (0.0,)),
                                         ("put", ([0], [1.0]))])
def test_in_place_methods_write_and_an_input_raises(method, args):
    """In-place methods write the array (dualad.frontend.inplace, tests/dualad/frontend/test_updates_inplace.py);
    on an input of grad the write raises and names the copy to write into."""
    with pytest.raises(TypeError, match=r"in-place write.*x.copy\(\)"):
        dualad.grad(lambda x: np.sum(getattr(x, method)(*args)))(X23)

    def f(x):
        y = x * 1.0
        getattr(y, method)(*args)
        return y
    np.testing.assert_allclose(dualad.jvp(f, (X23,), (X23,))[0], f(X23.copy()))
    check(f, X23)


def test_full_with_traced_fill_value():
    check(lambda v: dnp.full((2, 3), v) * X23, np.float64(0.7),
          reference=lambda v: np.full((2, 3), v) * X23)
    with pytest.raises(TypeError, match="full"):
        dualad.grad(lambda v: np.sum(dnp.full(3, v, dtype=int)))(0.5)


EINSUM_REPEATED = {   # a subscript repeated within one operand reads a diagonal
    "ii->i": (R.normal(size=(3, 3)),), "ii->": (R.normal(size=(3, 3)),),
    "ii": (R.normal(size=(3, 3)),), "iij->ij": (R.normal(size=(3, 3, 2)),),
    "iij->": (R.normal(size=(3, 3, 2)),), "iji->j": (R.normal(size=(3, 2, 3)),),
    "iii->i": (R.normal(size=(3, 3, 3)),), "...jj->...j": (R.normal(size=(2, 3, 3)),),
    "ij,jj->i": (R.normal(size=(2, 3)), R.normal(size=(3, 3))),
    "ii,jj->ij": (R.normal(size=(3, 3)), R.normal(size=(2, 2))),
    "ii,ij->j": (R.normal(size=(3, 3)), R.normal(size=(3, 2))),
}


@pytest.mark.parametrize("spec", sorted(EINSUM_REPEATED))
def test_einsum_repeated_subscripts_in_both_modes(spec):
    from dualad.verification import check_grads
    args = EINSUM_REPEATED[spec]
    f = lambda *xs: np.einsum(spec, *xs)  # noqa: E731
    check_grads(f, args, order=2, modes=("fwd", "rev"))
    check(f, *args)


def test_einsum_diagonal_cotangent_is_the_diagonal_embedding():
    a = R.normal(size=(3, 3))
    for g in both_modes_grad(lambda x: np.einsum("ii->i", x) * W3, a):
        np.testing.assert_array_equal(g, np.diag(W3))
    for g in both_modes_grad(lambda x: np.einsum("ii", x), a):
        np.testing.assert_array_equal(g, np.eye(3))
    g = dualad.grad(lambda x: np.einsum("ii->", x))(a.astype(np.float32))
    assert g.dtype == np.float32


def test_new_names_surface_in_dualad_numpy():
    for name in ("sinc", "cumprod", "nanmean", "median", "quantile", "sort", "pad", "kron",
                 "convolve", "linspace", "full", "interp", "tile", "take_along_axis"):
        assert getattr(dnp, name).__module__.startswith("dualad"), name


# --- float32 stays float32 --------------------------------------------------------------------
FLOAT32 = {
    "sort_ties": lambda x: np.sort(np.round(x)), "cumprod_zeros": lambda x: np.cumprod(x * (x > 0)),
    "median": lambda x: np.median(x, axis=1), "quantile": lambda x: np.quantile(x, 0.3, axis=0),
    "nanmean": lambda x: np.nanmean(x), "pad": lambda x: np.pad(x, 1, constant_values=2.0),
    "linspace": lambda x: np.linspace(x[0, 0], x[0, 1], 4),
    "copysign": lambda x: np.copysign(x, -1),
    "sinc": np.sinc, "mod": lambda x: np.mod(x, np.float32(0.7)), "unique": np.unique,
    "convolve": lambda x: np.convolve(x[0], x[1]), "kron": lambda x: np.kron(x, x),
}


@pytest.mark.parametrize("name", sorted(FLOAT32))
def test_float32_stays_float32(name):
    f = FLOAT32[name]
    x = X23.astype(np.float32)
    val, tan = dualad.jvp(f, (x,), (np.ones_like(x),))
    assert np.asarray(val).dtype == np.asarray(f(x)).dtype == np.float32
    assert np.asarray(tan).dtype == np.float32
    assert dualad.grad(lambda x: np.sum(f(x)))(x).dtype == np.float32


def test_quantile_dtype_follows_numpy():
    x = X23.astype(np.float32)
    for q in (0.3, [0.3, 0.8], np.float32(0.5), 30):
        for f in (np.quantile, np.percentile):
            qq = q if f is np.percentile or q != 30 else 0.3
            val = dualad.jvp(lambda x: f(x, qq), (x,), (np.ones_like(x),))[0]
            assert np.asarray(val).dtype == np.asarray(f(x, qq)).dtype, (f, qq)


def test_unique_named_tuples_and_real_if_close():
    x = np.array([3.0, 1.0, 3.0, 2.0])
    for fn in (np.unique_all, np.unique_inverse, np.unique_counts, np.unique_values):
        res = dualad.jvp(lambda x: fn(x), (x,), (np.ones(4),))[0]
        ref = fn(x)
        vals = res.values if hasattr(res, "values") else res
        np.testing.assert_array_equal(dualad.extend.primal_value(vals),
                                      ref.values if hasattr(ref, "values") else ref)
    check(lambda x: np.real_if_close(x) * 2.0, X23)


@pytest.mark.parametrize("f", [lambda x: np.histogram(x)[0], lambda x: np.nextafter(x, 1.0),
                               lambda x: np.pad(x, 1, mode="median")])
def test_unsupported_functions_raise_instead_of_dropping_the_derivative(f):
    with pytest.raises(NotImplementedError, match="histogram|nextafter|median"):
        dualad.grad(lambda x: np.sum(f(x)))(X23)


# --- the SymPy oracle on compositions: the rules on symbols against sympy.diff ---------------
SYMBOLIC = {
    "diff": (lambda x: np.diff(x, n=2), [(4,)]),
    "kron": (lambda a, b: np.kron(a, b), [(2,), (2,)]),
    "polyval": (lambda p, x: np.polyval(p, x), [(3,), ()]),
    "trapezoid": (lambda y, x: np.trapezoid(y, x), [(3,), (3,)]),
    "convolve_same": (lambda a, v: np.convolve(a, v, "same"), [(3,), (2,)]),
    "cumprod": (lambda x: np.cumprod(x), [(3,)]),
    "cross": (lambda a, b: np.cross(a, b), [(3,), (3,)]),
    "gradient": (lambda f: np.gradient(f, edge_order=2), [(4,)]),
    "tile_pad": (lambda x: np.pad(np.tile(x, 2), 1, mode="reflect"), [(2,)]),
    "average": (lambda x, w: np.average(x, weights=w), [(3,), (3,)]),
    "sinc": (np.sinc, [()]),
    "vander": (lambda x: np.vander(x), [(3,)]),
    "linspace": (lambda a, b: np.linspace(a, b, 4), [(), ()]),
}


@pytest.mark.parametrize("name", sorted(SYMBOLIC))
def test_sympy_oracle_on_compositions(name):
    from dualad.verification.symbolic import compare
    f, shapes = SYMBOLIC[name]
    for mode in ("forward", "reverse"):
        ok, how = compare(f, shapes, mode=mode, domain=(0.2, 1.5))
        assert ok, (name, mode, how)
