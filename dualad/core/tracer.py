"""Traces and boxes: the one mechanism every mode shares (primitives: :mod:`dualad.core.primitive`).

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
    "concrete", "truth", "shape_of", "ndim_of", "PLAIN_TRACE", "primal_tree"
]

_levels = itertools.count(1)
_local = threading.local()


def new_level() -> int:
    """Hand out a fresh trace level, higher than every level handed out before.

    Levels order nested transformations: a primitive call goes to the trace of highest
    level among its arguments (the innermost transformation), which unwraps its own
    boxes and calls the primitive again one level down. Distinct levels keep the
    perturbations of nested forward sweeps apart (no "perturbation confusion").

    Returns
    -------
    int
        The new level (a process-wide counter, starting at 1).

    See Also
    --------
    Trace : Takes ``new_level()`` when no level is given.
    """
    return next(_levels)


# Anomaly mode (see dualad.interpreters.reverse.anomaly): a count of active detect_anomaly contexts.
ANOMALY = [0]


class EscapedTracerError(RuntimeError):
    """A traced value was used after the transformation that made it had returned.

    Inside ``grad``, ``jvp``, ``vjp``, ``vmap`` or ``jit`` the arguments are traced
    values that record what is computed from them. One stored outside the
    transformation (appended to a list, assigned to a global or an attribute) and
    used after the transformation returned would record on a tape nobody will
    sweep and silently lose its derivative, so any use of it raises this error,
    naming the primitive, the value's shape and the transformation. Return the
    value from the transformed function instead, or store its plain value
    (``dualad.extend.primal_value(x)``). A subclass of :class:`RuntimeError`.
    """


class Trace:
    """One active transformation: the interpreter of the primitive calls on its boxes.

    A trace is one transformation in progress (a forward sweep pushing tangents, a tape
    recording for the reverse sweep, a vmap batch). Its boxes are the traced values it
    made; a primitive call whose highest-level box belongs to this trace reaches
    :meth:`process`, which unwraps this trace's boxes, computes the primal one level
    down (calling the primitive again, so outer transformations see the call) and
    returns the output boxed. Subclasses define :meth:`process`.

    Parameters
    ----------
    level : int, optional
        The trace's level (default: :func:`new_level`, above every existing one).

    Attributes
    ----------
    level : int
        The trace's level among nested transformations.
    alive : bool
        True until the transformation returns (:meth:`stop`). A box of a dead trace
        that is used again, by any path (operators, NumPy functions, indexing), raises
        :class:`EscapedTracerError` instead of silently recording on a tape nobody will
        sweep.
    decisions : object or None
        None unless a caller sets it (the sparse Jacobians' pattern check): a log whose
        ``note(name, value)`` receives every value-dependent result the function
        computes from this trace's values (zero-derivative primitives, ``bool()``,
        index functions such as argmax); see :func:`note_decision`.

    See Also
    --------
    Box : The traced values of a trace.
    JVPTrace, VJPTrace, BatchTrace : The forward, reverse and batching interpreters.
    """

    __slots__ = ("level", "alive", "decisions")

    def __init__(self, level: int | None = None):
        self.level = new_level() if level is None else level
        self.alive = True
        self.decisions = None

    def stop(self):
        """Mark the trace dead: its transformation has returned.

        Its boxes used afterwards raise :class:`EscapedTracerError`. (A trace that keeps
        a tape also hands it over here, see :meth:`VJPTrace.stop`.)

        Returns
        -------
        None
            Nothing; ``alive`` becomes False.
        """
        self.alive = False

    def escaped(self, prim, args):
        """Build the error for a call of ``prim`` on a box of this trace after it died.

        Parameters
        ----------
        prim : Primitive
            The primitive called on the escaped value.
        args : tuple
            The call's positional arguments (the boxes' shapes go in the message).

        Returns
        -------
        EscapedTracerError
            The error to raise, naming the primitive, the shapes and the level, and
            saying what to write instead.
        """
        shapes = ", ".join(str(shape_of(a)) for a in args if isinstance(a, Box))
        return EscapedTracerError(
            f"a traced value (shape {shapes}) escaped the dualad transformation that created "
            f"it (jvp/vjp/grad at level {self.level}) and was used afterwards in primitive "
            f"'{prim.name}'. Its derivative can no longer be computed: return it from the "
            f"differentiated function instead of storing it (e.g. in a list or global), or "
            f"store dualad.extend.primal_value(x)")

    def process(self, prim, args, params):  # pragma: no cover - abstract
        """Interpret ``prim(*args, **params)`` on this trace's boxes.

        The one route by which every primitive call reaches a trace (``Primitive``'s
        ``__call__``). An implementation unwraps its own boxes, calls ``prim`` on the
        values one level down (so outer transformations see the call) and applies the
        primitive's rule; a dead trace raises (:meth:`escaped`).

        Parameters
        ----------
        prim : Primitive
            The primitive called.
        args : tuple
            Its positional arguments: boxes of this trace (and maybe of lower ones) and
            plain values.
        params : dict
            Its keyword parameters (not differentiable).

        Returns
        -------
        object
            The output: a box of this trace (or a tuple of them) holding the primal one
            level down.
        """
        raise NotImplementedError

    # --- the interpreter query (dualad.core.values): defaults, for a trace that does
    # not batch. A batching trace (vmap) overrides both; the bottom of every value, a
    # plain value, is answered by PLAIN_TRACE, a Trace with these defaults.

    def per_example(self, fn, name, args, kwargs):
        """Call a function of plain values for this trace's examples: here, once.

        The default, a trace that does not batch (and :data:`PLAIN_TRACE`, which answers
        for plain values): ``fn`` of the plain values of ``args`` and ``kwargs`` (lists,
        tuples and dicts inside them included), its result logged as a decision
        (:func:`note_decision`). A batching trace overrides it to call ``fn`` once per
        example. Asked by :func:`dualad.core.values.per_example`.

        Parameters
        ----------
        fn : callable
            A function of plain values.
        name : str
            The name messages and the decision log use.
        args : sequence
            Its positional arguments, traced or plain.
        kwargs : dict
            Its keyword arguments, traced or plain.

        Returns
        -------
        object
            ``fn``'s result.
        """
        out = fn(*primal_tree(args), **primal_tree(kwargs))
        note_decision(args, name, out)   # a decision on the values: logged
        return out

    def looped_call(self, fn, args, kwargs):
        """Call a differentiable function for this trace's examples: here, once.

        The default, a trace that does not batch: ``fn(*args, **kwargs)``. A batching
        trace overrides it to call ``fn`` on each example and stack the results. Asked by
        :func:`dualad.core.values.looped_call`.

        Parameters
        ----------
        fn : callable
            A function written with registry operations.
        args : sequence
            Its positional arguments.
        kwargs : dict
            Its keyword arguments.

        Returns
        -------
        object
            ``fn``'s result.
        """
        return fn(*args, **kwargs)


class Box:
    """Base class of traced values (``Dual``, ``Var``, ``BatchTracer``, ...).

    A box belongs to exactly one trace (stored in ``_trace``) and wraps the value one
    level down (``_inner``: a plain array, or a box of a lower trace). Operators and the
    NumPy protocols (``__array_ufunc__``, ``__array_function__``) are attached to every
    Box subclass in ``dualad.frontend.dispatch``, so plain NumPy calls on a box reach the
    registry's primitives; ``shape``, ``ndim``, ``size`` and ``dtype`` are those of the
    primal.

    See Also
    --------
    PrimalBox : A Box that stores its trace and its primal.
    Trace : The transformation a box belongs to.
    primal_value : Strip every box.
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

    # --- the interpreter query (dualad.core.values asks these; rules ask it). The
    # defaults are a differentiating trace's box (forward, reverse): it adds no batch
    # axis and no staging, so it answers what the value one level down answers, without
    # its own derivative. The batching box (vmap) and the staging box (jit) override.

    def _batch_trace(self):
        """The batching trace whose batch this value carries (the highest in its chain
        of boxes), or None."""
        inner = self._inner
        return inner._batch_trace() if isinstance(inner, Box) else None

    def _staged(self) -> bool:
        """Whether a staging trace (dualad.jit) records this value."""
        inner = self._inner
        return inner._staged() if isinstance(inner, Box) else False

    def _replays_programs(self) -> bool:
        """Whether a jitted program called on this value replays its primitives
        (:func:`dualad.core.values.replays_programs`)."""
        inner = self._inner
        return inner._replays_programs() if isinstance(inner, Box) else False

    def _map_value(self, fn):
        """``fn`` of the plain value, this box's derivative dropped."""
        inner = self._inner
        return inner._map_value(fn) if isinstance(inner, Box) else fn(inner)

    def _staged_value(self):
        """The value without derivative boxes, a staging box kept."""
        inner = self._inner
        return inner._staged_value() if isinstance(inner, Box) else inner


# Types that are never boxes. A failing ``isinstance(x, Box)`` looks ``x.__class__`` up (a
# few hundred machine instructions on a NumPy scalar), so the hot paths of scalar code test
# ``type(x) in PLAIN_TYPES`` first and use isinstance only for what is left.
PLAIN_TYPES = frozenset({float, int, bool, complex, np.float64, np.float32, np.complex128,
                         np.complex64, np.ndarray})


def primal_value(x):
    """Strip every box: the plain NumPy value underneath all traces.

    The primal value without any derivative information (no tangent, no place on a
    tape); reading it inside ``dualad.jit`` records a guard on the value.

    Parameters
    ----------
    x : object
        A traced value (of any depth of nesting) or a plain value.

    Returns
    -------
    object
        The value under every box (``x`` itself when it is not a box).

    See Also
    --------
    unguarded_value : The same without a jit guard, for dtypes and shapes.
    nondiff_value : Keeps a vmap batch axis.

    Examples
    --------
    >>> from dualad.extend import primal_value
    >>> def f(x):
    ...     print(type(x).__name__, primal_value(x))
    ...     return x * x
    >>> _ = dualad.grad(f)(3.0)
    Var 3.0
    """
    while isinstance(x, Box):
        x = x._inner
    return x


def primal_tree(x):
    """``x`` with every traced value, also inside (nested) lists, tuples and dicts,
    replaced by its primal value."""
    if isinstance(x, Box):
        return primal_value(x)
    if type(x) is list or type(x) is tuple:
        return type(x)(primal_tree(v) for v in x)
    if type(x) is dict:
        return {k: primal_tree(v) for k, v in x.items()}
    return x


# The trace that answers the query for plain values (no box: one example, no staging).
PLAIN_TRACE = Trace(level=0)


def unguarded_value(x):
    """Return the plain value under every box of ``x``, without a ``dualad.jit`` guard.

    For reads that decide no result: a dtype, a shape, a type, a planner's census and
    cost model. Unlike :func:`primal_value` it records no guard on a ``dualad.jit``
    trace, so a result computed from the value itself would be baked into the recorded
    program (wrong on the next call with other values).

    Parameters
    ----------
    x : object
        A traced or plain value.

    Returns
    -------
    object
        The value under every box.

    See Also
    --------
    primal_value : The guarded read, for values a result depends on.
    """
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
    """Log a value-dependent result on every trace under ``x`` that keeps a decision log.

    Results that depend on primal values but have no derivative (a comparison, an
    argmax, ``bool()``) decide which branch the function takes. The sparse planner
    detects a Jacobian's pattern once and reuses it while these decisions stay the
    same: it re-detects when they change. Call this from a primitive or function whose
    result is such a decision.

    Parameters
    ----------
    x : Box or list or tuple
        The traced value the result was computed from (or a list or tuple holding
        some); plain values are ignored.
    name : str
        What computed it (``"argmax"``, ``"bool"``).
    value : object
        The result.

    Returns
    -------
    None
        Nothing: the value goes to each log's ``note(name, value)``.

    See Also
    --------
    Trace : Its ``decisions`` attribute is the log.
    """
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
    """Return the shape of an array, a box, a NumPy scalar or a Python number.

    A box's shape is its primal's (for a vmap ``BatchTracer``, the per-example shape);
    rules use it to unbroadcast cotangents and to count a tangent's batch axes.

    Parameters
    ----------
    x : object
        An array, a traced value, a NumPy scalar, a Python number, or anything
        ``np.shape`` accepts.

    Returns
    -------
    tuple of int
        The shape (``()`` for a scalar).

    Examples
    --------
    >>> from dualad.extend import shape_of
    >>> shape_of(np.ones((2, 3))), shape_of(1.5)
    ((2, 3), ())
    """
    s = getattr(x, "shape", None)
    if s is None:
        return () if type(x) in (float, int, bool, complex) else np.shape(x)
    return s


def ndim_of(x) -> int:
    """Return the number of axes of an array, a box, a NumPy scalar or a Python number.

    The length of :func:`shape_of`; a rule compares it with its primal's to find the
    leading batch axes of a tangent or cotangent.

    Parameters
    ----------
    x : object
        An array, a traced value, a NumPy scalar or a Python number.

    Returns
    -------
    int
        ``len(shape_of(x))``.

    Examples
    --------
    >>> from dualad.extend import ndim_of
    >>> ndim_of(np.ones((2, 3))), ndim_of(1.5)
    (2, 0)
    """
    return len(shape_of(x))
