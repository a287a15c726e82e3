"""The fast paths of the un-jitted Hessian-vector product (issue 19): whole powers as
products, and the HVP itself against closed forms and finite differences."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import dualad
from dualad.ops.core.elementwise import power_impl
from dualad.verification import check_grads


# --- x ** k for a small whole k: products, not libm's pow ----------------------------------
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("k", [3, 4, 5, 6, 3.0, 4.0, 6.0])
def test_power_chain_is_within_a_few_eps_of_the_exact_power(dtype, k):
    x = np.random.default_rng(0).uniform(-3, 3, 2000).astype(dtype)
    out = power_impl(x, k)
    assert out.dtype == dtype and out.shape == x.shape
    exact = x.astype(np.longdouble) ** int(k)
    rel = np.abs(out - exact) / np.abs(exact)
    assert rel.max() <= 2.5 * np.finfo(dtype).eps
    np.testing.assert_allclose(out, np.power(x, k), rtol=3 * np.finfo(dtype).eps)


@pytest.mark.parametrize("k", [3, 4, 5, 6])
def test_power_chain_special_values_match_numpy(k):
    x = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e200, -1e-200, 2.0])
    with np.errstate(over="ignore", under="ignore"):
        got, want = power_impl(x, k), np.power(x, k)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))   # -0.0 ** 3 is -0.0


@pytest.mark.parametrize("x, y", [
    (np.array(-1.5), 4),                           # 0-d: NumPy's own (a NumPy scalar)
    (np.arange(-3, 4), 3),                         # integers: exact integer powers
    (np.array([1 + 2j, -0.5j]), 4),                # complex: NumPy's cpow (products too)
    (np.array([1.5, -2.0], np.float16), 4),        # half precision rounds once in pow
    (np.array([1.5, 2.0]), 7),                     # outside 3..6
    (np.array([1.5, 2.0]), 2.5),                   # not whole
    (np.array([1.5, 2.0]), np.int64(4)),           # a NumPy integer: NumPy's own
    (np.array([1.5, 2.0]), np.array([3, 4])),      # an array exponent
    (1.5, 4), (-2.0, 3),                           # Python scalars
])
def test_power_impl_is_the_operator_elsewhere(x, y):
    got, want = power_impl(x, y), x ** y
    assert type(got) is type(want)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("k", [3, 4, 5, 6])
@pytest.mark.parametrize("shape", [(3,), (2, 3)])
def test_whole_powers_derivatives_at_negative_bases(k, shape):
    x = np.random.default_rng(k).uniform(-2.0, -0.5, shape)
    check_grads(lambda x: x ** k, x, order=2)
    check_grads(lambda x: np.power(x, float(k)) * 0.5, x, order=2)


def test_whole_power_float32_stays_float32_through_grad_and_hvp():
    x = np.array([-1.5, 0.5, 2.0], np.float32)
    v = np.array([1.0, -2.0, 0.5], np.float32)
    g = dualad.grad(lambda x: np.sum(x ** 4))(x)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, 4 * x.astype(float) ** 3, rtol=1e-6)
    hv = dualad.hvp(lambda x: np.sum(x ** 4), x, v)
    assert hv.dtype == np.float32
    np.testing.assert_allclose(hv, 12 * x.astype(float) ** 2 * v, rtol=1e-6)


# --- the HVP of the benchmark's function, against its closed form ---------------------------
def _bench_f(x):
    return np.sum(np.log(np.cosh(x[1:] - x[:-1] ** 2))) + 0.25 * np.sum(x ** 4)


def _bench_hvp_closed_form(x, v):
    """∇²f v for f = Σ log cosh(u_i) + ¼ Σ x⁴, u_i = x_{i+1} − x_i²: with t = tanh(u),
    s = 1 − t², u̇ = v_{i+1} − 2 x_i v_i, the product is 3x²v + (s u̇ into i+1)
    + (−2 x_i s u̇ − 2 t v_i into i)."""
    u = x[1:] - x[:-1] ** 2
    t = np.tanh(u)
    s = 1 - t * t
    du = v[1:] - 2 * x[:-1] * v[:-1]
    out = 3 * x ** 2 * v
    out[1:] += s * du
    out[:-1] += -2 * x[:-1] * s * du - 2 * t * v[:-1]
    return out


@pytest.mark.parametrize("n", [2, 3, 10, 1000])
def test_bench_hvp_against_its_closed_form(n):
    rng = np.random.default_rng(n)
    x, v = rng.uniform(-1, 1, n), rng.standard_normal(n)
    np.testing.assert_allclose(dualad.hvp(_bench_f, x, v), _bench_hvp_closed_form(x, v),
                               rtol=1e-12, atol=1e-13)


def test_bench_hvp_batch_of_directions():
    rng = np.random.default_rng(1)
    x, V = rng.uniform(-1, 1, 50), rng.standard_normal((4, 50))
    got = dualad.hvp(_bench_f, x, V)
    assert got.shape == (4, 50)
    for k in range(4):
        np.testing.assert_allclose(got[k], _bench_hvp_closed_form(x, V[k]), rtol=1e-12,
                                   atol=1e-13)


def test_bench_function_second_derivatives_by_finite_differences():
    x = np.random.default_rng(2).uniform(-1, 1, 6)
    check_grads(_bench_f, x, order=2)


def test_bench_hvp_complex_input_against_finite_differences():
    """A real function of a complex input (JAX's convention, docs/complex.md): the HVP is
    the directional derivative of the gradient, checked by central differences."""
    rng = np.random.default_rng(3)
    z = rng.uniform(-1, 1, 5) + 1j * rng.uniform(-1, 1, 5)
    v = rng.standard_normal(5) + 1j * rng.standard_normal(5)
    f = lambda z: np.sum(np.abs(z) ** 4) + np.sum(np.real(z) ** 3)   # noqa: E731
    g = dualad.grad(f)
    h = 1e-5
    fd = (g(z + h * v) - g(z - h * v)) / (2 * h)
    np.testing.assert_allclose(dualad.hvp(f, z, v), fd, rtol=1e-7, atol=1e-8)


@settings(derandomize=True, max_examples=25, deadline=None)
@given(st.integers(3, 6), st.integers(1, 40), st.floats(-3, 3), st.floats(0.1, 2))
def test_whole_power_hvp_closed_form(k, n, lo, width):
    x = np.linspace(lo, lo + width, n)
    v = np.cos(np.arange(n))
    got = dualad.hvp(lambda x: np.sum(x ** k), x, v)
    np.testing.assert_allclose(got, k * (k - 1) * x ** (k - 2) * v, rtol=1e-12, atol=1e-12)


# --- a sum's broadcast-1 cotangent times a partial is the partial --------------------------
# (sum's VJP materializes small cotangents, dualad.ops.core.linear: the broadcast view, and
# so the shortcut, is for arrays of more than 65536 entries)
BIG = 70_000


def _spy_broadcast_one(monkeypatch):
    import dualad.interpreters.reverse.sweep as sweep
    taken = []
    real = sweep._broadcast_one

    def spy(ct, dv, node):
        out = real(ct, dv, node)
        taken.append(bool(out))
        return out
    monkeypatch.setattr(sweep, "_broadcast_one", spy)
    return taken


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sum_of_elementwise_gradient_skips_the_pass_and_is_exact(monkeypatch, dtype):
    taken = _spy_broadcast_one(monkeypatch)
    x = np.linspace(-2, 2, BIG).astype(dtype)
    g = dualad.grad(lambda x: np.sum(np.sin(x)))(x)
    assert taken == [True]
    assert g.dtype == dtype
    np.testing.assert_array_equal(g, np.cos(x))          # 1 · cos(x) = cos(x), bit for bit


def test_broadcast_one_shortcut_never_aliases_what_the_caller_holds(monkeypatch):
    taken = _spy_broadcast_one(monkeypatch)
    x = np.linspace(-1, 1, BIG)
    # exp's partial is its own value, which the caller gets back as aux: not shared
    (_, aux), g = dualad.value_and_grad(lambda x: (np.sum(np.exp(x)), np.exp(x)),
                                        has_aux=True)(x)
    assert taken == [False] and not np.shares_memory(g, aux)
    np.testing.assert_allclose(g, np.exp(x))
    # multiply's partial in x is the constant W itself: never returned as the gradient
    W = np.arange(float(BIG))
    g = dualad.grad(lambda x: np.sum(x * W))(x)
    assert not np.shares_memory(g, W)
    g[:] = -1.0
    np.testing.assert_array_equal(W, np.arange(float(BIG)))
    # its hvp: the partial is computed from dual numbers, the result the closed form
    v = np.cos(x)
    np.testing.assert_allclose(dualad.hvp(lambda x: np.sum(np.sin(x)), x, v), -np.sin(x) * v)


def test_broadcast_one_shortcut_is_not_taken_for_other_cotangents(monkeypatch):
    taken = _spy_broadcast_one(monkeypatch)
    x = np.linspace(0.5, 1.5, BIG)
    np.testing.assert_allclose(dualad.grad(lambda x: 3.0 * np.sum(np.log(x)))(x), 3.0 / x)
    np.testing.assert_allclose(dualad.grad(lambda x: np.mean(np.log(x)))(x), 1 / (BIG * x))
    assert taken == [False, False]                       # a broadcast 3, a broadcast 1/n
    # a real 1 against a complex partial (dtypes differ): the product, complex
    z = x * (1 + 0.5j)
    np.testing.assert_allclose(dualad.grad(lambda z: np.sum(np.real(np.exp(z))))(z),
                               np.exp(z))   # ∂f/∂x − i ∂f/∂y of eˣ cos y
