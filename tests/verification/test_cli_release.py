"""``dualad --version`` and ``python -m dualad``, run as a user runs them: in subprocesses,
from a directory outside the checkout (so the installed package answers)."""
import os
import pathlib
import shutil
import subprocess
import sys
import tomllib

import numpy
import pytest
import scipy
import sympy

import dualad

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _script():
    """The ``dualad`` console script of the interpreter running the tests."""
    here = pathlib.Path(sys.executable).parent / ("dualad.exe" if os.name == "nt" else "dualad")
    found = str(here) if here.exists() else shutil.which("dualad")
    if found is None:
        pytest.skip("the dualad console script is not installed next to this Python")
    return found


def _run(cmd, tmp_path, timeout=120):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=timeout,
                          env=env)


def _check_version_output(out):
    lines = out.stdout.splitlines()
    assert out.returncode == 0, out.stderr
    assert 1 <= len(lines) <= 2, lines
    assert lines[0] == f"dualad {dualad.__version__}"
    text = " ".join(lines)
    for name, version in (("NumPy", numpy.__version__), ("SciPy", scipy.__version__),
                          ("SymPy", sympy.__version__),
                          ("Python", ".".join(map(str, sys.version_info[:3])))):
        assert f"{name} {version}" in text, (name, text)
    assert out.stderr == ""


def test_the_version_is_the_one_pyproject_declares():
    with open(ROOT / "pyproject.toml", "rb") as fh:
        assert tomllib.load(fh)["project"]["version"] == dualad.__version__


@pytest.mark.slow   # a fresh interpreter
def test_dualad_version_prints_every_version_and_exits_0(tmp_path):
    _check_version_output(_run([_script(), "--version"], tmp_path))


@pytest.mark.slow   # a fresh interpreter
def test_python_m_dualad_version(tmp_path):
    _check_version_output(_run([sys.executable, "-m", "dualad", "--version"], tmp_path))


@pytest.mark.slow   # a fresh interpreter
def test_python_m_dualad_is_the_same_command_as_the_script(tmp_path):
    """The same subcommands, the same output, the same exit statuses."""
    args = ["trace", "log(x1) + x1*x2 - sin(x2)", "--at", "x1=2", "x2=5", "--mode", "reverse"]
    via_m = _run([sys.executable, "-m", "dualad", *args], tmp_path)
    via_script = _run([_script(), *args], tmp_path)
    assert via_m.returncode == via_script.returncode == 0, via_m.stderr + via_script.stderr
    assert via_m.stdout == via_script.stdout
    assert "11.652" in via_m.stdout
    bad = _run([sys.executable, "-m", "dualad", "--no-such-option"], tmp_path)
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines() == [
        "dualad: error: unrecognized arguments: --no-such-option"]


@pytest.mark.slow   # a fresh interpreter
def test_python_m_dualad_without_a_command_runs_the_tour(tmp_path):
    out = _run([sys.executable, "-m", "dualad"], tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("dualad tour:") and "6. Catching" in out.stdout


@pytest.mark.slow   # a fresh interpreter
def test_help_lists_the_version_option(tmp_path):
    out = _run([sys.executable, "-m", "dualad", "--help"], tmp_path)
    assert out.returncode == 0 and "--version" in out.stdout
