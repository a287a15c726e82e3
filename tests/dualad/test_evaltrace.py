import subprocess
import sys

import numpy as np
import pytest

import dualad
from dualad.cli import main
from dualad.evaltrace import trace
from dualad.expr import ExpressionError, compile_expression


def f(x1, x2):
    return np.log(x1) + x1 * x2 - np.sin(x2)


def test_forward_trace_tangents_match_jvp():
    et = trace(f, 2.0, 5.0, mode="forward", seed=(0.3, -1.2))
    _, t = dualad.jvp(f, (2.0, 5.0), (0.3, -1.2))
    assert np.isclose(et.derivative, t)
    tangent_rows = [r for r in et.rows if r.section == "tangent"]
    assert len(tangent_rows) == 2 + et.op_counts["tangent operations"]


def test_reverse_trace_accumulates_like_grad():
    et = trace(f, 2.0, 5.0, mode="reverse")
    g = dualad.grad(f, argnums=(0, 1))(2.0, 5.0)
    assert np.allclose(et.derivative, g)
    formulas = [r.formula for r in et.rows if r.section == "adjoint"]
    assert any(" + " in fm for fm in formulas), "an accumulation step v̄ = v̄ + ... is shown"
    assert et.op_counts["adjoint steps"] == 8


def test_vector_and_array_code():
    W = np.array([[1.0, 2.0], [0.5, -1.0]])
    g = lambda x: np.sum(np.tanh(W @ x) * x)  # noqa: E731
    x = np.array([0.3, -0.7])
    et = trace(g, x, mode="reverse")
    assert np.allclose(et.derivative[0], dualad.grad(g)(x))
    et_f = trace(g, x, mode="forward", seed=(np.array([1.0, 0.0]),))
    assert np.isclose(et_f.derivative, dualad.grad(g)(x)[0])
    assert "matmul" not in et.to_text() or "@" in et.to_text()


def test_renderings():
    et = trace(f, 2.0, 5.0, mode="reverse")
    md, tex, dot = et.to_markdown(), et.to_latex(), et.to_dot()
    assert md.startswith("| trace |") and "v̄_-1" in md
    assert r"\begin{tabular}" in tex and r"\bar v_{-1}" in tex
    assert dot.startswith("digraph") and '"v_-1" -> "v_2"' in dot
    assert "11.652" in et.to_text()


def test_png_graph(tmp_path):
    pytest.importorskip("matplotlib")  # installed by the test extra
    path = trace(f, 2.0, 5.0, mode="forward").plot(tmp_path / "g.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bad_mode_and_constant_output():
    with pytest.raises(ValueError, match="mode"):
        trace(f, 2.0, 5.0, mode="sideways")
    with pytest.raises(ValueError, match="does not depend"):
        trace(lambda x: 3.0, 2.0)


def test_expression_parser_errors():
    with pytest.raises(ExpressionError, match="cannot parse"):
        compile_expression("log(x1", ["x1"])
    with pytest.raises(ExpressionError, match="x3"):
        compile_expression("x1 + x3", ["x1"])
    with pytest.raises(ExpressionError, match="unknown function"):
        compile_expression("__import__('os')", [])
    assert np.isclose(compile_expression("x^2 + 2*x", ["x"])(3.0), 15.0)


def test_cli_trace(capsys, tmp_path):
    rc = main(["trace", "log(x1) + x1*x2 - sin(x2)", "--at", "x1=2", "x2=5", "--mode", "reverse"])
    out = capsys.readouterr().out
    assert rc == 0 and "1.716" in out and "5.500" in out
    assert main(["trace", "x1*x2", "--at", "x1=2", "x2=5", "--format", "latex"]) == 0
    assert main(["trace", "log(x1) + x3", "--at", "x1=2"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "x3" in err
    assert main(["trace", "log(x1", "--at", "x1=2"]) == 2
    assert main(["trace", "x1", "--at", "x1=oops"]) == 2


def test_cli_console_script_runs():
    r = subprocess.run([sys.executable, "-m", "dualad.cli", "trace", "sin(x)", "--at", "x=1"],
                       capture_output=True, text=True, check=False)
    assert r.returncode == 0 and "0.841" in r.stdout
