"""Acyclic against star colorings of banded Hessians (papers/gebremedhin2009.py): every row
matches, none is missing, and the independent acyclicity check can fail."""
import numpy as np
import paper_runs

from papers import gebremedhin2009 as g
from papers._graphs import adjacency, band_pattern, grid_adjacency


def test_reproduction_matches_with_every_row():
    rc, out, (report,) = paper_runs.run(g.__name__)
    assert rc == 0 and "MISMATCH" not in out and report.gaps == []
    names = [r[0] for r in report.rows]
    for rho, n in ((2, 100), (4, 100), (6, 100), (10, 200), (20, 200)):
        for suffix in ("", ", permuted"):
            assert f"ρ={rho}, n={n}{suffix}: acyclic colors" in names
            assert f"ρ={rho}, n={n}{suffix}: star colors" in names
    assert sum("H by substitution" in q for q in names) == 2


def test_the_union_find_check_rejects_a_two_colored_cycle_and_a_clash():
    square = grid_adjacency(2, 2)                      # a 4-cycle
    assert not g.acyclic_by_union_find(square, [0, 1, 1, 0])
    assert g.acyclic_by_union_find(square, [0, 1, 2, 0])
    band = adjacency(band_pattern(8, 2))
    assert not g.acyclic_by_union_find(band, list(np.arange(8) % 2))   # neighbours clash
    assert g.acyclic_by_union_find(band, list(np.arange(8) % 3))
