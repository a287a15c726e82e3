"""solve_ivp: SciPy's values; derivatives against closed forms and central differences of
SciPy's own solve_ivp (tight tolerances), in both modes, with both reverse-mode methods.

Tolerances: the oracle is a central difference of scipy.integrate.solve_ivp solved at
rtol=1e-11, atol=1e-13 with step h = 1e-4 (truncation ~h², solver noise ~1e-11/h), so we
compare at rtol=2e-5; closed forms at rtol=1e-6 (derivative sweeps at 1e-10/1e-12).
"""
import numpy as np
import pytest
import scipy.integrate as si

import dualad
from dualad import jacobians
from dualad.scipy.integrate import solve_ivp

TIGHT = dict(rtol=1e-10, atol=1e-12)
METHODS = ("forward", "adjoint")


def central(f, x, h=1e-4):
    """∂f/∂x by central differences, f: array → array; result shape f.shape + x.shape."""
    x = np.asarray(x, dtype=float)
    cols = []
    for i in range(x.size):
        e = np.zeros(x.size)
        e[i] = h
        cols.append((f(x + e.reshape(x.shape)) - f(x - e.reshape(x.shape))) / (2 * h))
    return np.moveaxis(np.array(cols), 0, -1).reshape(np.shape(f(x)) + x.shape)


def lotka_volterra(t, y, a, b, c, d):
    return [a * y[0] - b * y[0] * y[1], c * y[0] * y[1] - d * y[1]]


T_LV = np.linspace(0.0, 5.0, 11)
P_LV = np.array([1.1, 0.4, 0.1, 0.4])
Y0_LV = np.array([10.0, 5.0])


def lv_reference(theta, y0=Y0_LV):
    r = si.solve_ivp(lotka_volterra, (0.0, 5.0), y0, t_eval=T_LV, args=tuple(theta),
                     rtol=1e-11, atol=1e-13)
    return r.y


# --- values ----------------------------------------------------------------------------------
def test_plain_inputs_return_scipys_own_result():
    r = solve_ivp(lotka_volterra, (0.0, 5.0), Y0_LV, args=tuple(P_LV))
    s = si.solve_ivp(lotka_volterra, (0.0, 5.0), Y0_LV, args=tuple(P_LV))
    np.testing.assert_array_equal(r.y, s.y)
    np.testing.assert_array_equal(r.t, s.t)
    assert r.nfev == s.nfev and r.success


def test_traced_values_equal_scipys_and_the_result_has_scipys_fields():
    seen = {}

    def f(theta):
        r = solve_ivp(lotka_volterra, (0.0, 5.0), Y0_LV, args=tuple(theta), t_eval=T_LV)
        seen.update(r)
        return np.sum(r.y)
    dualad.grad(f)(P_LV)
    s = si.solve_ivp(lotka_volterra, (0.0, 5.0), Y0_LV, args=tuple(P_LV), t_eval=T_LV)
    np.testing.assert_array_equal(dualad.extend.primal_value(seen["y"]), s.y)
    for k in ("t", "status", "message", "success", "nfev", "njev", "nlu"):
        assert np.all(seen[k] == s[k]), k


# --- first order -----------------------------------------------------------------------------
@pytest.mark.parametrize("sensitivity", METHODS)
def test_exponential_decay_closed_form(sensitivity):
    t = np.array([0.5, 1.0, 2.0])

    def y_end(y0, k):
        r = solve_ivp(lambda s, y, k: -k * y, (0.0, 2.0), y0, t_eval=t, args=(k,),
                      sensitivity=sensitivity, **TIGHT)
        return np.sum(r.y * np.array([1.0, 2.0])[:, None])
    y0 = np.array([1.0, 3.0])
    g_y0, g_k = dualad.grad(y_end, argnums=(0, 1))(y0, 0.8)
    decay = np.exp(-0.8 * t)
    np.testing.assert_allclose(g_y0, np.array([1.0, 2.0]) * np.sum(decay), rtol=1e-7)
    np.testing.assert_allclose(g_k, -np.sum(np.outer([1.0, 6.0], t * decay)), rtol=1e-6)


@pytest.mark.parametrize("sensitivity", METHODS)
def test_lotka_volterra_gradient_against_differences(sensitivity):
    w = np.random.default_rng(0).normal(size=(2, len(T_LV)))

    def loss(theta, y0):
        r = solve_ivp(lotka_volterra, (0.0, 5.0), y0, t_eval=T_LV, args=tuple(theta),
                      sensitivity=sensitivity, **TIGHT)
        return np.sum(w * r.y)
    g_theta, g_y0 = dualad.grad(loss, argnums=(0, 1))(P_LV, Y0_LV)
    np.testing.assert_allclose(g_theta, central(lambda p: np.sum(w * lv_reference(p)), P_LV),
                               rtol=2e-5)
    np.testing.assert_allclose(g_y0, central(lambda y: np.sum(w * lv_reference(P_LV, y)),
                                             Y0_LV), rtol=2e-5)


def test_forward_and_adjoint_agree_and_match_the_forward_mode_jacobian():
    def ys(theta, sensitivity="auto"):
        return solve_ivp(lotka_volterra, (0.0, 5.0), Y0_LV, t_eval=T_LV, args=tuple(theta),
                         sensitivity=sensitivity, **TIGHT).y
    J_fwd = jacobians.jacfwd(ys)(P_LV)
    J_rev_adj = jacobians.jacrev(lambda p: ys(p, "adjoint"))(P_LV)
    J_rev_fwd = jacobians.jacrev(lambda p: ys(p, "forward"))(P_LV)
    np.testing.assert_allclose(J_rev_adj, J_fwd, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(J_rev_fwd, J_fwd, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(J_fwd, central(lv_reference, P_LV), rtol=2e-5, atol=1e-6)


@pytest.mark.slow
@pytest.mark.parametrize("method, sensitivity", [("BDF", "adjoint"), ("Radau", "forward"),
                                                 ("LSODA", "adjoint"), ("LSODA", "forward")])
def test_stiff_problem(method, sensitivity):
    """y' = A(p) y + b with eigenvalues near -1 and -1000: stiff."""
    def rhs(t, y, p):
        return [-p[0] * y[0] + p[1] * y[1], -1000.0 * p[2] * y[1] + np.cos(t)]
    p0, y0, t = np.array([1.0, 2.0, 1.0]), np.array([1.0, 0.5]), np.array([0.1, 1.0, 3.0])

    def ref(p):
        return si.solve_ivp(rhs, (0.0, 3.0), y0, method="Radau", t_eval=t, args=(p,),
                            rtol=1e-11, atol=1e-13).y

    def loss(p):
        return solve_ivp(rhs, (0.0, 3.0), y0, method=method, t_eval=t, args=(p,),
                         sensitivity=sensitivity, rtol=1e-8, atol=1e-10).y
    # implicit low-order methods at sweep tolerance 1e-8/1e-10: compared at rtol 1e-5
    np.testing.assert_allclose(jacobians.jacrev(loss)(p0), central(ref, p0, h=1e-5),
                               rtol=1e-5, atol=1e-8)


def test_time_derivatives_t_span_ends_and_t_eval():
    k = 0.6

    def rhs(t, y):
        return -k * y + np.sin(t)

    def end_value(t0, tf):   # t_eval None: the last output is y(tf)
        return solve_ivp(rhs, (t0, tf), np.array([1.0]), **TIGHT).y[0, -1]
    for mode in ("rev", "fwd"):
        if mode == "rev":
            g0, g1 = dualad.grad(end_value, argnums=(0, 1))(0.2, 1.5)
        else:
            g0 = dualad.jvp(lambda a: end_value(a, 1.5), (0.2,), (1.0,))[1]
            g1 = dualad.jvp(lambda b: end_value(0.2, b), (1.5,), (1.0,))[1]
        def ref(a, b):
            return si.solve_ivp(rhs, (a, b), [1.0], rtol=1e-11, atol=1e-13).y[0, -1]
        assert g0 == pytest.approx((ref(0.2 + 1e-5, 1.5) - ref(0.2 - 1e-5, 1.5)) / 2e-5, rel=1e-5)
        assert g1 == pytest.approx(-k * end_value(0.2, 1.5) + np.sin(1.5), rel=1e-6)

    def at_times(te):
        return np.sum(solve_ivp(rhs, (0.0, 2.0), np.array([1.0]), t_eval=te, **TIGHT).y)
    te = np.array([0.5, 1.0, 1.7])
    y = si.solve_ivp(rhs, (0.0, 2.0), [1.0], t_eval=te, **TIGHT).y[0]
    np.testing.assert_allclose(dualad.grad(at_times)(te), -k * y + np.sin(te), rtol=1e-6)


def test_steps_output_is_differentiable_in_the_parameters():
    def loss(k):
        r = solve_ivp(lambda t, y: -k * y, (0.0, 1.0), np.array([2.0]), **TIGHT)
        return np.sum(r.y), r.t
    g = dualad.grad(lambda k: loss(k)[0])(0.5)
    t = loss(0.5)[1]
    assert g == pytest.approx(np.sum(-2.0 * t * np.exp(-0.5 * t)), rel=1e-6)


# --- dense output ----------------------------------------------------------------------------
@pytest.mark.parametrize("sensitivity", METHODS)
def test_dense_output_differentiable_in_t_and_parameters(sensitivity):
    def at(k, s):
        r = solve_ivp(lambda t, y: [-k * y[0], k * y[0] - 0.3 * y[1]], (0.0, 3.0),
                      np.array([1.0, 0.0]), dense_output=True, sensitivity=sensitivity, **TIGHT)
        return r.sol(s)
    s = np.array([0.3, 2.9, 1.1])   # unsorted query times
    k = 0.7
    plain = si.solve_ivp(lambda t, y: [-k * y[0], k * y[0] - 0.3 * y[1]], (0.0, 3.0),
                         [1.0, 0.0], dense_output=True, **TIGHT)
    np.testing.assert_array_equal(dualad.extend.primal_value(
        dualad.jvp(lambda k: at(k, s), (k,), (1.0,))[0]), plain.sol(s))
    g_k = dualad.grad(lambda k: np.sum(at(k, s)))(k)
    ref = lambda k: np.sum(si.solve_ivp(  # noqa: E731
        lambda t, y: [-k * y[0], k * y[0] - 0.3 * y[1]], (0.0, 3.0), [1.0, 0.0],
        t_eval=np.sort(s), rtol=1e-11, atol=1e-13).y)
    assert g_k == pytest.approx((ref(k + 1e-5) - ref(k - 1e-5)) / 2e-5, rel=1e-5)
    g_s = dualad.grad(lambda s: np.sum(at(k, s)[1]))(s)
    y = plain.sol(s)
    np.testing.assert_allclose(g_s, k * y[0] - 0.3 * y[1], rtol=1e-6)
    assert np.shape(dualad.extend.primal_value(
        dualad.jvp(lambda k: at(k, 1.0), (k,), (1.0,))[0])) == (2,)


# --- second order ----------------------------------------------------------------------------
@pytest.mark.parametrize("sensitivity", METHODS)
def test_second_order_both_compositions(sensitivity):
    def loss(p):
        r = solve_ivp(lambda t, y: [-p[0] * y[0] + p[1] * np.sin(y[1]), -p[1] * y[1]],
                      (0.0, 1.5), np.array([1.0, 0.5]), t_eval=[0.7, 1.5],
                      sensitivity=sensitivity, **TIGHT)
        return np.sum(r.y ** 2)
    p = np.array([0.8, 0.4])
    g = dualad.grad(loss)
    H_fr = np.array([dualad.jvp(g, (p,), (e,))[1] for e in np.eye(2)])     # forward-over-reverse
    H_rr = jacobians.jacrev(g)(p)                                            # reverse-over-reverse
    H_fd = central(lambda q: np.asarray(g(q)), p, h=1e-4)
    np.testing.assert_allclose(H_fr, H_fd, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(H_rr, H_fd, rtol=1e-5, atol=1e-7)


@pytest.mark.slow
def test_the_rule_checker_passes_to_second_order():
    """check_rule of both primitives, the jit check included (one report per session,
    shared with the registry's sweep: tests/rule_reports.py)."""
    from rule_reports import jit_report, rule_report
    for name in ("solve_ivp", "solve_ivp_event"):
        assert rule_report(name).ok, str(rule_report(name))
        assert jit_report(name).ok, str(jit_report(name))


# --- events ----------------------------------------------------------------------------------
def _level(t, y, k, c):
    return y[0] - c


_level.terminal = True


@pytest.mark.parametrize("sensitivity", METHODS)
def test_terminal_event_time_and_state_closed_form(sensitivity):
    """y' = -k y, y(0) = y0 reaches c at τ = log(y0/c)/k; the solve stops there."""
    def run(y0, k, c):
        r = solve_ivp(lambda t, y, k, c: -k * y, (0.0, 5.0), y0 * np.ones(1), events=_level,
                      args=(k, c), sensitivity=sensitivity, **TIGHT)
        return r.t_events[0][0], r.t[-1], r.y[0, -1], r.y_events[0][0, 0], r.status
    y0, k, c = 1.2, 0.7, 0.4
    tau, t_end, y_end, y_ev, status = run(y0, k, c)
    assert status == 1 and tau == t_end and tau == pytest.approx(np.log(y0 / c) / k, rel=1e-8)
    d_tau = [1 / (y0 * k), -np.log(y0 / c) / k ** 2, -1 / (c * k)]
    g = dualad.grad(lambda *a: run(*a)[0], argnums=(0, 1, 2))(y0, k, c)
    np.testing.assert_allclose(g, d_tau, rtol=1e-6)
    g = [dualad.jvp(lambda v: run(*[v if j == i else a for j, a in enumerate((y0, k, c))])[1],
                    ((y0, k, c)[i],), (1.0,))[1] for i in range(3)]
    np.testing.assert_allclose(g, d_tau, rtol=1e-6)
    # the state at the terminal event is c whatever y0 and k are: derivatives 0, 0, 1
    for out in (2, 3):
        g = dualad.grad(lambda *a: run(*a)[out], argnums=(0, 1, 2))(y0, k, c)
        np.testing.assert_allclose(g, [0.0, 0.0, 1.0], atol=1e-8)
    h = dualad.grad(dualad.grad(lambda k: run(y0, k, c)[0]))(k)
    assert h == pytest.approx(2 * np.log(y0 / c) / k ** 3, rel=1e-6)


@pytest.mark.slow
def test_non_terminal_events_against_differences():
    """Zero crossings of y[0] of a damped oscillator, and a closed-over event level."""
    def crossings(p, level):
        def ev(t, y):
            return y[0] - level
        r = solve_ivp(lambda t, y: [y[1], -p[0] * y[0] - p[1] * y[1]], (0.0, 10.0),
                      np.array([1.0, 0.0]), events=ev, t_eval=[5.0], **TIGHT)
        return r.t_events[0], r.y_events[0], r.y
    p = np.array([2.0, 0.3])
    taus = crossings(p, 0.1)[0]
    assert len(taus) >= 3
    J = jacobians.jacrev(lambda p: crossings(p, 0.1)[0])(p)
    ref = lambda p: si.solve_ivp(  # noqa: E731
        lambda t, y: [y[1], -p[0] * y[0] - p[1] * y[1]], (0.0, 10.0), [1.0, 0.0],
        events=lambda t, y: y[0] - 0.1, rtol=1e-11, atol=1e-13).t_events[0]
    np.testing.assert_allclose(J, central(ref, p, h=1e-5), rtol=1e-5)
    np.testing.assert_allclose(jacobians.jacfwd(lambda p: crossings(p, 0.1)[0])(p), J,
                               rtol=1e-7)
    g = dualad.grad(lambda c: np.sum(crossings(p, c)[0]))(0.1)
    r_c = lambda c: np.sum(si.solve_ivp(  # noqa: E731
        lambda t, y: [y[1], -p[0] * y[0] - p[1] * y[1]], (0.0, 10.0), [1.0, 0.0],
        events=lambda t, y: y[0] - c, rtol=1e-11, atol=1e-13).t_events[0])
    assert g == pytest.approx((r_c(0.1 + 1e-5) - r_c(0.1 - 1e-5)) / 2e-5, rel=1e-5)
    # y at an event: its first component is the level (derivative 1 in it, 0 in p)
    g = dualad.grad(lambda c: crossings(p, c)[1][1, 0])(0.1)
    assert g == pytest.approx(1.0, rel=1e-7)


# --- keywords and errors ---------------------------------------------------------------------
def test_vectorized_fun():
    def rhs(t, y, k):   # written for y of shape (n, k) only
        assert y.ndim == 2
        return -k * y
    g = dualad.grad(lambda k: solve_ivp(rhs, (0.0, 1.0), np.array([1.0, 2.0]), t_eval=[1.0],
                                        vectorized=True, args=(k,), **TIGHT).y.sum())(0.5)
    assert g == pytest.approx(-3.0 * np.exp(-0.5), rel=1e-7)


def test_errors_name_the_argument():
    f = lambda t, y: -y  # noqa: E731
    with pytest.raises(ValueError, match=r"solve_ivp: argument y0 has shape \(2, 2\)"):
        solve_ivp(f, (0, 1), np.ones((2, 2)))
    with pytest.raises(ValueError, match="solve_ivp: sensitivity='backward'"):
        solve_ivp(f, (0, 1), [1.0], sensitivity="backward")
    with pytest.raises(TypeError, match=r"solve_ivp: args must be a tuple \(e.g. args=\(k,\)\)"):
        solve_ivp(f, (0, 1), [1.0], args=2.0)
    with pytest.raises(ValueError, match="solve_ivp: t_span must be a pair"):
        solve_ivp(f, (0, 1, 2), [1.0])
    with pytest.raises(TypeError, match="solve_ivp: argument y0 has dtype complex128"):
        dualad.grad(lambda a: solve_ivp(f, (0, 1), a * np.array([1j])).y.real.sum())(1.0)
    # events on plain inputs are SciPy's
    r = solve_ivp(f, (0, 1), [1.0], events=lambda t, y: y[0] - 0.5)
    assert r.t_events[0] == pytest.approx(np.log(2.0), rel=1e-3)
