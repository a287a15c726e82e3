"""The cost of a Jacobian against the shape of the function: forward, reverse, the planner.

For F: R^n -> R^m with Jacobian J (m x n), forward mode gets J one column per
tangent sweep and reverse mode one row per adjoint sweep, so

    cost(J) forward  ≈ n · c_f · OPS(F)        cost(J) reverse ≈ OPS(F) + m · c_r · OPS(F)

with small constants c_f, c_r (Griewank and Walther, "Evaluating Derivatives",
2nd ed., SIAM 2008, Chapters 3 and 4; Baydin et al., JMLR 18(153), 2018, Section 3:
forward mode is preferable when n << m, reverse when n >> m). The figure shows both against n/m with n·m fixed, and the mode that
``jacobians.plan(F, x, mode="auto")`` picks at each point:

- left, operation counts: every primitive applied during the sweeps, counted
  on an outer tape (:mod:`dualad.teaching.opcount`), one direction per sweep
  (``chunk_size=1``, the textbook setting). The sweeps counted are the ones
  ``jacobians`` performs: n one-direction JVPs (forward), or one recorded tape
  and m one-cotangent pullbacks (reverse); the planner's count is the count of
  the mode it picked, and its Jacobian is checked against the dense one.
- right, time: the same family of functions at a larger n·m, with the
  toolkit's batched sweeps (vector-mode JVPs, batched pullbacks; default
  chunks), best of a few runs. Reported, never asserted.

Checked (exit status 1 otherwise): forward counts grow exactly linearly in n,
reverse counts linearly in m; the planner's choice is never costlier than the
worse mode, within ``MARGIN`` of the cheaper one, and is the cheaper one
wherever n/m >= 4 or <= 1/4 (near n = m it weighs measured time, and either
mode is a fair choice).

    python -m papers.jacobian_cost_figure [--out papers/figures/jacobian_cost.png] [--quick]
"""
from __future__ import annotations

import argparse
import math
import os
import sys

import numpy as np

import dualad
from dualad import jacobians
from papers._compare import Report
from dualad.jacobians.cost import best_of
from dualad.teaching import OpCounter

OUT = os.path.join(os.path.dirname(__file__), "figures", "jacobian_cost.png")
MARGIN = 2.0   # near n = m the planner (which weighs time) may take either mode: within 2x


def make_function(n, m, seed=0):
    """F(x) = tanh(A (x ∘ sin x)) + log(1 + |x ∘ sin x|²), A a fixed m x n matrix: the
    same ten primitives whatever n and m, a dense Jacobian."""
    A = np.random.default_rng(seed).standard_normal((m, n)) / math.sqrt(n)

    def F(x):
        h = np.sin(x) * x
        return np.tanh(A @ h) + np.log1p(np.sum(h * h))
    F.__name__ = f"F_{n}x{m}"
    return F


def shapes(product):
    """(n, m) with n·m = product, n/m from 1/product to product by factors of 4 (or 2)."""
    k = int(round(math.log2(product)))
    step = 2 if k >= 8 else 1
    return [(2 ** j, 2 ** (k - j)) for j in range(0, k + 1, step)]


# --- operation counts ------------------------------------------------------------------------
def _unit(size, i):
    e = np.zeros(size)
    e[i] = 1.0
    return e


def forward_ops(F, x):
    """Primitives applied by n one-direction JVP sweeps (``jacfwd`` with chunk_size=1)."""
    counter = OpCounter()
    xb = counter.new_leaf(x)
    for j in range(x.size):
        dualad.jvp(F, (xb,), (_unit(x.size, j),))
    return counter.total


def reverse_ops(F, x, m):
    """Primitives applied by one recorded tape and m one-cotangent pullbacks (``jacrev``
    with chunk_size=1)."""
    counter = OpCounter()
    _, pullback = dualad.vjp(F, counter.new_leaf(x))
    for i in range(m):
        pullback(_unit(m, i))
    return counter.total


def count_row(n, m):
    F = make_function(n, m)
    x = np.linspace(0.1, 1.0, n)
    counter = OpCounter()
    F(counter.new_leaf(x))
    plan = jacobians.plan(F, x, mode="auto", chunk_size=1)
    J = plan(x)
    exact = np.allclose(J, jacobians.jacfwd(F, x), rtol=1e-12, atol=1e-14)
    fwd, rev = forward_ops(F, x), reverse_ops(F, x, m)
    return {"n": n, "m": m, "f": counter.total, "forward": fwd, "reverse": rev,
            "mode": plan.mode, "plan": fwd if plan.mode == "forward" else rev, "exact": exact}


# --- time ----------------------------------------------------------------------------------------
def time_row(n, m, repeat=3):
    F = make_function(n, m)
    x = np.linspace(0.1, 1.0, n)
    plans = {mode: jacobians.plan(F, x, mode=mode) for mode in ("forward", "reverse", "auto")}
    row = {"n": n, "m": m, "mode": plans["auto"].mode}
    for mode, p in plans.items():
        p(x)   # warm up
        row[mode] = best_of(lambda: p(x), repeat)
    return row


# --- the figure -------------------------------------------------------------------------------
def draw(counts, times, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.8))
    colors = {"forward": "#1f77b4", "reverse": "#d62728"}
    panels = [(axes[0], counts, "primitive operations (one direction per sweep)",
               f"operation counts, n·m = {counts[0]['n'] * counts[0]['m']}"),
              (axes[1], times, "seconds (batched sweeps)",
               f"time, n·m = {times[0]['n'] * times[0]['m']}")]
    for ax, rows, ylabel, title in panels:
        ratio = [r["n"] / r["m"] for r in rows]
        for mode in ("forward", "reverse"):
            ax.plot(ratio, [r[mode] for r in rows], "-o", color=colors[mode], ms=4,
                    label=f"{mode} mode")
        key = "plan" if "plan" in rows[0] else "auto"
        ax.scatter(ratio, [r[key] for r in rows], s=160, facecolors="none", linewidths=1.8,
                   edgecolors=[colors[r["mode"]] for r in rows],
                   label="planner's choice (ring in the chosen mode's color)")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("n / m  (inputs / outputs)")
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.axvline(1.0, color="0.8", lw=0.8, zorder=0)
        ax.grid(True, which="major", color="0.92")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=3, fontsize=9, frameon=False)
    fig.suptitle("Cost of the Jacobian of F: R^n -> R^m: forward ∝ n, reverse ∝ m", fontsize=11)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def measure(product=256, time_product=4096, repeat=3):
    counts = [count_row(n, m) for n, m in shapes(product)]
    times = [time_row(n, m, repeat) for n, m in shapes(time_product)]
    return counts, times


def check(report, counts, times):
    per_dir = [r["forward"] / r["n"] for r in counts]
    f_ops = counts[0]["f"]
    report.note("forward: OPS(J)/n (ops per tangent sweep)", "c_f·OPS(F), whatever n",
                f"{min(per_dir):.0f} .. {max(per_dir):.0f}  (OPS(F) = {f_ops})",
                ok=max(per_dir) == min(per_dir))
    # The adjoint sweep's count depends slightly on n (broadcasts of size-1 axes): near-constant.
    per_ct = [(r["reverse"] - r["f"]) / r["m"] for r in counts]
    report.note("reverse: (OPS(J) - OPS(F))/m (ops per adjoint sweep)",
                "c_r·OPS(F), whatever m (within 10%)",
                f"{min(per_ct):.1f} .. {max(per_ct):.1f}", ok=max(per_ct) <= 1.1 * min(per_ct))
    for r in counts:
        cheap, dear = sorted((r["forward"], r["reverse"]))
        far = max(r["n"], r["m"]) >= 4 * min(r["n"], r["m"])
        ok = r["exact"] and r["plan"] <= dear and r["plan"] <= MARGIN * cheap and \
            (r["plan"] == cheap or not far)
        report.note(f"n={r['n']}, m={r['m']}: ops forward | reverse | planner",
                    "the cheaper" if far else f"<= worse, <= {MARGIN:g} x cheaper",
                    f"{r['forward']} | {r['reverse']} | {r['plan']} ({r['mode']})", ok=ok)
    for r in times:
        report.note(f"n={r['n']}, m={r['m']}: time forward | reverse | planner",
                    "measured (not asserted)",
                    f"{r['forward'] * 1e3:.2f} | {r['reverse'] * 1e3:.2f} | "
                    f"{r['auto'] * 1e3:.2f} ms ({r['mode']})")


def run(out=OUT, quick=False):
    """Measure, check, draw; returns (exit status, counts, times)."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("papers.jacobian_cost_figure: error: drawing needs matplotlib "
              "(pip install 'dualad[plot]')", file=sys.stderr)
        return 2, None, None
    if quick:
        counts, times = measure(product=64, time_product=256, repeat=1)
    else:
        counts, times = measure()
    report = Report("Jacobian cost against n/m: forward, reverse and the planner's choice")
    check(report, counts, times)
    draw(counts, times, out)
    rc = report.finish()
    print(f"figure written to {out}")
    return rc, counts, times


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m papers.jacobian_cost_figure",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=OUT, help="the PNG to write")
    parser.add_argument("--quick", action="store_true", help="small sizes, one timing run")
    args = parser.parse_args(argv)
    return run(args.out, args.quick)[0]


if __name__ == "__main__":
    sys.exit(main())
