"""Evaluation traces (Wengert lists): forward and reverse sweeps shown step by step.

``trace(f, *args, mode="forward")`` records ``f`` once on the tape and lays it
out as in Baydin et al.'s survey (JMLR 2018, Tables 2 and 3) and Griewank and
Walther's book: inputs ``v_{1-n} .. v_0``, intermediates ``v_1 .. v_l``, each
with its formula and primal value, then

- forward mode: the tangent trace ``v̇_i = Σ_j ∂v_i/∂v_j · v̇_j`` in
  evaluation order, for the seed direction ``ẋ``;
- reverse mode: the adjoint trace in the order the sweep performs it, one
  row per accumulation ``v̄_j = v̄_j + v̄_i · ∂v_i/∂v_j``, from the seed ``ȳ``.

Every number comes from the registry's own JVP and VJP rules; the formula
strings are for display only.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .reverse import Var, VJPTrace
from .tracer import primal_value

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
    "sqrt": ["1/(2{out})"], "tanh": ["1 − {out}²"], "power": ["{1}·{0}^({1}−1)", "ln {0}·{out}"],
}


def _fmt(v, digits=3):
    v = primal_value(v)
    a = np.asarray(v)
    if a.ndim == 0:
        x = float(a) if np.isrealobj(a) else complex(a)
        return f"{x:.{digits}f}" if isinstance(x, float) else str(np.round(x, digits))
    with np.printoptions(threshold=12, edgeitems=2):
        return np.array2string(a, separator=", ", formatter={
            "float_kind": lambda x: f"{x:.{digits}f}"}).replace("\n", "")


@dataclass
class Row:
    """One line of a trace: ``name = formula = value``."""
    name: str
    formula: str
    value: object
    section: str

    def cells(self, digits):
        return [self.name, self.formula, _fmt(self.value, digits)]


@dataclass
class EvaluationTrace:
    """A recorded sweep, renderable as text, Markdown, LaTeX and Graphviz DOT."""
    mode: str
    rows: list = field(default_factory=list)
    nodes: list = field(default_factory=list)
    names: dict = field(default_factory=dict)
    derivative_of: dict = field(default_factory=dict)
    output: object = None
    derivative: object = None
    op_counts: dict = field(default_factory=dict)

    # --- rendering ----------------------------------------------------------
    def to_text(self, digits=3):
        cells = [r.cells(digits) for r in self.rows]
        w = [max(len(c[i]) for c in cells) for i in range(3)]
        out, section = [], None
        for r, c in zip(self.rows, cells):
            if r.section != section:
                section = r.section
                out.append(f"-- {section} " + "-" * max(0, sum(w) + 4 - len(section)))
            out.append(f"{c[0].ljust(w[0])} = {c[1].ljust(w[1])} = {c[2]}")
        out.append(self._summary(digits))
        return "\n".join(out)

    def to_markdown(self, digits=3):
        out = ["| trace | variable | formula | value |", "|---|---|---|---|"]
        for r in self.rows:
            name, formula, value = r.cells(digits)
            out.append(f"| {r.section} | {name} | {formula} | {value} |")
        out += ["", self._summary(digits)]
        return "\n".join(out)

    def to_latex(self, digits=3):
        def tex(s):
            for a, b in [("v̇", r"\dot v"), ("v̄", r"\bar v"), ("ẋ", r"\dot x"), ("ȳ", r"\bar y"),
                         ("∂", r"\partial "), ("×", r"\times "), ("−", "-"), ("·", r"\cdot "),
                         ("√", r"\sqrt "), ("²", "^2"), ("ln ", r"\ln "), ("sin ", r"\sin "),
                         ("cos ", r"\cos "), ("exp ", r"\exp ")]:
                s = s.replace(a, b)
            return _tex_subscripts(s)
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
        return (f"y = {_fmt(self.output, digits)};  derivative ({self.mode}) = "
                f"{_fmt(self.derivative, digits)};  operation counts: {counts}")

    def __str__(self):
        return self.to_text()

    def to_dot(self, digits=3):
        """The computational graph in Graphviz DOT, nodes labelled with values and
        tangents (forward) or adjoints (reverse)."""
        mark = "v̇" if self.mode == "forward" else "v̄"
        lines = ["digraph evaluation_trace {", "  rankdir=LR;",
                 '  node [shape=box, fontname="Helvetica"];']
        for node in self.nodes:
            name = self.names[node]
            d = self.derivative_of.get(node)
            label = f"{name} = {_fmt(node.value, digits)}"
            if d is not None:
                label += f"\\n{mark} = {_fmt(d, digits)}"
            lines.append(f'  "{name}" [label="{label}"];')
        for node in self.nodes:
            for a in _parents(node):
                lines.append(f'  "{self.names[a]}" -> "{self.names[node]}";')
        lines.append("}")
        return "\n".join(lines)

    def plot(self, path, digits=3):
        """Draw the graph to a PNG with matplotlib (the optional ``plot`` extra)."""
        from .evalplot import draw_graph
        draw_graph(self, path, digits)
        return path


def _tex_subscripts(s):
    import re
    return re.sub(r"_(-?\d+)", r"_{\1}", s)


def _parents(node):
    if node.prim is None:
        return []
    return [a for a in node.args if isinstance(a, Var) and a._trace is node._trace]


def _reachable(out):
    seen, stack = set(), [out]
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        stack.extend(_parents(n))
    return sorted(seen, key=lambda n: n.seq)


def _formula(node, names):
    args = [names.get(a, _fmt(a)) if isinstance(a, Var) else _fmt(a) for a in node.args]
    tpl = _FORMULAS.get(node.prim.name)
    if tpl is None:
        params = ", ".join(f"{k}={v}" for k, v in (node.params or {}).items())
        return f"{node.prim.name}({', '.join(args + ([params] if params else []))})"
    return tpl.format(*args, out=names[node])


def _partial(node, j, names):
    args = [names.get(a, _fmt(a)) if isinstance(a, Var) else _fmt(a) for a in node.args]
    tpls = _PARTIALS.get(node.prim.name)
    if tpls is None or j >= len(tpls):
        return f"∂{names[node]}/∂{args[j]}"
    return tpls[j].format(*args, out=names[node])


def trace(f, *args, mode="forward", seed=None):
    """The evaluation trace of ``f(*args)`` with its tangent or adjoint trace.

    ``seed`` is the input direction ``ẋ`` (forward; default: the first input's
    unit direction, as in the survey) — a tuple with one entry per argument —
    or the output cotangent ``ȳ`` (reverse; default 1).
    """
    if mode not in ("forward", "reverse"):
        raise ValueError(f"trace: mode must be 'forward' or 'reverse', got {mode!r}")
    from .api import check_input
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
    for leaf in leaves:
        et.rows.append(Row(names[leaf], f"x_{leaves.index(leaf) + 1}", leaf.value, "primal"))
    for node in nodes[n_in:]:
        et.rows.append(Row(names[node], _formula(node, names), node.value, "primal"))
    n_primal = len(nodes) - n_in
    if mode == "forward":
        _forward_rows(et, leaves, nodes, names, seed)
        et.op_counts = {"primal operations": n_primal, "tangent operations": n_primal}
    else:
        steps = _reverse_rows(et, leaves, nodes, out, names, seed)
        et.op_counts = {"primal operations": n_primal, "adjoint steps": steps}
    return et


def _forward_rows(et, leaves, nodes, names, seed):
    if seed is None:
        seed = tuple(np.ones_like(l.value) if i == 0 else np.zeros_like(l.value)
                     for i, l in enumerate(leaves))
    seed = seed if isinstance(seed, (tuple, list)) else (seed,)
    tangents = {}
    for i, leaf in enumerate(leaves):
        tangents[leaf] = np.asarray(seed[i], dtype=np.result_type(leaf.value))
        et.rows.append(Row("v̇" + names[leaf][1:], f"ẋ_{i + 1}", tangents[leaf], "tangent"))
    for node in nodes[len(leaves):]:
        vals = [a.value if isinstance(a, Var) else a for a in node.args]
        total, terms = None, []
        for j, a in enumerate(node.args):
            if not (isinstance(a, Var) and a in tangents):
                continue
            c = node.prim.jvps[j](tangents[a], node.value, *vals, **node.params)
            total = c if total is None else total + c
            p = _partial(node, j, names)
            t = "v̇" + names[a][1:]
            terms.append(t if p == "1" else (f"−{t}" if p == "−1" else f"{t} × {p}"))
        tangents[node] = total
        et.derivative_of[node] = total
        et.rows.append(Row("v̇" + names[node][1:], " + ".join(terms).replace("+ −", "− "),
                           total, "tangent"))
    for leaf in leaves:
        et.derivative_of[leaf] = tangents[leaf]
    et.derivative = tangents[nodes[-1]]


def _reverse_rows(et, leaves, nodes, out, names, seed):
    ybar = np.ones_like(out.value) if seed is None else np.asarray(seed)
    adj = {out: ybar}
    name_bar = lambda n: "v̄" + names[n][1:]  # noqa: E731
    et.rows.append(Row(name_bar(out), "ȳ", ybar, "adjoint"))
    steps = 0
    for node in reversed(nodes[len(leaves):]):
        if node not in adj:
            continue
        ct = adj[node]
        vals = [a.value if isinstance(a, Var) else a for a in node.args]
        for j, a in enumerate(node.args):
            if not (isinstance(a, Var) and a._trace is node._trace):
                continue
            g = node.prim.vjps[j](ct, node.value, *vals, **node.params)
            partial = f"∂{names[node]}/∂{names[a]}"
            if a in adj:
                adj[a] = adj[a] + g
                formula = f"{name_bar(a)} + {name_bar(node)} · {partial}"
            else:
                adj[a] = g
                formula = f"{name_bar(node)} · {partial}"
            steps += 1
            et.rows.append(Row(name_bar(a), formula, adj[a], "adjoint"))
    for n, v in adj.items():
        et.derivative_of[n] = v
    et.derivative = tuple(adj.get(l, np.zeros_like(l.value)) for l in leaves)
    return steps
