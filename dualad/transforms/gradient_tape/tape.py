"""``dualad.GradientTape``: TensorFlow's tape, recorded and swept by dualad's one reverse engine.

A tape is a :class:`~dualad.interpreters.reverse.tape.VJPTrace` of its own level (as
``dualad.grad`` makes one per call) that lives as long as the :class:`GradientTape` object:
its ``with`` block switches recording on and off, and ``gradient``/``jacobian`` run the
engine's :func:`~dualad.interpreters.reverse.sweep.backward_sweep` over it
(:mod:`dualad.transforms.gradient_tape.sweeps`; the trace: :mod:`.recording`). Nested tapes are nested levels: an inner tape's
leaves wrap the outer tape's, so the inner tape's gradient, computed by the VJP rules on the
values one level down, is recorded by the outer tape (second derivatives).

What is watched. NumPy arrays are values without identity a tape could follow, so
``tape.watch(x)`` *returns* the value the tape records (``x = tape.watch(x)``) and remembers
``x`` by identity, so that ``tape.gradient(y, x)`` finds it under either name. A target that
was not recorded (computed from the unwatched ``x``) raises, saying so, instead of giving a
silent ``None``. TensorFlow's trainable variables are :class:`dualad.autograd.Variable`
leaves with ``requires_grad=True``: with ``watch_accessed_variables=True`` a gradient with
respect to one sweeps the imperative tape they record on (:mod:`.variables`).

NumPy arrays are mutable where TensorFlow's tensors are not: ``watch`` records a copy, and an
array the block saved that is modified in place before the sweep raises (the fingerprints
of dualad.interpreters.reverse.versions, taken when the block ends, as vjp's pullback).
"""
from __future__ import annotations

import contextlib
import threading
import warnings
from typing import Any

import numpy as np

from . import sweeps, variables
from .recording import ACTIVE, TapeTrace, enclosing_leaf, original_of, stack, thread_error
from ..api import check_input
from ...core.tracer import Box, new_level, shape_of, unguarded_value
from ...core.tree import flatten
from ...interpreters.reverse.tape import Var
from ...interpreters.reverse.versions import Constants, Stamps

__all__ = ["GradientTape"]

_MODES = ("none", "zero")


class GradientTape:
    r"""Record operations in a ``with`` block, then take gradients and Jacobians of them.

    TensorFlow's ``tf.GradientTape`` on dualad's reverse engine. Inside the block,
    ``x = tape.watch(x)`` makes ``x`` a value the tape records; every NumPy operation
    computed from it is recorded. ``tape.gradient(y, x)`` then returns
    :math:`\sum_k \bar y_k^T\,\partial y_k/\partial x` for the targets :math:`y_k` (seeds
    :math:`\bar y_k` = ``output_gradients``, default ones: the gradient of the sum), in the
    structure of ``sources``.

    Parameters
    ----------
    persistent : bool, default False
        Allow several ``gradient``/``jacobian`` calls (the recorded graph is kept). A
        non-persistent tape frees it in its first call, and a second call raises.
    watch_accessed_variables : bool, default True
        Differentiate with respect to trainable variables, :class:`dualad.autograd.Variable`
        leaves with ``requires_grad=True``, without :meth:`watch`, as TensorFlow watches a
        ``tf.Variable`` read in the block (NumPy arrays are always watched explicitly).
        Everything between the target and such a Variable must have been computed while
        the tape recorded: what TensorFlow would take as a constant raises instead.

    See Also
    --------
    dualad.grad : The functional spelling.
    dualad.autograd.Variable : The PyTorch-style imperative spelling.

    Notes
    -----
    A gradient taken inside the block is computed on the values one level down and is not
    recorded on this tape (TensorFlow records it, and on a persistent tape warns that this
    is slow): for a
    second derivative, nest two tapes, as in the example. Operations on the tape's values
    after the block, in :meth:`stop_recording` or after :meth:`reset` are not recorded
    (the values act as constants), as in TensorFlow.

    Examples
    --------
    >>> import numpy as np
    >>> import dualad
    >>> x = np.array(3.0)
    >>> with dualad.GradientTape() as t2:
    ...     with dualad.GradientTape() as t1:
    ...         xw = t1.watch(t2.watch(x))
    ...         y = xw * xw * xw
    ...     dy_dx = t1.gradient(y, x)
    >>> d2y_dx2 = t2.gradient(dy_dx, x)
    >>> print(d2y_dx2)
    18.0
    >>> print(dualad.extend.primal_value(dy_dx))   # t2 recorded dy_dx: a traced value
    27.0
    """

    def __init__(self, persistent: bool = False, watch_accessed_variables: bool = True):
        self._persistent = bool(persistent)
        self._watch_accessed_variables = bool(watch_accessed_variables)
        self._trace = None
        self._watched = {}      # id(value) -> (value, leaf): the watched values, by identity
        self._used = False      # a non-persistent tape's graph was swept
        self._lock = threading.Lock()
        # [start, end) in the creation order of nodes while recording (end None: open), for
        # the trainable Variables, which record whether the tape does or not (.variables)
        self._windows = []

    def __enter__(self) -> GradientTape:
        trace = self._trace
        if trace is not None and trace.recording:
            raise RuntimeError("GradientTape: this tape is already recording; a tape cannot "
                               "be entered again inside its own `with` block (nest a second "
                               "GradientTape instead)")
        if trace is None:
            trace = self._trace = TapeTrace(new_level())
        trace.owner = threading.get_ident()
        trace.recording = True
        trace.constants = Constants("GradientTape", "the `with` block")
        self._open_window()
        ACTIVE.set(stack() + (self,))
        return self

    def _open_window(self):
        self._windows.append([variables.now(), None])

    def _close_window(self):
        if self._windows and self._windows[-1][1] is None:
            self._windows[-1][1] = variables.now()

    def _recorded_at(self, seq):
        """Whether a node created at ``seq`` was created while this tape recorded."""
        return any(a < seq and (b is None or seq < b) for a, b in self._windows)

    def __exit__(self, exc_type: Any, *exc_info: Any) -> None:
        trace = self._trace
        trace.recording = False
        self._close_window()
        active = stack()
        if self in active:   # (by identity: a tape defines no __eq__)
            i = len(active) - 1 - active[::-1].index(self)
            ACTIVE.set(active[:i] + active[i + 1:])
        constants, trace.constants = trace.constants, None
        # The forward pass is over: the arrays its nodes saved are fingerprinted, so that one
        # modified in place before gradient() raises there (dualad.interpreters.reverse.versions).
        if trace.tape is not None:
            trace.stamps = _restamp(trace.stamps, Stamps.of_tape(trace.tape))
        if exc_type is None and constants is not None:
            constants.check()   # changed in place inside the block, after a use
        # (None: an exception in the block propagates; the tape stays usable)

    def _check_recording(self, api):
        trace = self._trace
        if trace is None or not trace.recording:
            raise RuntimeError(f"{api}: the tape is not recording; call it inside "
                               f"`with GradientTape() as tape:` (and outside "
                               f"tape.stop_recording())")
        if threading.get_ident() != trace.owner:
            raise RuntimeError(thread_error(api))

    def _watched_entry(self, x):
        """``(x, leaf)`` if ``x`` (by identity) was watched, else None."""
        entry = self._watched.get(id(x))
        return entry if entry is not None and entry[0] is x else None

    def watch(self, tensor: Any) -> Any:
        """Watch a value (or a nested list/tuple/dict of values) and return what to compute with.

        NumPy arrays cannot be marked in place, so the result, a value this tape records,
        is what the operations must use: ``x = tape.watch(x)``. The tape also remembers
        ``x`` itself, so ``tape.gradient(y, x)`` accepts the original or the returned
        value. Watching a value an enclosing tape watched wraps that tape's value (nested
        tapes, second derivatives). Watching the same value twice returns the same value.

        Parameters
        ----------
        tensor : array_like or Box or nested list, tuple or dict of them
            Floating-point (or complex) values.

        Returns
        -------
        object
            The recorded values, in the structure of ``tensor``.

        Raises
        ------
        RuntimeError
            Outside the ``with`` block or inside :meth:`stop_recording`, or from another
            thread.
        TypeError
            For None, an integer or boolean array, or a non-numeric value.
        ValueError
            For a value of a transformation entered after this tape (watch with the outer
            tape first).
        """
        self._check_recording("GradientTape.watch")
        leaves, rebuild = flatten(tensor)
        return rebuild([self._watch_one(x, k, len(leaves) > 1) for k, x in enumerate(leaves)])

    def _watch_one(self, x, k, many):
        trace = self._trace
        if isinstance(x, Var) and x._trace is trace:   # already recorded: an intermediate
            self._watched.setdefault(id(x), (x, x))
            return x
        entry = self._watched_entry(x)
        if entry is not None:
            return entry[1]
        inner = enclosing_leaf(self, x)
        value = check_input("GradientTape.watch", k if many else 0,
                            x if inner is None else inner)
        if value is x and isinstance(x, np.ndarray):
            value = x.copy()   # the tape's own: x modified in place later cannot reach it
        if isinstance(value, Box) and value._trace.level > trace.level:
            raise ValueError(f"GradientTape.watch: argument {k} (shape {shape_of(x)}) is a "
                             f"traced value of a transformation or tape entered after this "
                             f"tape; watch with the outer tape first: "
                             f"x = inner.watch(outer.watch(x))")
        leaf = trace.new_leaf(value)
        self._watched[id(x)] = (x, leaf)
        origin = original_of(x)   # x is an enclosing tape's value: its array names it too
        if origin is not None and self._watched_entry(origin) is None:
            self._watched[id(origin)] = (origin, leaf)
        return leaf

    def watched_variables(self) -> tuple[Any, ...]:
        """Return the values watched since the tape was made or reset, in watch order.

        Returns
        -------
        tuple
            The values passed to :meth:`watch` (as passed, not the recorded values).
        """
        seen, out = set(), []
        for x, leaf in self._watched.values():   # one per leaf (aliases: nested tapes)
            if id(leaf) not in seen:
                seen.add(id(leaf))
                out.append(x)
        return tuple(out)

    @contextlib.contextmanager
    def stop_recording(self) -> Any:
        """Pause the recording for a ``with`` block: what is computed there is a constant.

        Yields
        ------
        None
            Inside the block, the tape records nothing; it records again afterwards.

        Raises
        ------
        RuntimeError
            If the tape is not recording.
        """
        self._check_recording("GradientTape.stop_recording")
        self._trace.recording = False
        self._close_window()
        try:
            yield
        finally:
            self._trace.recording = True
            self._open_window()

    def reset(self) -> None:
        """Forget everything recorded and watched, as if the tape were entered afresh.

        Values recorded before the reset become constants; watch again what to
        differentiate with respect to.
        """
        old = self._trace
        if old is None:
            return
        if old.recording and threading.get_ident() != old.owner:
            raise RuntimeError(thread_error("GradientTape.reset"))
        trace = self._trace = TapeTrace(old.level)
        trace.owner, trace.recording = old.owner, old.recording
        trace.constants, old.constants = old.constants, None
        old.recording = False
        old.release()
        self._watched = {}
        self._used = False
        self._windows = []
        if trace.recording:
            self._open_window()

    def __del__(self):
        trace = getattr(self, "_trace", None)
        if trace is not None and not trace.recording:
            trace.release()

    def _start_sweep(self, api, mode):
        if self._trace is None:
            raise RuntimeError(f"{api}: the tape recorded nothing; use it as "
                               f"`with dualad.GradientTape() as tape:`")
        if mode not in _MODES:
            raise ValueError(f"{api}: unconnected_gradients={mode!r}; use 'none' or 'zero'")
        if self._trace.recording and threading.get_ident() != self._trace.owner:
            raise RuntimeError(thread_error(api))
        self._consume(api, mark=False)

    def _consume(self, api, mark=True):
        """Raise if a non-persistent tape was swept already; with ``mark``, mark it swept
        (under the lock: two threads cannot both take the one sweep)."""
        with self._lock:
            if self._used:
                raise RuntimeError(f"{api}: a non-persistent GradientTape can be used for "
                                   f"one gradient/jacobian call only; make it with "
                                   f"GradientTape(persistent=True) for several")
            if mark:
                self._used = not self._persistent

    def _sweep(self, api, run):
        """``run()`` (a sweep of this tape), the tape marked used first and, when it is not
        persistent, released afterwards (as TensorFlow frees a tape in its gradient call)."""
        self._consume(api)
        trace = self._trace
        try:
            return run()
        finally:
            if not self._persistent:
                trace.release()

    def gradient(self, target: Any, sources: Any, output_gradients: Any = None,
                 unconnected_gradients: str = "none") -> Any:
        r"""Return the gradient of ``target`` with respect to ``sources``, in their structure.

        For targets :math:`y_k` (a value, or a nested list/tuple/dict of values, whose
        gradients are summed) and seeds :math:`\bar y_k` the result for a source
        :math:`x` is :math:`\sum_k \bar y_k^T\,\partial y_k/\partial x`: one reverse sweep.

        Parameters
        ----------
        target : object
            Values recorded on this tape (or a nested structure of them).
        sources : object
            A watched value (the array passed to :meth:`watch` or what it returned), a
            value recorded on the tape, a trainable :class:`dualad.autograd.Variable`, or a
            nested list/tuple/dict of them.
        output_gradients : object, optional
            The seeds, in the structure of ``target``, each of its target's shape;
            default ones (the gradient of the sum of every target).
        unconnected_gradients : {"none", "zero"}, default "none"
            What a source the target does not depend on gets: None, or zeros of its shape.

        Returns
        -------
        object
            The gradients, in the structure of ``sources``, each of its source's shape
            and dtype.

        Raises
        ------
        RuntimeError
            A second call on a non-persistent tape, a tape never entered, or a call from
            another thread while the tape records.
        ValueError
            A target not recorded on this tape (computed from an unwatched array), or
            seeds of the wrong shape or structure.
        TypeError
            A None target or source, or a complex target without ``output_gradients``.

        Warns
        -----
        UserWarning
            For a source the tape never watched or recorded (its result is None or zeros).
        """
        api = "GradientTape.gradient"
        self._start_sweep(api, unconnected_gradients)
        leaves, rebuild, nodes = sweeps.resolve(self, api, sources)
        trainable = [x for x, n in zip(leaves, nodes) if n is None and
                     self._watch_accessed_variables and variables.is_trainable(x)]
        # checked before the sweeps: a call that fails here leaves the tape as it was
        seeds = None
        if any(n is not None for n in nodes) or not trainable:
            seeds = sweeps.target_nodes(self, api, target, output_gradients)
        outputs, variable_seeds = variables.variable_seeds(
            self, api, target, output_gradients) if trainable else ([], [])
        found, by_variable = self._sweep(api, lambda: self._gradients(
            api, seeds, nodes, outputs, variable_seeds, trainable))
        out = []
        for k, (x, node) in enumerate(zip(leaves, nodes)):
            g = found.get(node) if node is not None else by_variable.get(id(x))
            if node is None and not any(x is w for w in trainable):
                _warn_unwatched(api, sources, k, x)
            out.append(g if g is not None else sweeps.unconnected(
                unconnected_gradients, shape_of(x), _dtype(x)))
        return rebuild(sweeps.distinct(out))

    def _gradients(self, api, seeds, nodes, outputs, variable_seeds, trainable):
        """``({node: gradient}, {id(variable): gradient})``: this tape's sweep for the
        sources it recorded, the imperative tape's for the trainable Variables
        (.variables). Two dicts: a node's ``==`` is a traced comparison, never mixed with
        other keys."""
        found = {} if seeds is None else sweeps.sweep(self, api, seeds, nodes,
                                                      self._persistent)
        by_variable = {} if not trainable else variables.variable_gradients(
            outputs, variable_seeds, trainable, self._persistent)
        return found, by_variable

    def jacobian(self, target: Any, sources: Any, unconnected_gradients: str = "none",
                 parallel_iterations: Any = None, experimental_use_pfor: bool = True) -> Any:
        r"""Return the full Jacobian of ``target`` with respect to each source.

        ``J[i..., j...]`` :math:`= \partial y[i\ldots]/\partial x[j\ldots]`, of shape
        ``target.shape + source.shape``: the rows of the identity seeded as one batch of
        cotangents, so one reverse sweep (one per block of rows when the seeds would
        exceed 64 MiB).

        Parameters
        ----------
        target : object
            One value recorded on this tape.
        sources : object
            A watched or recorded value or a trainable :class:`dualad.autograd.Variable`,
            or a nested list/tuple/dict of them.
        unconnected_gradients : {"none", "zero"}, default "none"
            What a source the target does not depend on gets: None, or zeros.
        parallel_iterations : object, optional
            Accepted for TensorFlow's signature; the sweep is always batched.
        experimental_use_pfor : bool, default True
            Accepted for TensorFlow's signature; ignored.

        Returns
        -------
        object
            The Jacobians, in the structure of ``sources``.

        Raises
        ------
        RuntimeError
            A second call on a non-persistent tape.
        ValueError
            A target not recorded on this tape.
        """
        api = "GradientTape.jacobian"
        self._start_sweep(api, unconnected_gradients)
        leaves, rebuild, nodes = sweeps.resolve(self, api, sources)
        trainable = [x for x, n in zip(leaves, nodes) if n is None and
                     self._watch_accessed_variables and variables.is_trainable(x)]
        node = inner = None     # (checked before the sweeps, as in gradient)
        if any(n is not None for n in nodes) or not trainable:
            node = sweeps.single_target(self, api, target)
        if trainable:
            inner = variables.jacobian_target(self, api, sweeps.one_value(api, target))

        def run():
            found = {} if node is None else sweeps.jacobian_of(self, api, node, nodes,
                                                               self._persistent)
            return found, variables.variable_jacobians(inner, trainable, self._persistent)

        found, by_variable = self._sweep(api, run)
        tshape = shape_of(target)
        out = []
        for k, (x, n) in enumerate(zip(leaves, nodes)):
            j = found.get(n) if n is not None else by_variable.get(id(x))
            if n is None and not any(x is w for w in trainable):
                _warn_unwatched(api, sources, k, x)
            out.append(j if j is not None else sweeps.unconnected(
                unconnected_gradients, tshape + shape_of(x), _dtype(x)))
        return rebuild(sweeps.distinct(out))

    def batch_jacobian(self, target: Any, source: Any, unconnected_gradients: str = "none",
                       parallel_iterations: Any = None,
                       experimental_use_pfor: bool = True) -> Any:
        r"""Return the per-example Jacobians of ``target`` with respect to ``source``.

        With a leading batch axis b on both, ``B[b, i..., j...]``
        :math:`= \partial y[b, i\ldots]/\partial x[b, j\ldots]`, of shape
        ``(b,) + target.shape[1:] + source.shape[1:]``. Valid when ``target[b]`` depends
        on ``source[b]`` only, which is checked: a dependence across examples raises
        (TensorFlow leaves it undefined). One reverse sweep of ``2 * target[0].size``
        batched cotangents.

        Parameters
        ----------
        target : object
            One value recorded on this tape, of shape ``(b, ...)``.
        source : object
            One watched or recorded value, of shape ``(b, ...)``.
        unconnected_gradients : {"none", "zero"}, default "none"
            What an unconnected source gets: None, or zeros.
        parallel_iterations : object, optional
            Accepted for TensorFlow's signature; ignored.
        experimental_use_pfor : bool, default True
            Accepted for TensorFlow's signature; ignored.

        Returns
        -------
        numpy.ndarray or None
            The per-example Jacobians.

        Raises
        ------
        ValueError
            Batch sizes that differ, a 0-d target or source, rows of the target that
            depend on other rows of the source, or a target not recorded on the tape.
        """
        api = "GradientTape.batch_jacobian"
        self._start_sweep(api, unconnected_gradients)
        (x,), _, (node,) = sweeps.resolve(self, api, [source])
        _refuse_variable(api, x, node)
        target_node = sweeps.single_target(self, api, target)
        result = None
        if node is not None:
            result = self._sweep(api, lambda: sweeps.batch_jacobian_of(
                self, api, target_node, node, self._persistent))
        else:
            _warn_unwatched(api, source, 0, x)
        if result is None:
            tshape, sshape = shape_of(target), shape_of(x)
            result = sweeps.unconnected(unconnected_gradients, tshape + sshape[1:], _dtype(x))
        return result


def _restamp(old, new):
    """``new`` (the fingerprints of every array the tape saved, taken now) with the earlier
    fingerprint kept for an array fingerprinted at an earlier block's end: a persistent tape
    entered again must not take a change made in between as the array's value."""
    if old is None:
        return new
    earlier = {id(a): crc for a, crc, _ in old.entries}
    return Stamps([(a, earlier.get(id(a), crc), name) for a, crc, name in new.entries])


def _dtype(x):
    dtype = np.result_type(unguarded_value(x))
    return dtype if dtype.kind in "fc" else np.dtype(np.float64)


def _refuse_variable(api, x, node):
    """A batch Jacobian with respect to a trainable Variable the tape did not watch."""
    if node is None and variables.is_trainable(x):
        raise TypeError(f"{api}: the source (shape {shape_of(x)}) is a trainable "
                        f"dualad.autograd.Variable; watch it for a batch Jacobian "
                        f"(wt = tape.watch(w), and compute from wt)")


def _warn_unwatched(api, sources, k, x):
    where = "sources" if not isinstance(sources, (list, tuple, dict)) else f"sources (leaf {k})"
    warnings.warn(f"{api}: {where} (shape {shape_of(x)}) was never watched by this tape nor "
                  f"recorded on it, so its gradient is None (or zeros with "
                  f"unconnected_gradients='zero'). {sweeps.WATCH_HINT}", stacklevel=3)
