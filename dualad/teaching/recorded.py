"""The evaluation trace of a graph already recorded (``dualad.autograd.graph_of``).

:func:`dualad.teaching.trace` records a function and lays it out; here the graph is
one the imperative API recorded (Variables on its tape), laid out by the same code:
the primal rows, the reverse (adjoint) rows computed by the registry's VJP rules on a
counting tape, and the rendering of :class:`~dualad.teaching.evalrender.EvaluationTrace`.
"""
from __future__ import annotations

from typing import Any

from .evaltrace import EvaluationTrace, Row, _formula, _parents, _reverse_rows
from .opcount import OpCounter

__all__ = ["recorded_trace"]


def _reachable(out, freed):
    """The nodes ``out`` was computed from, in creation order (a freed graph raises)."""
    seen, stack = set(), [out]
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        if n.prim is not None and n.args is None:
            raise RuntimeError(freed)
        seen.add(n)
        stack.extend(_parents(n))
    return sorted(seen, key=lambda n: n.seq)


def recorded_trace(out: Any, seed: Any = None, freed: str = "the graph was freed") -> \
        EvaluationTrace:
    """The reverse evaluation trace of the recorded graph behind ``out``.

    Parameters
    ----------
    out : Var
        A computed node of a tape that keeps its records (not freed by a sweep).
    seed : array_like, optional
        The output's adjoint ȳ (default: ones of its shape).
    freed : str, optional
        The message of the error raised when a sweep freed the graph.

    Returns
    -------
    EvaluationTrace
        Mode "reverse": leaves that require grad are named ``x_k`` in the result rows,
        other leaves ``c_k``.
    """
    nodes = _reachable(out, freed)
    leaves = [n for n in nodes if n.prim is None]
    leaves.sort(key=lambda n: not getattr(n, "requires_grad", True))   # inputs, then constants
    inner = [n for n in nodes if n.prim is not None]
    names, labels, k, c = {}, [], 0, 0
    for i, leaf in enumerate(leaves):
        names[leaf] = f"v_{i + 1 - len(leaves)}"
        if getattr(leaf, "requires_grad", True):
            k += 1
            labels.append(f"x_{k}")
        else:
            c += 1
            labels.append(f"c_{c}")
    for i, node in enumerate(inner):
        names[node] = f"v_{i + 1}"
    et = EvaluationTrace(mode="reverse", nodes=leaves + inner, names=names, output=out.value)
    for leaf, label in zip(leaves, labels):
        et.rows.append(Row(names[leaf], label, leaf.value, "primal", names[leaf]))
    for node in inner:
        et.rows.append(Row(names[node], _formula(node, names), node.value, "primal",
                           names[node]))
    counting = OpCounter()
    steps = _reverse_rows(et, leaves, leaves + inner, out, names, seed, counting, labels)
    et.op_counts = {"primal operations": len(inner), "adjoint steps": steps,
                    "adjoint operations": counting.total}
    et.sweep_counts = dict(counting.counts.most_common())
    return et
