"""Where the teaching page (:mod:`.evalhtml`) draws each node of the computational graph.

The graph is laid out top to bottom: the inputs in the first row, each elementary
operation ``v_i`` one layer below its deepest operand (its depth is the longest path from
an input), the output last. A layer holding more nodes than fit side by side in
``TARGET_WIDTH`` wraps onto several rows of equal length, so a wide function grows
downwards instead of sideways. The page gives the graph a column as wide as the picture
(at most 700 CSS pixels with its box's padding) beside the table, or the whole width above
the table when the view is narrower than about 1280 pixels, so the SVG is drawn at scale
1, where its text has the size the stylesheet gives it (12 to 16 px). Within a layer, nodes are sorted by their
operands' mean horizontal position (one barycentre pass), which untangles the usual
small trace.

An edge leaves its operand's bottom side and enters its user's top side; when several
edges meet one side they are spread along it, ordered by where the other end lies, so
that they do not cross at the node. An edge that skips rows goes down through a gap
between the boxes of each row it passes, so no edge runs behind a box.
"""
from __future__ import annotations

import math
import unicodedata

__all__ = ["layout", "node_width", "NODE_H", "TARGET_WIDTH"]

TARGET_WIDTH = 672      # the graph box's inner width, in CSS pixels (CSS .dt-main: 700 - 28)
NODE_H = 74
_GAP_X, _GAP_Y, _PAD, _PAD_TOP = 12, 48, 6, 22     # _PAD_TOP: room for the first row's badges
# Approximate advance widths in CSS pixels (the node text's fonts, see the stylesheet): a
# character of the 16 px serif formula line, of its 80 % subscripts, of the 13.5 px
# monospace value lines. Generous, so a label fits whichever of the fallback fonts is used.
_SERIF, _SUB, _MONO = 9.2, 7.4, 8.2


def _text_width(text):
    """Width of a formula line ``v_2 = v_-1 × v_0``: subscripts are set smaller."""
    total, sub = 0.0, False
    for ch in text:
        if ch == "_":
            sub = True
            continue
        if sub and not (ch.isdigit() or ch == "-"):
            sub = False
        if not unicodedata.combining(ch):
            total += _SUB if sub else _SERIF
    return total


def node_width(lines):
    """The common node width: the longest of the node lines, each a pair ``(serif,
    mono)`` of its parts in the formula font (``"v_2 = v_-1 × v_0"``, ``"v̄_2 = "``)
    and in the monospace font of the values (``"10.000 + …"``), plus the padding."""
    longest = max(_text_width(serif) + len(mono) * _MONO for serif, mono in lines)
    return int(max(120, math.ceil(longest) + 20))   # 12 px left of the text, 8 right


def _layers(graph):
    depth = {}
    for v, parents in graph.items():
        depth[v] = 0 if not parents else 1 + max(depth[p] for p in parents)
    layers = {}
    for v in graph:
        layers.setdefault(depth[v], []).append(v)
    return [layers[d] for d in sorted(layers)]


def layout(graph, width):
    """``(pos, size, routes)`` for the graph ``{node: [operands]}`` with nodes ``width``
    wide: ``pos[v]`` the top-left corner of ``v``'s box, ``size`` the picture's
    ``(W, H)``, ``routes[(p, v)]`` the edge's points, from its start on ``p``'s bottom
    side to its end on ``v``'s top side (see :func:`_routes`)."""
    per_row = max(1, (TARGET_WIDTH - 2 * _PAD + _GAP_X) // (width + _GAP_X))
    W = 2 * _PAD + min(per_row, max(map(len, _layers(graph)))) * (width + _GAP_X) - _GAP_X
    pos, rows, y = {}, [], _PAD_TOP
    for layer in _layers(graph):
        if graph[layer[0]]:      # below the inputs: by the operands' mean centre
            layer.sort(key=lambda v: sum(pos[p][0] for p in graph[v]) / len(graph[v]))
        n_rows = math.ceil(len(layer) / per_row)
        sizes = [len(layer) // n_rows + (r < len(layer) % n_rows) for r in range(n_rows)]
        for r, size in enumerate(sizes):      # rows of equal length (10 = 4 + 3 + 3)
            row, layer = layer[:size], layer[size:]
            x0 = (W - len(row) * (width + _GAP_X) + _GAP_X) / 2
            for i, v in enumerate(row):
                pos[v] = (x0 + i * (width + _GAP_X), y)
            rows.append((y, [pos[v][0] for v in row]))
            y += NODE_H + _GAP_Y
    return pos, (W, y - _GAP_Y + _PAD), _routes(graph, pos, width, rows, W)


def _anchors(graph, pos, width):
    """Each edge's end points, spread along the sides they share (see the module doc)."""
    users = {v: [] for v in graph}
    for v, parents in graph.items():
        for p in parents:
            users[p].append(v)
    centre = {v: pos[v][0] + width / 2 for v in graph}

    def spread(v, others):
        others = sorted(others, key=lambda o: (centre[o], pos[o][1]))
        span = min(width - 24, 26 * (len(others) - 1))
        return {o: centre[v] - span / 2 + (span * i / (len(others) - 1) if len(others) > 1
                                           else span / 2) for i, o in enumerate(others)}
    out = {p: spread(p, users[p]) for p in graph if users[p]}
    into = {v: spread(v, graph[v]) for v in graph if graph[v]}
    return {(p, v): ((out[p][v], pos[p][1] + NODE_H), (into[v][p], pos[v][1]))
            for v in graph for p in graph[v]}


def _routes(graph, pos, width, rows, W):
    """Each edge's points. An edge that skips rows (an input used far below) passes each
    row in between through the gap between two boxes, or beside the row, nearest to the
    straight line, entering it 6 px above and leaving it 6 px below, so it is never
    hidden behind a box nor mistaken for an edge into one."""
    routes = {}
    for (p, v), (a, b) in _anchors(graph, pos, width).items():
        points = [a]
        for y, lefts in rows:
            if a[1] < y and y + NODE_H < b[1]:
                t = (y + NODE_H / 2 - a[1]) / (b[1] - a[1])
                want = a[0] + t * (b[0] - a[0])
                gaps = [lefts[0] - _GAP_X / 2, lefts[-1] + width + _GAP_X / 2] + [
                    x + width + _GAP_X / 2 for x in lefts[:-1]]
                x = min((min(max(g, 2), W - 2) for g in gaps), key=lambda g: abs(g - want))
                points += [(x, y - 6), (x, y + NODE_H + 6)]
        routes[(p, v)] = points + [b]
    return routes
