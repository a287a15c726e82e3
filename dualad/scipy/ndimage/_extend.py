"""Boundary extension for ``dualad.scipy.ndimage``: SciPy's modes as index maps.

A filter with boundary handling is ``valid correlation ∘ extend``. Extending an axis by
a mode other than ``constant`` is a gather ``x[src]`` whose source indices come from
the mode (computed here, in NumPy, once per call); its adjoint is the scatter-add of
the gather, which folds the cotangent of the border back onto the samples it copied.
So the reverse sweep applies the exact adjoint of SciPy's boundary-handled filter
(which is not the same filter with a flipped kernel). ``constant`` concatenates
``cval``-filled blocks (``cval`` then receives the border's cotangent, if traced).

Modes (n samples a b c d; what lies left of a):

    reflect / grid-mirror   d c b a | a b c d | d c b a   (period 2n)
    mirror                  d c b | a b c d | c b a       (period 2n − 2)
    nearest                 a a a | a b c d | d d d
    wrap / grid-wrap        a b c d | a b c d | a b c d   (period n)
    constant / grid-constant   k k k | a b c d | k k k    (k = cval)
"""
from __future__ import annotations

import numpy as np

from ...ops.core.shape import broadcast_to, concatenate
from ...ops.numpy.arrays import _take_runs
from ...core.tracer import Box, primal_value, shape_of

__all__ = ["MODES", "check_mode", "per_axis", "source_indices", "extend"]

MODES = ("reflect", "grid-mirror", "mirror", "nearest", "wrap", "grid-wrap", "constant",
         "grid-constant")


def check_mode(fname, mode):
    if mode not in MODES:
        raise ValueError(f"{fname}: boundary mode not supported: {mode!r} (use one of "
                         f"{', '.join(MODES)})")
    return mode


def per_axis(fname, what, value, nd):
    """A scalar or a sequence of ``nd`` values (SciPy's ``_normalize_sequence``)."""
    if isinstance(value, str) or np.ndim(value) == 0:
        return [value] * nd
    value = list(value)
    if len(value) != nd:
        raise RuntimeError(f"{fname}: sequence argument {what} must have length equal to the "
                           f"number of filtered axes ({nd}), got {len(value)}")
    return value


def source_indices(i, n, mode):
    """The sample index that position ``i`` (any integers) reads under ``mode``; −1 marks
    the constant modes' fill."""
    i = np.asarray(i)
    if mode in ("reflect", "grid-mirror"):
        j = np.mod(i, 2 * n)
        return np.where(j >= n, 2 * n - 1 - j, j)
    if mode == "mirror":
        if n == 1:
            return np.zeros_like(i)
        j = np.mod(i, 2 * n - 2)
        return np.where(j >= n, 2 * n - 2 - j, j)
    if mode == "nearest":
        return np.clip(i, 0, n - 1)
    if mode in ("wrap", "grid-wrap"):
        return np.mod(i, n)
    return np.where((i >= 0) & (i < n), i, -1)


def extend(x, axis, before, after, mode, cval):
    """``x`` extended along ``axis`` by ``before`` and ``after`` samples under ``mode``."""
    if before == 0 and after == 0:
        return x
    n = shape_of(x)[axis]
    if mode in ("constant", "grid-constant"):
        parts = []
        for w in (before, after):
            shape = list(shape_of(x))
            shape[axis] = w
            if isinstance(cval, Box):
                parts.append(broadcast_to(cval, tuple(shape)))
            else:
                parts.append(np.full(shape, cval, dtype=np.result_type(primal_value(x))))
        return concatenate([parts[0], x, parts[1]], axis=axis)
    src = source_indices(np.arange(-before, n + after), n, mode)
    return _take_runs(x, axis, src)
