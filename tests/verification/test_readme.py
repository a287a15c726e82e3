"""The README's code blocks run as written: each alone, in a fresh interpreter, and the
larger ones with their results checked."""
import importlib
import importlib.util
import os
import pathlib
import re
import subprocess
import sys

import pytest
from markdown_blocks import python_blocks

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"


def _blocks():
    return [code for _, code in python_blocks(README.read_text())]


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


# --- every block alone, in a fresh interpreter --------------------------------------------

def _needs(block):
    """The optional extras a block imports, as (module, extra) pairs."""
    return [(mod, extra) for mod, extra in (("distributed", "distributed"),
                                            ("matplotlib", "plot"))
            if re.search(rf"^\s*(from|import) {mod}\b", block, flags=re.M)]


BLOCKS = _blocks()


@pytest.mark.slow   # a fresh interpreter per block
@pytest.mark.parametrize("index", range(len(BLOCKS)),
                         ids=[f"line{line}" for line, _ in python_blocks(README.read_text())])
def test_each_block_runs_alone_in_a_fresh_interpreter(index, tmp_path):
    """Copied alone into a file and run by a new Python, from an empty directory (so only
    the installed package is importable, nothing from the checkout), each block runs
    without error: it has every import and definition it uses."""
    block = BLOCKS[index]
    for module, extra in _needs(block):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"the block imports {module}: the {extra!r} extra is not installed")
    script = tmp_path / f"readme_block_{index}.py"
    script.write_text(block)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True,
                         text=True, timeout=300, env=env)
    assert out.returncode == 0, f"README block {index}:\n{block}\n{out.stderr[-3000:]}"


def test_the_fresh_interpreter_does_not_see_the_checkout(tmp_path):
    """The check above is only worth something if the checkout's folders are not on the
    path: from a temporary directory, ``jacobians`` (a top-level folder here) is not
    importable, while the installed ``dualad.jacobians`` is."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run([sys.executable, "-c",
                          "import importlib.util as u; print(u.find_spec('jacobians') is None, "
                          "u.find_spec('papers') is None, u.find_spec('dualad.jacobians') "
                          "is not None)"],
                         cwd=tmp_path, capture_output=True, text=True, env=env, timeout=60)
    assert out.stdout.split() == ["True", "True", "True"], out.stderr


def test_the_names_the_readme_gives_exist():
    """Every dotted name in backquotes that starts at dualad (or at its subpackages
    ``jacobians.``/``verification.``) resolves to a module or an attribute."""
    names = set(re.findall(r"`((?:dualad|jacobians|verification)(?:\.[A-Za-z_]\w*)+)",
                           README.read_text()))
    assert len(names) > 20
    missing = []
    for name in sorted(names):
        full = name if name.startswith("dualad") else "dualad." + name
        parts = full.split(".")
        for i in range(len(parts), 0, -1):
            try:
                obj = importlib.import_module(".".join(parts[:i]))
            except ImportError:
                continue
            break
        try:
            for attr in parts[i:]:
                obj = getattr(obj, attr)
        except AttributeError:
            missing.append(name)
    assert not missing, missing


def test_the_scipy_optimize_helpers_are_named_as_they_are():
    """``minimize_kwargs``/``least_squares_kwargs`` (there are no ``minimize`` or
    ``least_squares`` helpers in ``jacobians.optimize``)."""
    from dualad.jacobians import optimize
    text = README.read_text()
    for name in ("minimize_kwargs", "least_squares_kwargs"):
        assert f"`{name}`" in text and callable(getattr(optimize, name))
    assert not hasattr(optimize, "minimize") and not hasattr(optimize, "least_squares")
    assert "has `minimize`/`least_squares` helpers" not in text


def test_relative_links_point_to_files_that_exist():
    root = README.parent
    links = re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", README.read_text())
    assert len(links) > 10
    missing = [link for link in links if not (root / link).exists()]
    assert not missing, missing


def test_the_quick_start_commands_are_the_ones_ci_runs():
    """The two Quick start commands: install + tour, and install the test extra + pytest
    (the command .ci/run runs)."""
    text = README.read_text()
    assert ("    python3 -m venv .venv && . .venv/bin/activate && pip install -e . && "
            "dualad tour\n") in text
    assert ("    python3 -m venv .venv && . .venv/bin/activate && pip install -e \".[test]\" "
            "&& python -m pytest\n") in text
    ci = (README.parent / ".ci" / "run").read_text()
    assert 'pip install --quiet -e ".[test]"' in ci and "python -m pytest" in ci
