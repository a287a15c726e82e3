"""``dualad.scan`` (``checkpoints=None``) under a :func:`dualad.jit` trace: ONE loop equation.

Without jit the default scan runs ``step`` in Python at every step, and every
transformation records every step. Under a jit trace that would put ``l`` copies of
the step (and, under ``grad``, of its pullback) into the program. When a value the loop
reads is being recorded by a jit trace (a carry or xs leaf, or a value ``step`` closes
over: directly, or through a function, partial or container it closes over), the step
is instead traced once, closure-converted as the binomial path does
(:func:`dualad.transforms.scan.closure.trace_step`), and the loop becomes one equation of a loop
primitive (:mod:`dualad.transforms.scan.loop`) whose rules are loops too
(:mod:`dualad.transforms.scan.loop_rules`): ``jit(grad(scan(...)))`` stays a few equations however
long the loop, and its replay runs the step's compiled program once per step.

The recorded step takes the same primitives on the same values as the unrolled loop,
so the values are the unrolled ones bit for bit (a closed-over value's cotangent is
summed over the steps in the same order; only a value used several times within one
step has its per-step contributions added first).

Not taken (the loop runs in Python, recorded step by step as before) when a leaf of the
carry, xs or y is not an array or number, when the step's trace holds a guard
(Python control flow on a traced value, ``if c > 0``), which one program cannot follow
from step to step (``step`` then runs once more per step after that trace), or when an
integer carry or y leaf does not fit the loop's packed float64 value exactly (beyond
2**53) at the trace; at a replay that raises an OverflowError saying so.
"""
from __future__ import annotations

import functools

import numpy as np

from ...core.values import is_staged
from ...core.tree import leaves
from ...core.tree_nodes import is_registered
from ...core.tracer import Box, unguarded_value
from .closure import aval, example_value, trace_step
from .loop import LoopSpec
from .loop_rules import run

__all__ = ["staged_scan", "closes_over_staged"]

_DEPTH = 4        # how deep closures and containers are searched for traced values
_WIDE = 256       # containers longer than this are not searched


def closes_over_staged(fn):
    """Whether ``fn`` closes over a value a jit trace records: in its closure cells or
    defaults, through the functions, partials, bound methods and containers (tuples,
    lists, dicts) found there, up to a few levels deep."""
    seen = set()

    def walk(v, depth):
        if isinstance(v, Box):
            return is_staged(v)
        if depth <= 0 or id(v) in seen or isinstance(v, (str, bytes, np.ndarray, type)):
            return False
        seen.add(id(v))
        if isinstance(v, (list, tuple)):
            return len(v) <= _WIDE and any(walk(e, depth - 1) for e in v)
        if isinstance(v, dict):
            return len(v) <= _WIDE and any(walk(e, depth - 1) for e in v.values())
        if is_registered(type(v)):   # a registered pytree node: its children
            return walk(tuple(leaves(v)), depth - 1)
        if isinstance(v, functools.partial):
            return walk(v.func, depth - 1) or walk(v.args, depth - 1) or \
                walk(v.keywords, depth - 1)
        func = getattr(v, "__func__", None)   # a bound method: its function and object
        if func is not None:
            return walk(func, depth - 1) or walk(getattr(v, "__self__", None), depth - 1)
        cells = getattr(v, "__closure__", None)
        if cells is None and getattr(v, "__defaults__", None) is None:
            return False
        for cell in cells or ():
            try:
                content = cell.cell_contents
            except ValueError:   # an empty cell (a name assigned later)
                continue
            if walk(content, depth - 1):
                return True
        return walk(getattr(v, "__defaults__", None) or (), depth - 1)
    return walk(fn, _DEPTH)


def _numeric(x):
    if isinstance(x, Box):
        return np.result_type(x.dtype).kind in "biufc"
    if isinstance(x, (bool, int, float, complex, np.ndarray, np.generic)):
        return np.result_type(unguarded_value(x)).kind in "biufc"
    return False


def staged_scan(step, name, c_leaves, c_rebuild, x_leaves, x_rebuild, split_out, l,
                reverse):
    """``(carry, ys)`` of the scan as one loop equation, or None when it does not apply
    (nothing the loop reads is recorded by a jit trace, a leaf is not numeric, or the
    traced step holds a guard): the caller runs the Python loop."""
    if l < 1 or not (is_staged(list(c_leaves)) or is_staged(list(x_leaves))
                     or closes_over_staged(step)):
        return None
    if not all(_numeric(v) for v in list(c_leaves) + list(x_leaves)):
        return None
    first = l - 1 if reverse else 0
    x_first = [np.asarray(example_value(x))[first] for x in x_leaves]
    traced = trace_step(step, name, c_leaves, c_rebuild, x_first, x_rebuild, split_out)
    if traced.program.guards or not all(_numeric(y) for y in traced.y_leaves):
        return None
    lifted, y_tree = traced.lifted, traced.y_tree
    spec = LoopSpec(traced.program, name, [aval(v) for v in lifted],
                    [aval(v) for v in c_leaves], [aval(v) for v in x_first],
                    [aval(y) for y in traced.y_leaves], l, reverse, traced._compiled)
    traced.release()
    try:
        outs = run(spec, lifted, c_leaves, x_leaves)
    except OverflowError:   # an integer carry beyond 2**53: the Python loop carries it
        return None
    n = len(c_leaves)
    return c_rebuild(outs[:n]), (None if y_tree is None else y_tree(outs[n:]))
