"""No function on a hot or central path is over 60 lines of code (issue 33).

A line of code is a physical line holding a token of the function that is not part of a
docstring or a comment; a nested function's lines count towards the function that holds
it too (it is read as part of it). The modules are the tape record path, the reverse
sweep, forward mode, dispatch, the primitive's bind/apply and the transformations users
call, plus the scan primitive, the jit's scalar specialization, the Jacobian planner and
the rule checker. The count is ``ast`` + ``tokenize`` on the source, nothing imported
beyond locating the module.
"""
from __future__ import annotations

import ast
import importlib.util
import io
import tokenize

import pytest

LIMIT = 60

# When a module moves (the layout of issue 33), update its dotted name here.
MODULES = [
    "dualad.interpreters.reverse.sweep",
    "dualad.interpreters.reverse.tape",
    "dualad.core.tracer",
    "dualad.interpreters.forward.dual",
    "dualad.frontend.dispatch",
    "dualad.core.primitive",
    "dualad.transforms.api",
    "dualad.transforms.scan.rules",
    "dualad.transforms.scan.loop_rules",
    "dualad.transforms.scan.fused",
    "dualad.interpreters.staging.specialize",
    "dualad.jacobians.plan",
    "dualad.verification.rules",
]

# The one exception, held to its length: the reverse sweep's node loop applies the
# elementwise pullback inline, because a call per node measured +5.0% instructions on
# bench/instructions.py's scalar chain (see backward_sweep's Notes).
EXEMPT = {"dualad.interpreters.reverse.sweep.backward_sweep": 93}

_SKIP = (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
         tokenize.ENDMARKER)


def _docstring_lines(tree):
    lines = set()
    for n in ast.walk(tree):
        if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) \
                and n.body:
            first = n.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and \
                    isinstance(first.value.value, str):
                lines.update(range(first.lineno, first.end_lineno + 1))
    return lines


def function_lengths(source):
    """``[(qualified name, lines of code)]`` of every function and method in ``source``."""
    tree = ast.parse(source)
    doc = _docstring_lines(tree)
    code = set()
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type not in _SKIP:
            code.update(line for line in range(tok.start[0], tok.end[0] + 1)
                        if line not in doc)
    out = []

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = prefix + child.name
                span = range(child.lineno, child.end_lineno + 1)
                out.append((name, sum(1 for line in span if line in code)))
                visit(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")
            else:
                visit(child, prefix)
    visit(tree, "")
    return out


def test_exemptions_still_needed():
    """An exempt function that got short enough loses its exemption."""
    for qualified, _ in EXEMPT.items():
        module, name = qualified.rsplit(".", 1)
        spec = importlib.util.find_spec(module)
        with open(spec.origin, encoding="utf-8") as fh:
            n = dict(function_lengths(fh.read()))[name]
        assert n > LIMIT, f"{qualified} is {n} lines of code now: remove it from EXEMPT"


def test_counter_counts_code_only():
    src = ('def f(x):\n    """Doc\n    string."""\n    # a comment\n\n    y = (x +\n'
           '         1)\n    def g():\n        return y\n    return g\n')
    assert dict(function_lengths(src)) == {"f": 6, "f.g": 2}


@pytest.mark.parametrize("module", MODULES)
def test_no_function_over_limit(module):
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin, \
        f"{module} not found: if it moved, update MODULES in {__file__}"
    with open(spec.origin, encoding="utf-8") as fh:
        lengths = function_lengths(fh.read())
    over = [f"{module}.{name}: {n} lines of code" for name, n in lengths
            if n > EXEMPT.get(f"{module}.{name}", LIMIT)]
    assert not over, (f"functions over {LIMIT} lines of code (split them into named steps):\n"
                      + "\n".join(over))
