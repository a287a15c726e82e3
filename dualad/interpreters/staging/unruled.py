"""A NumPy function with no rule, called on values only dualad.jit traces.

Without a transformation that needs its derivative or its batching (``jit(f)`` alone, or a
non-differentiable value inside ``jit(grad(f))``: ``np.isinf(x) & mask``), such a function
can simply run on the values: each traced argument is read with a whole-value guard (a
replay with other values traces again), and the result is a constant of the program. So
``jit(f)(x)`` computes what ``f(x)`` does wherever ``f`` runs on plain arrays. With a
derivative or batch level on an argument, it still raises dispatch's "no derivative rule"
error: a derivative is never dropped silently.
"""
from __future__ import annotations

from ...core.tracer import Box, primal_value, staged_only
from ...core.tree import flatten, tree_map

__all__ = ["run_on_values"]


def run_on_values(fn, args, kwargs, error):
    """``fn(*args, **kwargs)`` on the guarded values (``primal_value`` of a jit box records
    a whole-value guard: the program holds only for these values) when every traced value
    among the arguments is held by jit traces only; else raise ``error``."""
    boxes = [b for b in flatten((args, kwargs))[0] if isinstance(b, Box)]
    if not boxes or not all(staged_only(b) for b in boxes):
        raise error
    args, kwargs = tree_map(lambda v: primal_value(v) if isinstance(v, Box) else v,
                            (args, kwargs))
    return fn(*args, **kwargs)
