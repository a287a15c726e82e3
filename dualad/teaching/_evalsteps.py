"""The steps of the teaching page (:mod:`.evalhtml`): one per row of a sweep, each with
the graph nodes and edges it touches and a caption saying in plain words what it does.

A step is a plain dict (it is embedded in the page as JSON)::

    {"rows": [k], "nodes": ["v_2"], "via": None, "edges": ["v_-1>v_2", "v_0>v_2"],
     "set": {"v_2": "5.000"}, "value": "5.000", "num": 5.0, "partial": {},
     "lead": "v̇_2 = ...", "caption": "Chain rule: ..."}

``rows`` indexes ``EvaluationTrace.rows`` (the rows the step reveals), ``set`` the
tangent or adjoint each node shows after it, ``num`` the exact value (a float, a nested
list for an array, ``None`` for a complex or non-finite one). ``partial`` maps a node
whose adjoint the step leaves incomplete to ``[i, n]``: it has received ``i`` of its
``n`` contributions (see :func:`contributions`); empty when the step makes it final.
Captions are plain text here; the page escapes and typesets them.
"""
from __future__ import annotations

from collections import Counter

import numpy as np

from ._evalnodes import _fmt, _parents

__all__ = ["sweep_steps", "graph_of", "input_labels", "uses", "contributions"]

_TIMES = {1: "once", 2: "twice", 3: "three times", 4: "four times"}


def graph_of(et):
    """``{node name: [parent names]}`` in evaluation order (inputs first)."""
    return {et.names[n]: list(dict.fromkeys(et.names[p] for p in _parents(n)))
            for n in et.nodes}


def input_labels(et):
    """``{input node name: the user's label}`` (``{"v_-1": "x1", "v_0": "x2"}``)."""
    inputs = {et.names[n] for n in et.nodes if n.prim is None}
    return {r.node: r.formula for r in et.rows if r.section == "primal" and r.node in inputs}


def uses(et):
    """``{node name: how many times the operations use it}``, counted on the graph with
    multiplicity (``v_1 = v_0 × v_0`` uses ``v_0`` twice): the number of contributions
    ``v̄_i · ∂v_i/∂v_j`` the reverse sweep adds into ``v̄_j``. The output has none."""
    count = Counter({et.names[n]: 0 for n in et.nodes})
    for n in et.nodes:
        count.update(et.names[p] for p in _parents(n))
    return dict(count)


def contributions(et):
    """``{row index: (i, n, final)}`` for each accumulation row of a reverse trace: after
    it, its node's adjoint holds ``i`` of its ``n`` contributions (``n`` from
    :func:`uses`); ``final`` is true on the node's last row. Before that row the adjoint
    is a partial sum, not yet ``∂y/∂v_j``. (A use whose rule passes back no cotangent, a
    symbolic zero, has no row and adds nothing: the last row is final all the same.)"""
    n_uses, seen, out = uses(et), Counter(), {}
    last = {r.node: k for k, r in enumerate(et.rows) if r.section == "adjoint" and r.via}
    for k, r in enumerate(et.rows):
        if r.section == "adjoint" and r.via:
            seen[r.node] += 1
            n = n_uses[r.node]
            out[k] = (seen[r.node], n, k == last[r.node])
    return out


def _number(value):
    """The exact value as JSON: a float or nested list of floats; None when complex or
    not finite (JSON has no NaN)."""
    a = np.asarray(value)
    if np.iscomplexobj(a) or not np.issubdtype(a.dtype, np.number):
        return None
    a = a.astype(float)
    if not np.all(np.isfinite(a)):
        return None
    return a.tolist()


def _times(n):
    return _TIMES.get(n, f"{n} times")


def _and(items):
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _users(names):
    """Who uses a variable: ``"by v_4 and v_2"``; ``"once by v_2, twice by v_1"`` when
    one operation uses it more than once (``v_1 = v_0 × v_0``)."""
    counts = Counter(names)
    if max(counts.values()) == 1:
        return "by " + _and(list(counts))
    return ", ".join(f"{_times(n)} by {v}" for v, n in counts.items())


def sweep_steps(et, digits=3):
    """The steps of ``et``'s sweep (see the module docstring), then one for the result."""
    graph, labels = graph_of(et), input_labels(et)
    primal = {r.node: r.formula for r in et.rows if r.section == "primal"}
    node_of = {et.names[n]: n for n in et.nodes}
    who = lambda v: f"{v} ({labels[v]})" if v in labels else v  # noqa: E731
    parts = contributions(et) if et.mode == "reverse" else {}
    users = {}      # node -> its users in the sweep's order, one entry per use (x × x: two)
    for n in reversed(et.nodes):
        for p in _parents(n):
            users.setdefault(et.names[p], []).append(et.names[n])
    steps = []
    for k, r in enumerate(et.rows):
        if r.section not in ("tangent", "adjoint"):
            continue
        val = _fmt(r.value, digits)
        step = {"rows": [k], "nodes": [r.node], "via": r.via, "edges": [],
                "set": {r.node: _short(val)}, "value": val, "num": _number(r.value),
                "partial": {}}
        if r.section == "tangent" and r.node in labels:
            step["lead"] = f"{r.name} = {r.formula} = {val}"
            step["caption"] = (f"Seed: along the chosen direction ẋ, input {labels[r.node]} "
                               f"moves at rate {val}. This tangent starts the forward sweep.")
        elif r.section == "tangent":
            parents = graph[r.node]
            step["edges"] = [f"{p}>{r.node}" for p in parents]
            step["lead"] = f"{r.name} = {r.formula} = {val}"
            op = f"{r.node} = {primal[r.node]}"
            if node_of[r.node].prim.linear or not any(c in r.formula for c in "×∂@"):
                step["caption"] = (f"{op} is linear, so its tangent is the same operation "
                                   f"applied to the tangents of its operands.")
            elif len(parents) == 1:
                step["caption"] = (f"Chain rule: {op}, so its tangent is the tangent of "
                                   f"{who(parents[0])} times the local derivative "
                                   f"∂{r.node}/∂{parents[0]}.")
            else:
                step["caption"] = (f"Chain rule: {op} depends on {_and(parents)}; its tangent "
                                   f"adds each operand's tangent times the partial derivative "
                                   f"of {r.node} with respect to it.")
        elif r.via is None:
            step["lead"] = f"{r.name} = {r.formula} = {val}"
            step["caption"] = (f"Seed: the reverse sweep starts at the output {r.node} with "
                               f"its adjoint ȳ ({val}; 1 is ∂y/∂y). Adjoints now flow "
                               f"backwards, from each result to the operands that made it.")
        else:
            step.update(_accumulation(r, val, users, primal, labels, who, parts[k]))
        steps.append(step)
    steps.append(_result_step(et, digits, labels))
    return steps


def _accumulation(r, val, users, primal, labels, who, part):
    """The lead and caption of a reverse-sweep row ``v̄_j (+)= v̄_i · ∂v_i/∂v_j`` that
    brings contribution ``i`` of ``n`` (``part``), and which node it leaves partial."""
    (i, n, final), bar = part, r.name
    op = f"{r.via} = {primal[r.via]}"
    out = {"edges": [f"{r.node}>{r.via}"], "partial": {} if final else {r.node: [i, n]}}
    if not final:
        state = (f"Until the other {'use adds its' if n - i == 1 else 'uses add their'} "
                 f"contribution{'' if n - i == 1 else 's'}, {bar} is a partial sum "
                 f"({i} of {n}): it is not yet ∂y/∂{labels.get(r.node, r.node)}.")
    elif i < n:     # the other uses' rules passed back nothing: a symbolic zero each
        state = (f"Its other {_plural(n - i, 'use passes', 'uses pass')} back no "
                 f"contribution (zero), so {bar} = {val} is final, "
                 f"∂y/∂{labels.get(r.node, r.node)}.")
    else:
        state = (f"That was its last contribution ({i} of {n}): {bar} = {val} is final, "
                 f"∂y/∂{labels.get(r.node, r.node)}." if n > 1 else "")
    last = r.formula.split(" = ")[-1]
    if i == 1:
        out["lead"] = f"{bar} = {r.formula} = {val}"
        if n == 1:
            out["caption"] = (f"{who(r.node)} is used once, by {op}: its adjoint is "
                              f"v̄{r.via[1:]} times the partial ∂{r.via}/∂{r.node}.")
        else:
            out["caption"] = (f"{who(r.node)} is used {_times(n)} ({_users(users[r.node])}"
                              f"); this is the first contribution, from {op}. {state}")
        return out
    out["lead"] = f"{bar} = {r.formula}"
    for sign, op_sign in ((" + ", "+="), (" − ", "−=")):
        if last.startswith(bar + sign):
            out["lead"] = f"{bar} {op_sign} {last[len(bar) + len(sign):]}"
            break
    out["caption"] = (f"{labels.get(r.node, r.node)} is used {_times(n)}, so its adjoint "
                      f"accumulates: this adds the contribution of its use in {op}. "
                      f"Now {bar} = {val}. {state}")
    return out


def _plural(k, one, many):
    return one if k == 1 else f"{k} {many}"


MAX_VALUE = 26   # characters of a value a graph node shows (two boxes of arrays per row)


def _short(text, limit=MAX_VALUE):
    """A value as a graph node shows it (all of it in the table)."""
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _result_step(et, digits, labels):
    rows = [k for k, r in enumerate(et.rows) if r.section == "result"]
    step = {"rows": rows, "via": None, "edges": [], "set": {}, "partial": {}}
    if et.mode == "forward":
        out = et.rows[rows[0]].node
        val = _fmt(et.derivative, digits)
        direction = ", ".join(_fmt(r.value, digits) for r in et.rows
                              if r.section == "tangent" and r.node in labels)
        step.update(nodes=[out], value=val, num=_number(et.derivative), lead=f"ẏ = {val}",
                    caption=(f"Done: one forward sweep, alongside y = {_fmt(et.output, digits)}"
                             f", gave the derivative of f along ẋ = ({direction}). Another "
                             f"direction needs another sweep."))
        return step
    grads = [et.rows[k] for k in rows]
    vals = [_fmt(r.value, digits) for r in grads]
    step.update(nodes=[r.node for r in grads], value=", ".join(vals),
                num=[_number(r.value) for r in grads],
                lead=f"x̄ = ({', '.join(vals)})" if len(vals) > 1 else f"x̄ = {vals[0]}",
                caption=("Done: one reverse sweep gave the whole gradient, "
                         + ", ".join(f"{r.name} = {v}" for r, v in zip(grads, vals))
                         + (". Forward mode needs one sweep per input for this."
                            if len(grads) > 1 else ".")))
    return step

