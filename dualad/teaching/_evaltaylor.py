r"""The Taylor-mode evaluation trace: each intermediate's Taylor coefficients, as a table.

Along the curve :math:`x(t) = x + t\,\dot x` every intermediate of the Wengert list is
a curve too, :math:`v_i(t) = \sum_k v_{i,k}\,t^k + O(t^{d+1})`, with normalized
coefficients :math:`v_{i,k} = v_i^{(k)}(0)/k!`. Griewank and Walther (*Evaluating
Derivatives*, 2nd ed., ch. 13) lay the sweep out as a table: one row per :math:`v_i`,
one column per order :math:`k = 0, \dots, d`, each entry from the entries of the
operands' rows up to the same column by the primitive's recurrence (the Cauchy product
:math:`(uw)_k = \sum_j u_j w_{k-j}` for a product, :math:`y' = u' y` for
:math:`y = e^u`, ...). The numbers come from the registry's ``"taylor"`` rules
(:mod:`dualad.interpreters.taylor.rules`), run on a counting tape so the table also says
how many primitive applications the coefficient sweep took. The output's row is
:func:`dualad.taylor`'s answer along the same direction.
"""
from __future__ import annotations

import unicodedata

import numpy as np

from .evalrender import Row
from .opcount import OpCounter
from ..core.tracer import primal_value
from ..interpreters.reverse.tape import Var
from ..interpreters.taylor.rules import taylor_rule
from ..interpreters.taylor.series import Node, TaylorTrace

__all__ = []   # used by evaltrace.trace(mode="taylor") and the renderers


def taylor_rows(et, leaves, nodes, out, names, formulas, seed, labels, order):
    """Fill ``et`` (mode "taylor") with one coefficient row per input and intermediate.

    ``seed`` is the direction :math:`\\dot x` (one entry per input; the inputs' rows are
    :math:`[x_i, \\dot x_i, 0, \\dots]`); returns the number of primitive applications
    the coefficient sweep performed (orders 1 to ``order``).
    """
    counting = OpCounter()
    trace = TaylorTrace(order, taylor_rule)
    coefs = {}
    try:
        for i, leaf in enumerate(leaves):
            t = np.asarray(seed[i], dtype=np.result_type(leaf.value))
            if t.shape != np.shape(leaf.value):
                raise ValueError(f"trace: seed {i} has shape {t.shape}, but input {i} has "
                                 f"shape {np.shape(leaf.value)}")
            zero = np.zeros_like(t)
            coefs[leaf] = ([counting.new_leaf(leaf.value), counting.new_leaf(t)] +
                           [counting.new_leaf(zero) for _ in range(order - 1)])[:order + 1]
            et.rows.append(Row(names[leaf], f"{labels[i]} + t·{_dotted(labels[i])}",
                               _stacked(coefs[leaf]), "taylor", names[leaf]))
        for node in nodes[len(leaves):]:
            coefs[node] = _node_coefficients(et, trace, counting, node, coefs, order)
            et.rows.append(Row(names[node], formulas[node], _stacked(coefs[node]),
                               "taylor", names[node]))
    finally:
        trace.stop()
    for n, c in coefs.items():
        et.derivative_of[n] = _stacked(c)
    et.derivative = et.derivative_of[out]
    return counting


def _node_coefficients(et, trace, counting, node, coefs, order):
    """Coefficients 0..order of one tape node, by its ``"taylor"`` rule (counted)."""
    if isinstance(node.value, (tuple, list)):
        raise ValueError(f"trace: mode 'taylor' shows primitives with one output; "
                         f"'{node.prim.name}' has {len(node.value)}")
    if node.prim.zero_derivative:
        zero = np.zeros_like(np.asarray(node.value, dtype=float))
        return [node.value] + [zero] * order
    try:
        return _run_rule(trace, node, coefs, order, counting.new_leaf, lambda c: c)
    except Exception:  # noqa: BLE001 - retried on plain values, where errors propagate
        et.uncounted.add(node.prim.name)
        plain = lambda c: [primal_value(v) for v in c]  # noqa: E731
        return _run_rule(trace, node, coefs, order, lambda v: v, plain)


def _run_rule(trace, node, coefs, order, lift, lower):
    xs, traced = [], []
    for a in node.args:
        if isinstance(a, Var) and a in coefs:
            xs.append(lower(coefs[a]))
            traced.append(True)
        else:
            xs.append([a.value if isinstance(a, Var) else a])
            traced.append(False)
    tnode = Node(trace, node.prim, node.params or {}, xs, traced, [lift(node.value)],
                 False, trace.rule_of(node.prim))
    for k in range(1, order + 1):
        tnode.step(k)
    return tnode.y


def _stacked(c):
    return np.stack([np.asarray(primal_value(v)) for v in c])


def _dotted(label):
    """``x1`` -> ``ẋ1`` (a combining dot, composed where Unicode has the letter)."""
    return unicodedata.normalize("NFC", label[0] + "\u0307" + label[1:])
