"""Issue 30, reverse mode: constants mutated inside the differentiated function, and
structural zeros of cotangents (entries the output does not use) that multiplied a
non-finite partial into nan."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import dualad
from dualad import jacobians
from dualad.interpreters.reverse.versions import CONSTANT_BYTES

X = np.array([0.1, 0.2])


# --- a constant mutated after its use and before the sweep ---------------------------------
def _mutations():
    def item(c):
        c[0] = 50.0

    def copyto(c):
        np.copyto(c, 7.0)

    def inplace_ufunc(c):
        c *= 2.0

    return [item, copyto, inplace_ufunc]


def _loss(c, mutate):
    def loss(x):
        y = np.sin(x) * c
        mutate(c)
        return np.sum(y)
    return loss


@pytest.mark.parametrize("mutate", _mutations(), ids=lambda m: m.__name__)
@pytest.mark.parametrize("n", [2, 100_000], ids=["small", "large"])
def test_grad_raises_for_a_constant_mutated_after_its_use(mutate, n):
    assert n * 8 <= CONSTANT_BYTES
    c = np.arange(1.0, n + 1)
    with pytest.raises(RuntimeError) as e:
        dualad.grad(_loss(c, mutate))(np.full(n, 0.1))
    msg = str(e.value)
    assert msg.startswith("grad: loss modified an array in place")
    assert f"shape ({n},)" in msg and "float64" in msg and "'multiply'" in msg
    assert "c = c.copy()" in msg


@pytest.mark.parametrize("mutate", _mutations(), ids=lambda m: m.__name__)
def test_vjp_raises_for_a_constant_mutated_inside_f(mutate):
    c = np.array([1.0, 2.0])
    with pytest.raises(RuntimeError, match=r"vjp: loss modified an array in place.*c = c\.copy"):
        dualad.vjp(_loss(c, mutate), X)


def test_hessian_forward_over_reverse_raises_for_a_mutated_constant():
    c = np.array([1.0, 2.0])

    def f(x):
        y = np.sin(x) * c
        c[...] *= 2.0             # changes on every call
        return np.sum(y)
    with pytest.raises(RuntimeError, match="modified an array in place"):
        jacobians.hessian(f, X, mode="forward-over-reverse")


def test_a_constant_changed_between_two_uses_raises_even_when_restored():
    c = np.array([1.0, 2.0])

    def f(x):
        a = np.sum(x * c)
        c[0] = 5.0
        b = np.sum(x * c)         # uses other values than the first use
        c[0] = 1.0                # restored before the sweep
        return a + b
    with pytest.raises(RuntimeError, match="and then, with other values, by 'multiply'"):
        dualad.grad(f)(X)


def test_constants_not_mutated_or_mutated_outside_do_not_raise():
    c = np.array([1.0, 2.0])
    big = np.linspace(0.0, 1.0, 50_000)

    def f(x):
        y = np.sin(x) * c + np.sum(big) * x    # a large constant used unchanged
        c2 = c.copy()
        c2[0] = 50.0                            # the documented fix: mutate a copy
        return np.sum(y * c2[::-1])
    g = dualad.grad(f)(X)
    c[0] = 9.0                                  # after the gradient: nothing recorded
    ref = np.cos(X) * [1.0, 2.0] * [2.0, 50.0] + np.sum(big) * np.array([2.0, 50.0])
    np.testing.assert_allclose(g, ref)
    # mutated before any use: the value used is the one seen
    d = np.array([1.0, 2.0])

    def h(x):
        d[0] = 3.0
        return np.sum(x * d)
    np.testing.assert_allclose(dualad.grad(h)(X), [3.0, 2.0])


def test_scalar_code_and_operator_constants():
    c = np.array([2.0, 3.0])

    def f(x):
        y = x * c                 # Var.__mul__ with an ndarray: the operator's fast entry
        np.add(c, 1.0, out=c)
        return np.sum(y)
    with pytest.raises(RuntimeError, match="modified an array in place"):
        dualad.grad(f)(X)
    assert dualad.grad(lambda x: x * 2.0 + 1.0)(3.0) == 2.0


# --- structural zeros: entries the output does not use --------------------------------------
X_NEG = np.array([-1.0, 4.0, 0.0, 9.0])


def _quiet(fn, *a, **k):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return fn(*a, **k)


FUNCTIONS = {
    "index": lambda x: np.sqrt(x)[1],
    "slice": lambda x: np.sum(np.log(x)[1::2]),
    "fancy": lambda x: np.sum(np.sqrt(x)[[1, 3, 3]]),
    "mask": lambda x: np.sum(np.sqrt(x)[np.array([False, True, False, True])]),
    "take": lambda x: np.sum(np.take(np.sqrt(x), [3, 1])),
    "take_along_axis": lambda x: np.sum(np.take_along_axis(np.sqrt(x), np.array([1, 3]), 0)),
    "compress": lambda x: np.sum(np.compress([False, True, False, True], np.sqrt(x))),
    "where": lambda x: np.sum(np.where(x > 0, np.sqrt(x), 0.0) ** 3),
    "select": lambda x: np.sum(np.select([x > 1, x > 0], [np.log(x), np.sqrt(x)], 0.0)),
    "at_set": lambda x: np.sum(x.at[0].set(np.sqrt(x)[1]) * x.at[2].set(1.0)),
    "loop": lambda x: sum(np.log(x)[i] for i in (1, 3)),
    "chain": lambda x: np.sum(np.exp(np.log(np.sqrt(x)) * 2.0)[1:][::2]),
    "broadcast": lambda x: np.sum((np.sqrt(x)[None, :] * np.ones((2, 1)))[:, 1]),
}


@pytest.mark.parametrize("name", FUNCTIONS)
def test_reverse_agrees_with_forward(name):
    f = FUNCTIONS[name]
    fwd = _quiet(jacobians.jacfwd, f, X_NEG)
    assert np.all(np.isfinite(fwd)), fwd
    np.testing.assert_allclose(_quiet(dualad.grad(f), X_NEG), fwd, rtol=1e-12)
    np.testing.assert_allclose(_quiet(jacobians.jacrev, f, X_NEG), fwd, rtol=1e-12)
    (ct,) = _quiet(lambda: dualad.vjp(f, X_NEG)[1](1.0))
    np.testing.assert_allclose(ct, fwd, rtol=1e-12)


def test_the_issue_cases():
    x = np.array([-1.0, 4.0])
    g = _quiet(dualad.grad(lambda x: np.sqrt(x)[1]), x)
    np.testing.assert_array_equal(g, [0.0, 0.25])
    g = _quiet(dualad.grad(lambda x: np.sum(x.at[0].set(np.sqrt(x)[1]))), x)
    np.testing.assert_array_equal(g, [0.0, 1.25])


@pytest.mark.parametrize("name", ["where", "select", "index", "chain", "at_set"])
@pytest.mark.parametrize("mode", ["forward-over-reverse", "reverse-over-reverse",
                                  "reverse-over-forward"])
def test_hessian_modes_agree_with_forward_over_forward(name, mode):
    f = FUNCTIONS[name]
    ref = _quiet(jacobians.hessian, f, X_NEG, mode="forward-over-forward")
    assert np.all(np.isfinite(ref))
    np.testing.assert_allclose(_quiet(jacobians.hessian, f, X_NEG, mode=mode), ref,
                               rtol=1e-12, atol=1e-300)


def test_hvp_forward_over_reverse_where():
    f = FUNCTIONS["where"]
    v = np.ones(4)
    hv = _quiet(dualad.hvp, f, (X_NEG,), (v,))
    hv = hv[0] if isinstance(hv, tuple) else hv
    np.testing.assert_allclose(
        hv, _quiet(jacobians.hessian, f, X_NEG, mode="forward-over-forward") @ v)


def test_numerical_zeros_keep_ieee_arithmetic():
    """Only structural zeros are exempt: (√x)² at 0 has cotangent 2·√0 = 0 times √'s inf,
    nan in both modes (a numerical zero, not an unused entry)."""
    f = lambda x: np.sum(np.sqrt(x) ** 2)  # noqa: E731
    x = np.array([0.0, 4.0])
    assert np.isnan(_quiet(dualad.grad(f), x)[0])
    assert np.isnan(_quiet(jacobians.jacfwd, f, x)[0])
    # a used entry keeps its nan: the output does depend on it
    assert np.isnan(_quiet(dualad.grad(lambda x: np.sum(np.sqrt(x)[:2])), X_NEG)[0])


def test_dtype_and_batch_of_cotangents_kept():
    x32 = X_NEG.astype(np.float32)
    g = _quiet(dualad.grad(lambda x: np.sqrt(x)[1]), x32)
    assert g.dtype == np.float32 and g[0] == 0.0
    f = lambda x: np.sqrt(x)[1:3]  # noqa: E731
    J = _quiet(jacobians.jacrev, f, X_NEG)        # one-hot seeds: their zeros are structural
    np.testing.assert_array_equal(J, _quiet(jacobians.jacfwd, f, X_NEG))
    assert J[0, 2] == 0.0 and J[1, 2] == np.inf   # √'s derivative at 0 where it is used
    # a cotangent the user passes is numbers: its zeros are numerical (0 · inf = nan)
    _, pullback = _quiet(dualad.vjp, f, X_NEG)
    (J,) = _quiet(pullback, np.eye(2))
    assert np.isnan(J[0, 2]) and J[0, 0] == 0.0


@settings(derandomize=True, max_examples=40, deadline=None)
@given(st.lists(st.floats(-2.0, 2.0), min_size=2, max_size=6),
       st.lists(st.integers(0, 5), min_size=1, max_size=4))
def test_property_index_of_sqrt_agrees_with_forward(xs, picks):
    x = np.array(xs)
    idx = [p % x.size for p in picks]
    f = lambda x: np.sum(np.sqrt(x)[idx] * 2.0)  # noqa: E731
    fwd = _quiet(jacobians.jacfwd, f, x)
    rev = _quiet(dualad.grad(f), x)
    np.testing.assert_array_equal(np.isnan(rev), np.isnan(fwd))
    np.testing.assert_allclose(rev, fwd, rtol=1e-12, equal_nan=True)


def test_index_masks_under_jit_match_grad_and_read_no_value():
    f = lambda x: np.sqrt(x)[1]  # noqa: E731
    g = dualad.jit(dualad.grad(f))
    for x in (np.array([-1.0, 4.0]), np.array([-4.0, 9.0]), np.array([4.0, 1.0])):
        np.testing.assert_array_equal(_quiet(g, x), _quiet(dualad.grad(f), x))
    assert sum(g.cache_info().values()) == 1      # one trace: the mask is no guard
