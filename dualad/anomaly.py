"""Anomaly mode: find the first primitive that produces NaN or inf.

    with dualad.detect_anomaly():
        dualad.grad(f)(x)

checks every value, tangent and cotangent a primitive produces; the first
non-finite one raises :class:`AnomalyError` naming the primitive, what was
non-finite, and the line of user code that called the primitive (recorded
when the forward sweep ran). Checking costs time; outside the context the hot
path only reads one flag. The mode is process-wide while any context is open.
"""
from __future__ import annotations

import contextlib
import os
import traceback
import weakref

import numpy as np

from . import tracer
from .tracer import Box, primal_value

_STACKS = {}  # id(node) -> (weak reference to node, frames); boxes compare elementwise
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


class AnomalyError(FloatingPointError):
    """A primitive produced NaN or inf while anomaly detection was on."""


@contextlib.contextmanager
def detect_anomaly():
    """Context in which the first NaN/inf value, tangent or cotangent raises."""
    tracer.ANOMALY[0] += 1
    try:
        yield
    finally:
        tracer.ANOMALY[0] -= 1


def _user_frames():
    frames = [f for f in traceback.extract_stack()[:-2]
              if not os.path.abspath(f.filename).startswith(_PACKAGE_DIR)]
    return frames[-3:]


def remember(node):
    """Keep the user-code stack that created ``node`` (for reverse-mode reports)."""
    key = id(node)
    _STACKS[key] = (weakref.ref(node, lambda _, key=key: _STACKS.pop(key, None)), _user_frames())


def check(prim, what, value, node=None):
    if value is None:
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
