"""dualad.laplacian, hessian_diagonal, hessian_trace, biharmonic (batched Taylor sweeps):
equal to rounding to the planner's Hessian and to an HVP loop, composing with jit, vmap
and grad, the stochastic estimators unbiased (tested against their own variance), and
errors that name the function, the argument and the shape."""
from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import dualad
from dualad import jacobians

RTOL = 1e-12


def mlp(n, hidden=(6, 5), out=1, seed=0):
    """A tanh network R^n -> R^out (scalar for out=None)."""
    rng = np.random.default_rng(seed)
    sizes = (n,) + hidden
    Ws = [rng.normal(size=(b, a)) / np.sqrt(a) for a, b in zip(sizes, sizes[1:])]
    Wout = rng.normal(size=(out or 1, sizes[-1]))

    def f(x):
        h = x.reshape(-1)
        for W in Ws:
            h = np.tanh(W @ h + 0.1)
        y = Wout @ h
        return y[0] if out is None else y
    return f


def close(a, b, rtol=RTOL):
    np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * max(1.0, np.max(np.abs(b))))


# --- exact operators against the Hessian --------------------------------------------------
@pytest.mark.parametrize("shape", [(), (1,), (5,), (2, 3)])
def test_laplacian_is_the_trace_of_the_planners_hessian(shape):
    f = mlp(int(np.prod(shape)), out=None)
    x = np.random.default_rng(1).normal(size=shape)
    H = jacobians.hessian(f, x).reshape(x.size, x.size)
    close(dualad.laplacian(f)(x), np.trace(H))
    close(dualad.hessian_diagonal(f)(x), np.diag(H).reshape(shape))


def test_laplacian_equals_an_hvp_loop():
    f = mlp(8, out=None, seed=3)
    x = np.random.default_rng(2).normal(size=8)
    E = np.eye(8)
    loop = sum(dualad.hvp(f, x, E[i])[i] for i in range(8))
    close(dualad.laplacian(f)(x), loop)


def test_vector_output_gets_one_laplacian_and_one_diagonal_per_entry():
    f = mlp(4, out=3, seed=5)
    x = np.random.default_rng(3).normal(size=4)
    Hs = [jacobians.hessian(lambda z, k=k: f(z)[k], x) for k in range(3)]
    lap = dualad.laplacian(f)(x)
    assert lap.shape == (3,)
    close(lap, [np.trace(H) for H in Hs])
    diag = dualad.hessian_diagonal(f)(x)
    assert diag.shape == (3, 4)
    close(diag, [np.diag(H) for H in Hs])


def test_matrix_output_and_matrix_input_shapes():
    f = lambda X: np.sin(X) * X[0, 1] + np.sum(X ** 3)      # (2, 2) -> (2, 2)
    X = np.array([[0.3, -0.7], [1.1, 0.4]])
    lap = dualad.laplacian(f)(X)
    assert lap.shape == (2, 2)
    diag = dualad.hessian_diagonal(f)(X)
    assert diag.shape == (2, 2, 2, 2)
    for k in np.ndindex(2, 2):
        H = jacobians.hessian(lambda Z, k=k: f(Z)[k], X).reshape(4, 4)
        close(lap[k], np.trace(H))
        close(diag[k], np.diag(H).reshape(2, 2))


@settings(derandomize=True, max_examples=25, deadline=None)
@given(st.lists(st.floats(-2.0, 2.0), min_size=1, max_size=6),
       st.floats(0.1, 3.0))
def test_laplacian_of_random_points_matches_the_hessian(xs, scale):
    x = np.array(xs)
    # (no np.prod here: the reverse rule of prod divides by the entries, and its Hessian at
    # x = [0.5, 2e-76] is -4e59 where the Taylor sweep, correctly, gives about -2e-76)
    f = lambda z: np.sum(np.exp(-scale * z ** 2)) * np.cos(np.sum(z)) + np.tanh(z[0]) * np.sum(np.tanh(z) ** 3)
    close(dualad.laplacian(f)(x), np.trace(jacobians.hessian(f, x)), rtol=1e-11)


@pytest.mark.parametrize("kind", ["general", "symmetric", "rank one", "zero", "shaped"])
def test_hessian_trace_of_any_matrix(kind):
    n = 5
    rng = np.random.default_rng(7)
    f = mlp(n, out=None, seed=2)
    x = rng.normal(size=n)
    M = {"general": rng.normal(size=(n, n)),
         "symmetric": (lambda A: A + A.T)(rng.normal(size=(n, n))),
         "rank one": np.outer(rng.normal(size=n), rng.normal(size=n)),
         "zero": np.zeros((n, n)),
         "shaped": rng.normal(size=(n, n))}[kind]
    H = jacobians.hessian(f, x)
    if kind == "shaped":   # x of shape (5, 1): M of shape x.shape + x.shape
        g = lambda z: f(z.reshape(n))
        close(dualad.hessian_trace(g, M.reshape(n, 1, n, 1))(x.reshape(n, 1)),
              np.trace(H @ M))
        return
    close(dualad.hessian_trace(f, M)(x), np.trace(H @ M))


def test_hessian_trace_of_the_identity_is_the_laplacian():
    f = mlp(6, out=2, seed=9)
    x = np.linspace(-1, 1, 6)
    close(dualad.hessian_trace(f, np.eye(6))(x), dualad.laplacian(f)(x))


def test_hessian_trace_uses_one_direction_per_nonzero_eigenvalue(monkeypatch):
    from dualad.transforms import operators
    seen = []
    real = operators.coefficients
    monkeypatch.setattr(operators, "coefficients",
                        lambda f, x, V, k: seen.append(len(V)) or real(f, x, V, k))
    u = np.arange(1.0, 7.0)
    M = np.outer(u, u[::-1])          # rank one; its symmetric part has rank two
    x = np.linspace(0.1, 0.6, 6)
    f = lambda z: np.sum(np.sin(z) * z[0])
    value = operators.hessian_trace(f, M)(x)
    assert seen == [2]
    close(value, np.trace(jacobians.hessian(f, x) @ M))


# --- the biharmonic ------------------------------------------------------------------------
def test_biharmonic_closed_forms():
    x = np.array([0.3, -1.0, 2.0, 0.5])
    n = len(x)
    close(dualad.biharmonic(lambda z: np.sum(z ** 2) ** 2)(x), 8 * n * (n + 2))
    a = np.array([0.5, -0.2, 0.3, 0.1])
    f = lambda z: np.exp(a @ z)                         # Δ²f = |a|⁴ f
    close(dualad.biharmonic(f)(x), np.sum(a ** 2) ** 2 * f(x))
    close(dualad.biharmonic(np.sin)(0.7), np.sin(0.7))  # one variable: f''''


def test_biharmonic_equals_the_laplacian_of_the_laplacian():
    f = mlp(4, out=2, seed=4)
    x = np.random.default_rng(5).normal(size=4)
    close(dualad.biharmonic(f)(x), dualad.laplacian(dualad.laplacian(f))(x), rtol=1e-10)


# --- stochastic estimators: unbiased, reproducible, calibrated ---------------------------
def _z_score(estimates, exact):
    """(mean - exact) in units of the mean's standard error over independent estimates."""
    estimates = np.asarray(estimates)
    return (estimates.mean() - exact) / (estimates.std(ddof=1) / np.sqrt(len(estimates)))


def _repeat(op, x, repeats):
    return np.array([op(x) for _ in range(repeats)])


def F6(z):
    """Off-diagonal Hessian terms (the roll) give Hutchinson a variance; the quadratic
    makes the Laplacian large against the estimators' spread, so a 10% bias is seen."""
    return np.sum(np.sin(z) * np.roll(z, 1) ** 2) + np.prod(np.cos(z)) + 3 * np.sum(z ** 2)


@pytest.mark.parametrize("method,kw", [("stde", {}), ("hutchinson", {}),
                                       ("hutchinson", {"distribution": "gaussian"})])
def test_laplacian_estimators_are_unbiased(method, kw):
    x = np.linspace(-1.0, 1.2, 6)
    exact = dualad.laplacian(F6)(x)
    op = dualad.laplacian(F6, method=method, samples=4, rng=np.random.default_rng(11), **kw)
    estimates = _repeat(op, x, 400)
    assert estimates.std() > 1e-3 * abs(exact)         # a genuinely random estimate
    assert abs(_z_score(estimates, exact)) < 4.0
    assert abs(_z_score(1.1 * estimates, exact)) > 4.0   # the check sees a 10% bias


def test_stde_laplacian_with_every_coordinate_is_exact():
    x = np.linspace(-1.0, 1.2, 6)
    est, err = dualad.laplacian(F6, method="stde", samples=6, rng=0, with_stderr=True)(x)
    close(est, dualad.laplacian(F6)(x))
    assert err == 0.0
    assert dualad.laplacian(F6, method="stde", samples=60, rng=0)(x) == pytest.approx(
        dualad.laplacian(F6)(x), rel=1e-12)
    one = dualad.laplacian(np.sin, method="stde", samples=1, rng=0, with_stderr=True)(0.5)
    assert one == (pytest.approx(-np.sin(0.5), rel=1e-15), 0.0)


def test_biharmonic_stde_is_unbiased_and_its_stderr_is_calibrated():
    x = np.array([0.4, -0.3, 0.8])
    f = lambda z: np.sum(np.tanh(z) * z) ** 2 + np.prod(np.sin(z)) + np.sum(z ** 2) ** 2
    exact = dualad.biharmonic(f)(x)
    op = dualad.biharmonic(f, method="stde", samples=16, rng=np.random.default_rng(3),
                           with_stderr=True)
    pairs = [op(x) for _ in range(300)]
    estimates = np.array([p[0] for p in pairs])
    errors = np.array([p[1] for p in pairs])
    assert abs(_z_score(estimates, exact)) < 4.0
    assert abs(_z_score(3.0 * estimates, exact)) > 4.0   # forgetting Isserlis' 1/3 is caught
    # the reported standard error matches the spread of independent estimates (in mean
    # square: E[s^2]/S is the estimate's variance; a median of s would sit low, as d_4 of a
    # Gaussian direction is heavy-tailed)
    assert 0.8 < np.sqrt(np.mean(errors ** 2)) / estimates.std(ddof=1) < 1.2


def test_a_seed_reproduces_and_a_generator_advances():
    x = np.linspace(-1.0, 1.2, 6)
    seeded = dualad.laplacian(F6, method="hutchinson", samples=3, rng=42)
    assert seeded(x) == seeded(x)
    gen = dualad.laplacian(F6, method="hutchinson", samples=3, rng=np.random.default_rng(42))
    assert gen(x) == seeded(x)
    assert gen(x) != seeded(x)


def test_with_stderr_for_exact_is_zero_and_shaped_like_the_value():
    f = mlp(3, out=2)
    value, err = dualad.laplacian(f, with_stderr=True)(np.ones(3))
    assert value.shape == err.shape == (2,) and not np.any(err)
    est, err = dualad.laplacian(f, method="hutchinson", samples=5, rng=1,
                                with_stderr=True)(np.ones(3))
    assert est.shape == err.shape == (2,) and np.all(err > 0)


# --- composition -----------------------------------------------------------------------------
def test_composes_with_jit_both_ways():
    f = mlp(5, out=None, seed=6)
    x = np.random.default_rng(8).normal(size=5)
    want = dualad.laplacian(f)(x)
    jitted = dualad.jit(dualad.laplacian(f))
    close(jitted(x), want)
    close(jitted(x + 0.5), dualad.laplacian(f)(x + 0.5))
    close(dualad.laplacian(dualad.jit(f))(x), want)
    close(dualad.jit(dualad.hessian_diagonal(f))(x), dualad.hessian_diagonal(f)(x))
    close(dualad.jit(dualad.biharmonic(f))(x), dualad.biharmonic(f)(x))
    M = np.arange(25.0).reshape(5, 5)
    close(dualad.jit(dualad.hessian_trace(f, M))(x), dualad.hessian_trace(f, M)(x))


def test_jit_of_a_stochastic_operator_freezes_its_draws_as_documented():
    """Under dualad.jit the directions are drawn while tracing and replayed (the module
    docstring says so and says to jit f instead); laplacian(jit(f)) draws afresh."""
    x = np.linspace(-1.0, 1.2, 6)
    frozen = dualad.jit(dualad.laplacian(F6, method="hutchinson", samples=2,
                                         rng=np.random.default_rng(0)))
    assert frozen(x) == frozen(x)
    fresh = dualad.laplacian(dualad.jit(F6), method="hutchinson", samples=2,
                             rng=np.random.default_rng(0))
    assert fresh(x) != fresh(x)


def test_the_standard_error_is_per_example_under_vmap_and_per_call_under_jit():
    X = np.linspace(-1.0, 1.0, 18).reshape(3, 6)
    op = dualad.laplacian(F6, method="hutchinson", samples=5, rng=0, with_stderr=True)
    loop = [op(x) for x in X]
    est, err = dualad.vmap(op)(X)
    close(est, [e for e, _ in loop])
    close(err, [s for _, s in loop])
    jitted = dualad.jit(op)
    for x, (e, s) in zip(X, loop):
        close(jitted(x)[1], s)
    value, zero = dualad.vmap(dualad.laplacian(F6, with_stderr=True))(X)
    close(value, [dualad.laplacian(F6)(x) for x in X])
    assert not np.any(zero)


def test_vmap_over_a_batch_of_points():
    f = mlp(4, out=None, seed=1)
    X = np.random.default_rng(9).normal(size=(7, 4))
    close(dualad.vmap(dualad.laplacian(f))(X), [dualad.laplacian(f)(x) for x in X])
    close(dualad.vmap(dualad.hessian_diagonal(f))(X),
          [dualad.hessian_diagonal(f)(x) for x in X])


def test_grad_of_a_pinn_residual_with_respect_to_the_parameters():
    """The loss (Δu_w − s)² of u_w(x) = Σ tanh(w x): d/dw from the reverse sweep through
    the Taylor sweep, against the closed form."""
    x = np.array([0.2, -0.5, 0.9])
    s = 0.3

    def loss(w):
        lap = dualad.laplacian(lambda z: np.sum(np.tanh(w * z)))(x)
        return (lap - s) ** 2

    def closed(w):   # Δu = Σ -2 w² t (1 - t²), t = tanh(w x)
        t = np.tanh(w * x)
        lap = np.sum(-2 * w ** 2 * t * (1 - t ** 2))
        dt = x * (1 - t ** 2)
        dlap = np.sum(-4 * w * t * (1 - t ** 2) - 2 * w ** 2 * dt * (1 - 3 * t ** 2))
        return 2 * (lap - s) * dlap

    close(dualad.grad(loss)(0.7), closed(0.7), rtol=1e-12)


# --- errors ------------------------------------------------------------------------------------
def _f(x):
    return np.sum(x ** 2)


@pytest.mark.parametrize("call,error,words", [
    (lambda: dualad.laplacian(None), TypeError, ["laplacian", "callable", "None"]),
    (lambda: dualad.laplacian(_f)(None), TypeError, ["laplacian(_f)", "argument 0", "None"]),
    (lambda: dualad.laplacian(_f)(np.arange(3)), TypeError,
     ["laplacian(_f)", "int", "shape (3,)"]),
    (lambda: dualad.hessian_diagonal(_f)(np.ones(2) + 1j), TypeError,
     ["hessian_diagonal(_f)", "complex", "(2,)"]),
    (lambda: dualad.laplacian(_f, method="exactly"), ValueError, ["laplacian", "'exactly'"]),
    (lambda: dualad.laplacian(_f, method="stde"), ValueError, ["samples", "None"]),
    (lambda: dualad.laplacian(_f, method="hutchinson", samples=0), ValueError, ["samples"]),
    (lambda: dualad.laplacian(_f, method="hutchinson", samples=True), ValueError, ["samples"]),
    (lambda: dualad.laplacian(_f, samples=4), ValueError, ["exact", "samples=4"]),
    (lambda: dualad.laplacian(_f, method="hutchinson", samples=2, distribution="normal"),
     ValueError, ["distribution", "'normal'"]),
    (lambda: dualad.biharmonic(_f, method="hutchinson", samples=3), ValueError,
     ["biharmonic", "('exact', 'stde')"]),
    (lambda: dualad.hessian_trace(_f, np.eye(3))(np.ones(4)), ValueError,
     ["hessian_trace", "(3, 3)", "(4,)", "(4, 4)"]),
    (lambda: dualad.hessian_trace(_f, None), TypeError, ["hessian_trace", "None"]),
    (lambda: dualad.laplacian(lambda x: (x, x))(np.ones(2)), TypeError,
     ["laplacian", "tuple", "one array"]),
])
def test_errors_name_the_function_argument_and_shape(call, error, words):
    with pytest.raises(error) as info:
        call()
    for w in words:
        assert w in str(info.value), (w, str(info.value))


# --- the benchmark's requirement (issue 34) ----------------------------------------------
@pytest.mark.slow
def test_benchmark_laplacian_beats_the_hvp_loop_threefold_and_agrees():
    """bench/taylor_laplacian.py in a fresh interpreter (its BLAS pinned to one thread
    before NumPy loads), few rounds, dualad's rows only."""
    root = pathlib.Path(__file__).resolve().parents[3]
    proc = subprocess.run([sys.executable, str(root / "bench" / "taylor_laplacian.py"),
                           "--quick", "--no-peers", "--json"], capture_output=True,
                          text=True, cwd=root, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["agree"]["dualad.laplacian"] < 1e-12
    assert result["agree"]["hessian + trace"] < 1e-12
    speedup = result["time"]["HVP loop"] / result["time"]["dualad.laplacian"]
    assert speedup >= 3.0, result["time"]
