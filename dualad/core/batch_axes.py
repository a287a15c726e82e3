"""The one batch-axis convention: batch axes LEAD.

A tangent or cotangent may carry ``nb`` leading batch axes in front of its primal's
shape (vector-mode forward sweeps seed many directions at once; a reverse sweep may pull
back a batch of cotangents): a tangent of ``x`` has shape ``batch + x.shape``, a
cotangent of ``ans`` has shape ``batch + ans.shape``, and every rule is polymorphic in
``batch``. So an axis ``a`` of the primal is axis ``a + nb`` of its tangent
(:func:`batched_axis`), and a permutation of the primal's axes leaves the batch axes in
front (:func:`batch_perm`).

``dualad.vmap`` keeps the same convention one level down: the value a ``BatchTracer``
wraps carries the batch at axis 0, so a batching rule sees its batched arguments with
``nb = 1`` leading axis, and the ``batched=`` parameters of a linear primitive
(``def_linear``), written with :func:`shift_axes` / :func:`batch_perm` for a leading
batch of shape ``batch``, serve vector-mode tangents and vmap alike.

Rules never count batch axes themselves: they ask :func:`batch_ndim` (``nb``) or
:func:`batch_shape` (``batch``), always comparing a tangent with its own primal
(``batch_ndim(t, x)``) or a cotangent with the output (``batch_ndim(ct, ans)``).
"""
from __future__ import annotations

from .tracer import shape_of

__all__ = ["batch_ndim", "batch_shape", "batched_axis", "shift_axes", "batch_perm"]


def batch_ndim(batched, primal) -> int:
    """``nb``: how many leading batch axes the tangent or cotangent ``batched`` carries
    beyond the shape of ``primal`` (the value it is a tangent or cotangent of)."""
    return len(shape_of(batched)) - len(shape_of(primal))


def batch_shape(batched, primal) -> tuple:
    """``batch``: the leading batch axes of ``batched`` beyond ``primal``'s shape, as a
    shape (``()`` when unbatched)."""
    s = shape_of(batched)
    return s[:len(s) - len(shape_of(primal))]


def batched_axis(axis, batched, primal):
    """Give axis ``axis`` of ``primal`` as an axis of ``batched``, whose batch axes lead.

    The convention of every rule: a tangent or cotangent ``batched`` carries
    ``nb = batch_ndim(batched, primal)`` leading batch axes in front of ``primal``'s
    shape, so the primal's axis ``a`` is its axis ``a + nb``.

    Parameters
    ----------
    axis : int or tuple of int
        Non-negative axes of ``primal``.
    batched : object
        A tangent or cotangent of ``primal`` (an array or a traced value).
    primal : object
        The value ``batched`` is a tangent or cotangent of (a cotangent's: the output).

    Returns
    -------
    int or tuple of int
        ``axis`` shifted by ``nb`` (a tuple axis by axis).

    Examples
    --------
    >>> import numpy as np
    >>> from dualad.extend import batched_axis
    >>> batched_axis(1, np.zeros((5, 2, 3)), np.zeros((2, 3)))      # 5 directions in front
    2
    >>> batched_axis((0, 1), np.zeros((5, 2, 3)), np.zeros((2, 3)))
    (1, 2)
    """
    nb = len(shape_of(batched)) - len(shape_of(primal))
    if isinstance(axis, (tuple, list)):
        return tuple(a + nb for a in axis)
    return axis + nb


def shift_axes(axes: tuple, nb: int) -> tuple:
    """The primal's (non-negative) ``axes`` as axes of a value with ``nb`` batch axes
    in front (:func:`batched_axis` when ``nb`` is already known)."""
    return tuple(a + nb for a in axes)


def batch_perm(perm: tuple, nb: int) -> tuple:
    """The permutation ``perm`` of a primal's axes as a permutation of a value with
    ``nb`` batch axes in front (the batch axes stay where they are)."""
    return tuple(range(nb)) + tuple(p + nb for p in perm)
