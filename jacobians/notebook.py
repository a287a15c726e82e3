"""Notebook views of a Jacobian plan: ``Plan._repr_html_`` and ``Plan.plot``.

The HTML view is :meth:`jacobians.plan.Plan.explain` laid out as tables — the facts (sizes,
census, sparsity, colorings, the chosen mode and why), one row per alternative with its
directions, sweeps and estimated seconds per Jacobian (modelled or timed), what was timed
and what planning cost — beside a picture of the sparsity pattern: each structural
nonzero ``J[i, j]`` drawn in the color of the seed that recovers it,

    sparse-forward        the color of column j   (J[i, j] = (J S)[i, color(j)])
    sparse-reverse        the color of row i      (J[i, j] = (Sᵀ J)[color(i), j])
    sparse-bidirectional  column j's forward color where the forward product reads it,
                          else row i's reverse color (a star bicoloring reads each entry
                          from one of them; an acyclic one by substitution: drawn by the
                          seeds alone, forward where column j is seeded)
    dense modes           one gray: the pattern, which the chosen mode does not use

The picture is an indexed PNG (one byte a pixel, written here with :mod:`zlib`: no
matplotlib) in a ``data:`` URI, at most :data:`MAX_SIDE` pixels a side whatever the
pattern's size: a larger pattern is downsampled, each pixel a block of rows x columns
drawn in the highest palette index among its entries (reverse hues over forward ones
over gray), and the caption says so. Every text is HTML-escaped (``<lambda>`` is a name).

``Plan.plot(ax)`` draws the same raster with matplotlib (imported at the call: the
``plot`` extra) at full resolution up to :data:`PLOT_SIDE` a side.
"""
from __future__ import annotations

import base64
import html
import struct
import zlib
from typing import TYPE_CHECKING, Any

import numpy as np

from .bicoloring import recoverable
from .cost import _fmt

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["MAX_SIDE", "PLOT_SIDE", "Raster", "raster", "plan_html", "plot_plan", "png"]

MAX_SIDE = 256      # the HTML picture: at most 256 x 256 one-byte pixels (64 KB raw)
PLOT_SIDE = 1024    # Plan.plot: at most 1024 x 1024 cells
HUES = 10           # colors beyond ten repeat their hue (color k drawn as k mod 10)
_FORWARD = ((31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40), (148, 103, 189),
            (140, 86, 75), (227, 119, 194), (188, 189, 34), (23, 190, 207), (128, 0, 64))
# palette index 0: empty, 1: a nonzero of a dense mode, 2-11: forward colors, 12-21:
# reverse colors (the forward hues darkened, so a bicoloring's two sides differ)
PALETTE = np.array([(255, 255, 255), (90, 90, 90)] + list(_FORWARD)
                   + [tuple(c * 3 // 5 for c in rgb) for rgb in _FORWARD], np.uint8)
GRAY, FORWARD, REVERSE = 1, 2, 2 + HUES


class Raster:
    """The pattern as an ``h x w`` image of palette indices (``image``, uint8).

    ``block``: ``(rows, columns)`` of the Jacobian per pixel (``(1, 1)``: not downsampled);
    ``shape``: the Jacobian's ``(m, n)``; ``legend``: ``[(palette index, label)]`` of the
    colors drawn; ``caption``: what the picture shows, in words.
    """

    __slots__ = ("image", "block", "shape", "legend", "caption")

    def __init__(self, image, block, shape, legend, caption):
        self.image, self.block, self.shape = image, block, shape
        self.legend, self.caption = legend, caption

    def rgb(self) -> np.ndarray:
        """The image as ``h x w x 3`` uint8 RGB."""
        return PALETTE[self.image]


def _drawn(plan):
    """``(plan whose pattern is drawn, what it is)``: the inner plan of a plan through its
    input selections (its ``J_g`` is what the sweeps compute), else the plan itself."""
    through = plan.through
    if through is None or getattr(through, "kind", None) == "mixed":
        return plan, f"the pattern of J ({plan.m} x {plan.n})"
    inner = through.inner
    return inner, (f"the pattern of J_g ({inner.m} x {inner.n}), the inner function's "
                   f"Jacobian (the plan goes through the input selections)")


def _entry_colors(plan, i, j):
    """Each entry's palette index and the legend, by the chosen mode (module docstring)."""
    mode = plan.mode
    if mode == "sparse-forward" and plan.column_coloring is not None:
        c = plan.column_coloring.colors.take(j)
        return FORWARD + c % HUES, _legend(FORWARD, plan.column_coloring.ncolors,
                                           "column color")
    if mode == "sparse-reverse" and plan.row_coloring is not None:
        c = plan.row_coloring.colors.take(i)
        return REVERSE + c % HUES, _legend(REVERSE, plan.row_coloring.ncolors, "row color")
    b = plan.bicoloring
    if mode == "sparse-bidirectional" and b is not None:
        cc, rc = b.column_colors.take(j), b.row_colors.take(i)
        if hasattr(b, "trees"):          # acyclic: recovered by substitution
            by_column = cc >= 0
        else:
            by_column = recoverable(plan.sparsity.pattern, b.column_colors, b.row_colors)[0]
        colors = np.where(by_column, FORWARD + cc % HUES, REVERSE + rc % HUES)
        return colors, (_legend(FORWARD, b.ncolors_forward, "forward (column) color")
                        + _legend(REVERSE, b.ncolors_reverse, "reverse (row) color"))
    return np.full(len(i), GRAY), [(GRAY, "structural nonzero (no coloring used)")]


def _legend(base, k, what):
    """Labels of ``k`` colors drawn from palette index ``base`` (hues repeat past ten)."""
    labels = []
    for h in range(min(k, HUES)):
        same = range(h, k, HUES)
        names = ", ".join(str(c) for c in list(same)[:3]) + (", ..." if len(same) > 3 else "")
        labels.append((base + h, f"{what} {names}"))
    return labels


def raster(plan: Any, max_side: int = MAX_SIDE) -> Raster | None:
    """The plan's pattern as a :class:`Raster` at most ``max_side`` pixels a side (None
    when the plan has no pattern: no detection ran, or it was refused).

    Entry ``(i, j)`` of an ``m x n`` pattern falls in pixel ``(i * h // m, j * w // n)``
    with ``h = min(m, max_side)``, ``w = min(n, max_side)``; a pixel holding several
    entries takes the highest palette index among them.
    """
    target, what = _drawn(plan)
    if target.sparsity is None:
        return None
    pattern = target.sparsity.pattern.tocsr()
    m, n = pattern.shape
    i = np.repeat(np.arange(m, dtype=np.int64), np.diff(pattern.indptr))
    j = pattern.indices.astype(np.int64)
    colors, legend = _entry_colors(target, i, j)
    h, w = max(1, min(m, max_side)), max(1, min(n, max_side))
    image = np.zeros((h, w), np.uint8)
    np.maximum.at(image.reshape(-1), (i * h // max(m, 1)) * w + j * w // max(n, 1),
                  np.asarray(colors, np.uint8))
    block = (-(-m // h) if m else 1, -(-n // w) if n else 1)
    caption = f"{what}, {pattern.nnz} structural nonzeros, colored by {target.mode}"
    if m == n and m > 1 and (pattern != pattern.T).nnz == 0:
        caption += (" (a symmetric pattern, as a Hessian's: jacobians.sparse_hessian colors "
                    "it by a star or acyclic coloring, often with fewer colors)")
    if block != (1, 1):
        caption += (f"; downsampled to {h} x {w} pixels, each a block of up to {block[0]} "
                    f"x {block[1]} entries drawn in one of its entries' colors")
    if any(label.endswith("...") for _, label in legend):
        caption += f"; colors past {HUES} repeat the hues"
    return Raster(image, block, (m, n), legend, caption)


def png(image: np.ndarray, palette: np.ndarray = PALETTE) -> bytes:
    """An indexed-color PNG (8 bits a pixel) of ``image`` (h x w, uint8 palette indices)."""
    h, w = image.shape

    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = np.hstack([np.zeros((h, 1), np.uint8), image.astype(np.uint8)])  # filter 0
    return (b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 3, 0, 0, 0))
            + chunk(b"PLTE", np.ascontiguousarray(palette, np.uint8).tobytes())
            + chunk(b"IDAT", zlib.compress(rows.tobytes(), 9)) + chunk(b"IEND", b""))


_e = html.escape
_STYLE = ("<style>.dualad-plan table{border-collapse:collapse}.dualad-plan th,.dualad-plan td"
          "{padding:2px 8px;text-align:left;vertical-align:top;border-bottom:1px solid #ddd}"
          ".dualad-plan tr.chosen{font-weight:bold;background:#eef6ee}</style>")


def _row(cells, tag="td", chosen=False):
    return ('<tr class="chosen">' if chosen else "<tr>") + "".join(
        f"<{tag}>{_e(str(c))}</{tag}>" for c in cells) + "</tr>"


def _facts(lines):
    """``explain()``'s fact lines as table rows: ``Key: text`` as a header cell and its
    text, an indented line (a detail of the one above) or any other line across both."""
    rows = []
    for line in lines:
        key, sep, text = line.partition(": ")
        if line.startswith("  "):                 # a detail of the line above
            rows.append(f'<tr><td colspan="2" style="padding-left:2em">{_e(line.strip())}'
                        f"</td></tr>")
        elif sep and len(key) <= 40 and "=" not in key:
            rows.append(f"<tr><th>{_e(key)}</th><td>{_e(text)}</td></tr>")
        else:
            rows.append(f'<tr><td colspan="2">{_e(line)}</td></tr>')
    return "".join(rows)


def _alternatives(plan, ways):
    """One row per way to the Jacobian: directions, sweeps, estimate and its source."""
    chosen = plan.mode if plan.through is None else None
    rows = [_row(("way", "directions", "sweeps", "estimated per Jacobian", "source"), "th")]
    for alt in ways:
        seconds, source = plan.estimates.get(alt, (None, "not considered"))
        d = plan.directions_of(alt)
        rows.append(_row((alt + (" (chosen)" if alt == chosen else ""),
                          "" if d is None else d, plan.sweeps_of(alt) if d else "",
                          _fmt(seconds), source),
                         chosen=alt == chosen))
    return "".join(rows)


def _picture(plan):
    """The pattern's PNG with its caption and legend, or a line saying there is none."""
    r = raster(plan)
    if r is None and plan.through is not None:     # mixed: J_f = J_g J_h, no one pattern
        return (f'<p style="max-width:24em">No one sparsity pattern to draw: {_e(plan.mode)} '
                f"computes the {plan.m} x {plan.n} Jacobian as a product of factors, each "
                f"by a plan of its own.</p>")
    if r is None:
        return (f'<p style="max-width:24em">No sparsity pattern to draw: '
                f"{_e(plan.mode)} computes the dense {plan.m} x {plan.n} Jacobian "
                f"(no detection ran, or it was refused).</p>")
    h, w = r.image.shape
    scale = max(1, 256 // max(h, w))
    uri = "data:image/png;base64," + base64.b64encode(png(r.image)).decode("ascii")
    swatches = "".join(
        f'<span style="display:inline-block;margin-right:8px;white-space:nowrap">'
        f'<span style="display:inline-block;width:10px;height:10px;border:1px solid #999;'
        f'background:rgb{tuple(int(v) for v in PALETTE[k])}"></span> {_e(label)}</span>'
        for k, label in r.legend)
    return (f'<figure style="margin:0;max-width:{max(w * scale, 260)}px">'
            f'<img src="{uri}" width="{w * scale}" height="{h * scale}" '
            f'alt="{_e(r.caption)}" style="image-rendering:pixelated;border:1px solid #999">'
            f'<figcaption style="font-size:85%">{_e(r.caption)}.<br>{swatches}'
            f"</figcaption></figure>")


def plan_html(plan: Any, ways: Sequence[str]) -> str:
    """The plan as an HTML fragment for Jupyter: a title, the facts of ``explain()``, a
    table of the alternatives ``ways`` (:data:`jacobians.plan.ALTERNATIVES`), what was
    measured, and the pattern's picture; all text
    escaped; the picture bounded (:data:`MAX_SIDE`), so the fragment stays small (tens of
    kilobytes) whatever the Jacobian's size."""
    lines = plan.explain().splitlines()
    at = lines.index("Estimated cost of each alternative:")
    after = lines[at + 1 + len(ways):]         # explain() gives one line per way
    return (f'<div class="dualad-plan" style="font-family:sans-serif;font-size:90%">{_STYLE}'
            f"<p><b>{_e(lines[0])}</b></p>"
            f'<div style="display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start">'
            f'<table style="max-width:60em">{_facts(lines[1:at])}</table>{_picture(plan)}'
            f"</div><p><b>Estimated cost of each alternative</b></p>"
            f"<table>{_alternatives(plan, ways)}</table>"
            f"<p><b>Measured</b></p><table>{_facts(after)}</table></div>")


def plot_plan(plan: Any, ax: Any = None) -> Any:
    """Draw the plan's pattern, colored as the HTML picture (module docstring), on ``ax``
    (a new figure's axes when None); returns the Axes. Matplotlib is imported here."""
    try:
        import matplotlib  # noqa: F401
        from matplotlib.patches import Patch
    except ImportError as e:
        raise ImportError(f"Plan.plot({plan.problem.name}) needs matplotlib, which is not "
                          f'installed: pip install "dualad[plot]" (or pip install '
                          f"matplotlib)") from e
    if ax is not None and not hasattr(ax, "imshow"):
        raise TypeError(f"Plan.plot({plan.problem.name}): ax must be a matplotlib Axes, got "
                        f"{type(ax).__name__!r}; leave it out to draw on new axes")
    if ax is None:
        import matplotlib.pyplot as plt
        ax = plt.subplots()[1]
    r = raster(plan, PLOT_SIDE)
    name = plan.problem.name
    if r is None:
        ax.text(0.5, 0.5, f"{name}: {plan.mode}, dense {plan.m} x {plan.n}\n"
                f"(no sparsity pattern)", ha="center", va="center",
                transform=ax.transAxes)
        ax.set_axis_off()
        return ax
    m, n = r.shape
    ax.imshow(r.rgb(), interpolation="nearest", extent=(-0.5, n - 0.5, m - 0.5, -0.5),
              aspect="equal" if max(m, n) <= 20 * min(m, n) else "auto")
    ax.set_xlabel(f"column j (input), n = {n}")
    ax.set_ylabel(f"row i (output), m = {m}")
    ax.set_title(f"{name}: {plan.mode}, {plan.directions} directions", fontsize="medium")
    handles = [Patch(facecolor=PALETTE[k] / 255.0, edgecolor="0.6", label=label)
               for k, label in r.legend]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.02, 1.0),
              fontsize="small", frameon=False)
    return ax
