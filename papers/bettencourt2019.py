"""Bettencourt, Johnson, Duvenaud, "Taylor-mode automatic differentiation for higher-order
derivatives in JAX", NeurIPS 2019 Workshop on Program Transformations for ML.

The paper's claim (abstract and Section 1): nesting first-order AD to get higher
derivatives "can result in combinatorial amounts of redundant work" and "suffers from
computational blowup that is exponential in the order of differentiation", while Taylor
mode (propagating truncated Taylor polynomials, "already known" from Griewank and
Walther's *Evaluating Derivatives*, ch. 13) does not. Their Figure 1 shows it as
evaluation time against the order of differentiation, 0 to 9, (a) for the univariate
primitives sin, cos, exp and neg, nested against Taylor, (b) for an MLP.

Reproduced here with dualad's two ways to the n-th derivative along a direction v,
measured by *counting primitive applications* (``dualad.teaching.count_ops``: every
primitive applied below an outer counting tape, the rules of every sweep included), so
the comparison is deterministic where the paper's is wall time on their machine:

- **nested**: ``n`` nested ``dualad.jvp`` sweeps (what ``dualad.derivative`` did before
  Taylor mode);
- **taylor**: one Taylor sweep, ``dualad.taylor(f, n)(x, v)[n]`` (times ``n!``).

Checked, for sin, cos, exp, neg at orders 1 to 9 and a one-hidden-layer tanh MLP
(R^3 -> R, 8 hidden units, fixed seed) at orders 1 to 7:

- both give the same derivatives, and those equal the closed forms (sin^(n)(x) =
  sin(x + n pi/2), ...) to rounding;
- nested grows exponentially: its count at least doubles per order at the top of the
  range for sin, cos, exp and the MLP;
- taylor grows polynomially, exactly quadratically: the third differences of its counts
  in n are zero (the Cauchy-product recurrences, O(n^2) per primitive);
- hence a crossover order after which taylor is cheaper, printed per function.

Not reproduced: the figure's numbers (seconds, their hardware; not readable here), and
the neg curve's growth: in dualad the tangent of a linear primitive does not depend on
the primal, so nesting neg costs n + 1 applications, not exponentially many (printed as
a note). The paper's ODE section (neural ODEs, the higher-order solution recursion) is
the subject of docs/taylor_ode.md, not of this script.

    python -m papers.bettencourt2019      (exit status 1 on any mismatch)
"""
from __future__ import annotations

import math
import sys

import numpy as np

import dualad
from papers._compare import Report
from dualad.jacobians.cost import best_of
from dualad.teaching import count_ops

X0, V0 = 0.5, 1.0
ORDERS = range(1, 10)        # Figure 1's orders (0 is the function itself)
MLP_ORDERS = range(1, 8)
PRIMITIVES = {
    "sin": (np.sin, lambda n, x: math.sin(x + n * math.pi / 2)),
    "cos": (np.cos, lambda n, x: math.cos(x + n * math.pi / 2)),
    "exp": (np.exp, lambda n, x: math.exp(x)),
    "neg": (np.negative, lambda n, x: -1.0 if n == 1 else 0.0),
}


def nested_derivative(f, n, v):
    """The n-th derivative of f along v by nesting n forward sweeps (jvp of jvp ...)."""
    g = f
    for _ in range(n):
        g = (lambda g: lambda x: dualad.jvp(g, (x,), (v,))[1])(g)
    return g


def taylor_derivative(f, n, v):
    """The same from one Taylor sweep: n! times coefficient n of f(x + t v)."""
    return lambda x: dualad.taylor(f, n)(x, v)[n] * float(math.factorial(n))


def make_mlp():
    rng = np.random.default_rng(2019)
    W1, b1, w2 = rng.standard_normal((8, 3)), rng.standard_normal(8), rng.standard_normal(8)
    return lambda x: w2 @ np.tanh(W1 @ x + b1)


def counts(f, orders, x, v):
    """Per order: (nested count, taylor count, nested value, taylor value); x and v are
    leaves of the counting tape, so the direction's arithmetic counts too."""
    out = {}
    for n in orders:
        cn = count_ops(lambda x, v: nested_derivative(f, n, v)(x), x, v)
        ct = count_ops(lambda x, v: taylor_derivative(f, n, v)(x), x, v)
        out[n] = (cn, ct, nested_derivative(f, n, v)(x), taylor_derivative(f, n, v)(x))
    return out


def is_quadratic(seq):
    """True when the sequence (at consecutive n) is a polynomial of degree <= 2 in n."""
    return len(seq) >= 4 and bool(np.all(np.diff(np.asarray(seq), 3) == 0))


def growth(seq):
    """The last ratio count(n) / count(n - 1)."""
    return seq[-1] / seq[-2]


def crossover(table):
    """The first order from which taylor needs fewer applications than nested."""
    for n in sorted(table):
        if all(table[m][1] < table[m][0] for m in table if m >= n):
            return n
    return None


def check_function(report, name, table, exact=None, exponential=True):
    ns = sorted(table)
    nested = [table[n][0] for n in ns]
    taylor = [table[n][1] for n in ns]
    for n in ns:
        cn, ct, vn, vt = table[n]
        want = exact(n, X0) if exact else vn
        err = max(abs(vn - want), abs(vt - want)) / max(1.0, abs(want))
        what = "nested = taylor = exact" if exact else "nested = taylor"
        report.note(f"{name}: order {n} derivative, {what}", "equal",
                    f"{float(vt):.6g} (err {err:.0e}); ops nested {cn}, taylor {ct}",
                    ok=err < 1e-12)
    report.note(f"{name}: taylor ops, orders {ns[0]}-{ns[-1]}", "polynomial (O(n^2))",
                f"{taylor} (3rd differences zero: {is_quadratic(taylor)})",
                ok=is_quadratic(taylor))
    if exponential:
        report.note(f"{name}: nested ops growth at order {ns[-1]}", "exponential (>= 2x/order)",
                    f"{growth(nested):.2f}x per order", ok=growth(nested) >= 2.0)
        c = crossover(table)
        report.note(f"{name}: taylor cheaper from order", "some order (Fig. 1 crossing)",
                    str(c), ok=c is not None)
    else:
        report.note(f"{name}: nested ops, orders {ns[0]}-{ns[-1]}", "(figure: grows)",
                    f"{nested}: linear in dualad (a linear primitive's tangent needs no "
                    f"primal), not reproduced", ok=True)


def main() -> int:
    report = Report("Bettencourt, Johnson, Duvenaud (2019): Taylor mode vs nested forward "
                    "mode, cost against the order (primitive applications)")
    for name, (f, exact) in PRIMITIVES.items():
        check_function(report, name, counts(f, ORDERS, X0, V0), exact,
                       exponential=name != "neg")
    x, v = np.array([0.3, -0.2, 0.5]), np.array([1.0, 0.5, -0.4])
    check_function(report, "MLP", counts(make_mlp(), MLP_ORDERS, x, v))
    n = 9
    t_nested = best_of(lambda: nested_derivative(np.sin, n, V0)(X0), repeat=3)
    t_taylor = best_of(lambda: taylor_derivative(np.sin, n, V0)(X0), repeat=3)
    report.note(f"sin, order {n}: time nested / time taylor (measured)", "> 1 (Fig. 1a)",
                f"{t_nested / t_taylor:.1f}")
    return report.finish()


if __name__ == "__main__":
    sys.exit(main())
