"""bench/fast_by_default.py (issue 31's table): its problems are right (the GradBench
objectives, the hand-written Jacobians and Hessian), a raising participant fills its cell
instead of stopping the run, and a ``--quick`` smoke run on tiny sizes finishes with every
dualad cell measured. jax and torch columns appear only where they are installed. No
timing is asserted."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from scipy.optimize._numdiff import approx_derivative
from scipy.special import logsumexp

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench")
sys.path.insert(0, BENCH)

import fast_by_default as fbd  # noqa: E402
import fast_by_default_rows as P  # noqa: E402
import gradbench_numpy as GB  # noqa: E402
from fast_by_default_tasks import Task  # noqa: E402


def test_gradbench_det_is_the_determinant():
    for ell in (1, 2, 4, 5):
        A = GB.det_data(ell)
        assert np.isclose(GB.det_objective(np)(A), np.linalg.det(A), rtol=1e-12)


def test_gradbench_lse_and_kmeans_objectives():
    x = GB.lse_data(50)
    assert np.isclose(GB.lse_objective(np)(x), logsumexp(x), rtol=1e-14)
    points, C = GB.kmeans_data(3, 40, 2)
    brute = sum(min(np.sum((p - c) ** 2) for c in C) for p in points)
    assert np.isclose(GB.kmeans_objective(np, points)(C), brute, rtol=1e-12)


def test_gradbench_ode_is_rk4_of_the_chain():
    # y_0' = x_0, y_1' = x_1 y_0: with s steps RK4 is exact for these polynomials in t
    x, _ = GB.ode_data(3, 4)
    f = GB.ode_objective(np, 4)
    y1 = x[1] * x[0] * 2.0 ** 2 / 2
    y2 = x[2] * x[1] * x[0] * 2.0 ** 3 / 6
    assert np.isclose(f(x), y2, rtol=1e-12)
    assert np.isclose(f(x[:2]), y1, rtol=1e-12)


def test_hand_written_derivatives_match_finite_differences():
    k = P.Kinetics(20)
    y = k.y0 * 1.1
    J = k.analytic_jac()(y)
    assert np.allclose(J, approx_derivative(k.rhs(np), y, method="3-point"), rtol=1e-6,
                       atol=1e-8)
    y = np.array([0.9, 2e-5, 0.1])
    assert np.allclose(P.robertson_jac(y), approx_derivative(P.robertson(np), y,
                                                             method="3-point"),
                       rtol=1e-6, atol=1e-6)
    X, yv, _ = P.logistic_data(60, 4)
    w = np.linspace(-0.3, 0.3, 4)
    g = P.logistic_grad(X, yv)
    assert np.allclose(g(w), approx_derivative(P.logistic_loss(np, X, yv), w,
                                               method="3-point"), rtol=1e-6, atol=1e-9)
    assert np.allclose(P.logistic_hess(X, yv)(w), approx_derivative(g, w, method="3-point"),
                       rtol=1e-6, atol=1e-9)


def test_a_raising_participant_fills_its_cell_and_the_row_goes_on():
    def boom():
        raise ValueError("no rule for this primitive")

    def late():
        calls = []

        def call():
            calls.append(1)
            if len(calls) > 1:
                raise RuntimeError("stale replay")
            return np.ones(2)
        return call
    task = Task("t", "demo", {"ref": lambda: (lambda: np.ones(2)), "broken": boom,
                              "late": late, "ok": lambda: (lambda: np.ones(2) * (1 + 1e-9))},
                ref="ref", truth=("ref",))
    rows = {r[0]: r[1:] for r in fbd.run_task(task, rounds=1, min_time=0.0)}
    assert rows["broken"][0].startswith("error: ValueError: no rule")
    assert "stale replay" in rows["late"][0] and "(second call)" in rows["late"][0]
    assert rows["ref"][2] == "ref" and rows["ok"][2].endswith("x")
    assert "err vs ref 1.0e-09" in rows["ok"][3]
    manual = Task("t", "by hand", {"x": None}, manual="the lead fills it")
    assert fbd.run_task(manual, 1, 0.0) == [("x", "(fill by hand)", "-", "-",
                                             "the lead fills it")]


@pytest.mark.slow   # the whole script in a fresh interpreter (~3 s); the tests above run its parts
def test_quick_run_measures_every_dualad_cell():
    """The script as the lead runs it, on tiny sizes, in a fresh interpreter (the pinning
    must precede NumPy's import)."""
    env = dict(os.environ)
    root = os.path.dirname(BENCH)
    import dualad
    if os.path.dirname(os.path.dirname(os.path.abspath(dualad.__file__))) == os.path.abspath(root):
        # the tree's dualad (an editable install): the child imports it from the tree too;
        # against a wheel the child imports the installed package
        env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    r = subprocess.run([sys.executable, os.path.join(BENCH, "fast_by_default.py"), "--quick",
                        "--markdown", "--rounds", "1", "--min-time", "0.001",
                        "--only", "jac,hess,lv,bdf,gradbench,tests"],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    out = r.stdout
    for title in ("Jacobian, 20-species", "Jacobian, Robertson", "Hessian, logistic",
                  "trust-exact whole solve", "Lotka-Volterra", "solve_ivp BDF",
                  "GradBench ode", "GradBench det", "GradBench kmeans", "GradBench lse",
                  "README's test command"):
        assert title in out, title
    dualad_rows = [ln for ln in out.splitlines() if ln.startswith("|")
                   and "dualad" in ln.split("|")[2]]
    assert len(dualad_rows) >= 12
    bad = [ln for ln in dualad_rows if "error:" in ln]
    assert not bad, bad
    for peer, column in (("jax", "jax.jit(jax.grad)"), ("torch", "torch eager")):
        try:
            __import__(peer)
        except ImportError:
            assert column not in out
