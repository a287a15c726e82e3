"""Evaluation traces (Wengert lists): forward and reverse sweeps shown step by step.

``trace(f, *args, mode="forward")`` records ``f`` once on the tape and lays it
out as in Baydin et al.'s survey (JMLR 2018, Tables 2 and 3) and Griewank and
Walther's book: inputs ``v_{1-n} .. v_0``, intermediates ``v_1 .. v_l``, each
with its formula and primal value, then

- forward mode: the tangent trace ``v̇_i = Σ_j ∂v_i/∂v_j · v̇_j`` in
  evaluation order, for the seed direction ``ẋ`` (linear operations act on
  the tangents themselves: ``v̇_i = sum(v̇_j)``), ending with ``ẏ``;
- reverse mode: the adjoint trace in the order the sweep performs it, one
  row per accumulation ``v̄_j = v̄_j + v̄_i · ∂v_i/∂v_j``, the partial written
  out where it has a closed form (``v̄_0 = v̄_0 + v̄_2 · v_-1``), from the seed
  ``ȳ``, ending with the gradient ``x̄``.

Every number comes from the registry's own JVP and VJP rules; the formula
strings are for display only. The operation counts are measured: the rules
run on a counting tape, so ``op_counts`` says how many primitives the sweep
applied (by name in ``sweep_counts``), next to the primal's count. Rendering
(text, Markdown, LaTeX, DOT, PNG) lives in :mod:`dualad.teaching.evalrender`.
"""
from __future__ import annotations

import unicodedata
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from .evalrender import EvaluationTrace, Row, _fmt, _parents  # noqa: F401  (public here)
from .opcount import OpCounter
from ..interpreters.reverse.tape import Var, VJPTrace
from ..core.tracer import primal_value
from ..core.primitive import JVP, JVP_ALL, VJP, VJP_ALL

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

__all__ = ["trace", "EvaluationTrace", "Row"]

# Display templates: {0}, {1} are argument names, {out} the result's name.
_FORMULAS = {
    "add": "{0} + {1}", "subtract": "{0} − {1}", "multiply": "{0} × {1}",
    "divide": "{0} / {1}", "negative": "−{0}", "power": "{0}^{1}", "square": "{0}²",
    "sqrt": "√{0}", "reciprocal": "1 / {0}", "log": "ln {0}", "exp": "exp {0}",
    "sin": "sin {0}", "cos": "cos {0}", "tan": "tan {0}", "tanh": "tanh {0}",
    "sinh": "sinh {0}", "cosh": "cosh {0}", "arctan": "arctan {0}", "absolute": "|{0}|",
    "expm1": "exp {0} − 1", "log1p": "ln(1 + {0})", "matmul": "{0} @ {1}",
}
_PARTIALS = {
    "add": ["1", "1"], "subtract": ["1", "−1"], "multiply": ["{1}", "{0}"],
    "divide": ["1/{1}", "−{0}/{1}²"], "negative": ["−1"], "log": ["1/{0}"],
    "exp": ["{out}"], "sin": ["cos {0}"], "cos": ["−sin {0}"], "square": ["2{0}"],
    "sqrt": ["1/(2{out})"], "tanh": ["1 − {out}²"], "power": ["{1}·{0}^({1}−1)", "{out}·ln {0}"],
    "tan": ["1 + {out}²"], "sinh": ["cosh {0}"], "cosh": ["sinh {0}"],
    "arctan": ["1/(1 + {0}²)"], "reciprocal": ["−{out}²"], "expm1": ["{out} + 1"],
    "log1p": ["1/(1 + {0})"],
}


def _reachable(out):
    seen, stack = set(), [out]
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        stack.extend(_parents(n))
    return sorted(seen, key=lambda n: n.seq)


def _arg_name(node, j, names):
    a = node.args[j]
    return names.get(a, _fmt(a)) if isinstance(a, Var) else _fmt(a)


def _params(node):
    return [f"{k}={v}" for k, v in (node.params or {}).items()]


def _formula(node, names):
    args = [_arg_name(node, j, names) for j in range(len(node.args))]
    tpl = _FORMULAS.get(node.prim.name)
    if tpl is None:
        return f"{node.prim.name}({', '.join(args + _params(node))})"
    return tpl.format(*args, out=names[node])


def _partial(node, j, names):
    """The display formula of ∂node/∂arg_j (elementwise primitives), or None."""
    tpls = _PARTIALS.get(node.prim.name)
    if tpls is None or j >= len(tpls):
        return None
    args = [_arg_name(node, i, names) for i in range(len(node.args))]
    return tpls[j].format(*args, out=names[node])


def trace(f: Callable[..., Any], *args: Any,
          mode: Literal["forward", "reverse", "taylor"] = "forward", seed: Any = None,
          names: Sequence[str] | None = None, order: int | None = None) -> EvaluationTrace:
    """The evaluation trace of ``f(*args)`` with its tangent or adjoint trace.

    ``f`` is recorded once on the tape and laid out as a Wengert list (Baydin et
    al. 2018, Tables 2 and 3): inputs ``v_{1-n} .. v_0``, one intermediate ``v_i``
    per elementary operation with its primal value. Forward mode then sweeps the
    tangents ``v̇_i = Σ_j ∂v_i/∂v_j · v̇_j`` in evaluation order; reverse mode
    sweeps the adjoints backwards, one row per accumulation ``v̄_j += v̄_i ·
    ∂v_i/∂v_j``. Taylor mode pushes the curve ``x + t·ẋ`` through the list instead: one
    row per ``v_i`` with its normalized Taylor coefficients ``v_i,0 .. v_i,d``
    (``v_i,k = v_i^(k)(0)/k!``), Griewank and Walther's Taylor table (ch. 13). Every
    number comes from the registry's own JVP, VJP and Taylor rules.

    Parameters
    ----------
    f : callable
        The function, of ``len(args)`` arrays or scalars, returning one array.
    *args : array_like
        The point.
    mode : {"forward", "reverse", "taylor"}, optional
        The sweep to show, default "forward".
    seed : tuple or array_like, optional
        Forward and taylor: the input direction ``ẋ``, one entry per argument
        (default: the unit direction of the first input's first element, as in the
        survey). Reverse: the output cotangent ``ȳ`` (default 1).
    names : sequence of str, optional
        The inputs' names (``v_-1 = x2``, its tangent ``ẋ2``, its adjoint ``x̄2``),
        one distinct non-empty string per argument; default ``x_1 .. x_n``.
    order : int, optional
        Taylor mode's truncation order ``d`` (0 to 30, default 3); only for mode "taylor".

    Returns
    -------
    EvaluationTrace
        The rows, the derivative (``ẏ``, the gradient ``x̄`` as a tuple, or in taylor
        mode the output's coefficients ``y_0 .. y_d`` stacked, :func:`dualad.taylor`'s
        answer) and the measured operation counts; render it with ``to_text``, ``to_markdown``,
        ``to_latex``, ``to_dot``, ``plot`` or ``to_html``.

    Raises
    ------
    ValueError
        For an unknown mode, a seed of the wrong length or shape, bad names, an order
        outside taylor mode or out of range, or an output that does not depend on the
        inputs.

    Examples
    --------
    >>> f = lambda x1, x2: np.log(x1) + x1 * x2 - np.sin(x2)
    >>> et = dualad.trace(f, 2.0, 5.0, mode="reverse", names=["x1", "x2"])
    >>> [round(float(g), 3) for g in et.derivative]
    [5.5, 1.716]
    >>> print(et.to_text().splitlines()[0])
    -- primal -----------------------------------------------------
    >>> et = dualad.trace(lambda x: np.exp(x) * x, 0.0, mode="taylor", order=3)
    >>> print(np.round(et.derivative, 3))   # x e^x = x + x^2 + x^3/2 + ...
    [0.  1.  1.  0.5]
    """
    if mode not in ("forward", "reverse", "taylor"):
        raise ValueError(f"trace: mode must be 'forward', 'reverse' or 'taylor', got {mode!r}")
    order = _order(mode, order)
    labels = _input_labels(names, len(args))
    from ..transforms.api import check_input
    tape = VJPTrace()
    leaves = [tape.new_leaf(check_input("trace", i, a)) for i, a in enumerate(args)]
    out = f(*leaves)
    if not (isinstance(out, Var) and out._trace is tape):
        raise ValueError(f"trace: the output of {getattr(f, '__name__', f)} does not depend "
                         f"on its inputs")
    nodes = _reachable(out)
    names, n_in = {}, len(leaves)
    for k, leaf in enumerate(leaves):
        names[leaf] = f"v_{k + 1 - n_in}"
    counter = 0
    for node in nodes:
        if node.prim is not None:
            counter += 1
            names[node] = f"v_{counter}"
    nodes = leaves + [n for n in nodes if n.prim is not None]
    et = EvaluationTrace(mode=mode, nodes=nodes, names=names, output=out.value)
    if mode == "taylor":
        return _taylor_trace(et, leaves, nodes, out, names, seed, labels, order)
    for k, leaf in enumerate(leaves):
        et.rows.append(Row(names[leaf], labels[k], leaf.value, "primal", names[leaf]))
    for node in nodes[n_in:]:
        et.rows.append(Row(names[node], _formula(node, names), node.value, "primal", names[node]))
    n_primal = len(nodes) - n_in
    counting = OpCounter()
    if mode == "forward":
        _forward_rows(et, leaves, nodes, out, names, seed, counting, labels)
        et.op_counts = {"primal operations": n_primal,
                        "tangent operations": counting.total}
    else:
        steps = _reverse_rows(et, leaves, nodes, out, names, seed, counting, labels)
        et.op_counts = {"primal operations": n_primal, "adjoint steps": steps,
                        "adjoint operations": counting.total}
    et.sweep_counts = dict(counting.counts.most_common())
    return et


def _order(mode, order):
    """The truncation order: taylor mode's (default 3), None for the other modes."""
    if mode != "taylor":
        if order is not None:
            raise ValueError(f"trace: order applies to mode 'taylor' only, not {mode!r}")
        return None
    order = 3 if order is None else order
    if isinstance(order, bool) or int(order) != order or not 0 <= order <= MAX_ORDER:
        raise ValueError(f"trace: order must be an integer from 0 to {MAX_ORDER}, "
                         f"got {order!r}")
    return int(order)


MAX_ORDER = 30   # a table wider than this is unreadable; dualad.taylor has no limit


def _taylor_trace(et, leaves, nodes, out, names, seed, labels, order):
    """Taylor mode: one row of coefficients v_i,0 .. v_i,d per node (:mod:`._evaltaylor`)."""
    from ._evaltaylor import taylor_rows
    seed = _default_seed(leaves) if seed is None else seed
    seed = seed if isinstance(seed, (tuple, list)) else (seed,)
    if len(seed) != len(leaves):
        raise ValueError(f"trace: the taylor seed needs one direction per input "
                         f"({len(leaves)}), got {len(seed)}")
    et.order = order
    et.direction = "x + t·ẋ" if len(leaves) > 1 else f"{labels[0]} + t·{_marked(labels[0], _DOT)}"
    formulas = {node: _formula(node, names) for node in nodes[len(leaves):]}
    counting = taylor_rows(et, leaves, nodes, out, names, formulas, seed, labels, order)
    et.op_counts = {"primal operations": len(nodes) - len(leaves),
                    "coefficient operations": counting.total}
    et.sweep_counts = dict(counting.counts.most_common())
    return et


def _input_labels(names, n):
    """The display names of the ``n`` inputs (``x_1 .. x_n`` by default)."""
    if names is None:
        return [f"x_{k + 1}" for k in range(n)]
    names = [str(name) for name in names]
    if len(names) != n:
        raise ValueError(f"trace: names has {len(names)} entries but f gets {n} argument(s); "
                         f"give one name per argument")
    if len(set(names)) != n or not all(names):
        raise ValueError(f"trace: names {names} must be distinct and non-empty")
    return names


def _marked(label, mark):
    """``label`` with a dot (tangent) or bar (adjoint) over its first letter: ``x2`` ->
    ``ẋ2``; the default ``x_1`` -> ``ẋ_1``."""
    return unicodedata.normalize("NFC", label[0] + mark + label[1:])


_DOT, _BAR = "\u0307", "\u0304"   # combining dot above, combining macron


def _factor(p):
    """A partial as a factor of a product: parenthesized when it is a sum or negative."""
    return f"({p})" if ("+" in p or "−" in p) else p


def _default_seed(leaves):
    seed = []
    for i, leaf in enumerate(leaves):
        t = np.zeros_like(leaf.value)
        if i == 0:
            t.reshape(-1)[:1] = 1
        seed.append(t)
    return tuple(seed)


def _arg_values(node, counting):
    """The node's arguments, its traced ones lifted onto the counting tape."""
    return [counting.new_leaf(a.value) if isinstance(a, Var) and a._trace is node._trace
            else a for a in node.args]


def _apply_rules(et, node, counting, compute):
    """``compute(vals, lifted)`` on the counting tape; a rule that cannot run on traced
    values (a custom rule calling ``np.asarray``, say) is run on plain values instead and
    named in ``et.uncounted``: its derivative is still exact, only its count is missing."""
    try:
        return compute(_arg_values(node, counting), True)
    except Exception:  # noqa: BLE001 - retried below on plain values, where errors propagate
        et.uncounted.add(node.prim.name)
        return compute([a.value if isinstance(a, Var) else a for a in node.args], False)


def _forward_rows(et, leaves, nodes, out, names, seed, counting, labels):
    seed = _default_seed(leaves) if seed is None else seed
    seed = seed if isinstance(seed, (tuple, list)) else (seed,)
    if len(seed) != len(leaves):
        raise ValueError(f"trace: the forward seed needs one direction per input "
                         f"({len(leaves)}), got {len(seed)}")
    tangents = {}
    for i, leaf in enumerate(leaves):
        t = np.asarray(seed[i], dtype=np.result_type(leaf.value))
        if t.shape != np.shape(leaf.value):
            raise ValueError(f"trace: seed {i} has shape {t.shape}, but input {i} has shape "
                             f"{np.shape(leaf.value)}")
        tangents[leaf] = counting.new_leaf(t)
        et.rows.append(Row("v̇" + names[leaf][1:], _marked(labels[i], _DOT), t, "tangent",
                           names[leaf]))
    for node in nodes[len(leaves):]:
        traced = [j for j, a in enumerate(node.args) if isinstance(a, Var) and a in tangents]
        prim = node.prim

        def compute(vals, lifted):
            tan = (lambda a: tangents[a]) if lifted else (lambda a: primal_value(tangents[a]))
            if JVP_ALL.get(prim) is not None and not JVP.get(prim):
                ts = [tan(a) if j in traced else None for j, a in enumerate(node.args)]
                return JVP_ALL.get(prim)(ts, node.value, *vals, **node.params)
            total = None
            for j in traced:
                c = JVP.get(prim)[j](tan(node.args[j]), node.value, *vals, **node.params)
                total = c if total is None else total + c
            return total
        total = tangents[node] = _apply_rules(et, node, counting, compute)
        et.derivative_of[node] = primal_value(total)
        et.rows.append(Row("v̇" + names[node][1:], _tangent_formula(node, traced, names),
                           primal_value(total), "tangent", names[node]))
    for leaf in leaves:
        et.derivative_of[leaf] = primal_value(tangents[leaf])
    et.derivative = primal_value(tangents[out])
    et.rows.append(Row("y", names[out], out.value, "result", names[out]))
    et.rows.append(Row("ẏ", "v̇" + names[out][1:], et.derivative, "result", names[out]))


def _tangent_formula(node, traced, names):
    """``v̇_i`` as the sum of its arguments' contributions, written with the partials."""
    prim, dot = node.prim, (lambda a: "v̇" + names[a][1:])
    if prim.linear:   # the tangent of a linear operation is the operation on the tangents
        args = [dot(a) if j in traced else "0" for j, a in enumerate(node.args)]
        sub = {a: t for a, t in zip(node.args, args) if isinstance(a, Var)}
        return _formula(node, {**names, **sub}) if prim.name in _FORMULAS else \
            f"{prim.name}({', '.join(args + _params(node))})"
    terms = []
    for j in traced:
        a = node.args[j]
        if prim.name == "matmul":
            terms.append(f"{dot(a)} @ {_arg_name(node, 1, names)}" if j == 0 else
                         f"{_arg_name(node, 0, names)} @ {dot(a)}")
            continue
        p = _partial(node, j, names)
        if p is None:
            terms.append(f"∂{names[node]}/∂{names[a]} · {dot(a)}")
        else:
            terms.append(dot(a) if p == "1" else (f"−{dot(a)}" if p == "−1" else
                                                  f"{dot(a)} × {_factor(p)}"))
    return " + ".join(terms).replace("+ −", "− ")


def _reverse_rows(et, leaves, nodes, out, names, seed, counting, labels):
    ybar = np.ones_like(out.value) if seed is None else np.asarray(seed, dtype=float)
    if ybar.shape != np.shape(out.value):
        raise ValueError(f"trace: the reverse seed ȳ has shape {ybar.shape}, but the output "
                         f"has shape {np.shape(out.value)}")
    adj = {out: counting.new_leaf(ybar)}
    bar = lambda n: "v̄" + names[n][1:]  # noqa: E731
    et.rows.append(Row(bar(out), "ȳ", ybar, "adjoint", names[out]))
    steps = 0
    for node in reversed(nodes[len(leaves):]):
        if node not in adj:
            continue
        ct, prim = adj[node], node.prim
        parents = [j for j, a in enumerate(node.args) if isinstance(a, Var)
                   and a._trace is node._trace]

        def compute(vals, lifted):
            c = ct if lifted else primal_value(ct)
            if VJP_ALL.get(prim) is not None and not VJP.get(prim):
                return VJP_ALL.get(prim)(c, node.value, *vals, **node.params)
            return {j: VJP.get(prim)[j](c, node.value, *vals, **node.params) for j in parents}
        all_cts = _apply_rules(et, node, counting, compute)
        for j in parents:
            a, g = node.args[j], all_cts[j]
            if g is None:
                continue
            acc = f"{bar(a)} + " if a in adj else ""
            adj[a] = adj[a] + g if a in adj else g
            formula = f"{acc}{bar(node)} · ∂{names[node]}/∂{names[a]}"
            p = _partial(node, j, names)
            if p == "1":
                formula += f" = {acc}{bar(node)}"
            elif p == "−1":
                formula += f" = {bar(a)} − {bar(node)}" if acc else f" = −{bar(node)}"
            elif p is not None:
                formula += f" = {acc}{bar(node)} · {_factor(p)}"
            steps += 1
            et.rows.append(Row(bar(a), formula, primal_value(adj[a]), "adjoint", names[a],
                               names[node]))
    for n, v in adj.items():
        et.derivative_of[n] = primal_value(v)
    et.derivative = tuple(primal_value(adj[l]) if l in adj else np.zeros_like(l.value)
                          for l in leaves)
    for k, (leaf, d) in enumerate(zip(leaves, et.derivative)):
        et.rows.append(Row(_marked(labels[k], _BAR), bar(leaf) if leaf in adj else "0", d,
                           "result", names[leaf]))
    return steps
