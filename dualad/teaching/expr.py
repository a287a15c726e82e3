"""Safe parsing of small math expressions (``"log(x1) + x1*x2 - sin(x2)"``) into functions.

Only numbers, variables, ``+ - * / ** ^`` and a fixed set of functions are
accepted; anything else is an :class:`ExpressionError` with a one-line reason.
"""
from __future__ import annotations

import ast

import numpy as np

__all__ = ["ExpressionError", "compile_expression", "parse_assignments", "FUNCTIONS",
           "CONSTANTS"]

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
    """A function of ``variables`` (in that order) evaluating ``text``.

    The expression is parsed by Python's parser (which refuses nesting deeper than
    it supports with a one-line :class:`ExpressionError` here), then checked and
    turned into a postfix program without recursion, so a sum of thousands of terms
    evaluates like a short one. ``f.names`` is the set of variables it uses.
    """
    try:
        # '^' is read as a power, with a power's precedence (Python's ^ binds looser than +).
        tree = ast.parse(text.strip().replace("^", "**"), mode="eval")
    except SyntaxError as e:
        raise ExpressionError(f"cannot parse expression {_quote(text)}: {e.msg} at column "
                              f"{e.offset}") from None
    except (RecursionError, MemoryError):   # Python's parser has a nesting limit
        raise ExpressionError(f"expression of {len(text)} characters is nested too deeply "
                              f"(or too long) for Python's parser; split it into parts") from None
    program, names = _postfix(tree.body)
    unknown = sorted(names - set(variables) - set(CONSTANTS))
    if unknown:
        given = ", ".join(variables) or "none"
        raise ExpressionError(f"expression uses variable(s) {', '.join(unknown)} with no value "
                              f"(given: {given}); pass e.g. --at {unknown[0]}=1.0")
    variables = list(variables)

    def f(*args):
        return _run(program, dict(zip(variables, args)))
    f.__name__ = text
    f.names = frozenset(names)
    return f


def _quote(text, limit=60):
    return repr(text if len(text) <= limit else text[:limit - 3] + "...")


def _postfix(root):
    """Check ``root`` and list its operations in postfix order (an explicit stack, no
    recursion). Returns ``(program, names)``."""
    program, names = [], set()
    stack = [(root, False)]
    while stack:
        node, done = stack.pop()
        if done:
            program.append(node)
            continue
        stack.append((node, True))
        stack.extend((child, False) for child in reversed(_children(node, names)))
    return program, names


def _children(node, names):
    """The operands of ``node`` after checking it is allowed (names are collected)."""
    if isinstance(node, ast.BinOp):
        if type(node.op) not in _BINOPS:
            raise ExpressionError(f"operator {type(node.op).__name__} is not supported")
        return [node.left, node.right]
    if isinstance(node, ast.UnaryOp):
        if not isinstance(node.op, (ast.USub, ast.UAdd)):
            raise ExpressionError(f"operator {type(node.op).__name__} is not supported")
        return [node.operand]
    if isinstance(node, ast.Call):
        if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
            fname = getattr(node.func, "id", None) or _source(node.func)
            raise ExpressionError(f"unknown function {fname!r}; known: "
                                  f"{', '.join(sorted(FUNCTIONS))}")
        if len(node.args) != 1 or node.keywords:
            raise ExpressionError(f"{node.func.id}() takes exactly one argument")
        return [node.args[0]]
    if isinstance(node, ast.Name):
        names.add(node.id)
        return []
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) \
            and not isinstance(node.value, bool):
        return []
    raise ExpressionError(f"unsupported syntax: {_source(node)!r}")


def _source(node):
    try:
        return ast.unparse(node)
    except RecursionError:
        return type(node).__name__


def _run(program, env):
    """Evaluate a postfix program on a value stack."""
    stack = []
    push, pop = stack.append, stack.pop
    for node in program:
        if isinstance(node, ast.BinOp):
            b = pop()
            push(_binop(node, pop(), b))
        elif isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.USub):
                push(-pop())
        elif isinstance(node, ast.Call):
            push(FUNCTIONS[node.func.id](pop()))
        elif isinstance(node, ast.Name):
            push(env[node.id] if node.id in env else CONSTANTS[node.id])
        else:
            push(_number(node.value))
    return pop()


_FLOAT_MAX = float(np.finfo(np.float64).max)


def _number(value):
    try:
        return float(value)
    except OverflowError:
        digits = len(str(abs(value)))
        raise ExpressionError(f"the number {_quote(str(value), 24)} ({digits} digits) is "
                              f"beyond the largest float ({_FLOAT_MAX:.3g}); write a smaller "
                              f"number, or rescale the expression") from None


def _binop(node, a, b):
    """``a op b``, with Python's float errors on constants (a power that overflows, a
    division by zero) and a complex power of a negative constant turned into one-line
    :class:`ExpressionError` messages that name the subexpression."""
    if type(a) is not float or type(b) is not float:
        # a variable's operation: the constant as a NumPy scalar, so the value and its
        # derivative rules follow NumPy (x/0 is inf, not Python's ZeroDivisionError)
        a = np.float64(a) if type(a) is float else a
        b = np.float64(b) if type(b) is float else b
    try:
        out = _BINOPS[type(node.op)](a, b)
    except OverflowError:
        raise ExpressionError(
            f"{_quote(_source(node))} overflows: {a:g} {_SYMBOL[type(node.op)]} {b:g} is "
            f"beyond the largest float ({_FLOAT_MAX:.3g}); write a smaller constant, or "
            f"rescale (work with its logarithm)") from None
    except ZeroDivisionError:
        what = "0 to a negative power" if isinstance(node.op, ast.Pow) else "a division by 0"
        raise ExpressionError(
            f"{_quote(_source(node))} is {what}, which has no value; write the constant "
            f"it stands for, or put a variable there (--at)") from None
    if isinstance(out, complex):
        raise ExpressionError(
            f"{_quote(_source(node))} is not a real number ({a:g} to the power {b:g}); a "
            f"negative number to a non-integer power has no real value: write the power of "
            f"its absolute value, e.g. -(8**(1/3)) for the real cube root of -8") from None
    return out


_SYMBOL = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**"}


def parse_assignments(items):
    """``["x1=2", "x2=5"]`` -> ``{"x1": 2.0, "x2": 5.0}`` (order kept). A name given
    twice, or the name of a function or constant, is an :class:`ExpressionError`."""
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or not name.isidentifier():
            raise ExpressionError(f"--at expects name=value pairs, got {item!r}")
        if name in out:
            raise ExpressionError(f"--at gives {name} twice ({name}={out[name]:g} and {item!r}); "
                                  f"give each variable once")
        if name in FUNCTIONS or name in CONSTANTS:
            kind = "function" if name in FUNCTIONS else "constant"
            raise ExpressionError(f"--at {item!r}: {name} is a {kind} of the expression "
                                  f"language; name the variable differently")
        try:
            out[name] = float(value)
        except ValueError:
            raise ExpressionError(f"--at {item!r}: {value!r} is not a number") from None
    return out
