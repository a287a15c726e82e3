"""Operation counts: how many primitive applications a computation performs.

An :class:`OpCounter` is an outer tape that records (and counts) every primitive
applied to values that depend on its inputs, at any level below it: wrapping
``grad(f)`` counts the forward sweep and every operation of the reverse sweep, since
the sweep's rules are themselves registry operations. It is never swept back.
:mod:`.evaltrace` counts a sweep's rules on one; the paper reproductions
(``papers/``) count whole programs with :func:`count_ops`.
"""
from __future__ import annotations

from collections import Counter

from ..interpreters.reverse.tape import VJPTrace

__all__ = ["OpCounter", "count_ops"]


class OpCounter(VJPTrace):
    """A tape that counts the primitives applied on it, by name.

    An outer tape: wrap the inputs with ``new_leaf`` and every primitive applied to
    values that depend on them, at any level below (a reverse sweep's rules
    included), is recorded and counted in ``counts`` (a :class:`collections.Counter`).
    It is never swept back.

    See Also
    --------
    count_ops : Count one call of a function.

    Examples
    --------
    >>> import numpy as np
    >>> from dualad.teaching import OpCounter
    >>> counter = OpCounter()
    >>> x = counter.new_leaf(2.0)
    >>> y = np.sin(x) * x
    >>> counter.total, sorted(counter.counts)
    (2, ['multiply', 'sin'])
    """

    __slots__ = ("counts",)

    def __init__(self):
        super().__init__()
        self.counts = Counter()

    def process(self, prim, args, params):
        """Count one application of ``prim``, then record it as the tape does.

        Parameters
        ----------
        prim : Primitive
            The primitive applied.
        args : tuple
            Its arguments (some traced on this tape).
        params : dict
            Its keyword parameters.

        Returns
        -------
        Var
            The traced result.
        """
        self.counts[prim.name] += 1
        return super().process(prim, args, params)

    @property
    def total(self):
        """All primitive applications counted so far.

        Returns
        -------
        int
            The sum of ``counts``.
        """
        return sum(self.counts.values())


def count_ops(fn, *args):
    """Number of primitive applications performed by ``fn(*args)``.

    Every primitive applied to values that depend on ``args`` counts, including the
    rules a nested ``grad`` or ``jvp`` applies in its sweep: ``count_ops(grad(f), x)``
    measures the cheap gradient principle.

    Parameters
    ----------
    fn : callable
        The function to run.
    *args : array_like
        Its arguments (each becomes a leaf of the counting tape).

    Returns
    -------
    int
        The number of primitive applications.

    Examples
    --------
    >>> import numpy as np
    >>> import dualad
    >>> from dualad.teaching import count_ops
    >>> count_ops(lambda x: np.sin(x) * x, 2.0)
    2
    >>> count_ops(dualad.grad(lambda x: np.sin(x) * x), 2.0) > 2
    True
    """
    counter = OpCounter()
    fn(*[counter.new_leaf(a) for a in args])
    return counter.total
