"""bench/gradbench (issue 32): the dualad GradBench tool answers GradBench's JSON-lines
protocol with the right numbers (closed forms, SciPy's densities, a scalar re-statement of
the reference), and ``run.py --quick`` runs with jax, torch and autograd absent (skipped
with a note), every output checked, a wrong derivative an ERROR cell. No timing asserted."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from scipy import stats

GB = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench",
                  "gradbench")
sys.path.insert(0, GB)

import gb_evals as E  # noqa: E402
import gb_inputs as I  # noqa: E402
import gb_nested as N  # noqa: E402
import gb_peers  # noqa: E402
import gb_programs as P  # noqa: E402


def _load(name):
    """bench/gradbench/<name>.py under a name of its own (bench/run.py is ``run`` too)."""
    spec = importlib.util.spec_from_file_location(f"gradbench_{name}",
                                                  os.path.join(GB, f"{name}.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


tool = _load("tool")


def _session(messages, jit=False):
    out = []
    tool.serve([json.dumps(m) for m in messages], out.append, jit)
    return [json.loads(line) for line in out]


def _messages():
    lse, km, dt = I.lse(50, standard=False), I.kmeans(3, 40, 2, standard=False), I.det(4)
    runs = {"min_runs": 3, "min_seconds": 0}
    return [{"id": 0, "kind": "start", "eval": "lse"},
            {"id": 1, "kind": "define", "module": "lse"},
            {"id": 2, "kind": "evaluate", "module": "lse", "function": "gradient",
             "input": lse | runs},
            {"id": 3, "kind": "analysis", "of": 2, "valid": True},
            {"id": 4, "kind": "define", "module": "kmeans"},
            {"id": 5, "kind": "evaluate", "module": "kmeans", "function": "dir",
             "input": km | runs},
            {"id": 6, "kind": "define", "module": "det"},
            {"id": 7, "kind": "evaluate", "module": "det", "function": "primal",
             "input": dt | runs},
            {"id": 8, "kind": "evaluate", "module": "det", "function": "gradient",
             "input": dt | runs},
            {"id": 9, "kind": "define", "module": "ba"},
            {"id": 10, "kind": "evaluate", "module": "det", "function": "gradient",
             "input": {"A": [1.0, 2.0], "ell": 2}}]


def _check_session(responses, messages):
    assert [r["id"] for r in responses] == [m["id"] for m in messages]
    assert responses[0]["tool"] in ("dualad", "dualad-jit")
    assert responses[1] == {"id": 1, "success": True} and responses[3] == {"id": 3}
    x = np.array(messages[2]["input"]["x"])
    r = responses[2]
    assert r["success"] and len(r["timings"]) == 3
    assert all(t["name"] == "evaluate" and t["nanoseconds"] > 0 for t in r["timings"])
    np.testing.assert_allclose(r["output"], np.exp(x) / np.exp(x).sum(), rtol=1e-13)
    # kmeans dir: gradient 2 sum_{i in S_j} (C_j - P_i) over the Hessian diagonal 2 |S_j|
    Pts, C = (np.array(messages[5]["input"][k]) for k in ("points", "centroids"))
    near = np.argmin(((Pts[:, None] - C[None]) ** 2).sum(2), 1)
    want = [C[j] - Pts[near == j].mean(0) for j in range(len(C))]
    np.testing.assert_allclose(responses[5]["output"], want, rtol=1e-12, atol=1e-14)
    A = np.array(messages[7]["input"]["A"]).reshape(4, 4)
    assert np.isclose(responses[7]["output"], np.linalg.det(A), rtol=1e-12)
    np.testing.assert_allclose(responses[8]["output"],
                               (np.linalg.det(A) * np.linalg.inv(A).T).ravel(), rtol=1e-10)
    assert responses[9]["success"] is False and "det, gmm, kmeans" in responses[9]["error"]
    assert responses[10]["success"] is False and "reshape" in responses[10]["error"]


@pytest.mark.parametrize("jit", [False, True])
def test_protocol_round_trip(jit):
    msgs = _messages()
    _check_session(_session(msgs, jit), msgs)


def test_tool_over_stdin_stdout():
    msgs = _messages()[:3]
    r = subprocess.run([sys.executable, os.path.join(GB, "tool.py"), "--jit"],
                       input="".join(json.dumps(m) + "\n" for m in msgs),
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    lines = [json.loads(s) for s in r.stdout.splitlines()]
    assert [ln["id"] for ln in lines] == [0, 1, 2] and lines[0]["tool"] == "dualad-jit"
    x = np.array(msgs[2]["input"]["x"])
    np.testing.assert_allclose(lines[2]["output"], np.exp(x) / np.exp(x).sum(), rtol=1e-13)


def test_llsq_and_ode_against_closed_forms():
    inp = I.llsq(16, 5, standard=False)
    peer = gb_peers.DualadPeer(True)
    call, post = E.build("llsq", "gradient", peer, inp)
    t = -1 + 2 * np.arange(16) / 15
    T = t[:, None] ** np.arange(5)
    np.testing.assert_allclose(post(call()), T.T @ (T @ inp["x"] - np.sign(t)), rtol=1e-12)
    # ode: y_0 = x_0 t, y_1 = x_0 x_1 t^2 / 2 (RK4 exact for these polynomials)
    x = np.array([0.3, 0.7, 0.2])
    call, post = E.build("ode", "primal", peer, {"x": x.tolist(), "s": 3})
    np.testing.assert_allclose(post(call())[:2], [0.6, 0.3 * 0.7 * 2], rtol=1e-13)


def test_gmm_objective_is_the_log_posterior():
    inp = I.gmm(3, 2, 7)
    d, k = 3, 2
    x, alpha = np.array(inp["x"]), np.array(inp["alpha"])
    mu, q, l = (np.array(inp[v]) for v in ("mu", "q", "l"))
    phi = np.exp(alpha) / np.exp(alpha).sum()
    prec = []
    for j in range(k):
        Q = np.diag(np.exp(q[j]))
        pos = 0
        for c in range(d - 1):
            for r in range(c + 1, d):
                Q[r, c] = l[j][pos]
                pos += 1
        prec.append(Q.T @ Q)
    lik = sum(np.log(sum(phi[j] * stats.multivariate_normal.pdf(
        xi, mu[j], np.linalg.inv(prec[j])) for j in range(k))) for xi in x)
    prior = sum(stats.wishart.logpdf(prec[j], df=d + 1, scale=np.eye(d)) for j in range(k))
    f = P.gmm_objective(np, x, 0, 1.0)
    assert np.isclose(f(alpha, mu, q, l), lik + prior, rtol=1e-12)


def test_lstm_objective_is_the_reference_loop():
    inp = I.lstm(2, 5)
    main, extra, state, seq = (np.array(inp[v]) for v in
                               ("main_params", "extra_params", "state", "sequence"))
    b, L = seq.shape[1], 2
    sig = lambda z: 1 / (1 + np.exp(-z))  # noqa: E731
    st, total = state.copy(), 0.0
    for t in range(len(seq) - 1):   # cpp/gradbench/evals/lstm.hpp, one scalar at a time
        out = seq[t] * extra[0]
        for i in range(L):
            w, bias, h, c = main[2 * i], main[2 * i + 1], st[2 * i], st[2 * i + 1]
            for j in range(b):
                fo = sig(out[j] * w[j] + bias[j])
                ig = sig(h[j] * w[b + j] + bias[b + j])
                og = sig(out[j] * w[2 * b + j] + bias[2 * b + j])
                ch = np.tanh(h[j] * w[3 * b + j] + bias[3 * b + j])
                c[j] = c[j] * fo + ig * ch
                h[j] = og * np.tanh(c[j])
            out = h.copy()
        ypred = out * extra[1] + extra[2]
        total += np.sum(seq[t + 1] * (ypred - np.log(np.exp(ypred).sum() + 2)))
    want = -total / ((len(seq) - 1) * b)
    assert np.isclose(P.lstm_objective(np, state, seq)(main, extra), want, rtol=1e-13)


def test_run_quick_without_peers_and_a_wrong_derivative_is_an_error(monkeypatch):
    # jax, torch, autograd absent (whether or not this environment has them)
    monkeypatch.setattr(gb_peers, "_PACKAGE", {p: "absent_" + m.replace(".", "_") for p, m in
                                               gb_peers._PACKAGE.items()})
    run = _load("run")
    results, text = run.main(["--quick", "--no-affinity"])
    assert {label for label, _, _ in results} >= {"gmm (2, 3), n=20", "lse (100)", "lstm (1, 6)"}
    for name in ("jax.jit", "torch", "autograd"):
        assert f"  {name}: absent_" in text and "not importable" in text
    assert "ERROR" not in text
    for _, res, check in results:
        assert "time" in res["dualad"] and "time" in res["dualad.jit"], res
        assert res["dualad.jit"]["err"] <= run.TOL and "ERROR" not in check

    class Wrong(gb_peers.DualadPeer):
        def grad(self, f, argnums=0):
            g = super().grad(f, argnums)
            return lambda *a: 1.001 * g(*a)
    args = run.parse(["--quick"])
    res, _ = run.run_row("lse", "lse", I.lse(30, standard=False),
                         {"dualad": gb_peers.DualadPeer(False), "torch": Wrong(False)}, args)
    assert res["torch"]["error"].startswith("ERROR mismatch vs dualad") and \
        "time" not in res["torch"]


def _python_scan(step, carry, xs, length=None):
    """jax.lax.scan's meaning, as a Python loop (jax is not needed here)."""
    n = length if xs is None else len(xs[0])
    for t in range(n):
        carry, _ = step(carry, None if xs is None else tuple(x[t] for x in xs))
    return carry, None


def test_the_scan_spellings_jax_gets_are_the_same_programs():
    x = np.array(I.ode(12, 5, standard=False)["x"])
    np.testing.assert_allclose(P.ode_state_scan(np, 5, _python_scan)(x),
                               P.ode_state(np, 5)(x), rtol=1e-15)
    inp = I.lstm(2, 7)
    args = [np.array(inp[v]) for v in ("main_params", "extra_params")]
    fixed = [np.array(inp[v]) for v in ("state", "sequence")]
    assert np.isclose(P.lstm_objective(np, *fixed, _python_scan)(*args),
                      P.lstm_objective(np, *fixed)(*args), rtol=1e-14)


# --- the nested evals (particle, saddle) -------------------------------------------------
def test_particle_objective_and_its_nested_derivatives_against_the_hand_written_ones():
    """The objective and outer derivative (dualad eager: forward over an inner reverse
    gradient per Euler step, and reverse over an inner forward one) at a point, against the closed-form
    acceleration and the hand-written forward sweep; those against a central difference."""
    w = 0.1
    want_f, want_g = N.particle_by_hand_objective(w), N.particle_by_hand_objective(w, True)
    h = 1e-6
    fd = (N.particle_by_hand_objective(w + h) - N.particle_by_hand_objective(w - h)) / (2 * h)
    assert abs(fd - want_g[0]) <= 1e-7 * abs(want_g[0])
    peer = gb_peers.DualadPeer(False)
    for variant in ("fr", "rf"):     # (ff and rr: the same rules; the saddle test runs all)
        f, g = N.particle(peer, variant)
        np.testing.assert_allclose(f(np.array([w])), want_f, rtol=1e-13)
        np.testing.assert_allclose(g(np.array([w])), want_g, rtol=1e-12)


def test_saddle_through_the_tool_is_gradbenchs_answer():
    """GradBench's saddle session (all four functions, as its eval sends them) through
    dualad.jit: the golden output, well inside GradBench's tolerance; particle is defined."""
    msgs = [{"id": 0, "kind": "start", "eval": "saddle"},
            {"id": 1, "kind": "define", "module": "saddle"},
            *[{"id": 2 + k, "kind": "evaluate", "module": "saddle", "function": v,
               "input": I.saddle() | {"min_runs": 1, "min_seconds": 0}}
              for k, v in enumerate(("rr", "ff", "fr", "rf"))],
            {"id": 6, "kind": "define", "module": "particle"}]
    resp = _session(msgs, jit=True)
    assert resp[1]["success"] and resp[6]["success"]
    for r in resp[2:6]:
        assert r["success"], r.get("error")
        np.testing.assert_allclose(r["output"], N.GOLDEN["saddle"], rtol=1e-12)
        assert N.golden_mismatch("saddle", r["output"]) <= N.GOLDEN_TOL


class _Lax:
    """jax.lax's while_loop, cond and scan as their Python meaning (jax not needed)."""

    @staticmethod
    def while_loop(cond, body, s):
        while cond(s):
            s = body(s)
        return s

    @staticmethod
    def cond(pred, yes, no, s):
        return yes(s) if pred else no(s)

    @staticmethod
    def scan(step, carry, xs, length):
        for _ in range(length):
            carry, _ = step(carry, None)
        return carry, None


def test_the_loop_spelling_jax_gets_is_the_same_program():
    got = N.lax_argmin(_Lax, np, lambda p: p @ p, lambda p: 2 * p, np.array([1.0, -0.5]))
    want = N.argmin(np, lambda p: p @ p, lambda p: 2 * p, np.array([1.0, -0.5]))
    np.testing.assert_array_equal(got, want)
    bounded = N.lax_argmin(_Lax, np, lambda p: p @ p, lambda p: 2 * p,
                           np.array([1.0, -0.5]), bound=N.MAX_SOLVER)
    np.testing.assert_array_equal(bounded, want)
    short = N.lax_argmin(_Lax, np, lambda p: p @ p, lambda p: 2 * p,
                         np.array([1.0, -0.5]), bound=5)
    assert np.isnan(short).all()            # the bound was hit: no silent answer

    class Peer(gb_peers.DualadPeer):
        lax = _Lax
    peer = Peer(False)
    w = np.array([0.1])
    want = N.particle_objective(peer, "r")(w)
    assert N.lax_euler_objective(peer, "r")(w) == want
    assert N.lax_euler_objective(peer, "r", N.MAX_EULER)(w) == want
    assert np.isnan(N.lax_euler_objective(peer, "r", 100)(w))


def test_run_row_of_a_nested_eval_checks_against_the_hand_written_solve(monkeypatch):
    run = _load("run")
    # (the hand-written solve takes seconds; its answer is the golden one, to the last bit)
    monkeypatch.setattr(N, "saddle_by_hand", lambda start: np.array(N.GOLDEN["saddle"]))
    args = run.parse(["--rounds", "1", "--min-time", "0.001"])

    class Wrong(gb_peers.DualadPeer):
        def fgrad(self, f, argnums=0):
            g = super().fgrad(f, argnums)
            return lambda *a: 1.5 * g(*a)
    res, check = run.run_row("saddle rr", "saddle", I.saddle(),
                             {"dualad.jit": gb_peers.DualadPeer(True), "torch": Wrong(True)},
                             args, "rr")
    assert check.startswith("by hand") and "ERROR" not in check
    assert res["dualad.jit"]["err"] == 0.0 and "time" in res["dualad.jit"]
    assert res["torch"]["error"].startswith("ERROR mismatch vs by hand")
