r"""Reverse mode under a memory budget: which values to store, which to recompute.

``grad(f, max_memory=M)`` (and ``value_and_grad``, ``vjp``) records ``f`` once as a
straight-line program (:func:`dualad.jit`'s :class:`~dualad.interpreters.staging.program.Program`)
and reverses it by a *schedule*: the program's equations ``e_0, ..., e_{n-1}`` are cut
at positions ``0 = p_0 < p_1 < ... < p_S = n`` (the *stage boundaries*, chosen where
few values are live), and a stored *checkpoint* at ``p`` is the set ``L(p)`` of values
made before ``p`` and read at or after it (the inputs are the caller's and never
counted). Reversing the stages ``[i, j)`` with the state at ``i`` in hand and ``M``
bytes free costs, in recomputed flops (advances: evaluations without a tape),

    C(i, j, M) = 0                                          if  W(i, j) <= M
    C(i, j, M) = min_{i<m<j, b(m) <= M}  F(i, m) + C(m, j, M - b(m)) + C(i, m, M)

(advance from ``i`` to ``m``, store ``L(m)``, reverse the tail with ``b(m)`` bytes
fewer, drop it, reverse the head), where ``F(i, m)`` is the flops of the equations
between, ``b(m)`` the bytes of ``L(m)`` and ``W(i, j) = T(i, j) + 2 b(i) + 2 b(j)``
the working memory of one taped run: its tape ``T`` (the bytes of every value it makes,
as :meth:`jacobians.cost.Census.bytes_per_direction` counts a sweep's values), the
cotangents flowing in at ``j`` and out at ``i``, and the copies :func:`dualad.vjp` makes
of the run's inputs and outputs. For a chain of ``l`` equal steps whose
tape fits one step at a time and ``k`` states of room, ``C`` is Griewank's
``t(l, k)`` (:func:`dualad.revolve.forward_steps`): the recursion is revolve's, with
bytes in place of snapshot slots and the tape allowed to span several stages when it
fits (which needs no advance at all).

The plan (:func:`remat_plan`, ``.explain()``) reports the stored bytes (the most held at
once), the recomputed flops, the modelled peak and the segments in backward order.
A program with a guard that read a traced value (``float(x)``), or a function ``jit``
cannot record, is reversed by the ordinary store-all sweep with a
:class:`RematWarning` that says why; it is never reversed wrongly.
"""
from __future__ import annotations

import bisect
import math
import sys
import warnings
from typing import Any

import numpy as np

from ..core import tree
from ..core.tracer import Box, primal_value, shape_of
from ..frontend.objects import traced_outputs
from ..interpreters.staging.program import Const, Guard, Program
from ..interpreters.staging.trace import JitBox, JitTrace

__all__ = ["remat_plan", "RematPlan", "RematWarning", "Layout", "solve", "STAGES"]

#: The stage counts tried, fewest first (the dynamic programme is O(S^3) per budget level:
#: more stages fit smaller budgets and cost more planning; 128 stages took 17 s to plan a
#: 2·10^4-equation loop at 3% of its store-all peak, measured, so the search stops at 64).
STAGES = (32, 64)
#: Budget levels: bytes are counted in units of budget / LEVELS (rounded the safe way).
LEVELS = 1024
#: Bytes the recorded program holds per equation (its Eqn, arguments, aval: measured with
#: tracemalloc, ~590 on CPython 3.12), counted in every schedule's peak.
PROGRAM_BYTES_PER_EQN = 600


class RematWarning(UserWarning):
    """``max_memory`` could not be honoured for this function; the ordinary reverse sweep
    (every intermediate stored) ran instead. The message says why."""


def _nbytes(aval):
    _, shape, dtype = aval
    try:
        item = np.dtype(dtype).itemsize
    except TypeError:
        item = 8
    return int(math.prod(shape)) * item


def _shape(atom, avals):
    return avals[atom][1] if atom.__class__ is int else np.shape(atom.value)


def eqn_flops(e, avals):
    """Arithmetic estimate of one equation (as :func:`jacobians.cost.flops`): a product
    ``2·out·k``, anything else one per output element and argument."""
    out = math.prod(avals[e.out][1])
    if e.prim.name == "matmul":
        a = _shape(e.ins[0], avals)
        return 2.0 * out * (a[-1] if a else 1)
    return float(out) * max(1, len(e.ins))


class Layout:
    """A program's equations with what the schedule needs: per position ``p`` (before
    equation ``p``) the live values ``L(p)`` and their bytes ``b(p)``; per equation its
    flops and output bytes; the stage boundaries chosen."""

    def __init__(self, prog, stages=STAGES[0]):
        self.prog = prog
        self.eqns = prog.eqns
        n = len(self.eqns)
        avals = prog.avals
        inv = set(prog.invars)
        last = {}
        for k, e in enumerate(self.eqns):
            for a in e.ins:
                if a.__class__ is int:
                    last[a] = k
        for a in prog.outvars:
            if a.__class__ is int:
                last[a] = n
        for g in prog.guards:
            last[g.var] = max(last.get(g.var, 0), _guard_pos(prog, g))
        self.last = last
        self.flops = [eqn_flops(e, avals) for e in self.eqns]
        self.out_bytes = [_nbytes(avals[e.out]) for e in self.eqns]
        diff = [0] * (n + 2)
        for k, e in enumerate(self.eqns):
            end = last.get(e.out, k)
            if end > k:
                diff[k + 1] += self.out_bytes[k]
                diff[end + 1] -= self.out_bytes[k]
        self.live_bytes = list(np.cumsum(diff[:n + 1]))
        self.invars = inv
        self.cut(stages)
        self.F = np.concatenate([[0.0], np.cumsum(self.flops)])
        self.T = np.concatenate([[0], np.cumsum(self.out_bytes)])
        # held whatever the schedule: the program, and the inputs' cotangents (the result)
        self.fixed = PROGRAM_BYTES_PER_EQN * n + sum(_nbytes(avals[v]) for v in prog.invars)

    def cut(self, stages):
        """Choose at most ``stages`` stage boundaries (see :func:`_boundaries`)."""
        self.bounds = _boundaries(self.flops, self.live_bytes, stages)

    def live_at_bounds(self):
        """``L(p)`` for each stage boundary ``p``: the variables made by an equation before
        ``p`` and read at ``p`` or after, in the order they were made."""
        B = self.bounds
        out = [[] for _ in B]
        last = self.last
        for k, e in enumerate(self.eqns):
            end = last.get(e.out, -1)
            for s in range(bisect.bisect_right(B, k), bisect.bisect_right(B, end)):
                out[s].append(e.out)
        return out

    def b(self, k):
        return int(self.live_bytes[self.bounds[k]])

    def work(self, i, j):
        """Working memory of a taped run of stages ``[i, j)``: tape, cotangents in and out,
        vjp's copies of its inputs and outputs."""
        B = self.bounds
        return int(self.T[B[j]] - self.T[B[i]]) + 2 * (self.b(i) + self.b(j))

    def stage_flops(self, i, j):
        return float(self.F[self.bounds[j]] - self.F[self.bounds[i]])


def _guard_pos(prog, guard):
    """The index of the equation after which ``guard`` stands in the body."""
    k = 0
    for item in prog.body:
        if item is guard:
            return k
        if item.__class__ is not Guard:
            k += 1
    return k


def _boundaries(flops, live_bytes, stages):
    """At most ``stages`` stages of about equal flops, each cut moved to the position of
    fewest live bytes within half a stage of its flop quantile."""
    n = len(flops)
    if n <= stages:
        return list(range(n + 1))
    cum = np.cumsum(flops)
    total = cum[-1] if cum[-1] > 0 else 1.0
    half = max(1, n // (2 * stages))
    cuts = [0]
    for s in range(1, stages):
        q = int(np.searchsorted(cum, total * s / stages)) + 1
        lo, hi = max(cuts[-1] + 1, q - half), min(n - 1, q + half)
        if lo > hi:
            continue
        window = live_bytes[lo:hi + 1]
        cuts.append(lo + int(np.argmin(window)))
    cuts.append(n)
    return sorted(set(cuts))


def solve(F, work, b, S, budget):
    """Minimise the recomputed flops of reversing stages ``[0, S)`` within ``budget``.

    ``F(i, j)``: flops of stages ``[i, j)``; ``work(i, j)``: working bytes of a taped run
    of them; ``b(m)``: bytes of the checkpoint at boundary ``m``. Returns ``(cost, tree)``
    with ``tree`` ``None`` (one taped run) or ``(m, right, left)`` (store at ``m``, reverse
    ``[m, j)``, then ``[i, m)``); ``(inf, None)`` when nothing fits. The recursion is the
    module docstring's ``C(i, j, M)``, memoised on ``(i, j, M)``.
    """
    memo = {}
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 20 * S + 1000))
    width = S + 1

    def best(i, j, M):
        key = (i * width + j) * (budget + 1) + M    # one int: a small memo
        hit = memo.get(key)
        if hit is not None:
            return hit[0]
        if work(i, j) <= M:
            memo[key] = (0.0, None)
            return 0.0
        cost, arg = math.inf, None
        for m in range(i + 1, j):
            adv = F(i, m)
            if adv >= cost:
                break
            bm = b(m)
            if bm > M:
                continue
            c = adv + best(m, j, M - bm)
            if c < cost:
                c += best(i, m, M)
                if c < cost:
                    cost, arg = c, m
        memo[key] = (cost, arg)
        return cost

    def tree(i, j, M):
        m = memo[(i * width + j) * (budget + 1) + M][1]
        if m is None:
            return None
        return (m, tree(m, j, M - b(m)), tree(i, m, M))

    if budget < 0:
        return math.inf, None
    try:
        cost = best(0, S, budget)
        return cost, (tree(0, S, budget) if cost < math.inf else None)
    finally:
        sys.setrecursionlimit(old)
        memo.clear()   # best() refers to itself: its memo would wait for the collector


def _leaves(node, i, j, held, b, work, out):
    """The taped runs in backward order, with the checkpoint bytes held during each."""
    if node is None:
        out.append((i, j, held, held + work(i, j)))
        return
    m, right, left = node
    _leaves(right, m, j, held + b(m), b, work, out)
    _leaves(left, i, m, held, b, work, out)


class Recorded:
    """A function recorded as a program: ``program`` and ``rebuild`` (the output's
    structure from its leaves, one per ``program.outvars``)."""

    __slots__ = ("program", "rebuild")

    def __init__(self, program, rebuild):
        self.program, self.rebuild = program, rebuild


def _trace(fun, leaves, name):
    """``fun(*leaves)`` recorded by the staging interpreter (as :func:`dualad.jit` records
    it, without compiling the program to source: only its equations are needed)."""
    trace = JitTrace(False)
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
    invars = [b.var for b in boxes]
    return Recorded(Program(invars, trace.body, outvars, trace.avals, name).pruned(), rebuild)


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
    read = [g for g in recorded.program.guards if g.kind == "equal"]
    if read:
        return None, (f"it reads a traced value as a constant ({read[0].describe()}), "
                      f"which a recorded program cannot differentiate through")
    return recorded, None


class RematPlan:
    """A schedule for reversing one recorded program within ``budget`` bytes.

    Attributes: ``name``; ``budget``; ``store_all`` (modelled bytes of the ordinary sweep:
    every value taped); ``peak`` (modelled bytes of this schedule); ``stored`` (the most
    checkpoint bytes held at once); ``recomputed_flops`` and ``total_flops``; ``n_eqns``;
    ``segments``: the taped runs in backward order, ``(first_eqn, end_eqn, held, peak)``;
    ``tree``: the schedule (see :func:`solve`); ``fallback``: why the ordinary sweep runs
    instead, or None.
    """

    def __init__(self, name, budget, layout=None, cost=0.0, tree=None, fallback=None):
        self.name, self.budget, self.layout, self.tree = name, budget, layout, tree
        self.fallback = fallback
        self.recomputed_flops = float(cost)
        self.segments = []
        if layout is None:
            self.store_all = self.peak = self.stored = self.n_eqns = 0
            self.total_flops = 0.0
            return
        S = len(layout.bounds) - 1
        self.n_eqns = len(layout.eqns)
        self.total_flops = float(layout.F[-1])
        self.store_all = layout.fixed + layout.work(0, S)
        runs = []
        _leaves(tree, 0, S, layout.fixed, layout.b, layout.work, runs)
        B = layout.bounds
        self.segments = [(B[i], B[j], held, peak) for i, j, held, peak in runs]
        self.peak = max(p for *_, p in self.segments)
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
            f"  store-all (every value taped): {self.store_all:,} bytes (modelled)",
            f"  this schedule: peak {self.peak:,} bytes (modelled), checkpoints at most "
            f"{self.stored:,} bytes",
            f"  held throughout: {self.fixed:,} bytes (the program, the inputs' cotangents)",
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


def plan_program(name, prog, budget, stages=STAGES):
    """The cheapest schedule for ``prog`` within ``budget`` bytes (a :class:`RematPlan`),
    with the fewest stages of ``stages`` that allow one; a ``ValueError`` naming the least
    budget when none does."""
    layout = Layout(prog, stages[0])
    for S_max in stages:
        layout.cut(S_max)
        cost, tree = _solve_layout(layout, budget)
        if cost < math.inf or len(layout.bounds) - 1 < S_max:   # no finer cut to try
            break
    if cost == math.inf:
        S = len(layout.bounds) - 1
        least = layout.fixed + max(layout.work(k, k + 1) for k in range(S))
        raise ValueError(
            f"remat({name}): max_memory={int(budget):,} bytes is too small for this "
            f"program ({len(layout.eqns)} equations in {S} stages): the program and the "
            f"inputs' cotangents take {layout.fixed:,} bytes and one stage's taped run up to "
            f"{least - layout.fixed:,} more, so no schedule fits below {least:,} bytes "
            f"(storing every value: {layout.fixed + layout.work(0, S):,}). Pass a larger "
            f"max_memory, or write the loop with dualad.scan(..., checkpoints='binomial')")
    return RematPlan(name, int(budget), layout, cost, tree)


def _solve_layout(layout, budget):
    """:func:`solve` on ``layout``'s stages, bytes counted in units of budget / LEVELS."""
    S = len(layout.bounds) - 1
    if layout.fixed + layout.work(0, S) <= budget:
        return 0.0, None                     # every value taped: the ordinary sweep
    unit = max(1, int(budget) // LEVELS)
    B = layout.bounds
    T = [int(layout.T[p]) for p in B]
    bb = [layout.b(k) for k in range(S + 1)]
    Fs = [float(layout.F[p]) for p in B]
    bq = [-(-x // unit) for x in bb]

    def work(i, j):   # rounded up: the schedule never assumes more room than there is
        return -(-(T[j] - T[i] + 2 * (bb[i] + bb[j])) // unit)

    return solve(lambda i, j: Fs[j] - Fs[i], work, bq.__getitem__, S,
                 (int(budget) - layout.fixed) // unit)


def _check_budget(api, name, max_memory):
    if isinstance(max_memory, bool) or not isinstance(max_memory, (int, np.integer)) \
            or max_memory <= 0:
        raise TypeError(f"{api}({name}): max_memory must be a positive int (bytes), got "
                        f"{max_memory!r}; write e.g. max_memory=50_000_000 for 50 MB")
    return int(max_memory)


def make_plan(api, f, args, nums, kwargs, max_memory):
    """``(plan, compiled)``: the schedule of ``f`` at ``args`` for ``api`` and the jit
    record (``.program``, ``.rebuild`` of the output); a plan with ``fallback`` set (and
    a :class:`RematWarning`) and None when there is none."""
    name = getattr(f, "__name__", "f")
    budget = _check_budget(api, name, max_memory)
    compiled, why = record(api, f, args, nums, kwargs)
    if compiled is None:
        warnings.warn(f"{api}({name}, max_memory={budget}): no schedule, because {why}; "
                      f"every intermediate is stored (the ordinary reverse sweep)",
                      RematWarning, stacklevel=4)
        return RematPlan(name, budget, fallback=why), None
    return plan_program(name, compiled.program, budget), compiled


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
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RematWarning)
        plan, _ = make_plan("remat_plan", f, args, nums, kwargs, max_memory)
    return plan
