"""Sorting and set functions of the array API standard (stable sorts; descending
order keeps equal elements in their original order, as the standard asks)."""
from __future__ import annotations

import numpy as np

__all__ = [
    "argsort", "sort", "unique_all", "unique_counts", "unique_inverse", "unique_values",
    "FUNCTIONS"
]


def argsort(x, /, *, axis=-1, descending=False, stable=True):
    """Indices that sort ``x`` along ``axis`` (stable). Descending: the ascending
    stable sort of the reversed array, reversed and mapped back, so ties keep
    their original order."""
    if not descending:
        return np.argsort(x, axis=axis, kind="stable")
    n = x.shape[axis]
    rev = np.argsort(np.flip(x, axis=axis), axis=axis, kind="stable")
    return np.flip(n - 1 - rev, axis=axis)


def sort(x, /, *, axis=-1, descending=False, stable=True):
    """``x`` sorted along ``axis`` (a permutation: its derivative permutes the
    tangent)."""
    out = np.sort(x, axis=axis)
    return np.flip(out, axis=axis) if descending else out


def unique_all(x, /):
    return np.unique_all(x)


def unique_counts(x, /):
    return np.unique_counts(x)


def unique_inverse(x, /):
    return np.unique_inverse(x)


def unique_values(x, /):
    return np.unique_values(x)


FUNCTIONS = {f.__name__: f for f in (argsort, sort, unique_all, unique_counts,
                                     unique_inverse, unique_values)}
