"""What the trace renderers (:mod:`.evalrender`, :mod:`.evalplot`) share: a node's value
formatted for display and a node's parents on the same tape (the graph's edges).

Kept apart from both so that the text renderer can call the PNG one (lazily, since it
needs matplotlib) without the PNG renderer importing the text one back.
"""
from __future__ import annotations

import unicodedata

import numpy as np

from ..interpreters.reverse.tape import Var
from ..core.tracer import primal_value

__all__ = []   # helpers private to the renderers (_fmt, _parents, _derivative_label, _width, _pad)


def _fmt(v, digits=3):
    v = primal_value(v)
    a = np.asarray(v)
    if a.ndim == 0:
        x = float(a) if np.isrealobj(a) else complex(a)
        return f"{x:.{digits}f}" if isinstance(x, float) else str(np.round(x, digits))
    with np.printoptions(threshold=12, edgeitems=2):
        return np.array2string(a, separator=", ", formatter={
            "float_kind": lambda x: f"{x:.{digits}f}"}).replace("\n", "")


def _parents(node):
    if node.prim is None:
        return []
    return [a for a in node.args if isinstance(a, Var) and a._trace is node._trace]


def _derivative_label(mode, name):
    """A node's second label in the graph: its tangent ``v̇_2``, adjoint ``v̄_2`` or
    Taylor coefficients ``v_2,0..d``."""
    if mode == "taylor":
        return f"{name},0..d"
    return ("v̇" if mode == "forward" else "v̄") + name[1:]


def _width(s):
    """Display width: combining marks (the dot of v̇, the bar of v̄) take no column."""
    return sum(not unicodedata.combining(ch) for ch in s)


def _pad(s, width):
    return s + " " * (width - _width(s))
