"""bench/charts.py draws a results file of bench/run.py (bench/_record.py) as an SVG: one
series per measured peer, bars from 1 to each peer's ratio to the plain function on a log
scale, labelled axes, the peers measured and missing named, the same bytes twice."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from types import SimpleNamespace

import pytest

pytest.importorskip("matplotlib")

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench")
sys.path.insert(0, BENCH)

import _record  # noqa: E402
import charts  # noqa: E402

# f takes 1 ms on both rows; the peers' medians make ratios of 10, 100, 0.1, 1000, 2.
FIXTURE = {
    "format": 1, "machine": "fixture machine", "rounds": 3, "quick": True,
    "when": "2026-11-30 12:00 UTC", "measured": ["dualad", "dualad.jit", "jax"],
    "missing": ["torch"], "versions": {},
    "rows": [
        {"workload": "logreg", "what": "", "baseline": "f", "f": {"median": 1e-3, "spread": 1},
         "peers": {"dualad": {"median": 1e-2}, "dualad.jit": {"median": 1e-1},
                   "jax": {"median": 1e-4}}},
        {"workload": "hvp", "what": "", "baseline": "dualad gradient",
         "f": {"median": 1e-3, "spread": 1},
         "peers": {"dualad": {"median": 1.0}, "dualad.jit": {"median": 2e-3},
                   "jax": {"problem": "ERROR RuntimeError: boom"}}},
    ]}


def _bars(svg):
    """``{(peer, workload): (top, bottom)}``: each bar's vertical extent in SVG units."""
    out = {}
    for peer, workload, d in re.findall(r'<g id="bar:([^:"]+):([^"]+)">\s*<path d="([^"]+)"',
                                        svg):
        ys = [float(y) for y in re.findall(r"[ML] [-\d.]+ ([-\d.]+)", d)]
        out[peer, workload] = (min(ys), max(ys))
    return out


@pytest.fixture
def drawn(tmp_path):
    results = tmp_path / "run.json"
    results.write_text(json.dumps(FIXTURE))
    out = tmp_path / "charts"
    done = subprocess.run([sys.executable, os.path.join(BENCH, "charts.py"), str(results),
                           "--out", str(out)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    path = out / "run.svg"
    return path, path.read_text()


def test_one_series_per_measured_peer_and_no_bar_where_a_peer_raised(drawn):
    _, svg = drawn
    bars = _bars(svg)
    assert set(bars) == {("dualad", "logreg"), ("dualad.jit", "logreg"), ("jax", "logreg"),
                         ("dualad", "hvp*"), ("dualad.jit", "hvp*")}
    for peer in ("dualad", "dualad.jit", "jax"):     # one legend entry per series
        assert svg.count(f">{peer}</text>") == 1, peer
    assert ">torch</text>" not in svg and "bar:torch" not in svg
    # a series keeps its color on every row
    fills = {}
    for peer, d in re.findall(r'<g id="bar:([^:"]+):[^"]+">\s*<path [^>]*style="fill: (#\w+)', svg):
        fills.setdefault(peer, set()).add(d)
    assert {p: len(c) for p, c in fills.items()} == {"dualad": 1, "dualad.jit": 1, "jax": 1}
    assert len(set().union(*fills.values())) == 3


def test_axes_labels_and_the_peers_named_in_the_title(drawn):
    _, svg = drawn
    assert "time per call / plain function&#39;s (log scale)" in svg or \
        "time per call / plain function's (log scale)" in svg
    assert "workload (* hvp: ratio to one dualad gradient)" in svg
    assert ">logreg</text>" in svg and ">hvp*</text>" in svg
    assert "measured: dualad, dualad.jit, jax; not installed: torch" in svg
    assert "fixture machine; 2026-11-30 12:00 UTC; --quick, median of 3 rounds" in svg


def test_bars_run_from_one_on_a_log_scale(drawn):
    """A log axis: the bar of ratio 100 is twice as long as that of 10 and as long as that
    of 0.01 would be; bars of ratios above 1 go up from the line at 1, below 1 down."""
    _, svg = drawn
    bars = _bars(svg)
    length = {k: bottom - top for k, (top, bottom) in bars.items()}
    one = bars["dualad", "logreg"][1]               # ratio 10: its bottom is at 1
    assert bars["dualad.jit", "logreg"][1] == pytest.approx(one, abs=0.01)
    assert bars["jax", "logreg"][0] == pytest.approx(one, abs=0.01)   # 0.1: hangs from 1
    ten = length["dualad", "logreg"]
    assert length["dualad.jit", "logreg"] == pytest.approx(2 * ten, rel=1e-3)
    assert length["jax", "logreg"] == pytest.approx(ten, rel=1e-3)
    assert length["dualad", "hvp*"] == pytest.approx(3 * ten, rel=1e-3)
    assert length["dualad.jit", "hvp*"] == pytest.approx(ten * 0.30103, rel=1e-3)


def test_the_same_results_draw_the_same_bytes(drawn, tmp_path):
    path, svg = drawn
    again = charts.draw(FIXTURE, str(tmp_path / "again.svg"))
    assert open(again).read() == svg
    assert "<dc:date>" not in svg


def test_a_missing_results_file_says_to_run_the_benchmarks_first(tmp_path):
    with pytest.raises(SystemExit, match="run python bench/run.py first"):
        charts.main([str(tmp_path / "none.json"), "--out", str(tmp_path)])


def test_a_markdown_table_of_run_py_reads_as_results():
    text = "\n".join([
        "before", "After (full run):", "",
        "| workload | f | dualad | jax | torch | first call: jax.jit |",
        "|---|---|---|---|---|---|",
        "| logreg | 2.72 ms [1.54] | 5.44 ms (2.00x) [1.34] | 27.2 us (0.01x) [2.17] | - | 364.24 ms |",
        "| hvp | 1.00 s [1.1] | 1.50 s (1.50x) [1.1] | error | - | - |",
        "", "| workload | f | dualad |", "|---|---|---|", "| x | 1 s | 9 s |"])
    doc = charts.from_markdown(text, "After (full run", "T.md")
    assert doc["measured"] == ["dualad", "jax"] and doc["missing"] == ["torch"]
    assert charts.ratios(doc) == [("logreg", {"dualad": pytest.approx(2.0),
                                              "jax": pytest.approx(0.01)}),
                                  ("hvp*", {"dualad": pytest.approx(1.5)})]
    with pytest.raises(SystemExit, match="no line of T.md holds 'nowhere'"):
        charts.from_markdown(text, "nowhere", "T.md")


def test_record_writes_what_charts_reads(tmp_path):
    """bench/run.py's rows through bench/_record.py: times, first calls, problems, and
    the peers that were not installed."""
    t = SimpleNamespace
    wl = t(name="jacobian", what="J")
    rows = [(wl, {"f": t(median=1e-3, spread=1.1, cpu_per_wall=1.0),
                  "dualad": t(median=4e-3, spread=1.2, cpu_per_wall=0.9),
                  "dualad.jit": t(median=2e-3, spread=1.3, cpu_per_wall=1.0)},
             {"jax": "ERROR ImportError: x"}, {"dualad.jit": 0.5})]
    path = _record.record(str(tmp_path / "r" / "latest.json"), rows,
                          {"dualad": True, "dualad.jit": True, "jax": True, "torch": False},
                          {"dualad": "0.1"}, "m", 5, True)
    doc = json.load(open(path))
    assert doc["measured"] == ["dualad", "dualad.jit", "jax"] and doc["missing"] == ["torch"]
    peers = doc["rows"][0]["peers"]
    assert peers["dualad.jit"] == {"median": 2e-3, "spread": 1.3, "cpu_per_wall": 1.0,
                                   "first_call": 0.5}
    assert peers["jax"] == {"problem": "ERROR ImportError: x"}
    assert charts.ratios(doc) == [("jacobian", {"dualad": pytest.approx(4.0),
                                                "dualad.jit": pytest.approx(2.0)})]


ROOT = os.path.dirname(BENCH)
COMMITTED = [  # (chart, how BENCHMARKS.md says it is drawn)
    ("latest.svg", lambda: json.load(open(os.path.join(BENCH, "results", "latest.json")))),
    ("issue32.svg", lambda: charts.from_markdown(
        open(os.path.join(ROOT, "BENCHMARKS.md"), encoding="utf-8").read(),
        "After (full run, 00:14-00:27 UTC", "BENCHMARKS.md"))]


@pytest.mark.parametrize("name, source", COMMITTED, ids=[c[0] for c in COMMITTED])
def test_the_committed_charts_are_what_their_sources_draw(name, source, tmp_path):
    """The same bars and title as drawing the committed source again (bytes may differ
    with matplotlib's version), and BENCHMARKS.md shows the chart."""
    committed = open(os.path.join(ROOT, "docs", "_static", "bench", name)).read()
    again = open(charts.draw(source(), str(tmp_path / name))).read()
    assert sorted(_bars(committed)) == sorted(_bars(again)) and _bars(again)
    title = re.findall(r">(measured: [^<]*)</text>", again)
    assert title and title == re.findall(r">(measured: [^<]*)</text>", committed)
    assert f"](docs/_static/bench/{name})" in open(os.path.join(ROOT, "BENCHMARKS.md")).read()
