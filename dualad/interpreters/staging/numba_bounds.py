"""A proof, before compiling, that the one-function Numba program reads and writes only
inside its buffers.

The flat writer (:mod:`dualad.interpreters.staging.numba_flatwrite`) turns every array into offsets and
strides over flat buffers, and Numba compiles ``buf[off + i0 * s0]`` without a bounds
check (with ``boundscheck=True`` a replay is about a quarter slower). A wrong offset in the
writer would read a neighbour's numbers, or write over them, silently. So the written
source is checked on its own terms, independently of how the writer reasoned: it is
parsed (:mod:`ast`), every loop ``for i in range(a, b, s)`` gives its variable an interval,
and every subscript ``buf[e]`` of a buffer of known length ``n`` must have
:math:`0 \\le e \\le n - 1` for every value of the loop variables, by interval arithmetic
on ``e`` (``+``, ``-``, ``*`` of integers, ``&``, ``%`` and ``//`` by a positive constant,
loop variables, and entries of integer constant arrays, taken over their whole range). A call ``_pw(buf, start, count)`` (the pairwise
sum) reads ``buf[start:start + count]``.

Interval arithmetic over-approximates (a variable that appears twice counts twice), never
under-: when it cannot prove an access in bounds, or meets an index it cannot evaluate,
:func:`prove_in_bounds` raises :class:`~dualad.interpreters.staging.numba_base.Unsupported`: the
one-function writer declines the program, the kernels' writer (whole arrays, no offsets)
writes it instead, and ``source()`` says why.
"""
from __future__ import annotations

import ast

import numpy as np

from .numba_base import Unsupported

__all__ = ["prove_in_bounds", "int_ranges"]


def prove_in_bounds(source, sizes, int_values):
    """Check every subscript of a buffer in ``source`` (see the module docstring).

    Parameters
    ----------
    source : str
        The generated module: the njit functions (and the Python function calling them).
    sizes : dict
        ``{name: length}`` of the buffers the functions receive (arguments, constants);
        buffers a function allocates with ``np.empty(n, ...)`` are read from the source.
    int_values : dict
        ``{name: (min, max)}`` of the integer constant arrays whose entries index others.

    Raises
    ------
    Unsupported
        If an access may fall outside its buffer, or cannot be evaluated.
    """
    tree = ast.parse(source)
    for fn in tree.body:
        if isinstance(fn, ast.FunctionDef):
            _Checker(dict(sizes), dict(int_values)).block(fn.body, {})


class _Checker:
    def __init__(self, sizes, ints):
        self.sizes, self.ints = sizes, ints

    def block(self, stmts, env):
        for s in stmts:
            self.stmt(s, env)

    def stmt(self, s, env):
        if isinstance(s, ast.For):
            if not (isinstance(s.target, ast.Name) and isinstance(s.iter, ast.Call) and
                    isinstance(s.iter.func, ast.Name) and s.iter.func.id == "range"):
                raise Unsupported("the bounds proof: a loop that is not over a range")
            lo, hi = self.range_of([self.interval(a, env) for a in s.iter.args])
            for x in s.iter.args:
                self.expr(x, env)
            if lo > hi:             # an empty loop: its body never runs
                return
            inner = dict(env)
            inner[s.target.id] = (lo, hi)
            self.block(s.body, inner)
            self.block(s.orelse, env)
            return
        if isinstance(s, ast.Assign) and len(s.targets) == 1 and \
                isinstance(s.targets[0], ast.Name) and _is_empty_call(s.value):
            self.sizes[s.targets[0].id] = self.interval(s.value.args[0], env)[1]
            return
        for child in ast.iter_child_nodes(s):
            if isinstance(child, ast.stmt):
                self.stmt(child, env)
            elif isinstance(child, ast.expr):
                self.expr(child, env)

    def expr(self, e, env):
        """Check every buffer subscript and ``_pw`` call inside ``e``."""
        for node in ast.walk(e):
            if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and \
                    node.value.id in self.sizes:
                lo, hi = self.interval(node.slice, env)
                self.inside(node.value.id, lo, hi, node)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                    node.func.id == "_pw":
                buf = node.args[0]
                if not (isinstance(buf, ast.Name) and buf.id in self.sizes):
                    raise Unsupported("the bounds proof: a pairwise sum of an unknown buffer")
                start = self.interval(node.args[1], env)
                count = self.interval(node.args[2], env)
                if count[1] > 0:
                    self.inside(buf.id, start[0], start[1] + count[1] - 1, node)

    def inside(self, name, lo, hi, node):
        n = self.sizes[name]
        if lo < 0 or hi > n - 1:
            raise Unsupported(f"the bounds proof: {ast.unparse(node)} may reach entries "
                              f"{lo}..{hi} of {name}, which has {n} (a writer error: the "
                              f"one-function writer declines the program)")

    @staticmethod
    def range_of(bounds):
        """The interval a ``range(...)`` variable takes, from its arguments' intervals."""
        if len(bounds) == 1:
            return 0, bounds[0][1] - 1
        if len(bounds) == 2:
            return bounds[0][0], bounds[1][1] - 1
        (a, _), (_, b), (s, s2) = bounds
        if s != s2 or s <= 0:
            raise Unsupported("the bounds proof: a range whose step is not a positive int")
        return a, b - 1

    def interval(self, e, env):
        """``(lo, hi)``: the integer values ``e`` may take."""
        if isinstance(e, ast.Constant) and e.value.__class__ is int:
            return e.value, e.value
        if isinstance(e, ast.Name) and e.id in env:
            return env[e.id]
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub):
            lo, hi = self.interval(e.operand, env)
            return -hi, -lo
        if isinstance(e, ast.BinOp) and isinstance(e.op, (ast.Add, ast.Sub, ast.Mult)):
            a, b = self.interval(e.left, env), self.interval(e.right, env)
            if isinstance(e.op, ast.Add):
                return a[0] + b[0], a[1] + b[1]
            if isinstance(e.op, ast.Sub):
                return a[0] - b[1], a[1] - b[0]
            corners = [x * y for x in a for y in b]
            return min(corners), max(corners)
        if isinstance(e, ast.BinOp) and isinstance(e.op, (ast.BitAnd, ast.Mod, ast.FloorDiv)):
            a, b = self.interval(e.left, env), self.interval(e.right, env)
            if b[0] == b[1] and b[0] > 0 and (a[0] >= 0 or not isinstance(e.op, ast.BitAnd)):
                c = b[0]
                if isinstance(e.op, ast.BitAnd):     # a non-negative a & c lies in [0, c]
                    return 0, min(c, a[1])
                if isinstance(e.op, ast.Mod):        # Python's %: [0, c - 1] for c > 0
                    return (a[0], a[1]) if 0 <= a[0] and a[1] < c else (0, c - 1)
                return a[0] // c, a[1] // c
        if isinstance(e, ast.Call) and len(e.args) == 1 and not e.keywords and (
                isinstance(e.func, ast.Name) and e.func.id == "int" or
                isinstance(e.func, ast.Attribute) and e.func.attr == "int64"):
            return self.interval(e.args[0], env)
        if isinstance(e, ast.Subscript) and isinstance(e.value, ast.Name) and \
                e.value.id in self.ints:
            self.expr(e, env)          # the index array's own subscript in bounds
            return self.ints[e.value.id]
        raise Unsupported(f"the bounds proof: an index it cannot evaluate: {ast.unparse(e)}")


def _is_empty_call(v):
    return isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and \
        v.func.attr in ("empty", "zeros") and isinstance(v.func.value, ast.Name) and \
        v.func.value.id == "np" and v.args


def int_ranges(consts):
    """``{name: (min, max)}`` for the integer constant arrays among ``consts`` (a list of
    flat arrays, named ``k0``, ``k1``, ...)."""
    out = {}
    for j, c in enumerate(consts):
        if c.dtype.kind in "iu" and c.size:
            out[f"k{j}"] = (int(np.min(c)), int(np.max(c)))
    return out

