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

The plan (:func:`dualad.remat_plan`, ``.explain()``: :mod:`.remat_schedule`) reports the
stored bytes (the most held at once), the recomputed flops, the modelled peak and the
segments in backward order. A program with a guard that read a traced value
(``float(x)``), or a function ``jit`` cannot record, is reversed by the ordinary
store-all sweep with a :class:`RematWarning` that says why; it is never reversed wrongly.
"""
from __future__ import annotations

import bisect
import math

import numpy as np

from ..interpreters.staging.program import Guard

__all__ = ["RematWarning", "Layout", "solve", "eqn_flops", "STAGES", "LEVELS",
           "PROGRAM_BYTES_PER_EQN", "RULE_TEMPORARIES", "leaves_of_tree"]

#: The stage counts tried, fewest first (the dynamic programme is O(S^3) per budget level:
#: more stages fit smaller budgets and cost more planning; 128 stages took 17 s to plan a
#: 2·10^4-equation loop at 3% of its store-all peak, measured, so the search stops at 64).
STAGES = (32, 64)
#: Budget levels: bytes are counted in units of budget / LEVELS (rounded the safe way).
LEVELS = 1024
#: Arrays of the size of the largest value that one pullback rule may make at once.
RULE_TEMPORARIES = 3
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
        # held whatever the schedule: the program, the inputs' cotangents (the result),
        # and the temporaries of one rule (tanh's pullback makes ~3 arrays of its size)
        self.fixed = (PROGRAM_BYTES_PER_EQN * n + sum(_nbytes(avals[v]) for v in prog.invars)
                      + RULE_TEMPORARIES * max(self.out_bytes, default=0))

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
    memo = {}     # (the recursion is at most S deep: S <= STAGES, far below Python's limit)
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
        memo.clear()   # best() refers to itself: its memo would wait for the collector


def leaves_of_tree(node, i, j, held, b, work, out):
    """The taped runs in backward order, with the checkpoint bytes held during each."""
    if node is None:
        out.append((i, j, held, held + work(i, j)))
        return
    m, right, left = node
    leaves_of_tree(right, m, j, held + b(m), b, work, out)
    leaves_of_tree(left, i, m, held, b, work, out)
