"""The documentation site's pages: their examples run, and every page is reachable.

Each docs/*.md page's ```python blocks (and ```{doctest} blocks, checked as doctests) run
in order in ONE fresh interpreter per page, with the repository root as the working
directory, so a page's examples cannot rot and cannot lean on another page's state.
A page is skipped only for a reason listed in SKIP (an optional dependency it needs).
The Sphinx build itself (``sphinx -W``, the doctest builder) runs in CI's docs job.
"""
import ast
import importlib.util
import json
import os
import pathlib
import re
import subprocess
import sys

import pytest
from markdown_blocks import code_blocks, fences

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = sorted(p.name for p in DOCS.glob("*.md"))

# page -> (module it needs, why): the page runs when the module is importable.
NEEDS = {
    "distributed.md": ("distributed", "starts a Dask LocalCluster (the distributed extra)"),
    "array_api.md": ("sklearn", "drives scikit-learn estimators (the test extra)"),
}
# page -> environment its blocks run with, as the page tells its readers to.
ENV = {
    "array_api.md": {"SCIPY_ARRAY_API": "1"},   # SciPy's array-API dispatch, the page's topic
}


# Runs in the page's fresh interpreter: the blocks in order in one namespace; a python block
# is executed, a doctest block is checked (the flags the Sphinx doctest builder uses).
_DRIVER = r'''
import doctest as _doctest, json as _json, sys as _sys, traceback as _traceback
ns = globals()   # the blocks run as a script's top level (__main__), e.g. for process pools
for _i, (_kind, _line, _code) in enumerate(_json.loads(_sys.stdin.read())):
    _where = f"{_sys.argv[1]}, block {_i + 1} (line {_line})"
    if _kind == "python":
        try:
            exec(compile(_code, _where, "exec"), ns)
        except BaseException:
            _traceback.print_exc()
            print(f"FAILED: {_where}", file=_sys.stderr)
            _sys.exit(1)
    else:   # the globals of Sphinx's doctest builder (docs/conf.py: doctest_global_setup)
        ns.setdefault("np", __import__("numpy"))
        ns.setdefault("dualad", __import__("dualad"))
        _test = _doctest.DocTestParser().get_doctest(_code, ns, _where, _where, _line)
        _runner = _doctest.DocTestRunner(
            optionflags=_doctest.ELLIPSIS | _doctest.NORMALIZE_WHITESPACE)
        _runner.run(_test, out=_sys.stderr.write, clear_globs=False)
        if _runner.failures:
            print(f"FAILED: {_where}", file=_sys.stderr)
            _sys.exit(1)
'''


def test_the_fence_parser_finds_blocks():
    text = ("# t\n\n```python\nx = 1\n```\n\ntext\n\n```{doctest}\n>>> x + 1\n2\n```\n"
            "```bash\nls\n```\n")
    assert code_blocks(text) == [("python", 4, "x = 1"), ("doctest", 10, ">>> x + 1\n2")]


# Pages without Python blocks (prose, tables, shell commands) have nothing to run.
PAGES_WITH_CODE = [page for page in PAGES if code_blocks((DOCS / page).read_text())]


def test_most_pages_have_examples():
    assert len(PAGES_WITH_CODE) >= len(PAGES) - 10, sorted(set(PAGES) - set(PAGES_WITH_CODE))


@pytest.mark.slow   # a fresh interpreter per page
@pytest.mark.parametrize("page", PAGES_WITH_CODE)
def test_page_examples_run(page):
    blocks = code_blocks((DOCS / page).read_text())
    for kind, line, code in blocks:
        if kind == "python":
            ast.parse(code)   # a syntax error names the block before anything runs
    if page in NEEDS:
        module, why = NEEDS[page]
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{page} {why}; {module} is not installed")
    env = {**os.environ, **ENV.get(page, {})}
    if page not in ENV:
        env.pop("SCIPY_ARRAY_API", None)
    proc = subprocess.run([sys.executable, "-c", _DRIVER, page], input=json.dumps(blocks),
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)
    assert proc.returncode == 0, f"docs/{page}: an example fails\n{proc.stderr[-4000:]}"


def _toctree_entries(text):
    entries = []
    for info, _, body in fences(text):
        if info.startswith("{toctree}"):
            entries += [l.strip() for l in body.splitlines()
                        if l.strip() and not l.strip().startswith(":")]
    return entries


def test_every_page_is_in_a_toctree():
    listed = {"index"}
    for page in DOCS.rglob("*.md"):
        if "_build" in page.parts:
            continue
        for entry in _toctree_entries(page.read_text()):
            listed.add(str((page.parent / entry).relative_to(DOCS)) if "/" in entry or
                       page.parent != DOCS else entry)
    missing = [p for p in PAGES if p[:-3] not in listed]
    assert not missing, f"docs pages in no toctree (add them to one in docs/index.md or a guide page): {missing}"


def test_the_api_reference_lists_the_public_modules():
    sys.path.insert(0, str(ROOT / "tests"))
    try:
        from test_public_api import PUBLIC
    finally:
        sys.path.pop(0)
    text = (DOCS / "api" / "index.md").read_text()
    listed = re.findall(r"^generated/([\w.]+)\s*$", text, flags=re.M)
    assert sorted(listed) == sorted(PUBLIC)
