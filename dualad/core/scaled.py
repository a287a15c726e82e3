"""Scaled batches: a batch of tangents times a factor every direction shares.

In vector forward mode an elementwise function's JVP multiplies the batch of
tangents ``T`` (shape ``(B, *shape)``) by its derivative ``d`` (shape
``shape``): a pass over all B directions. A chain of such functions, and the
rules of forward-over-reverse (a Hessian's sweep meets ``sinh(z)·T``,
``cosh(z)·T``, ``−T/c²`` and their sum, all from the same ``T``), makes one
pass per step where one pass at the end would do.

A :class:`ScaledBatch` is ``T = base · scale`` with ``scale`` broadcasting into
one direction's shape (it has no batch axis). It stays scaled through

    T · c,  T / c  (c without the batch axis, not enlarging it)   scale · c, scale / c
    −T                                                             −scale
    T ± T'  (the same base)                                        scale ± scale'

each an O(|shape|) operation on the scale, and becomes the ndarray
``base · scale`` (computed once, kept) for anything else, as
:class:`dualad.core.onehot.OneHotBatch` does. The values are the eager ones up to
rounding: ``(T·a)·b`` is formed as ``T·(a·b)``, and ``a·T + b·T`` as
``(a + b)·T``. Elementwise JVPs make one (:func:`lazy_product`) when the batch
is large enough for the pass to matter.
"""
from __future__ import annotations

import numpy as np

from .onehot import StructuredBatch, _broadcasts_into, _plain

__all__ = ["LAZY_MIN_SIZE", "ScaledBatch", "lazy_product", "dense"]

#: Batches smaller than this many elements are multiplied at once: below it the
#: bookkeeping costs about what the pass it saves does (measured: a 10 x 2000 batch of
#: tangents came out 7% slower deferred, a 300 x 300 Hessian 15% faster).
LAZY_MIN_SIZE = 1 << 16


class ScaledBatch(StructuredBatch):
    """``base · scale``: ``base`` an ndarray (nb batch axes, then one direction's
    shape), ``scale`` an ndarray broadcasting into one direction's shape."""

    __slots__ = ("base", "scale", "nb", "shape", "dtype", "_dense")

    def __init__(self, base, scale, nb):
        self.base, self.scale, self.nb = base, scale, nb
        self.shape = base.shape
        self.dtype = np.result_type(base, scale)
        self._dense = None

    def __repr__(self):
        return f"ScaledBatch(shape={self.shape}, dtype={self.dtype})"

    def dense(self, dtype=None):
        if self._dense is None:
            self._dense = np.multiply(self.base, self.scale)
        return self._dense if dtype is None else self._dense.astype(dtype, copy=False)

    def _fits(self, c):
        """Whether ``c`` scales every direction alike without enlarging it."""
        return _broadcasts_into(np.shape(c), self.shape[self.nb:])

    @staticmethod
    def _structured_ufunc(ufunc, inputs):
        if ufunc is np.multiply or ufunc is np.divide:
            a, b = inputs
            if type(a) is ScaledBatch and _plain(b) and a._fits(b):
                return ScaledBatch(a.base, ufunc(a.scale, b), a.nb)
            if ufunc is np.multiply and type(b) is ScaledBatch and _plain(a) and b._fits(a):
                return ScaledBatch(b.base, np.multiply(a, b.scale), b.nb)
            return NotImplemented
        if ufunc is np.add or ufunc is np.subtract:
            a, b = inputs
            if type(a) is ScaledBatch and type(b) is ScaledBatch and a.base is b.base \
                    and a.nb == b.nb:
                return ScaledBatch(a.base, ufunc(a.scale, b.scale), a.nb)
            return NotImplemented
        if ufunc is np.negative:
            a = inputs[0]
            return ScaledBatch(a.base, np.negative(a.scale), a.nb)
        if ufunc is np.positive:
            return inputs[0]
        return NotImplemented


def lazy_product(t, d, nb):
    """``t · d`` for a batch of tangents ``t`` (``nb`` batch axes) and a derivative ``d``
    without them: a :class:`ScaledBatch` when ``t`` is a large plain (or already
    scaled) batch and ``d`` a plain array scaling every direction alike; None when the
    product should be formed at once."""
    if type(d) is not np.ndarray or not d.ndim or nb < 1:
        return None
    if type(t) is np.ndarray:
        if t.size < LAZY_MIN_SIZE or not _broadcasts_into(d.shape, t.shape[nb:]):
            return None
        return ScaledBatch(t, d, nb)
    if type(t) is ScaledBatch and t.nb == nb and t._fits(d):
        return ScaledBatch(t.base, np.multiply(t.scale, d), nb)
    return None


def dense(x):
    """``x`` as an ndarray if it is a scaled batch, else ``x``."""
    return x.dense() if type(x) is ScaledBatch else x
