"""Baydin, Pearlmutter, Radul, Siskind, "Automatic Differentiation in Machine
Learning: a Survey", JMLR 18(153), 2018 — Tables 2 and 3.

The forward-mode (Table 2) and reverse-mode (Table 3) evaluation traces of
f(x1, x2) = ln(x1) + x1·x2 − sin(x2) at (x1, x2) = (2, 5), every row to three
decimals, computed by ``dualad.trace`` from the registry's own rules.

    python -m papers.baydin2018_survey      (exit status 1 on any mismatch)
"""
from __future__ import annotations

import sys

import numpy as np

from dualad import trace
from papers._compare import Report


def f(x1, x2):
    """The survey's function, evaluated in the order of its Wengert list."""
    v1 = np.log(x1)
    v2 = x1 * x2
    v3 = np.sin(x2)
    v4 = v1 + v2
    return v4 - v3


# Table 2: forward primal trace, then forward tangent trace (ẋ1 = 1, ẋ2 = 0).
PRIMAL = [("v_-1", 2.0), ("v_0", 5.0), ("v_1", 0.693), ("v_2", 10.0), ("v_3", -0.959),
          ("v_4", 10.693), ("v_5", 11.652)]
TANGENT = [("v̇_-1", 1.0), ("v̇_0", 0.0), ("v̇_1", 0.5), ("v̇_2", 5.0), ("v̇_3", 0.0),
           ("v̇_4", 5.5), ("v̇_5", 5.5)]
# Table 3: the adjoint trace in the order the reverse sweep computes it.
ADJOINT = [("v̄_5", 1.0), ("v̄_4", 1.0), ("v̄_3", -1.0), ("v̄_1", 1.0), ("v̄_2", 1.0),
           ("v̄_0", -0.284), ("v̄_-1", 5.0), ("v̄_0", 1.716), ("v̄_-1", 5.5)]
RESULTS = {"y": 11.652, "dy/dx1": 5.5, "dy/dx2": 1.716}


def _match(report, table, rows, label):
    """Compare the k-th occurrence of each variable in ``table`` with the trace."""
    seen = {}
    for name, published in table:
        k = seen[name] = seen.get(name, -1) + 1
        hits = [r for r in rows if r.name == name]
        if k < len(hits):
            report.check(f"{label} {name}", published, hits[k].value)
        else:
            report.note(f"{label} {name}", published, "missing", ok=False)


def main() -> int:
    report = Report("Baydin et al. (2018), Tables 2 and 3: f = ln x1 + x1 x2 - sin x2 at (2, 5)")
    fwd = trace(f, 2.0, 5.0, mode="forward", seed=(1.0, 0.0))
    rev = trace(f, 2.0, 5.0, mode="reverse")
    _match(report, PRIMAL, [r for r in fwd.rows if r.section == "primal"], "Table 2 primal")
    _match(report, TANGENT, [r for r in fwd.rows if r.section == "tangent"], "Table 2 tangent")
    _match(report, ADJOINT, [r for r in rev.rows if r.section == "adjoint"], "Table 3 adjoint")
    order = [r.name for r in rev.rows if r.section == "adjoint"]
    report.note("Table 3 sweep order", " ".join(n for n, _ in ADJOINT), " ".join(order),
                ok=order == [n for n, _ in ADJOINT])
    report.check("y", RESULTS["y"], fwd.output)
    report.check("dy/dx1 (forward)", RESULTS["dy/dx1"], fwd.derivative)
    report.check("dy/dx1 (reverse)", RESULTS["dy/dx1"], rev.derivative[0])
    report.check("dy/dx2 (reverse)", RESULTS["dy/dx2"], rev.derivative[1])
    return report.finish()


if __name__ == "__main__":
    sys.exit(main())
