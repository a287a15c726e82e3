"""dualad.scipy.integrate: odeint and quad against SciPy, closed forms and finite differences,
in both modes, batched, to second order; bad inputs raise errors naming the argument."""
import numpy as np
import pytest
import scipy.integrate as si
import scipy.linalg

import dualad
import dualad.scipy.integrate as di
from dualad.scipy.linalg import expm
from dualad.verification import check_grads

TIGHT = dict(rtol=1e-12, atol=1e-12)


def decay(y, t, k):
    return -k * y


def lotka_volterra(y, t, theta):
    a, b, c, d = theta[0], theta[1], theta[2], theta[3]
    return np.stack([a * y[0] - b * y[0] * y[1], c * y[0] * y[1] - d * y[1]])


def forced(y, t, k):   # non-autonomous and nonlinear
    return -k * y + 0.5 * np.sin(t) * np.tanh(y[::-1])


def both(f, args, argnum):
    """∂f/∂args[argnum] of a scalar f, by reverse mode and by forward mode."""
    g_rev = dualad.grad(f, argnums=argnum)(*args)
    x = np.asarray(args[argnum], dtype=float)
    eye = np.eye(x.size).reshape((x.size,) + x.shape)
    tangents = tuple(eye if i == argnum else np.zeros((x.size,) + np.shape(a))
                     for i, a in enumerate(args))
    _, g_fwd = dualad.jvp(f, args, tangents)
    return g_rev, np.reshape(g_fwd, x.shape)


# --- values ----------------------------------------------------------------------------------
def test_odeint_values_equal_scipys():
    t = np.linspace(0.0, 3.0, 7)
    y0, theta = np.array([1.0, 0.5]), np.array([1.1, 0.4, 0.4, 0.9])
    ours = di.odeint(lotka_volterra, y0, t, args=(theta,))
    assert np.array_equal(ours, si.odeint(lotka_volterra, y0, t, args=(theta,)))
    tfirst = di.odeint(lambda t, y, k: -k * y, [1.0, 2.0], t, args=(0.3,), tfirst=True, **TIGHT)
    np.testing.assert_allclose(tfirst, np.exp(-0.3 * t)[:, None] * [1.0, 2.0], rtol=1e-10)
    assert di.odeint(decay, 2.0, t, args=(1.0,)).shape == (7, 1)        # 0-d y0, as SciPy
    square = di.odeint(decay, np.ones((2, 2)), t, args=(1.0,))          # the state keeps its shape
    assert square.shape == (7, 2, 2)
    ys, info = di.odeint(decay, [1.0], t, args=(1.0,), full_output=True)
    assert info["message"] == "Integration successful." and len(info["hu"]) == 6
    back = di.odeint(decay, [1.0], t[::-1], args=(1.0,), **TIGHT)      # decreasing times
    np.testing.assert_allclose(back[:, 0], np.exp(3.0 - t[::-1]), rtol=1e-10)


def test_quad_values_equal_scipys():
    f = lambda x, p: np.exp(-p * x * x)  # noqa: E731
    assert di.quad(f, 0.0, 2.0, args=(0.7,)) == si.quad(f, 0.0, 2.0, args=(0.7,))
    assert di.quad(f, -np.inf, np.inf, args=(1.0,))[0] == pytest.approx(np.sqrt(np.pi), 1e-12)
    val, err, info = di.quad(f, 0.0, 1.0, args=(2.0,), full_output=1)
    assert info["neval"] > 0 and err < 1e-10
    vec, _ = di.quad_vec(lambda x, p: np.exp(-p * x), 0.0, 1.0, args=(np.array([1.0, 2.0]),))
    np.testing.assert_allclose(vec, (1 - np.exp(-np.array([1.0, 2.0]))) / [1.0, 2.0], rtol=1e-10)
    np.testing.assert_allclose(di.trapezoid(np.array([1.0, 2.0, 4.0]), x=[0.0, 1.0, 3.0]),
                               si.trapezoid([1.0, 2.0, 4.0], x=[0.0, 1.0, 3.0]))


def test_trapezoid_and_simpson_values_and_derivatives():
    y, x = np.array([1.0, 2.0, 4.0, 3.0, 1.0, 0.5]), np.array([0.0, 0.3, 0.7, 1.2, 1.4, 2.0])
    assert di.trapezoid(y, x=list(x)) == pytest.approx(si.trapezoid(y, x=x), rel=1e-14)
    for n in (5, 6):                                   # odd and even N (SciPy's even-N rule)
        f = lambda y: di.simpson(y ** 2, x=x[:n])  # noqa: E731
        assert f(y[:n]) == pytest.approx(si.simpson(y[:n] ** 2, x=x[:n]), rel=1e-14)
        for g in both(f, (y[:n],), 0):
            np.testing.assert_allclose(g, 2 * y[:n] * si.simpson(np.eye(n), x=x[:n]), rtol=1e-12)
    Y = np.arange(12.0).reshape(3, 4)
    _, T = dualad.jvp(lambda Y: di.simpson(Y, dx=0.5, axis=0), (Y,), (Y,))
    np.testing.assert_allclose(T, si.simpson(Y, dx=0.5, axis=0), rtol=1e-14)
    with pytest.raises(NotImplementedError, match="simpson: only y is differentiable"):
        dualad.grad(lambda x: di.simpson(y, x=x))(x)


def test_scipy_style_functions_returning_lists_with_nested_args():
    def lv(y, t, params):
        (a, b), cd = params["ab"], params["cd"]
        return [a * y[0] - b * y[0] * y[1], cd[0] * y[0] * y[1] - cd[1] * y[1]]
    t, y0 = np.linspace(0.0, 2.0, 4), np.array([1.0, 0.5])
    P = {"ab": (1.1, 0.4), "cd": np.array([0.4, 0.9])}
    assert np.array_equal(di.odeint(lv, y0, t, args=(P,)), si.odeint(lv, y0, t, args=(P,)))
    def f(cd, a):
        return di.odeint(lv, y0, t, args=({"ab": (a, 0.4), "cd": cd},), **TIGHT)
    assert check_grads(f, (P["cd"], np.array(1.1)), order=1) == 4


# --- odeint: first derivatives against closed forms ----------------------------------------
def test_decay_derivatives_in_y0_k_and_t_are_exact_in_both_modes():
    """y = y0 e^{-k (t - t0)}: L = Σ_i w_i·y(t_i) has every partial in closed form."""
    y0, k, t = np.array([1.0, -2.0]), 0.7, np.array([0.2, 0.5, 1.0, 1.6])
    w = np.array([[0.3, 1.0], [-1.0, 0.5], [2.0, 0.1], [1.0, 1.0]])
    L = lambda y0, k, t: np.sum(w * di.odeint(decay, y0, t, args=(k,)))  # noqa: E731
    e = np.exp(-k * (t - t[0]))[:, None]
    exact = [np.sum(w * e, axis=0),
             np.sum(w * -(t - t[0])[:, None] * e * y0),
             np.sum(w * -k * e * y0, axis=1) * np.r_[0.0, np.ones(3)]]
    exact[2][0] = -np.sum(exact[2][1:])          # shifting every time together changes nothing
    for argnum in range(3):
        for g in both(L, (y0, k, t), argnum):
            np.testing.assert_allclose(g, exact[argnum], rtol=1e-7, atol=1e-9)


def test_linear_system_against_expm_in_both_modes():
    """y' = A y: y(t) = expm(A (t - t0)) y0; derivatives in A, y0 and t against dualad's
    own (rule-checked) derivative of the closed form, vector forward mode and batched reverse."""
    A, y0 = np.array([[-0.5, 1.0], [-1.0, -0.3]]), np.array([1.0, 0.5])
    t = np.array([0.0, 0.6, 1.5])
    ode = lambda A, y0, t: di.odeint(lambda y, s, A: A @ y, y0, t, args=(A,), **TIGHT)  # noqa: E731
    closed = lambda A, y0, t: np.stack([expm(A * (t[i] - t[0])) @ y0  # noqa: E731
                                        for i in range(3)])
    np.testing.assert_allclose(ode(A, y0, t), closed(A, y0, t), rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(closed(A, y0, t)[-1], scipy.linalg.expm(1.5 * A) @ y0)
    args = (A, y0, t)
    for i, x in enumerate(args):
        dirs = np.eye(x.size).reshape((x.size,) + x.shape)
        tangents = tuple(dirs if j == i else np.zeros((x.size,) + a.shape)
                         for j, a in enumerate(args))
        np.testing.assert_allclose(dualad.jvp(ode, args, tangents)[1],
                                   dualad.jvp(closed, args, tangents)[1], rtol=1e-7, atol=1e-9)
    cts = np.eye(6).reshape(6, 3, 2)
    got = dualad.vjp(ode, *args)[1](cts)
    want = dualad.vjp(closed, *args)[1](cts)
    for g, h in zip(got, want):
        np.testing.assert_allclose(g, h, rtol=1e-7, atol=1e-9)


def test_lotka_volterra_against_finite_differences():
    t = np.linspace(0.0, 2.0, 5)
    y0, theta = np.array([1.0, 0.5]), np.array([1.1, 0.4, 0.4, 0.9])
    f = lambda y0, theta, t: di.odeint(lotka_volterra, y0, t, args=(theta,), **TIGHT)  # noqa: E731
    assert check_grads(f, (y0, theta, t), order=1) == 6


# --- second order --------------------------------------------------------------------------
@pytest.mark.slow   # ~5.5 s; the quick subset checks odeint's second order exactly below
def test_second_order_against_finite_differences():
    t = np.array([0.0, 0.4, 0.9])
    f = lambda y0, k, t: di.odeint(forced, y0, t, args=(k,), **TIGHT)  # noqa: E731
    assert check_grads(f, (np.array([0.6, -0.4]), np.array(0.8), t), order=2) == 6 + 12 + 8


def test_second_order_of_decay_in_k_and_t_is_exact():
    """L = Σ y(T) = S e^{-k (T - t0)}: ∂²L/∂k², ∂²L/∂k∂T by reverse-over-reverse,
    forward-over-reverse (hvp) and forward-over-forward."""
    y0, k, t = np.array([1.0, 2.0]), 0.5, np.array([0.0, 0.7, 1.2])
    L = lambda k, t: np.sum(di.odeint(decay, y0, t, args=(k,))[-1])  # noqa: E731
    S, T, e = 3.0, 1.2, np.exp(-0.5 * 1.2)
    d2_kk, d2_kT = S * T * T * e, -S * e + k * S * T * e
    g_k = dualad.grad(L, argnums=0)
    assert dualad.grad(g_k)(k, t) == pytest.approx(d2_kk, rel=1e-7)
    assert dualad.grad(g_k, argnums=1)(k, t)[2] == pytest.approx(d2_kT, rel=1e-7)
    assert dualad.jvp(lambda k: g_k(k, t), (k,), (1.0,))[1] == pytest.approx(d2_kk, rel=1e-7)
    dk = lambda k: dualad.jvp(lambda k: L(k, t), (k,), (1.0,))[1]  # noqa: E731
    assert dualad.derivative(dk)(k) == pytest.approx(d2_kk, rel=1e-7)
    assert dualad.grad(dk)(k) == pytest.approx(d2_kk, rel=1e-7)           # reverse over forward


# --- batches ---------------------------------------------------------------------------------
def test_batched_tangents_and_cotangents_equal_one_at_a_time():
    t, y0, k = np.array([0.0, 0.5, 1.0]), np.array([0.6, -0.4]), np.array([0.8, 0.3])
    def f(y0, k, t):
        return di.odeint(lambda y, s, k: -k * y + 0.5 * np.sin(s) * y[::-1], y0, t, args=(k,))
    rng = np.random.default_rng(0)
    tans = (rng.standard_normal((3, 2)), rng.standard_normal((3, 2)), rng.standard_normal((3, 3)))
    _, batched = dualad.jvp(f, (y0, k, t), tans)
    for b in range(3):
        _, one = dualad.jvp(f, (y0, k, t), tuple(v[b] for v in tans))
        np.testing.assert_allclose(batched[b], one, rtol=1e-7, atol=1e-10)
    _, pullback = dualad.vjp(f, y0, k, t)
    cts = rng.standard_normal((4, 3, 2))
    batched = pullback(cts)
    for b in range(4):
        for g, h in zip(batched, pullback(cts[b])):
            np.testing.assert_allclose(g[b], h, rtol=1e-7, atol=1e-10)


# --- quad --------------------------------------------------------------------------------------
def test_quad_derivatives_in_limits_and_args_are_exact():
    """F = ∫_a^b e^{-p x} dx = (e^{-p a} − e^{-p b}) / p."""
    f = lambda x, p: np.exp(-p * x)  # noqa: E731
    F = lambda a, b, p: di.quad(f, a, b, args=(p,))[0]  # noqa: E731
    a, b, p = 0.3, 1.7, 0.8
    exact = [-np.exp(-p * a), np.exp(-p * b),
             (-a * np.exp(-p * a) + b * np.exp(-p * b)) / p
             - (np.exp(-p * a) - np.exp(-p * b)) / p ** 2]
    for argnum in range(3):
        for g in both(F, (a, b, p), argnum):
            assert g == pytest.approx(exact[argnum], rel=1e-9)
    tail = lambda p: di.quad(f, 0.0, np.inf, args=(p,))[0]  # noqa: E731  (= 1/p)
    assert dualad.grad(tail)(p) == pytest.approx(-1 / p ** 2, rel=1e-8)
    assert dualad.derivative(tail, 2)(p) == pytest.approx(2 / p ** 3, rel=1e-8)


def test_quad_second_order_and_batches():
    f = lambda x, p: np.exp(-p[0] * x * x) * np.cos(p[1] * x)  # noqa: E731
    F = lambda a, b, p: di.quad(f, a, b, args=(p,))[0]  # noqa: E731
    args = (np.array(-0.4), np.array(1.1), np.array([0.7, 1.3]))
    assert check_grads(F, args, order=2) == 6 + 12 + 8
    G = lambda p: di.quad_vec(lambda x, p: np.sin(p * x), 0.0, 1.0, args=(p,))[0]  # noqa: E731
    p = np.array([0.5, 1.5, 2.0])
    _, J_fwd = dualad.jvp(G, (p,), (np.eye(3),))
    (J_rev,) = dualad.vjp(G, p)[1](np.eye(3))
    exact = np.diag(np.sin(p) / p + (np.cos(p) - 1) / p ** 2)    # ∫ x cos(p x) dx
    np.testing.assert_allclose(J_fwd, exact, atol=1e-10)
    np.testing.assert_allclose(J_rev, exact, atol=1e-10)


# --- the rule checker (test_registry runs it too when this module is imported) -----------
@pytest.mark.slow
@pytest.mark.parametrize("name", ["odeint", "quad"])
def test_primitives_pass_the_rule_checker(name):
    """check_rule, the jit check included (one report per session, shared with the
    registry's sweep: tests/rule_reports.py)."""
    from rule_reports import jit_report, rule_report
    report = rule_report(name)
    assert report.ok, str(report)
    assert any("order 2" in r.check for r in report.rows)
    assert jit_report(name).ok, str(jit_report(name))


# --- errors ----------------------------------------------------------------------------------
def test_bad_inputs_name_the_function_argument_and_shape():
    t = np.array([0.0, 1.0, 0.5, 2.0])
    with pytest.raises(ValueError, match=r"odeint: argument t of shape \(4,\) is not monotonic: "
                                         r"t\[1\] = 1.0 then t\[2\] = 0.5"):
        di.odeint(decay, [1.0], t, args=(1.0,))
    with pytest.raises(ValueError, match=r"odeint: argument t has shape \(2, 2\)"):
        di.odeint(decay, [1.0], np.ones((2, 2)), args=(1.0,))
    with pytest.raises(TypeError, match=r"odeint: argument y0 has dtype complex128 and shape "
                                        r"\(2,\)"):
        di.odeint(decay, np.array([1j, 2.0]), [0.0, 1.0], args=(1.0,))
    with pytest.raises(TypeError, match=r"odeint: argument y0 has dtype <U1"):
        di.odeint(decay, np.array(["a"]), [0.0, 1.0], args=(1.0,))
    with pytest.raises(ValueError, match=r"odeint: func returned shape \(3,\) for a state y of "
                                         r"shape \(2,\)"):
        di.odeint(lambda y, t: np.ones(3), [1.0, 2.0], [0.0, 1.0])
    with pytest.raises(TypeError, match="odeint: func must be callable"):
        di.odeint(None, [1.0], [0.0, 1.0])
    with pytest.raises(ValueError, match=r"quad: argument b has shape \(2,\) and dtype float64"):
        di.quad(np.sin, 0.0, np.ones(2))
    with pytest.raises(ValueError, match=r"quad: func returned shape \(2,\)"):
        di.quad(lambda x: np.ones(2), 0.0, 1.0)
    with pytest.raises(NotImplementedError, match="quad: weight="):
        dualad.grad(lambda b: di.quad(np.exp, 0.0, b, weight="cos", wvar=1.0)[0])(1.0)


_HIDDEN = {}


def _reads_a_global(y, t):
    return -_HIDDEN["k"] * y


def test_a_traced_value_read_from_a_global_says_to_pass_it_through_args():
    # closures are converted (tests/dualad/mirrors/test_integrate_closures.py); a global is not found
    def loss(k):
        _HIDDEN["k"] = k
        return np.sum(di.odeint(_reads_a_global, [1.0], [0.0, 1.0]))
    with pytest.raises(TypeError, match=r"odeint: func returned a traced value .* args="):
        dualad.grad(loss)(0.5)

    def quad_loss(p):
        _HIDDEN["k"] = p
        return di.quad(lambda x: np.exp(-_HIDDEN["k"] * x), 0.0, 1.0)[0]
    with pytest.raises(TypeError, match=r"quad: func returned a traced value .* args="):
        dualad.grad(quad_loss)(0.5)
    # through args (or y0, t: lists of traced scalars too), the derivatives are there
    g = dualad.grad(lambda k: di.odeint(decay, [1.0], [0.0, 1.0], args=(k,))[-1, 0])(0.5)
    assert g == pytest.approx(-np.exp(-0.5), rel=1e-7)                 # d/dk e^{-k}
    g = dualad.grad(lambda y, s: di.odeint(decay, [y, 2.0], [0.0, s], args=(0.5,))[-1, 0],
                    argnums=(0, 1))(3.0, 1.0)
    np.testing.assert_allclose(g, [np.exp(-0.5), -1.5 * np.exp(-0.5)], rtol=1e-7)
