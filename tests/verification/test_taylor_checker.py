"""The Taylor-mode checker (dualad.verification.taylor): it runs inside check_rule, it
catches a Taylor rule that is off by a millionth at order 6, it checks the zero-derivative
primitives and float32, and the coverage page it writes is current."""
import pathlib

import numpy as np
import pytest

import dualad
from dualad.extend import REGISTRY, rule_table
from dualad.verification import check_rule
from dualad.verification.taylor import check_taylor, coverage_markdown, main

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _exp_primitive(off_at=None):
    """A user's exp with a Taylor rule of its own: the exp recurrence, off by 1e-6 at
    order ``off_at``."""
    @dualad.primitive
    def my_exp(x):
        return np.exp(x)
    my_exp.defderiv(lambda ans, x: ans)
    my_exp.sympy = lambda sp, x: np.frompyfunc(sp.exp, 1, 1)(x)

    def rule(node, k):
        u, y = node.x[0], node.y
        yk = sum(j * u[j] * y[k - j] for j in range(1, k + 1)) / k
        return yk * (1.0 + 1e-6) if k == off_at else yk
    rule_table("taylor").set(my_exp, rule)
    return my_exp


def test_a_right_taylor_rule_passes_and_one_off_by_a_millionth_fails():
    assert check_taylor(_exp_primitive(), sympy=True).ok
    report = check_taylor(_exp_primitive(off_at=6))
    assert not report.ok
    assert all("vs SymPy" in r.check for r in report.failures), str(report)
    # orders 1..3 are nested forward mode's too
    report = check_taylor(_exp_primitive(off_at=2))
    assert any("nested forward mode" in r.check for r in report.failures), str(report)


def test_check_rule_runs_the_taylor_checks_unless_told_not_to():
    rows = check_rule(REGISTRY["tanh"], order=1, vmap=False, jit=False).rows
    checks = [r.check for r in rows]
    assert any("Taylor coefficients 0..6 vs SymPy" in c for c in checks)
    assert any("Taylor coefficients 1..3 vs nested forward mode" in c for c in checks)
    assert any("float32 arguments keep float32" in c for c in checks)
    rows = check_rule(REGISTRY["tanh"], order=1, vmap=False, jit=False, taylor=False).rows
    assert not any("Taylor" in r.check for r in rows)


def test_non_elementwise_primitives_are_checked_to_order_3():
    report = check_taylor(REGISTRY["inv"])
    assert report.ok, str(report)
    assert any("0..3 vs SymPy" in r.check for r in report.rows)


def test_zero_derivative_primitives_give_constant_series():
    report = check_taylor(REGISTRY["floor"])
    assert report.ok and any("zero coefficients" in r.check for r in report.rows)


def test_the_coverage_page_is_current():
    page = (ROOT / "docs" / "taylor_rules.md").read_text()
    assert page == coverage_markdown(), ("docs/taylor_rules.md is stale: run "
                                         "python -m dualad.verification.taylor --coverage "
                                         "> docs/taylor_rules.md")


def test_coverage_counts_add_up():
    page = coverage_markdown()
    rows = [line for line in page.splitlines() if line.startswith("| `")]
    import dualad.scipy  # noqa: F401
    assert len(rows) == len(REGISTRY)
    assert "| `exp` | recurrence |" in page and "| `gamma` | fallback |" in page
    assert "| `matmul` | multilinear |" in page and "| `floor` | zero |" in page


def test_command_line_checks_named_primitives(capsys):
    assert main(["sin", "matmul"]) == 0
    assert "sin: ok" in capsys.readouterr().out


@pytest.mark.slow
def test_every_registry_primitive_with_a_jvp_passes_the_taylor_checks():
    """The sweep of tests/dualad/core/test_registry.py runs these too (check_rule's
    default); here the Taylor checks alone, every primitive, so a failure names it."""
    import dualad.scipy  # noqa: F401
    import dualad.scipy.signal  # noqa: F401
    bad = [str(r) for r in (check_taylor(REGISTRY[n]) for n in sorted(REGISTRY)) if not r.ok]
    assert not bad, "\n".join(bad)
