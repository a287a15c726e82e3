"""Dense Jacobians in batched sweeps: ``jacobian``, ``jacfwd``, ``jacrev``.

For ``F: R^n -> R^m`` with Jacobian ``J`` (m x n), ``forward`` is ceil(n / B) vector-mode
JVPs of B columns of the identity each, ``reverse`` one tape swept back ceil(m / B) times
with B rows of the identity as cotangents (:mod:`jacobians.sweeps`): never one sweep per
basis vector. The chunk size B is ``chunk_size`` or the largest that keeps one sweep's
tangents within ``max_memory`` bytes (from a census of the function: see
:mod:`jacobians.cost`). ``mode="auto"`` (:mod:`jacobians.auto`) weighs those two and,
where the modelled dense cost makes a pattern detection worth it, the compressed sweeps
of a coloring decompressed into the same dense result. A dense result larger than
``max_memory`` bytes is refused before anything is allocated, naming ``sparse_jacobian``
(:mod:`jacobians.memory`).
"""
from __future__ import annotations

__all__ = ["jacobian_flat", "jacobian", "jacfwd", "jacrev"]

from ._common import DEFAULT_MAX_MEMORY, Problem, composes, fname
from .auto import fixed_chunk, jacobian_auto
from .distributed import Workers, attach
from .sweeps import (MODES, check_mode, chunk_for, forward_flat, get_census,  # noqa: F401
                     reverse_flat, signature)


def jacobian_flat(problem, mode, chunk_size=None, max_memory=DEFAULT_MAX_MEMORY):
    """The flat dense Jacobian (m x n) of ``problem`` in ``mode``."""
    if mode == "auto":
        return jacobian_auto(problem, chunk_size, max_memory)
    chunk = fixed_chunk(problem, mode, chunk_size, max_memory)
    return (forward_flat if mode == "forward" else reverse_flat)(problem, chunk,
                                                                 max_memory=max_memory)


# --- the public functions ---------------------------------------------------------------------
def _curried(api, f, kwargs, run):
    def jac_f(*args):
        return run(f, *args, **kwargs)
    jac_f.__name__ = f"{api}({fname(f)})"
    return jac_f


@composes("jacobian")
def jacobian(f, *args, mode="auto", argnums=0, chunk_size=None, max_memory=DEFAULT_MAX_MEMORY,
             executor=None, retries=2):
    """The Jacobian of ``f`` at ``args`` in ``argnums``: shape ``out.shape + in.shape``.

    ``jacobian(f, x)`` evaluates; ``jacobian(f)`` returns the function ``x ↦ J(x)``.
    ``mode``: "forward" (n directions through vector-mode JVPs), "reverse" (m
    cotangents through batched pullbacks of one tape) or "auto" (the cheaper, by
    the cost model). Several arguments (``argnums`` a tuple) and container
    inputs/outputs give nested results: outputs, then arguments, then leaves.
    ``chunk_size`` directions per sweep, or as many as fit in ``max_memory`` bytes.
    ``executor``: a ``concurrent.futures.Executor`` or a ``dask.distributed.Client``; each
    chunk of directions is then one task on a worker, retried ``retries`` times if the
    worker is lost (:mod:`jacobians.distributed`, docs/distributed.md).
    """
    mode = check_mode("jacobian", mode)
    if not args:
        return _curried("jacobian", f, dict(mode=mode, argnums=argnums, chunk_size=chunk_size,
                                            max_memory=max_memory, executor=executor,
                                            retries=retries), jacobian)
    problem = attach("jacobian", Problem("jacobian", f, args, argnums), executor, retries,
                     chunk_size)
    return problem.structured(jacobian_flat(problem, mode, chunk_size, max_memory))


def _in_mode(api, mode, f, args, argnums, chunk_size, max_memory, executor, retries):
    """``jacobian(f, *args, mode=mode)`` called as ``api`` (jacfwd, jacrev): curried
    without ``args``, and errors name ``api``, not the jacobian it calls."""
    if not args:
        return _curried(api, f, dict(argnums=argnums, chunk_size=chunk_size,
                                     max_memory=max_memory, executor=executor,
                                     retries=retries),
                        jacfwd if mode == "forward" else jacrev)
    if executor is not None:
        Workers(api, executor, retries)       # misuse named as api, not jacobian
    return jacobian(f, *args, mode=mode, argnums=argnums, chunk_size=chunk_size,
                    max_memory=max_memory, executor=executor, retries=retries)


@composes("jacfwd")
def jacfwd(f, *args, argnums=0, chunk_size=None, max_memory=DEFAULT_MAX_MEMORY, executor=None,
           retries=2):
    """``jacobian(..., mode="forward")``: batched JVPs, one column per direction.
    ``executor``/``retries``: chunks of columns as tasks (see :func:`jacobian`)."""
    return _in_mode("jacfwd", "forward", f, args, argnums, chunk_size, max_memory, executor,
                    retries)


@composes("jacrev")
def jacrev(f, *args, argnums=0, chunk_size=None, max_memory=DEFAULT_MAX_MEMORY, executor=None,
           retries=2):
    """``jacobian(..., mode="reverse")``: batched pullbacks of one tape, one row per cotangent.
    ``executor``/``retries``: chunks of rows as tasks, each recording its own tape (see
    :func:`jacobian`)."""
    return _in_mode("jacrev", "reverse", f, args, argnums, chunk_size, max_memory, executor,
                    retries)
