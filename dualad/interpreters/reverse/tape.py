"""Reverse mode, recording: the tape of :class:`Var` nodes.

Every primitive applied to a :class:`Var` records a node: the primitive, its
arguments (boxed, so the sweep can re-run rules on the tape itself when
``create_graph`` is asked for), its parameters and its value. There is one way
to record: :meth:`Primitive.__call__ <dualad.core.primitive.Primitive.__call__>` finds
the top trace, whose :meth:`VJPTrace.process` unboxes the arguments and hands
them to :func:`record`, the one function that checks the trace is alive,
computes the value, logs zero-derivative decisions, compacts the tape and
makes the node. (Var's arithmetic operators enter :func:`record` directly for
scalar code, see :func:`operator_method`.) The sweep lives in
:mod:`dualad.interpreters.reverse.sweep`.
"""
from __future__ import annotations

import itertools
import operator

import numpy as np

from . import compaction
from .anomaly import check as check_anomaly, remember
from ..staging.sharing import shared_node
from ...core.tracer import ANOMALY, PLAIN_TYPES, Box, Trace, shape_of

__all__ = ["Var", "VJPTrace", "record", "operator_method", "power_method"]

_next_seq = itertools.count().__next__


class Var(Box):
    """A reverse-mode traced value, and its own node on the tape.

    Every primitive applied to a Var records a new Var: the node holds the operation
    that made it, so the backward sweep can pull the output's cotangent back to the
    arguments through the primitive's VJP rules (its pullback). Made by
    :meth:`VJPTrace.new_leaf` (a leaf) and by recording, rarely by hand.

    Parameters
    ----------
    trace : VJPTrace
        The trace (tape) the node belongs to.
    value : object
        The primal one level down.
    prim : Primitive, optional
        The primitive that made the node; ``None`` for a leaf (an input).
    args : tuple, optional
        The primitive's arguments as called (boxed): what ``create_graph`` re-runs the
        rules on.
    params : dict, optional
        The primitive's keyword parameters.
    vals : list, optional
        The arguments one level down: what the rules normally see.
    parents : sequence of int, optional
        The positions in ``args`` of the arguments that are Vars of the same trace.

    Attributes
    ----------
    value, prim, args, params, vals, parents : object
        As given.
    seq : int
        Creation order: a node's parents were made before it.

    See Also
    --------
    VJPTrace : The trace that records Vars.
    backward_sweep : Pulls cotangents back through them.

    Examples
    --------
    >>> from dualad.extend import VJPTrace
    >>> trace = VJPTrace()
    >>> x = trace.new_leaf(3.0)
    >>> y = x * x
    >>> y
    Var(value=9.0)
    >>> y.prim.name, list(y.parents)
    ('multiply', [0, 1])
    >>> trace.stop()
    """

    __slots__ = ("value", "prim", "args", "params", "vals", "parents", "seq", "items",
                 "__weakref__")

    def __init__(self, trace, value, prim=None, args=None, params=None, vals=None,
                 parents=()):
        self._trace = trace
        self.value = value
        self.prim = prim
        self.args = args          # as called (boxed): what create_graph re-runs rules on
        self.params = params
        self.vals = vals          # the arguments one level down: what rules normally see
        self.parents = parents    # positions of the arguments that are Vars of this tape
        self.seq = _next_seq()    # creation order: a node's parents were made before it
        # ``items``, {i: x[i]} for integer indexing, starts unset (see dispatch._getitem).
        # (record sets these same slots without calling __init__: keep in step; on a
        # trace that keeps a tape it leaves ``seq`` unset, the tape being the order.)

    @property
    def _inner(self):
        return self.value

    @property
    def shape(self):
        return shape_of(self.value)

    def __repr__(self):
        return f"Var(value={self.value!r})"


class VJPTrace(Trace):
    """The reverse interpreter: records primitives applied to its :class:`Var` boxes on a tape.

    Each primitive call on this trace's Vars computes the primal one level down and
    records a node (the primitive, its arguments, its parameters, its value);
    :func:`backward_sweep` then pulls cotangents back from the seeds through the
    recorded VJP rules. Subclass it (``dualad.teaching.opcount`` does) to count or log
    what is recorded.

    Parameters
    ----------
    level : int, optional
        The trace's level (default: a fresh one, :func:`new_level`).
    box_type : callable, optional
        Makes the nodes: :class:`Var`, a subclass of it, or a function returning one,
        called like Var.
    tape : bool, optional
        Also keep the nodes in a list in creation order (``self.tape``), which the
        backward sweep walks from the end instead of ordering the nodes it reaches on
        a heap. A trace that lives for one transformation (``grad``, ``vjp``) uses it,
        and :meth:`stop` hands the list over; a long-lived trace (the imperative API's)
        does not, so nothing outlives the graph that uses it.

    See Also
    --------
    Var : The tape's nodes.
    backward_sweep : The reverse sweep over the tape.
    JVPTrace : The forward interpreter.

    Examples
    --------
    A gradient by hand: a leaf, the recorded function, the sweep from the seed 1.0.

    >>> from dualad.extend import VJPTrace, backward_sweep
    >>> trace = VJPTrace(tape=True)
    >>> x = trace.new_leaf(np.array([1.0, 2.0]))
    >>> y = np.sum(x * x)
    >>> tape = trace.stop()
    >>> cotangents = backward_sweep([(y, 1.0)], trace=trace, tape=tape)
    >>> print(cotangents[x])
    [2. 4.]
    """

    __slots__ = ("box_type", "tape", "room", "schedule", "indexed", "constants", "shared")

    def __init__(self, level=None, box_type=Var, tape=False):
        super().__init__(level)
        self.box_type = box_type
        self.tape = [] if tape else None
        # Array bytes still to record before the tape is compacted (see dualad.interpreters.reverse.compaction):
        # counted only where a recorded value is an array, never on scalar code's path.
        self.room = compaction.MIN_BYTES
        self.schedule = compaction.Schedule() if tape else None   # which suffix a pass scans
        # The Vars whose ``items`` cache (x[i] -> node, dispatch._getitem) :meth:`stop` clears:
        # x.items -> x[i] -> x is a reference cycle, which would leave a tape that is not
        # swept to the end (an exception in f, a vjp pullback dropped) to the collector.
        self.indexed = [] if tape else None
        # The array constants recorded, kept to catch their in-place change before the
        # sweep (dualad.interpreters.reverse.versions.Constants): set by grad and vjp, None otherwise.
        self.constants = None
        # {key: node} when the values recorded are a jit trace's, whose repeated
        # computations are recorded once (dualad.interpreters.staging.sharing); None otherwise.
        self.shared = None

    def process(self, prim, args, params):
        """Compute ``prim``'s primal and record the call as a node of the tape.

        Parameters
        ----------
        prim : Primitive
            The primitive called.
        args : tuple
            Its positional arguments (Vars of this trace, lower boxes, plain values).
        params : dict
            Its keyword parameters.

        Returns
        -------
        Var or object
            The new node (or a tuple of them, for a primitive with several outputs); a
            zero-derivative primitive's plain result.

        Raises
        ------
        EscapedTracerError
            If the trace has stopped.
        """
        vals = []
        parents = []
        lower = False
        i = 0
        constants = self.constants
        for a in args:
            if type(a) not in PLAIN_TYPES:
                if isinstance(a, Var) and a._trace is self:
                    parents.append(i)
                    a = a.value
                if type(a) not in PLAIN_TYPES and isinstance(a, Box):
                    lower = True
            elif a.__class__ is _NDARRAY and constants is not None:
                constants.note(a, prim)      # a plain array operand: a constant
            vals.append(a)
            i += 1
        # Tuples, not lists: the collector stops tracking a tuple of untracked values
        # (arrays, floats) after its first pass, so a long tape holds fewer objects it
        # walks (issue 31: the gen-2 passes over an lstm-sized tape).
        vals = tuple(vals)
        parents = tuple(parents)
        # Only when a lower trace is involved does the call go round dispatch again.
        ans = prim(*vals, **params) if lower else prim.impl(*vals, **params)
        return record(self, prim, args, params, vals, parents, ans)

    def stop(self):
        """Mark the trace dead and hand its tape over to the caller.

        A Var of it used again raises :class:`EscapedTracerError`, and the trace keeps no
        reference to its nodes, so no cycle trace -> tape -> node -> trace outlives the
        transformation; nor does x -> x.items -> x[i] -> x (the x[i] cache is cleared), so
        the nodes are freed by reference counting alone.

        Returns
        -------
        list of Var or None
            The nodes in creation order (for :func:`backward_sweep`'s ``tape=``), or
            ``None`` when the trace keeps no tape.
        """
        self.alive = False
        tape, self.tape = self.tape, None
        indexed, self.indexed = self.indexed, None
        if self.shared:   # its nodes go with the sweep (the dict is read only while alive)
            self.shared.clear()
        if indexed:
            for x in indexed:   # the x[i] cache is read only while the trace is alive
                try:
                    del x.items
                except AttributeError:   # already dropped (an in-place write, inplace._move)
                    pass
        return tape

    def new_leaf(self, value):
        """Make an input of the recorded function: a Var with no primitive behind it.

        The sweep stops at leaves; their cotangents are the gradient.

        Parameters
        ----------
        value : object
            The leaf's primal (a plain array, or a box of a lower trace).

        Returns
        -------
        Var
            The leaf, made by ``box_type`` (and appended to the tape, if kept).
        """
        leaf = self.box_type(self, value)
        if self.shared is None and getattr(getattr(value, "_trace", None), "shares", False):
            self.shared = {}    # a leaf of a jit trace that shares: share nodes too
        if self.tape is not None:
            self.tape.append(leaf)
        return leaf


def record(trace, prim, args, params, vals, parents, ans):
    """The result of ``prim`` applied to ``args`` on ``trace`` (a :class:`VJPTrace`), whose
    value ``ans`` the caller computed from ``vals``: the one place an operation is
    recorded.

    ``vals`` are the arguments one level down (``trace``'s own Vars unboxed) and
    ``parents`` the positions of those Vars. Here and only here: a dead trace raises
    (:meth:`Trace.stop <dualad.core.tracer.Trace.stop>`); a zero-derivative primitive returns
    its plain value (logged as a decision when the trace keeps a decision log); the tape
    is compacted when enough array bytes were recorded (dualad.interpreters.reverse.compaction); the node is
    made and kept in creation order; anomaly mode checks the value.
    """
    if not trace.alive:
        raise trace.escaped(prim, args)
    if prim.zero_derivative:
        if trace.decisions is not None:   # a value-dependent result: logged
            trace.decisions.note(prim.name, ans)
        return ans
    shared = trace.shared
    if shared is not None:   # under dualad.jit: a repeated node is recorded once
        slot, node = shared_node(shared, trace, prim, args, params, ans)
        if node is not None:
            return node
    tape = trace.tape
    if ans.__class__ is _NDARRAY and tape is not None:
        trace.room -= ans.nbytes
        if trace.room < 0:
            _compact(trace)
    if trace.box_type is Var:
        # Var.__init__'s slots set in place, which saves the frame of a class call
        out = _new_var(Var)
        out._trace = trace
        out.value = ans
        out.prim = prim
        out.args = args
        out.params = params
        out.vals = vals
        out.parents = parents
        if tape is not None:
            tape.append(out)      # the tape is the creation order: no ``seq`` needed
        else:
            out.seq = _next_seq()
    else:
        out = trace.box_type(trace, ans, prim, args, params, vals, parents)
        if tape is not None:
            tape.append(out)
    if ANOMALY[0]:
        check_anomaly(prim, "value", ans)
        remember(out)
    if shared is not None and slot is not None:
        shared[slot] = out
    return out


def _compact(trace):
    """Release what no output can need (dualad.interpreters.reverse.compaction) and reset the byte budget.
    Runs while the forward pass records, once ``MIN_BYTES`` of array values were
    recorded since the last pass; the pass scans a suffix of the tape (amortised O(1)
    per recorded node, compaction.Schedule)."""
    if compaction.ENABLED:
        trace.schedule.run(trace.tape)
    trace.room = compaction.MIN_BYTES


def operator_method(prim, reflected=False, fallback=None):
    """Var's method for the binary operator of ``prim`` (``x * y``: ``__mul__``, or
    ``__rmul__`` when ``reflected``): a thin entry into :func:`record` for scalar code.

    When ``self`` is a Var of a plain :class:`VJPTrace` over a plain value and ``other``
    a plain value or a Var of the same trace over one, the method unboxes them itself and
    calls :func:`record`; everything else (boxes of other traces, values boxed further
    down, trace subclasses, which override ``process``) calls ``prim``, the one route.
    Why the entry: it skips ``Primitive.__call__``'s scan for the top trace and
    ``process``'s generic unboxing loop. Measured in issue 16 (bench/instructions.py,
    scalar-chain: 10^5 steps ``x = x * c + d`` recorded and swept): 238M instructions
    per call with it, 391M (+64%) with Var's operators going through ``prim``.
    ``fallback(self, other)``, when given, replaces ``prim`` on the generic path (the Box
    operator method, which also handles SciPy sparse operands).
    """
    impl = prim.impl
    # The value is ``impl`` of the unboxed operands whatever they hold: ``impl`` is Python's
    # operator, so a box of a lower trace among them (grad of grad, forward over reverse)
    # goes round its own operator, as ``process`` calls ``prim`` again for it.
    assert getattr(impl, "operator", impl) in _OPERATORS, prim.name   # (power's: power_impl)

    # (``x.__class__`` rather than ``type(x)``: no call, the hot path of scalar code)
    if reflected:   # other ∘ self: ``self`` is argument 1
        def method(self, other):
            trace = self._trace
            if trace.__class__ is VJPTrace and other.__class__ in PLAIN_TYPES and not (
                    other.__class__ is _NDARRAY and _object_or_noted(trace, other, prim)):
                sv = self.value
                return record(trace, prim, (other, self), _NO_PARAMS, (other, sv), _SECOND,
                              impl(other, sv))
            if fallback is not None:
                return fallback(self, other)
            return prim(other, self)
        return method

    def method(self, other):
        trace = self._trace
        if trace.__class__ is VJPTrace:
            kind = other.__class__
            # (an object array, np.array([y, z]) of traced scalars, goes to ``prim``, which
            # restacks it: dualad.frontend.objects)
            if kind in PLAIN_TYPES and not (kind is _NDARRAY and
                                            _object_or_noted(trace, other, prim)):
                sv = self.value
                return record(trace, prim, (self, other), _NO_PARAMS, (sv, other), _FIRST,
                              impl(sv, other))
            if kind is Var and other._trace is trace:
                sv, ov = self.value, other.value
                return record(trace, prim, (self, other), _NO_PARAMS, (sv, ov), _BOTH,
                              impl(sv, ov))
        if fallback is not None:
            return fallback(self, other)
        return prim(self, other)
    return method


def _object_or_noted(trace, a, prim):
    """For a plain ndarray operand ``a`` of a Var operator: True for an object array (the
    generic path restacks it, dualad.frontend.objects); otherwise False, once ``a`` is noted as a
    constant of the tape when the trace keeps them (dualad.interpreters.reverse.versions.Constants)."""
    if a.dtype.hasobject:
        return True
    if trace.constants is not None:
        trace.constants.note(a, prim)
    return False


def power_method(power, square):
    """Var's ``x ** y``: :func:`operator_method` of ``power``, except that ``x ** 2`` is
    ``square(x)``, as NumPy's own ``ndarray.__pow__`` computes a scalar exponent 2 (its
    fast scalar power). square's partial, 2·x, is compiled as ``arg(0, 2)``
    (:mod:`dualad.core.partials`), which the sweep reads without calling anything, where
    power's y·x^(y-1) is a call per node. Measured in issue 16 (bench/instructions.py,
    Rosenbrock, three squares per term): 10.76M -> 10.35M instructions per gradient."""
    generic = operator_method(power)

    def method(self, other):
        if (other.__class__ is int or other.__class__ is float) and other == 2:
            trace = self._trace
            sv = self.value
            if trace.__class__ is VJPTrace and sv.__class__ in PLAIN_TYPES:
                return record(trace, square, (self,), _NO_PARAMS, (sv,), _FIRST, sv * sv)
            return square(self)
        return generic(self, other)
    return method


_NDARRAY = np.ndarray
_OPERATORS = (operator.add, operator.sub, operator.mul, operator.truediv, operator.pow)
_NO_PARAMS = {}
_new_var = object.__new__
_FIRST, _SECOND, _BOTH = (0,), (1,), (0, 1)  # shared: no allocation per recorded operation
