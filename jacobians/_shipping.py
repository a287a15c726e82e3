"""What runs on a worker: the payload shipped once, and one task = one chunk of a sweep.

A *payload* is ``(api, f, args, argnums)``: the function, ALL its positional arguments
(the differentiated ones and the others) and which are differentiated, serialized ONCE
per call (cloudpickle when importable, else pickle) into one ``bytes`` object. A worker
rebuilds the :class:`jacobians._common.Problem` from it once per payload and keeps it in
a small cache keyed by the payload's SHA-256 digest, so a worker that runs several
chunks of one Jacobian deserializes ``f`` and its closure once.

A *task* computes one block of rows, by the same code as the local loop bodies of
:func:`jacobians.sweeps.forward_flat` / ``reverse_flat`` and
:func:`jacobians.hessian_sweeps.hessian_rows` (tests/jacobians/test_distributed.py
asserts the blocks are bitwise the local ones)::

    forward   (count x m)  the output tangents of one vector-mode JVP, seeded with
                           rows start..start+count of the identity (one-hot) or seeds
    reverse   (count x n)  one batched pullback of a tape the task records itself
                           (a tape holds closures and cannot be shipped)
    hessian   (count x n)  rows V H in the given composition of the two modes

A task never raises what ``f`` raises: it returns a :class:`Failure` holding the
exception and the worker's traceback text, so the caller re-raises it with the chunk it
covered, and infrastructure retries (a lost worker, Dask's ``retries=``) are never spent
re-running a function that fails deterministically.
"""
from __future__ import annotations

__all__ = ["serializer", "dumps", "LOADS", "Failure", "run_task", "forward_block",
           "reverse_block", "hessian_block", "noop"]

import collections
import hashlib
import pickle
import threading
import traceback

import numpy as np

import dualad
from dualad.extend import flatten

from ._common import Problem, chunks, flat_rows, float_dtype, identity_rows


def serializer():
    """``(module, name)``: cloudpickle when importable (closures, lambdas, functions of
    ``__main__``), else the standard pickle (functions importable by name only)."""
    try:
        import cloudpickle
        return cloudpickle, "cloudpickle"
    except ImportError:
        return pickle, "pickle"


def dumps(payload):
    """``(bytes, digest, serializer name)``; the pickling error propagates."""
    module, name = serializer()
    data = module.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)
    return data, hashlib.sha256(data).hexdigest(), name


# --- the worker's cache of rebuilt problems -----------------------------------------------
_CACHE_SIZE = 4            # payloads kept per worker process (one per concurrent Jacobian)
_cache = collections.OrderedDict()
_lock = threading.Lock()   # a Dask worker may run tasks on several threads
LOADS = [0]                # payloads deserialized in this process (tests read it)


def _problem(payload, digest):
    """The Problem of ``payload`` (bytes, or the tuple itself on a thread pool)."""
    if not isinstance(payload, (bytes, bytearray, memoryview)):
        return Problem(*payload)          # threads: nothing serialized, a private Problem
    with _lock:
        hit = _cache.get(digest)
        if hit is not None:
            _cache.move_to_end(digest)
            return hit
    api, f, args, argnums = pickle.loads(payload)
    LOADS[0] += 1
    problem = Problem(api, f, args, argnums)
    with _lock:
        _cache[digest] = problem
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return problem


class Failure:
    """What ``f`` raised on the worker: the exception (when it pickles) and its traceback
    text. Returned, not raised (see the module docstring)."""

    def __init__(self, exc, stage="running the sweep"):
        self.stage = stage
        self.type_name = type(exc).__name__
        self.message = str(exc)
        self.text = "".join(traceback.format_exception(exc))
        try:
            pickle.dumps(exc)
            self.exc = exc
        except Exception:   # an exception holding an unpicklable value: its text travels
            self.exc = None


def run_task(payload, digest, kind, mode, start, count, seeds, dtype, scale, chunk=None):
    """Rows ``start .. start + count`` of a sweep (module docstring), or a :class:`Failure`.
    ``chunk``: the sweep's chunk, for a task of several chunks on one tape (reverse, and
    reverse-over-reverse Hessians: :func:`jacobians.distributed.one_tape`)."""
    try:
        problem = _problem(payload, digest)
    except Exception as e:    # f (or what it needs) cannot be loaded on this worker
        return Failure(e, "loading the function")
    try:
        dtype = np.dtype(dtype)
        if kind == "forward":
            return forward_block(problem, start, count, seeds, dtype)[1]
        if kind == "reverse":
            return reverse_block(problem, start, count, seeds, dtype, chunk)
        return hessian_block(problem, mode, start, count, seeds, dtype, scale, chunk)
    except Exception as e:    # f's own error: reported with its chunk by the caller
        return Failure(e)


# --- the blocks: the local loop bodies, one chunk each -----------------------------------
def forward_block(problem, start, count, seeds, dtype):
    """As :func:`jacobians.sweeps.forward_flat` computes chunk ``start``: the outputs and
    the block (count x m)."""
    tseeds = problem.onehot_tangent_seeds(start, count, dtype) if seeds is None else \
        problem.tangent_seeds(seeds)
    out, tans = dualad.jvp(problem.fun, problem.primals(), tseeds)
    return out, flat_rows(flatten(tans)[0], count)


def reverse_block(problem, start, count, seeds, dtype, chunk=None):
    """As :func:`jacobians.sweeps.reverse_flat` computes rows ``start .. start + count``
    (count x n): one tape this task records, swept back once per ``chunk`` of them (the
    local chunks: ``start`` is a multiple of ``chunk``)."""
    out, pullback = dualad.vjp(problem.fun, *problem.primals())
    problem.set_outputs(out)
    rows = []
    for s, c in chunks(count, chunk or count):
        cseeds = problem.onehot_cotangent_seeds(start + s, c, dtype) if seeds is None else \
            problem.cotangent_seeds(seeds[s:s + c])
        rows.append(flat_rows(flatten(pullback(cseeds))[0], c))
    return rows[0] if len(rows) == 1 else np.concatenate(rows)


def hessian_block(problem, mode, start, count, block, dtype, scale, chunk=None):
    """As :func:`jacobians.hessian_sweeps.hessian_rows` computes chunk ``start``: rows
    ``block @ H`` (count x n); ``block=None`` is rows start..start+count of ``scale``
    times the identity. ``dtype`` is the local result's dtype. Reverse-over-reverse:
    one tape of the gradient, swept back once per ``chunk`` of the rows."""
    n = problem.n
    primals = problem.primals()
    if block is None and mode != "forward-over-reverse":
        # rows of identity_rows(0, n, n) * scale, as the local path slices them
        block = identity_rows(start, count, n, float_dtype(problem.dtype))
        if scale != 1.0:
            block *= scale
    if mode == "forward-over-reverse":
        seeds = problem.tangent_seeds(block) if block is not None else \
            problem.onehot_tangent_seeds(start, count, float_dtype(problem.dtype), scale)
        rows = dualad.jvp(_grad_of(problem), primals, seeds, lazy=True)[1]
    elif mode == "reverse-over-reverse":
        pullback = dualad.vjp(_grad_of(problem), *primals)[1]
        parts = [flat_rows(flatten(pullback(problem.tangent_seeds(block[s:s + c])))[0], c)
                 for s, c in chunks(count, chunk or count)]
        return parts[0] if len(parts) == 1 else np.concatenate(parts)
    elif mode == "reverse-over-forward":
        pb = dualad.vjp(_directional(problem, block), *primals)[1]
        rows = pb(np.eye(count, dtype=dtype))
    else:  # forward-over-forward
        eye = identity_rows(0, n, n, dtype)
        rows = dualad.jvp(_directional(problem, eye), primals, problem.tangent_seeds(block))[1]
    return flat_rows(flatten(rows)[0], count)


def _grad_of(problem):
    """As :func:`jacobians.hessian_sweeps._grad_of` (which imports this module's caller)."""
    return dualad.grad(problem.fun, argnums=tuple(range(len(problem.nums))))


def _directional(problem, block):
    """As :func:`jacobians.hessian_sweeps._directional`: x ↦ (∇f(x) · v_b)_b."""
    seeds = problem.tangent_seeds(block)
    return lambda *diff: dualad.jvp(problem.fun, diff, seeds)[1]


def noop(x):
    """A task that does nothing (the benchmark's overhead per task)."""
    return x
