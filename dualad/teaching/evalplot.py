"""A PNG of an evaluation trace's graph, drawn with matplotlib (optional ``plot`` extra).

Nodes are placed in layers by depth (inputs left, output right) and labelled
with their value and their tangent (forward) or adjoint (reverse).
"""
from __future__ import annotations

from ._evalnodes import _derivative_label, _fmt, _parents

__all__ = ["draw_graph"]


def draw_graph(et, path, digits=3):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("drawing a trace needs matplotlib: pip install 'dualad[plot]'; "
                          "EvaluationTrace.to_dot() needs nothing") from e

    depth = {}
    for node in et.nodes:
        ps = _parents(node)
        depth[node] = 0 if not ps else 1 + max(depth[p] for p in ps)
    layers = {}
    for node in et.nodes:
        layers.setdefault(depth[node], []).append(node)
    pos = {}
    for d, nodes in layers.items():
        for k, node in enumerate(nodes):
            pos[node] = (d * 3.0, -(k - (len(nodes) - 1) / 2) * 1.6)
    width = 3.0 * (max(layers) + 1) + 1
    height = 1.6 * max(len(v) for v in layers.values()) + 1
    fig, ax = plt.subplots(figsize=(min(2.2 * width / 3 + 2, 30), min(height + 1, 30)))
    for node in et.nodes:
        for p in _parents(node):
            (x0, y0), (x1, y1) = pos[p], pos[node]
            ax.annotate("", xy=(x1 - 0.9, y1), xytext=(x0 + 0.9, y0),
                        arrowprops=dict(arrowstyle="->", color="0.4"))
    for node in et.nodes:
        x, y = pos[node]
        label = f"{et.names[node]} = {_fmt(node.value, digits)}"
        d = et.derivative_of.get(node)
        if d is not None:
            label += f"\n{_derivative_label(et.mode, et.names[node])} = {_fmt(d, digits)}"
        ax.text(x, y, label, ha="center", va="center", fontsize=9,
                bbox=dict(boxstyle="round", fc="#eef3fb", ec="#35609a"))
    ax.set_xlim(-1.5, width - 1)
    ax.set_ylim(-height / 2 - 0.5, height / 2 + 0.5)
    ax.axis("off")
    ax.set_title(f"{et.mode} mode evaluation trace")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
