"""bench/taylor_derivative.py: the exact values, the budget rule (a cell predicted to take
too long is extrapolated, not run) and a smoke run of the script at small orders."""
from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench")
sys.path.insert(0, BENCH)

import taylor_derivative as td  # noqa: E402


def test_exact_values_match_sympy_differentiating_the_whole_function():
    sp = pytest.importorskip("sympy")
    x = sp.Symbol("x")
    f = sp.sin(x) * sp.exp(-x ** 2) / (1 + x ** 2)
    exact = td.exact_derivatives([1, 3, 6])
    for n, v in exact.items():
        want = float(sp.diff(f, x, n).subs(x, sp.Rational(7, 10)).evalf(30))
        assert v == pytest.approx(want, rel=1e-14), n


def test_prediction_is_geometric_in_the_order():
    assert td.predicted([(1, 1.0)], 5) is None
    assert td.predicted([(2, 1.0), (4, 4.0)], 8) == pytest.approx(64.0)
    assert td.predicted([(2, 1.0), (4, 0.5)], 8) == pytest.approx(0.5)   # never shrinks


def test_a_cell_over_the_budget_is_extrapolated_not_run(monkeypatch):
    """Order n's first call costs 2^n ms on a clock the test advances (a real sleep
    oversleeps on a loaded machine, and the extrapolation from orders 1 and 2 then
    flattened: CI's red run of 2026-11-29 23:03)."""
    calls = []
    clock = [0.0]
    monkeypatch.setattr(time, "perf_counter", lambda: clock[0])

    def slow(n):   # first call 2^n milliseconds
        def run(x):
            calls.append(n)
            clock[0] += 0.001 * 2 ** n
            return float(n)
        return run
    out = td.measure({"slow": slow}, [1, 2, 8], budget=0.05, rounds=2)["slow"]
    assert out[1]["value"] == 1.0 and out[2]["value"] == 2.0
    assert "value" not in out[8] and out[8]["estimate"] == pytest.approx(0.256)
    assert 8 not in calls


def test_script_runs_at_small_orders():
    pytest.importorskip("sympy")
    proc = subprocess.run([sys.executable, os.path.join(BENCH, "taylor_derivative.py"),
                           "--orders", "1,2,4", "--rounds", "2", "--no-jax", "--no-affinity"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "taylor: first / median" in out and "nested: first / median" in out
    rows = [ln.split() for ln in out.splitlines() if ln[:2] in ("1 ", "2 ", "4 ")]
    assert [r[0] for r in rows] == ["1", "2", "4"]
    assert rows[2][1] == "-8.31997509321"   # f''''(0.7), SymPy
    assert "WRONG" not in out and "jax: skipped" in out
