"""Derivatives at the numerical edges of the primitives (issue 15): std over one entry or
constant data, selections whose unselected branch is inf, logaddexp at large magnitude,
det/slogdet at singular matrices."""
import warnings

import numpy as np
import pytest
import sympy

import dualad
from dualad.core.primitive import REGISTRY
from dualad.verification.rules import check_rule

pytestmark = pytest.mark.slow   # per-primitive rule checks: in the full suite, not the quick subset


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


# --- std / var ----------------------------------------------------------------------------
def test_std_of_one_entry_has_derivative_zero():
    assert dualad.grad(np.std)(3.5) == 0.0
    assert dualad.grad(np.nanstd)(3.5) == 0.0
    x = np.array([[1.0, 2.0, 3.0]])           # batch normalization over a batch of one
    _, pullback = dualad.vjp(lambda v: np.std(v, axis=0), x)
    np.testing.assert_array_equal(pullback(np.ones(3))[0], np.zeros((1, 3)))
    _, t = dualad.jvp(lambda v: np.std(v, axis=0), (x,), (np.ones_like(x),))
    np.testing.assert_array_equal(t, np.zeros(3))
    assert dualad.derivative(np.std, 2)(3.5) == 0.0


def test_std_of_constant_data_has_derivative_zero_by_convention():
    # std(c + h t) = |h| std(t): no derivative; 0 is PyTorch's convention (docs)
    for ddof in (0, 1):
        g = dualad.grad(lambda v: np.std(v, ddof=ddof))(np.array([2.0, 2.0, 2.0]))
        np.testing.assert_array_equal(g, np.zeros(3))
    # elsewhere std's derivative is unchanged: (x - mean) / (n std)
    x = np.array([1.0, 2.0, 4.0])
    np.testing.assert_allclose(dualad.grad(np.std)(x), (x - x.mean()) / (3 * np.std(x)))


def test_var_and_std_with_ddof_at_least_n_give_numpys_nan_and_nan_derivative():
    value, g = dualad.value_and_grad(lambda v: np.std(v, ddof=1))(np.array([1.0]))
    assert np.isnan(value) and np.isnan(np.std(np.array([1.0]), ddof=1)) and np.isnan(g).all()
    value, g = dualad.value_and_grad(lambda v: np.var(v, ddof=3))(np.array([1.0, 2.0]))
    assert value == np.var(np.array([1.0, 2.0]), ddof=3) == np.inf   # never a negative count
    assert np.isnan(g).all()


def test_plain_sqrt_keeps_its_infinite_derivative_at_zero():
    assert dualad.grad(np.sqrt)(0.0) == np.inf


# --- selections: the branch not taken gets exactly 0 ----------------------------------------
SELECTIONS = [
    (lambda v: np.sqrt(np.maximum(v, 0.0)), -1.0),
    (lambda v: np.sqrt(-np.minimum(v, 0.0)), 1.0),
    (lambda v: np.sqrt(np.clip(v, 0.0, 2.0)), -1.0),
    (lambda v: np.sqrt(np.fmax(v, 0.0)), -1.0),
    (lambda v: np.sqrt(-np.fmin(v, 0.0)), 1.0),
]


@pytest.mark.parametrize("k", range(len(SELECTIONS)))
def test_inf_cotangent_of_the_selected_branch_does_not_reach_the_other(k):
    f, x = SELECTIONS[k]
    assert dualad.grad(f)(x) == 0.0


@pytest.mark.parametrize("f", [lambda v: np.maximum(v, 0.0), lambda v: np.minimum(-v, 0.0),
                               lambda v: np.clip(v, 0.0, 2.0), lambda v: np.fmax(v, 0.0),
                               lambda v: np.fmin(-v, 0.0)])
def test_inf_or_nan_tangent_of_the_branch_not_taken_is_selected_away(f):
    for bad in (np.inf, np.nan):
        _, t = dualad.jvp(f, (-1.0,), (bad,))
        assert t == 0.0


def test_selection_in_vector_mode_and_batched_cotangents():
    x = np.array([-1.0, 4.0, 16.0])
    f = lambda v: np.sqrt(np.maximum(v, 0.0))         # noqa: E731
    _, pullback = dualad.vjp(f, x)
    g = pullback(np.array([[1.0, 1.0, 0.0], [2.0, 0.0, 0.0]]))[0]   # a batch of 2
    np.testing.assert_array_equal(g, [[0.0, 0.25, 0.0], [0.0, 0.0, 0.0]])
    tangents = np.array([[np.inf, 1.0, 0.0], [np.nan, 0.0, 1.0]])   # two directions
    _, t = dualad.jvp(lambda v: np.maximum(v, 0.0), (x,), (tangents,))
    np.testing.assert_array_equal(t, [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])


def test_max_and_min_reductions_select_the_cotangent():
    x = np.array([-1.0, 0.0, -2.0])
    np.testing.assert_array_equal(dualad.grad(lambda v: np.sqrt(np.max(v)))(x), [0, np.inf, 0])
    np.testing.assert_array_equal(dualad.grad(lambda v: np.sqrt(-np.min(-v)))(x), [0, np.inf, 0])
    _, t = dualad.jvp(np.max, (x,), (np.array([np.inf, 1.0, np.nan]),))
    assert t == 1.0


def test_selection_second_order_and_tie_convention():
    f = lambda v: np.maximum(v, 0.0) ** 2             # noqa: E731
    assert dualad.derivative(f, 2)(-1.0) == 0.0 and dualad.derivative(f, 2)(1.0) == 2.0
    assert dualad.grad(lambda v: np.maximum(v, 1.0))(1.0) == 0.5     # ties split evenly
    assert dualad.grad(lambda v: np.minimum(v, 1.0))(1.0) == 0.5
    assert dualad.grad(lambda v: np.clip(v, 0.0, 1.0))(1.0) == 0.5
    assert dualad.grad(lambda v: np.sum(np.max(v)))(np.array([2.0, 2.0, 1.0])).tolist() == \
        [0.5, 0.5, 0.0]


def test_fmax_fmin_differentiate_the_number_when_the_other_is_nan():
    assert dualad.grad(lambda v: np.fmax(v, np.nan))(2.0) == 1.0
    assert dualad.grad(lambda v: np.fmin(np.nan, v))(2.0) == 1.0
    assert dualad.grad(lambda v: np.fmax(np.nan, v))(2.0) == 1.0
    assert dualad.grad(lambda v: np.maximum(v, np.nan))(2.0) == 0.0   # value nan


# --- logaddexp ----------------------------------------------------------------------------
def _exact_partial(x, y, base2=False):
    """∂/∂x of logaddexp (or logaddexp2) by mpmath at 50 digits: 1/(1 + b^(y−x))."""
    mp = sympy.mpmath if hasattr(sympy, "mpmath") else __import__("mpmath")
    mp.mp.dps = 50
    b = mp.mpf(2) if base2 else mp.e
    return float(1 / (1 + b ** (mp.mpf(float(y)) - mp.mpf(float(x)))))


@pytest.mark.parametrize("base2", [False, True])
@pytest.mark.parametrize("dtype, mags", [(np.float32, [1e7, 3e5, 1.0, 1e30]),
                                         (np.float64, [1e15, 1e8, 1.0, 1e300])])
def test_logaddexp_partials_exact_at_every_magnitude(base2, dtype, mags):
    fn = np.logaddexp2 if base2 else np.logaddexp
    eps = np.finfo(dtype).eps
    for m in mags:
        for x, y in [(m, m), (m, -m), (-m, -m), (m, m * (1 + 8 * eps)), (m + 1, m)]:
            x, y = dtype(x), dtype(y)
            gx, gy = dualad.grad(lambda a, b: fn(a, b), argnums=(0, 1))(x, y)
            assert type(gx) is dtype and type(gy) is dtype
            for got, want in [(gx, _exact_partial(x, y, base2)), (gy, _exact_partial(y, x, base2))]:
                assert abs(got - want) <= 4 * eps * max(want, 1e-300) + 1e-300, (m, x, y, got, want)


def test_logaddexp_ties_and_infinities():
    for fn in (np.logaddexp, np.logaddexp2):
        for v in (0.0, 1e15, np.inf, -np.inf):
            assert dualad.grad(lambda a, b: fn(a, b), argnums=(0, 1))(v, v) == (0.5, 0.5)
        assert dualad.grad(lambda a: fn(a, 1.0))(np.inf) == 1.0
        assert dualad.grad(lambda a: fn(a, np.inf))(1.0) == 0.0
    assert dualad.derivative(lambda a: np.logaddexp(a, 0.0), 2)(0.0) == 0.25


# --- det / slogdet at singular matrices ------------------------------------------------
def _adjugate_T(a):
    return np.array(sympy.Matrix(a.tolist()).adjugate().T, dtype=float)


SINGULAR = [np.array([[1.0, 2.0], [2.0, 4.0]]),                             # rank 1 of 2
            np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]]),  # rank 2 of 3
            np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [3.0, 6.0, 9.0]]),  # rank 1 of 3: 0
            np.zeros((3, 3))]


@pytest.mark.parametrize("k", range(len(SINGULAR)))
def test_det_derivative_at_a_singular_matrix_is_the_adjugate(k):
    a = SINGULAR[k]
    want = _adjugate_T(a)
    np.testing.assert_allclose(dualad.grad(np.linalg.det)(a), want, atol=1e-12)
    t = np.arange(a.size, dtype=float).reshape(a.shape) / a.size
    _, jt = dualad.jvp(np.linalg.det, (a,), (t,))
    np.testing.assert_allclose(jt, np.sum(want * t), atol=1e-12)


def test_det_derivative_on_a_stack_mixing_singular_and_regular_matrices():
    stack = np.stack([SINGULAR[1], np.diag([2.0, 3.0, 4.0]), SINGULAR[3]])
    want = np.stack([_adjugate_T(m) for m in stack])
    _, pullback = dualad.vjp(np.linalg.det, stack)
    np.testing.assert_allclose(pullback(np.ones(3))[0], want, atol=1e-12)
    t = np.ones((2,) + stack.shape)                       # vector mode: two directions
    _, jt = dualad.jvp(np.linalg.det, (stack,), (t,))
    np.testing.assert_allclose(jt, np.sum(want * t, axis=(-2, -1)), atol=1e-12)


def test_det_second_derivative_nonsingular_and_clear_error_at_singular():
    # tr(adj(A)ᵀ) of a 2x2 A is a + d: its gradient is the identity
    a = np.array([[2.0, 0.5], [-0.3, 1.5]])
    h = dualad.grad(lambda m: np.sum(dualad.grad(np.linalg.det)(m) * np.eye(2)))(a)
    np.testing.assert_allclose(h, np.eye(2), atol=1e-12)
    with pytest.raises(np.linalg.LinAlgError, match=r"det: the second derivative at a singular"):
        dualad.grad(lambda m: np.sum(dualad.grad(np.linalg.det)(m)))(SINGULAR[0])


def test_slogdet_at_a_singular_matrix_raises_naming_slogdet():
    value = np.linalg.slogdet(SINGULAR[0])[1]
    assert value == -np.inf
    with pytest.raises(np.linalg.LinAlgError, match=r"slogdet: argument a \(shape \(2, 2\)\) "
                                                    r"is a singular matrix.*np.linalg.det"):
        dualad.grad(lambda m: np.linalg.slogdet(m)[1])(SINGULAR[0])
    with pytest.raises(np.linalg.LinAlgError, match="slogdet"):
        dualad.jvp(lambda m: np.linalg.slogdet(m)[1], (SINGULAR[0],), (np.eye(2),))


@pytest.mark.parametrize("name", ["maximum", "minimum", "fmax", "fmin", "max", "min",
                                  "logaddexp", "logaddexp2", "std_sqrt", "det", "cofactor",
                                  "logabsdet", "heaviside", "cholesky"])
def test_touched_primitives_pass_the_rule_checker(name):
    report = check_rule(REGISTRY[name], order=2)
    assert report.ok, str(report)
