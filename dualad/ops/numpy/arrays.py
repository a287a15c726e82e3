"""Rearranging arrays: take, take_along_axis, repeat, tile, pad, roll, rot90, the
split family, stacking, append/insert/delete, resize, block, ...

Every function here moves, copies or drops entries, so each is a composition of
the linear structural primitives (``getitem`` and its adjoint scatter-add
``untake``, ``reshape``, ``transpose``, ``broadcast_to``, ``concatenate``):

    y = x[idx]   ẏ = ẋ[idx]   x̄ = scatter-add of ȳ at idx   (copies add up their cotangents)

No new rules, so both modes, batched tangents and every order come for free.
Where NumPy's own index logic is intricate (insert, delete, non-constant pad
modes, resize) the index map is obtained by applying the NumPy function itself to
an array of entry numbers (``np.insert(arange(n), ...)`` says where every entry
lands), which reproduces NumPy's semantics exactly. ``pad`` in ``constant`` mode
is differentiable in ``constant_values`` too.
"""
from __future__ import annotations

import math

import numpy as np

from ...core.tracer import Box, ndim_of, primal_value, shape_of, unguarded_value
from ...core.primitive import implements
from .._util import normalize_axes
from ..core.indexing import getitem, index
from ..core.shape import broadcast_to, concatenate, flip, ravel, reshape, transpose
from ...core.values import is_batched, looped_call

__all__ = [
    "take", "take_along_axis", "repeat", "tile", "resize", "pad", "roll", "rot90", "fliplr",
    "flipud", "rollaxis", "array_split", "split", "hsplit", "vsplit", "dsplit", "unstack"
]


def _axis(axis, nd, name):
    try:
        return normalize_axes(axis, nd)[0]
    except ValueError as e:
        raise ValueError(f"{name}: {e}") from None


def _along(x, axis, idx):
    """``x[..., idx, ...]`` with ``idx`` (slice, int or integer array) at ``axis``."""
    return getitem(x, idx=(slice(None),) * axis + (idx,))


def _no_out(name, out):
    if out is not None:
        raise TypeError(f"{name}: out= writes in place into an array and cannot be traced")


def _gather_flat(x, positions):
    """``ravel(x)[positions]``: positions is an integer array of any shape."""
    return getitem(ravel(x), idx=(np.asarray(positions, dtype=np.intp),))


def _take_runs(x, axis, src):
    """``x[..., src, ...]`` along ``axis``. When ``src`` is a few runs of step +1, −1 or 0
    (the index maps of pad's edge/reflect/symmetric/wrap modes), a concatenation of
    slices and broadcasts, whose reverse sweep assigns slices instead of scattering."""
    src = np.asarray(src)
    n, steps, runs, pos = src.size, np.diff(src), [], 0
    while pos < n:
        s = int(steps[pos]) if pos < n - 1 else 1
        if s not in (-1, 0, 1):
            end = pos + 1
        else:
            other = np.nonzero(steps[pos:] != s)[0]
            end = pos + 1 + (int(other[0]) if other.size else n - 1 - pos)
        runs.append((int(src[pos]), s, end - pos))
        pos = end
        if len(runs) > 8:
            return _along(x, axis, src)
    parts = []
    for first, s, k in runs:
        if s == 1 or k == 1:
            parts.append(_along(x, axis, slice(first, first + k)))
        elif s == -1:
            parts.append(_along(x, axis, slice(first, first - k if first - k >= 0 else None, -1)))
        else:
            shape = list(shape_of(x))
            shape[axis] = k
            parts.append(broadcast_to(_along(x, axis, slice(first, first + 1)), tuple(shape)))
    return concatenate(parts, axis=axis) if len(parts) > 1 else parts[0]


# --- take -------------------------------------------------------------------------------
@implements(np.take)
def take(a, indices, axis=None, out=None, mode="raise"):
    _no_out("take", out)
    if is_batched(indices):   # indices batched by vmap: x[..., i]
        if axis is None:
            a, axis = ravel(a), 0
        axis = _axis(axis, ndim_of(a), "take")
        n = shape_of(a)[axis]
        if mode == "wrap":
            indices = indices % n
        elif mode == "clip":
            indices = np.clip(indices, 0, n - 1)
        return index(a, (slice(None),) * axis + (indices,))
    if axis is None:
        a, axis = ravel(a), 0
    axis = _axis(axis, ndim_of(a), "take")
    n = shape_of(a)[axis]
    idx = np.asarray(primal_value(indices))
    if not np.issubdtype(idx.dtype, np.integer):
        raise TypeError(f"take: indices must be integers, got {idx.dtype}")
    if mode == "wrap":
        idx = idx % n
    elif mode == "clip":
        idx = np.clip(idx, 0, n - 1)
    elif np.any((idx < -n) | (idx >= n)):
        raise IndexError(f"take: index out of bounds for axis {axis} with size {n} "
                         f"(array of shape {shape_of(a)})")
    return _along(a, axis, int(idx) if idx.ndim == 0 else idx)


@implements(np.take_along_axis)
def take_along_axis(arr, indices, axis=-1):
    batched = is_batched(indices)   # by vmap: the index as an argument
    idx = indices if batched else np.asarray(primal_value(indices))
    if axis is None:
        arr, axis = ravel(arr), 0
    nd = ndim_of(arr)
    if idx.ndim != nd:
        raise ValueError(f"take_along_axis: indices (shape {idx.shape}) and arr (shape "
                         f"{shape_of(arr)}) must have the same number of dimensions")
    axis = _axis(axis, nd, "take_along_axis")
    full = tuple(idx if i == axis else
                 np.arange(n).reshape(tuple(n if j == i else 1 for j in range(nd)))
                 for i, n in enumerate(shape_of(arr)))
    return index(arr, full) if batched else getitem(arr, idx=full)


@implements(np.repeat)
def repeat(a, repeats, axis=None):
    if is_batched(repeats):   # counts batched by vmap: per example
        return looped_call(repeat, a, repeats, axis)
    if axis is None:
        a, axis = ravel(a), 0
    axis = _axis(axis, ndim_of(a), "repeat")
    src = np.repeat(np.arange(shape_of(a)[axis]), primal_value(repeats))
    return _along(a, axis, src)


@implements(np.tile)
def tile(A, reps):
    reps = (int(reps),) if np.ndim(reps) == 0 else tuple(int(r) for r in reps)
    shape = shape_of(A)
    d = max(len(reps), len(shape))
    shape = (1,) * (d - len(shape)) + shape
    reps = (1,) * (d - len(reps)) + reps
    if all(r == 1 for r in reps):
        return reshape(A, shape)
    x = reshape(A, tuple(v for s in shape for v in (1, s)))
    x = broadcast_to(x, tuple(v for r, s in zip(reps, shape) for v in (r, s)))
    return reshape(x, tuple(r * s for r, s in zip(reps, shape)))


@implements(np.resize)
def resize(a, new_shape):
    new_shape = (int(new_shape),) if np.ndim(new_shape) == 0 else tuple(int(s) for s in new_shape)
    size, new_size = math.prod(shape_of(a)), math.prod(new_shape)
    if size == 0 or new_size == 0:
        return np.zeros(new_shape, dtype=primal_value(a).dtype)
    return reshape(_gather_flat(a, np.arange(new_size) % size), new_shape)


# --- pad --------------------------------------------------------------------------------
_INDEX_MODES = ("edge", "reflect", "symmetric", "wrap")


@implements(np.pad)
def pad(array, pad_width, mode="constant", **kwargs):
    """``np.pad`` in the modes constant (differentiable in ``constant_values`` too),
    empty (zeros), edge, reflect, symmetric and wrap."""
    nd = ndim_of(array)
    widths = np.broadcast_to(np.asarray(primal_value(pad_width)), (nd, 2)).astype(np.intp)
    if np.any(widths < 0):
        raise ValueError(f"pad: index can't contain negative values (pad_width {pad_width!r})")
    if callable(mode):
        raise NotImplementedError("pad: a callable mode is not differentiable; compose it "
                                  "from concatenate instead")
    x = array
    if mode in _INDEX_MODES:
        if kwargs.get("reflect_type", "even") != "even":
            raise NotImplementedError("pad: reflect_type='odd' is not supported on traced values")
        for ax in range(nd):
            if widths[ax].any():
                src = np.pad(np.arange(shape_of(x)[ax]), tuple(widths[ax]), mode=mode,
                             **kwargs)
                x = _take_runs(x, ax, src)
        return x
    if mode not in ("constant", "empty"):
        raise NotImplementedError(f"pad: mode {mode!r} is not supported on traced values; "
                                  f"use one of constant, empty, {', '.join(_INDEX_MODES)}")
    values = kwargs.pop("constant_values", 0) if mode == "constant" else 0
    if kwargs:
        raise TypeError(f"pad: unsupported keyword arguments {sorted(kwargs)} for mode {mode!r}")
    if isinstance(values, Box):
        values = broadcast_to(values, (nd, 2)) if ndim_of(values) else values
    else:
        values = np.broadcast_to(np.asarray(values), (nd, 2))
    for ax in range(nd):
        parts = []
        for side in (0, 1):
            w = int(widths[ax, side])
            if not w:
                parts.append(None)
                continue
            v = values if ndim_of(values) == 0 else index(values, (ax, side))
            shape = list(shape_of(x))
            shape[ax] = w
            parts.append(broadcast_to(v, tuple(shape)) if isinstance(v, Box) else
                         np.full(shape, v, dtype=unguarded_value(x).dtype))
        if parts[0] is not None or parts[1] is not None:
            x = concatenate([p for p in (parts[0], x, parts[1]) if p is not None], axis=ax)
    return x


# --- roll, rot90, flips, rollaxis ----------------------------------------------------------
@implements(np.roll)
def roll(a, shift, axis=None):
    if axis is None:
        return reshape(roll(ravel(a), shift, 0), shape_of(a))
    nd = ndim_of(a)
    shifts, axes = np.broadcast_arrays(np.asarray(shift), np.asarray(axis))
    total = {}
    for s, ax in zip(shifts.ravel(), axes.ravel()):
        ax = _axis(int(ax), nd, "roll")
        total[ax] = total.get(ax, 0) + int(s)
    x = a
    for ax, s in total.items():
        n = shape_of(x)[ax]
        k = s % n if n else 0
        if k:
            x = concatenate([_along(x, ax, slice(n - k, None)), _along(x, ax, slice(0, n - k))],
                            axis=ax)
    return x


@implements(np.rot90)
def rot90(m, k=1, axes=(0, 1)):
    axes = tuple(axes)
    nd = ndim_of(m)
    if len(axes) != 2:
        raise ValueError("rot90: len(axes) must be 2")
    if axes[0] == axes[1] or abs(axes[0] - axes[1]) == nd:
        raise ValueError(f"rot90: axes {axes} must be different")
    if not (-nd <= axes[0] < nd and -nd <= axes[1] < nd):
        raise ValueError(f"rot90: axes {axes} out of range for an array of shape {shape_of(m)}")
    k %= 4
    if k == 0:
        return m
    if k == 2:
        return flip(flip(m, axes[0]), axes[1])
    perm = list(range(nd))
    perm[axes[0]], perm[axes[1]] = perm[axes[1]], perm[axes[0]]
    if k == 1:
        return transpose(flip(m, axes[1]), perm)
    return flip(transpose(m, perm), axes[1])


@implements(np.fliplr)
def fliplr(m):
    if ndim_of(m) < 2:
        raise ValueError(f"fliplr: input must be >= 2-d, got shape {shape_of(m)}")
    return flip(m, 1)


@implements(np.flipud)
def flipud(m):
    if ndim_of(m) < 1:
        raise ValueError("flipud: input must be >= 1-d")
    return flip(m, 0)


@implements(np.rollaxis)
def rollaxis(a, axis, start=0):
    n = ndim_of(a)
    axis = _axis(axis, n, "rollaxis")
    if not -n <= start <= n:
        raise np.exceptions.AxisError(f"rollaxis: start {start} out of range for {n} axes")
    start = start + n if start < 0 else start
    if axis < start:
        start -= 1
    if axis == start:
        return a
    perm = [i for i in range(n) if i != axis]
    perm.insert(start, axis)
    return transpose(a, perm)


# --- splitting -------------------------------------------------------------------------------
@implements(np.array_split)
def array_split(ary, indices_or_sections, axis=0):
    axis = _axis(axis, ndim_of(ary), "array_split")
    total = shape_of(ary)[axis]
    if np.ndim(indices_or_sections) == 0:
        sections = int(indices_or_sections)
        if sections <= 0:
            raise ValueError("array_split: number sections must be larger than 0")
        each, extra = divmod(total, sections)
        sizes = [0] + extra * [each + 1] + (sections - extra) * [each]
        points = np.cumsum(sizes).tolist()
    else:
        points = [0] + [int(i) for i in indices_or_sections] + [total]
    return [_along(ary, axis, slice(points[i], points[i + 1])) for i in range(len(points) - 1)]


@implements(np.split)
def split(ary, indices_or_sections, axis=0):
    if np.ndim(indices_or_sections) == 0:
        n = shape_of(ary)[_axis(axis, ndim_of(ary), "split")]
        if n % int(indices_or_sections):
            raise ValueError("split: array split does not result in an equal division")
    return array_split(ary, indices_or_sections, axis)


@implements(np.hsplit)
def hsplit(ary, indices_or_sections):
    if ndim_of(ary) == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return split(ary, indices_or_sections, 1 if ndim_of(ary) > 1 else 0)


@implements(np.vsplit)
def vsplit(ary, indices_or_sections):
    if ndim_of(ary) < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return split(ary, indices_or_sections, 0)


@implements(np.dsplit)
def dsplit(ary, indices_or_sections):
    if ndim_of(ary) < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return split(ary, indices_or_sections, 2)


@implements(np.unstack)
def unstack(x, /, *, axis=0):
    axis = _axis(axis, ndim_of(x), "unstack")
    return tuple(_along(x, axis, i) for i in range(shape_of(x)[axis]))



