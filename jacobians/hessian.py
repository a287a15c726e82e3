"""Dense Hessians of scalar functions: ``hessian`` and ``hvp``.

The four compositions of the two modes (:mod:`jacobians.hessian_sweeps`) give rows
``V H`` of ``H = ∇²f`` for a chunk ``V`` of directions, each ceil(n / B) sweeps:
forward-over-reverse (one vector-mode JVP through the gradient's reverse sweep),
reverse-over-reverse, reverse-over-forward and forward-over-forward (n² work). The
result is made exactly symmetric, ``H ← (H + Hᵀ) / 2`` (rounding differs between
``∂²f/∂x_i∂x_j`` and ``∂²f/∂x_j∂x_i``). ``mode="auto"`` is forward-over-reverse (the
forward sweep rides on one reverse sweep, so each chunk costs a small multiple of one
gradient, with no second-order tape), or, when the modelled dense cost makes a pattern
detection worth it and a star coloring needs far fewer directions than n, the same
sweeps compressed by the coloring and decompressed into the dense result
(:mod:`jacobians.auto`). A dense Hessian over ``max_memory`` bytes is refused, naming
``sparse_hessian`` (:mod:`jacobians.memory`).
"""
from __future__ import annotations

__all__ = ["hessian", "hvp"]

import numpy as np

import dualad
from dualad.extend import Box, shape_of

from ._common import DEFAULT_MAX_MEMORY, composes, fname
from .auto import hessian_auto
from .hessian_sweeps import (HESSIAN_MODES, _grad_of, check_hessian_mode,  # noqa: F401
                             hessian_chunk, hessian_rows, scalar_problem, structured_square)
from .distributed import Workers
from .memory import refuse_dense
from .sweeps import result_dtype


@composes("hessian")
def hessian(f, *args, mode="auto", argnums=0, chunk_size=None, max_memory=DEFAULT_MAX_MEMORY,
            executor=None, retries=2):
    """The Hessian of scalar ``f`` at ``args``: shape ``in.shape + in.shape``, exactly symmetric.

    ``hessian(f, x)`` evaluates; ``hessian(f)`` returns ``x ↦ H(x)``. ``mode``:
    "auto" (forward-over-reverse, compressed by a star coloring where that pays: see
    the module docstring), "forward-over-reverse", "reverse-over-reverse",
    "reverse-over-forward" or "forward-over-forward". Directions go through in batched
    sweeps of ``chunk_size`` (or as many as fit in ``max_memory``); a dense Hessian
    larger than ``max_memory`` bytes is refused (use ``sparse_hessian``). ``executor``:
    a ``concurrent.futures.Executor`` or ``dask.distributed.Client``; each chunk of
    Hessian rows is then one task on a worker, retried ``retries`` times if the worker
    is lost (:mod:`jacobians.distributed`).
    """
    mode = check_hessian_mode(mode)
    if not args:
        def hess_f(*a):
            return hessian(f, *a, mode=mode, argnums=argnums, chunk_size=chunk_size,
                           max_memory=max_memory, executor=executor, retries=retries)
        hess_f.__name__ = f"hessian({fname(f)})"
        return hess_f
    workers = None if executor is None else Workers("hessian", executor, retries,
                                                    chunk_size is not None)
    problem = scalar_problem("hessian", f, args, argnums)
    problem.executor = workers
    refuse_dense("hessian", problem, max_memory, result_dtype(problem), "hessian")
    if mode == "auto":
        return structured_square(problem, hessian_auto(problem, chunk_size, max_memory))
    chunk = hessian_chunk(problem, mode, chunk_size, max_memory)
    # Rows of H/2 (seeds scaled by ½, exact in floating point), so one pass gives the
    # exactly symmetric (H + Hᵀ)/2.
    h = hessian_rows(problem, mode, None, chunk, scale=0.5)
    h = np.add(h, h.T)
    return structured_square(problem, h)


@composes("hvp", curry=True)
def hvp(f, x, v, *args, argnums=0):
    """``∇²f(x) v`` by forward-over-reverse: one JVP through one gradient sweep, a small
    multiple of the gradient's cost. ``v`` of shape ``x.shape``, or ``(B, *x.shape)`` for
    B products in one sweep. Extra positional ``args`` are passed to ``f`` undifferentiated
    (``argnums`` says which argument ``x`` is)."""
    call_args = list(args)
    call_args.insert(int(argnums), x)
    problem = scalar_problem("hvp", f, call_args, int(argnums))
    v = v if isinstance(v, Box) else np.asarray(v)
    xs = problem.in_shapes[0]
    if len(problem.leaves) != 1:
        raise TypeError(f"hvp: x must be one array; for containers use jacobians.hessian")
    if shape_of(v) != tuple(xs) and shape_of(v)[1:] != tuple(xs):
        raise ValueError(f"hvp({problem.name}): v has shape {v.shape}, but x has shape "
                         f"{tuple(xs)}; v must have shape {tuple(xs)} or (B, *{tuple(xs)})")
    return dualad.jvp(_grad_of(problem), problem.primals(), (v,), lazy=True)[1][0]
