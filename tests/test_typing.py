"""The typed public API: user scripts of the README's kind (tests/typing/) type-check clean
under ``mypy --strict`` and ``pyright``, against the INSTALLED package layout.

``dualad.jacobians`` and ``dualad.verification`` are the repository's top-level
``jacobians/`` and ``verification/`` folders mapped by pyproject's ``package-dir``, and an
editable install's import hook is invisible to type checkers: the package is installed
once into a temporary folder and both checkers are pointed at it (MYPYPATH; pyright's
``extraPaths``). The folder is laid out as setuptools installs it, from pyproject's
``packages``, ``package-dir`` and ``package-data`` (a copy, not ``pip install --target``:
without build isolation pip needs setuptools >= 77, which a fresh venv lacks, and with it
a package index; tests/test_packaging.py builds the real wheel). Errors inside the package
are not this test's business (mypy's ``ignore_errors`` for ``dualad.*``): only what a user's
script sees of it.
"""
import json
import os
import pathlib
import runpy
import shutil
import subprocess
import sys
import tomllib

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
SCRIPTS = sorted((ROOT / "tests" / "typing").glob("*.py"))
# NumPy 2.2.0's own stubs type a ufunc of a float64 array as floating[Any] (np.exp(x),
# x ** 3, np.logaddexp): a script that says NDArray[np.float64] is then rejected for
# NumPy's types, not dualad's. 2.2.6's stubs (and every newer NumPy here) are precise; CI
# checks the scripts in its newest-NumPy jobs, and its minimum-pins job (NumPy 2.2.0) runs
# them without the checkers.
_NUMPY = tuple(int(p) for p in np.__version__.split(".")[:3] if p.isdigit())
PRECISE_STUBS = pytest.mark.skipif(
    _NUMPY < (2, 2, 6), reason=f"NumPy {np.__version__}'s stubs type ufuncs of float64 "
    f"arrays as floating[Any]; the scripts are type-checked with NumPy >= 2.2.6")
MYPY_CONFIG = """\
[mypy]
strict = True
cache_dir = {cache}

[mypy-dualad.*]
ignore_errors = True

# SciPy ships no type hints (scipy-stubs is a separate package): its names are Any
[mypy-scipy.*]
ignore_missing_imports = True
"""


def _tool(name):
    """The checker next to this interpreter (a venv's bin/), else on PATH."""
    here = pathlib.Path(sys.executable).parent / name
    return str(here) if here.exists() else shutil.which(name)


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """The package as pip installs it, in a folder of its own."""
    target = tmp_path_factory.mktemp("site")
    with open(ROOT / "pyproject.toml", "rb") as fh:
        setup = tomllib.load(fh)["tool"]["setuptools"]
    mapping, data = setup["package-dir"], setup.get("package-data", {})
    for package in setup["packages"]:
        # the source folder: the longest mapped prefix, then the rest of the dotted name
        parts = package.split(".")
        head = max((p for p in mapping if parts[:len(p.split("."))] == p.split(".")),
                   key=len, default=None)
        rest = parts[len(head.split(".")):] if head else parts
        source = ROOT.joinpath(mapping[head] if head else "", *rest)
        dest = target.joinpath(*parts)
        dest.mkdir(parents=True, exist_ok=True)
        patterns = ["*.py"] + ([data[package]] if isinstance(data.get(package), str)
                               else list(data.get(package, [])))
        for pattern in patterns:
            for path in source.glob(pattern):
                shutil.copy(path, dest / path.name)
    assert (target / "dualad" / "py.typed").exists()
    assert (target / "dualad" / "jacobians" / "__init__.py").exists()
    return target


def test_the_scripts_are_there():
    assert len(SCRIPTS) >= 3, SCRIPTS


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_the_scripts_run(script, capsys):
    """Each script is correct as well as well-typed: it runs (under 1 s each)."""
    runpy.run_path(str(script), run_name="__main__")
    assert capsys.readouterr().out


@PRECISE_STUBS
def test_mypy_strict_finds_no_error_in_the_scripts(installed, tmp_path):
    pytest.importorskip("mypy")
    config = tmp_path / "mypy.ini"
    config.write_text(MYPY_CONFIG.format(cache=tmp_path / "cache"))
    env = dict(os.environ, MYPYPATH=str(installed))
    out = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(config),
                          *map(str, SCRIPTS)], capture_output=True, text=True, env=env,
                         cwd=tmp_path)
    print(out.stdout, out.stderr)
    assert out.returncode == 0 and "Success: no issues found" in out.stdout, \
        out.stdout + out.stderr


@PRECISE_STUBS
def test_pyright_finds_no_error_in_the_scripts(installed, tmp_path):
    pyright = _tool("pyright")
    if pyright is None:
        pytest.skip("pyright is not installed (the test extra installs it)")
    # the scripts copied out of the checkout: pyright must not resolve `dualad` from it
    for script in SCRIPTS:
        shutil.copy(script, tmp_path / script.name)
    (tmp_path / "pyrightconfig.json").write_text(json.dumps({
        "include": [s.name for s in SCRIPTS], "extraPaths": [str(installed)],
        "typeCheckingMode": "standard", "pythonVersion": f"3.{sys.version_info.minor}"}))
    # (the PyPI wrapper's "a newer version exists" notice would spoil the JSON on stdout)
    env = dict(os.environ, PYRIGHT_PYTHON_IGNORE_WARNINGS="1")
    out = subprocess.run([pyright, "--pythonpath", sys.executable, "--outputjson"],
                         capture_output=True, text=True, cwd=tmp_path, env=env)
    try:
        report = json.loads(out.stdout)
    except json.JSONDecodeError:
        pytest.fail(f"pyright did not run: {out.stdout}\n{out.stderr}")
    errors = [d for d in report["generalDiagnostics"] if d["severity"] == "error"]
    text = "\n".join(f"{pathlib.Path(d['file']).name}:{d['range']['start']['line'] + 1}: "
                     f"{d['message']}" for d in errors)
    print(text)
    assert not errors, text
    assert report["summary"]["filesAnalyzed"] == len(SCRIPTS), report["summary"]
