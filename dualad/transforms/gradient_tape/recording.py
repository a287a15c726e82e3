"""Recording for :class:`~dualad.transforms.gradient_tape.GradientTape`: its trace, and the
tapes recording in the current context.

A tape's trace is the reverse engine's :class:`~dualad.interpreters.reverse.tape.VJPTrace`
(with a tape list, as ``dualad.grad``'s) that can pause: while it records, an operation on
its values records a node, as on any reverse trace; while it does not (outside the ``with``
block, in ``stop_recording``, after ``reset``) its values are constants. Enclosing tapes are
found per context (thread or asyncio task), for ``watch`` to nest a tape's value inside an
enclosing tape's.
"""
from __future__ import annotations

import contextvars
import threading

from ...interpreters.reverse.tape import Var, VJPTrace

__all__ = ["TapeTrace", "ACTIVE", "stack", "enclosing_leaf", "original_of", "thread_error"]

# The tapes recording in this context (a thread, an asyncio task), in the order entered: what
# ``watch`` looks through for an enclosing tape's value. A context variable, as
# detect_anomaly's state: a tape of another thread or task is never an enclosing tape.
ACTIVE = contextvars.ContextVar("dualad_gradient_tapes", default=())


def stack():
    """The tapes recording in this context, outermost first."""
    return ACTIVE.get()


class TapeTrace(VJPTrace):
    """A GradientTape's trace: records while ``recording``, from the thread that entered it.

    When not recording (outside the ``with`` block, in ``stop_recording``, after ``reset``)
    its values are constants: an operation on them computes on the values one level down
    and records nothing here (outer tapes still record it). ``recording`` is the trace's
    ``alive``: what is cached only for a live trace (``x[i]`` read in a loop, see
    dualad.frontend.dispatch) is then not cached as a constant."""

    __slots__ = ("owner", "stamps")

    def __init__(self, level):
        # tape=True: the nodes in creation order, which the sweep walks from the end and
        # compaction prunes of what the user's code no longer holds (as grad's tape)
        super().__init__(level=level, tape=True)
        self.alive = False
        self.owner = None
        self.stamps = None     # fingerprints of the saved arrays when the block last ended

    @property
    def recording(self):
        return self.alive

    @recording.setter
    def recording(self, on):
        self.alive = on

    def process(self, prim, args, params):
        if self.alive:
            if threading.get_ident() != self.owner:
                raise RuntimeError(thread_error(f"primitive '{prim.name}'"))
            return super().process(prim, args, params)
        plain = [a.value if isinstance(a, Var) and a._trace is self else a for a in args]
        return prim(*plain, **params)

    def release(self):
        """Drop the list of nodes, the fingerprints and the ``x[i]`` caches: nothing will
        sweep this tape again. The list is what makes trace -> node -> trace a cycle; without
        it the nodes the user's code no longer holds are freed by reference counting."""
        self.tape = self.stamps = self.constants = None
        indexed, self.indexed = self.indexed, None
        for x in indexed or ():
            try:
                del x.items
            except AttributeError:   # already dropped
                pass


def thread_error(what):
    """The error for ``what`` done on a recording tape from another thread than its own."""
    return (f"GradientTape: {what} was called from another thread than the one recording "
            f"this tape; a tape records one thread (TensorFlow's tapes are per thread too). "
            f"Open a GradientTape in each thread, or finish the `with` block first")


def enclosing_leaf(tape, x):
    """The leaf of the innermost enclosing tape (a lower level, recording in this context)
    that watched ``x``, or None."""
    for other in reversed(stack()):
        if other is tape or other._trace is None:
            continue
        if other._trace.level < tape._trace.level and other._trace.recording:
            entry = other._watched_entry(x)
            if entry is not None:
                return entry[1]
    return None


def original_of(x):
    """The value an enclosing tape (of this context) watched to make its leaf ``x``, or None."""
    if not isinstance(x, Var):
        return None
    for other in stack():
        for value, leaf in other._watched.values():
            if leaf is x:
                return value
    return None
