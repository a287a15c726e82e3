"""bench/sparse_corpus.py: on every matrix of the corpus (the repository's rows; the mirror
rows are the script's, not the tests'), each coloring is valid, never below its lower bound,
and never above a published or constructed count unless ``LOSSES`` notes why; the
constructions are valid colorings; docs/sparse_corpus.md shows what the script prints."""
from __future__ import annotations

import os
import pathlib
import sys

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from dualad import jacobians
from dualad.jacobians.coloring import is_column_coloring

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

import sparse_corpus as sc  # noqa: E402

LOCAL = [e for e in sc.corpus() if not e.mirror]
# Most of the ~10 s the whole corpus takes: the star colorings of the two 5,000-row bands,
# the block arrow and the 27-point stencil. The quick subset leaves them out.
HEAVY = {"banded-k5-5000", "banded-k10-5000", "block-arrow-50x8+6", "stencil-3d-27pt-10^3"}
PAGE = ROOT / "docs" / "sparse_corpus.md"
_MEASURED = {}


def _measure(which):
    if which not in _MEASURED:
        entries = LOCAL if which == "all" else [e for e in LOCAL if e.name not in HEAVY]
        measured, skipped = sc.run(entries)
        assert not skipped, skipped
        _MEASURED[which] = {row.entry.name: row for row in measured}
    return _MEASURED[which]


@pytest.fixture(scope="module", params=["quick", pytest.param("all", marks=pytest.mark.slow)])
def rows(request):
    """The corpus measured once: the quick subset, or (slow) every repository row."""
    return _measure(request.param)


def _cells(rows):
    return [(name, c, cell) for name, row in rows.items() for c, cell in row.cells.items()]


def test_every_coloring_is_valid(rows):
    checked = [(name, c) for name, c, cell in _cells(rows) if sc.COLUMNS[c].valid is not None]
    assert len(checked) >= 2 * len(rows)
    bad = [(name, c) for name, c, cell in _cells(rows)
           if sc.COLUMNS[c].valid is not None and not cell.valid]
    assert not bad


def test_no_count_is_below_its_lower_bound(rows):
    below = [(name, c, cell.ncolors, cell.bound) for name, c, cell in _cells(rows)
             if cell.bound is not None and cell.ncolors < cell.bound]
    assert not below


def test_the_bounds_are_the_ones_coloring_py_reports(rows):
    """The column and row bounds computed in the script (ρ per row, per column) are the
    ``lower_bound`` the colorings report; the star bound is at least coloring.py's."""
    for name in ("random-300x200-0.02", "stencil-3d-7pt-14^3", "colpack-jac_pat"):
        p = next(e for e in LOCAL if e.name == name).build()
        assert rows[name].cells["column"].bound == jacobians.column_coloring(p).lower_bound
        assert rows[name].cells["row"].bound == jacobians.row_coloring(p).lower_bound
    p = next(e for e in LOCAL if e.name == "what-fig-6.1").build()
    assert rows["what-fig-6.1"].cells["star"].bound >= jacobians.star_coloring(p).lower_bound


def test_no_count_is_above_an_anchor_without_a_note(rows):
    """A loss against a published or constructed count fails unless ``LOSSES`` notes it; a
    note whose loss has gone fails too (the data must say what is true)."""
    unnoted, stale, compared = [], [], 0
    for name, anchors in sc.ANCHORS.items():
        for anchor in anchors:
            if name not in rows or anchor.coloring not in rows[name].cells:
                continue
            compared += 1
            lost = rows[name].cells[anchor.coloring].ncolors > anchor.ncolors
            noted = (name, anchor.coloring) in sc.LOSSES
            if lost and not noted:
                unnoted.append((name, anchor.coloring))
            if noted and not lost:
                stale.append((name, anchor.coloring))
    assert compared >= 6
    assert not unnoted, f"losses without a note in sparse_corpus.LOSSES: {unnoted}"
    assert not stale, f"notes in sparse_corpus.LOSSES for counts no longer lost: {stale}"


def test_a_loss_is_reported_as_one():
    """The verdict the tests and the page use does flag a count above its anchor."""
    entry = sc.Entry("made-up", "test", lambda: None)
    row = sc.Row(entry, (2, 2), 2, False, {"column": sc.Cell(6, 5, "natural", True, 0.0)})
    assert sc.verdict(row, sc.Anchor("column", 5, "test")) == "loss (+1)"
    assert sc.verdict(row, sc.Anchor("column", 6, "test")) == "equal"
    assert sc.verdict(row, sc.Anchor("column", 7, "test")) == "fewer"
    assert sc.verdict(row, sc.Anchor("star", 7, "test")) == "pending"


def _constructed(kind):
    return [(name, a) for name, anchors in sc.ANCHORS.items() for a in anchors
            if a.colors is not None and (a.coloring == "bicoloring") == (kind == "bicoloring")]


def test_constructed_anchors_are_optimal_colorings_of_their_count():
    constructed = _constructed("one-sided")
    assert len(constructed) == 4
    for name, anchor in constructed:
        p = next(e for e in LOCAL if e.name == name).build()
        target = p if anchor.coloring == "column" else p.T.tocsr()
        colors = anchor.colors(target)
        assert is_column_coloring(target, colors), (name, anchor.coloring)
        assert int(colors.max()) + 1 == anchor.ncolors
        # ... and optimal: it meets the bound ρ (the most nonzeros in one row)
        assert anchor.ncolors == int(np.diff(target.indptr).max())


def test_constructed_bicolorings_recover_every_entry_with_their_count():
    constructed = _constructed("bicoloring")
    assert {name for name, _ in constructed} == {"arrowhead-1000", "bordered-10x20"}
    for name, anchor in constructed:
        p = next(e for e in LOCAL if e.name == name).build()
        row_colors, column_colors = anchor.colors(p)
        assert sc.is_direct_bicoloring(p, row_colors, column_colors), name
        used = len(set(row_colors[row_colors >= 0])) + len(set(column_colors[column_colors >= 0]))
        assert used == anchor.ncolors, name
        # one forward color fewer (the dense column merged with the rest) loses entries
        merged = np.where(column_colors >= 0, 0, -1)
        assert not sc.is_direct_bicoloring(p, row_colors, merged), name


def test_direct_bicoloring_check_on_small_patterns():
    anti = sc.dense_pattern(sc.ANTI_DIAGONAL)
    assert sc.is_direct_bicoloring(anti, np.full(4, -1), np.zeros(4, int))
    triangle = sc.dense_pattern(sc.TRIANGLE)
    assert not sc.is_direct_bicoloring(triangle, np.full(3, -1), np.array([0, 1, 1]))
    assert sc.is_direct_bicoloring(triangle, np.full(3, -1), np.array([0, 1, 2]))
    # all neutral: nothing is read
    assert not sc.is_direct_bicoloring(anti, np.full(4, -1), np.full(4, -1))


def test_the_smallest_period_is_the_colorings_own_candidate(rows):
    """docs/sparse_corpus.md: coloring.py tries v mod q (the smallest valid q from ρ up), which
    reaches 5 (optimal) on the scattered diags and 9 on the 3-D 7-point stencil; no smaller
    period beats the table's column count anywhere."""
    for name, row in rows.items():
        p = next(e for e in LOCAL if e.name == name).build()
        assert sc.smallest_period(p, row.cells["column"].ncolors) is None, name
    won = {name: row.cells["column"].ncolors for name, row in rows.items()
           if row.cells["column"].method == "periodic"}
    assert won.get("diags-scattered-2000") == 5
    if "stencil-3d-7pt-14^3" in rows:
        assert won["stencil-3d-7pt-14^3"] == 9


def test_every_anchor_names_a_corpus_matrix_and_a_coloring():
    names = {e.name for e in sc.corpus()}
    kinds = set(sc.COLUMNS) | {"bicoloring", "acyclic"}
    for name, anchors in sc.ANCHORS.items():
        assert name in names, name
        assert all(a.coloring in kinds and a.source for a in anchors), name
    assert set(sc.LOSSES) <= {(n, a.coloring) for n, al in sc.ANCHORS.items() for a in al}


def _table_lines(text):
    return [line for line in text.splitlines() if line.startswith("| ")]


@pytest.mark.slow   # the whole corpus, ~10 s
def test_the_page_shows_what_the_script_prints():
    """Every table line of the script's ``--markdown`` output for the repository's rows is
    on docs/sparse_corpus.md, and the page has no table line the script does not print
    (the rows read from a mirror, marked †, excepted)."""
    printed = _table_lines(sc.markdown(list(_measure("all").values())))
    page = _table_lines(PAGE.read_text())
    missing = [line for line in printed if line not in page]
    assert not missing, "docs/sparse_corpus.md is stale; regenerate the tables with " \
                        f"python bench/sparse_corpus.py --markdown: {missing[:3]}"
    extra = [line for line in page if line not in printed and " † |" not in line]
    assert not extra, f"docs/sparse_corpus.md: table lines the script does not print: {extra[:3]}"


def test_a_new_column_is_one_line_and_meets_its_pending_anchors(monkeypatch):
    """The hook the lead fills after merging: a column added to COLUMNS is computed, shown,
    and compared with the anchors that were pending (here a stand-in: the column coloring
    under the bicoloring name, which meets the anti-diagonal's 1)."""
    monkeypatch.setitem(sc.COLUMNS, "bicoloring", sc.Column(jacobians.column_coloring))
    entry = next(e for e in LOCAL if e.name == "anti-diagonal-4")
    row = sc.measure(entry)
    assert row.cells["bicoloring"].ncolors == 1 and row.cells["bicoloring"].valid is None
    text = sc.markdown([row])
    assert "bicoloring: colors (bound) winner" in text
    assert "| anti-diagonal-4 | bicoloring | 1 | 1 | equal |" in text


def test_a_missing_mirror_matrix_is_skipped_with_a_reason(monkeypatch, tmp_path):
    monkeypatch.setattr(sc, "SUITESPARSE_DIR", str(tmp_path))
    monkeypatch.setattr(sc, "COLPACK_MIRROR", str(tmp_path / "no-such-mirror"))
    mirror = [e for e in sc.corpus() if e.mirror]
    rows, skipped = sc.run(mirror)
    assert rows == [] and len(skipped) == len(mirror)
    assert all("skipped" in why and ("DUALAD_" in why) for why in skipped)


def test_a_suitesparse_file_is_read_when_present(monkeypatch, tmp_path):
    """A matrix put where the script looks is measured, explicit zeros dropped."""
    a = sp.csr_matrix(np.array([[1.0, 0.0, 2.0], [0.0, 3.0, 0.0]]))
    a.data[1] = 0.0                              # an explicit zero: not an entry
    os.makedirs(tmp_path / "lp_cre_a")
    import scipy.io
    scipy.io.mmwrite(str(tmp_path / "lp_cre_a" / "lp_cre_a.mtx"), a)
    monkeypatch.setattr(sc, "SUITESPARSE_DIR", str(tmp_path))
    p = sc.suitesparse("lp_cre_a")()
    assert p.shape == (2, 3) and p.nnz == 2


def _graph(n, edges):
    rows = [i for i, j in edges] + [j for i, j in edges]
    cols = [j for i, j in edges] + [i for i, j in edges]
    return sc.as_pattern(sp.coo_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, n)))


def test_clique_bound_on_known_graphs():
    k4 = [(i, j) for i in range(4) for j in range(i + 1, 4)]
    assert sc.clique_bound(_graph(6, k4 + [(3, 4), (4, 5)])) == 4
    assert sc.clique_bound(_graph(5, [(i, (i + 1) % 5) for i in range(5)])) == 2
    assert sc.clique_bound(sc.adjacency(sc.banded(50, 3))) == 4
    assert sc.clique_bound(_graph(3, [])) == 1


@settings(derandomize=True, max_examples=40, deadline=None)
@given(st.integers(2, 12).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=30))))
def test_clique_bound_is_a_clique_and_below_any_proper_coloring(graph):
    n, pairs = graph
    adj = _graph(n, [(i, j) for i, j in pairs if i != j])
    bound = sc.clique_bound(adj)
    dense = adj.toarray()
    brute = max((k for k in range(1, n + 1) for s in [_some_clique(dense, k)] if s), default=1)
    assert bound <= brute                    # never above the largest clique
    star = jacobians.star_coloring(adj)
    assert bound <= star.ncolors


def _some_clique(dense, k):
    """Whether the graph has a clique of k vertices (brute force, n ≤ 12)."""
    from itertools import combinations
    n = len(dense)
    return any(all(dense[a, b] for a, b in combinations(c, 2)) for c in combinations(range(n), k))
