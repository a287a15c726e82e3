"""``dualad tour``: the guided demo runs, says one thing per section with a computed
example, fits a terminal (79 columns, about a screenful per two sections), points to
pages and commands that exist, and needs only the core dependencies."""
import io
import os
import re
import shlex
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from dualad.teaching import tour as tour_module
from dualad.teaching.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def text():
    buf = io.StringIO()
    assert tour_module.tour(file=buf) == 0
    return buf.getvalue()


def test_the_command_prints_the_tour(capsys, text):
    assert main(["tour"]) == 0
    out = capsys.readouterr().out
    # The planner's cost ratio is a measured estimate; everything else is the same.
    def strip(s):
        return re.sub(r"is \d+\.\dx lower", "is _x lower", s)
    assert strip(out) == strip(text)


def test_every_line_fits_79_columns_and_the_tour_is_short(text):
    lines = text.splitlines()
    assert 40 <= len(lines) <= 60, len(lines)
    widest = max(lines, key=len)
    assert len(widest) <= 79, widest
    assert all(line == line.rstrip() for line in lines)


def test_six_numbered_sections_each_ending_with_where_to_read_more(text):
    sections = re.split(r"\n(?=\d\. )", text.strip())[1:]
    assert [s[:2] for s in sections] == ["1.", "2.", "3.", "4.", "5.", "6."]
    for section in sections:
        body = section.strip().splitlines()
        more = [i for i, line in enumerate(body) if line.lstrip().startswith("More:")]
        assert more, section
        assert len(body) <= 12, section           # one idea, a few lines


def test_the_results_are_right(text):
    """Against closed forms, not against dualad: f = ln x1 + x1 x2 - sin x2 at (2, 5)."""
    x1, x2 = 2.0, 5.0
    f = np.log(x1) + x1 * x2 - np.sin(x2)
    d1, d2 = 1 / x1 + x2, x1 - np.cos(x2)
    assert f"f(x) = {f:.3f},  J v = {d1:.3f}" in text          # 11.652, 5.500
    assert f"[{d1:.3f}, {d2:.3f}]" in text                      # 5.500, 1.716
    # F: R^200 -> R^3 is wide: reverse; the tall one forward.
    assert "shape (3, 200)" in text and "Planner: reverse." in text
    assert "gets forward for the same reason" in text
    # Rosenbrock's Hessian at (1, 1, 1): [[802, -400, 0], [-400, 1002, -400], [0, -400, 200]].
    rows = re.findall(r"\[+\s*([-\d. ]+)\]", text.split("4. Hessians")[1].split("Exactly")[0])
    H = np.array([[float(v) for v in r.split()] for r in rows])
    assert np.array_equal(H, [[802, -400, 0], [-400, 1002, -400], [0, -400, 200]])
    assert "Exactly symmetric: True" in text and "(equal here: True)" in text
    # A tridiagonal 100 x 100 pattern: 3 * 100 - 2 nonzeros, 3 colors (optimal on a band).
    assert "298 nonzeros of 100 x 100" in text and "3 colors" in text
    assert "[0 1 2 0 1 2 0 1 2]" in text and "dense Jacobian: True" in text
    # The checker passes the right rule and catches the 0.01% typo.
    assert re.search(r"softplus: ok \(\d+ checks\)", text)
    assert re.search(r"\d+ of \d+ checks FAILED", text)


def test_the_places_to_read_more_exist(text):
    """Every docs page named exists, and the shell commands shown run."""
    for page in set(re.findall(r"docs/[a-z_]+\.md", text)):
        assert os.path.exists(os.path.join(ROOT, page)), page
    assert os.path.exists(os.path.join(ROOT, "README.md"))
    (command,) = re.findall(r"^\s+(dualad trace .*)$", text, flags=re.M)
    args = shlex.split(command)[1:]
    assert main(args) == 0
    assert main(args + ["--mode", "reverse"]) == 0


def test_tour_runs_without_the_test_extras():
    """A fresh install has no matplotlib, pytest or hypothesis: the tour must not import
    them (they are made unimportable here) and must finish in a few seconds."""
    code = textwrap.dedent("""
        import sys, time
        class Block:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in ("matplotlib", "pytest", "hypothesis"):
                    raise ImportError(f"{name} is not installed (blocked by the test)")
        sys.meta_path.insert(0, Block())
        for m in [m for m in sys.modules if m.split(".")[0] in ("matplotlib", "pytest",
                                                                 "hypothesis")]:
            del sys.modules[m]
        t0 = time.perf_counter()
        from dualad.teaching.cli import main
        rc = main([])          # no command: the tour
        print("SECONDS", time.perf_counter() - t0)
        sys.exit(rc)
    """)
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                       check=False)
    assert r.returncode == 0, r.stderr
    assert "6. Catching a wrong hand-written derivative" in r.stdout
    seconds = float(r.stdout.rsplit("SECONDS", 1)[1])
    assert seconds < 30, seconds     # ~2 s on a loaded 2-core VM; generous for shared CI
