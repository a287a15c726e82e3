"""Every reproduction in papers/ runs and matches its published numbers."""
import importlib

import pytest

PAPERS = ["papers.baydin2018_survey", "papers.griewank2008",
          "papers.pearlmutter1994"]


@pytest.mark.parametrize("module", PAPERS)
def test_reproduction_matches(module, capsys):
    rc = importlib.import_module(module).main()
    out = capsys.readouterr().out
    assert "MISMATCH" not in out
    assert rc == 0


def test_report_detects_a_mismatch(capsys):
    from papers._compare import Report
    r = Report("t")
    r.check("a", 1.0, 1.0004)
    r.check("b", 1.716, 1.7)
    assert r.finish() == 1
    assert "MISMATCH" in capsys.readouterr().out
