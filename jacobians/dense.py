"""Dense Jacobians in batched sweeps: ``jacobian``, ``jacfwd``, ``jacrev``.

For ``F: R^n -> R^m`` with Jacobian ``J`` (m x n):

    forward:  J E_k     = the output tangents of ONE vector-mode JVP whose
                          tangent carries the columns of a chunk E_k of the
                          n x n identity (B of them) as its batch axis
    reverse:  E_kᵀ J    = ONE batched pullback of a recorded tape, with a
                          chunk of rows of the m x m identity as cotangents

so a whole Jacobian is ceil(n / B) (forward) or ceil(m / B) (reverse) sweeps,
never one sweep per basis vector. The reverse tape is recorded once and
swept back once per chunk. The chunk size B is ``chunk_size`` or the largest
that keeps one sweep's tangents within ``max_memory`` bytes (from a census of
the function: see :mod:`jacobians.cost`). ``mode="auto"`` takes the cheaper of
the two by the cost model, settled by timing one sweep of each when close.
"""
from __future__ import annotations

import math

import numpy as np

import dualad
from dualad.extend import flatten, shape_of

from . import cost
from ._common import (DEFAULT_MAX_MEMORY, FunctionCache, Problem, chunks, composes, flat_rows,
                      float_dtype, fname, refuse_traced)

MODES = ("auto", "forward", "reverse")
_CACHE = FunctionCache()


def check_mode(api, mode, allowed=MODES):
    aliases = {"fwd": "forward", "rev": "reverse", "jacfwd": "forward", "jacrev": "reverse"}
    mode = aliases.get(mode, mode)
    if mode not in allowed:
        raise ValueError(f"{api}: mode={mode!r} is not one of {', '.join(map(repr, allowed))}")
    return mode


def signature(problem):
    """What the cache of a function is keyed on: argument shapes and dtypes, argnums."""
    sig = []
    for a in problem.args:
        leaves = flatten(a)[0]
        sig.append(tuple((shape_of(x), str(getattr(x, "dtype", type(x).__name__)))
                         for x in leaves))
    return tuple(sig), problem.nums


def get_census(problem):
    """The census of ``problem``'s function (cached per function and signature); sets the
    problem's outputs."""
    key = problem.__dict__.get("census_key")
    if key is None:        # once per problem: hessian and its chunk size both ask
        key = problem.census_key = ("census", signature(problem))
    hit = _CACHE.get(problem.f, key)
    if hit is None:
        c, out = cost.census(problem)
        refuse_traced(problem.api, problem.f, out, "the output")   # never cache a traced output
        leaves = flatten(out)[0]
        hit = _CACHE.put(problem.f, key, (c, [shape_of(o) for o in leaves], out))
    c, shapes, out = hit
    if problem.out_shapes is None:
        problem.set_outputs(out)
    return c


def chunk_for(problem, chunk_size, max_memory, census=None):
    if chunk_size is not None:
        if int(chunk_size) < 1:
            raise ValueError(f"{problem.api}({problem.name}): chunk_size must be a positive "
                             f"integer, got {chunk_size!r}")
        return int(chunk_size)
    c = census or get_census(problem)
    return c.chunk_size(max_memory, np.dtype(float_dtype(problem.dtype)).itemsize)


# --- the two sweeps ---------------------------------------------------------------------
def forward_flat(problem, chunk, seeds=None, check=None):
    """``J`` (m x n) by vector-mode JVPs; ``seeds`` (c x n) replaces the identity (then
    the result is ``(J seedsᵀ)`` as a (m x c) array: a compressed Jacobian). ``check()``
    runs after the first sweep (it may raise: see :mod:`jacobians.validity`)."""
    n = problem.n if seeds is None else seeds.shape[0]
    dtype = float_dtype(problem.dtype)
    if n == 0:
        out = problem.fun(*problem.primals())
        problem.set_outputs(out)
        return np.zeros((problem.m, 0), dtype)
    jt = None
    for start, count in chunks(n, chunk):
        tseeds = problem.onehot_tangent_seeds(start, count, dtype) if seeds is None else \
            problem.tangent_seeds(seeds[start:start + count])
        out, tans = dualad.jvp(problem.fun, problem.primals(), tseeds)
        t_leaves = flatten(tans)[0]
        if jt is None:
            if check is not None:
                check()
            problem.set_outputs(out)
            jt = np.empty((n, problem.m), np.result_type(dtype, *[t.dtype for t in t_leaves]))
        jt[start:start + count] = flat_rows(t_leaves, count)
    return jt.T


def reverse_flat(problem, chunk, seeds=None, check=None):
    """``J`` (m x n) by batched pullbacks of one tape; ``seeds`` (c x m) replaces the
    identity (then the result is ``seeds J``, (c x n): a compressed Jacobian). ``check()``
    runs once the tape is recorded (it may raise: see :mod:`jacobians.validity`)."""
    dtype = float_dtype(problem.dtype)
    out, pullback = dualad.vjp(problem.fun, *problem.primals())
    if check is not None:
        check()
    problem.set_outputs(out)
    rows = problem.m if seeds is None else seeds.shape[0]
    jac = np.empty((rows, problem.n), dtype)
    for start, count in chunks(rows, chunk):
        cseeds = problem.onehot_cotangent_seeds(start, count, dtype) if seeds is None else \
            problem.cotangent_seeds(seeds[start:start + count])
        grads = pullback(cseeds)
        jac[start:start + count] = flat_rows(flatten(grads)[0], count)
    return jac


# --- choosing -----------------------------------------------------------------------------
def decide(problem, chunk_size=None, max_memory=DEFAULT_MAX_MEMORY, calibrate=True):
    """``(mode, chunk, estimates, how)`` for a dense Jacobian of ``problem`` (cached)."""
    key = ("dense", signature(problem), chunk_size, max_memory, calibrate)
    hit = _CACHE.get(problem.f, key)
    c = get_census(problem)
    if hit is not None:
        return hit
    chunk = chunk_for(problem, chunk_size, max_memory, c)
    n, m = problem.n, problem.m
    est = {"forward": cost.model(c, n, chunk, "forward"),
           "reverse": cost.model(c, m, chunk, "reverse")}
    how = "modelled from the census"
    lo, hi = sorted(est.values())
    if calibrate and n and m and hi < cost.CLOSE * lo:
        t = cost.time_sweeps(problem, min(n, chunk), min(m, chunk))
        est = {"forward": math.ceil(n / chunk) * t["jvp"],
               "reverse": t["record"] + math.ceil(m / chunk) * t["pullback"]}
        how = "timed (one JVP and one VJP of the function)"
    mode = min(est, key=est.get)
    return _CACHE.put(problem.f, key, (mode, chunk, est, how))


def jacobian_flat(problem, mode, chunk_size=None, max_memory=DEFAULT_MAX_MEMORY):
    if mode == "auto":
        mode, chunk, _, _ = decide(problem, chunk_size, max_memory)
    else:
        chunk = chunk_for(problem, chunk_size, max_memory)
    return (forward_flat if mode == "forward" else reverse_flat)(problem, chunk)


# --- the public functions ---------------------------------------------------------------------
def _curried(api, f, kwargs, run):
    def jac_f(*args):
        return run(f, *args, **kwargs)
    jac_f.__name__ = f"{api}({fname(f)})"
    return jac_f


@composes("jacobian")
def jacobian(f, *args, mode="auto", argnums=0, chunk_size=None, max_memory=DEFAULT_MAX_MEMORY):
    """The Jacobian of ``f`` at ``args`` in ``argnums``: shape ``out.shape + in.shape``.

    ``jacobian(f, x)`` evaluates; ``jacobian(f)`` returns the function ``x ↦ J(x)``.
    ``mode``: "forward" (n directions through vector-mode JVPs), "reverse" (m
    cotangents through batched pullbacks of one tape) or "auto" (the cheaper, by
    the cost model). Several arguments (``argnums`` a tuple) and container
    inputs/outputs give nested results: outputs, then arguments, then leaves.
    ``chunk_size`` directions per sweep, or as many as fit in ``max_memory`` bytes.
    """
    mode = check_mode("jacobian", mode)
    if not args:
        return _curried("jacobian", f, dict(mode=mode, argnums=argnums, chunk_size=chunk_size,
                                            max_memory=max_memory), jacobian)
    problem = Problem("jacobian", f, args, argnums)
    return problem.structured(jacobian_flat(problem, mode, chunk_size, max_memory))


def _in_mode(api, mode, f, args, argnums, chunk_size, max_memory):
    """``jacobian(f, *args, mode=mode)`` called as ``api`` (jacfwd, jacrev): curried
    without ``args``, and errors name ``api``, not the jacobian it calls."""
    if not args:
        return _curried(api, f, dict(argnums=argnums, chunk_size=chunk_size,
                                     max_memory=max_memory),
                        jacfwd if mode == "forward" else jacrev)
    return jacobian(f, *args, mode=mode, argnums=argnums, chunk_size=chunk_size,
                    max_memory=max_memory)


@composes("jacfwd")
def jacfwd(f, *args, argnums=0, chunk_size=None, max_memory=DEFAULT_MAX_MEMORY):
    """``jacobian(..., mode="forward")``: batched JVPs, one column per direction."""
    return _in_mode("jacfwd", "forward", f, args, argnums, chunk_size, max_memory)


@composes("jacrev")
def jacrev(f, *args, argnums=0, chunk_size=None, max_memory=DEFAULT_MAX_MEMORY):
    """``jacobian(..., mode="reverse")``: batched pullbacks of one tape, one row per cotangent."""
    return _in_mode("jacrev", "reverse", f, args, argnums, chunk_size, max_memory)
