"""The results file of a ``bench/run.py`` run: what ``bench/charts.py`` draws.

``record(path, rows, ...)`` writes one JSON document (indent 1, keys sorted, so a
re-run's diff is readable)::

    {"format": 1, "machine": str, "rounds": int, "quick": bool, "when": "YYYY-MM-DD HH:MM UTC",
     "measured": [peer, ...],            # the peers installed and run (dualad, jax, ...)
     "missing": [peer, ...],             # the peers not installed: no column, no series
     "versions": {peer: str},
     "rows": [{"workload": str, "what": str, "baseline": "f" or "dualad gradient",
               "f": {"median": s, "spread": r} or null,
               "peers": {peer: {"median": s, "spread": r, "cpu_per_wall": c,
                                "first_call": s (jitted peers), "problem": str}}}]}

Times are seconds per call (the median over the rounds); ``spread`` is max/min over the
rounds. A peer that raised has only ``problem``. Nothing here is timed or asserted.
"""
from __future__ import annotations

import json
import os
import time

FORMAT = 1
DEFAULT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "latest.json")


def _timing(t):
    return {"median": t.median, "spread": t.spread, "cpu_per_wall": t.cpu_per_wall}


def _row(wl, timings, problems, firsts):
    peers = {}
    for name, t in timings.items():
        if name != "f":
            peers[name] = _timing(t)
    for name, seconds in firsts.items():
        peers.setdefault(name, {})["first_call"] = seconds
    for name, text in problems.items():
        peers.setdefault(name, {})["problem"] = text
    f = timings.get("f")
    return {"workload": wl.name, "what": wl.what,
            "baseline": "dualad gradient" if wl.name == "hvp" else "f",
            "f": None if f is None else {"median": f.median, "spread": f.spread},
            "peers": peers}


def record(path, rows, have, versions, machine, rounds, quick):
    """Write the run's results to ``path`` (folders made as needed); returns ``path``.

    ``rows``: ``[(workload, timings, problems, firsts)]`` as ``bench/run.py`` collects
    them; ``have``: peer -> installed; ``versions``: peer -> version text."""
    doc = {"format": FORMAT, "machine": machine, "rounds": rounds, "quick": bool(quick),
           "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
           "measured": [p for p, ok in have.items() if ok],
           "missing": [p for p, ok in have.items() if not ok],
           "versions": dict(versions),
           "rows": [_row(*row) for row in rows]}
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as out:
        json.dump(doc, out, indent=1, sort_keys=True)
        out.write("\n")
    return path
