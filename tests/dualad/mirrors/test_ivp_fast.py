"""Issue 31: solve_ivp's sensitivities and custom_root's Krylov matvecs are traced once and
replayed; sweeps at the primal's tolerance are as accurate as it; implicit methods get
dualad's ∂f/∂y."""
import numpy as np
import pytest
import scipy.integrate as si

import dualad
from dualad.transforms.implicit import custom_root
from dualad.scipy.integrate import solve_ivp

T = np.linspace(0.5, 3.0, 6)


def decay_loss(k, **kw):
    r = solve_ivp(lambda t, y, k: -k * y, (0.0, 3.0), np.array([2.0]), t_eval=T, args=(k,),
                  **kw)
    return np.sum(r.y[0])


def exact_grad(k):   # y = 2 exp(−k t): ∂/∂k Σ y(t_i) = Σ −2 t exp(−k t)
    return np.sum(-2.0 * T * np.exp(-k * T))


@pytest.mark.parametrize("sensitivity", ["forward", "adjoint"])
@pytest.mark.parametrize("rtol", [1e-4, 1e-6, 1e-9])
def test_sweeps_at_the_primal_tolerance_are_as_accurate_as_it(sensitivity, rtol):
    g = dualad.grad(lambda k: decay_loss(k, rtol=rtol, atol=rtol * 1e-2,
                                         sensitivity=sensitivity))(0.7)
    assert abs(g - exact_grad(0.7)) <= 20 * rtol * abs(exact_grad(0.7))


def test_tighter_sweep_tolerances_still_tighten_the_derivative():
    g = dualad.grad(lambda k: decay_loss(k, rtol=1e-3, atol=1e-6, sweep_rtol=1e-11,
                                         sweep_atol=1e-13))(0.7)
    assert abs(g - exact_grad(0.7)) <= 1e-8 * abs(exact_grad(0.7))


def _counted_rhs():
    calls = []

    def rhs(t, y, p):
        calls.append(1)
        return np.array([p[0] * y[0] - p[1] * y[0] * y[1], p[2] * y[0] * y[1] - p[3] * y[1]])
    return rhs, calls


@pytest.mark.parametrize("sensitivity", ["forward", "adjoint"])
def test_the_sweep_dynamics_are_traced_once_not_run_per_step(sensitivity):
    rhs, calls = _counted_rhs()
    p = np.array([1.1, 0.4, 0.1, 0.4])

    def loss(p, jit=True):
        r = solve_ivp(rhs, (0.0, 5.0), np.array([10.0, 5.0]), t_eval=np.linspace(1, 5, 5),
                      args=(p,), rtol=1e-6, sensitivity=sensitivity, jit=jit)
        return np.sum(r.y)
    g = dualad.grad(loss)(p)
    replayed = len(calls)
    calls.clear()
    g_eager = dualad.grad(lambda p: loss(p, jit=False))(p)
    np.testing.assert_allclose(g, g_eager, rtol=1e-12)
    # eager: one call of rhs per right-hand-side evaluation of the sweep (hundreds);
    # replayed: the primal solve's calls plus a handful of traces
    assert replayed < 0.7 * len(calls)


def test_jit_takes_a_bool():
    with pytest.raises(TypeError, match="solve_ivp: jit= takes True or False"):
        solve_ivp(lambda t, y: -y, (0.0, 1.0), [1.0], jit="yes")
    with pytest.raises(TypeError, match="custom_root: jit= takes True or False"):
        custom_root(lambda a: a, lambda x, a: x - a, jit=1)


def robertson(t, y, k):
    return np.array([-k[0] * y[0] + k[2] * y[1] * y[2],
                     k[0] * y[0] - k[2] * y[1] * y[2] - k[1] * y[1] ** 2,
                     k[1] * y[1] ** 2])


K_ROB = np.array([0.04, 3e7, 1e4])
_SCIPY_SOLVE_IVP = si.solve_ivp
# ∂y₀(10)/∂k of Robertson's problem, as _robertson_reference computes it (six stiff Radau
# solves at rtol 1e-12, ~3.4 s); test_the_robertson_reference_is_scipys recomputes it
ROBERTSON_REFERENCE = np.array([-2.803577957288805, -1.102516611894977e-09,
                                6.61629213194459e-06])


def _robertson_reference():
    """∂y₀(10)/∂k by central differences of SciPy's Radau at rtol 1e-12."""
    ref = np.zeros(3)
    for i in range(3):
        h = 1e-5 * K_ROB[i]
        e = np.zeros(3)
        e[i] = h
        f = [_SCIPY_SOLVE_IVP(robertson, (0.0, 10.0), [1.0, 0.0, 0.0], method="Radau",
                              args=(K_ROB + s * e,), rtol=1e-12, atol=1e-16).y[0, -1]
             for s in (1, -1)]
        ref[i] = (f[0] - f[1]) / (2 * h)
    return ref


@pytest.mark.parametrize("sensitivity", ["forward", "adjoint"])
@pytest.mark.parametrize("method", ["BDF", "Radau"])
def test_implicit_methods_get_dualads_jacobian(method, sensitivity, monkeypatch):
    jacs = []
    scipy_solve = si.solve_ivp

    def spy(fun, t_span, y0, **kw):   # which solves SciPy was given a Jacobian for
        jac = kw.get("jac")
        if jac is not None:
            J = np.asarray(jac(t_span[0], np.asarray(y0, float)))
            jacs.append(J.shape)
        return scipy_solve(fun, t_span, y0, **kw)
    monkeypatch.setattr(si, "solve_ivp", spy)

    def loss(k):
        return solve_ivp(robertson, (0.0, 10.0), np.array([1.0, 0.0, 0.0]), method=method,
                         args=(k,), rtol=1e-6, atol=1e-10, sensitivity=sensitivity,
                         sweep_rtol=1e-8, sweep_atol=1e-12).y[0, -1]
    g = dualad.grad(loss)(K_ROB)
    # the primal (3 states) and the sweep (forward: 3·(1 + 7) states; adjoint: 3 + 3)
    assert jacs[0] == (3, 3) and len(jacs) >= 2
    ref = ROBERTSON_REFERENCE
    np.testing.assert_allclose(g * K_ROB, ref * K_ROB, rtol=1e-4,
                               atol=1e-5 * np.max(np.abs(ref * K_ROB)))


@pytest.mark.slow   # six stiff solves at rtol 1e-12, ~3.4 s
def test_the_robertson_reference_is_scipys():
    np.testing.assert_allclose(ROBERTSON_REFERENCE, _robertson_reference(), rtol=1e-6)


def test_custom_root_krylov_matvec_is_traced_once():
    n = 60
    rng = np.random.default_rng(0)
    A = np.eye(n) * 4 + rng.normal(scale=0.2, size=(n, n))
    calls = []

    def optimality(x, b):
        calls.append(1)
        return A @ x + 0.1 * np.tanh(x) - b

    def solve(b):
        x = np.zeros(n)
        for _ in range(100):
            x = x - np.linalg.solve(A + 0.1 * np.diag(1 - np.tanh(x) ** 2),
                                    A @ x + 0.1 * np.tanh(x) - b)
        return x

    b = rng.normal(size=n)
    w = rng.normal(size=n)
    root = custom_root(solve, optimality, linear_solve="gmres")
    root_eager = custom_root(solve, optimality, linear_solve="gmres", jit=False)
    g = dualad.grad(lambda b: root(b) @ w)(b)
    replayed = len(calls)
    calls.clear()
    g_eager = dualad.grad(lambda b: root_eager(b) @ w)(b)
    np.testing.assert_allclose(g, g_eager, rtol=1e-9)
    x = solve(b)
    J = A + 0.1 * np.diag(1 - np.tanh(x) ** 2)
    np.testing.assert_allclose(g, np.linalg.solve(J.T, w), rtol=1e-7)
    assert replayed <= 5 < len(calls)


def _fit_loss(**kw):
    data = np.array([1.5, 1.1, 0.8, 0.6, 0.45, 0.3])

    def loss(p):
        r = solve_ivp(lambda t, y, p: -p[0] * y + p[1] * np.sin(t), (0.0, 3.0),
                      np.array([2.0]), t_eval=T, args=(p,), rtol=1e-8, atol=1e-10, **kw)
        return np.sum((r.y[0] - data) ** 2)
    return loss


@pytest.mark.parametrize("kw, traces", [({}, 1), ({"sensitivity": "adjoint"}, 1),
                                        ({"dense_output": True}, 4)])
def test_a_jitted_fit_gradient_traces_once_when_no_program_depends_on_the_values(kw, traces):
    # Output times given: the parameters' values are read without a guard, so a fit's new
    # points replay one program (each point traced again before, and past 8 the gradient
    # ran without jit after a JitRetraceWarning). The adjoint is one primitive that reads
    # the interpolant of the call's own primal solve. Dense output is returned to the
    # user (an interpolant of those values): that traces per point.
    loss = _fit_loss(**kw)
    g = dualad.jit(dualad.grad(loss))
    for p in ([0.7, 0.2], [0.8, 0.1], [0.5, 0.3], [0.9, 0.0]):
        p = np.array(p)
        np.testing.assert_allclose(g(p), dualad.grad(loss)(p), rtol=1e-7)   # solver-level
    assert list(g.cache_info().values()) == [traces]


def _augmented_sizes(monkeypatch):
    """The state sizes of the SciPy solves a derivative runs (primal and sweeps)."""
    import dualad.scipy._ivp as ivp
    sizes, solve = [], ivp._si.solve_ivp

    def spy(fun, t_span, y0, *a, **k):
        sizes.append(np.size(y0))
        return solve(fun, t_span, y0, *a, **k)
    monkeypatch.setattr(ivp._si, "solve_ivp", spy)
    return sizes


@pytest.mark.parametrize("wrt, directions", [((0,), 4), ((1,), 2), ((0, 1), 6)])
def test_reverse_forward_sensitivities_integrate_only_the_traced_inputs(wrt, directions,
                                                                        monkeypatch):
    """grad in p alone: n·(1 + P) states, not n·(1 + n + 1 + P) (a constant y₀ and t₀ have
    no direction to integrate); the gradients are those of the whole Jacobian's solve."""
    def rhs(t, y, p):
        return np.array([p[0] * y[0] - p[1] * y[0] * y[1], p[2] * y[0] * y[1] - p[3] * y[1]])

    def loss(p, y0):
        r = solve_ivp(rhs, (0.0, 5.0), y0, t_eval=np.linspace(1, 5, 5), args=(p,),
                      rtol=1e-8, atol=1e-10, sensitivity="forward")
        return np.sum(r.y ** 2)
    p, y0 = np.array([1.1, 0.4, 0.1, 0.4]), np.array([10.0, 5.0])
    sizes = _augmented_sizes(monkeypatch)
    got = dualad.grad(loss, argnums=wrt)(p, y0)
    assert max(sizes) == 2 * (1 + directions)
    got = got if isinstance(got, tuple) else (got,)
    # the adjoint computes all of them independently
    want = dualad.grad(lambda p, y0: np.sum(solve_ivp(
        rhs, (0.0, 5.0), y0, t_eval=np.linspace(1, 5, 5), args=(p,), rtol=1e-10,
        atol=1e-12, sensitivity="adjoint").y ** 2), argnums=(0, 1))(p, y0)
    for g, k in zip(got, wrt):
        np.testing.assert_allclose(g, want[k], rtol=1e-5)


def _stiff_loss(k):
    # a fast mode (rate k[1]) slaved to a slow one: integrating y backwards in time, as a
    # differentiated adjoint must, amplifies rounding by exp(k[1] t)
    def rhs(t, y, k):
        return np.stack([-k[0] * y[0], -k[1] * y[1] + y[0] * y[0]])
    r = solve_ivp(rhs, (0.0, 5.0), np.array([1.0, 1.0]), t_eval=np.array([2.5, 5.0]),
                  args=(k,), rtol=1e-8, atol=1e-12, sensitivity="adjoint")
    return np.sum(r.y)


def test_the_prepared_adjoint_reads_the_forward_interpolant_under_jit(monkeypatch):
    """Under jit(grad(f)) (the prepared gradient's default) the adjoint's inputs are jit
    boxes, not derivatives: y(s) comes from the primal's interpolant, as without jit, not
    from integrating y backwards (which overflows here, and fell back to eager)."""
    import warnings
    from dualad.jacobians.optimize import gradient
    k = np.array([0.3, 300.0])
    want = dualad.grad(_stiff_loss)(k)
    sizes = _augmented_sizes(monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = gradient(_stiff_loss, k)(k)
    np.testing.assert_allclose(got, want, rtol=1e-10)
    # one forward solve (2 states), the backward ones of (λ, μ) only: 2 + 2 states
    assert sorted(set(sizes)) == [2, 4]
    assert sizes.count(2) == 1
    # a new point replays the program: again one forward solve, whose interpolant the
    # adjoint reads (no guard on the values, no second trace)
    g, k2 = gradient(_stiff_loss, k), np.array([0.35, 250.0])
    g(k)
    want2 = dualad.grad(_stiff_loss)(k2)
    sizes.clear()
    np.testing.assert_allclose(g(k2), want2, rtol=1e-10)
    assert sizes.count(2) == 1   # (one trace: see the fit test below)


def test_each_backward_segment_starts_at_the_forward_step(monkeypatch):
    import dualad.scipy._ivp as ivp
    starts, solve = [], ivp._si.solve_ivp

    def spy(fun, t_span, y0, *a, **k):
        starts.append((t_span, k.get("first_step")))
        return solve(fun, t_span, y0, *a, **k)
    monkeypatch.setattr(ivp._si, "solve_ivp", spy)
    k = np.array([0.3, 3.0])
    g = dualad.grad(_stiff_loss)(k)
    backward = [(span, h) for span, h in starts if span[0] > span[1]]
    assert len(backward) == 2
    for (a, b), h in backward:
        assert h is not None and 0 < h <= a - b
    h = 1e-4 * np.abs(k)
    fd = [(_stiff_loss(k + e) - _stiff_loss(k - e)) / (2 * d) for e, d in zip(np.diag(h), h)]
    np.testing.assert_allclose(g, fd, rtol=1e-6)


@pytest.mark.parametrize("method", ["RK45", "RK23", "DOP853", "BDF"])
@pytest.mark.parametrize("span", [(0.0, 7.0), (7.0, 0.0)])
def test_the_adjoints_interpolant_is_scipys_bitwise(method, span):
    """The adjoint reads y(s) through dualad.scipy._ivp_dense.interpolant: SciPy's values,
    bit for bit, at the steps' ends and between them, forwards and backwards."""
    from dualad.scipy._ivp_dense import interpolant
    r = si.solve_ivp(lambda t, y: [y[1], -y[0] - 0.3 * y[1]], span, [1.0, 0.5], method=method,
                     dense_output=True, rtol=1e-6)
    y_at = interpolant(r.sol)
    assert (y_at is r.sol) == (method in ("DOP853", "BDF"))   # only RK23/RK45 are rewritten
    for t in np.concatenate([np.linspace(0.0, 7.0, 301), r.sol.ts]):
        np.testing.assert_array_equal(y_at(t), r.sol(t))
