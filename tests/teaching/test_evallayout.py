"""The teaching page's graph layout (dualad.teaching._evallayout): top to bottom, wide
layers wrapped, never wider than the page's graph column, boxes that do not overlap and
edges that go down from an operand to its user. (The browser test measures the rendered
text sizes; these check the geometry without a browser.)"""
import re

import numpy as np
import pytest

from dualad.teaching import html_page, trace
from dualad.teaching._evallayout import NODE_H, TARGET_WIDTH, layout, node_width
from dualad.teaching._evalsteps import graph_of


def four(x1, x2, x3, x4):
    return x1 * x2 + np.sin(x3) * x4 - np.log(x1) * x3 + np.exp(x2 * x4) / x3


def six(x1, x2, x3, x4, x5, x6):
    return (np.tanh(x1 * x2 + x3) * np.sin(x4 - x5 * x6) + np.log(x1 + x2 * x2)
            - np.sqrt(x3 * x4 + x5) * np.exp(x6 / x1) + x2 * x6)


def survey(x1, x2):
    return np.log(x1) + x1 * x2 - np.sin(x2)


CASES = {"survey": (survey, (2.0, 5.0)), "four": (four, (2.0, 0.5, 1.5, 0.3)),
         "six": (six, (1.0, 2.0, 3.0, 0.5, 0.25, 0.1)),
         "long formula": (lambda x: np.arctan(x) * np.expm1(x) + np.log1p(x * x), (0.5,)),
         "arrays": (lambda a, b: np.sum(a * b + np.exp(a) / b),
                    (np.linspace(-1.0, 1.0, 6), np.linspace(2.0, 7.0, 6)))}


def svg_geometry(page):
    """The first panel's viewBox width and ``{node: (x, y)}``, its box width, its edges."""
    svg = page[page.index("<svg"):page.index("</svg>")]
    W, H = map(float, re.search(r'viewBox="0 0 ([\d.]+) ([\d.]+)"', svg).groups())
    pos = {m[0]: (float(m[1]), float(m[2])) for m in re.findall(
        r'data-node="([^"]+)" transform="translate\(([\d.]+),([\d.]+)\)"', svg)}
    widths = set(re.findall(r'<rect width="(\d+)" height="%d"' % NODE_H, svg))
    edges = {tuple(e.split("&gt;")): [tuple(map(float, xy.split(","))) for xy in
                                       re.findall(r"[\d.]+,[\d.]+", d)]
             for e, d in re.findall(r'data-edge="([^"]+)" d="([^"]+)"', svg)}
    return (W, H), pos, widths, edges


def curve_points(d, n=24):
    """Points along a path ``M p0 C c1 c2 p1 C ...``, ``n`` per cubic."""
    pts, out = d[0], []
    for k in range(1, len(d), 3):
        (x0, y0), (x1, y1), (x2, y2), (x3, y3) = pts, *d[k:k + 3]
        for t in np.linspace(0, 1, n):
            u = 1 - t
            out.append((u ** 3 * x0 + 3 * u * u * t * x1 + 3 * u * t * t * x2 + t ** 3 * x3,
                        u ** 3 * y0 + 3 * u * u * t * y1 + 3 * u * t * t * y2 + t ** 3 * y3))
        pts = d[k + 2]
    return out


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_the_graph_fits_the_column_without_overlap(name, mode):
    fn, args = CASES[name]
    et = trace(fn, *args, mode=mode)
    (W, H), pos, widths, edges = svg_geometry(html_page(et))
    assert len(widths) == 1
    w = int(widths.pop())
    assert W <= TARGET_WIDTH
    assert len(pos) == len(et.nodes)
    for v, (x, y) in pos.items():                       # inside the picture
        assert 0 <= x and x + w <= W and 0 < y and y + NODE_H <= H, v
    boxes = list(pos.values())
    for i, (x0, y0) in enumerate(boxes):                # no two boxes overlap
        for x1, y1 in boxes[i + 1:]:
            assert abs(x0 - x1) >= w or abs(y0 - y1) >= NODE_H
    for (p, v), d in edges.items():                     # every edge goes down ...
        assert pos[v][1] >= pos[p][1] + NODE_H, (p, v)
        ends = [d[0]] + d[3::3]                         # M, then each cubic's end point
        assert ends[0][1] == pos[p][1] + NODE_H and ends[-1][1] == pos[v][1] - 2
        assert all(y0 < y1 for (_, y0), (_, y1) in zip(ends, ends[1:])), (p, v)
        for x, y in curve_points(d):                    # ... and never through a box
            assert not any(bx < x < bx + w and by < y < by + NODE_H
                           for bx, by in pos.values()), (p, v, x, y)
    graph = graph_of(et)
    assert sorted(edges) == sorted((p, v) for v, ps in graph.items() for p in ps)


def test_four_inputs_share_one_row_and_the_output_is_last():
    et = trace(four, 2.0, 0.5, 1.5, 0.3, mode="reverse")
    (W, H), pos, _, _ = svg_geometry(html_page(et))
    inputs = ["v_-3", "v_-2", "v_-1", "v_0"]
    assert len({pos[v][1] for v in inputs}) == 1            # one row: no wrapping needed
    assert [pos[v][0] for v in inputs] == sorted(pos[v][0] for v in inputs)
    assert pos["v_11"][1] == max(y for _, y in pos.values())  # the output at the bottom
    assert pos["v_11"][1] > min(y for _, y in pos.values())


def test_a_wide_layer_wraps_onto_rows_of_equal_length():
    """Ten inputs (a sum of products) cannot share one row of the column: they wrap onto
    rows of equal length, and the picture stays as wide as the column."""
    graph = {f"v_{-k}": [] for k in range(9, -1, -1)}
    graph["v_1"] = list(graph)
    pos, (W, H), routes = layout(graph, 150)
    rows = {}
    for v in list(graph)[:10]:
        rows.setdefault(pos[v][1], []).append(v)
    per_row = (TARGET_WIDTH - 2 * 6 + 12) // (150 + 12)       # 4 boxes of 150 fit
    assert per_row == 4 and W <= TARGET_WIDTH
    assert sorted(map(len, rows.values())) == [3, 3, 4]     # 10 = 4 + 3 + 3, not 4 + 4 + 2
    assert pos["v_1"][1] > max(rows)
    # the ten edges into v_1 enter its top side at distinct points, left to right
    ends = [routes[(p, "v_1")][-1] for p in list(graph)[:10]]
    assert all(y == pos["v_1"][1] for _, y in ends)
    assert len({x for x, _ in ends}) == 10
    assert all(pos["v_1"][0] <= x <= pos["v_1"][0] + 150 for x, _ in ends)


def test_a_box_wider_than_the_column_still_gets_a_row():
    pos, (W, H), _ = layout({"a": [], "b": ["a"]}, TARGET_WIDTH + 50)
    assert W == TARGET_WIDTH + 50 + 12 and pos["b"][1] > pos["a"][1]


def test_node_width_grows_with_the_longest_line():
    short = node_width([("v_1 = v_0", "")])
    assert short == 120                                   # the minimum
    longer = node_width([("v_12 = v_-3 × v_-2", ""), ("v̄_12 = ", "-0.284 + …")])
    assert longer > short
    assert node_width([("", "x" * 30)]) > node_width([("", "x" * 10)])
