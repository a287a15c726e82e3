"""Taylor mode against nested forward mode (papers/bettencourt2019.py, Bettencourt, Johnson
and Duvenaud 2019): the rows are there, and the shape checks can fail."""
import math

import numpy as np
import paper_runs

from papers import bettencourt2019 as b


def test_reproduction_has_every_row():
    rc, _, (report,) = paper_runs.run(b.__name__)
    assert rc == 0 and report.gaps == []
    names = [r[0] for r in report.rows]
    for f in ("sin", "cos", "exp", "MLP"):
        assert f"{f}: taylor cheaper from order" in names
        assert any(q.startswith(f"{f}: nested ops growth") for q in names)


def test_the_polynomial_check_rejects_cubic_and_exponential_growth():
    n = np.arange(1, 10)
    assert b.is_quadratic(list(2 * n ** 2 + 6 * n + 5))
    assert not b.is_quadratic(list(n ** 3))
    assert not b.is_quadratic(list(2 ** n))
    assert not b.is_quadratic([1, 4, 9])   # too short to tell


def test_crossover_needs_taylor_cheaper_for_every_later_order():
    table = {1: (3, 10, 0, 0), 2: (12, 11, 0, 0), 3: (10, 12, 0, 0), 4: (40, 13, 0, 0)}
    assert b.crossover(table) == 4
    assert b.crossover({1: (3, 10, 0, 0)}) is None


def test_counts_are_measured_with_the_direction_on_the_tape():
    table = b.counts(np.exp, [1, 2, 3], 0.5, 1.0)
    assert [table[n][0] for n in (1, 2, 3)] == [2, 4, 8]        # nested: 2^n
    for n in (1, 2, 3):
        assert math.isclose(table[n][3], math.exp(0.5), rel_tol=1e-14)
