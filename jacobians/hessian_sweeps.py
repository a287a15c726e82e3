"""Hessian rows by the four compositions of the two modes, and what sizes them.

For ``f: R^n -> R`` with Hessian ``H = ∇²f`` and a chunk ``V`` (B x n) of
directions (rows of the identity, or any seeds):

    forward-over-reverse  V H = ∂/∂ε ∇f(x + εV)      ONE vector-mode JVP through
                                                       the gradient's reverse sweep
    reverse-over-reverse  V H = Vᵀ-pullback of ∇f     ONE tape of the gradient,
                                                       swept back once per chunk
    reverse-over-forward  V H = ∇_x (V ∇f(x))         ONE pullback (B cotangents) of
                                                       the batched directional derivative
    forward-over-forward  U H = ∂/∂ε ∂f/∂δ            nested JVPs: n inner directions
                                                       times B outer ones (n² work)

This module sits below the public :func:`jacobians.hessian.hessian`, the sparse
Hessian (compressed rows, :mod:`jacobians.sparse`) and the auto mode that chooses
between them (:mod:`jacobians.auto`).
"""
from __future__ import annotations

__all__ = ["HESSIAN_MODES", "check_hessian_mode", "scalar_problem", "check_scalar", "check_real_inputs",
           "hessian_rows", "hessian_chunk", "structured_square"]

import numpy as np

import dualad
from dualad.extend import flatten, shape_of, unguarded_value

from . import distributed
from ._common import Problem, chunks, flat_rows, float_dtype, identity_rows
from .progress import tracker
from .sweeps import get_census

HESSIAN_MODES = ("auto", "forward-over-reverse", "reverse-over-reverse",
                 "reverse-over-forward", "forward-over-forward")
_ALIASES = {"fwd-rev": "forward-over-reverse", "rev-rev": "reverse-over-reverse",
            "rev-fwd": "reverse-over-forward", "fwd-fwd": "forward-over-forward"}


def check_hessian_mode(mode):
    mode = _ALIASES.get(mode, mode)
    if mode not in HESSIAN_MODES:
        raise ValueError(f"hessian: mode={mode!r} is not one of "
                         f"{', '.join(map(repr, HESSIAN_MODES))}")
    return mode


def scalar_problem(api, f, args, argnums, traced_ok=False):
    problem = Problem(api, f, args, argnums, traced_ok)
    get_census(problem)
    check_scalar(problem)
    return problem


def check_scalar(problem):
    """A Hessian needs a scalar function: anything else raises, naming the shape."""
    if problem.out_shapes != [()]:
        got = problem.out_shapes[0] if len(problem.out_shapes) == 1 else \
            f"{len(problem.out_shapes)} outputs"
        raise TypeError(f"{problem.api}: {problem.name} must return a scalar (shape ()), got "
                        f"shape {got}; for vector outputs take the jacobian of each "
                        f"component's gradient")


def check_real_inputs(problem):
    """A Hessian matrix needs real inputs. Of a complex x, a real f is not holomorphic: its
    second derivative v ↦ ∂(∇f)[v] is R-linear, not multiplication by one complex matrix
    (columns along e_j and along i·e_j are not i times each other), and a symmetric
    complex "Hessian" of it would be silently wrong. Raises TypeError saying what to write
    (JAX's ``hessian`` refuses complex inputs of non-holomorphic functions too)."""
    if not np.issubdtype(problem.dtype, np.complexfloating):
        return                              # the common case: one dtype check
    name = problem.name if problem.name.isidentifier() else "f"
    for shape, leaf in zip(problem.in_shapes, problem.leaves):
        dtype = np.result_type(unguarded_value(leaf))
        if np.issubdtype(dtype, np.complexfloating):
            raise TypeError(
                f"{problem.api}({problem.name}): an argument is complex ({dtype}, shape "
                f"{tuple(shape)}), and the second derivative of a real function of complex "
                f"inputs is not one complex matrix (it is linear over the reals only). "
                f"Differentiate over the real and imaginary parts, e.g. "
                f"jacobians.{problem.api}(lambda u: {name}(u[:n] + 1j * u[n:]), "
                f"np.concatenate([x.real, x.imag])), or take one direction v at a time "
                f"with jacobians.hvp({name}, x, v)")


def _grad_of(problem):
    return dualad.grad(problem.fun, argnums=tuple(range(len(problem.nums))))


def _directional(problem, block):
    """x ↦ (∇f(x) · v_b)_b for the rows v_b of ``block``: batched forward mode."""
    seeds = problem.tangent_seeds(block)
    return lambda *diff: dualad.jvp(problem.fun, diff, seeds)[1]


def hessian_rows(problem, mode, directions, chunk, scale=1.0, check=None):
    """``directions @ H`` (c x n) for ``directions`` (c x n), in chunks of ``chunk``;
    ``directions=None`` is ``scale`` times the identity (the whole H), seeded one-hot in
    forward-over-reverse (:mod:`dualad.core.onehot`). ``check()`` runs after the first chunk
    (it may raise: see :mod:`jacobians.validity`)."""
    if problem.executor is not None:    # the chunks as tasks (jacobians.distributed)
        return distributed.sweep("hessian", problem, chunk, get_census, directions, check,
                                 None, mode, scale)
    n = problem.n
    dtype = float_dtype(problem.dtype)
    if directions is None:
        c = n
        if mode != "forward-over-reverse":
            directions = identity_rows(0, n, n, dtype)
            if scale != 1.0:
                directions *= scale
    else:
        c = directions.shape[0]
        dtype = np.result_type(dtype, directions.dtype)
    out = np.empty((c, n), dtype)
    primals = problem.primals()
    if mode == "reverse-over-reverse":
        pullback = dualad.vjp(_grad_of(problem), *primals)[1]
    spans = chunks(c, chunk)
    tick = tracker(problem, f"{mode} Hessian sweep", c, spans, directions)
    for start, count in spans:
        block = None if directions is None else directions[start:start + count]
        if mode == "forward-over-reverse":
            seeds = problem.tangent_seeds(block) if block is not None else \
                problem.onehot_tangent_seeds(start, count, dtype, scale)
            rows = dualad.jvp(_grad_of(problem), primals, seeds, lazy=True)[1]
        elif mode == "reverse-over-reverse":
            rows = pullback(problem.tangent_seeds(block))
        elif mode == "reverse-over-forward":
            pb = dualad.vjp(_directional(problem, block), *primals)[1]
            rows = pb(np.eye(count, dtype=out.dtype))
        else:  # forward-over-forward: the forward gradient, differentiated forward
            eye = identity_rows(0, n, n, out.dtype)
            rows = dualad.jvp(_directional(problem, eye), primals,
                              problem.tangent_seeds(block))[1]
        block_rows = flat_rows(flatten(rows)[0], count)
        if check is not None and start == 0:
            check()
        if tick is not None:
            tick.advance(count)
        if count == c and block_rows.dtype == out.dtype and block_rows.flags.c_contiguous:
            return block_rows                  # one chunk: no copy
        out[start:start + count] = block_rows
    return out


def hessian_chunk(problem, mode, chunk_size, max_memory):
    if chunk_size is not None:
        return max(1, int(chunk_size))
    c = get_census(problem)
    per = c.bytes_per_direction(np.dtype(float_dtype(problem.dtype)).itemsize) * 3
    if mode == "forward-over-forward":
        per *= max(1, problem.n)
    return max(1, int(max_memory // per))


def structured_square(problem, h):
    """Blocks ``in_i.shape + in_j.shape`` of a flat (n x n) matrix, nested like the inputs."""
    if len(problem.leaves) == 1:
        shape = tuple(problem.in_shapes[0]) * 2
        return h if shape_of(h) == shape else h.reshape(shape)
    rows = []
    spans = list(zip(problem.in_offsets, problem.in_sizes, problem.in_shapes))
    for ro, rs, rsh in spans:
        blocks = [h[ro:ro + rs, co:co + cs].reshape(tuple(rsh) + tuple(csh))
                  for co, cs, csh in spans]
        inner = problem.rebuild_inputs(blocks)
        rows.append(inner[0] if problem.single else inner)
    outer = problem.rebuild_inputs(rows)
    return outer[0] if problem.single else outer
