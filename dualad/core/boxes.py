"""A base for traced values that keep their primal one level down.

An interpreter's value type is a :class:`~dualad.core.tracer.Box` that holds the value one
level down (``_inner``, which the NumPy protocols, ``primal_value`` and the shape and
dtype read) and whatever the interpreter carries beside it: an index-set pattern for
sparsity detection, nothing for a counting interpreter, SymPy expressions for the
oracle. :class:`PrimalBox` is that shared part, written once: the trace, the primal,
``_inner`` and ``shape``. A subclass adds its own slots (and ``__init__`` when it has
more to store): forward mode's :class:`~dualad.interpreters.forward.dual.Dual` adds the tangent.
"""
from __future__ import annotations

from .tracer import Box, shape_of

__all__ = ["PrimalBox"]


class PrimalBox(Box):
    """A traced value of ``trace`` whose value one level down is ``primal``.

    The shared part of an interpreter's value type: the trace, the primal, ``_inner``
    and ``shape``. A subclass adds what its interpreter carries beside the primal (a
    tangent for forward mode's :class:`Dual`, an index-set pattern for sparsity
    detection, nothing for a counting interpreter) in its own ``__slots__``.

    Parameters
    ----------
    trace : Trace
        The trace the value belongs to.
    primal : object
        The value one level down: a plain array or number, or a box of a lower trace.

    Attributes
    ----------
    primal : object
        As given; ``_inner`` (what the NumPy protocols, :func:`primal_value`, ``shape``
        and ``dtype`` read) returns it.

    See Also
    --------
    Box : The base of every traced value.
    Dual : Forward mode's PrimalBox, with a tangent.
    """

    __slots__ = ("primal", "__weakref__")   # weak: dualad.frontend.inplace tracks views

    def __init__(self, trace, primal):
        self._trace = trace
        self.primal = primal

    @property
    def _inner(self):
        return self.primal

    @property
    def shape(self):
        return shape_of(self.primal)
