r"""``dualad.derivative(f, n)`` (one Taylor sweep) against nested forward mode and JAX.

    python bench/taylor_derivative.py [--orders 1,2,4,8,12,20,30]
        [--budget 15] [--rounds 5] [--threads 1] [--no-jax] [--jax-python PATH]

The function: :math:`f(x) = \sin(x)\,e^{-x^2}/(1 + x^2)` at :math:`x = 0.7`, its
derivative of order n = 1, 2, 4, 8, 12, 20, 30 by

- **taylor**: ``dualad.derivative(f, n)``, one Taylor-mode sweep, :math:`n! y_n` from the
  coefficients of :math:`f(x + t)` (:math:`O(n^2)` work per primitive);
- **nested**: ``n`` nested ``dualad.jvp`` sweeps, the implementation ``derivative`` had
  before Taylor mode (commit 32bf2c2^: each level differentiates the previous level's
  derivative; the work doubles, or worse, per level);
- **jax nested** / **jax jet** (when ``--jax-python`` has JAX, default
  ``$DUALAD_JAX_PYTHON``, else this interpreter): ``n`` nested ``jax.jvp`` and ``jax.experimental.jet``, both
  under ``jax.jit`` (float64), run in that interpreter by this same script (``--peer jax``).

Every value is checked against SymPy (exact: each factor's derivatives differentiated
symbolically at x = 7/10, combined by Leibniz's rule for three factors, 50 digits).

Timing: one run; a cell's first call (for JAX: trace + compile + run) is reported on its
own; then ``--rounds`` repeats, the participants of one order interleaved round by round
(bench/_timing.interleaved), median reported. BLAS and XLA pools are pinned to
``--threads`` (bench/_pinning). A cell whose first call is predicted (from the growth
between the last two measured orders of its column) to exceed ``--budget`` seconds is
not run: the estimate is printed with a ``~`` and ``(extrapolated)``. A cell whose first
call took more than ``budget / rounds`` is reported from that call alone (``1 call``).
No timing is asserted anywhere.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import _pinning  # noqa: E402  (imports nothing numerical)

X0 = 0.7
ORDERS = (1, 2, 4, 8, 12, 20, 30)
# The interpreter that has JAX (a separate benchmark environment, say): $DUALAD_JAX_PYTHON,
# else this one.
JAX_PYTHON = os.environ.get("DUALAD_JAX_PYTHON", sys.executable)


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--orders", default=",".join(map(str, ORDERS)))
    p.add_argument("--budget", type=float, default=15.0,
                   help="seconds a cell's first call may take (predicted), default 15")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--no-affinity", action="store_true")
    p.add_argument("--no-jax", action="store_true")
    p.add_argument("--jax-python", default=JAX_PYTHON)
    p.add_argument("--peer", choices=["jax"], help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    a.orders = [int(s) for s in a.orders.split(",")]
    return a


# --- the exact values -------------------------------------------------------------------
def exact_derivatives(orders, digits=50):
    r""":math:`f^{(n)}(7/10)` from SymPy: each factor :math:`s = \sin x`,
    :math:`e = e^{-x^2}`, :math:`r = 1/(1+x^2)` differentiated symbolically and evaluated
    exactly, then :math:`f^{(n)} = \sum_{a+b+c=n} \frac{n!}{a!\,b!\,c!} s^{(a)} e^{(b)}
    r^{(c)}` (Leibniz's rule) at ``digits`` digits."""
    import sympy as sp
    x = sp.Symbol("x")
    top = max(orders)
    factors = []
    for g in (sp.sin(x), sp.exp(-x ** 2), 1 / (1 + x ** 2)):
        vals = []
        for _ in range(top + 1):
            vals.append(g.subs(x, sp.Rational(7, 10)).evalf(digits + 10))
            g = sp.diff(g, x)
        factors.append(vals)
    s, e, r = factors
    out = {}
    for n in orders:
        total = sp.Float(0, digits + 10)
        for a in range(n + 1):
            for b in range(n - a + 1):
                c = n - a - b
                coef = math.factorial(n) // (math.factorial(a) * math.factorial(b) *
                                             math.factorial(c))
                total += coef * s[a] * e[b] * r[c]
        out[n] = float(total)
    return out


# --- the participants -------------------------------------------------------------------
def dualad_cells():
    """name -> (n -> callable of x): dualad's Taylor sweep and nested forward sweeps."""
    import numpy as np
    import dualad
    from dualad.core.tracer import shape_of, unguarded_value

    def f(x):
        return np.sin(x) * np.exp(-x ** 2) / (1 + x ** 2)

    def nested(n):
        def d1(g):
            def dg(x):   # as derivative() was before Taylor mode (32bf2c2^)
                one = np.ones(shape_of(x), dtype=np.result_type(unguarded_value(x)))
                return dualad.jvp(g, (x,), (one,))[1]
            return dg
        g = f
        for _ in range(n):
            g = d1(g)
        return g

    return {"taylor": lambda n: dualad.derivative(f, n), "nested": nested}


def jax_cells():
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    from jax.experimental.jet import jet

    def f(x):
        return jnp.sin(x) * jnp.exp(-x ** 2) / (1 + x ** 2)

    def nested(n):
        def d1(g):
            return lambda x: jax.jvp(g, (x,), (jnp.ones_like(x),))[1]
        g = f
        for _ in range(n):
            g = d1(g)
        return jax.jit(g)

    def taylor(n):
        def dn(x):
            series = ((jnp.ones_like(x),) + (jnp.zeros_like(x),) * (n - 1),)
            return jet(f, (x,), series)[1][-1]   # factorial-scaled: the n-th derivative
        return jax.jit(dn)

    def ready(fn):
        return lambda x: float(fn(x).block_until_ready())

    return {"jax nested": lambda n: ready(nested(n)), "jax jet": lambda n: ready(taylor(n))}


# --- measuring --------------------------------------------------------------------------
def predicted(history, n):
    """The first-call seconds at order ``n`` extrapolated geometrically from the last two
    measured orders (None with fewer than two)."""
    if len(history) < 2:
        return None
    (n1, t1), (n2, t2) = history[-2], history[-1]
    rate = (max(t2, 1e-9) / max(t1, 1e-9)) ** (1.0 / (n2 - n1))
    return t2 * max(rate, 1.0) ** (n - n2)


def measure(cells, orders, budget, rounds):
    """name -> n -> {value, first, median, calls} or {estimate}; interleaved per order."""
    import time
    from _timing import interleaved
    results = {name: {} for name in cells}
    history = {name: [] for name in cells}
    for n in orders:
        repeat = {}
        for name, make in cells.items():
            guess = predicted(history[name], n)
            if guess is not None and guess > budget:
                results[name][n] = {"estimate": guess}
                continue
            fn = make(n)
            t0 = time.perf_counter()
            value = fn(X0)
            first = time.perf_counter() - t0
            history[name].append((n, first))
            results[name][n] = {"value": float(value), "first": first, "median": first,
                                "calls": 1}
            if first * rounds <= budget:
                repeat[name] = (lambda fn=fn: fn(X0))
        if repeat:
            timed = interleaved(repeat, rounds=rounds, min_time=0.0,
                                calibrated={k: 1 for k in repeat})
            for name, t in timed.items():
                results[name][n].update(median=t.median, calls=rounds)
    return results


def run_peer(args):
    """In the JAX interpreter: measure and print the results as one JSON line."""
    results = measure(jax_cells(), args.orders, args.budget, args.rounds)
    print("RESULTS " + json.dumps({k: {str(n): c for n, c in v.items()}
                                   for k, v in results.items()}))
    return 0


def peer_results(args):
    """Run this script with ``--peer jax`` in ``--jax-python``; {} when unavailable."""
    if args.no_jax or not os.path.exists(args.jax_python):
        return {}, "jax: skipped (--no-jax or no interpreter)"
    cmd = [args.jax_python, os.path.abspath(__file__), "--peer", "jax", "--orders",
           ",".join(map(str, args.orders)), "--budget", str(args.budget), "--rounds",
           str(args.rounds), "--threads", str(args.threads)]
    cmd += ["--no-affinity"] if args.no_affinity else []
    proc = subprocess.run(cmd, capture_output=True, text=True)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULTS ")]
    if proc.returncode != 0 or not lines:
        why = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return {}, f"jax: not measured ({why})"
    data = json.loads(lines[-1][len("RESULTS "):])
    return {k: {int(n): c for n, c in v.items()} for k, v in data.items()}, \
        next((ln for ln in proc.stdout.splitlines() if ln.startswith("jax ")), "jax: ok")


# --- the table --------------------------------------------------------------------------
def cell_text(cell):
    """``first / median`` seconds, or the extrapolated estimate of a cell not run."""
    from _timing import fmt
    if cell is None:
        return "-"
    if "estimate" in cell:
        return f"~{fmt(cell['estimate'])} (extrapolated)"
    if cell["calls"] == 1:
        return f"{fmt(cell['first'])} / (1 call)"
    return f"{fmt(cell['first'])} / {fmt(cell['median'])}"


def max_error(results, exact, n):
    """The largest relative error at order ``n`` over the cells that ran."""
    errs = [abs(v[n]["value"] - exact[n]) / max(abs(exact[n]), 1e-300)
            for v in results.values() if "value" in v.get(n, {})]
    return max(errs) if errs else float("nan")


def report(results, exact, orders):
    from _timing import table
    names = list(results)
    rows = [[n, f"{exact[n]:.12g}"] + [cell_text(results[k].get(n)) for k in names] +
            [f"{max_error(results, exact, n):.0e}"] for n in orders]
    return table(rows, ["n", "f^(n)(0.7) (SymPy)"] + [f"{k}: first / median" for k in names]
                 + ["max rel err"])


def wrong_cells(results, exact):
    return [(k, n) for k, v in results.items() for n, c in v.items()
            if "value" in c and abs(c["value"] - exact[n]) > 1e-8 * max(abs(exact[n]), 1e-300)]


def main(argv=None):
    args = parse(sys.argv[1:] if argv is None else argv)
    early = _pinning.pin_environment(args.threads, argv=None if argv is not None else
                                     sys.argv, affinity=not args.no_affinity)
    if args.peer == "jax":
        import jax
        print(f"jax {jax.__version__}, jit, float64")
        return run_peer(args)
    pins = _pinning.pin_runtime(args.threads, early)
    results = measure(dualad_cells(), args.orders, args.budget, args.rounds)
    peers, peer_note = peer_results(args)
    results.update(peers)
    exact = exact_derivatives(args.orders)
    print("f(x) = sin(x) exp(-x^2) / (1 + x^2) at x = 0.7: the n-th derivative")
    print("\n".join(pins))
    print(peer_note)
    print(f"budget {args.budget:g} s per cell (first call), {args.rounds} interleaved rounds")
    print(report(results, exact, args.orders))
    print("first: the first call (JAX: trace, compile and run); median: over the interleaved "
          "rounds; values checked against SymPy to a relative 1e-8")
    bad = wrong_cells(results, exact)
    if bad:
        print(f"WRONG values: {bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
