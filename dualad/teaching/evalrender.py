"""Rendering of evaluation traces: text, Markdown, LaTeX, Graphviz DOT (and PNG via
:mod:`dualad.teaching.evalplot`). The traces themselves are built by
:mod:`dualad.teaching.evaltrace`."""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ._evalnodes import _derivative_label, _fmt, _pad, _parents, _width

if TYPE_CHECKING:
    import os
    from typing import TypeVar

    _Path = TypeVar("_Path", str, "os.PathLike[str]")

__all__ = ["EvaluationTrace", "Row"]


@dataclass
class Row:
    """One line of a trace: ``name = formula = value``.

    ``node`` names the graph node the line is about (``"v_2"``: the variable it defines,
    its tangent or the adjoint it accumulates into); ``via`` names, for an adjoint
    accumulation, the node whose use of ``node`` it sweeps back through (``v̄_0 += v̄_2 ·
    ∂v_2/∂v_0`` has node ``v_0``, via ``v_2``).
    """
    name: str
    formula: str
    value: object
    section: str
    node: str = None
    via: str = None

    def cells(self, digits: int) -> list[str]:
        """The three cells ``[name, formula, value]``, the value with ``digits`` decimals."""
        return [self.name, self.formula, _fmt(self.value, digits)]


@dataclass
class EvaluationTrace:
    """A recorded sweep, renderable as text, Markdown, LaTeX, Graphviz DOT, PNG and HTML.

    Built by :func:`dualad.teaching.trace`, not by hand. ``rows`` are the lines of the
    trace, in the order a student reads them: the primal trace, then the tangent
    (forward) or adjoint (reverse) trace, then the result.

    Parameters
    ----------
    mode : {"forward", "reverse", "taylor"}
        The sweep recorded.
    rows : list of Row
        The lines ``name = formula = value``, each with its section ("primal",
        "tangent", "adjoint" or "result") and the graph node it is about; in taylor
        mode one row per node (section "taylor"), its value the stacked coefficients
        ``v_i,0 .. v_i,d``.
    nodes : list
        The tape's nodes, inputs first, in evaluation order (the graph's vertices).
    names : dict
        Each node's name, ``v_-1 .. v_l``.
    derivative_of : dict
        Each node's tangent (forward), final adjoint (reverse) or coefficients (taylor).
    output : array_like
        The primal output ``y``.
    derivative : array_like or tuple
        Forward: ``ẏ``, the derivative along the seed. Reverse: the gradient ``x̄``,
        one entry per input. Taylor: the output's coefficients ``y_0 .. y_d`` stacked.
    op_counts : dict
        Operation counts: the primal's and the sweep's (measured on a counting tape).
    sweep_counts : dict
        The sweep's primitive applications, by primitive name.
    uncounted : set
        Primitives whose rules could not run on the counting tape (their
        derivatives are exact; only their counts are missing).
    order, direction : int, str
        Taylor mode: the truncation order ``d`` and the curve (``x + t·ẋ``).

    Examples
    --------
    >>> from dualad.teaching import trace
    >>> et = trace(lambda x1, x2: x1 * x2, 2.0, 5.0)
    >>> et.mode, float(et.derivative)
    ('forward', 5.0)
    """
    mode: str
    rows: list = field(default_factory=list)
    nodes: list = field(default_factory=list)
    names: dict = field(default_factory=dict)
    derivative_of: dict = field(default_factory=dict)
    output: object = None
    derivative: object = None
    op_counts: dict = field(default_factory=dict)
    sweep_counts: dict = field(default_factory=dict)   # primitive -> applications in the sweep
    uncounted: set = field(default_factory=set)       # primitives whose rules were not counted
    order: int = None        # taylor mode: the truncation order d
    direction: str = None    # taylor mode: the curve, "x + t·ẋ"

    # --- rendering ----------------------------------------------------------
    def to_text(self, digits: int = 3) -> str:
        """The trace as aligned plain text, one ``name = formula = value`` line per row.

        Parameters
        ----------
        digits : int, optional
            Decimals shown, default 3.

        Returns
        -------
        str
            The table, its sections headed, then a summary line with the operation counts.
        """
        if self.mode == "taylor":
            from ._taylortable import taylor_text
            return taylor_text(self, digits)
        cells = [r.cells(digits) for r in self.rows]
        w = [max(_width(c[i]) for c in cells) for i in range(3)]
        out, section = [], None
        for r, c in zip(self.rows, cells):
            if r.section != section:
                section = r.section
                out.append(f"-- {section} " + "-" * max(0, sum(w) + 4 - len(section)))
            out.append(f"{_pad(c[0], w[0])} = {_pad(c[1], w[1])} = {c[2]}")
        out.append(self._summary(digits))
        return "\n".join(out)

    def to_markdown(self, digits: int = 3) -> str:
        """The trace as a Markdown table (section, variable, formula, value).

        Parameters
        ----------
        digits : int, optional
            Decimals shown, default 3.

        Returns
        -------
        str
            The table and the summary line.
        """
        if self.mode == "taylor":
            from ._taylortable import taylor_markdown
            return taylor_markdown(self, digits)
        out = ["| trace | variable | formula | value |", "|---|---|---|---|"]
        for r in self.rows:
            name, formula, value = r.cells(digits)
            out.append(f"| {r.section} | {name} | {formula} | {value} |")
        out += ["", self._summary(digits)]
        return "\n".join(out)

    def to_latex(self, digits: int = 3) -> str:
        """The trace as a LaTeX ``tabular`` (``\\dot v``, ``\\bar v``, subscripts typeset).

        Parameters
        ----------
        digits : int, optional
            Decimals shown, default 3.

        Returns
        -------
        str
            The ``tabular`` environment.
        """
        def tex(s):
            for a, b in [("v̇", r"\dot v"), ("v̄", r"\bar v"), ("ẋ", r"\dot x"), ("ȳ", r"\bar y"),
                         ("ẏ", r"\dot y"), ("x̄", r"\bar x"), ("@", r"\,@\,"),
                         ("∂", r"\partial "), ("×", r"\times "), ("−", "-"), ("·", r"\cdot "),
                         ("√", r"\sqrt "), ("²", "^2"), ("ln ", r"\ln "), ("sin ", r"\sin "),
                         ("cos ", r"\cos "), ("exp ", r"\exp ")]:
                s = s.replace(a, b)
            return _tex_subscripts(_tex_accents(s))
        if self.mode == "taylor":
            from ._taylortable import taylor_latex
            return taylor_latex(self, digits, tex)
        out = [r"\begin{tabular}{lll}", r"\hline"]
        section = None
        for r in self.rows:
            if r.section != section:
                section = r.section
                out.append(rf"\multicolumn{{3}}{{l}}{{\textit{{{section}}}}} \\ \hline")
            name, formula, value = r.cells(digits)
            out.append(f"${tex(name)}$ & $= {tex(formula)}$ & $= {value}$ \\\\")
        out += [r"\hline", r"\end{tabular}"]
        return "\n".join(out)

    def _summary(self, digits):
        counts = ", ".join(f"{k}: {v}" for k, v in self.op_counts.items())
        detail = ", ".join(f"{k} {v}" for k, v in self.sweep_counts.items())
        deriv = self.derivative if self.mode == "forward" else \
            ", ".join(_fmt(d, digits) for d in self.derivative)
        return (f"y = {_fmt(self.output, digits)};  derivative ({self.mode}) = "
                f"{_fmt(deriv, digits) if self.mode == 'forward' else deriv};  operation "
                f"counts: {counts}" + (f" ({detail})" if detail else "") +
                (f"; not counted: the rules of {', '.join(sorted(self.uncounted))}"
                 if self.uncounted else ""))

    def __str__(self) -> str:
        """The plain-text rendering (:meth:`to_text`)."""
        return self.to_text()

    def to_dot(self, digits: int = 3) -> str:
        """The computational graph in Graphviz DOT.

        Nodes are labelled with their values and tangents (forward) or adjoints (reverse).

        Parameters
        ----------
        digits : int, optional
            Decimals shown, default 3.

        Returns
        -------
        str
            The ``digraph`` source, for ``dot -Tsvg``.
        """
        lines = ["digraph evaluation_trace {", "  rankdir=LR;",
                 '  node [shape=box, fontname="Helvetica"];']
        for node in self.nodes:
            name = self.names[node]
            d = self.derivative_of.get(node)
            label = f"{name} = {_fmt(node.value, digits)}"
            if d is not None:
                label += f"\\n{_derivative_label(self.mode, name)} = {_fmt(d, digits)}"
            lines.append(f'  "{name}" [label="{label}"];')
        for node in self.nodes:
            for a in _parents(node):
                lines.append(f'  "{self.names[a]}" -> "{self.names[node]}";')
        lines.append("}")
        return "\n".join(lines)

    def plot(self, path: _Path, digits: int = 3) -> _Path:
        """Draw the graph to a PNG with matplotlib (the optional ``plot`` extra).

        Parameters
        ----------
        path : str or path-like
            The PNG file to write.
        digits : int, optional
            Decimals shown, default 3.

        Returns
        -------
        str or path-like
            ``path``.
        """
        from .evalplot import draw_graph
        draw_graph(self, path, digits)
        return path

    def to_html(self, title: str | None = None, digits: int = 3) -> str:
        """The trace as a self-contained interactive HTML page (no network needed).

        The page draws the computational graph beside the trace table and steps through
        this trace's sweep one elementary operation at a time (Step, Back, Reset, Play,
        arrow keys). To show a forward and a reverse sweep together, pass both traces to
        :func:`dualad.teaching.html_page`.

        Parameters
        ----------
        title : str, optional
            The heading, e.g. the function's formula; escaped. Default "Evaluation trace".
        digits : int, optional
            Decimals shown (0 to 17), default 3.

        Returns
        -------
        str
            The HTML document; write it to a ``.html`` file and open it in a browser.
        """
        if self.mode == "taylor":
            raise ValueError("to_html: the teaching page steps through forward and reverse "
                             "sweeps; show a taylor trace with to_text or to_markdown")
        from .evalhtml import html_page
        return html_page(self, title=title, digits=digits)

    def _repr_html_(self) -> str:
        """Jupyter's inline view: the page as a fragment with its own unique element ids."""
        if self.mode == "taylor":   # no page for it: Jupyter shows the text instead
            return None
        from .evalhtml import html_fragment
        return html_fragment(self)


def _tex_accents(s):
    """A user's input name with a dot or bar over its first letter (``ȧ1``, ``ā1``) as
    ``\\dot a1`` / ``\\bar a1``."""
    s = unicodedata.normalize("NFD", s)
    s = re.sub("(.)\u0307", r"\\dot{\1}", s)
    s = re.sub("(.)\u0304", r"\\bar{\1}", s)
    return unicodedata.normalize("NFC", s)


def _tex_subscripts(s):
    return re.sub(r"_(-?\d+)", r"_{\1}", s)
