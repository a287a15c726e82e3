"""The README's code blocks run as written."""
import pathlib
import re

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"


def _blocks():
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_verifying_a_hand_written_rule_example_catches_the_wrong_rule(capsys):
    block = next(b for b in _blocks() if "check_rule(softplus_typo)" in b)
    exec(compile(block, "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert "softplus: ok" in out and "softplus_typo: FAILED" in out


def test_usage_example_runs():
    block = _blocks()[0]
    exec(compile(block, "README.md", "exec"), {})


def test_jacobians_and_scipy_optimize_example_runs(capsys):
    block = next(b for b in _blocks() if "jacobians.plan(scores, x)" in b)
    env = {}
    exec(compile(block, "README.md", "exec"), env)
    import numpy as np
    assert env["J"].shape == (3, 200) and env["H"].shape == (200, 200)
    assert np.array_equal(env["H"], env["H"].T)
    assert env["Js"].shape == (100, 100) and env["Js"].nnz == 298
    assert env["res"].success and np.allclose(env["res"].x, 1.0, atol=1e-6)
    assert env["sol"].success and np.abs(env["bratu"](env["sol"].x)).max() < 1e-5
    assert "Chosen:" in capsys.readouterr().out


def test_jit_example_runs(capsys):
    block = next(b for b in _blocks() if "dualad.jit(dualad.grad(loss))" in b)
    env = {}
    exec(compile(block, "README.md", "exec"), env)
    out = capsys.readouterr().out
    assert "[2]" in out and "RETRACE" in out and "def " in out


def test_scan_example_runs(capsys):
    block = next(b for b in _blocks() if "snapshots=10)" in b)
    exec(compile(block, "README.md", "exec"), {})
    from dualad import revolve
    assert capsys.readouterr().out.strip() == str(revolve.forward_steps(1000, 10))
