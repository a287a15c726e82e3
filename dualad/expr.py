"""Safe parsing of small math expressions (``"log(x1) + x1*x2 - sin(x2)"``) into functions.

Only numbers, variables, ``+ - * / ** ^`` and a fixed set of functions are
accepted; anything else is an :class:`ExpressionError` with a one-line reason.
"""
from __future__ import annotations

import ast

import numpy as np

FUNCTIONS = {
    "log": np.log, "ln": np.log, "exp": np.exp, "sin": np.sin, "cos": np.cos, "tan": np.tan,
    "sqrt": np.sqrt, "tanh": np.tanh, "sinh": np.sinh, "cosh": np.cosh, "arctan": np.arctan,
    "atan": np.arctan, "arcsin": np.arcsin, "asin": np.arcsin, "arccos": np.arccos,
    "acos": np.arccos, "abs": np.abs, "log1p": np.log1p, "expm1": np.expm1,
    "square": np.square, "log2": np.log2, "log10": np.log10,
}
CONSTANTS = {"pi": np.pi, "e": np.e}
_BINOPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b,
           ast.Mult: lambda a, b: a * b, ast.Div: lambda a, b: a / b,
           ast.Pow: lambda a, b: a ** b}


class ExpressionError(ValueError):
    """A bad expression or a missing variable."""


def compile_expression(text, variables):
    """A function of ``variables`` (in that order) evaluating ``text``."""
    try:
        # '^' is read as a power, with a power's precedence (Python's ^ binds looser than +).
        tree = ast.parse(text.strip().replace("^", "**"), mode="eval")
    except SyntaxError as e:
        raise ExpressionError(f"cannot parse expression {text!r}: {e.msg} at column "
                              f"{e.offset}") from None
    names = set()
    _check(tree.body, names)
    unknown = sorted(names - set(variables) - set(CONSTANTS))
    if unknown:
        given = ", ".join(variables) or "none"
        raise ExpressionError(f"expression uses variable(s) {', '.join(unknown)} with no value "
                              f"(given: {given}); pass e.g. --at {unknown[0]}=1.0")
    variables = list(variables)

    def f(*args):
        env = dict(zip(variables, args))
        return _eval(tree.body, env)
    f.__name__ = text
    return f


def _check(node, names):
    if isinstance(node, ast.BinOp):
        if type(node.op) not in _BINOPS:
            raise ExpressionError(f"operator {type(node.op).__name__} is not supported")
        _check(node.left, names)
        _check(node.right, names)
    elif isinstance(node, ast.UnaryOp):
        if not isinstance(node.op, (ast.USub, ast.UAdd)):
            raise ExpressionError(f"operator {type(node.op).__name__} is not supported")
        _check(node.operand, names)
    elif isinstance(node, ast.Call):
        if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
            fname = getattr(node.func, "id", ast.unparse(node.func))
            raise ExpressionError(f"unknown function {fname!r}; known: "
                                  f"{', '.join(sorted(FUNCTIONS))}")
        if len(node.args) != 1 or node.keywords:
            raise ExpressionError(f"{node.func.id}() takes exactly one argument")
        _check(node.args[0], names)
    elif isinstance(node, ast.Name):
        names.add(node.id)
    elif isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) \
            and not isinstance(node.value, bool):
        pass
    else:
        raise ExpressionError(f"unsupported syntax: {ast.unparse(node)!r}")


def _eval(node, env):
    if isinstance(node, ast.BinOp):
        return _BINOPS[type(node.op)](_eval(node.left, env), _eval(node.right, env))
    if isinstance(node, ast.UnaryOp):
        v = _eval(node.operand, env)
        return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.Call):
        return FUNCTIONS[node.func.id](_eval(node.args[0], env))
    if isinstance(node, ast.Name):
        return env[node.id] if node.id in env else CONSTANTS[node.id]
    return float(node.value)


def parse_assignments(items):
    """``["x1=2", "x2=5"]`` -> ``{"x1": 2.0, "x2": 5.0}`` (order kept)."""
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip().isidentifier():
            raise ExpressionError(f"--at expects name=value pairs, got {item!r}")
        try:
            out[name.strip()] = float(value)
        except ValueError:
            raise ExpressionError(f"--at {item!r}: {value!r} is not a number") from None
    return out
