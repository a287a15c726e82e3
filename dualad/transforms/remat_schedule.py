"""Recording ``f`` and planning its schedule: :func:`remat_plan` and :class:`RematPlan`.

``f`` is recorded at the point being differentiated by the staging interpreter (as
:func:`dualad.jit` records it, without compiling the program), its equations are cut
into stages and the dynamic programme of :mod:`dualad.transforms.remat` chooses the
checkpoints; :mod:`dualad.transforms.remat_sweep` runs the result.
"""
from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from ..core import tree
from ..core.tracer import Box, primal_value, shape_of
from ..frontend.objects import traced_outputs
from ..interpreters.staging.program import Const
from ..interpreters.staging.trace import JitBox
from .remat import (CT_COPIES, LEVELS, STAGES, Layout, RematWarning, leaves_of_tree,
                    memo_bytes, solve)
from .remat_program import PackingTrace
from . import schedule_log

__all__ = ["remat_plan", "RematPlan", "record", "plan_program", "make_plan"]


class Recorded:
    """A function recorded as a program: ``program`` (a
    :class:`~dualad.transforms.remat_program.Packed`) and ``rebuild`` (the output's
    structure from its leaves, one per ``program.outvars``)."""

    __slots__ = ("program", "rebuild")

    def __init__(self, program, rebuild):
        self.program, self.rebuild = program, rebuild


def _trace(fun, leaves, name):
    """``fun(*leaves)`` recorded by the staging interpreter's boxes into a packed program
    (:class:`~dualad.transforms.remat_program.PackingTrace`: arrays, not an object per
    equation)."""
    trace = PackingTrace()
    boxes = [trace.input(x) for x in leaves]
    try:
        out = traced_outputs(fun(*boxes))
    finally:
        trace.stop()
    out_leaves, rebuild = tree.flatten(out)
    outvars = []
    for y in out_leaves:
        if y.__class__ is JitBox and y._trace is trace:
            outvars.append(y.var)
        elif isinstance(y, Box):
            raise TypeError("an output is a value of another transformation's trace")
        else:
            outvars.append(Const(np.asarray(y) if isinstance(y, np.ndarray) else y))
    return Recorded(trace.packed(len(boxes), outvars, name), rebuild)


def record(api, f, args, nums, kwargs):
    """``(recorded, None)``: ``f`` as a program of the leaves of ``args[i]``, ``i`` in
    ``nums`` (the other arguments and ``kwargs`` held fixed), or ``(None, why)`` when
    the program cannot be reversed by a schedule."""
    per_arg = [tree.flatten(args[i]) for i in nums]
    sizes = [len(leaves) for leaves, _ in per_arg]
    fixed = list(args)

    def of_leaves(*leaves):
        full, k = list(fixed), 0
        for i, (n, (_, rebuild)) in zip(nums, zip(sizes, per_arg)):
            full[i] = rebuild(list(leaves[k:k + n]))
            k += n
        return f(*full, **kwargs)

    # recorded at the primal point: under an outer jvp (forward over this reverse) the
    # program is the same, and the runner applies it to the traced leaves
    traced = [x for ls, _ in per_arg for x in ls]
    leaves = [primal_value(x) for x in traced]
    held = [a for i, a in enumerate(fixed) if i not in nums] + list(kwargs.values())
    if any(isinstance(y, Box) for y in tree.flatten(held)[0]):
        return None, ("a non-differentiated argument is traced by an outer transformation "
                      "(the program would hold it as a constant)")
    if any(np.shape(p) != shape_of(x) for p, x in zip(leaves, traced)):
        return None, "an input is batched by an outer vmap"
    for x in leaves:
        kind = np.result_type(x).kind if isinstance(x, (np.ndarray, np.generic, float,
                                                         complex)) else None
        if kind not in ("f", "c"):
            return None, (f"a differentiated input is not a floating array or float "
                          f"({type(x).__name__}); the ordinary sweep names it")
    try:
        recorded = _trace(of_leaves, leaves, getattr(f, "__name__", "f"))
    except Exception as e:  # noqa: BLE001 - any reason f cannot be recorded: said, then store-all
        return None, f"it could not be recorded as a program ({type(e).__name__}: {e})"
    read = [g for gs in recorded.program.guards.values() for g in gs if g.kind == "equal"]
    if read:
        return None, (f"it reads a traced value as a constant ({read[0].describe()}), "
                      f"which a recorded program cannot differentiate through")
    return recorded, None


class RematPlan:
    """A schedule for reversing one recorded program within ``budget`` bytes.

    Attributes: ``name``; ``budget``; ``store_all`` (modelled bytes of the ordinary sweep:
    every value taped); ``peak`` (modelled bytes of this schedule: the most of its
    segments' peaks and ``record_peak``, the modelled bytes of recording ``f``); ``stored`` (the most
    checkpoint bytes held at once); ``recomputed_flops`` and ``total_flops``; ``n_eqns``;
    ``segments``: the taped runs in backward order, ``(first_eqn, end_eqn, held, peak)``;
    ``tree``: the schedule (see :func:`solve`); ``fallback``: why the ordinary sweep runs
    instead, or None.
    """

    def __init__(self, name, budget, layout=None, cost=0.0, tree=None, fallback=None):
        self.name, self.budget, self.layout, self.tree = name, budget, layout, tree
        self.fallback = fallback
        self.carried = 1         # numbers per value (an outer jvp's tangents: plan_program)
        self.recomputed_flops = float(cost)
        self.segments = []
        if layout is None:
            self.store_all = self.peak = self.stored = self.n_eqns = self.fixed = 0
            self.record_peak = 0
            self.total_flops = 0.0
            return
        S = len(layout.bounds) - 1
        self.n_eqns = len(layout.eqns)
        self.total_flops = float(layout.F[-1])
        self.store_all = layout.fixed + layout.work(0, S)
        runs = []
        leaves_of_tree(tree, 0, S, layout.fixed, layout.b, layout.work, runs)
        B = layout.bounds
        self.segments = [(B[i], B[j], held, peak) for i, j, held, peak in runs]
        self.record_peak = layout.record_peak
        self.peak = max(max(p for *_, p in self.segments), self.record_peak)
        self.stored = max(h for _, _, h, _ in self.segments) - layout.fixed
        self.fixed = layout.fixed

    def explain(self):
        """The schedule as text: bytes, flops and the segments in backward order."""
        if self.fallback:
            return (f"remat plan for {self.name} within max_memory={self.budget:,} bytes: "
                    f"none; the ordinary reverse sweep (every value stored) runs, because "
                    f"{self.fallback}")
        pct = 100.0 * self.recomputed_flops / max(self.total_flops, 1.0)
        lines = [
            f"remat plan for {self.name}: {self.n_eqns} equations in "
            f"{len(self.layout.bounds) - 1} stages, max_memory={self.budget:,} bytes",
            f"  store-all (every value taped): {self.store_all:,} bytes (modelled)"
            + ("" if self.carried == 1 else
               f"; each value carries {self.carried} numbers (an outer jvp's tangents), so "
               f"the schedule is planned within max_memory / {self.carried}"),
            f"  this schedule: peak {self.peak:,} bytes (modelled), checkpoints at most "
            f"{self.stored:,} bytes",
            f"  held throughout: {self.fixed:,} bytes (the packed program, the inputs' "
            f"cotangents, one rule's temporaries); recording f: about "
            f"{self.record_peak:,} bytes",
            f"  recomputed: {self.recomputed_flops:.4g} flops ({pct:.1f}% of one "
            f"evaluation, {self.total_flops:.4g} flops)",
            f"  {len(self.segments)} taped segments, backward order "
            f"(equations [start, end), checkpoint bytes held, peak bytes):"]
        shown = self.segments if len(self.segments) <= 12 else \
            self.segments[:6] + [None] + self.segments[-5:]
        for seg in shown:
            if seg is None:
                lines.append(f"    ... {len(self.segments) - 11} more")
                continue
            a, b, held, peak = seg
            lines.append(f"    [{a}, {b})  held {held:,}  peak {peak:,}")
        return "\n".join(lines)

    def __repr__(self):
        return (f"RematPlan({self.name}: {len(self.segments)} segments, peak "
                f"{self.peak:,} of {self.budget:,} bytes, "
                f"{self.recomputed_flops:.3g} recomputed flops)")


def plan_program(name, packed, budget, stages=STAGES, carried=1):
    """The cheapest schedule for ``packed`` (a :class:`~.remat_program.Packed` program)
    within ``budget`` bytes (a :class:`RematPlan`), with the fewest stages of ``stages``
    that allow one; a ``ValueError`` naming the least budget when none does. ``carried``:
    the numbers each value holds (:func:`carried`): planned within ``budget / carried``."""
    budget, whole = int(budget) // carried, int(budget)
    layout = Layout(packed, stages[0])
    cost = math.inf
    for S_max in stages:
        layout.cut(S_max)
        cost, tree = _solve_layout(layout, budget)
        if cost < math.inf or len(layout.bounds) - 1 < S_max:   # no finer cut to try
            break
    if cost == math.inf:
        raise _too_small(name, layout, budget, carried)
    plan = RematPlan(name, whole, layout, cost, tree)
    plan.carried = carried
    return plan


def _too_small(name, layout, budget, carried=1):
    """The refusal (a ValueError whose ``least`` is the least budget named): what is held
    throughout, the largest stage, and the least budget that does (to 5%: candidates growing by 5% from the lower bound, each solved on the
    finest cut, so the one named has a schedule; small budgets solve fast)."""
    S = len(layout.bounds) - 1
    stage = max((layout.work(k, k + 1) for k in range(S)), default=0)
    store_all = layout.fixed + layout.work(0, S)
    lo = max(layout.fixed + stage, layout.record_peak, int(budget))
    least = lo
    while least < store_all and _solve_layout(layout, least)[0] == math.inf:
        least = int(least * 1.05) + 1
    least = min(least, store_all) * carried
    budget, store_all = int(budget) * carried, store_all * carried
    each = "" if carried == 1 else (f" (an outer jvp's tangents: each value carries "
                                    f"{carried} numbers)")
    error = ValueError(
            f"remat({name}): max_memory={int(budget):,} bytes is too small for this "
            f"program{each} ({layout.prog.n} equations in {S} stages): the packed program, "
            f"the inputs' cotangents and one rule's temporaries take {layout.fixed:,} bytes "
            f"and one stage's taped run up to {stage:,} more; recording f takes about "
            f"{layout.record_peak:,}; the least budget with a schedule is {least:,} bytes "
            f"(storing every value: {store_all:,}). Pass max_memory >= {least:,}, or write "
            f"the loop with dualad.scan(..., checkpoints='binomial') or place "
            f"dualad.checkpoint around blocks of it by hand")
    error.least = least      # for callers that budget around a schedule (jacobians.budget)
    return error


#: Bytes the memo may take whatever the budget (within the documented slack of 256 KB).
MEMO_FLOOR = 128 * 1024


def _solve_layout(layout, budget):
    """:func:`solve` on ``layout``'s stages, bytes counted in units of budget / levels,
    with the most levels (up to ``LEVELS``) whose memo takes at most half the room the
    budget leaves beside what is held throughout, or ``MEMO_FLOOR`` (the memo counts
    while it is solved)."""
    S = len(layout.bounds) - 1
    if layout.fixed + layout.work(0, S) <= budget:
        return 0.0, None                     # every value taped: the ordinary sweep
    room = int(budget) - layout.fixed
    if layout.record_peak > budget or room <= 0 or S == 0:
        return math.inf, None
    B = layout.bounds
    if int(np.diff(layout.T[B]).max()) > room:    # a stage's tape alone: no leaf holds it
        return math.inf, None
    levels = min(LEVELS, max(room // 2, MEMO_FLOOR) // memo_bytes(S, 0) - 1)
    if levels < 8:                           # too coarse to place anything
        return math.inf, None
    unit = -(-int(budget) // levels)
    T = [int(layout.T[p]) for p in B]
    bb = [layout.b(k) for k in range(S + 1)]
    Fs = [float(layout.F[p]) for p in B]
    bq = [-(-x // unit) for x in bb]
    copies = CT_COPIES

    def work(i, j):   # rounded up: the schedule never assumes more room than there is
        return -(-(T[j] - T[i] + copies * (bb[i] + bb[j])) // unit)

    return solve(lambda i, j: Fs[j] - Fs[i], work, bq.__getitem__, S, room // unit)


def _check_budget(api, name, max_memory):
    if isinstance(max_memory, bool) or not isinstance(max_memory, (int, np.integer)) \
            or max_memory <= 0:
        raise TypeError(f"{api}({name}): max_memory must be a positive int (bytes), got "
                        f"{max_memory!r}; write e.g. max_memory=50_000_000 for 50 MB")
    return int(max_memory)


def make_plan(api, f, args, nums, kwargs, max_memory, warn=True):
    """``(plan, compiled)``: the schedule of ``f`` at ``args`` for ``api`` and the jit
    record (``.program``, ``.rebuild`` of the output); a plan with ``fallback`` set (and,
    with ``warn``, a :class:`RematWarning`) and None when there is none."""
    name = getattr(f, "__name__", "f")
    budget = _check_budget(api, name, max_memory)
    compiled, why = record(api, f, args, nums, kwargs)
    if compiled is None and warn:
        warnings.warn(f"{api}({name}, max_memory={budget}): no schedule, because {why}; "
                      f"every intermediate is stored (the ordinary reverse sweep)",
                      RematWarning, stacklevel=4)
    if compiled is None:
        return schedule_log.remat(RematPlan(name, budget, fallback=why)), None
    k = max([carried(x) for i in nums for x in tree.flatten(args[i])[0]], default=1)
    plan = plan_program(name, compiled.program, budget, carried=k)
    return schedule_log.remat(plan), compiled


def carried(x):
    """The numbers each element of ``x`` carries through a sweep: 1 for a plain array,
    ``1 + d`` for an outer ``jvp``'s dual number with ``d`` tangent directions (and so on
    for nested ones). The runner applies the program to the traced values, so every
    checkpoint and taped value is ``carried`` times the primal's bytes: the schedule is
    planned within ``max_memory / carried``."""
    if not isinstance(x, Box):
        return 1
    primal, tangent = getattr(x, "primal", None), getattr(x, "tangent", None)
    if tangent is None:
        return carried(primal)
    ratio = math.prod(shape_of(tangent)) / max(1, math.prod(shape_of(primal)))
    return carried(primal) + max(1, round(ratio)) * carried(tangent)


def remat_plan(f, *args: Any, max_memory: int, argnums: int | tuple[int, ...] = 0,
               **kwargs: Any) -> RematPlan:
    r"""The schedule ``grad(f, argnums, max_memory=max_memory)`` follows at ``args``.

    ``f`` is recorded once as a straight-line program, cut into stages where few values
    are live, and the dynamic programme of :mod:`dualad.transforms.remat` chooses which
    stage boundaries to store (*checkpoints*) and which stages to recompute so that the
    modelled peak (checkpoints held + one taped segment + its cotangents) stays within
    ``max_memory`` with the fewest recomputed flops. For a chain of equal steps it is
    Griewank's binomial schedule (:func:`dualad.revolve.forward_steps`).

    Parameters
    ----------
    f : callable
        The function, as given to :func:`dualad.grad`.
    *args : array_like
        The point, as the gradient function would be called.
    max_memory : int
        The budget in bytes for what reverse mode keeps beyond the inputs and the
        gradient: taped values, checkpoints, cotangents.
    argnums : int or tuple of int, default 0
        The differentiated arguments.
    **kwargs
        Keyword arguments of ``f`` (not differentiated).

    Returns
    -------
    RematPlan
        ``.explain()`` lists the stored bytes, the recomputed flops, the modelled peak
        and the segments; ``.fallback`` says why there is no schedule, if so.

    Raises
    ------
    ValueError
        If ``max_memory`` is below what one stage of the program needs.
    TypeError
        If ``max_memory`` is not a positive int.

    See Also
    --------
    dualad.grad : ``grad(f, max_memory=...)`` follows this plan.
    dualad.checkpoint : A hand-placed recomputation.

    Examples
    --------
    >>> def f(x):
    ...     for _ in range(40):
    ...         x = np.sin(x) * 0.9
    ...     return np.sum(x)
    >>> x = np.linspace(0.0, 1.0, 1000)
    >>> plan = dualad.remat_plan(f, x, max_memory=300_000)
    >>> plan.peak <= 300_000 < plan.store_all
    True
    >>> print(np.allclose(dualad.grad(f, max_memory=300_000)(x), dualad.grad(f)(x)))
    True
    """
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    nums = tuple(i % len(args) for i in nums)
    plan, _ = make_plan("remat_plan", f, args, nums, kwargs, max_memory, warn=False)
    return plan   # (its explain() says why a fallback has no schedule: no warning here)
