"""The notebook view of a jitted function: ``Jitted._repr_html_``.

For each signature traced so far (the inputs' types, shapes and dtypes as the program
records them, and the static arguments' values) the view gives the traces taken, the
programs kept, what replays the newest (its tier: NumPy, Numba, pending), its size — the
equations, the guards, the most frequent primitives and the fused groups (maximal
connected elementwise float64 groups, :func:`dualad.interpreters.staging.fuse.groups`:
what the Numba backend writes one loop kernel for) — and its listing
(:func:`dualad.interpreters.staging.program.pretty`, the jaxpr-like text ``program()``
prints) with the generated source folded below it, for the :data:`LISTED` newest
signatures. Every text is HTML-escaped and a listing past :data:`MAX_LINES` lines or
:data:`MAX_CHARS` characters is cut (the cut says how many lines were left out:
``f.program(*args)`` prints them all), so the view stays a few hundred kilobytes at most
whatever was traced. Nothing is traced or compiled to draw the view.
"""
from __future__ import annotations

import html
from collections import Counter
from typing import Any

from ...core.tree import TreeDef
from . import numba_tier
from .fuse import groups
from .program import _aval, pretty

__all__ = ["LISTED", "MAX_CHARS", "MAX_LINES", "jitted_html", "program_stats",
           "signature_text"]

MAX_LINES = 200           # of a listing or a source shown
MAX_CHARS = 20_000        # of a listing or a source shown
LISTED = 4                # signatures whose listings are shown: the newest
_e = html.escape
_STYLE = ("<style>.dualad-jit table{border-collapse:collapse}.dualad-jit th,.dualad-jit td"
          "{padding:2px 8px;text-align:left;vertical-align:top;border-bottom:1px solid #ddd}"
          ".dualad-jit pre{font-family:monospace;font-size:85%;max-height:30em;overflow:auto;"
          "background:#f7f7f7;padding:4px;margin:2px 0}</style>")


def program_stats(program: Any) -> dict[str, Any]:
    """``{"equations", "guards", "fused groups", "fused equations", "primitives"}`` of a
    recorded program: the counts, and the five most frequent primitives as
    ``[(name, count)]``."""
    eqns = program.eqns
    found = groups(program)
    return {"equations": len(eqns), "guards": len(program.guards),
            "fused groups": len(found),
            "fused equations": sum(len(g.members) for g in found),
            "primitives": Counter(e.prim.name for e in eqns).most_common(5)}


def _statics(key):
    """The static values of a cache key (:mod:`dualad.interpreters.staging.signature`):
    static leaves of the arguments, then ``argument=value`` per static argument. A fast key
    (positional arrays and floats only) has none."""
    if not (isinstance(key, tuple) and len(key) == 3 and key[0].__class__ is TreeDef):
        return []
    out = [_shown(k[2]) for k in key[1] if isinstance(k, tuple) and k[:1] == ("static",)]
    out += [f"{i if isinstance(i, str) else f'argument {i}'}={_shown(v[1])}"
            for i, v in key[2]]
    return out


def _shown(value):
    """A static value's ``repr``, shortened; a user's ``__repr__`` that raises shows the
    type instead (the view must not raise)."""
    try:
        return _short(repr(value))
    except Exception:  # noqa: BLE001 - any error of user code
        return f"<{type(value).__name__} object>"


def _short(text, limit=60):
    return text if len(text) <= limit else text[:limit - 3] + "..."


def signature_text(key: Any, program: Any) -> str:
    """A signature as ``(float64[3], float; static: 2)``: the program's inputs (type,
    shape, dtype as traced) and the static values of the cache ``key``."""
    inputs = ", ".join(f"{_aval(program.avals[v])}" for v in program.invars)
    statics = _statics(key)
    return f"({inputs}" + (f"; static: {', '.join(statics)}" if statics else "") + ")"


def _cut(text):
    """``text`` up to :data:`MAX_LINES` lines and :data:`MAX_CHARS` characters, and a last
    line saying how many lines were left out."""
    lines = text.splitlines()
    kept, size = [], 0
    for line in lines[:MAX_LINES]:
        size += len(line) + 1
        if size > MAX_CHARS:
            break
        kept.append(line)
    if len(kept) == len(lines):
        return text
    return "\n".join(kept + [f"... {len(lines) - len(kept)} more lines"])


def _signature(name, key, entry):
    """One signature's table rows and listing, or a line saying it runs without jit."""
    programs = list(entry.programs)
    if entry.eager or not programs:
        return (f"<tr><td colspan='6'>{entry.traces} trace(s): {_e(name)} runs without "
                f"jit for this signature (see the JitRetraceWarning)</td></tr>", "")
    compiled = programs[0][0]
    program = compiled.program
    stats = program_stats(program)
    prims = ", ".join(f"{p} {c}" for p, c in stats["primitives"])
    sig = signature_text(key, program)
    row = ("<tr>" + "".join(f"<td>{_e(str(c))}</td>" for c in (
        sig, entry.traces, len(programs), numba_tier.tier_of(compiled),
        f"{stats['equations']} equations ({prims}), {stats['guards']} guards",
        f"{stats['fused groups']} groups of {stats['fused equations']} equations")) + "</tr>")
    listing = (f"<p><b>{_e(name)}{_e(sig)}</b>, the newest program:</p>"
               f"<pre>{_e(_cut(pretty(program)))}</pre>"
               f"<details><summary>generated source</summary>"
               f"<pre>{_e(_cut(compiled.source))}</pre></details>")
    return row, listing


def jitted_html(jitted: Any) -> str:
    """The HTML fragment of a :class:`dualad.interpreters.staging.api.Jitted` (module
    docstring): a table of its signatures and each one's newest program."""
    name = jitted.name
    backend = jitted.backend or "numpy"
    entries = list(jitted._cache.items())   # a snapshot: another thread may trace meanwhile
    head = (f'<div class="dualad-jit" style="font-family:sans-serif;font-size:90%">{_STYLE}'
            f"<p><b>dualad.jit({_e(name)})</b>: backend {_e(backend)}, "
            f"{len(entries)} signature(s) traced so far</p>")
    if not entries:
        return (head + "<p>Not called yet: no program. Call it, or print its "
                "<code>.program(*args)</code> to trace one.</p></div>")
    rows, listings = zip(*(_signature(name, key, entry) for key, entry in entries))
    table = ("<table><tr><th>signature</th><th>traces</th><th>programs</th><th>replays on"
             "</th><th>program</th><th>fused (elementwise) groups</th></tr>"
             + "".join(rows) + "</table>")
    shown = [t for t in listings if t][-LISTED:]     # the newest signatures' listings
    more = sum(1 for t in listings if t) - len(shown)
    note = (f"<p>The listings of the {len(shown)} newest signatures; {more} older ones: "
            f"print <code>.program(*args)</code> with their arguments.</p>" if more else "")
    return head + table + note + "".join(shown) + "</div>"
