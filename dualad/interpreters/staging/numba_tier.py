"""Tiered compilation for ``jit(f, backend="numba")``: NumPy now, Numba when it is ready.

Numba compiles a whole program in seconds to minutes, while the NumPy backend's program
(:func:`dualad.interpreters.staging.loops.compile_rolled`) is ready at once. So a program of the Numba
backend starts as the NumPy backend's, ``"pending"``, and :func:`submit` queues its
Numba compilation on ONE background thread per process (a daemon, started at the first
job, started again in a forked child). The job, for the first call's operand types:

1. writes the whole program for Numba and compiles it
   (:class:`dualad.interpreters.staging.numba_mode.NumbaReplay`: the same code ``compile="now"`` runs on
   the calling thread);
2. runs it once on copies of the first call's inputs and compares with copies of the
   traced call's outputs; a program it cannot write, a Numba error or a disagreement
   ends in the same fallback as ``compile="now"`` (the fused kernels, warmed here too,
   or the rolled NumPy program), with the reason at the top of ``source()``;
3. only then swaps the replay (``compiled.fn``, ``compiled.source``: attribute
   assignments, so a call in flight ends on the replay it started with).

Jobs run one at a time, in order. The queue holds weak references: a program dropped
from its cache (``clear_cache``, a garbage-collected jitted function, ``max_traces``)
is not kept alive and its job is skipped, as is a job :func:`cancel` ended. After
interpreter exit begins (an ``atexit`` flag) no job starts. Nothing else process-wide is
touched: no Numba configuration, no signal handler, no NumPy state (``np.errstate``
is per thread).
"""
from __future__ import annotations

import atexit
import collections
import os
import threading
import weakref

import numpy as np

__all__ = ["PENDING", "MODES", "submit", "cancel", "swap", "tier_of"]

PENDING = "# numba: pending (the NumPy backend's program runs until numba has compiled " \
          "the whole program on the background thread)\n"

MODES = {"whole": "numba", "kernels": "kernels", "rolled": "numpy"}


class _Queue:
    """The process's job queue and its worker thread (made again after a fork)."""

    def __init__(self, jobs=()):
        self.pid = os.getpid()
        self.cond = threading.Condition(threading.Lock())
        self.jobs = collections.deque(jobs)
        self.thread = None
        self.current = None


_queue = None
_stopping = False
_queue_made = []                # [the atexit handler] once a worker was started
_LOCK = threading.Lock()        # guards making _queue (not held while compiling)
_TIER = threading.Lock()        # a pending program's end: swapped or cancelled, once


def _stop():
    """Interpreter exit: take no more jobs (the daemon thread is not waited for)."""
    global _stopping
    _stopping = True
    q = _queue
    if q is not None and q.pid == os.getpid():
        with q.cond:
            queued = list(q.jobs)
            q.jobs.clear()
            q.cond.notify_all()
        for ref in queued:      # (a wait_compiled() in a later atexit handler returns)
            compiled = ref()
            if compiled is not None:
                cancel(compiled, "not compiled: the interpreter is exiting")


def _the_queue():
    """The queue of this process, its worker started. In a forked child (no worker thread
    there) a new one, holding the parent's queued and in-flight jobs: their programs
    were copied into the child and their waiters wait for them."""
    global _queue
    q = _queue
    if q is None or q.pid != os.getpid():
        with _LOCK:
            q = _queue
            if q is None or q.pid != os.getpid():
                old = () if q is None else [r for r in (q.current, *q.jobs) if r is not None]
                q = _Queue(old)   # (the parent's lock may be held: read without it)
                _queue = q
    if q.thread is None:
        with q.cond:
            if q.thread is None:
                if not _queue_made:
                    _queue_made.append(atexit.register(_stop))
                q.thread = threading.Thread(target=_work, args=(q,), daemon=True,
                                            name="dualad.jit numba compiler")
                q.thread.start()
    return q


def _work(q):
    while True:
        with q.cond:
            while not q.jobs and not _stopping:
                q.cond.wait()
            if _stopping:
                return
            ref = q.current = q.jobs.popleft()
        compiled = ref()
        try:
            if compiled is not None and compiled.tier == "pending":
                _compile(compiled)
        except BaseException as exc:  # noqa: BLE001 - never kill the worker nor leave a
            cancel(compiled, f"numba could not compile it: {type(exc).__name__}")  # waiter
        finally:
            q.current = None
            del compiled


def _copy(x):
    """A copy of an operand with the type Numba sees (layout and writeable kept)."""
    if not isinstance(x, np.ndarray):
        return x
    if x.flags.c_contiguous:
        y = np.array(x, order="C", copy=True)
    elif x.flags.f_contiguous:
        y = np.array(x, order="F", copy=True)
    else:                 # strided: a strided copy, so Numba compiles for layout 'A'
        y = np.empty(x.shape + (2,), x.dtype)[..., 0]
        y[...] = x
    if not x.flags.writeable:
        y.flags.writeable = False
    return y


def submit(compiled, inputs, expected):
    """Queue the Numba compilation of ``compiled`` (a pending program of the Numba backend)
    for these ``inputs``, checked against ``expected`` (the traced call's output leaves).
    Both are copied now: the caller may write into its arrays later."""
    compiled.job = ([_copy(x) for x in inputs],
                    None if expected is None else [_copy(y) for y in expected])
    if _stopping:
        cancel(compiled, "not compiled: the interpreter is exiting")
        return
    q = _the_queue()
    with q.cond:
        q.jobs.append(weakref.ref(compiled))
        q.cond.notify()


def _compile(compiled):
    from .numba_mode import NumbaReplay   # (imports numba: only on the worker)
    inputs, expected = compiled.job
    try:
        replay = NumbaReplay(compiled.program, (compiled.fn, compiled.source[len(PENDING):]))
        fn, source = replay.first_call(inputs, expected)
        if replay.mode == "kernels":    # the kernels compile now, not at a user's call
            try:
                with np.errstate(all="ignore"):
                    fn(*inputs)
            except Exception:  # noqa: BLE001, S110 - a user's call raises it from f's line
                pass
    except Exception as exc:  # noqa: BLE001 - anything else: the NumPy program stays
        cancel(compiled, f"numba could not compile it: {type(exc).__name__}: " +
               " ".join(str(exc).split())[:300])
        return
    with _TIER:
        if compiled.tier == "pending":      # (not cancelled meanwhile)
            compiled.numba = replay
            swap(compiled, fn, source, MODES[replay.mode])


def swap(compiled, fn, source, tier):
    """From now on ``compiled`` replays ``fn`` (also under transformations)."""
    compiled.source = source
    compiled.fn = fn
    t = compiled.transformed
    if t:
        t.fn = fn
    compiled.tier = tier
    compiled.job = None
    if compiled.done is not None:
        compiled.done.set()


def cancel(compiled, reason):
    """End a pending program's Numba job (skipped if queued): it keeps the NumPy program."""
    with _TIER:
        if compiled.tier != "pending":
            return
        compiled.source = f"# numba: numpy ({reason})\n" + compiled.source[len(PENDING):]
        compiled.reason = reason
        compiled.tier = "numpy"
        compiled.job = None
    compiled.done.set()


def tier_of(compiled):
    """What replays ``compiled`` now: "numpy" (the NumPy backend), "pending" (NumPy until
    Numba is ready), "numba" (the whole program compiled), or "kernels: <why>" / "numpy:
    <why>" (the Numba backend's fallbacks, and why the whole program is not compiled)."""
    tier = compiled.tier
    if tier is None or tier in ("pending", "numba"):
        return tier or "numpy"
    reason = compiled.numba.reason if compiled.numba is not None else compiled.reason
    return f"{tier}: {reason}"
