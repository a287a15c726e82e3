"""Which dualad the tests run against, and the one guard that it is this tree's.

The tests live in the tree that holds them (``ROOT``: a git checkout or an unpacked sdist;
both have ``dualad/``, ``jacobians/``, ``verification/``, ``docs/``, ``papers/`` and
``bench/``). Tests that read source files (``tests/import_graph.py``, the docs and
packaging tests) read them from ``ROOT``; the code under test is the ``dualad`` that
Python imports. Two installs are accepted:

* **editable** (``pip install -e ".[test]"`` in ROOT, the README's command): the installed
  distribution's ``direct_url.json`` says ``editable`` with ROOT as its url, and
  ``dualad``, ``dualad.jacobians`` and ``dualad.verification`` are imported from ROOT's
  ``dualad/``, ``jacobians/`` and ``verification/`` (pyproject's ``package-dir``).
* **a wheel** (``pip install dist/dualad-*.whl[test]``, not editable; CI's wheel job):
  the installed distribution is compared with ROOT: its version with pyproject's
  ``version``, and every file of its ``dualad/`` package (``.py``, ``py.typed``, the data
  files) byte for byte with the file of ROOT it is built from (``dualad/x`` from
  ``dualad/x``, ``dualad/jacobians/x`` from ``jacobians/x``, ``dualad/verification/x``
  from ``verification/x``), both ways (a file on one side only is a difference). Then
  ``dualad`` must be imported from site-packages, not from ROOT. ROOT's own ``dualad/``
  folder would shadow the installed package (pytest's ``pythonpath = ["."]`` and
  ``python -m`` put ROOT first on ``sys.path``), so in this mode ROOT is moved to the end
  of ``sys.path`` (``papers/`` stays importable from it) and ``PYTHONSAFEPATH=1`` is set
  for the interpreters the tests start, so that ``python -c``/``-m`` run with ``cwd=ROOT``
  do not put ROOT first either (Python >= 3.11; the bench scripts put their own folders on
  the path themselves).

Anything else (no dualad installed in this Python, an editable install of another
checkout, a wheel of another version or of other sources) stops the session before a
test runs, with a message saying what was found and what to run.
"""
import importlib.metadata
import json
import os
import pathlib
import sys
import tomllib
import urllib.parse
import urllib.request

import pytest
from hypothesis import settings

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _resolve(entry):
    try:
        return pathlib.Path(entry or os.getcwd()).resolve()
    except OSError:
        return None


def _pyproject():
    with open(ROOT / "pyproject.toml", "rb") as fh:
        return tomllib.load(fh)


def _installed_distribution():
    """The dualad distribution installed in this Python (not ROOT's own ``*.egg-info``,
    which an editable install or an sdist leaves at ROOT), or None."""
    path = [p for p in sys.path if _resolve(p) != ROOT]
    return next(iter(importlib.metadata.distributions(name="dualad", path=path)), None)


def _editable_root(dist):
    """The folder an editable install points at, or None for a regular install."""
    text = dist.read_text("direct_url.json")
    info = json.loads(text) if text else {}
    if not info.get("dir_info", {}).get("editable"):
        return None
    url = urllib.parse.urlparse(info.get("url", ""))
    return pathlib.Path(urllib.request.url2pathname(url.path)).resolve()


def source_of(installed_rel):
    """ROOT's file that the installed ``dualad/...`` path ``installed_rel`` is built from
    (by pyproject's ``package-dir``: the longest mapped package prefix wins)."""
    mapping = _pyproject()["tool"]["setuptools"]["package-dir"]
    parts = pathlib.PurePosixPath(installed_rel).parts
    best = max((p for p in mapping if list(parts[:len(p.split("."))]) == p.split(".")),
               key=lambda p: len(p.split(".")))
    return ROOT.joinpath(mapping[best], *parts[len(best.split(".")):])


def _package_files(top):
    """Relative paths of the files under ``top``, without bytecode caches."""
    return {p.relative_to(top).as_posix() for p in top.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"}


def wheel_differences(site_dualad):
    """The files that differ between the installed ``dualad/`` folder and ROOT's sources,
    as ``(installed path, what)``; empty when the wheel was built from this tree."""
    mapping = _pyproject()["tool"]["setuptools"]["package-dir"]
    installed = {f"dualad/{rel}" for rel in _package_files(site_dualad)}
    expected = set()
    for package, folder in mapping.items():
        prefix = package.replace(".", "/")
        expected |= {f"{prefix}/{rel}" for rel in _package_files(ROOT / folder)
                     if not any(f"{prefix}/{rel}".startswith(f"{other.replace('.', '/')}/")
                                for other in mapping if len(other) > len(package))}
    diffs = [(name, "only in the installed wheel") for name in sorted(installed - expected)]
    diffs += [(name, f"not in the wheel, only in {source_of(name).relative_to(ROOT)}")
              for name in sorted(expected - installed)]
    diffs += [(name, f"differs from {source_of(name).relative_to(ROOT)}")
              for name in sorted(installed & expected)
              if (site_dualad.parent / name).read_bytes() != source_of(name).read_bytes()]
    return diffs


def _stop(message):
    raise pytest.UsageError(f"tests/conftest.py: {message}")


def _choose_dualad():
    """Decide which dualad the session tests (see the module docstring): returns the mode,
    "editable" or "wheel", and the folder each of the three packages must come from, with
    sys.path arranged for it; or stops the session."""
    dist = _installed_distribution()
    fix = f'`pip install -e ".[test]"` in {ROOT}'
    if dist is None:
        _stop(f"dualad is not installed in this Python ({sys.executable}): run {fix}, "
              "or install a wheel built from this tree")
    editable = _editable_root(dist)
    if editable is not None:
        if editable != ROOT:
            _stop(f"this Python's dualad is an editable install of {editable}, not of {ROOT} "
                  f"(whose tests these are): run {fix}")
        return "editable", {"dualad": ROOT / "dualad", "dualad.jacobians": ROOT / "jacobians",
                            "dualad.verification": ROOT / "verification"}
    version = _pyproject()["project"]["version"]
    if dist.version != version:
        _stop(f"the installed dualad wheel is version {dist.version} "
              f"({dist.locate_file('')}), this tree is {version}: build and install a "
              f"wheel of this tree, or run {fix}")
    site_dualad = pathlib.Path(dist.locate_file("dualad")).resolve()
    diffs = wheel_differences(site_dualad)
    if diffs:
        listed = "\n  ".join(f"{name}: {what}" for name, what in diffs[:15])
        more = f"\n  ... and {len(diffs) - 15} more" if len(diffs) > 15 else ""
        _stop(f"the installed dualad wheel ({site_dualad}) was not built from {ROOT}: "
              f"{len(diffs)} files differ\n  {listed}{more}\nRebuild and reinstall it "
              f"(pip wheel --no-deps . -w dist && pip install --force-reinstall "
              f"dist/dualad-*.whl), or run {fix}")
    # ROOT's dualad/ folder must not shadow the installed package, here or in children
    # (the entries keep their spelling: pytest removes its own at the end of the session)
    sys.path[:] = ([p for p in sys.path if _resolve(p) != ROOT]
                   + [p for p in sys.path if _resolve(p) == ROOT])
    os.environ["PYTHONSAFEPATH"] = "1"
    if "dualad" in sys.modules and _resolve(sys.modules["dualad"].__file__).parent != site_dualad:
        _stop(f"dualad was imported from {sys.modules['dualad'].__file__} before "
              f"tests/conftest.py ran, not from the installed wheel ({site_dualad})")
    return "wheel", {"dualad": site_dualad, "dualad.jacobians": site_dualad / "jacobians",
                     "dualad.verification": site_dualad / "verification"}


MODE = None   # "editable" or "wheel", once pytest_configure has run


def pytest_configure(config):
    """Before any test module is imported: choose the dualad under test, import it and
    check that its three packages come from where the mode says."""
    global MODE
    MODE, expected = _choose_dualad()
    import dualad
    import dualad.jacobians
    import dualad.verification
    for mod in (dualad, dualad.jacobians, dualad.verification):
        if pathlib.Path(mod.__file__).resolve().parent != expected[mod.__name__]:
            _stop(f"{mod.__name__} comes from {mod.__file__}, not from "
                  f"{expected[mod.__name__]} (the {MODE} install): run "
                  f'`pip install -e ".[test]"` in {ROOT}')


settings.register_profile("ci", derandomize=True, max_examples=25, deadline=None,
                          print_blob=True)
settings.register_profile("long", max_examples=2000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


# Tests that cannot run against a wheel as written, each with why (and the fix, for the
# test's owner): skipped in wheel mode only, named in the run's short summary (-rs).
WHEEL_SKIPS: dict[str, str] = {}   # none today


def pytest_collection_modifyitems(config, items):
    if MODE == "wheel":
        for item in items:
            if item.nodeid in WHEEL_SKIPS:
                item.add_marker(pytest.mark.skip(
                    reason=f"against a wheel: {WHEEL_SKIPS[item.nodeid]}"))


def pytest_report_header(config):
    return f"dualad: {MODE} install, {pathlib.Path(sys.modules['dualad'].__file__).parent}"
