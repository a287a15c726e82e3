"""Indexing: ``getitem`` and its adjoint ``untake`` (a scatter-add).

    getitem:  y = x[idx]          ṫ_y = ṫ_x[idx]           ū_x = untake(ū_y, idx, x.shape)
    untake:   y = 0[idx] += u     ṫ_y = untake(ṫ_u)        ū_u = ū_y[idx]

Indices are normalized once (``Ellipsis`` expanded, boolean masks turned into
integer arrays) so that batch axes can be put in front of any index. The
reverse sweep accumulates ``untake`` of many small indices sparsely (see
:class:`dualad.interpreters.reverse.cotangents.IndexedCotangent`), so ``x[i]`` in a Python loop costs
O(1), not O(x.size), per index.
"""
from __future__ import annotations

import math

import numpy as np

from ...core.tracer import Box, concrete, ndim_of, shape_of, unguarded_value
from ...core.primitive import Primitive, register, sample
from ...core.values import is_batched, staged_only
from ...core.batch_axes import batch_ndim
from .._util import plain_argument
from .linear import transpose_p
from .gather import traced_index   # an index batched by vmap: the index as an argument

__all__ = [
    "batch_index_entry", "normalize_index", "batch_index", "getitem", "untake",
    "take_batched", "untake_batched", "index"
]


def batch_index_entry(idx):
    """Whether the index ``idx`` holds a value batched by vmap (a BatchTracer)."""
    if isinstance(idx, tuple):
        return any(isinstance(e, Box) and is_batched(e) for e in idx)
    return isinstance(idx, Box) and is_batched(idx)


def _is_advanced(entry):
    return isinstance(entry, np.ndarray)


def _staged_index(e):
    """``e``, an integer or boolean index that only a dualad.jit trace holds (an index
    array passed to the jitted function, a mask ``x > 0`` it computed), as its value read
    with a guard, so a replay with another index traces again: an int guard for a scalar
    integer, the whole value for an array or mask. Any other ``e`` is returned as it is."""
    if not staged_only(e):
        return e
    kind = np.result_type(unguarded_value(e)).kind
    if kind in "iu" and not shape_of(e):
        return concrete(e, "int")
    return plain_argument("getitem", "index", e) if kind in "iub" else e


def normalize_index(idx, shape):
    """``idx`` as a tuple of int, slice, None and integer arrays, no Ellipsis."""
    if not isinstance(idx, tuple):
        idx = (idx,)
    out = []
    for e in idx:
        if isinstance(e, Box):
            e = _staged_index(e)
        if isinstance(e, Box):
            plain_argument("getitem", "index", e)     # a vmap-batched index: its own error
            raise TypeError(f"getitem: an index may not be a traced value (array of shape "
                            f"{shape_of(e)} indexed by a traced value); indices are not "
                            f"differentiable: pass plain integers or arrays")
        if isinstance(e, list):
            e = np.asarray(e) if e else np.zeros(0, np.intp)   # x[[]]: NumPy's empty index
        elif (not isinstance(e, (int, slice, np.ndarray, np.generic)) and e is not None
              and e is not Ellipsis and hasattr(e, "__array_namespace__")):  # array-API array
            e = np.asarray(e)
        if isinstance(e, np.ndarray) and e.dtype == bool:
            if e.ndim == 0:
                raise IndexError("getitem: a 0-d boolean index is not differentiable")
            out.extend(np.nonzero(e))
            continue
        if isinstance(e, np.ndarray) and not np.issubdtype(e.dtype, np.integer):
            raise IndexError(f"getitem: index arrays must be integer or boolean, got {e.dtype}")
        if isinstance(e, (np.integer,)):
            e = int(e)
        out.append(e)
    consumed = sum(0 if e is None or e is Ellipsis else 1 for e in out)
    ndim = len(shape)
    ellipses = [k for k, e in enumerate(out) if e is Ellipsis]  # identity: arrays compare
    if len(ellipses) > 1:
        raise IndexError("getitem: an index can only have a single ellipsis ('...')")
    if ellipses:
        i = ellipses[0]
        out[i:i + 1] = [slice(None)] * (ndim - consumed)
    elif consumed > ndim:
        raise IndexError(f"getitem: too many indices for an array of shape {tuple(shape)}")
    return tuple(out)


def batch_index(idx, nb):
    """The index ``idx`` with ``nb`` batch axes kept in front."""
    return (slice(None),) * nb + idx if nb else idx


def _advanced_moved(idx):
    """Number of advanced-index result axes NumPy moves to the front once a
    slice precedes them (non-adjacent advanced indices), else 0."""
    pos = [i for i, e in enumerate(idx) if _is_advanced(e) or
           (isinstance(e, int) and any(_is_advanced(f) for f in idx))]
    if not pos or pos[-1] - pos[0] + 1 == len(pos):
        return 0
    return np.broadcast_shapes(*[np.shape(idx[i]) for i in pos]).__len__()


getitem = register(Primitive("getitem", lambda x, idx: x[idx], linear=True, sparsity="structural",
                             sympy=lambda sp, x, idx: x[idx]))


def _untake_impl(u, idx, shape):
    dtype = np.result_type(u)
    if any(_is_advanced(e) for e in idx):
        if dtype == np.float64:
            return _scatter_by_bincount(u, idx, shape)
        out = np.zeros(shape, dtype=dtype)
        np.add.at(out, idx, u)
        return out
    out = np.zeros(shape, dtype=dtype)
    out[idx] = u
    return out


def _scatter_by_bincount(u, idx, shape):
    """``np.add.at(zeros(shape), idx, u)`` for float64 ``u``, by ``np.bincount`` over the
    targets' flat positions: the same additions in the same order (each target's sum
    starts at 0 and adds u's entries in C order, as ``ufunc.at`` does), so bitwise the
    same, without ``ufunc.at``'s per-element dispatch (100 µs → 12 µs for a (20, 102)
    cotangent into (20, 20))."""
    size = int(math.prod(shape))
    hit = _POSITIONS.get(id(idx))
    if hit is not None and hit[0] is idx and hit[1] == shape:
        pos = hit[2]        # a jitted program's constant index: its targets computed once
    else:
        pos = np.arange(size).reshape(shape)[idx]
        if pos.size <= _POSITIONS_MAX_SIZE:
            if len(_POSITIONS) >= 64:
                _POSITIONS.clear()
            _POSITIONS[id(idx)] = (idx, shape, pos)   # (idx kept: its id is not reused)
    if pos.size == 0:     # (np.bincount of nothing is int64, whatever the weights)
        return np.zeros(shape)
    w = np.broadcast_to(u, pos.shape).ravel()
    return np.bincount(pos.ravel(), weights=w, minlength=size).reshape(shape)


# flat target positions of recent scatter indices (small ones; a dict operation is atomic,
# and an entry is used only for the very index object it was computed from)
_POSITIONS: dict = {}
_POSITIONS_MAX_SIZE = 1 << 16


untake = register(Primitive("untake", _untake_impl, linear=True, sparsity="untake"))


def take_batched(t, idx, nb):
    """``t[idx]`` applied behind ``nb`` batch axes of ``t``."""
    y = getitem(t, idx=batch_index(idx, nb))
    k = _advanced_moved(idx) if nb else 0
    if k:   # NumPy put the advanced index's axes first: the batch axes go back in front
        nd = ndim_of(y)
        y = transpose_p(y, axes=tuple(range(k, k + nb)) + tuple(range(k))
                        + tuple(range(k + nb, nd)))
    return y


def untake_batched(u, idx, shape, nb):
    """Scatter-add ``u`` (batch + ``x[idx]``'s shape) into zeros of batch + shape."""
    k = _advanced_moved(idx) if nb else 0
    if k:   # the batch axes go behind the advanced index's k axes, where x[idx] has them
        nd = ndim_of(u)
        u = transpose_p(u, axes=tuple(range(nb, nb + k)) + tuple(range(nb))
                        + tuple(range(nb + k, nd)))
    return untake(u, idx=batch_index(idx, nb), shape=shape_of(u)[:nb] + tuple(shape)
                  if not k else shape_of(u)[k:k + nb] + tuple(shape))


getitem.defjvp(lambda t, ans, x, idx: take_batched(t, idx, batch_ndim(t, x)))
getitem.defvjp(lambda ct, ans, x, idx:
               untake_batched(ct, idx, shape_of(x), batch_ndim(ct, ans)))
untake.defjvp(lambda t, ans, u, idx, shape:
              untake_batched(t, idx, shape, batch_ndim(t, u)))
untake.defvjp(lambda ct, ans, u, idx, shape: take_batched(ct, idx, batch_ndim(ct, ans)))


# vmap: the example's index behind a full slice over the batch axis. ``take_batched`` and
# ``untake_batched`` keep the batch axis in front where NumPy moves the advanced index's
# axes there (advanced indices separated by a slice or None). The index is normalized
# against the example's shape first (Ellipsis, masks, lists), in case a caller passed it raw.
getitem.defbatch(lambda args, batched, idx:
                 take_batched(args[0], normalize_index(idx, shape_of(args[0])[1:]), 1))
untake.defbatch(lambda args, batched, idx, shape:
                untake_batched(args[0], normalize_index(idx, shape), shape, 1))


def index(x, idx):
    """``x[idx]`` for a traced ``x`` (what ``Box.__getitem__`` calls)."""
    if type(idx) is int:  # the scalar loop x[i]: skip normalization
        return getitem(x, idx=(idx,))
    if batch_index_entry(idx):   # an index batched by vmap: the index as an argument
        return traced_index(x, idx, normalize_index)
    return getitem(x, idx=normalize_index(idx, shape_of(x)))

getitem.samples = [sample((4,), idx=(1,)), sample((3, 4), idx=(slice(0, 2), np.array([0, 3, 3]))),
                   sample((3, 4), idx=(np.array([2, 0, 2]),)),
                   sample((3, 4), idx=(slice(None), None, 2))]
untake.samples = [sample((3,), idx=(np.array([0, 2, 0]),), shape=(4,)),
                  sample((2, 4), idx=(slice(0, 2),), shape=(3, 4))]
