"""Indexing with index arrays that are values of a trace: ``x[i]`` where ``i`` is batched
by vmap (``x[np.argmax(x)]``, an embedding lookup ``E[token]`` with a batch of tokens).

``getitem`` keeps its index as a parameter, which no trace looks into; an index batched
by vmap must instead be an ARGUMENT, so that the batching trace sees it (and slices it
with the rest of the batch) while a tape or a forward sweep above it records the lookup
as usual. Two primitives do that, each the other's transpose:

    gather(x, *arrays; template)          y = x[idx]
    scatter(u, *arrays; template, shape)  zeros(shape)[idx] += u      (np.add.at)

``idx`` is ``template`` with its slots filled by ``arrays`` (the traced index arrays, in
order); the other entries (ints, slices, None, plain arrays) are kept in the template.
Both are linear in their first argument and their rules are each other:

    gather   ṫ ↦ gather(ṫ)       ū ↦ scatter(ū, shape=x.shape)
    scatter  ṫ ↦ scatter(ṫ)      ū ↦ gather(ū)

A tangent's leading batch axes (vector mode) are kept in front by slices before the
index; NumPy moves the axes of non-adjacent advanced indices to the front, which a
transpose undoes (as :func:`dualad.ops.core.indexing.take_batched`). Under vmap each is
one call for the whole batch (the batching rules below) where the index block allows,
else the loop over the examples.
"""
from __future__ import annotations

import numpy as np

from ...core.batch_axes import batch_ndim
from .linear import reshape_p, transpose_p
from ...core.primitive import Primitive
from ...core.tracer import Box, ndim_of, shape_of

__all__ = ["Slot", "gather_p", "scatter_p", "gather_batched", "scatter_batched", "traced_index"]


class Slot:
    """Where the index array ``arrays[j]`` goes in a template."""

    __slots__ = ("j",)

    def __init__(self, j):
        self.j = j

    def __repr__(self):
        return f"Slot({self.j})"


def _fill(template, arrays):
    return tuple(arrays[e.j] if type(e) is Slot else e for e in template)


def _moved(template, arrays):
    """Number of advanced-index axes NumPy puts first (non-adjacent advanced indices)."""
    def advanced(e):
        return type(e) is Slot or isinstance(e, np.ndarray)
    pos = [i for i, e in enumerate(template) if advanced(e) or
           (isinstance(e, int) and any(advanced(f) for f in template))]
    if not pos or pos[-1] - pos[0] + 1 == len(pos):
        return 0
    shapes = [shape_of(arrays[template[i].j]) if type(template[i]) is Slot
              else np.shape(template[i]) for i in pos]
    return len(np.broadcast_shapes(*shapes))


def _gather_impl(x, *arrays, template):
    return x[_fill(template, arrays)]


def _scatter_impl(u, *arrays, template, shape):
    out = np.zeros(shape, dtype=np.result_type(u))
    np.add.at(out, _fill(template, arrays), u)
    return out


gather_p = Primitive("gather", _gather_impl, linear=True, sparsity="structural")
scatter_p = Primitive("scatter", _scatter_impl, linear=True, sparsity="untake")


def _front(y, k, nb):
    """Batch axes back in front of the k advanced axes NumPy put first."""
    if not (k and nb):
        return y
    nd = ndim_of(y)
    return transpose_p(y, axes=tuple(range(k, k + nb)) + tuple(range(k)) +
                       tuple(range(k + nb, nd)))


def _behind(u, k, nb):
    """The inverse of :func:`_front`: batch axes behind the k advanced axes."""
    if not (k and nb):
        return u
    nd = ndim_of(u)
    return transpose_p(u, axes=tuple(range(nb, nb + k)) + tuple(range(nb)) +
                       tuple(range(nb + k, nd)))


def gather_batched(t, arrays, template, nb):
    """``t[idx]`` behind ``nb`` leading batch axes of ``t``."""
    y = gather_p(t, *arrays, template=(slice(None),) * nb + template)
    return _front(y, _moved(template, arrays), nb)


def scatter_batched(u, arrays, template, shape, nb):
    """Scatter-add ``u`` (batch + ``x[idx]``'s shape) into zeros of batch + ``shape``."""
    u = _behind(u, _moved(template, arrays), nb)
    batch = shape_of(u)[:nb] if not (_moved(template, arrays) and nb) else \
        shape_of(u)[_moved(template, arrays):_moved(template, arrays) + nb]
    return scatter_p(u, *arrays, template=(slice(None),) * nb + template,
                     shape=tuple(batch) + tuple(shape))


def _gather_jvp(t, ans, x, *arrays, template):
    return gather_batched(t, arrays, template, batch_ndim(t, x))


def _gather_vjp(ct, ans, x, *arrays, template):
    return scatter_batched(ct, arrays, template, shape_of(x), batch_ndim(ct, ans))


def _scatter_jvp(t, ans, u, *arrays, template, shape):
    return scatter_batched(t, arrays, template, shape, batch_ndim(t, u))


def _scatter_vjp(ct, ans, u, *arrays, template, shape):
    return gather_batched(ct, arrays, template, batch_ndim(ct, ans))


gather_p.defjvp(_gather_jvp)
gather_p.defvjp(_gather_vjp)
scatter_p.defjvp(_scatter_jvp)
scatter_p.defvjp(_scatter_vjp)


def traced_index(x, idx, normalize):
    """``x[idx]`` where entries of ``idx`` are traced integer arrays (batched by vmap):
    the traced entries become arguments of :data:`gather_p`. ``normalize(idx, shape)`` is
    getitem's index normalization (Ellipsis, lists, booleans), run with plain stand-ins
    of the traced entries' per-example shapes."""
    entries = idx if isinstance(idx, tuple) else (idx,)
    arrays, stand_ins = [], []
    plain = []
    for e in entries:
        if isinstance(e, Box):
            if e.dtype.kind == "b":
                raise IndexError(f"vmap: a boolean mask index batched by vmap (per-example "
                                 f"shape {e.shape}) selects a different number of entries "
                                 f"per example; write np.where(mask, x, 0) instead of x[mask]")
            if e.dtype.kind not in "iu":
                raise IndexError(f"getitem: index arrays must be integers, got a traced "
                                 f"{e.dtype} of shape {e.shape}; cast it (x.astype(int))")
            stand = np.zeros(e.shape, dtype=np.intp)
            arrays.append(e)
            stand_ins.append(stand)
            plain.append(stand)
        else:
            plain.append(e)
    norm = normalize(tuple(plain), shape_of(x))
    template = []
    for e in norm:
        j = next((j for j, s in enumerate(stand_ins) if e is s), None)
        template.append(Slot(j) if j is not None else e)
    return gather_p(x, *arrays, template=tuple(template))


# --- batching rules ------------------------------------------------------------------
# One gather for the whole batch. The index arrays' per-example shapes broadcast to S
# (rank R); a batched array (B, s_j) gets unit axes after B so that the batch broadcasts
# to (B,) + S. Where x (or u) carries the batch too, the batch axis is indexed by
# arange(B) as one more advanced index, in front of the others: only when they start
# the template and are adjacent (else NumPy would move them): otherwise the rule returns
# NotImplemented, and vmap loops over the examples.

def _advanced_rank(template, arrays, batched):
    shapes = [shape_of(arrays[e.j])[1 if batched[e.j] else 0:] if type(e) is Slot
              else np.shape(e) for e in template
              if type(e) is Slot or isinstance(e, (np.ndarray, int))]
    return len(np.broadcast_shapes(*shapes))


def _lifted(arrays, batched, rank):
    """Batched index arrays with unit axes after the batch axis up to per-example rank."""
    out = []
    for a, b in zip(arrays, batched):
        s = shape_of(a)
        k = rank - (len(s) - 1)
        out.append(reshape_p(a, shape=s[:1] + (1,) * k + s[1:]) if b and k > 0 else a)
    return out


def _leads(template):
    """Whether the advanced entries are adjacent and start the template."""
    adv = [i for i, e in enumerate(template) if type(e) is Slot or isinstance(e, (np.ndarray,
                                                                               int))]
    return bool(adv) and adv[0] == 0 and adv[-1] + 1 == len(adv)


def _batch_arange(size, rank):
    return np.arange(size).reshape((size,) + (1,) * rank)


def _gather_batch(args, batched, template):
    x, arrays, ab = args[0], list(args[1:]), batched[1:]
    size = next(shape_of(a)[0] for a, b in zip(args, batched) if b)
    rank = _advanced_rank(template, arrays, ab)
    per_example = [a if not b else _Shape(shape_of(a)[1:]) for a, b in zip(arrays, ab)]
    if not batched[0]:
        y = gather_p(x, *_lifted(arrays, ab, rank), template=template)
        if _moved(template, per_example):
            return y                          # NumPy put the advanced axes, batch first, first
        first = next(i for i, e in enumerate(template) if type(e) is Slot or
                     isinstance(e, (np.ndarray, int)))
        pos = sum(1 for e in template[:first] if e is None or isinstance(e, slice))
        return _move_to_front(y, pos)
    if not _leads(template):
        return NotImplemented                 # vmap's loop over the examples
    full = (_batch_arange(size, rank),) + template
    return gather_p(x, *_lifted(arrays, ab, rank), template=full)


def _scatter_batch(args, batched, template, shape):
    u, arrays, ab = args[0], list(args[1:]), batched[1:]
    size = next(shape_of(a)[0] for a, b in zip(args, batched) if b)
    if not _leads(template):
        return NotImplemented                 # vmap's loop over the examples
    rank = _advanced_rank(template, arrays, ab)
    if not batched[0]:
        from .linear import broadcast_to_p
        u = broadcast_to_p(u, shape=(size,) + shape_of(u))
    full = (_batch_arange(size, rank),) + template
    return scatter_p(u, *_lifted(arrays, ab, rank), template=full,
                     shape=(size,) + tuple(shape))


class _Shape:
    """A stand-in with only a shape (for :func:`_moved` on per-example shapes)."""

    __slots__ = ("shape",)

    def __init__(self, shape):
        self.shape = shape


def _move_to_front(y, pos):
    if pos == 0:
        return y
    nd = ndim_of(y)
    return transpose_p(y, axes=(pos,) + tuple(i for i in range(nd) if i != pos))


gather_p.defbatch(_gather_batch)
scatter_p.defbatch(_scatter_batch)
