r"""Reverse mode under a memory budget: which values to store, which to recompute.

``grad(f, max_memory=M)`` (and ``value_and_grad``, ``vjp``) records ``f`` once as a
straight-line program (with :func:`dualad.jit`'s boxes, packed into arrays:
:mod:`dualad.transforms.remat_program`) and reverses it by a *schedule*: the program's equations ``e_0, ..., e_{n-1}`` are cut
at positions ``0 = p_0 < p_1 < ... < p_S = n`` (the *stage boundaries*, chosen where
few values are live), and a stored *checkpoint* at ``p`` is the set ``L(p)`` of values
made before ``p`` and read at or after it (the inputs are the caller's and never
counted). Reversing the stages ``[i, j)`` with the state at ``i`` in hand and ``M``
bytes free costs, in recomputed flops (advances: evaluations without a tape),

    C(i, j, M) = 0                                          if  W(i, j) <= M
    C(i, j, M) = min_{i<m<j, b(m) <= M}  F(i, m) + C(m, j, M - b(m)) + C(i, m, M)

(advance from ``i`` to ``m``, store ``L(m)``, reverse the tail with ``b(m)`` bytes
fewer, drop it, reverse the head), where ``F(i, m)`` is the flops of the equations
between, ``b(m)`` the bytes of ``L(m)`` and ``W(i, j) = T(i, j) + b(i) + b(j)`` the
working memory of one taped run: its tape ``T`` (the bytes of every value it makes, as
:meth:`jacobians.cost.Census.bytes_per_direction` counts a sweep's values) and the
cotangents flowing in at ``j`` and out at ``i`` (the run is taped on its own reverse
trace from the checkpoint's arrays: nothing is copied). For a chain of ``l`` equal steps whose
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

import math
from array import array

import numpy as np

from ..interpreters.staging.program import Const
from .remat_program import VAR

__all__ = ["RematWarning", "Layout", "solve", "eqn_flops", "STAGES", "LEVELS",
           "RECORD_BYTES_PER_EQN", "RULE_TEMPORARIES",
           "leaves_of_tree", "memo_bytes", "CT_COPIES", "TEMPLATE_BYTES"]

#: The stage counts tried, fewest first (the dynamic programme is O(S^3) per budget level:
#: more stages fit smaller budgets and cost more planning; 128 stages lowered the 50-layer
#: MLP's least budget from 21.4 to 18.9 MB, 6.9% to 6.1% of its store-all peak, at 18
#: evaluations recomputed and 2-12 s of planning, measured, so the search stops at 64).
STAGES = (32, 64)
#: Budget levels: bytes are counted in units of budget / LEVELS (rounded the safe way).
LEVELS = 1024
#: Arrays of the size of the largest value that one pullback rule may make at once.
RULE_TEMPORARIES = 3
#: Bytes per equation while ``f`` is recorded into a packed program
#: (:class:`~dualad.transforms.remat_program.PackingTrace`: its growing arrays, then the
#: pruned copy), measured with tracemalloc on a loop of 2·10^4 equations.
RECORD_BYTES_PER_EQN = 160
#: Bytes counted per template of a packed program (its tuple, pattern and parameters).
TEMPLATE_BYTES = 400
#: Copies of the checkpoint bytes at each end of a taped run that its working memory
#: counts: the cotangents flowing in at its end and out at its start.
CT_COPIES = 1


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


def eqn_flops(prim, arg_shapes, out_size):
    """Arithmetic estimate of one equation (as :func:`jacobians.cost.flops`): a product
    ``2·out·k`` (``k`` the first argument's last axis), anything else one per output
    element and argument."""
    if prim.name == "matmul":
        a = arg_shapes[0]
        return 2.0 * out_size * (a[-1] if a else 1)
    return float(out_size) * max(1, len(arg_shapes))


def _flops(packed, out_size):
    """Per equation of ``packed``, :func:`eqn_flops` (vectorised but for products)."""
    tmpl = packed.templates
    nargs = np.array([max(1, len(t[2])) for t in tmpl], np.float64)
    flops = out_size * nargs[packed.tid]
    for t, (prim, _, pattern) in enumerate(tmpl):
        if prim.name != "matmul":
            continue
        for k in np.flatnonzero(packed.tid == t):
            pat, vs = packed.ins(int(k))
            first = np.shape(pat[0]) if pat[0] is not VAR else packed.aval(int(vs[0]))[1]
            flops[k] = eqn_flops(prim, [first], out_size[k])
    return flops


class Layout:
    """A packed program's equations (:class:`~dualad.transforms.remat_program.Packed`)
    with what the schedule needs, as arrays: per variable its last reader ``last`` (an
    equation number, ``n`` for an output, -1 if none); per position ``p`` (before
    equation ``p``) the bytes ``live_bytes[p]`` of ``L(p)``; per equation its flops and
    output bytes, and their prefix sums ``F`` and ``T``; the stage boundaries chosen."""

    def __init__(self, packed, stages=STAGES[0]):
        self.prog = self.eqns = packed
        n, n_in = packed.n, packed.n_in
        nb = np.array([_nbytes(a) for a in packed.avals], np.int64)
        size = np.array([math.prod(a[1]) for a in packed.avals], np.float64)
        readers = np.repeat(np.arange(n, dtype=np.int32), np.diff(packed.start))
        last = np.full(n_in + n, -1, np.int32)
        np.maximum.at(last, packed.args, readers)
        for a in packed.outvars:
            if a.__class__ is not Const:
                last[a] = n
        for k, gs in packed.guards.items():
            for g in gs:
                last[g.var] = max(last[g.var], k)
        self.last = last
        self.out_bytes = nb[packed.aval_of[n_in:]]
        self.flops = _flops(packed, size[packed.aval_of[n_in:]])
        end = np.maximum(last[n_in:], np.arange(n))
        diff = np.zeros(n + 2, np.int64)
        np.add.at(diff, np.arange(n) + 1, np.where(end > np.arange(n), self.out_bytes, 0))
        np.add.at(diff, end + 1, -np.where(end > np.arange(n), self.out_bytes, 0))
        self.live_bytes = np.cumsum(diff[:n + 1])
        self.cut(stages)
        self.F = np.concatenate([[0.0], np.cumsum(self.flops)])
        self.T = np.concatenate([[0], np.cumsum(self.out_bytes)])
        grads = sum(_nbytes(packed.aval(v)) for v in range(n_in))
        # held whatever the schedule: the packed program and these arrays, the inputs'
        # cotangents (the result), and the temporaries of one pullback rule
        self.program_bytes = (packed.nbytes() + TEMPLATE_BYTES * len(packed.templates)
                              + sum(a.nbytes for a in (last, self.out_bytes, self.flops,
                                                       self.live_bytes, self.F, self.T)))
        self.fixed = (self.program_bytes + grads
                      + RULE_TEMPORARIES * int(self.out_bytes.max(initial=0)))
        # while f is recorded: the Program (and the trace's tables) and what f holds
        self.record_peak = (RECORD_BYTES_PER_EQN * n + int(self.live_bytes.max(initial=0))
                            + int(self.out_bytes.max(initial=0)))

    def cut(self, stages):
        """Choose at most ``stages`` stage boundaries (see :func:`_boundaries`)."""
        self.bounds = _boundaries(self.flops, self.live_bytes, stages)

    def live_at(self, positions):
        """``L(p)`` for each ``p`` of ``positions``: the variables made by an equation
        before ``p`` and read at ``p`` or after, in the order they were made."""
        n_in = self.prog.n_in
        made = np.arange(self.prog.n)
        end = self.last[n_in:]
        return [(n_in + np.flatnonzero((made < p) & (end >= p))).tolist() for p in positions]

    def live_at_bounds(self):
        return self.live_at(self.bounds)

    def b(self, k):
        return int(self.live_bytes[self.bounds[k]])

    def work(self, i, j):
        """Working memory of a taped run of stages ``[i, j)``: its tape and the
        cotangents flowing in at ``j`` and out at ``i``."""
        B = self.bounds
        return int(self.T[B[j]] - self.T[B[i]]) + CT_COPIES * (self.b(i) + self.b(j))

    def stage_flops(self, i, j):
        return float(self.F[self.bounds[j]] - self.F[self.bounds[i]])


def _boundaries(flops, live_bytes, stages):
    """At most ``stages`` stages of about equal flops, each cut moved to the position of
    fewest live bytes within half a stage of its flop quantile (the nearest such
    position to the quantile: equal steps make equal stages)."""
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
        window = np.asarray(live_bytes[lo:hi + 1])
        fewest = lo + np.flatnonzero(window == window.min())
        cuts.append(int(fewest[np.argmin(np.abs(fewest - q))]))
    cuts.append(n)
    return sorted(set(cuts))


def memo_bytes(S, budget):
    """Bytes of :func:`solve`'s table for ``S`` stages and ``budget`` units: one float per
    pair of boundaries ``i < j`` and budget level, and while a pair is solved its
    candidates (a float, an index and a flag per split and level: ``S`` rows of each)."""
    return 8 * (S * (S + 1) // 2 + 3 * S) * (budget + 1)


def solve(F, work, b, S, budget):
    """Minimise the recomputed flops of reversing stages ``[0, S)`` within ``budget``.

    ``F(i, j)``: flops of stages ``[i, j)``; ``work(i, j)``: working bytes of a taped run
    of them; ``b(m)``: bytes of the checkpoint at boundary ``m`` (all in the same units,
    ``budget`` of them). Returns ``(cost, tree)`` with ``tree`` ``None`` (one taped run)
    or ``(m, right, left)`` (store at ``m``, reverse ``[m, j)``, then ``[i, m)``);
    ``(inf, None)`` when nothing fits. The recursion is the module docstring's
    ``C(i, j, M)``, solved bottom-up over the length ``j - i`` for every level
    ``M = 0 .. budget`` and every split ``m`` at once (one NumPy row per pair ``i < j``:
    the table is :func:`memo_bytes`, known before it runs; a pair's candidates take
    ``(j - i - 1)`` rows more while it is solved); the tree is read back from the table.
    """
    if budget < 0:
        return math.inf, None
    L = budget + 1
    table = np.empty((S * (S + 1) // 2, L))
    flat = table.reshape(-1)    # (a view)
    levels = np.arange(L)
    bs = np.array([b(m) for m in range(S + 1)], np.int64)
    for length in range(1, S + 1):
        for i in range(S - length + 1):
            j = i + length
            row = table[(j * (j - 1) >> 1) + i]
            ms = np.arange(i + 1, j)
            if len(ms):   # every split at once: C(m, j, M - b(m)) + F(i, m) + C(i, m, M)
                col = levels - bs[ms][:, None]
                short = col < 0
                col[short] = 0
                col += (((j * (j - 1)) >> 1) + ms)[:, None] * L
                cand = flat[col]
                cand[short] = math.inf
                cand += np.array([F(i, m) for m in ms])[:, None]
                cand += table[((ms * (ms - 1)) >> 1) + i]
                cand.min(axis=0, out=row)
            else:
                row.fill(math.inf)
            w = work(i, j)
            if w < L:
                row[max(w, 0):] = 0.0

    cost = float(table[S * (S - 1) >> 1, budget])
    return cost, (_read_tree(table, F, work, b, 0, S, budget) if cost < math.inf else None)


def _read_tree(table, F, work, b, i, j, M):
    """The schedule of :func:`solve`'s table for stages ``[i, j)`` at level ``M``: the
    first split whose sum makes the table's cost (the same sums in the same order). A
    module function, not a closure: a recursive closure would keep the table alive in a
    reference cycle until the collector ran."""
    if work(i, j) <= M:
        return None
    cost = table[(j * (j - 1) >> 1) + i, M]
    for m in range(i + 1, j):
        bm = b(m)
        if bm <= M and (table[(j * (j - 1) >> 1) + m, M - bm] + F(i, m)) \
                + table[(m * (m - 1) >> 1) + i, M] == cost:
            return (m, _read_tree(table, F, work, b, m, j, M - bm),
                    _read_tree(table, F, work, b, i, m, M))
    raise AssertionError("remat.solve: no split reproduces the table's cost")


def leaves_of_tree(node, i, j, held, b, work, out):
    """The taped runs in backward order, with the checkpoint bytes held during each."""
    if node is None:
        out.append((i, j, held, held + work(i, j)))
        return
    m, right, left = node
    leaves_of_tree(right, m, j, held + b(m), b, work, out)
    leaves_of_tree(left, i, m, held, b, work, out)
