"""The teaching tools: evaluation traces (Wengert lists) of the forward and the reverse
sweep, rendered as text, Markdown, LaTeX, Graphviz DOT, PNG and an interactive HTML page,
and the operation counter.

- :func:`trace` records a function once and lays out its evaluation trace with the
  tangent (forward) or adjoint (reverse) trace, as in Baydin et al. (JMLR 2018, Tables 2
  and 3); also ``dualad.trace``.
- :class:`EvaluationTrace` renders it (``to_text``, ``to_markdown``, ``to_latex``,
  ``to_dot``, ``plot``, ``to_html``; Jupyter shows the HTML page inline).
- :func:`html_page` and :func:`html_fragment` put several traces (a forward and a reverse
  sweep of one function) on one page, one tab each.
- :func:`count_ops` and :class:`OpCounter` count primitive applications (the paper
  reproductions measure with them).

The command line: ``dualad trace "log(x1) + x1*x2 - sin(x2)" --at x1=2 x2=5 --html
trace.html`` (:mod:`.cli`, the expression language in :mod:`.expr`).
"""
from .evalrender import EvaluationTrace
from .evaltrace import trace
from .opcount import OpCounter, count_ops

__all__ = ["trace", "EvaluationTrace", "html_page", "html_fragment", "count_ops", "OpCounter"]


def __getattr__(name):
    """``html_page`` and ``html_fragment``, imported on first use: ``import dualad`` (which
    imports this package) need not load the page's renderer and its CSS/JS (PEP 562)."""
    if name in ("html_page", "html_fragment"):
        from . import evalhtml
        return getattr(evalhtml, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
