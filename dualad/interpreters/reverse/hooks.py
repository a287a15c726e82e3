"""Reverse mode, watching the sweep: gradient hooks, retained gradients, recorded steps.

:func:`~.sweep.backward_sweep` takes an optional *watch*. When it is given, every leaf the
sweep reaches (and, when ``watch.inner``, every node) is shown to ``watch.visit(node,
ct)`` once its cotangent ``ct`` is complete, before the node's pullback runs; what
``visit`` returns is the cotangent the sweep goes on with. That one entry point serves
the imperative API's PyTorch habits (:mod:`dualad.autograd`):

- ``v.register_hook(hook)``: ``ct <- hook(ct)`` when ``hook`` returns a value, in the
  order the hooks were registered (a leaf's before its gradient is accumulated);
- ``v.retain_grad()``: after the hooks, ``v.grad += ct`` (under ``backward`` only);
- ``dualad.autograd.record_backward()``: each node's step (primitive, shapes, seconds).

Without a watch the sweep does no more work than before: the leaf test it already made is
the only place a watch is asked for, and inner nodes are shown only when a hook or a
retained gradient sits on a non-leaf, or a recording is active in the calling thread.
The recording lives in a thread-local slot (:data:`RECORDING`), so a recording in one
thread never sees another thread's sweep.
"""
from __future__ import annotations

import threading
import weakref
from time import perf_counter

import numpy as np

from .sweep import _own_dtype
from ...core.tracer import Box, primal_value, shape_of

__all__ = ["SweepWatch", "RECORDING", "WATCHED", "HOOKS", "RETAINED", "watch",
           "unwatch_if_idle", "watch_for", "check_hook_result"]

# The Variables that carry hooks or retain their gradient, by id, as weak references
# whose callback forgets the id's entries when the Variable is freed (before its id can
# be reused); a sweep builds a watch only while it is not empty or a recording is on.
# (Kept here rather than in slots of every Variable: a recorded operation's node stays
# the size it was. Not a WeakSet, whose references compare Variables with ``==``.)
WATCHED: dict = {}
HOOKS: dict = {}        # id -> {handle id: hook}, in registration order
RETAINED: set = set()   # ids of the computed Variables that retain their gradient


def _forget(key):
    WATCHED.pop(key, None)
    HOOKS.pop(key, None)
    RETAINED.discard(key)


def watch(v):
    """Put Variable ``v`` in :data:`WATCHED` (once)."""
    key = id(v)
    if key not in WATCHED:
        WATCHED[key] = weakref.ref(v, lambda _, key=key: _forget(key))


def unwatch_if_idle(v):
    """Take ``v`` out of :data:`WATCHED` when it has no hook and does not retain."""
    key = id(v)
    if not HOOKS.get(key) and key not in RETAINED:
        _forget(key)


# The calling thread's active recording (dualad.autograd.record_backward), if any.
RECORDING = threading.local()


def watch_for(seeds, wanted=None, accumulate=True, create_graph=False):
    """The watch for a sweep from ``seeds`` (``(node, ct)`` pairs), or None when no hook,
    retained gradient or recording can apply: the sweep then runs as it always did.

    ``wanted``: the inputs of ``autograd.grad`` (None under ``backward``); hooks then fire
    only on those leaves and on the nodes through which one of them is reached, as
    PyTorch's engine runs only the part of the graph that leads to the inputs.
    ``accumulate``: whether retained gradients are accumulated into ``.grad``;
    ``create_graph``: whether the sweep is recorded (otherwise what a hook returns is
    taken as a plain value, as PyTorch runs hooks without recording then).
    """
    recorder = getattr(RECORDING, "recorder", None)
    if recorder is None and not WATCHED:
        return None
    inner = recorder is not None or any(
        v is not None and v.prim is not None for v in (r() for r in list(WATCHED.values())))
    needed = None
    if wanted is not None and inner:
        needed = _leading_to(seeds, wanted)
    return SweepWatch(recorder, inner, wanted, needed, accumulate, create_graph)


def _leading_to(seeds, wanted):
    """The nodes reachable from the seeds from which a node of ``wanted`` is reachable
    (the part of the graph ``autograd.grad`` needs), by one pass in creation order."""
    seen, stack = set(), [node for node, _ in seeds]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        if node.prim is not None and node.args is not None:
            stack.extend(node.args[i] for i in node.parents)
    needed = set()
    for node in sorted(seen, key=lambda n: n.seq):
        if node in wanted or (node.prim is not None and node.args is not None and any(
                node.args[i] in needed for i in node.parents)):
            needed.add(node)
    return needed


class SweepWatch:
    """What one sweep shows its nodes to (see the module's docstring).

    Parameters
    ----------
    recorder : object or None
        The active recording: ``recorder.step(node, ct, seconds)`` is told each node's
        step once the next node is reached (the step's time is the pullback's, hooks
        excluded).
    inner : bool
        Whether the sweep must show its inner nodes too (not only its leaves).
    wanted, needed : set or None
        Under ``autograd.grad``: its inputs, and the nodes that lead to them; hooks fire
        on those only.
    accumulate : bool
        Whether a retained gradient is accumulated into the node's ``.grad``.
    create_graph : bool
        Whether the sweep is recorded; if not, a hook's traced result is unboxed.
    """

    __slots__ = ("recorder", "inner", "wanted", "needed", "accumulate", "create_graph",
                 "open", "started")

    def __init__(self, recorder, inner, wanted, needed, accumulate, create_graph):
        self.recorder = recorder
        self.inner = inner
        self.wanted = wanted
        self.needed = needed
        self.accumulate = accumulate
        self.create_graph = create_graph
        self.open = None      # the node whose pullback is being timed
        self.started = 0.0

    def visit(self, node, ct):
        """``node``'s cotangent ``ct`` is complete: close the previous step, run the hooks
        and the retained gradient, open ``node``'s step; returns the cotangent to use."""
        if self.open is not None:
            self.close()
        if self._fires(node):
            hooks = HOOKS.get(id(node))
            if hooks:
                for hook in tuple(hooks.values()):   # a hook may remove itself
                    new = hook(ct)
                    if new is not None:
                        if not self.create_graph and isinstance(new, Box):
                            new = primal_value(new)   # computed from Variables: unrecorded
                        ct = check_hook_result(hook, node, ct, new)
            if self.accumulate and node.prim is not None and id(node) in RETAINED:
                g = _own_dtype(ct, node)
                node._grad = g if node._grad is None else node._grad + g
        if self.recorder is not None and node.prim is not None:
            self.open = (node, shape_of(ct), tuple(shape_of(a) for a in node.vals or ()))
            self.started = perf_counter()
        return ct

    def _fires(self, node):
        if self.wanted is None:
            return True
        if node.prim is None:
            return node in self.wanted
        return self.needed is not None and node in self.needed

    def close(self):
        """End the step being timed (at the next node, or when the sweep ends)."""
        seconds = perf_counter() - self.started
        node, ct_shape, in_shapes = self.open
        self.open = None
        self.recorder.step(node.prim.name, in_shapes, shape_of(node.value), ct_shape, seconds)


def check_hook_result(hook, node, ct, new):
    """The gradient ``new`` a hook on ``node`` returned in place of ``ct``, checked: the
    same shape as ``ct`` (batch axes included), real when ``ct`` is real, and cast to
    ``ct``'s dtype; anything else raises, naming the hook, the Variable and both shapes."""
    name = getattr(hook, "__name__", repr(hook))
    what = ("leaf Variable" if node.prim is None
            else f"Variable computed by '{node.prim.name}'")
    if not isinstance(new, Box):
        try:
            new = np.asarray(new)
        except Exception as e:   # noqa: BLE001 - reported with the hook's name below
            raise TypeError(f"register_hook: hook {name!r} on a {what} of shape "
                            f"{shape_of(node.value)} returned {type(new).__name__}, not an "
                            f"array: return None or a gradient of shape {shape_of(ct)}") from e
        kind = new.dtype.kind
        ct_dtype = np.result_type(ct) if not isinstance(ct, Box) else None
        if kind not in "biufc" or (kind == "c" and ct_dtype is not None
                                    and ct_dtype.kind != "c"):
            raise TypeError(f"register_hook: hook {name!r} on a {what} of shape "
                            f"{shape_of(node.value)} returned a {new.dtype} gradient for a "
                            f"{ct_dtype} one: return None or a real array of shape "
                            f"{shape_of(ct)} (the imaginary part would be dropped)")
        if ct_dtype is not None and new.dtype != ct_dtype:
            new = new.astype(ct_dtype)
    if shape_of(new) != shape_of(ct):
        raise ValueError(f"register_hook: hook {name!r} on a {what} of shape "
                         f"{shape_of(node.value)} returned a gradient of shape "
                         f"{shape_of(new)}, but was given one of shape {shape_of(ct)}: a hook "
                         f"returns None or a gradient of the shape it was given")
    return new
