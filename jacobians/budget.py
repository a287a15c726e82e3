"""Dense ``jacfwd``, ``jacrev`` and ``hessian`` whose whole call stays within ``max_memory``.

The chunk of directions is the largest whose modelled peak (:class:`jacobians.memory.Footprint`:
the result, the tape, the copies ``vjp`` makes, the small constants a recording keeps, and
per direction the tangents or cotangents of every value) fits in ``max_memory``. When not
even one direction of a store-all reverse sweep fits (its tape alone is too large), the
reverse sweeps follow a ``dualad.remat_plan`` schedule instead:

- ``jacrev``: ``dualad.vjp(f, x, max_memory=P)``, its pullback called on chunks of ``B``
  rows of the identity (the schedule's advances and taped segments run again at each
  call, batched ``B`` wide);
- ``hessian``: reverse over forward, ``dualad.vjp(x ↦ ∇f(x)·V, x, max_memory=P)`` pulled
  back from the ``B x B`` identity for chunks ``V`` of ``B`` one-hot directions. (Forward
  over the budgeted reverse, ``jvp(grad(f, max_memory=P))``, is exact too, but its
  schedule is planned for the primal values alone while every value it holds carries the
  tangents: measured up to 80x over its budget. Here the tangents are values of the
  recorded program, so the schedule counts them.)

``B`` and ``P`` are chosen together: for ``B = 1, 2, 4, ...`` the plan's budget ``P`` is
what :meth:`Footprint.budgeted` leaves, and the pair of least modelled time (sweeps times
one evaluation plus its recomputation) wins. Each call's choice is kept on the function
(:func:`last_choice`) and printed by its ``explain()``. A function the schedule cannot
record (:class:`dualad.RematWarning`) runs the store-all sweep one direction at a time,
with a warning that the budget is not honoured: its numbers are never wrong.
"""
from __future__ import annotations

__all__ = ["MemoryChoice", "BudgetTooSmall", "jacobian_within", "jacobian_any_within",
           "hessian_within", "hessian_chunk_within", "last_choice"]

import math
import warnings
import weakref

import numpy as np

import dualad
from dualad.extend import flatten

from . import cost
from ._common import FunctionCache, chunks, counted, flat_rows, identity_rows
from .hessian_sweeps import hessian_rows
from .memory import (BudgetTooSmall, Footprint, human_bytes, largest_chunk, refuse_dense,
                     symmetrize)
from .reuse import MODES
from .sweeps import (chunk_for, forward_flat, get_census, result_dtype, reverse_flat,
                     signature)

_LAST = weakref.WeakKeyDictionary()   # f -> its last MemoryChoice
#: f -> {(kind, mode, signature, max_memory, chunk_size): its store-all MemoryChoice}: a
#: later call of the same signature sweeps at once (census, Footprint, search not redone)
_STORE_ALL = FunctionCache()


class MemoryChoice:
    """What a dense call under ``max_memory`` chose: ``route`` ("store-all" or "remat"),
    ``chunk``, the modelled ``peak`` (bytes), ``plan`` (the remat plan, or None) and
    ``note`` (why, or what was not honoured)."""

    def __init__(self, api, name, max_memory, route, chunk, peak, plan=None, note=""):
        self.api, self.name, self.max_memory = api, name, int(max_memory)
        self.route, self.chunk, self.peak, self.plan, self.note = route, chunk, peak, plan, note

    def explain(self):
        """The choice as text: route, chunk, modelled peak against the budget, the plan."""
        sweeps = "forward sweeps" if self.route == "forward" else \
            f"{self.route} reverse sweeps"
        lines = [f"{self.api}({self.name}) within max_memory={self.max_memory:,} bytes "
                 f"({human_bytes(self.max_memory)}): {sweeps}",
                 f"  {counted(self.chunk, 'direction')} per sweep, modelled peak "
                 f"{int(self.peak):,} bytes ({human_bytes(self.peak)}) of the whole call"]
        if self.note:
            lines.append(f"  {self.note}")
        if self.plan is not None:
            lines.append("  " + self.plan.explain().replace("\n", "\n  "))
        return "\n".join(lines)

    __str__ = explain


def last_choice(f):
    """The :class:`MemoryChoice` of the last dense call of ``f`` under this accounting
    (None if there was none, or ``f`` cannot be weakly referenced)."""
    try:
        return _LAST.get(f)
    except TypeError:
        return None


def _keep(problem, choice):
    """Keep ``choice`` on the problem and, weakly, on its function."""
    problem.memory_choice = choice
    try:
        _LAST[problem.f] = choice
    except TypeError:           # not weakly referenceable (a ufunc): on the problem only
        pass
    return choice


def _known(problem, key):
    """The store-all choice kept for ``problem``'s function under ``key`` (kept on the
    problem as the call's choice), or None."""
    hit = _STORE_ALL.get(problem.f, key)
    if hit is not None:
        _keep(problem, hit)
    return hit


def _too_small(api, name, what, least, max_memory):
    error = BudgetTooSmall(
        f"{api}({name}): max_memory={int(max_memory):,} bytes is too small: {what} needs at "
        f"least {int(least):,} bytes ({human_bytes(least)}) for one direction per sweep "
        f"(see docs/memory.md for what is counted); pass max_memory={int(least)} or more")
    error.least = int(least)
    return error


def jacobian_any_within(problem, chunk_size, max_memory):
    """``jacobian(mode="auto")`` when not one store-all direction of either dense way fits:
    reverse sweeps under a remat schedule, or a refusal naming the least budget of the
    two ways (a forward direction, or a scheduled reverse one)."""
    try:
        return jacobian_within(problem, "reverse", chunk_size, max_memory)
    except BudgetTooSmall as e:
        fp = Footprint(problem, get_census(problem), result_dtype(problem))
        raise _too_small(problem.api, problem.name, "a forward sweep, or a reverse sweep "
                         "(store-all, or under a remat schedule),",
                         min(fp.forward(1), e.least), max_memory) from None


def jacobian_within(problem, mode, chunk_size, max_memory):
    """The flat dense Jacobian (m x n) in the fixed ``mode`` within ``max_memory``
    (forward sweeps with ``chunk_size`` given: as given, no census; the result is refused
    after the first sweep if over ``max_memory``)."""
    if chunk_size is not None:
        chunk_size = chunk_for(problem, chunk_size, max_memory)    # checked: a positive int
        if mode == "forward":
            return forward_flat(problem, chunk_size, max_memory=max_memory)
    key = ("within", mode, signature(problem), max_memory)
    sweep = forward_flat if mode == "forward" else reverse_flat
    hit = _known(problem, key + (chunk_size,))
    if hit is not None:
        return sweep(problem, hit.chunk, max_memory=max_memory)
    if chunk_size is None and get_census(problem, compute=False) is None:
        known = MODES.get(problem.f, key)     # a function of the same code chose (.reuse)
        if known is not None:
            return sweep(problem, known, max_memory=max_memory)
    c = get_census(problem)
    dtype = result_dtype(problem)
    refuse_dense(problem.api, problem, max_memory, dtype)
    fp = Footprint(problem, c, dtype)
    most = problem.n if mode == "forward" else problem.m
    peak = fp.forward if mode == "forward" else fp.reverse
    chunk = int(chunk_size) if chunk_size else largest_chunk(peak, max_memory, most)
    if chunk and (mode == "forward" or peak(chunk) <= max_memory):
        choice = _keep(problem, MemoryChoice(problem.api, problem.name, max_memory,
                                             "forward" if mode == "forward" else "store-all",
                                             chunk, peak(chunk)))
        if chunk_size is None:
            MODES.put(problem.f, key, chunk)
        _STORE_ALL.put(problem.f, key + (chunk_size,), choice)
        return sweep(problem, chunk, max_memory=max_memory)
    if mode == "forward":
        raise _too_small(problem.api, problem.name, "a forward sweep", peak(1), max_memory)
    return _budgeted(problem, fp, c, max_memory, chunk_size, _jacrev_route(problem, c),
                     lambda: reverse_flat(problem, 1))


def _candidates(most, chunk_size):
    if chunk_size:
        return [int(chunk_size)]
    out, b = [], 1
    while b < most:
        out.append(b)
        b *= 2
    return out + [most]


def _remat_plan(fun, primals, budget):
    # remat_plan never warns (its explain() says why a function has no schedule)
    return dualad.remat_plan(fun, *primals, max_memory=int(budget),
                             argnums=tuple(range(len(primals))))


def _pick(problem, fp, max_memory, chunk_size, most, route):
    """``(chunk, plan_budget, plan)`` of least modelled time: for each chunk ``B`` the plan
    of ``program(B)`` within what :meth:`Footprint.budgeted` leaves it, timed as
    ``seconds(B) · (1 + recomputed / total flops)`` plus ``replans(B)`` times what planning
    it took (each call of ``dualad.vjp(..., max_memory=)`` records and plans again);
    ``(None, why, plan)`` when the schedule cannot record ``f``, ``(None, error, None)``
    when no budget fits."""
    best, last_error = None, None
    program, seconds, replans = route["program"], route["seconds"], route["replans"]
    for B in _candidates(most, chunk_size):
        room = (max_memory - fp.budgeted(B, 0)) // B
        if room <= 0:
            break
        watch = cost.Stopwatch()
        try:
            plan = _remat_plan(program(B), problem.primals(), room)
        except ValueError as e:
            last_error = e
            break
        if plan.fallback:
            return None, plan.fallback, plan
        ratio = 1.0 + plan.recomputed_flops / max(plan.total_flops, 1.0)
        t = seconds(B) * ratio + replans(B) * watch.seconds()
        if best is not None and t >= best[0]:
            break                     # wider chunks recompute more: past the best, stop
        best = (t, B, room, plan)
    if best is None:
        return None, last_error, None
    return best[1], best[2], best[3]


def _budgeted(problem, fp, c, max_memory, chunk_size, route, store_all):
    """The rows by a schedule within ``max_memory`` (module docstring); ``store_all()``
    gives them by the store-all sweep, one direction at a time, when no schedule can be
    made (with a :class:`dualad.RematWarning`)."""
    api, name = problem.api, problem.name
    one = fp.reverse(1) if fp.kind == "jacobian" else fp.hessian(1)
    rows_of, most = route["rows"], route["most"]
    chunk, room, plan = _pick(problem, fp, max_memory, chunk_size, most, route)
    if chunk is None and plan is not None:          # the schedule cannot record f
        warnings.warn(f"{api}({name}, max_memory={int(max_memory):,}): the tape does not fit "
                      f"and no schedule can be made, because {room}; the store-all sweep "
                      f"runs one direction at a time, over the budget (modelled peak "
                      f"{int(one):,} bytes)", dualad.RematWarning, stacklevel=4)
        _keep(problem, MemoryChoice(api, name, max_memory, "store-all", 1, one, plan,
                                    note=f"budget NOT honoured: no schedule ({room})"))
        return store_all()
    if chunk is None:
        raise _too_small(api, name, "a reverse sweep (store-all, or under a remat schedule)",
                         min(one, _least_budgeted(problem, fp, route, room)),
                         max_memory) from room
    _keep(problem, MemoryChoice(api, name, max_memory, "remat", chunk,
                                fp.budgeted(chunk, plan.peak), plan,
                                note=f"the store-all sweep needs {int(one):,} bytes for one "
                                     f"direction"))
    return rows_of(problem, chunk, room)


def _least_budgeted(problem, fp, route, error):
    """A ``max_memory`` that allows one direction under a schedule: the planner's lower
    bound (from ``error``, or from asking it for one byte: one stage's taped run, without
    checkpoints) raised by factors up to 8 until a plan is found, in
    :meth:`Footprint.budgeted`."""
    program = route["program"](1)
    least = _least(error)
    if not least:
        try:
            _remat_plan(program, problem.primals(), 1)
        except ValueError as e:
            least = _least(e)
    for factor in (1.01, 1.25, 1.5, 2.0, 3.0, 4.0, 8.0):
        try:
            plan = _remat_plan(program, problem.primals(), int(least * factor) + 64)
        except ValueError:
            continue
        return fp.budgeted(1, int(least * factor) + 64) if not plan.fallback else math.inf
    return fp.budgeted(1, 8 * least)


def _least(error):
    """The least plan budget a remat refusal names (its ``least``), or 0."""
    return int(getattr(error, "least", 0) or 0)


def _named(problem):
    """``problem.fun`` under the function's own name (for the plan's explanation)."""
    def fun(*diff):
        return problem.fun(*diff)
    fun.__name__ = problem.name
    return fun


def _jacrev_rows(problem, chunk, room):
    """``J`` (m x n) by batched pullbacks of ``dualad.vjp(f, x, max_memory=room)``."""
    dtype = result_dtype(problem)
    _, pullback = dualad.vjp(_named(problem), *problem.primals(), max_memory=int(room))
    jac = np.empty((problem.m, problem.n), dtype)
    for start, count in chunks(problem.m, chunk):
        seeds = problem.cotangent_seeds(identity_rows(start, count, problem.m, dtype))
        grads = pullback(seeds)
        jac[start:start + count] = flat_rows(flatten(grads)[0], count)
        del grads, seeds
    return jac


def _directional(problem, start, count, dtype):
    """``x ↦ (∇f(x) · v_b)_b`` for the one-hot directions ``v_b = e_{start + b} / 2``: the
    function whose pullback of the identity gives rows ``start .. start + count`` of
    ``H / 2`` (reverse over forward)."""
    seeds = problem.onehot_tangent_seeds(start, count, dtype, 0.5)

    def directional(*diff):
        return dualad.jvp(problem.fun, diff, seeds)[1]
    directional.__name__ = f"directional({problem.name})"
    return directional


def _hessian_rows(problem, chunk, room):
    """Rows of ``H / 2`` by reverse over forward: for each chunk ``V`` of one-hot
    directions, ``dualad.vjp(x ↦ ∇f(x)·V, x, max_memory=room)`` pulled back from the
    identity (its schedule counts the tangents: they are values of the recorded program)."""
    n = problem.n
    dtype = result_dtype(problem)
    out = np.empty((n, n), dtype)
    primals = problem.primals()
    for start, count in chunks(n, chunk):
        g = _directional(problem, start, count, dtype)
        _, pullback = dualad.vjp(g, *primals, max_memory=int(room))
        rows = pullback(np.eye(count, dtype=dtype))
        out[start:start + count] = flat_rows(flatten(rows)[0], count)
        del rows, pullback
    return out


def _jacrev_route(problem, c):
    """jacrev's budgeted sweeps: one plan of ``f``, ``m / B`` batched pullbacks."""
    return dict(program=lambda B: _named(problem), rows=_jacrev_rows, most=problem.m,
                seconds=lambda B: cost.model(c, problem.m, B, "reverse"),
                replans=lambda B: 1)


def _hessian_route(problem, c):
    """hessian's budgeted sweeps: one plan of ``x ↦ ∇f(x)·V`` per chunk ``V``."""
    dtype = result_dtype(problem)
    return dict(program=lambda B: _directional(problem, 0, min(B, problem.n), dtype),
                rows=_hessian_rows, most=problem.n,
                seconds=lambda B: cost.model_hessian(c, problem.n, B),
                replans=lambda B: -(-problem.n // B))


def hessian_within(problem, chunk_size, max_memory):
    """The flat dense Hessian (n x n, exactly symmetric) by forward over reverse within
    ``max_memory``: store-all sweeps when one direction fits, else a remat schedule."""
    key = ("hessian-within", signature(problem), max_memory, chunk_size)
    hit = _known(problem, key)
    if hit is not None:
        h = hessian_rows(problem, "forward-over-reverse", None, hit.chunk, scale=0.5)
    else:
        h = _hessian_rows_within(problem, chunk_size, max_memory, key)
    return symmetrize(h if h.flags.writeable and h.flags.c_contiguous else np.array(h))


def _hessian_rows_within(problem, chunk_size, max_memory, key):
    c = get_census(problem)
    dtype = result_dtype(problem)
    fp = Footprint(problem, c, dtype, "hessian")
    chunk = int(chunk_size) if chunk_size else largest_chunk(fp.hessian, max_memory, problem.n)
    if chunk and fp.hessian(chunk) <= max_memory:
        choice = _keep(problem, MemoryChoice(problem.api, problem.name, max_memory,
                                             "store-all", chunk, fp.hessian(chunk),
                                             note="forward over reverse"))
        _STORE_ALL.put(problem.f, key, choice)
        h = hessian_rows(problem, "forward-over-reverse", None, chunk, scale=0.5)
    else:
        h = _budgeted(problem, fp, c, max_memory, chunk_size, _hessian_route(problem, c),
                      lambda: hessian_rows(problem, "forward-over-reverse", None, 1, scale=0.5))
    return h


def hessian_chunk_within(problem, max_memory):
    """The largest chunk of store-all forward-over-reverse sweeps within ``max_memory``
    (0: not even one direction fits)."""
    key = ("hessian-chunk", signature(problem), max_memory)
    hit = _known(problem, key)
    if hit is not None:
        return hit.chunk
    dtype = result_dtype(problem)
    fp = Footprint(problem, get_census(problem), dtype, "hessian")
    chunk = largest_chunk(fp.hessian, max_memory, problem.n)
    if chunk:
        _STORE_ALL.put(problem.f, key, _keep(problem, MemoryChoice(
            problem.api, problem.name, max_memory, "store-all", chunk, fp.hessian(chunk),
            note="mode='auto': forward over reverse, or its sweeps compressed by a coloring")))
    return chunk
