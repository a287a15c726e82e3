"""Recording the backward sweep's steps: :func:`record_backward`.

While ``with record_backward() as rec:`` is active in a thread, every sweep of
:func:`dualad.autograd.backward`, :meth:`Variable.backward <dualad.autograd.Variable.backward>`
and :func:`dualad.autograd.grad` run *by that thread* appends one :class:`BackwardStep` per
node it pulls a cotangent back through: the primitive, the shapes of its inputs, of its
output and of the cotangent, and the seconds its pullback (VJP rule) took, measured with
:func:`time.perf_counter` from the moment the node's cotangent was complete to the moment
the next node's was (the node's hooks are not counted). Each step is also logged at
DEBUG on the ``"dualad.autograd"`` logger; dualad installs no handler, so the log goes
where the application's logging configuration sends it.

The recording is kept per thread (:data:`dualad.interpreters.reverse.hooks.RECORDING`): a
sweep in another thread is never recorded. When no recording is active a sweep does no
work for it beyond one thread-local read per call.
"""
from __future__ import annotations

import logging
from typing import NamedTuple

from .core.logs import logger
from .interpreters.reverse.hooks import RECORDING

__all__ = ["record_backward", "BackwardStep"]

_LOG = logger("autograd")     # the hierarchy's one place for names (dualad.core.logs)


class BackwardStep(NamedTuple):
    """One node of a backward sweep, as :func:`record_backward` keeps it.

    The sweep visits a node once its cotangent is complete and pulls it back through the
    node's VJP rule (its pullback) to the node's arguments; a step is that visit.

    Parameters
    ----------
    primitive : str
        The primitive whose pullback ran (``"multiply"``).
    input_shapes : tuple of tuple
        The shapes of its positional arguments.
    output_shape : tuple
        The shape of its value.
    cotangent_shape : tuple
        The shape of the cotangent pulled back (the output's, behind any batch axis).
    seconds : float
        The time the pullback took.
    """
    primitive: str
    input_shapes: tuple
    output_shape: tuple
    cotangent_shape: tuple
    seconds: float


class record_backward:  # noqa: N801  (a context manager named as a function, as PyTorch's)
    """Record every step of the backward sweeps run in this thread while active.

    A context manager: inside ``with record_backward() as rec:`` each node a sweep of
    :func:`dualad.autograd.backward` or :func:`dualad.autograd.grad` in this thread pulls
    a cotangent back through is appended to ``rec.steps`` and logged at DEBUG on the
    ``"dualad.autograd"`` logger. Recordings nest: an inner one records its block alone
    and gives the outer one back when it ends.

    Attributes
    ----------
    steps : list of BackwardStep
        The steps, in the order the sweeps ran them (across every sweep in the block).

    Examples
    --------
    >>> import numpy as np
    >>> from dualad.autograd import Variable, record_backward
    >>> x = Variable(np.array([1.0, 2.0]), requires_grad=True)
    >>> with record_backward() as rec:
    ...     np.sum(np.sin(x) * 3.0).backward()
    >>> [(s.primitive, s.output_shape) for s in rec.steps]
    [('sum', ()), ('multiply', (2,)), ('sin', (2,))]
    >>> rec.total_seconds() >= 0
    True
    """

    def __init__(self) -> None:
        self.steps: list[BackwardStep] = []
        self._outer = None
        self._entered = False

    def __enter__(self) -> record_backward:
        if self._entered:
            raise RuntimeError("record_backward: this recording is already active; make "
                               "a new record_backward() for another block")
        self._entered = True
        self._outer = getattr(RECORDING, "recorder", None)
        RECORDING.recorder = self
        return self

    def __exit__(self, *exc) -> None:
        RECORDING.recorder = self._outer   # a nested recording gives the outer one back
        self._outer = None
        self._entered = False

    def step(self, primitive, input_shapes, output_shape, cotangent_shape, seconds) -> None:
        """Append one step (called by the sweep's watch) and log it at DEBUG.

        Parameters
        ----------
        primitive : str
            The primitive's name.
        input_shapes : tuple of tuple
            The shapes of its arguments.
        output_shape : tuple
            The shape of its value.
        cotangent_shape : tuple
            The shape of the cotangent pulled back.
        seconds : float
            The time its pullback took.
        """
        self.steps.append(BackwardStep(primitive, input_shapes, output_shape,
                                       cotangent_shape, seconds))
        if _LOG.isEnabledFor(logging.DEBUG):
            _LOG.debug("backward step %s: inputs %s -> output %s, cotangent %s, %.3g s",
                       primitive, input_shapes, output_shape, cotangent_shape, seconds)

    def total_seconds(self) -> float:
        """Add up the seconds of the steps recorded.

        Returns
        -------
        float
            The sum of ``step.seconds`` over ``steps``.
        """
        return sum(s.seconds for s in self.steps)

    def __repr__(self) -> str:
        return f"<record_backward: {len(self.steps)} steps, {self.total_seconds():.3g} s>"
