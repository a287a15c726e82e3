"""Jacobian sweeps on a ``concurrent.futures.Executor`` or a ``dask.distributed.Client``.

``executor=`` on ``jacobian``, ``jacfwd``, ``jacrev``, ``hessian``, ``sparse_jacobian``,
``sparse_hessian`` and ``plan`` puts a :class:`Workers` on the problem
(``problem.executor``); the sweep functions (:func:`jacobians.sweeps.forward_flat`,
``reverse_flat``, :func:`jacobians.hessian_sweeps.hessian_rows`, and through them the
compressed sweeps of the sparse routines) then hand their chunk loop to
:func:`sweep` here. The chunks of one sweep are independent:

    forward   J E_k       chunk k = columns of J           (count x m block of Jᵀ)
    reverse   E_kᵀ J      chunk k = rows of J               (count x n block)
    Hessian   V_k H       chunk k = rows of H               (count x n block)
    sparse    the same with seeds: chunk k = colors         (then decompressed locally)

so each chunk is ONE task: it evaluates its own sweep on a worker (a reverse task
records its own tape) and returns its block; the lead process writes the blocks, in
order, into the same array the local loop fills. The census, sparsity detection,
coloring and decompression stay on the lead. The function and its arguments are
serialized once per call (:mod:`jacobians._shipping`): a Dask client scatters the bytes
to every worker once (``broadcast=True``) and each task gets the future; a
``concurrent.futures`` executor sends the same bytes object with each task (one copy
per task through the pool's pipe); a ``ThreadPoolExecutor`` serializes nothing.

Chunking: ``chunk_size=`` is used exactly as locally (so the result is bitwise the
local one). Without it each task takes ``min(max_memory's chunk, ceil(directions /
workers))`` directions: one task per worker when memory allows. Functions with matrix
products may then differ from the local default chunking in the last bit (BLAS blocks
a (B x n) product by B); elementwise and reduction functions do not.

Failures: what ``f`` raises in a task is re-raised here as :class:`DistributedSweepError`
(chained to the original, with the chunk and the worker's traceback), remaining tasks
cancelled. A task lost to the infrastructure (a worker process killed:
``BrokenProcessPool``, Dask's ``KilledWorker``) is submitted again, ``retries`` times (a
broken ``ProcessPoolExecutor`` cannot take tasks again: the retries run on a fresh pool
of the same size, shut down afterwards; on Dask a task cancelled because the workers
holding the scattered payload died counts as lost, and its retry scatters the payload
again); past that the error lists every chunk not computed. A Dask client (or cluster)
closed during the sweep is reported the same way, with nothing retried. A partially
filled result is never returned.
"""
from __future__ import annotations

import concurrent.futures as cf
import logging
import math
import os
import sys
import time

import numpy as np

import dualad
from dualad.extend import flatten, logger

from . import _shipping
from .distributed_engines import Dask, Futures
from ._common import chunks, flat_rows, float_dtype
from .memory import refuse_dense
from .progress import tracker

__all__ = ["DistributedSweepError", "Workers", "attach", "sweep"]

_LOG = logger("distributed")


class DistributedSweepError(RuntimeError):
    """A sweep under ``executor=`` could not be completed.

    Either ``f`` raised in a task (this error is chained to that exception; the message
    names the chunk and holds the worker's traceback), or tasks were lost to the
    infrastructure (dead workers) more than ``retries`` times. No partial result is
    returned.

    Parameters
    ----------
    message : str
        What failed, naming the function and the chunk.
    missing : sequence of tuple of int, optional
        The ``(start, count)`` chunks of directions not computed.
    worker_traceback : str, optional
        The traceback of the exception raised on the worker.

    Attributes
    ----------
    missing : list of tuple of int
        Every ``(start, count)`` chunk not computed.
    worker_traceback : str or None
        The worker's traceback, when ``f`` raised there.
    """

    def __init__(self, message: str, missing: tuple[int, ...] | list[int] = (),
                 worker_traceback: str | None = None) -> None:
        super().__init__(message)
        self.missing = list(missing)
        self.worker_traceback = worker_traceback


def _dask_client_type():
    mod = sys.modules.get("distributed")      # never imported here: an optional extra
    return getattr(mod, "Client", None)


class Workers:
    """The executor of a problem: its kind ("threads", "processes", "executor", "dask"),
    how many workers, ``retries`` and whether ``chunk_size`` was given."""

    def __init__(self, api, executor, retries=2, chunk_given=False):
        client = _dask_client_type()
        if client is not None and isinstance(executor, client):
            kind = "dask"
        elif isinstance(executor, cf.ThreadPoolExecutor):
            kind = "threads"
        elif isinstance(executor, cf.ProcessPoolExecutor):
            kind = "processes"
        elif isinstance(executor, cf.Executor):
            kind = "executor"
        elif isinstance(executor, type) and (issubclass(executor, cf.Executor) or
                                             executor is _dask_client_type()):
            raise TypeError(f"{api}: executor= takes an executor, not its class: write "
                            f"executor={executor.__name__}(...) (and shut it down when done, "
                            f"e.g. with a `with` block)")
        else:
            raise TypeError(
                f"{api}: executor= takes a concurrent.futures.Executor (ThreadPoolExecutor, "
                f"ProcessPoolExecutor, or any subclass) or a dask.distributed.Client, got "
                f"{type(executor).__module__}.{type(executor).__qualname__}; pass "
                f"executor=None to sweep locally")
        if isinstance(retries, bool) or not isinstance(retries, (int, np.integer)) \
                or retries < 0:
            raise ValueError(f"{api}: retries must be a non-negative integer, got {retries!r}")
        self.api, self.executor, self.kind = api, executor, kind
        self.retries, self.chunk_given = int(retries), chunk_given
        self.name = type(executor).__name__
        self._check_usable()

    def _check_usable(self):
        ex = self.executor
        if self.kind == "dask":
            if getattr(ex, "status", "running") in ("closed", "closing"):
                raise ValueError(f"{self.api}: the Dask client given as executor= is closed; "
                                 f"pass an open Client (or executor=None to sweep locally)")
            if self.workers() == 0:
                raise ValueError(
                    f"{self.api}: the Dask client given as executor= has 0 workers (its "
                    f"tasks would wait forever); start workers, or call "
                    f"client.wait_for_workers(n) first")
            return
        if getattr(ex, "_broken", False):
            raise ValueError(f"{self.api}: the {self.name} given as executor= is broken "
                             f"({ex._broken}); make a new one")
        if getattr(ex, "_shutdown", False) or getattr(ex, "_shutdown_thread", False):
            raise ValueError(f"{self.api}: the {self.name} given as executor= was shut down; "
                             f"make a new one (or pass executor=None to sweep locally)")

    def workers(self):
        """The number of tasks that can run at once (Dask: the workers' threads)."""
        if self.kind == "dask":
            return int(sum(self.executor.nthreads().values()))
        return int(getattr(self.executor, "_max_workers", None) or os.cpu_count() or 1)

    def chunk(self, directions, chunk):
        """Directions per task: ``chunk`` when ``chunk_size=`` was given, else
        ``min(chunk, ceil(directions / workers))``."""
        if self.chunk_given or directions == 0:
            return chunk
        return max(1, min(chunk, math.ceil(directions / max(1, self.workers()))))

    def describe(self, directions, chunk, tape=False):
        """One line for ``Plan.explain()``: how the sweeps are split. ``tape``: a reverse
        sweep, whose tasks take several chunks on one tape (:func:`one_tape`)."""
        w = self.workers()
        per = self.chunk(directions, chunk)
        n_chunks = math.ceil(directions / per) if directions else 0
        how = "chunk_size= as given" if self.chunk_given else \
            f"min(the max_memory chunk {chunk}, ceil({directions} / {w} workers))"
        if tape:
            tasks = len(_group([(0, 1)] * n_chunks, w))
            each = (f"each task records one tape and sweeps it back once per chunk of up to "
                    f"{per}")
        else:
            tasks, each = n_chunks, "each task is one sweep"
        return (f"Executor: {self.name} ({self.kind}), {w} worker(s): {directions} directions "
                f"in {n_chunks} chunk(s) of up to {per} ({how}), {tasks} task(s); {each} on "
                f"a worker, {self._shipped()}; the census, detection, coloring and assembly "
                f"stay here.")

    def _shipped(self):
        if self.kind == "threads":
            return "f called directly (threads: nothing serialized)"
        how = _shipping.serializer()[1]
        where = "scattered to every worker once" if self.kind == "dask" else \
            "the same bytes sent with each task"
        return f"f and its arguments serialized once with {how}, {where}"


def attach(api, problem, executor, retries, chunk_size):
    """Put the :class:`Workers` of ``executor`` on ``problem`` (nothing for None)."""
    if executor is not None:
        problem.executor = Workers(api, executor, retries, chunk_size is not None)
    return problem


# --- the sweeps ---------------------------------------------------------------------------
def sweep(kind, problem, chunk, census, seeds=None, check=None, max_memory=None, mode=None,
          scale=1.0):
    """The flat result of ``kind`` with its chunks as tasks (module docstring): "forward"
    J (m x n), or (J Sᵀ) for seeds S; "reverse" J or S J; "hessian" ``seeds @ H`` in the
    composition ``mode`` (``seeds=None``: ``scale`` times the identity). ``check`` (the
    pattern check of :mod:`jacobians.validity`) reads the decisions ``f`` takes in the
    first chunk, so with it that chunk runs here, on the problem's watched function.
    ``census(problem)`` (:func:`jacobians.sweeps.get_census`, passed in: this module sits
    below the sweeps) sets the outputs when no chunk runs here."""
    runner = problem.executor
    t0 = time.perf_counter()
    dtype = float_dtype(problem.dtype)
    if kind == "hessian" and seeds is not None:
        dtype = np.result_type(dtype, seeds.dtype)
    pullback = None
    if kind == "reverse":
        if check is not None:       # as the local sweep: the check once the tape is recorded
            out, pullback = dualad.vjp(problem.fun, *problem.primals())
            check()
            problem.set_outputs(out)
        else:
            _outputs(problem, census)
        total = problem.m if seeds is None else seeds.shape[0]
    else:
        total = problem.n if seeds is None else seeds.shape[0]
    per = runner.chunk(total, chunk)
    spans = chunks(total, per)
    blocks = {}              # (start, count) -> its rows
    if check is not None and spans and kind != "reverse":
        start, count = spans[0]
        if kind == "forward":
            out, blocks[spans[0]] = _shipping.forward_block(problem, start, count,
                                                            _rows(seeds, start, count), dtype)
            check()
            problem.set_outputs(out)
        else:
            blocks[spans[0]] = _shipping.hessian_block(problem, mode, start, count,
                                                       _rows(seeds, start, count), dtype, scale)
            check()
    elif pullback is not None and spans:
        count = spans[0][1]
        cseeds = problem.onehot_cotangent_seeds(0, count, dtype) if seeds is None else \
            problem.cotangent_seeds(seeds[:count])
        blocks[spans[0]] = flat_rows(flatten(pullback(cseeds))[0], count)
    elif kind == "forward":
        _outputs(problem, census)
    if kind != "hessian" and max_memory is not None:
        refuse_dense(problem.api, problem, max_memory, _result_dtype(problem))
    rest = [s for s in spans if s not in blocks]
    tape = one_tape(kind, mode)
    tasks = _group(rest, runner.workers()) if tape else rest
    tick = tracker(problem, _sweep_name(kind, mode), total, list(blocks) + tasks, seeds, t0)
    for _, count in (blocks if tick is not None else ()):    # the chunk that ran here
        tick.advance(count)
    blocks.update(_run(problem, kind, mode, tasks, seeds, dtype, scale, total,
                       per if tape else None, tick))
    if _LOG.isEnabledFor(logging.INFO):
        _LOG.info("jacobians.%s(%s): %s of %d %s in %d task(s) on the %s (%s, %d "
                  "worker(s)): %.3f s", problem.api, problem.name, _sweep_name(kind, mode),
                  total, _what(kind, seeds, mode), len(tasks), runner.name, runner.kind,
                  runner.workers(), time.perf_counter() - t0)
    if kind == "forward":
        rdtype = np.result_type(dtype, blocks[spans[0]].dtype) if spans else dtype
        out = np.empty((total, problem.m), rdtype)
    else:
        out = np.empty((total, problem.n), dtype)
    for (start, count), rows in blocks.items():
        out[start:start + count] = rows
    return out.T if kind == "forward" else out


def one_tape(kind, mode):
    """Whether the local loop sweeps ONE tape for all its chunks (reverse; reverse-over-
    reverse Hessians): then a task takes several consecutive chunks, ceil(chunks /
    workers), and records one tape for them, instead of one tape per chunk."""
    return kind == "reverse" or (kind == "hessian" and mode == "reverse-over-reverse")


def _group(spans, workers):
    """Consecutive ``spans`` merged into at most ``workers`` tasks ``(start, count)``."""
    if not spans:
        return []
    per = math.ceil(len(spans) / max(1, workers))
    return [(spans[i][0], sum(c for _, c in spans[i:i + per]))
            for i in range(0, len(spans), per)]


def _outputs(problem, census):
    """The outputs' shapes on the lead (the census, cached per function and signature)."""
    if problem.out_shapes is None:
        census(problem)


def _result_dtype(problem):
    """As :func:`jacobians.sweeps.result_dtype`: the dense result's dtype."""
    outs = getattr(problem, "out_dtypes", None)
    dtype = float_dtype(problem.dtype)
    return np.result_type(dtype, *outs) if outs else dtype


def _rows(seeds, start, count):
    return None if seeds is None else np.ascontiguousarray(seeds[start:start + count])


def _what(kind, seeds, mode):
    if seeds is not None:
        return "colors"       # the compressed sweeps' seeds: one per color
    return {"forward": "columns", "reverse": "rows", "hessian": "Hessian rows"}[kind]


def _sweep_name(kind, mode):
    return f"{mode} Hessian sweep" if kind == "hessian" else f"{kind} sweep"


def _run(problem, kind, mode, spans, seeds, dtype, scale, total, chunk, tick=None):
    """Every ``(start, count)`` of ``spans`` as a task: ``{span: its rows}``. ``chunk``:
    the sweep's chunk within a task of several (:func:`one_tape`), else None. ``tick``
    (:mod:`jacobians.progress`): told of each finished task, on this thread."""
    runner = problem.executor
    todo = list(range(len(spans)))
    blocks = {}
    if not todo:
        return blocks
    engine = (Dask if runner.kind == "dask" else Futures)(runner, *_payload(problem, runner))

    debug = _LOG.isEnabledFor(logging.DEBUG)
    sent = {}       # i -> when its task was (last) submitted

    def submit(i):
        start, count = spans[i]
        sent[i] = time.perf_counter()
        if debug:
            _LOG.debug("jacobians.%s(%s): %s task %d..%d of %d sent to the %s", problem.api,
                       problem.name, _what(kind, seeds, mode), start, start + count - 1,
                       total, runner.name)
        return engine.submit(kind, mode, start, count, _rows(seeds, start, count), dtype.str,
                             scale, chunk)

    what = _what(kind, seeds, mode)
    pending, lost = {}, {}
    try:
        for i in todo:
            pending[submit(i)] = (i, 0)
        while pending:
            for fut in engine.wait(list(pending)):
                i, attempts = pending.pop(fut)
                try:
                    value = fut.result()
                except Exception as e:    # infrastructure: f's own errors come back as values
                    if attempts < runner.retries:
                        _LOG.warning("jacobians.%s(%s): task for %s %d..%d lost (%s); retry "
                                     "%d of %d", problem.api, problem.name, what, spans[i][0],
                                     sum(spans[i]) - 1, engine.lost(e), attempts + 1,
                                     runner.retries)
                        try:
                            pending[submit(i)] = (i, attempts + 1)
                            continue
                        except Exception as again:
                            e = again
                    lost[i] = e
                    continue
                if isinstance(value, _shipping.Failure):
                    engine.cancel(list(pending))
                    pending = {}
                    raise _failed(problem, runner, kind, mode, what, spans[i], total, value)
                blocks[spans[i]] = value
                if debug:
                    _LOG.debug("jacobians.%s(%s): %s task %d..%d finished in %.3f s (%d "
                               "retr%s)", problem.api, problem.name, what, spans[i][0],
                               sum(spans[i]) - 1, time.perf_counter() - sent[i], attempts,
                               "y" if attempts == 1 else "ies")
                if tick is not None:     # may raise: the sweep stops with its exception
                    tick.advance(spans[i][1])
    finally:
        if pending:           # a progress callback raised: what still runs is not wanted
            engine.cancel(list(pending))
        engine.close()
    if lost:
        missing = [s for s in spans if s not in blocks]
        e = lost[max(lost)]
        listed = ", ".join(f"{s}..{s + c - 1}" for s, c in missing)
        head = (f"jacobians.{problem.api}({problem.name}): {len(missing)} of {len(spans)} "
                f"task(s) of the {_sweep_name(kind, mode)}")
        if engine.closed():
            raise DistributedSweepError(
                f"{head} were not computed: the {runner.name} given as executor= (or its "
                f"cluster) was closed during the sweep; {what} {listed} of {total} are "
                f"missing (no partial result is returned). Keep the client and its cluster "
                f"open until the call returns", missing=missing) from e
        how = ("Dask restarts a worker that dies (its nanny), but a task that kills its "
               "worker every time loses it" if runner.kind == "dask"
               else "A worker process that dies (out of memory, a crash in native code, "
                    "os._exit) breaks a process pool")
        raise DistributedSweepError(
            f"{head} were lost on the {runner.name} after "
            f"{runner.retries} retr{'y' if runner.retries == 1 else 'ies'} each; {what} "
            f"{listed} of {total} were not computed (no partial result is returned). Last "
            f"error: {engine.lost(e)}. {how}: check the workers' memory and logs, or pass a "
            f"smaller chunk_size= or a larger retries=",
            missing=missing) from e
    return blocks


def _failed(problem, runner, kind, mode, what, span, total, failure):
    start, count = span
    err = DistributedSweepError(
        f"jacobians.{problem.api}({problem.name}): {problem.name} raised "
        f"{failure.type_name}: {failure.message} on a worker of the {runner.name}, while "
        f"{failure.stage}, in the {_sweep_name(kind, mode)}'s task for {what} "
        f"{start}..{start + count - 1} of {total}.\nWorker traceback:\n{failure.text}",
        missing=[span], worker_traceback=failure.text)
    err.__cause__ = failure.exc
    return err


def _payload(problem, runner):
    """What every task needs, once: the tuple itself on threads, else its bytes and digest."""
    argnums = problem.nums[0] if problem.single else problem.nums
    payload = (problem.api, problem.f, tuple(problem.args), argnums)
    if runner.kind == "threads":
        return payload, None
    try:
        data, digest, _ = _shipping.dumps(payload)
    except Exception as e:
        name, how = problem.name, _shipping.serializer()[1]
        extra = "" if how == "cloudpickle" else \
            (", install cloudpickle (pip install \"dualad[distributed]\") to ship lambdas "
             "and closures")
        raise TypeError(
            f"jacobians.{problem.api}({name}): {name} and its arguments cannot be shipped to "
            f"the workers of the {runner.name}: {how} failed with {type(e).__name__}: {e}. "
            f"Define {name} at module level (the workers import it by name), keep what it "
            f"closes over picklable (no open files, locks or connections){extra}, or use a "
            f"concurrent.futures.ThreadPoolExecutor (nothing is serialized)") from e
    return data, digest
