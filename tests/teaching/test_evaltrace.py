import subprocess
import sys

import numpy as np
import pytest

import dualad
from dualad.teaching.cli import main
from dualad.teaching.evaltrace import trace
from dualad.teaching.expr import ExpressionError, compile_expression


def f(x1, x2):
    return np.log(x1) + x1 * x2 - np.sin(x2)


def test_forward_trace_tangents_match_jvp():
    et = trace(f, 2.0, 5.0, mode="forward", seed=(0.3, -1.2))
    _, t = dualad.jvp(f, (2.0, 5.0), (0.3, -1.2))
    assert np.isclose(et.derivative, t)
    tangent_rows = [r for r in et.rows if r.section == "tangent"]
    assert len(tangent_rows) == 2 + et.op_counts["primal operations"]
    assert [r.formula for r in tangent_rows][2:5] == [
        "v̇_-1 × 1/v_-1", "v̇_-1 × v_0 + v̇_0 × v_-1", "v̇_1 + v̇_2"]
    result = {r.name: r for r in et.rows if r.section == "result"}
    assert result["y"].formula == "v_5" and np.isclose(result["ẏ"].value, t)


def test_reverse_trace_accumulates_like_grad():
    et = trace(f, 2.0, 5.0, mode="reverse")
    g = dualad.grad(f, argnums=(0, 1))(2.0, 5.0)
    assert np.allclose(et.derivative, g)
    formulas = [r.formula for r in et.rows if r.section == "adjoint"]
    # The survey's accumulation step, with the partial written out (Table 3).
    assert "v̄_0 + v̄_2 · ∂v_2/∂v_0 = v̄_0 + v̄_2 · v_-1" in formulas
    assert "v̄_5 · ∂v_5/∂v_4 = −v̄_5" in formulas
    assert et.op_counts["adjoint steps"] == 8
    result = {r.name: r for r in et.rows if r.section == "result"}
    assert result["x̄_1"].formula == "v̄_-1" and np.isclose(result["x̄_2"].value, 1.716, atol=1e-3)


def test_operation_counts_are_measured_on_the_sweep():
    """The counts are the primitives the rules actually apply, not the number of rows:
    each sweep costs a small multiple of the primal (the cheap gradient principle)."""
    for mode, key in (("forward", "tangent operations"), ("reverse", "adjoint operations")):
        et = trace(f, 2.0, 5.0, mode=mode)
        n = et.op_counts["primal operations"]
        assert n == 5
        assert n <= et.op_counts[key] <= 4 * n
        assert sum(et.sweep_counts.values()) == et.op_counts[key]
        assert "cos" in et.sweep_counts       # sin's partial is evaluated in the sweep
        assert f"{key}: {et.op_counts[key]}" in et.to_text()


@pytest.mark.parametrize("g, args", [
    (lambda a, b: np.sum(a * b + np.exp(a) / b), (np.array([0.5, 1.5]), np.array([2.0, 3.0]))),
    (lambda x: np.sum(np.concatenate([x, np.tanh(x) ** 2])), (np.array([0.3, -0.4]),)),
    (lambda x, y: x ** y - np.sqrt(x) * np.arctan(y), (1.7, 0.6)),
    (lambda x: np.sum(np.cumsum(np.sinh(x), axis=0) * np.cos(x).T), (np.array([[0.2, 0.4], [0.1, 0.3]]),)),
    (lambda x, y: x, (2.0, 3.0)),       # the output is an input
])
def test_traces_agree_with_jvp_and_grad(g, args):
    argnums = tuple(range(len(args)))
    grads = dualad.grad(g, argnums=argnums)(*args)
    rev = trace(g, *args, mode="reverse")
    for a, b in zip(rev.derivative, grads):
        assert np.allclose(a, b)
    rng = np.random.default_rng(0)
    seed = tuple(rng.standard_normal(np.shape(a)) for a in args)
    fwd = trace(g, *args, mode="forward", seed=seed)
    assert np.allclose(fwd.derivative, dualad.jvp(g, args, seed)[1])
    assert np.allclose(fwd.output, g(*args))


def test_custom_rule_on_plain_arrays_is_traced_and_named_as_uncounted():
    @dualad.primitive(name="cube")
    def cube(x):
        return x ** 3
    # A rule that only works on plain arrays (np.asarray(x, dtype=float) refuses traced
    # values; without a dtype it would give an object array of traced scalars).
    cube.defjvp(lambda t, ans, x: t * 3.0 * np.asarray(x, dtype=float) ** 2)
    cube.defvjp(lambda ct, ans, x: ct * 3.0 * np.asarray(x, dtype=float) ** 2)
    g = lambda x: np.sin(cube(x))  # noqa: E731
    for mode in ("forward", "reverse"):
        et = trace(g, 0.7, mode=mode)
        d = et.derivative if mode == "forward" else et.derivative[0]
        assert np.isclose(d, np.cos(0.7 ** 3) * 3 * 0.7 ** 2)
        assert et.uncounted == {"cube"} and "not counted: the rules of cube" in et.to_text()


def test_default_forward_seed_is_the_first_unit_direction():
    x = np.array([0.3, -0.7, 1.1])
    et = trace(lambda x: np.sum(x ** 3), x, mode="forward")
    assert np.isclose(et.derivative, 3 * 0.3 ** 2)


def test_display_groups_partials_and_tangents_of_linear_operations():
    W = np.array([[1.0, 2.0], [0.5, -1.0]])
    et = trace(lambda x: np.sum(np.tanh(W @ x) * x), np.array([0.3, -0.7]), mode="forward")
    formulas = [r.formula for r in et.rows if r.section == "tangent"]
    # W @ x is one step (v_1 = W @ v_0), without reshapes to a column and back
    assert "[[1.000, 2.000], [0.500, -1.000]] @ v̇_0" in formulas
    assert "v̇_1 × (1 − v_2²)" in formulas                 # a sum as a factor is parenthesized
    assert any(fm.startswith("sum(v̇_3") for fm in formulas)  # linear: the op on the tangent


def test_seed_shape_errors():
    with pytest.raises(ValueError, match="one direction per input"):
        trace(f, 2.0, 5.0, mode="forward", seed=(1.0,))
    with pytest.raises(ValueError, match="shape"):
        trace(lambda x: np.sum(x), np.ones(3), mode="forward", seed=(np.ones(2),))
    with pytest.raises(ValueError, match="ȳ has shape"):
        trace(lambda x: x * 2, np.ones(3), mode="reverse", seed=np.ones(2))


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
    assert r"\begin{tabular}" in tex and r"\bar v_{-1}" in tex and r"\bar x_{1}" in tex
    assert "∂" not in tex and "v̄" not in tex
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
    capsys.readouterr()
    assert main(["trace", "2*pi", "--at", "x=1"]) == 2          # constant: nothing to trace
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "does not depend" in err
    assert main(["trace", "x1*x2", "--at", "x1=2", "x2=5", "--seed", "1"]) == 2
    assert main(["trace", "x1 + 10**1000", "--at", "x1=2"]) == 2   # overflow: one line
    assert main(["trace", "x1", "--at", "x1=2", "--graph", "/no/such/dir/g.png"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 3 and "/no/such/dir" in err


def test_cli_console_script_runs():
    r = subprocess.run([sys.executable, "-m", "dualad.teaching.cli", "trace", "sin(x)", "--at", "x=1"],
                       capture_output=True, text=True, check=False)
    assert r.returncode == 0 and "0.841" in r.stdout
