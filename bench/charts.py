"""The charts of BENCHMARKS.md: each peer's time per call as a ratio to the plain function.

    python bench/run.py            # writes bench/results/latest.json (bench/_record.py)
    python bench/charts.py         # draws it: docs/_static/bench/latest.svg

    python bench/charts.py RESULTS.json [--out DIR] [--name NAME]
    python bench/charts.py --markdown BENCHMARKS.md --after "After (full run" --name issue32

One SVG per results file: a group of bars per workload, one bar (series) per peer that was
measured, from 1 to the peer's median time per call divided by the plain NumPy
function's (for ``hvp``, by one dualad gradient's: the workload is marked ``*``), on a
log scale: a bar up is that many times slower than the plain function, a bar down
faster. The title says which peers
were measured and which were not installed (no series: an absent peer is never drawn as
zero). A peer that raised on a row has no bar there. ``--markdown`` reads a table that
``bench/run.py --markdown`` printed (the first one after the line holding ``--after``'s
text) instead of a results file, so tables already committed can be drawn too.

Matplotlib draws on its Agg canvas (no display needed) inside a local ``rc_context``:
text is kept as SVG text (searchable, smaller) and the file carries no date, so drawing
the same results twice writes the same bytes. Nothing here times or asserts anything.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results", "latest.json")
OUT = os.path.join(os.path.dirname(HERE), "docs", "_static", "bench")
# one color per peer, the same in every chart
COLORS = {"dualad": "#1f77b4", "dualad.jit": "#17becf", "autograd": "#8c564b",
          "jax": "#ff7f0e", "jax.jit": "#d62728", "torch": "#9467bd", "casadi": "#2ca02c"}
UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}


def ratios(doc):
    """``[(workload label, {peer: ratio})]`` of a results document (bench/_record.py):
    each measured peer's median over the row's baseline median; peers without a time on
    a row (it raised, or has no implementation there) are left out of that row."""
    rows = []
    for row in doc["rows"]:
        base = (row.get("f") or {}).get("median")
        if not base:
            continue
        label = row["workload"] + ("*" if row.get("baseline", "f") != "f" else "")
        rows.append((label, {p: t["median"] / base for p, t in row["peers"].items()
                             if t.get("median") and p in doc["measured"]}))
    return rows


def _seconds(cell):
    """A table cell such as ``2.75 ms (2.02x) [2.12]`` in seconds; None for ``-``/``error``."""
    found = re.match(r"\s*([0-9.]+)\s*(s|ms|us|ns)\b", cell)
    return float(found.group(1)) * UNITS[found.group(2)] if found else None


def from_markdown(text, after, source):
    """A results document from the first ``| workload | f | ...`` table after the first
    line holding ``after``: the peers are its columns (first-call columns aside), a peer
    measured when any of its cells holds a time."""
    lines = text.splitlines()
    start = next((k for k, t in enumerate(lines) if after in t), None)
    if start is None:
        raise SystemExit(f"charts.py: no line of {source} holds {after!r}")
    head = next((k for k in range(start, len(lines))
                 if lines[k].startswith("| workload | f |")), None)
    if head is None:
        raise SystemExit(f"charts.py: no '| workload | f |' table after {after!r} in {source}")
    names = [c.strip() for c in lines[head].strip().strip("|").split("|")]
    peers = [p for p in names[2:] if not p.startswith("first call")]
    rows = []
    for line in lines[head + 2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        times = {p: _seconds(c) for p, c in zip(names[2:], cells[2:]) if p in peers}
        rows.append({"workload": cells[0], "baseline": "dualad gradient"
                     if cells[0] == "hvp" else "f", "f": {"median": _seconds(cells[1])},
                     "peers": {p: {"median": s} for p, s in times.items() if s}})
    measured = [p for p in peers if any(p in r["peers"] for r in rows)]
    return {"machine": f"{source}, the table after {after!r}", "rows": rows,
            "measured": measured, "missing": [p for p in peers if p not in measured],
            "missing_why": "no time in the table"}


def draw(doc, path):
    """Write the chart of results document ``doc`` to ``path`` (SVG); returns ``path``."""
    import matplotlib
    from matplotlib.figure import Figure        # no pyplot: no global figure manager
    rows = ratios(doc)
    peers = [p for p in doc["measured"] if any(p in r for _, r in rows)]
    width = 0.8 / max(1, len(peers))
    style = {"svg.fonttype": "none", "svg.hashsalt": "dualad-bench", "font.size": 9}
    with matplotlib.rc_context(style):
        fig = Figure(figsize=(max(6.0, 0.75 * len(rows) + 2.5), 4.2))
        ax = fig.add_subplot()
        for k, peer in enumerate(peers):
            xs = [x for x, (_, r) in enumerate(rows) if peer in r]
            # each bar spans [1, ratio]: up when slower than f, down when faster
            bars = ax.bar([x - 0.4 + width * (k + 0.5) for x in xs],
                          [rows[x][1][peer] - 1.0 for x in xs], width, bottom=1.0,
                          color=COLORS.get(peer, "0.5"), label=peer)
            for x, bar in zip(xs, bars):
                bar.set_gid(f"bar:{peer}:{rows[x][0]}")
        _axes(ax, rows, peers, doc)
        fig.tight_layout()
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        fig.savefig(path, format="svg", metadata={"Date": None})
    return path


def _axes(ax, rows, peers, doc):
    """Log scale, the line at 1, labels, legend and the title naming the peers."""
    ax.set_yscale("log")
    ax.axhline(1.0, color="0.3", linewidth=0.8, linestyle="--", gid="ratio-1")
    values = [v for _, r in rows for v in r.values()] or [1.0]
    low, high = min(min(values), 1.0), max(max(values), 1.0)
    ax.set_ylim(10 ** math.floor(math.log10(low) - 0.05),
                10 ** math.ceil(math.log10(high) + 0.05))
    ax.set_xticks(range(len(rows)), [w for w, _ in rows], rotation=30, ha="right")
    ax.set_xlabel("workload (* hvp: ratio to one dualad gradient)")
    ax.set_ylabel("time per call / plain function's (log scale)")
    missing = ", ".join(doc.get("missing", [])) or "none"
    ax.set_title(f"measured: {', '.join(peers)}; {doc.get('missing_why', 'not installed')}: "
                 f"{missing}\n{_run_line(doc)}", fontsize=8)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)


def _run_line(doc):
    """The machine, and when and how the run was made (a results file says)."""
    parts = [doc.get("machine", "")]
    if doc.get("when"):
        parts.append(doc["when"])
    if "rounds" in doc:
        parts.append(f"{'--quick, ' if doc.get('quick') else ''}median of {doc['rounds']} "
                     f"rounds")
    return "; ".join(p for p in parts if p)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", nargs="?", default=RESULTS,
                    help="a results file of bench/run.py (default bench/results/latest.json)")
    ap.add_argument("--markdown", help="read a Markdown table of bench/run.py --markdown "
                                       "from this file instead")
    ap.add_argument("--after", default="| workload | f |",
                    help="with --markdown: the table is the first after the line holding this")
    ap.add_argument("--out", default=OUT, help="folder of the SVGs (default docs/_static/bench)")
    ap.add_argument("--name", help="the SVG's name, without .svg (default: the input's)")
    args = ap.parse_args(argv)
    if args.markdown:
        with open(args.markdown, encoding="utf-8") as f:
            doc = from_markdown(f.read(), args.after, os.path.basename(args.markdown))
    else:
        if not os.path.exists(args.results):
            raise SystemExit(f"charts.py: no results file {args.results}: run "
                             f"python bench/run.py first (it writes it)")
        with open(args.results, encoding="utf-8") as f:
            doc = json.load(f)
    name = args.name or os.path.splitext(os.path.basename(args.markdown or args.results))[0]
    path = draw(doc, os.path.join(args.out, name + ".svg"))
    print(f"wrote {path}: {len(ratios(doc))} workloads, peers {', '.join(doc['measured'])}")
    return path


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
