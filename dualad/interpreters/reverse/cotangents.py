"""Cotangents the reverse sweep accumulates: sums, and pending scatters.

``accumulate`` adds a cotangent into a node's slot (ū_node += g). ``x[i]`` in a Python
loop would allocate a dense cotangent of ``x``'s whole shape per index, so the sweep
keeps an :class:`IndexedCotangent` per indexed array instead (``scatter_index``) and
scatters everything once, when it reaches that array. The entries nothing touched are
structural zeros (:mod:`dualad.interpreters.reverse.masked`), never multiplied into a partial.
"""
from __future__ import annotations

from heapq import heappush

import numpy as np

from ...core.tracer import PLAIN_TYPES, Box, shape_of

__all__ = ["IndexedCotangent", "accumulate", "scatter_index"]

_F64 = np.float64


def scatter_index(node, ct, cts, heap):
    """``x[idx]``'s cotangent ``ct`` kept as a pending scatter-add into ``x``'s
    :class:`IndexedCotangent`, when ``x`` is a plain array and ``ct`` a plain value without
    batch axes; returns False (having done nothing) otherwise: then getitem's own VJP
    rule runs."""
    x = node.vals[0]
    if type(x) is not np.ndarray or \
            not (type(ct) is _F64 or type(ct) in PLAIN_TYPES or not isinstance(ct, Box)) or \
            getattr(ct, "ndim", 0) != getattr(node.value, "ndim", 0):
        return False
    a = node.args[0]
    acc = cts.get(a)
    if type(acc) is not IndexedCotangent:
        dense = acc
        acc = cts[a] = IndexedCotangent(x)
        if dense is not None:
            acc.dense = dense
        elif heap is not None:
            heappush(heap, (-a.seq, a))
    acc.add(node.params["idx"], ct)
    return True


class IndexedCotangent:
    """Pending scatter-adds ``zeros(x.shape)[idx] += ct`` into one cotangent, plus a dense
    part, and the entries they touch.

    ``x[i]`` in a Python loop would otherwise allocate a dense cotangent of
    ``x``'s whole shape per index; the sweep keeps one of these per indexed
    array instead and scatters everything once, when it reaches that array.
    The entries no scatter and no dense part touched are structural zeros
    (dualad.interpreters.reverse.masked): :meth:`materialize` says which, so that they are never
    multiplied into a partial. A dense part made by a selection carries its own
    mask (``dense_touched``; None: it touches every entry).
    """

    __slots__ = ("shape", "dtype", "parts", "flat_idx", "flat_ct", "dense", "dense_touched")

    def __init__(self, x):
        self.shape = x.shape
        self.dtype = x.dtype
        self.parts = []      # (index tuple, cotangent) in general
        self.flat_idx = []   # x[i] of a 1-D x: just i and a scalar cotangent
        self.flat_ct = []
        self.dense = None
        self.dense_touched = None

    @classmethod
    def masked(cls, g, touched):
        """``g`` with structural zeros outside ``touched`` (a boolean array of ``g``'s
        shape); ``g`` itself when ``touched`` is None, of another shape or all True."""
        if touched is None or touched.shape != shape_of(g) or touched.all():
            return g
        self = cls.__new__(cls)
        self.shape = touched.shape
        self.dtype = None
        self.parts, self.flat_idx, self.flat_ct = [], [], []
        self.dense = g
        self.dense_touched = touched
        return self

    def add(self, idx, ct):
        if len(idx) == 1 and type(idx[0]) is int and len(self.shape) == 1:
            self.flat_idx.append(idx[0])
            self.flat_ct.append(ct)
        else:
            self.parts.append((idx, ct))

    def add_dense(self, g, touched=None):
        """Add ``g``, which touches ``touched`` (None: every entry)."""
        if self.dense is None:
            self.dense, self.dense_touched = g, touched
            return
        self.dense = self.dense + g
        if self.dense_touched is not None:
            self.dense_touched = None if touched is None else self.dense_touched | touched

    def merge(self, other):
        """Add the pending scatters (and dense part) of ``other`` to this one."""
        self.parts.extend(other.parts)
        self.flat_idx.extend(other.flat_idx)
        self.flat_ct.extend(other.flat_ct)
        if self.dtype is None:
            self.dtype = other.dtype
        if other.dense is not None:
            self.add_dense(other.dense, other.dense_touched)

    def materialize(self, masks=True):
        """``(cotangent, touched)``: the dense cotangent, and the boolean mask of its
        entries that are not structural zeros (None when every entry is touched, or
        when ``masks`` is False: a leaf's cotangent needs none)."""
        dense = self.dense
        if not self.parts and not self.flat_idx:
            return dense, self.dense_touched if masks else None
        dtype = np.result_type(*[d for d in (self.dtype,) if d is not None],
                               *[ct for _, ct in self.parts[:1]], *self.flat_ct[:1])
        out = np.zeros(self.shape, dtype)
        for idx, ct in self.parts:
            if np.iscomplexobj(ct) and out.dtype.kind != "c":  # a complex part after real ones
                out = out.astype(np.result_type(out, ct))
            if any(isinstance(e, np.ndarray) for e in idx):
                np.add.at(out, idx, ct)   # advanced: an entry may repeat, unbuffered add
            else:
                out[idx] += ct            # basic (x[1:], x[:, 0]): each entry once, a view
        if self.flat_idx:
            flat = np.array(self.flat_idx) % self.shape[0]
            w = np.array(self.flat_ct)
            if w.dtype.kind == "c":  # bincount weighs by reals only: the two parts apart
                out = out.astype(np.result_type(out, w), copy=False)
                out += np.bincount(flat, weights=w.real, minlength=self.shape[0]) \
                    + 1j * np.bincount(flat, weights=w.imag, minlength=self.shape[0])
            else:
                out += np.bincount(flat, weights=w.astype(float, copy=False),
                                   minlength=self.shape[0]).astype(dtype, copy=False)
        touched = None
        if masks and (dense is None or self.dense_touched is not None):
            touched = np.zeros(self.shape, bool)
            for idx, _ in self.parts:
                touched[idx] = True
            if self.flat_idx:
                touched[flat] = True
            if dense is not None:
                touched |= self.dense_touched
            if touched.all():
                touched = None
        # the dense part last: it may be traced (a reverse sweep run on dual numbers), and
        # np.add.at cannot scatter into a traced array
        return (out if dense is None else out + dense), touched


# --------------------------------------------------------------------------
# Accumulation.

def accumulate(cts, heap, node, g):
    """``cts[node] += g``; a node reached for the first time goes on the ``heap`` (when
    the sweep orders its nodes on one)."""
    prev = cts.get(node)
    if prev is None:
        if heap is not None:
            heappush(heap, (-node.seq, node))
        cts[node] = g
    elif prev.__class__ is IndexedCotangent:
        if g.__class__ is IndexedCotangent:
            prev.merge(g)
        else:
            prev.add_dense(g)
    elif g.__class__ is IndexedCotangent:
        g.add_dense(prev)
        cts[node] = g
    else:
        cts[node] = prev + g
