"""The Taylor interpreter's core: series through recurrences, linear, multilinear and
fallback rules; jet's convention; derivative's orders."""
import math

import numpy as np
import pytest

import dualad
from dualad.interpreters.taylor.rules import coverage


def test_exp_coefficients_are_one_over_factorials():
    c = dualad.taylor(np.exp, 10)(0.0)
    np.testing.assert_allclose(c, [1 / math.factorial(k) for k in range(11)], rtol=1e-15)


def test_jet_is_factorial_scaled_as_in_jax():
    # h(t) = x + t: f_k = f^(k)(x)
    y0, ys = dualad.jet(np.sin, (0.5,), ((1.0, 0.0, 0.0, 0.0),))
    np.testing.assert_allclose([y0, *ys], [np.sin(0.5), np.cos(0.5), -np.sin(0.5),
                                           -np.cos(0.5), np.sin(0.5)], rtol=1e-14)
    # a curve with a second term: (f∘h)'' = f''(h0) h1² + f'(h0) h2
    y0, (y1, y2) = dualad.jet(np.exp, (0.3,), ((2.0, 5.0),))
    np.testing.assert_allclose(y2, np.exp(0.3) * 4.0 + np.exp(0.3) * 5.0, rtol=1e-14)
    _, (n1, n2) = dualad.jet(np.exp, (0.3,), ((2.0, 2.5),), factorial_scaled=False)
    np.testing.assert_allclose(n2, y2 / 2, rtol=1e-14)


def test_jet_of_several_arguments_and_pytrees():
    def f(p, x):
        return {"a": p["w"] * np.sin(x), "b": np.sum(x ** 2)}
    p = {"w": np.array([1.0, 2.0])}
    x = np.array([0.1, 0.2])
    out, series = dualad.jet(f, (p, x), ({"w": [np.zeros(2), np.zeros(2)]},
                                         [np.ones(2), np.zeros(2)]))
    np.testing.assert_allclose(series["a"][0], p["w"] * np.cos(x))
    np.testing.assert_allclose(series["a"][1], -p["w"] * np.sin(x))
    np.testing.assert_allclose(series["b"], [2 * np.sum(x), 4.0])


def test_derivative_of_the_issue_function_to_order_30_is_fast_and_matches_nesting():
    f = lambda x: np.sin(x) * np.exp(-x ** 2) / (1 + x ** 2)   # noqa: E731
    for n in (1, 2, 4, 6):
        g = f
        for _ in range(n):
            g = (lambda h: lambda x: dualad.jvp(h, (x,), (1.0,))[1])(g)
        np.testing.assert_allclose(dualad.derivative(f, n)(0.7), g(0.7), rtol=1e-12)
    assert np.isfinite(dualad.derivative(f, 30)(0.7))


@pytest.mark.parametrize("f, d", [
    (lambda x: dualad.scipy.special.gamma(x), lambda x: None),       # fallback (nested)
    (lambda x: np.abs(x) * x, None),
    (lambda x: np.linalg.inv(np.eye(2) * 2.0 + x * np.array([[0.0, 1.0], [1.0, 0.5]]))[0, 1], None),
])
def test_fallback_matches_nested_forward_mode(f, d):
    x = 0.7
    for n in (1, 2, 3, 4):
        g = f
        for _ in range(n):
            g = (lambda h: lambda x: dualad.jvp(h, (x,), (1.0,))[1])(g)
        np.testing.assert_allclose(dualad.derivative(f, n)(x), g(x), rtol=1e-10)


def test_multilinear_and_linear_primitives():
    A = np.array([[1.0, 2.0], [3.0, 4.0]])
    f = lambda t: np.einsum("ij,j->i", A * t, np.array([t, t ** 2])) @ A.T  # noqa: E731
    for n in (1, 2, 3):
        g = f
        for _ in range(n):
            g = (lambda h: lambda x: dualad.jvp(h, (x,), (1.0,))[1])(g)
        np.testing.assert_allclose(dualad.derivative(f, n)(0.4), g(0.4), rtol=1e-12)


def test_taylor_along_a_direction_and_output_shape():
    f = lambda x: np.sum(x ** 3)   # noqa: E731
    x, v = np.array([1.0, 2.0]), np.array([1.0, -1.0])
    c = dualad.taylor(f, 3)(x, v)
    assert c.shape == (4,)
    np.testing.assert_allclose(c, [9.0, 3 - 12, 3 * 1 * 1 + 3 * 2 * 1, 0.0])


def test_errors_name_the_function_and_say_what_to_write():
    with pytest.raises(ValueError, match="non-negative integer"):
        dualad.taylor(np.sin, -1)
    with pytest.raises(TypeError, match="integer and boolean inputs"):
        dualad.derivative(np.sin, 2)(np.arange(3))
    with pytest.raises(TypeError, match="forget to `return`"):
        dualad.derivative(lambda x: None, 2)(1.0)
    with pytest.raises(ValueError, match="series term 1 of input leaf 0 has shape"):
        dualad.jet(np.sin, (np.ones(3),), ((np.ones(2),),))
    with pytest.raises(TypeError, match="tuples with one entry per argument"):
        dualad.jet(np.sin, 1.0, (1.0,))


def test_coverage_names_every_primitive():
    cov = coverage()
    assert set(cov.values()) <= {"recurrence", "linear", "multilinear", "fallback", "zero"}
    assert cov["exp"] == "recurrence" and cov["gamma"] == "fallback"
    assert cov["reshape"] == "linear" and cov["matmul"] == "multilinear"


def test_a_jitted_function_is_replayed_under_taylor_mode_not_nested():
    # as one primitive, jit's JVP program would be nested once per order (exponential);
    # series ask for the program's primitives (dualad.core.values.replays_programs)
    from dualad.interpreters.taylor.series import Series, TaylorTrace
    from dualad.interpreters.taylor.rules import taylor_rule
    from dualad.core.values import replays_programs
    f = lambda x: np.sin(x) * np.exp(-x ** 2) / (1 + x ** 2)   # noqa: E731
    jf = dualad.jit(f)
    jf(0.7)
    import time
    t = time.perf_counter()
    np.testing.assert_allclose(dualad.derivative(jf, 14)(0.7), dualad.derivative(f, 14)(0.7),
                               rtol=1e-13)
    assert time.perf_counter() - t < 5.0
    trace = TaylorTrace(2, taylor_rule)
    assert replays_programs([1.0, Series(trace, [1.0, 1.0, 0.0])]) and not replays_programs(1.0)
    trace.stop()


def test_jit_of_taylor_traces_once_and_replays():
    f = lambda x: np.sin(x) * np.exp(-x ** 2) / (1 + x ** 2)   # noqa: E731
    j = dualad.jit(dualad.derivative(f, 12))
    np.testing.assert_allclose(j(0.7), dualad.derivative(f, 12)(0.7), rtol=1e-13)
    np.testing.assert_allclose(j(0.9), dualad.derivative(f, 12)(0.9), rtol=1e-13)


def test_vmap_grad_and_planner_compose_with_taylor():
    from dualad import jacobians
    f = lambda x: np.sin(x) * np.exp(-x ** 2)   # noqa: E731
    xs = np.array([0.3, 0.7, 1.1])
    d3 = dualad.derivative(f, 3)
    np.testing.assert_allclose(dualad.vmap(d3)(xs), d3(xs), rtol=1e-13)
    np.testing.assert_allclose(dualad.grad(dualad.derivative(f, 2))(0.7), d3(0.7), rtol=1e-12)
    np.testing.assert_allclose(dualad.derivative(dualad.grad(f), 2)(0.7), d3(0.7), rtol=1e-12)
    np.testing.assert_allclose(np.diag(jacobians.jacobian(dualad.derivative(f, 2))(xs)),
                               d3(xs), rtol=1e-12)


def test_values_the_function_changes_afterwards_are_read_as_at_the_call():
    def f(x):
        a = np.array([1.0, 2.0])
        y = np.exp(x * a)
        a[:] = 100.0          # written after use: the coefficients were computed at the call
        return y
    np.testing.assert_allclose(dualad.derivative(f, 3)(0.5), np.exp(0.5 * np.array([1, 2.]))
                               * np.array([1.0, 8.0]), rtol=1e-14)


def test_misused_inputs_raise_naming_the_term_and_what_to_write():
    with pytest.raises(TypeError, match="series term 2 of input leaf 0 is None"):
        dualad.jet(np.sin, (0.5,), ((1.0, None),))
    with pytest.raises(TypeError, match="complex but its primal is real"):
        dualad.jet(np.sin, (0.5,), ((1.0j,),))
    with pytest.raises(ValueError, match="one length d"):
        dualad.jet(lambda a, b: a * b, (0.5, 1.0), ((1.0,), (1.0, 0.0)))
    with pytest.raises(ValueError, match="has shape"):
        dualad.taylor(np.sin, 2)(np.ones(3), np.ones(4))
    with pytest.raises(TypeError, match="argument 0 is NoneType"):
        dualad.taylor(np.sin, 2)(None)


def test_dtypes_are_kept():
    for dt in (np.float16, np.float32, np.float64, np.complex128):
        c = dualad.taylor(np.exp, 3)(np.ones(2, dtype=dt))
        assert c.dtype == dt, dt
    assert dualad.derivative(np.sin, 3)(np.float32(0.5)).dtype == np.float32


def test_empty_inputs_and_constant_outputs():
    assert dualad.taylor(np.sin, 3)(np.zeros(0)).shape == (4, 0)
    np.testing.assert_array_equal(dualad.taylor(lambda x: 2.0, 3)(0.5), [2.0, 0, 0, 0])


def test_calls_from_threads_agree():
    from concurrent.futures import ThreadPoolExecutor
    f = lambda x: np.sin(x) * np.exp(-x ** 2) / (1 + x ** 2)   # noqa: E731
    want = [dualad.derivative(f, 9)(x) for x in np.linspace(0.1, 1.0, 8)]
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(dualad.derivative(f, 9), np.linspace(0.1, 1.0, 8)))
    np.testing.assert_allclose(got, want, rtol=1e-14)


@pytest.mark.parametrize("name", ["solve vector", "solve matrices", "solve constant A",
                                  "solve stacked", "inv"])
def test_solve_and_inv_recurrences_match_nested_forward_mode(name):
    rng = np.random.default_rng(0)
    A = rng.normal(size=(4, 4)) + 5 * np.eye(4)
    B, b, Bm = rng.normal(size=(4, 4)), rng.normal(size=4), rng.normal(size=(4, 2))
    f = {"solve vector": lambda t: np.linalg.solve(A + t * B, b * np.cos(t)),
         "solve matrices": lambda t: np.linalg.solve(A + t * B, Bm * t),
         "solve constant A": lambda t: np.linalg.solve(A, b * np.exp(t)),
         "solve stacked": lambda t: np.linalg.solve(np.stack([A + t * B, A - t * B]),
                                                    np.stack([Bm, Bm * t])),
         "inv": lambda t: np.linalg.inv(A + t * B + t ** 2 * np.eye(4))}[name]
    assert coverage()[name.split()[0]] == "recurrence"
    for n in (1, 2, 3, 4):
        g = f
        for _ in range(n):
            g = (lambda h: lambda x: dualad.jvp(h, (x,), (1.0,))[1])(g)
        np.testing.assert_allclose(dualad.derivative(f, n)(0.3), g(0.3), rtol=1e-10,
                                   atol=1e-12)
