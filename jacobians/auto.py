"""``mode="auto"`` of ``jacobian`` and ``hessian``: a plan per call, in proportion to it.

First call of ``jacobian(f, x)`` (nothing cached):

    census            one counted run of f (n, m, the work, the chunk size); the dense
                      result is refused here if over max_memory (:mod:`.memory`)
    detection         one run of f on index-set patterns, only when the modelled dense
                      cost is worth it (:func:`cost.worth_detecting`), then colorings
    timing            one sweep of each close alternative, only on a close call whose
                      best is modelled at cost.TIME_MIN_SECONDS or more
    sweeps            the chosen mode's; a sparse mode's compressed product is
                      decompressed into the dense result (the same values)

(:func:`jacobians.plan.prepare`). What it chose is kept twice:

- per function object (weakly): the mode, the chunk and, for a sparse mode, the pattern
  with its coloring, checked at every new point (:mod:`jacobians.validity`); the next
  call at any point of the same shapes plans nothing;
- per code (:mod:`jacobians.reuse`): the mode and the chunk only, so a fresh lambda of
  the same code, closure signature and argument signature (a lambda in a loop) skips
  the census and the timing: a dense mode goes straight to its sweeps, a sparse one
  detects its own pattern (patterns are never shared between function objects).

``jacfwd``/``jacrev`` (a fixed mode) need only the chunk size: one census run on a first
call (:func:`fixed_chunk`), none with ``chunk_size=`` or a cached choice.

``hessian(f, x)`` (auto) is forward-over-reverse, or, when the modelled dense cost
(:func:`cost.model_hessian`) is worth a detection of the Hessian's pattern and the
compressed sweeps of its coloring are modelled cheaper, those sweeps decompressed into
the dense, exactly symmetric result. The coloring is the star coloring (direct
recovery), or the acyclic one (recovery by substitution) when it needs fewer colors
(:func:`jacobians.acyclic.hessian_coloring`); ``Choice.why`` names the kind and both
counts. Its choice is made from the census alone (no timing).
"""
from __future__ import annotations

__all__ = ["Choice", "fixed_chunk", "jacobian_auto", "hessian_auto"]

import numpy as np

from . import cost
from ._common import FunctionCache
from .acyclic import hessian_coloring
from .hessian_sweeps import hessian_chunk, hessian_rows
from .budget import jacobian_any_within
from .memory import BudgetTooSmall, DenseTooLarge, dense_of, refuse_dense, symmetrize
from .patterns import TooDense
from .plan import prepare
from .planlog import chose, planned
from .reuse import MODES
from .sparsity import detect_hessian
from .sweeps import chunk_for, forward_flat, get_census, result_dtype, reverse_flat, signature
from .validity import CheckedPattern

# Per function object: what auto mode chose (never holding the function itself, which
# would keep the weak key alive).
_CHOICES = FunctionCache()


class Choice:
    """What auto mode chose for one function and signature: ``mode``, ``chunk`` and, for a
    sparse mode, the checked pattern; ``why`` in words."""

    __slots__ = ("mode", "chunk", "checked", "why")

    def __init__(self, mode, chunk, checked=None, why=""):
        self.mode, self.chunk, self.checked, self.why = mode, chunk, checked, why


def fixed_chunk(problem, mode, chunk_size, max_memory):
    """The chunk size of a fixed mode: ``chunk_size``, the cached census', the chunk a
    function of the same code chose (:mod:`.reuse`: a chunk affects memory and speed,
    never the value), or one census run. Refuses an oversized dense result as soon as
    the census tells ``m``; otherwise the sweep does, before allocating it."""
    if chunk_size is not None:
        return chunk_for(problem, chunk_size, max_memory)
    census = get_census(problem, compute=False)
    if census is None:
        key = ("chunk", signature(problem), max_memory)
        hit = MODES.get(problem.f, key)
        if hit is not None:
            return hit
        census = get_census(problem)
        MODES.put(problem.f, key, chunk_for(problem, None, max_memory, census))
    refuse_dense(problem.api, problem, max_memory, result_dtype(problem))
    return chunk_for(problem, None, max_memory, census)


def _adopt_outputs(problem, computed):
    if computed is not problem:
        problem.out_shapes, problem.out_rebuild = computed.out_shapes, computed.out_rebuild
        problem.out_offsets, problem.m = computed.out_offsets, computed.m


def jacobian_auto(problem, chunk_size, max_memory, calibrate=True, mode="auto"):
    """The flat dense Jacobian (m x n) of ``problem`` by the cheapest way (module doc), or,
    with ``mode="mixed"``, through the cut :func:`jacobians.plan` takes when mixed mode is
    asked for (refused, with the reason, when the program has none)."""
    if mode == "mixed":
        return _mixed_flat(problem, chunk_size, max_memory)
    key = ("jacobian-auto", signature(problem), chunk_size, max_memory, calibrate)
    choice = _CHOICES.get(problem.f, key)
    if choice is None:
        choice = _choose_jacobian(problem, key, chunk_size, max_memory, calibrate)
    if choice.mode == "forward":
        return forward_flat(problem, choice.chunk, max_memory=max_memory)
    if choice.mode == "reverse":
        return reverse_flat(problem, choice.chunk, max_memory=max_memory)
    if choice.mode == "within":
        return jacobian_any_within(problem, chunk_size, max_memory)
    flat, computed = choice.checked.evaluate(problem, choice.chunk)
    _adopt_outputs(problem, computed)
    refuse_dense(problem.api, problem, max_memory, flat.dtype)   # the output's shape may
    return dense_of(flat)                                       # have changed at this point


def _mixed_flat(problem, chunk_size, max_memory):
    """``mode="mixed"``: planned at every call, since the plan holds ``f`` (a per-function
    memo of it would keep ``f`` alive); ``plan(f, x, mode="mixed")`` plans once for many
    points."""
    plan = prepare(problem, "mixed", chunk_size=chunk_size, max_memory=max_memory,
                   output="dense", calibrate=False)
    flat, computed = plan.evaluate(problem)
    _adopt_outputs(problem, computed)
    return flat if isinstance(flat, np.ndarray) else dense_of(flat)


def _choose_jacobian(problem, key, chunk_size, max_memory, calibrate):
    plan = None
    known = MODES.get(problem.f, key) if get_census(problem, compute=False) is None else None
    if known is not None:
        mode, chunk = known
        if mode in ("forward", "reverse"):   # straight to the sweeps: nothing evaluated
            chose(problem, "mode", mode, chunk, "reused: a function of the same code chose it")
            return _CHOICES.put(problem.f, key, Choice(mode, chunk, why="reused by code"))
        try:   # a sparse mode: this function object's own pattern (never a shared one)
            plan = prepare(problem, mode, chunk_size=chunk_size, max_memory=max_memory,
                           output="dense", calibrate=False)
        except DenseTooLarge:
            raise
        except ValueError:     # no pattern here (too dense): plan afresh
            plan = None
    if plan is None:
        try:
            plan = prepare(problem, "auto", chunk_size=chunk_size, max_memory=max_memory,
                           output="dense", calibrate=calibrate, detect="worth")
        except BudgetTooSmall:   # not one store-all direction fits: reverse recomputes
            return _CHOICES.put(problem.f, key, Choice("within", chunk_size,
                                                       why="recomputes within max_memory"))
    planned(plan)
    MODES.put(problem.f, key, (plan.mode, plan.chunk_size))
    return _CHOICES.put(problem.f, key, Choice(plan.mode, plan.chunk_size, plan.checked,
                                               plan.how))


# --- Hessians ---------------------------------------------------------------------------------
def hessian_auto(problem, chunk_size, max_memory):
    """The flat dense Hessian (n x n, exactly symmetric) of scalar ``problem`` (its census
    taken) by forward-over-reverse, compressed where that pays (module docstring)."""
    key = ("hessian-auto", signature(problem), chunk_size, max_memory)
    choice = _CHOICES.get(problem.f, key)
    if choice is None:
        choice = _CHOICES.put(problem.f, key, _choose_hessian(problem, chunk_size, max_memory))
        chose(problem, "Hessian", choice.mode, choice.chunk, choice.why)
    if choice.mode == "sparse":
        return dense_of(choice.checked.evaluate(problem, choice.chunk)[0])
    # Rows of H/2 (seeds scaled by ½, exact in floating point), so one pass gives the
    # exactly symmetric (H + Hᵀ)/2.
    h = hessian_rows(problem, "forward-over-reverse", None, choice.chunk, scale=0.5)
    return symmetrize(h if h.flags.writeable else np.array(h))   # in place: no second n x n


def _choose_hessian(problem, chunk_size, max_memory):
    c = get_census(problem)
    chunk = hessian_chunk(problem, "forward-over-reverse", chunk_size, max_memory)
    dense = cost.model_hessian(c, problem.n, chunk)
    worth, why = cost.worth_detecting(c, dense, hessian=True)
    if not worth:
        return Choice("dense", chunk, why=why)
    try:
        sparsity = detect_hessian(problem, budget=cost.detection_budget(c, max_memory))
    except TooDense as e:
        return Choice("dense", chunk, why=f"the Hessian's pattern is too dense ({e})")
    coloring, kind = hessian_coloring(sparsity.pattern, "auto", "hessian")
    compressed = cost.model_hessian(c, coloring.ncolors, chunk) + sparsity.nnz * cost.DECOMPRESS
    if compressed >= dense:
        return Choice("dense", chunk, why=f"{kind}: {coloring.ncolors} of {problem.n} "
                                          f"directions save too little")
    return Choice("sparse", chunk, CheckedPattern("hessian", sparsity, coloring),
                  why=f"{kind}, instead of {problem.n} directions")
