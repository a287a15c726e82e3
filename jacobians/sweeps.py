"""The two dense sweeps, and what sizes them (the census, the chunk).

For ``F: R^n -> R^m`` with Jacobian ``J`` (m x n):

    forward:  J E_k     = the output tangents of ONE vector-mode JVP whose
                          tangent carries the columns of a chunk E_k of the
                          n x n identity (B of them) as its batch axis
    reverse:  E_kᵀ J    = ONE batched pullback of a recorded tape, with a
                          chunk of rows of the m x m identity as cotangents

so a whole Jacobian is ceil(n / B) (forward) or ceil(m / B) (reverse) sweeps,
never one sweep per basis vector. The chunk size B is ``chunk_size`` or the largest
that keeps one sweep's tangents within ``max_memory`` bytes, from a census of the
function (:mod:`jacobians.cost`). The same sweeps with other seeds give compressed
(sparse) Jacobians (:mod:`jacobians.sparse`). This module sits below the public
functions (:mod:`jacobians.dense`), the sparse ones and the planner, which all use it.
"""
from __future__ import annotations

__all__ = ["MODES", "check_mode", "signature", "note", "get_census", "chunk_for",
           "result_dtype", "forward_flat", "reverse_flat"]

import time

import numpy as np

import dualad
from dualad.extend import flatten, shape_of

from . import cost, distributed
from ._common import FunctionCache, chunks, flat_rows, float_dtype, refuse_traced
from .memory import refuse_dense
from .progress import tracker

MODES = ("auto", "forward", "reverse")
_CACHE = FunctionCache()


def check_mode(api, mode, allowed=MODES):
    aliases = {"fwd": "forward", "rev": "reverse", "jacfwd": "forward", "jacrev": "reverse"}
    mode = aliases.get(mode, mode)
    if mode not in allowed:
        raise ValueError(f"{api}: mode={mode!r} is not one of {', '.join(map(repr, allowed))}")
    return mode


def signature(problem):
    """What the cache of a function is keyed on: argument shapes and dtypes, argnums
    (computed once per problem)."""
    sig = problem.__dict__.get("signature")
    if sig is None:
        sig = problem.signature = _signature(problem)
    return sig


def _signature(problem):
    sig = []
    for a in problem.args:
        leaves = flatten(a)[0]
        # (the dtype itself: its str() is a Python-level property, ~1 us a leaf)
        sig.append(tuple((shape_of(x), _dtype_key(x)) for x in leaves))
    return tuple(sig), problem.nums


def _dtype_key(x):
    dtype = getattr(x, "dtype", None)
    return type(x).__name__ if dtype is None else dtype


def note(problem, what, seconds, evaluations):
    """Log one step of planning that evaluated ``f`` (for ``explain()``)."""
    log = problem.__dict__.setdefault("planning", [])
    log.append((what, seconds, evaluations))


def get_census(problem, compute=True):
    """The census of ``problem``'s function (cached per function and signature); sets the
    problem's outputs. ``compute=False``: None unless cached."""
    key = problem.__dict__.get("census_key")
    if key is None:        # once per problem: hessian and its chunk size both ask
        key = problem.census_key = ("census", signature(problem))
    hit = _CACHE.get(problem.f, key)
    if hit is None:
        if not compute:
            return None
        t0 = time.perf_counter()
        c, out = cost.census(problem)
        note(problem, "census (one counted run of f)", time.perf_counter() - t0, 1)
        refuse_traced(problem.api, problem.f, out, "the output")   # never cache a traced output
        leaves = flatten(out)[0]
        hit = _CACHE.put(problem.f, key, (c, [shape_of(o) for o in leaves], out))
    c, shapes, out = hit
    if problem.out_shapes is None:
        problem.set_outputs(out)
        problem.out_dtypes = [np.result_type(o) for o in flatten(out)[0]]
    return c


def chunk_for(problem, chunk_size, max_memory, census=None):
    if chunk_size is not None:
        if int(chunk_size) < 1:
            raise ValueError(f"{problem.api}({problem.name}): chunk_size must be a positive "
                             f"integer, got {chunk_size!r}")
        return int(chunk_size)
    c = census or get_census(problem)
    return c.chunk_size(max_memory, np.dtype(float_dtype(problem.dtype)).itemsize)


def result_dtype(problem):
    """The dtype of the dense result, from the outputs once known (a real input and a
    complex output give a complex Jacobian)."""
    dtype = float_dtype(problem.dtype)
    outs = getattr(problem, "out_dtypes", None)
    return np.result_type(dtype, *outs) if outs else dtype


# --- the two sweeps ---------------------------------------------------------------------
def forward_flat(problem, chunk, seeds=None, check=None, max_memory=None):
    """``J`` (m x n) by vector-mode JVPs; ``seeds`` (c x n) replaces the identity (then
    the result is ``(J seedsᵀ)`` as a (m x c) array: a compressed Jacobian). ``check()``
    runs after the first sweep (it may raise: see :mod:`jacobians.validity`).
    ``max_memory``: the dense result (m x n) is refused past it (:mod:`.memory`) once the
    first sweep has told ``m``, before it is allocated."""
    if problem.executor is not None:    # the chunks as tasks (jacobians.distributed)
        return distributed.sweep("forward", problem, chunk, get_census, seeds, check,
                                 max_memory)
    n = problem.n if seeds is None else seeds.shape[0]
    dtype = float_dtype(problem.dtype)
    if n == 0:
        out = problem.fun(*problem.primals())
        problem.set_outputs(out)
        return np.zeros((problem.m, 0), dtype)
    jt = None
    spans = chunks(n, chunk)
    tick = tracker(problem, "forward sweep", n, spans, seeds)
    for start, count in spans:
        tseeds = problem.onehot_tangent_seeds(start, count, dtype) if seeds is None else \
            problem.tangent_seeds(seeds[start:start + count])
        out, tans = dualad.jvp(problem.fun, problem.primals(), tseeds)
        t_leaves = flatten(tans)[0]
        if tick is not None:
            tick.advance(count)
        if jt is None:
            if check is not None:
                check()
            problem.set_outputs(out)
            rdtype = np.result_type(dtype, *[t.dtype for t in t_leaves])
            if max_memory is not None:
                refuse_dense(problem.api, problem, max_memory, rdtype)
            if count == n and len(t_leaves) == 1 and _owned(t_leaves[0], rdtype):
                return flat_rows(t_leaves, count).T   # one sweep: its tangents, not a copy
            jt = np.empty((n, problem.m), rdtype)
        jt[start:start + count] = flat_rows(t_leaves, count)
    return jt.T


def _owned(t, dtype):
    """Whether the output tangent ``t`` (B, *shape) may become the Jacobian itself: an
    array that owns its memory (never a view of a seed, an input or a broadcast),
    C-ordered, writeable, of the result's dtype. One sweep's tangents are computed fresh
    by the rules, so this saves the copy into a new result array (10 x 2000: ~10 us)."""
    return type(t) is np.ndarray and t.dtype == dtype and t.flags.owndata and \
        t.flags.c_contiguous and t.flags.writeable


def reverse_flat(problem, chunk, seeds=None, check=None, max_memory=None):
    """``J`` (m x n) by batched pullbacks of one tape; ``seeds`` (c x m) replaces the
    identity (then the result is ``seeds J``, (c x n): a compressed Jacobian). ``check()``
    runs once the tape is recorded (it may raise: see :mod:`jacobians.validity`).
    ``max_memory`` as in :func:`forward_flat` (checked once the tape is recorded)."""
    if problem.executor is not None:    # the chunks as tasks, each its own tape
        return distributed.sweep("reverse", problem, chunk, get_census, seeds, check,
                                 max_memory)
    dtype = float_dtype(problem.dtype)
    out, pullback = dualad.vjp(problem.fun, *problem.primals())
    if check is not None:
        check()
    problem.set_outputs(out)
    rows = problem.m if seeds is None else seeds.shape[0]
    if max_memory is not None:
        refuse_dense(problem.api, problem, max_memory, dtype)
    jac = np.empty((rows, problem.n), dtype)
    spans = chunks(rows, chunk)
    tick = tracker(problem, "reverse sweep", rows, spans, seeds)
    for start, count in spans:
        cseeds = problem.onehot_cotangent_seeds(start, count, dtype) if seeds is None else \
            problem.cotangent_seeds(seeds[start:start + count])
        grads = pullback(cseeds)
        jac[start:start + count] = flat_rows(flatten(grads)[0], count)
        if tick is not None:
            tick.advance(count)
    return jac
