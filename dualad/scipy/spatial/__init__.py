"""``dualad.scipy.spatial``: ``distance`` (cdist, pdist, squareform and the metrics) and
``distance_matrix``/``minkowski_distance``, differentiable in the points (and in ``V``/``VI``/
``w`` where SciPy takes them)."""
from __future__ import annotations

import numpy as np

from . import distance  # noqa: F401

__all__ = ["distance", "minkowski_distance_p", "minkowski_distance", "distance_matrix"]


def minkowski_distance_p(x, y, p=2.0):
    """``scipy.spatial.minkowski_distance_p``: Σ |x − y|ᵖ over the last axis (no root),
    max |x − y| for p = ∞."""
    d = np.abs(x - y)
    if p == np.inf:
        return np.max(d, axis=-1)
    if p == 1:
        return np.sum(d, axis=-1)
    return np.sum(d ** p, axis=-1)


def minkowski_distance(x, y, p=2.0):
    """``scipy.spatial.minkowski_distance``: (Σ |x − y|ᵖ)^(1/p) over the last axis, with
    derivative 0 at a zero distance (see :mod:`.distance`)."""
    if p == np.inf or p == 1:
        return minkowski_distance_p(x, y, p)
    return distance._pow_root(minkowski_distance_p(x, y, p), p)


def distance_matrix(x, y, p=2.0, threshold=1000000):
    """``scipy.spatial.distance_matrix``: the Minkowski-p distances between the rows of x
    and y (``threshold`` only changes SciPy's memory strategy, not the values)."""
    return distance.cdist(x, y, "minkowski", p=p)
