"""``dualad tour``: the guided demo runs, shows every part of the toolkit, and needs only
the core dependencies."""
import os
import subprocess
import sys
import textwrap

from dualad.teaching.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_tour_shows_every_section(capsys):
    assert main(["tour"]) == 0
    out = capsys.readouterr().out
    # 1-2: the survey's traces, forward (Table 2) and reverse (Table 3) with accumulation.
    assert "v̇_2 = v̇_-1 × v_0 + v̇_0 × v_-1" in " ".join(out.split())
    assert "v̄_0 + v̄_2 · ∂v_2/∂v_0 = v̄_0 + v̄_2 · v_-1" in out
    assert "x̄_2" in out and "1.716" in out and "11.652" in out
    # 4: a Jacobian with the planner's explanation (R^200 -> R^3: reverse mode).
    assert "Jacobian plan for scores" in out and "Chosen: reverse" in out
    assert "Estimated cost of each alternative" in out
    # 5: a Hessian; 6: a sparse Jacobian with its coloring.
    assert "jacobians.hessian" in out and "symmetric: True" in out and "H v: True" in out
    assert "156 nonzeros" in out and "JVPs instead of 36" in out
    assert "|J_sparse - J_dense| = 0.0e+00" in out
    # 7: the rule checker passes the right rule and catches the 0.1% error.
    assert "softplus: ok" in out and "softplus_typo: FAILED" in out
    for k in range(1, 9):
        assert f"== {k}. " in out


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
    assert "== 8. " in r.stdout
    seconds = float(r.stdout.rsplit("SECONDS", 1)[1])
    assert seconds < 30, seconds     # ~0.5 s on a laptop core; generous for shared CI
