"""``progress=``: a sign of life from the planner's long sweeps.

A dense or compressed Jacobian (or Hessian) is swept in chunks of directions
(:mod:`jacobians.sweeps`, :mod:`jacobians.hessian_sweeps`, :mod:`jacobians.distributed`).
With ``progress=`` each sweep reports after every chunk it has finished:

- ``progress=None`` or ``False`` (the default): nothing; the sweeps do not look at it
  again (one ``is None`` test per sweep).
- ``progress=True``: a ``tqdm`` bar on stderr when tqdm is installed
  (``pip install "dualad[progress]"``); without tqdm, one line of text on stderr
  rewritten in place (``\\r``) and ended with a newline when the sweep ends. Progress is
  a convenience, so a missing tqdm never fails the call.
- ``progress=callable``: ``callable(record)`` after each chunk, ``record`` a
  :class:`ProgressRecord` ``(sweep, done, total, elapsed, remaining)``. Called on the
  calling thread, also under ``executor=`` (the lead process collects the finished tasks,
  Dask's included, and reports each there), never concurrently. What the callable
  raises stops the sweep and propagates unchanged (tasks not yet finished are cancelled);
  its return value is ignored.

One call can run several sweeps (a reverse sweep, then the Hessian's rows; a sparse
call's compressed sweep after its detection), each reported on its own: ``record.sweep``
names it, and ``done`` counts from 1 to ``total`` within it.

The estimate: with ``d`` of ``D`` directions done after ``t`` seconds,
``remaining = t (D - d) / d`` (chunks may differ in size, the last one being shorter;
directions do not). It is 0 once the sweep is done and never negative.
"""
from __future__ import annotations

__all__ = ["ProgressRecord", "check_progress", "tracker"]

import inspect
import sys
import time
from typing import NamedTuple

from ._common import fname


class ProgressRecord(NamedTuple):
    """What a sweep reports after each finished chunk (``progress=callable``).

    ``jacobian``, ``jacfwd``, ``jacrev``, ``hessian``, ``sparse_jacobian`` and
    ``sparse_hessian`` given ``progress=callable`` call it with one record per finished
    chunk of directions, on the calling thread (under ``executor=`` too). A named tuple:
    its fields read by name or unpacked.

    Parameters
    ----------
    sweep : str
        Which sweep: ``"jacobian(f): forward sweep"``, ``"hessian(f):
        forward-over-reverse Hessian sweep"``, ...
    done : int
        Chunks finished, 1 to ``total``; it only grows within one sweep.
    total : int
        Chunks in the sweep.
    elapsed : float
        Seconds since the sweep started.
    remaining : float
        Estimated seconds left, ``elapsed * (D - d) / d`` for ``d`` of ``D`` directions
        done: 0 when the sweep is done, never negative.

    See Also
    --------
    jacobians.jacobian : Its ``progress=`` (docs/logging.md).

    Examples
    --------
    >>> import numpy as np
    >>> from dualad import jacobians
    >>> records = []
    >>> J = jacobians.jacfwd(np.sin, np.zeros(5), chunk_size=2, progress=records.append)
    >>> [(r.done, r.total) for r in records]
    [(1, 3), (2, 3), (3, 3)]
    >>> records[-1].sweep, records[-1].remaining
    ('jacobian(sin): forward sweep', 0.0)
    """

    sweep: str
    done: int
    total: int
    elapsed: float
    remaining: float


def check_progress(api, f, progress):
    """``progress`` as the sweeps read it: None (report nothing), ``True`` (a bar) or a
    callable; anything else is a TypeError naming ``api`` and what to pass."""
    if progress is None or progress is False:
        return None
    if progress is True:
        return progress
    if callable(progress):
        _check_one_argument(api, f, progress)
        return progress
    raise TypeError(
        f"jacobians.{api}({fname(f)}): progress= takes True (a tqdm bar on stderr, or a line "
        f"of text without tqdm), a callable (called with a jacobians.ProgressRecord after "
        f"each chunk), or None/False for nothing; got {type(progress).__name__} "
        f"{progress!r}")


def _check_one_argument(api, f, progress):
    """A callable ``progress`` must take one positional argument (the record): said
    before the sweep, not as a bare TypeError from inside it."""
    try:
        sig = inspect.signature(progress)
    except (TypeError, ValueError):      # no signature to read (some builtins): trust it
        return
    try:
        sig.bind(None)
    except TypeError:
        name = getattr(progress, "__qualname__", type(progress).__name__)
        raise TypeError(
            f"jacobians.{api}({fname(f)}): progress={name} must take one argument, the "
            f"jacobians.ProgressRecord of each chunk; its signature is {sig}. Write e.g. "
            f"progress=lambda record: print(record.done, record.total)") from None


def tracker(problem, sweep, directions, spans, seeds=None, started=None):
    """The reporter of one sweep of ``problem`` over ``directions`` directions in the
    chunks ``spans`` (``(start, count)`` pairs), or None when ``problem.progress`` is
    None (then the sweep reports nothing). ``seeds`` given: a compressed sweep (one
    direction per color of a coloring, or given directions). ``started``: the sweep's
    ``time.perf_counter()`` at its start, when it began before its chunks were known."""
    progress = problem.progress
    if progress is None or not spans:
        return None
    kind = "" if seeds is None or "Hessian" in sweep else "compressed "
    name = f"{problem.api}({problem.name}): {kind}{sweep}"
    show = _Bar(name, len(spans)) if progress is True else progress
    return _Tracker(name, directions, len(spans), show, started)


class _Tracker:
    """Counts finished chunks and directions, and reports each (:func:`tracker`)."""

    __slots__ = ("name", "directions", "total", "show", "t0", "done", "dirs_done")

    def __init__(self, name, directions, total, show, started=None):
        self.name, self.directions, self.total, self.show = name, directions, total, show
        self.t0 = time.perf_counter() if started is None else started
        self.done = self.dirs_done = 0

    def advance(self, count):
        """One more chunk of ``count`` directions finished: report it."""
        self.done += 1
        self.dirs_done += count
        elapsed = time.perf_counter() - self.t0
        left = max(0, self.directions - self.dirs_done)
        remaining = 0.0 if self.done >= self.total or left == 0 else \
            elapsed * left / max(1, self.dirs_done)
        self.show(ProgressRecord(self.name, self.done, self.total, elapsed, remaining))
        if self.done == self.total and type(self.show) is _Bar:
            self.show.close()    # the sweep is done: the bar ends here


class _Bar:
    """``progress=True``: a tqdm bar, or a line of text on stderr without tqdm."""

    def __init__(self, name, total):
        self.name, self.total, self.shown, self.bar = name, total, False, None
        try:
            # tqdm.std, not tqdm.auto: auto's import swaps the process's warning filters
            from tqdm.std import tqdm
        except ImportError:
            self.bar = None
        else:
            self.bar = tqdm(total=total, desc=f"jacobians.{name}", unit="chunk",
                            file=sys.stderr, leave=True)

    def __call__(self, record):
        if self.bar is not None:
            self.bar.update(record.done - self.bar.n)
            return
        sys.stderr.write(f"\rjacobians.{self.name}: {record.done}/{record.total} chunks, "
                         f"{record.elapsed:.1f} s, about {record.remaining:.1f} s left")
        sys.stderr.flush()
        self.shown = True

    def close(self):
        """End the bar (a sweep done, or stopped by an exception: then when this is
        collected); closing twice does nothing."""
        if self.bar is not None:
            self.bar.close()
        elif self.shown:
            sys.stderr.write("\n")
            sys.stderr.flush()
            self.shown = False

    __del__ = close
