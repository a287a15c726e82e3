"""One installed package: dualad, with the planner and the oracles as its subpackages; and
an sdist that carries everything the tests need to run from it."""
import os
import pathlib
import subprocess
import sys
import tomllib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
FOLDERS = {"dualad": "dualad", "jacobians": "dualad.jacobians",
           "verification": "dualad.verification"}


def _config():
    with open(ROOT / "pyproject.toml", "rb") as fh:
        return tomllib.load(fh)["tool"]["setuptools"]


def test_package_list_matches_the_folders_on_disk():
    """pyproject's explicit ``packages`` names every package folder under the three
    installed trees (a new subpackage left out would be missing from the wheel)."""
    found = []
    for folder, name in FOLDERS.items():
        for root, dirs, files in os.walk(ROOT / folder):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            if "__init__.py" in files:
                rel = pathlib.Path(root).relative_to(ROOT / folder)
                found.append(".".join([name, *rel.parts]))
    assert sorted(_config()["packages"]) == sorted(found)
    assert _config()["package-dir"] == {v: k for k, v in FOLDERS.items()}


@pytest.mark.parametrize("name", ["jacobians", "verification"])
def test_top_level_import_is_refused_with_the_right_spelling(name):
    """From the checkout (whose root is on sys.path) ``import jacobians`` would load a
    second copy of the package: it raises, naming what to write instead. (Against a
    wheel, conftest sets ``PYTHONSAFEPATH``, which keeps the checkout off the path:
    this test puts it back, as a user's ``python -c`` in the checkout has it.)"""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONSAFEPATH"}
    out = subprocess.run([sys.executable, "-c", f"import {name}"], cwd=ROOT,
                         capture_output=True, text=True, env=env)
    assert out.returncode != 0
    assert f"from dualad import {name}" in out.stderr


def test_subpackages_import_under_dualad():
    out = subprocess.run([sys.executable, "-c",
                          "import dualad.jacobians, dualad.verification; "
                          "from dualad import jacobians, verification; "
                          "print(jacobians.jacobian.__module__, "
                          "verification.check_rule.__module__)"],
                         cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["dualad.jacobians.dense", "dualad.verification.rules"]


# What a build outside this tree would not see: bytecode, caches, build outputs.
_NOT_SOURCE = ("__pycache__", ".pytest_cache", ".hypothesis", "build", "dist", "_build",
               ".git", ".venv")


def tracked_files():
    """The tree's files as a fresh clone holds them: ``git ls-files`` in a checkout; in an
    unpacked sdist (no git), every file but bytecode, caches, build outputs and the
    ``*.egg-info`` setuptools writes."""
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                         text=True) if (ROOT / ".git").exists() else None
    if out is not None and out.returncode == 0 and out.stdout:
        return sorted(n for n in out.stdout.split("\0") if n and (ROOT / n).is_file())
    return sorted(p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*")
                  if p.is_file() and p.suffix != ".pyc"
                  and not any(part in _NOT_SOURCE or part.endswith(".egg-info")
                              for part in p.relative_to(ROOT).parts))


def copy_of_the_tree(dest):
    """The tracked files copied to ``dest`` (a build there sees no stray local file)."""
    for name in tracked_files():
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        (dest / name).write_bytes((ROOT / name).read_bytes())
    return dest


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """The wheel ``pip wheel`` builds from the tracked files (``git ls-files``: what a
    fresh clone holds), with pip's verbose log, which includes setuptools' own output."""
    tmp_path = tmp_path_factory.mktemp("wheel")
    src = copy_of_the_tree(tmp_path / "src")
    out = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-v", "-w",
                          str(tmp_path / "wheel"), str(src)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    import zipfile
    (path,) = (tmp_path / "wheel").glob("dualad-*.whl")
    with zipfile.ZipFile(path) as zf:
        names = zf.namelist()
        (meta,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        metadata = zf.read(meta).decode()
    return {"names": names, "metadata": metadata, "log": out.stdout + out.stderr}


@pytest.mark.slow   # pip builds the wheel
def test_the_wheel_holds_exactly_one_top_level_package(wheel):
    """``pip install .`` puts one package into site-packages: the wheel built from the
    tracked files has only ``dualad/`` (with the planner, the oracles and their data
    file under it) and its ``.dist-info``; papers/, tests/ and bench/ stay out."""
    names = wheel["names"]
    tops = {n.split("/")[0] for n in names}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"dualad"}
    for must in ("dualad/jacobians/__init__.py", "dualad/verification/__init__.py",
                 "dualad/verification/autograd_functions.txt", "dualad/ops/core/elementwise.py",
                 "dualad/teaching/cli.py", "dualad/teaching/tour.py", "dualad/__main__.py"):
        assert must in names, must
    assert not any(n.startswith(("papers", "tests", "bench")) for n in names)


@pytest.mark.slow   # pip builds the wheel
def test_the_wheel_ships_the_license_and_the_typing_marker(wheel):
    """PEP 639: the LICENSE file under the dist-info's ``licenses/`` and an SPDX
    ``License-Expression`` (no license classifier beside it, which PEP 639 forbids);
    PEP 561: ``dualad/py.typed``, so type checkers read the package's annotations."""
    names = wheel["names"]
    assert "dualad/py.typed" in names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names), names[-8:]
    meta = wheel["metadata"].splitlines()
    assert "License-Expression: MIT" in meta
    assert "License-File: LICENSE" in meta
    assert not any(line.startswith("Classifier: License ::") for line in meta)
    assert "Classifier: Typing :: Typed" in meta
    assert "Classifier: Programming Language :: Python :: 3.11" in meta
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")


@pytest.mark.slow   # pip builds the wheel
def test_the_build_prints_no_deprecation_warnings(wheel):
    """setuptools warned three times about ``license = {text = ...}``; the verbose
    build log (setuptools' own output included) now has no deprecation warning."""
    log = wheel["log"]
    assert "running bdist_wheel" in log     # the backend's own output is in the log
    bad = [line for line in log.splitlines() if "deprecat" in line.lower()]
    assert not bad, "\n".join(bad[:10])


@pytest.fixture(scope="module")
def sdist(tmp_path_factory):
    """The names in the sdist setuptools builds from the tracked files (the project's
    backend, called directly in a fresh interpreter: about 2 s; ``python -m build``
    would first make an isolated environment), without the ``dualad-0.1.0/`` prefix."""
    import tarfile
    tmp_path = tmp_path_factory.mktemp("sdist")
    src = copy_of_the_tree(tmp_path / "src")
    out = subprocess.run([sys.executable, "-c",
                          "import sys; from setuptools.build_meta import build_sdist; "
                          "print(build_sdist(sys.argv[1]))", str(tmp_path / "dist")],
                         cwd=src, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    path = tmp_path / "dist" / out.stdout.split()[-1]
    with tarfile.open(path) as tf:
        names = [m.name for m in tf.getmembers() if m.isfile()]
    prefix = path.name.removesuffix(".tar.gz") + "/"
    assert all(n.startswith(prefix) for n in names), names[:5]
    return {n.removeprefix(prefix) for n in names}


def test_the_sdist_carries_the_tests_and_the_docs(sdist):
    """An unpacked sdist is a tree the tests run from (tests/conftest.py): it holds
    conftest.py, every test file with its helpers and data, the docs, the papers and the
    bench code the tests import, the README, CHANGELOG and LICENSE (MANIFEST.in)."""
    tests = [n for n in tracked_files() if n.startswith("tests/")]
    must = (["tests/conftest.py", "tests/import_graph.py", "README.md", "CHANGELOG.md",
             "LICENSE", "pyproject.toml", "MANIFEST.in", ".ci/run"]
            + [n for n in tests if pathlib.PurePosixPath(n).name.startswith("test_")]
            + [n for n in tracked_files() if n.startswith("docs/") and n.endswith(".md")])
    assert len(tests) > 100
    missing = [n for n in must if n not in sdist]
    assert not missing, missing


def test_the_sdist_holds_every_tracked_file_and_no_bytecode(sdist):
    """Every file a fresh clone holds is in the sdist (.gitignore aside), so the tests
    find what they read; no bytecode or cache rides along."""
    missing = [n for n in tracked_files() if n not in sdist and n != ".gitignore"]
    assert not missing, missing
    assert not [n for n in sdist if "__pycache__" in n or n.endswith((".pyc", ".pyo"))]
    for name in ("dualad/__init__.py", "jacobians/__init__.py", "verification/__init__.py",
                 "verification/autograd_functions.txt", "dualad/py.typed", "PKG-INFO"):
        assert name in sdist, name


def test_a_child_interpreter_started_in_the_tree_imports_the_sessions_dualad():
    """Against an editable install or an installed wheel (tests/conftest.py), a ``python
    -c`` started in the tree, as several tests start one, imports the dualad this session
    tests, not the tree's dualad/ folder shadowing an installed wheel."""
    import dualad
    out = subprocess.run([sys.executable, "-c", "import dualad, dualad.jacobians; "
                          "print(dualad.__file__); print(dualad.jacobians.__file__)"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == [dualad.__file__, dualad.jacobians.__file__]


def test_the_wheel_guard_names_each_file_that_differs(tmp_path):
    """conftest's comparison of an installed ``dualad/`` with the tree: a copy laid out as
    pip installs it matches; an edited, an added and a removed file are each named."""
    import conftest
    site = tmp_path / "site"
    for package, folder in _config()["package-dir"].items():
        for path in (ROOT / folder).rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts:
                dest = site.joinpath(*package.split("."), path.relative_to(ROOT / folder))
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_bytes(path.read_bytes())
    assert conftest.wheel_differences(site / "dualad") == []
    (site / "dualad" / "jacobians" / "dense.py").write_text("# stale\n")
    (site / "dualad" / "gone_from_the_tree.py").write_text("")
    (site / "dualad" / "verification" / "__init__.py").unlink()
    assert conftest.wheel_differences(site / "dualad") == [
        ("dualad/gone_from_the_tree.py", "only in the installed wheel"),
        ("dualad/verification/__init__.py",
         "not in the wheel, only in verification/__init__.py"),
        ("dualad/jacobians/dense.py", "differs from jacobians/dense.py")]
