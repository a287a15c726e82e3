"""Anomaly mode: find the first primitive that produces NaN or inf.

    with dualad.detect_anomaly():
        dualad.grad(f)(x)

checks every value, tangent and cotangent a primitive produces; the first
non-finite one raises :class:`AnomalyError` naming the primitive, what was
non-finite, and the line of user code that called the primitive (recorded
when the forward sweep ran). Checking costs time; outside the context the hot
path only reads one flag.

The mode belongs to the code that opened the context, not to the process: it
is held in a :class:`contextvars.ContextVar`, so it covers the thread that
entered ``detect_anomaly()`` and the asyncio tasks created inside it (a task
copies the context it was created in; ``threading.local`` would instead leak
the mode to every task of the event loop's thread). Other threads and tasks
compute exactly as without it and never raise :class:`AnomalyError`. A thread
started inside the context begins with a fresh context and is not covered:
open ``detect_anomaly()`` in it.

``tracer.ANOMALY[0]`` stays a process-wide count of open contexts: the sweeps
read it as a cheap pre-test ("some code has anomaly mode on") and only then
call :func:`check` / :func:`remember`, which consult the caller's own state.
While another thread has the mode on, a sweep in this thread takes the
checking path's slower branches but returns the same values.
"""
from __future__ import annotations

import contextlib
import contextvars
import os
import sys
import threading
import traceback
import weakref
from typing import TYPE_CHECKING, Any

import numpy as np

from ...core import tracer
from ...core.tracer import Box, primal_value

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["detect_anomaly", "AnomalyError", "is_active", "check", "remember"]

_STACKS = {}  # id(node) -> (weak reference to node, frames); boxes compare elementwise
_PACKAGE_DIR = os.path.dirname(os.path.abspath(sys.modules["dualad"].__file__))  # the package root
# How many detect_anomaly() contexts the current thread / asyncio task has open.
_DEPTH = contextvars.ContextVar("dualad_detect_anomaly", default=0)
_COUNT_LOCK = threading.Lock()   # `+= 1` on a list item is not atomic across threads


class AnomalyError(FloatingPointError):
    """A primitive produced NaN or inf while anomaly detection was on.

    Raised inside :func:`dualad.detect_anomaly` by the first primitive whose value,
    tangent or cotangent is not finite. The message names the primitive, which of
    its results was non-finite (its value, its tangent, or the cotangent of an
    argument) with the shape, and the lines of user code that called the
    primitive. A subclass of :class:`FloatingPointError`.
    """


@contextlib.contextmanager
def detect_anomaly() -> Iterator[None]:
    """Return a context in which the first NaN or inf a primitive produces raises.

    Inside the context every value, tangent and cotangent a primitive produces is
    checked; the first non-finite one raises :class:`dualad.AnomalyError` naming the
    primitive, what was non-finite, and the line of user code that called the
    primitive (recorded when the forward pass ran, so a NaN born in the backward
    sweep still points at the operation that caused it). Checking costs time;
    outside the context the hot path only reads one flag.

    The mode belongs to the code that opened the context: the current thread and
    the asyncio tasks created inside it. Other threads compute exactly as without
    it; a thread started inside the context is not covered (open the context in
    it).

    Yields
    ------
    None
        ``detect_anomaly()`` is a context manager: use it in a ``with``
        statement.

    Raises
    ------
    AnomalyError
        Inside the context, at the first non-finite value, tangent or cotangent.

    See Also
    --------
    dualad.AnomalyError : The error raised.

    Examples
    --------
    The gradient of :math:`\\sqrt{x}` at 0 is infinite; the anomaly mode says where
    it came from:

    >>> with np.errstate(divide="ignore"), dualad.detect_anomaly():
    ...     dualad.grad(np.sqrt)(0.0)
    Traceback (most recent call last):
        ...
    dualad.interpreters.reverse.anomaly.AnomalyError: detect_anomaly: primitive 'sqrt' produced inf in its cotangent ...
    """
    token = _DEPTH.set(_DEPTH.get() + 1)
    with _COUNT_LOCK:
        tracer.ANOMALY[0] += 1     # the process-wide pre-test the sweeps read
    try:
        yield
    finally:
        with _COUNT_LOCK:
            tracer.ANOMALY[0] -= 1
        _DEPTH.reset(token)


def is_active() -> bool:
    """Whether anomaly mode is on for the caller (its thread or asyncio task)."""
    return _DEPTH.get() > 0


def _user_frames():
    frames = [f for f in traceback.extract_stack()[:-2]
              if not os.path.abspath(f.filename).startswith(_PACKAGE_DIR)]
    return frames[-3:]


def remember(node: object) -> None:
    """Keep the user-code stack that created ``node`` (for reverse-mode reports)."""
    if not _DEPTH.get():
        return   # anomaly mode is on in another thread only
    key = id(node)
    _STACKS[key] = (weakref.ref(node, lambda _, key=key: _STACKS.pop(key, None)), _user_frames())


def check(prim: Any, what: str, value: Any, node: object = None) -> None:
    """Raise :class:`AnomalyError` if ``value`` holds NaN or inf and the caller has
    anomaly mode on (another thread's mode does not apply here)."""
    if value is None or not _DEPTH.get():
        return
    v = primal_value(value)
    try:
        bad = not np.all(np.isfinite(v))
    except TypeError:  # object arrays (symbolic values): nothing to check
        return
    if not bad:
        return
    kind = "nan" if np.any(np.isnan(v)) else "inf"
    entry = _STACKS.get(id(node)) if node is not None else None
    frames = entry[1] if entry is not None and entry[0]() is node else None
    if frames is None:
        frames = _user_frames()
    where = "".join(traceback.format_list(frames)) or "  (no user frame)\n"
    raise AnomalyError(f"detect_anomaly: primitive '{prim.name}' produced {kind} in its {what} "
                       f"(shape {np.shape(v)}). The operation was called from:\n{where}")


_ = Box  # traced values reach check() through primal_value
