"""Traces and boxes: the one mechanism every mode shares (primitives: :mod:`dualad.primitive`).

A *trace* is one active transformation (a forward sweep, a recorded tape).
Each has an integer ``level``; nesting a transformation inside another gives
the inner one a higher level. A *box* is a traced value: it belongs to exactly
one trace and wraps a value of the level below (which may itself be a box).

Calling a :class:`Primitive` finds the highest-level trace among its
arguments and lets that trace interpret the call. The trace unboxes only its
own boxes, calls the primitive again on what is left (so lower levels see the
call too), then applies the primitive's rule. Because every level is kept
apart by its trace, perturbations of nested forward sweeps never mix
("perturbation confusion"), and because rules are themselves written with
primitives, every rule is differentiable at the level above.
"""
from __future__ import annotations

import itertools
import threading

import math

import numpy as np

__all__ = [
    "new_level", "ANOMALY", "EscapedTracerError", "Trace", "Box", "PLAIN_TYPES",
    "primal_value", "unguarded_value", "staged_only", "note_decision", "CONCRETE",
    "concrete", "truth", "shape_of", "ndim_of"
]

_levels = itertools.count(1)
_local = threading.local()


def new_level() -> int:
    """A fresh trace level, higher than every level handed out before."""
    return next(_levels)


# Anomaly mode (see dualad.anomaly): a count of active detect_anomaly contexts.
ANOMALY = [0]


class EscapedTracerError(RuntimeError):
    """A traced value was used after the transformation that made it had returned."""


class Trace:
    """One active transformation; subclasses define :meth:`process`.

    ``alive`` turns False when the transformation returns (:meth:`stop`); a box of
    a dead trace that is used again, by any path (operators, NumPy functions,
    indexing), raises :class:`EscapedTracerError` instead of silently recording on
    a tape nobody will sweep. ``decisions``, None unless a caller sets it (the
    sparse Jacobians' pattern check), is a log whose ``note(name, value)`` receives
    every value-dependent result the function computes from this trace's values
    (zero-derivative primitives, ``bool()``, index functions such as argmax): see
    :func:`note_decision`.
    """

    __slots__ = ("level", "alive", "decisions")

    def __init__(self, level: int | None = None):
        self.level = new_level() if level is None else level
        self.alive = True
        self.decisions = None

    def stop(self):
        """Mark the trace dead: its transformation has returned. (A trace that keeps a
        tape also hands it over here, see :meth:`dualad.tape.VJPTrace.stop`.)"""
        self.alive = False

    def escaped(self, prim, args):
        shapes = ", ".join(str(shape_of(a)) for a in args if isinstance(a, Box))
        return EscapedTracerError(
            f"a traced value (shape {shapes}) escaped the dualad transformation that created "
            f"it (jvp/vjp/grad at level {self.level}) and was used afterwards in primitive "
            f"'{prim.name}'. Its derivative can no longer be computed: return it from the "
            f"differentiated function instead of storing it (e.g. in a list or global), or "
            f"store dualad.tracer.primal_value(x)")

    def process(self, prim, args, params):  # pragma: no cover - abstract
        """Interpret ``prim(*args, **params)``, ``args`` holding boxes of this trace (and
        maybe of lower ones): the one route by which every primitive call reaches a
        trace (:meth:`Primitive.__call__`). A dead trace raises (:meth:`escaped`)."""
        raise NotImplementedError


class Box:
    """Base class of traced values (``Dual``, ``Var``).

    Operators and the NumPy protocols (``__array_ufunc__``,
    ``__array_function__``) are attached in :mod:`dualad.dispatch`.
    """

    __slots__ = ("_trace",)
    __array_priority__ = 100.0

    # Filled in by subclasses: the value one level down.
    @property
    def _inner(self):  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def shape(self):
        return np.shape(self._inner) if not isinstance(self._inner, Box) else self._inner.shape

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return math.prod(self.shape)

    @property
    def dtype(self):
        inner = self._inner
        return inner.dtype if isinstance(inner, Box) else np.result_type(inner)

    def __len__(self):
        shape = self.shape
        if not shape:
            raise TypeError("len() of a traced 0-d value")
        return shape[0]


# Types that are never boxes. A failing ``isinstance(x, Box)`` looks ``x.__class__`` up (a
# few hundred machine instructions on a NumPy scalar), so the hot paths of scalar code test
# ``type(x) in PLAIN_TYPES`` first and use isinstance only for what is left.
PLAIN_TYPES = frozenset({float, int, bool, complex, np.float64, np.float32, np.complex128,
                         np.complex64, np.ndarray})


def primal_value(x):
    """Strip every box: the plain NumPy value underneath all traces."""
    while isinstance(x, Box):
        x = x._inner
    return x


def unguarded_value(x):
    """The plain value under every box of ``x``, for reading its dtype, shape or type
    ONLY: unlike :func:`primal_value` it records no guard on a dualad.jit trace, so a
    result computed from the value itself would be baked into the recorded program."""
    while isinstance(x, Box):
        x = x.val if x.__class__ in CONCRETE else x._inner
    return x


def staged_only(x):
    """Whether ``x`` is traced by dualad.jit traces only (no derivative or batch level):
    a non-differentiable argument (an index, a count) may then be read, with a guard,
    where a value some transformation differentiates or batches must raise."""
    if not isinstance(x, Box):
        return False
    while isinstance(x, Box):
        if x.__class__ not in CONCRETE:
            return False
        x = x.val
    return True


def note_decision(x, name, value):
    """Log ``value``, computed by ``name`` from the values of ``x`` (a box, or a list or
    tuple holding some), on every trace under ``x`` that keeps a decision log."""
    if type(x) is list or type(x) is tuple:
        for v in x:
            note_decision(v, name, value)
        return
    while isinstance(x, Box):
        log = x._trace.decisions
        if log is not None:
            log.note(name, value)
        if x.__class__ in CONCRETE:   # a jit trace's box: the lowest, and reading it guards
            return
        x = x._inner


# Box classes whose ``concrete(kind)`` gives ``bool()``/``int()`` of their value and records
# that the caller relied on it (dualad.jit's JitBox: a guard of the recorded program).
CONCRETE = set()


def concrete(x, kind):
    """``bool()`` (``kind="bool"``) or ``int()`` (``"int"``) of the primal under every box
    of ``x``; a box in :data:`CONCRETE` on the way answers itself (a jit trace guards the
    fact rather than the whole value)."""
    while isinstance(x, Box):
        if x.__class__ in CONCRETE:
            return x.concrete(kind)
        x = x._inner
    return bool(x) if kind == "bool" else int(x)


def truth(box):
    """``bool()`` of a traced value: the truth of its primal (a logged decision)."""
    value = concrete(box, "bool")
    note_decision(box, "bool", value)
    return value


def shape_of(x) -> tuple:
    """The shape of an array, a box, a NumPy scalar (``()``) or a Python number."""
    s = getattr(x, "shape", None)
    if s is None:
        return () if type(x) in (float, int, bool, complex) else np.shape(x)
    return s


def ndim_of(x) -> int:
    return len(shape_of(x))
