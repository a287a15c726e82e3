"""The teaching page: an evaluation trace as a self-contained, interactive HTML page.

The page shows the computational graph (inline SVG: inputs at the top, the output at the
bottom, one node per elementary operation ``v_i``, an edge from each operand; laid out by
:mod:`._evallayout` to fit a 700-pixel column at scale 1, so its text is 12 to 16 px)
beside the trace table, and steps through the sweep one elementary operation at a time:
the current row and the graph's node and edges light up, the tangent ``v̇_i`` (forward) or
adjoint ``v̄_i`` (reverse) appears as it is computed, and a caption says in plain words
what the step does. In the reverse sweep an adjoint that has received only ``i`` of its
``n`` contributions (a variable used ``n`` times) is shown as a partial sum, ``v̄_0 =
-0.284 + …`` with a "partial: i of n" pill, until its last contribution makes it final.
Controls: Step, Back, Reset, Play, and the keyboard (→ ←, Home, End, space).

Everything is inline (CSS, JavaScript, the data as JSON): no network, no fonts to fetch; it
works opened from ``file://``. Every string that comes from the user (a title, an input's
name) is escaped. Each rendering has its own element ids and its script only touches its
own root element, so several traces can share one notebook page.
"""
from __future__ import annotations

import html
import itertools
import json
import re
import secrets

from ._evalhtml_assets import CSS, JS
from ._evallayout import NODE_H, layout, node_width
from ._evalnodes import _fmt
from ._evalsteps import MAX_VALUE as _MAX_VALUE
from ._evalsteps import contributions, graph_of, input_labels, sweep_steps

__all__ = ["html_page", "html_fragment"]

_renders = itertools.count()
_SUB = re.compile(r"_(-?\d+|[ij](?![A-Za-z0-9]))")   # v_-1, v_2 and the generic v_i, v_j
_MAX_FORMULA = 24      # characters of a formula shown inside a graph node (all of it in the table)
_MARK = {"forward": "v̇", "reverse": "v̄"}
_SECTIONS = {"primal": "Primal trace: the values", "tangent": "Tangent trace: forward sweep",
             "adjoint": "Adjoint trace: reverse sweep", "result": "Result"}


def _math(text):
    """``text`` as HTML: escaped, with ``v_-1`` typeset as v<sub>−1</sub>."""
    return _SUB.sub(lambda m: f"<sub>{m.group(1).replace('-', '−')}</sub>", html.escape(text))


def _svg_math(text):
    """``text`` as SVG text content: escaped, subscripts as shifted tspans."""
    out, pos = [], 0
    for m in _SUB.finditer(text):
        out.append(html.escape(text[pos:m.start()]))
        out.append(f'<tspan baseline-shift="sub" font-size="80%">'
                   f'{m.group(1).replace("-", "−")}</tspan>')
        pos = m.end()
    out.append(html.escape(text[pos:]))
    return "".join(out)


def _short(text, limit=_MAX_FORMULA):
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _json_script(data):
    """JSON that cannot end its <script> element early (``</script>``) nor start a comment."""
    text = json.dumps(data, ensure_ascii=False, allow_nan=False)
    for a, b in (("&", "\\u0026"), ("<", "\\u003c"), (">", "\\u003e"),
                 ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(a, b)
    return text


def _node_lines(et, digits):
    """The text lines of the nodes as ``(serif, mono)`` parts, for the node width: the
    formula, the value, and each tangent or adjoint shown (a partial adjoint with its " + …")."""
    primal = {r.node: r for r in et.rows if r.section == "primal"}
    lines = [(f"{v} = {_short(r.formula)}", "") for v, r in primal.items()]
    lines += [("", f"= {_short(_fmt(r.value, digits), _MAX_VALUE)}") for r in primal.values()]
    partial = _partial_rows(et)
    lines += [(f"{r.name} = ", _short(_fmt(r.value, digits), _MAX_VALUE)
               + (" + …" if k in partial else ""))
              for k, r in enumerate(et.rows) if r.section in ("tangent", "adjoint")]
    return lines


def _svg(et, rid, digits):
    """The graph as inline SVG, and its width in CSS pixels (it is drawn at scale 1)."""
    graph = graph_of(et)
    w = node_width(_node_lines(et, digits))
    pos, (W, H), routes = layout(graph, w)
    primal = {r.node: r for r in et.rows if r.section == "primal"}
    labels, out_node = input_labels(et), _output_node(et)
    parts = [f'<svg class="dt-graph" viewBox="0 0 {W:.0f} {H:.0f}" role="img" '
             f'aria-label="computational graph" style="max-width:{W:.0f}px;min-width:{0.7 * W:.0f}px">',
             "<defs>"]
    for suffix, cls in (("arrow", "dt-arrow"), ("arrow-on", "dt-arrow-on")):
        parts.append(f'<marker id="{rid}-{suffix}" class="{cls}" viewBox="0 0 10 10" refX="9" '
                     f'refY="5" markerWidth="9" markerHeight="9" markerUnits="userSpaceOnUse" '
                     f'orient="auto-start-reverse">'
                     f'<path d="M0,0 L10,5 L0,10 z"/></marker>')
    parts.append("</defs>")
    for (p, v), points in routes.items():
        parts.append(f'<path class="dt-edge" data-edge="{html.escape(p + ">" + v)}" '
                     f'd="{_path(points)}" marker-end="url(#{rid}-arrow)"/>')
    for v in graph:
        parts.append(_svg_node(v, pos[v], w, primal[v], labels, out_node, et.mode, digits))
    parts.append("</svg>")
    return "".join(parts), W


def _path(points):
    """SVG path data through ``points`` (top to bottom), vertical at each of them: a cubic
    per stretch with its control points half way down; the last end 2 px short, where
    the arrowhead's tip is."""
    (x, y), d = points[0], [f"M{points[0][0]:.1f},{points[0][1]:.1f}"]
    for k, (x1, y1) in enumerate(points[1:], 2):
        y1 -= 2 if k == len(points) else 0
        c = (y1 - y) / 2
        d.append(f"C{x:.1f},{y + c:.1f} {x1:.1f},{y1 - c:.1f} {x1:.1f},{y1:.1f}")
        x, y = x1, y1
    return " ".join(d)


def _svg_node(v, xy, w, row, labels, out_node, mode, digits):
    """One node: its box, the formula, value and derivative lines, and its badges (the
    "input"/"output y" badge above its right end; in reverse mode, the "partial: i of n"
    pill on its top-left border, filled in by the script while the adjoint is partial, when
    it takes the place of an input's badge)."""
    kind = " dt-input" if v in labels else ""
    kind += " dt-output" if v == out_node else ""
    badge = "input" if v in labels else ("output y" if v == out_node else "")
    value = _fmt(row.value, digits)
    return (
        f'<g class="dt-node{kind}" data-node="{html.escape(v)}" '
        f'transform="translate({xy[0]:.1f},{xy[1]:.1f})">'
        f"<title>{html.escape(f'{v} = {row.formula} = {value}')}</title>"
        f'<rect width="{w}" height="{NODE_H}" rx="10"/>'
        + (f'<text class="dt-badge" x="{w - 4}" y="-7" text-anchor="end">{badge}</text>'
           if badge else "")
        + ('<g class="dt-pbadge"><rect x="8" y="-9" height="18" rx="9" width="0"/>'
           '<text x="16" y="4.5"></text></g>' if mode == "reverse" else "") +
        f'<text class="dt-l1" x="12" y="24">{_svg_math(v)} = '
        f'{_svg_math(_short(row.formula))}</text>'
        f'<text class="dt-l2" x="12" y="45">= {html.escape(_short(value, _MAX_VALUE))}</text>'
        f'<text class="dt-l3" x="12" y="65">{_svg_math(_MARK[mode] + v[1:])} = '
        f'<tspan class="dt-dv">?</tspan></text></g>')


def _output_node(et):
    """The node of ``y``: the forward result's, or where the reverse sweep is seeded."""
    if et.mode == "forward":
        return next(r.node for r in et.rows if r.section == "result")
    return next(r.node for r in et.rows if r.section == "adjoint")


def _partial_rows(et):
    """``{row index: (i, n)}``: the reverse sweep's rows after which their adjoint is
    still a partial sum, ``i`` of its ``n`` contributions in."""
    if et.mode != "reverse":
        return {}
    return {k: (i, n) for k, (i, n, final) in contributions(et).items() if not final}


def _table(et, digits):
    out = ['<table class="dt-table"><thead><tr><th>variable</th><th>formula</th>'
           '<th class="dt-num">value</th></tr></thead><tbody>']
    section, partial = None, _partial_rows(et)
    for k, r in enumerate(et.rows):
        if r.section != section:
            section = r.section
            out.append(f'<tr class="dt-sec"><td colspan="3">{_SECTIONS[section]}</td></tr>')
        name, formula, value = r.cells(digits)
        if section == "primal":
            out.append(f'<tr class="dt-primal"><td class="dt-name">{_math(name)}</td>'
                       f'<td>{_math(formula)}</td><td class="dt-num">{html.escape(value)}'
                       f'</td></tr>')
        else:   # the value appears when its step runs (see the script)
            part = (f' dt-partial" title="partial: {partial[k][0]} of {partial[k][1]} '
                    f'contributions' if k in partial else "")
            out.append(f'<tr class="dt-row{part}" data-row="{k}"><td class="dt-name">'
                       f'{_math(name)}</td><td>{_math(formula)}</td>'
                       f'<td class="dt-num dt-val"></td></tr>')
    out.append("</tbody></table>")
    return "".join(out)


def _panel_data(et, digits):
    steps = sweep_steps(et, digits)
    for s in steps:
        s["lead"], s["caption"] = _math(s["lead"]), _math(s["caption"])
    intro = (
        "The primal trace has evaluated f one elementary operation at a time. Press Step "
        "(or →) to run the forward sweep: each tangent v̇_i follows from its operands' "
        "tangents by the chain rule, in the same order as the values."
        if et.mode == "forward" else
        "The primal trace has been recorded. Press Step (or →) to run the reverse sweep: "
        "from ȳ backwards, each operation v_i passes v̄_i · ∂v_i/∂v_j to each operand v_j; "
        "a variable used more than once accumulates one contribution per use.")
    partial = _partial_rows(et)
    rows = {k: _fmt(r.value, digits) + (" + …" if k in partial else "")
            for k, r in enumerate(et.rows) if r.section != "primal"}
    return {"mode": et.mode, "mark": _MARK[et.mode], "intro": _math(intro),
            "rows": rows, "steps": steps}


def _summary(et):
    chips = [f"{html.escape(k)}: <b>{v}</b>" for k, v in et.op_counts.items()]
    detail = ", ".join(f"{html.escape(k)} {v}" for k, v in et.sweep_counts.items())
    text = " · ".join(chips) + (f" <span class='dt-detail'>({detail})</span>" if detail else "")
    if et.uncounted:
        text += f"; not counted: the rules of {html.escape(', '.join(sorted(et.uncounted)))}"
    return f'<p class="dt-summary">Operation counts: {text}</p>'


def _legend(et):
    mark = _MARK[et.mode]
    what = "its tangent" if et.mode == "forward" else "its adjoint"
    return _math(
        f"Reading the graph: each box is one elementary operation v_i with its formula, "
        f"its value and {what} {mark}_i (“?” until the sweep reaches it). Amber: the "
        f"current step; coloured: already computed") + (
        _math("; dashed: the operation whose adjoint is flowing back to its operand. "
              "Orange, ") + '<span class="dt-partial-key">' + _math("v̄_i = 0.42 + …")
        + "</span>" + _math(
            " with a “partial: 1 of 2” pill: the adjoint of a variable used more than once "
            "that has received only some of its contributions, a partial sum, not yet "
            "∂y/∂v_i; it becomes final (no “+ …”) when the last one arrives.")
        if et.mode == "reverse" else ".")


def _panel(et, rid, k, digits, hidden):
    labels = input_labels(et)
    if et.mode == "forward":
        seed = ", ".join(_fmt(r.value, digits) for r in et.rows
                         if r.section == "tangent" and r.node in labels)
        what = f"tangents v̇ along ẋ = ({seed})"
    else:
        ybar = next(r.value for r in et.rows if r.section == "adjoint")
        what = f"adjoints v̄ from ȳ = {_fmt(ybar, digits)}"
    svg, width = _svg(et, rid + f"-{k}", digits)
    return (
        f'<section class="dt-panel dt-{et.mode}" id="{rid}-panel-{k}" role="tabpanel"'
        f'{" hidden" if hidden else ""}>'
        f'<script type="application/json" class="dt-data">{_json_script(_panel_data(et, digits))}'
        f"</script>"
        # the graph's column: as wide as the picture and its box's padding, the table the rest
        f'<div class="dt-main" style="--dt-graph-w:{width + 24:.0f}px"><div class="dt-left">'
        f'<p class="dt-what">{et.mode.capitalize()} mode: {_math(what)}</p>'
        '<div class="dt-controls">'
        '<button type="button" data-act="reset" title="Reset (Home)">↺ Reset</button>'
        '<button type="button" data-act="back" title="Back (←)">◀ Back</button>'
        '<button type="button" data-act="step" class="dt-primary" title="Step (→)">'
        "Step ▶</button>"
        '<button type="button" data-act="play" title="Play / pause (space)">Play</button>'
        '<span class="dt-count"></span></div>'
        '<div class="dt-caption" aria-live="polite"><div class="dt-lead"></div>'
        '<div class="dt-text"></div></div>'
        f'<div class="dt-card dt-graphcard">{svg}</div>'
        f'{_summary(et)}<p class="dt-legend">{_legend(et)}</p></div>'
        f'<div class="dt-card dt-tablecard">{_table(et, digits)}</div></div></section>')


def _check(traces, digits, where):
    if not traces:
        raise TypeError(f"{where}: give at least one EvaluationTrace (from dualad.teaching.trace)")
    for t in traces:
        if getattr(t, "mode", None) == "taylor" and hasattr(t, "rows"):
            raise ValueError(f"{where}: the page steps through forward and reverse sweeps; "
                             f"show a taylor trace with to_text() or to_markdown()")
        if getattr(t, "mode", None) not in ("forward", "reverse") or not hasattr(t, "rows"):
            raise TypeError(f"{where}: expected EvaluationTrace objects (from "
                            f"dualad.teaching.trace), got {type(t).__name__}")
    if isinstance(digits, bool) or not isinstance(digits, int) or not 0 <= digits <= 17:
        raise ValueError(f"{where}: digits must be an integer from 0 to 17, got {digits!r}")


def html_fragment(*traces, title=None, digits=3):
    """An embeddable HTML fragment showing one or more evaluation traces, step by step.

    The fragment carries its own ``<style>`` (scoped to its root element's class) and
    ``<script>`` (which only touches its own root, found by a unique id), so several
    fragments can share a page, as in a Jupyter notebook. With several traces (say a
    forward and a reverse one of the same function), each gets a tab.

    Parameters
    ----------
    *traces : EvaluationTrace
        The traces to show, each from :func:`dualad.teaching.trace`.
    title : str, optional
        The heading, e.g. the function's formula; escaped. Default "Evaluation trace".
    digits : int, optional
        Decimals shown (0 to 17), default 3.

    Returns
    -------
    str
        The HTML fragment: a ``<div>`` with its style and script.

    See Also
    --------
    html_page : The same as a whole, self-contained document.

    Examples
    --------
    >>> from dualad.teaching import trace, html_fragment
    >>> f = lambda x1, x2: np.log(x1) + x1 * x2 - np.sin(x2)
    >>> part = html_fragment(trace(f, 2.0, 5.0), trace(f, 2.0, 5.0, mode="reverse"))
    >>> part.startswith('<div class="dualad-trace"')
    True
    """
    _check(traces, digits, "html_fragment")
    rid = f"dualad-trace-{next(_renders)}-{secrets.token_hex(4)}"
    title = "Evaluation trace" if title is None else str(title)
    labels = input_labels(traces[0])
    point = ", ".join(f"{labels[r.node]} = {_fmt(r.value, digits)}" for r in traces[0].rows
                      if r.section == "primal" and r.node in labels)
    tabs = ""
    if len(traces) > 1:
        tabs = '<div class="dt-tabs" role="tablist">' + "".join(
            f'<button type="button" class="dt-tab" role="tab" data-tab="{k}" '
            f'aria-controls="{rid}-panel-{k}" aria-selected="{"true" if k == 0 else "false"}">'
            f'{t.mode.capitalize()} sweep <span class="dt-tabmark">'
            f'{"tangents v̇" if t.mode == "forward" else "adjoints v̄"}</span></button>'
            for k, t in enumerate(traces)) + "</div>"
    panels = "".join(_panel(t, rid, k, digits, hidden=k > 0) for k, t in enumerate(traces))
    return (f'<div class="dualad-trace" id="{rid}" tabindex="0">'
            f"<style>{CSS}</style>"
            f'<header class="dt-head"><h2 class="dt-title">{_math(title)}</h2>'
            f'<p class="dt-point">at {_math(point)}</p></header>{tabs}{panels}'
            '<p class="dt-keys">Keys: → step, ← back, Home reset, End last step, space play.</p>'
            f'<script>({JS})(document.getElementById("{rid}"));</script></div>')


def html_page(*traces, title=None, digits=3):
    """A self-contained HTML document showing one or more evaluation traces, step by step.

    Everything is inline (no network, no external fonts); it works opened from
    ``file://``. Pass a forward and a reverse trace of the same function to get both
    sweeps, one tab each; the arrow keys step the visible one.

    Parameters
    ----------
    *traces : EvaluationTrace
        The traces to show, each from :func:`dualad.teaching.trace`.
    title : str, optional
        The heading and the document's title, e.g. the function's formula; escaped.
        Default "Evaluation trace".
    digits : int, optional
        Decimals shown (0 to 17), default 3.

    Returns
    -------
    str
        The HTML document.

    See Also
    --------
    html_fragment : The embeddable part (what Jupyter shows inline).

    Examples
    --------
    >>> from dualad.teaching import trace, html_page
    >>> f = lambda x1, x2: np.log(x1) + x1 * x2 - np.sin(x2)
    >>> page = html_page(trace(f, 2.0, 5.0), trace(f, 2.0, 5.0, mode="reverse"),
    ...                  title="f = ln x1 + x1 x2 − sin x2")
    >>> page.startswith("<!DOCTYPE html>")
    True
    """
    _check(traces, digits, "html_page")
    body = html_fragment(*traces, title=title, digits=digits)
    body = body.replace('class="dualad-trace"', 'class="dualad-trace" data-standalone="1"', 1)
    name = "Evaluation trace" if title is None else str(title)
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{html.escape(name)} · dualad</title>"
            "<style>html,body{margin:0;background:#eef1f5}"
            "body{padding:24px}</style></head>"
            f"<body>{body}</body></html>\n")
