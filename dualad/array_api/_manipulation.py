"""Manipulation and indexing functions of the array API standard.

Each calls the NumPy function of the same meaning, which reaches the registry
through ``__array_function__`` for traced values (all of these are linear maps:
their derivative is the same map of the tangent, their transpose scatters the
cotangent back).
"""
from __future__ import annotations

import numpy as np

from ..core.tracer import Box

__all__ = [
    "broadcast_arrays", "broadcast_shapes", "broadcast_to", "concat", "expand_dims", "flip",
    "moveaxis", "permute_dims", "repeat", "reshape", "roll", "squeeze", "stack", "tile",
    "unstack", "take", "take_along_axis", "FUNCTIONS"
]


def broadcast_arrays(*arrays):
    return list(np.broadcast_arrays(*arrays))


def broadcast_shapes(*shapes):
    """The shape the standard's broadcasting gives ``shapes`` (2024.12)."""
    return np.broadcast_shapes(*shapes)


def broadcast_to(x, /, shape):
    return np.broadcast_to(x, tuple(shape))


def concat(arrays, /, *, axis=0):
    """Join along ``axis``; ``axis=None`` joins the flattened arrays."""
    arrays = list(arrays)
    if axis is None:
        return np.concatenate([np.reshape(a, (-1,)) for a in arrays])
    return np.concatenate(arrays, axis=axis)


def expand_dims(x, /, axis=0):
    return np.expand_dims(x, axis)


def flip(x, /, *, axis=None):
    return np.flip(x, axis=axis)


def moveaxis(x, source, destination, /):
    return np.moveaxis(x, source, destination)


def permute_dims(x, /, axes):
    return np.transpose(x, tuple(axes))


def repeat(x, repeats, /, *, axis=None):
    return np.repeat(x, repeats, axis=axis)


def reshape(x, /, shape, *, copy=None):
    """``x`` with ``shape``. ``copy=False`` on a plain array that cannot be viewed
    raises, as the standard says; traced values are immutable, so every ``copy``
    setting gives the same value."""
    shape = tuple(shape)
    if isinstance(x, Box):
        return np.reshape(x, shape)
    try:
        return np.reshape(x, shape, copy=copy)   # NumPy >= 2.1 has the standard's copy=
    except ValueError as err:
        if copy is False:
            raise ValueError(f"reshape(copy=False): an array of shape {np.shape(x)} cannot "
                             f"be viewed as {shape} without a copy") from err
        raise


def roll(x, /, shift, *, axis=None):
    return np.roll(x, shift, axis=axis)


def squeeze(x, /, axis):
    """Remove the size-1 ``axis`` (required, as the standard says)."""
    axes = axis if isinstance(axis, tuple) else (axis,)
    ndim = np.ndim(x) if not isinstance(x, Box) else x.ndim
    for a in axes:
        if x.shape[a % ndim if ndim else a] != 1:
            raise ValueError(f"squeeze: axis {a} of an array of shape {x.shape} has size "
                             f"{x.shape[a]}, not 1")
    return np.squeeze(x, axis=axis)


def stack(arrays, /, *, axis=0):
    return np.stack(list(arrays), axis=axis)


def tile(x, repetitions, /):
    return np.tile(x, tuple(repetitions))


def unstack(x, /, *, axis=0):
    """The slices of ``x`` along ``axis``, as a tuple."""
    return tuple(np.moveaxis(x, axis, 0)[i] for i in range(x.shape[axis]))


def take(x, indices, /, *, axis=None):
    """Elements of ``x`` at integer ``indices`` along ``axis`` (required unless
    ``x`` is 1-D)."""
    if axis is None:
        if np.ndim(x) != 1 if not isinstance(x, Box) else x.ndim != 1:
            raise ValueError(f"take: axis is required for an array of shape {x.shape}")
        axis = 0
    return np.take(x, np.asarray(indices), axis=axis)


def take_along_axis(x, indices, /, *, axis=-1):
    return np.take_along_axis(x, np.asarray(indices), axis=axis)


FUNCTIONS = {f.__name__: f for f in (
    broadcast_arrays, broadcast_shapes, broadcast_to, concat, expand_dims, flip, moveaxis, permute_dims,
    repeat, reshape, roll, squeeze, stack, tile, unstack, take, take_along_axis)}
