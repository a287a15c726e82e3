"""The solvers under ``dualad.vmap``: refused with a clear error, never a wrong answer.

SciPy's solvers take one problem at a time, and the front ends hand SciPy the primal
values of what the problem depends on. Under vmap a primal value holds the whole batch,
which SciPy would take for one problem (a "truth value is ambiguous" error at best, a
solve of the wrong problem at worst). Batching the solve (one SciPy call per example
inside the differentiable root) is not done yet, so a batched input, starting point,
bracket, bound or closed-over value is refused, naming the solver and the loop to write.
"""
from __future__ import annotations

__all__ = ["refuse_vmap"]

import functools

from ...core.tracer import Box, shape_of
from ...core.tree import flatten
from ...core.values import is_batched
from .._closure import closure_convert


def _find_batched(tree):
    for leaf in flatten(tree)[0]:
        if callable(leaf) and not isinstance(leaf, Box):
            found = _find_batched(closure_convert(leaf)[1])
        else:
            found = leaf if is_batched(leaf) else None
        if found is not None:
            return found
    return None


def refuse_vmap(solver):
    """``solver`` (a front end with SciPy's signature) that raises under vmap."""
    @functools.wraps(solver)
    def call(*args, **kwargs):
        found = _find_batched((args, kwargs))
        if found is not None:
            name = solver.__name__
            raise NotImplementedError(
                f"dualad.scipy.optimize.{name} under dualad.vmap: a value the problem depends "
                f"on is batched (per-example shape {shape_of(found)}), and SciPy's {name} "
                f"solves one problem at a time; dualad does not batch it yet. Loop over the "
                f"examples instead (np.stack([{name}(...) for each example])): each solution "
                f"stays differentiable in every mode")
        return solver(*args, **kwargs)
    return call
