"""The coverage table (docs/coverage.md) cannot lie and cannot drift.

- every row gives, in forward and in reverse mode, what it claims (``ok``, ``zero``,
  ``raises``), measured by running it against central differences;
- the committed document is exactly what ``python -m dualad.verification.coverage --write
  docs/coverage.md`` writes;
- every function HIPS autograd differentiates has a row and is differentiable in
  dualad, and every function of dualad's surface has a row;
- the measurement itself catches a wrong rule and a dropped derivative.
"""
import difflib
import importlib
import warnings
from pathlib import Path

import numpy as np
import pytest

import dualad
from dualad.verification import coverage
from dualad.verification.coverage_table import ENTRIES, Entry

# Rows for functions being added, written against SciPy's signatures before they land.
# Only the claims check below skips them; they are measured and rendered like every
# other row (``pending`` in the document while the function does not exist). Empty now.
PENDING: set = set()
DOC = Path(__file__).resolve().parents[2] / "docs" / "coverage.md"
REGENERATE = "python -m dualad.verification.coverage --write docs/coverage.md"


@pytest.fixture(scope="module")
def results():
    return coverage.measure_all()


def _describe(r):
    return (f"{r.entry.name}: {r.entry.expr} w.r.t. {', '.join(r.entry.wrt)}: forward "
            f"{r.forward}, reverse {r.reverse}, claims {'/'.join(r.entry.claims)}"
            + ("".join(f"\n    {d}" for d in r.detail)))


def _gone_here(results):
    """Rows whose NumPy/SciPy function this installed version no longer has (np.row_stack:
    gone in NumPy 2.5): measured as pending, since nobody can call them here."""
    def absent(name):
        module, _, attr = name.rpartition(".")
        try:
            return not hasattr(importlib.import_module(module), attr)
        except ImportError:
            return True
    return sorted({r.entry.name for r in results if r.pending and absent(r.entry.name)})


@pytest.mark.slow   # the whole table measured (~600 rows, 5-9 s with the keyword probes)
def test_every_row_gives_what_it_claims(results):
    gone = set(_gone_here(results))
    wrong = [r for r in results if r.entry.name not in PENDING | gone
             and (r.forward, r.reverse) != r.entry.claims]
    assert not wrong, (f"{len(wrong)} rows of verification/coverage_table.py do not give "
                       f"what they claim:\n" + "\n".join(_describe(r) for r in wrong))
    landed = sorted({r.entry.name for r in results if r.entry.name in PENDING
                     and (r.forward, r.reverse) == r.entry.claims})
    if landed:
        warnings.warn(f"these PENDING rows now give what they claim; remove them from "
                      f"PENDING in {Path(__file__).name}: {', '.join(landed)}")


def test_pending_rows_are_in_the_table_not_dropped():
    assert PENDING <= {e.name for e in ENTRIES}, sorted(PENDING - {e.name for e in ENTRIES})


@pytest.mark.slow   # the whole table measured (~600 rows, 5-9 s with the keyword probes)
def test_the_committed_document_is_what_the_generator_writes(results):
    gone = _gone_here(results)
    if gone:   # the other CI jobs' NumPy has them and checks the document
        pytest.skip(f"docs/coverage.md measures {', '.join(gone)}, which NumPy "
                    f"{np.__version__} / SciPy no longer has")
    expected = coverage.render(results)
    actual = DOC.read_text(encoding="utf-8") if DOC.exists() else ""
    if actual != expected:
        diff = "".join(list(difflib.unified_diff(
            actual.splitlines(True), expected.splitlines(True), "docs/coverage.md (committed)",
            "docs/coverage.md (measured now)"))[:60])
        pytest.fail(f"docs/coverage.md is out of date; regenerate it with\n    {REGENERATE}\n"
                    f"(first lines of the difference:)\n{diff}")


def test_the_autograd_snapshot_is_autograd_s_list():
    """verification/autograd_functions.txt is what autograd itself lists (when installed:
    the bench extra has it; CI's test extra does not, and checks the snapshot below)."""
    pytest.importorskip("autograd")
    from dualad.verification.coverage_table import autograd_snapshot
    assert coverage.autograd_functions() == autograd_snapshot()


@pytest.mark.slow   # the whole table measured (~600 rows, 5-9 s with the keyword probes)
def test_every_function_autograd_differentiates_has_a_differentiable_row(results):
    from dualad.verification.coverage_table import autograd_snapshot
    theirs = autograd_snapshot()
    assert len(theirs) > 150     # the snapshot holds autograd's primitives
    rows = {}
    for r in results:
        rows.setdefault(r.entry.name, []).append(r)
    no_row = sorted(theirs - set(rows))
    not_in_dualad = sorted(
        name for name in theirs & set(rows) - PENDING - set(_gone_here(results))
        if not any({r.forward, r.reverse} <= {"ok", "zero"} for r in rows[name]))
    assert not no_row, f"functions HIPS autograd differentiates with no row: {no_row}"
    assert not not_in_dualad, (f"functions HIPS autograd differentiates that dualad does not "
                               f"(yet): {not_in_dualad}")


def test_every_function_of_dualad_has_a_row():
    missing = coverage.missing_entries()
    assert not missing, (f"public functions of dualad without a row in "
                         f"verification/coverage_table.py: {missing}")


@pytest.mark.slow   # the whole table measured (~600 rows, 5-9 s with the keyword probes)
def test_command_line_writes_the_document_and_exits_zero(results, tmp_path, capsys):
    out = tmp_path / "coverage.md"
    assert coverage.main(["--write", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == coverage.render(results)
    assert coverage.main([]) == 0
    assert "## Summary" in capsys.readouterr().out


# --- the measurement catches what it must ----------------------------------------------------
def _bad_sin(scale):
    p = dualad.primitive(np.sin)
    p.defderiv(lambda ans, x: scale * np.cos(x))
    return p


def _measure(expr, claim="ok", **extra):
    ns = coverage.namespace()
    ns.update(extra)
    return coverage.measure(Entry("numpy.probe", expr, ("x",), claim), ns)


def test_a_rule_off_by_a_tenth_of_a_percent_fails_in_both_modes():
    r = _measure("bad(x)", bad=_bad_sin(1.001))
    assert (r.forward, r.reverse) == ("FAILS", "FAILS") and not r.ok
    assert "differs from finite differences" in r.detail[0]
    assert _measure("bad(x)", bad=_bad_sin(1.0)).ok


def test_a_dropped_derivative_fails_and_a_false_claim_is_caught():
    drop = lambda x: np.sin(dualad.extend.primal_value(x)) + 0.0 * x  # noqa: E731
    r = _measure("drop(x)", drop=drop)
    assert r.forward == r.reverse == "FAILS" and "dropped" in r.detail[0]
    r = _measure("np.sign(x)")                 # claims ok, is zero by design
    assert (r.forward, r.reverse) == ("zero", "zero") and not r.ok


def test_a_value_that_is_not_scipys_fails_and_a_missing_function_is_pending():
    import dualad.scipy.linalg as dl
    off = type("module", (), {"expm": staticmethod(lambda a: 1.001 * dl.expm(a))})
    r = _measure("dl.expm(x * np.eye(3))", dl=off)
    assert r.forward == r.reverse == "FAILS" and "differs from SciPy's" in " ".join(r.detail)
    assert _measure("dl.expm(x * np.eye(3))").ok
    r = _measure("dl.no_such_function(x)")
    assert r.forward == r.reverse == "pending" and r.ok


@pytest.mark.slow   # the whole table measured (~600 rows, 5-9 s with the keyword probes)
def test_rows_record_their_primitives_and_sympy_status(results):
    by_name = {r.entry.name: r for r in results}
    assert by_name["numpy.sin"].primitives == ("sin",)
    assert by_name["numpy.sin"].sympy == "oracle"
    assert by_name["scipy.special.erfinv"].sympy == "oracle (SciPy-evaluated)"
    assert by_name["scipy.special.erfinv"].alt == "ds.erfinv(x)"
    assert by_name["numpy.fft.fft"].sympy == "—"
    assert by_name["numpy.sign"].sympy == "n/a"
    assert by_name["numpy.histogram"].forward == "raises"
