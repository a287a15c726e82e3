"""The Taylor table's renderings (text, Markdown, LaTeX) and its summary line, for
:class:`~dualad.teaching.evalrender.EvaluationTrace` in mode "taylor" (built by
:mod:`._evaltaylor`): one row per node, one column per coefficient ``v_i,0 .. v_i,d``."""
from __future__ import annotations

import math

import numpy as np

from ._evalnodes import _fmt, _pad, _width

__all__ = []   # called by EvaluationTrace.to_text, to_markdown and to_latex


def _table(et, digits):
    """Header and cells: ``[name, operation, v_i,0, ..., v_i,d]`` per row."""
    head = ["v_i", "operation"] + [f"v_i,{k}" for k in range(et.order + 1)]
    cells = [[r.name, r.formula] + [_fmt(c, digits) for c in r.value] for r in et.rows]
    return head, cells


def taylor_text(et, digits):
    """The coefficient table as aligned plain text, then the summary line."""
    head, cells = _table(et, digits)
    w = [max(_width(c[i]) for c in [head] + cells) for i in range(len(head))]
    line = lambda c: " | ".join(_pad(s, w[i]) for i, s in enumerate(c)).rstrip()  # noqa: E731
    title = f"-- taylor coefficients along {et.direction}, order {et.order} "
    out = [title + "-" * max(0, sum(w) + 3 * (len(w) - 1) - len(title)), line(head),
           "-+-".join("-" * x for x in w)]
    out += [line(c) for c in cells]
    out.append(taylor_summary(et, digits))
    return "\n".join(out)


def taylor_markdown(et, digits):
    head, cells = _table(et, digits)
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(c) + " |" for c in cells]
    return "\n".join(out + ["", taylor_summary(et, digits)])


def taylor_latex(et, digits, tex):
    head, cells = _table(et, digits)
    cols = [r"v_i", r"\text{operation}"] + [f"v_{{i,{k}}}" for k in range(et.order + 1)]
    out = [r"\begin{tabular}{ll" + "r" * (et.order + 1) + "}", r"\hline",
           " & ".join(f"${c}$" for c in cols) + r" \\ \hline"]
    for c in cells:
        out.append(" & ".join([f"${tex(c[0])}$", f"${tex(c[1])}$"] + c[2:]) + r" \\")
    out += [r"\hline", r"\end{tabular}"]
    return "\n".join(out)


def taylor_summary(et, digits):
    """``y``'s coefficients, the derivatives :math:`k!\\,y_k` and the operation counts."""
    y = np.asarray(et.derivative)
    ders = np.stack([y[k] * float(math.factorial(k)) for k in range(et.order + 1)])
    counts = ", ".join(f"{k}: {v}" for k, v in et.op_counts.items())
    detail = ", ".join(f"{k} {v}" for k, v in et.sweep_counts.items())
    return (f"y_k = {_fmt(y, digits)};  derivatives y^(k) = k!·y_k = {_fmt(ders, digits)};  "
            f"operation counts: {counts}" + (f" ({detail})" if detail else "") +
            (f"; not counted: the rules of {', '.join(sorted(et.uncounted))}"
             if et.uncounted else ""))
