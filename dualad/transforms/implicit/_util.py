"""Helpers shared by the implicit solves: flat vectors of pytrees, and directional
derivatives of a function of several arguments with batched (co)tangents.

Every helper is written with registry operations or :func:`dualad.jvp`/:func:`dualad.vjp`,
so it runs on boxes of any lower trace: the rules that call it differentiate again.
"""
from __future__ import annotations

import math

import numpy as np

from ..api import jvp as _jvp, vjp as _vjp
from ...core.onehot import OneHotBatch
from ...ops import concatenate, reshape
from ...core.scaled import dense
from ...core.tracer import Box, ndim_of, primal_value, shape_of
from ...core.tree import flatten

__all__ = ["Flat", "densified", "batch_shape", "push", "pull", "fold", "unfold",
           "plain"]


def densified(t):
    """A (co)tangent as an array or box: one-hot and scaled batches made dense."""
    if type(t) is OneHotBatch:
        return t.dense()
    return dense(t)


class Flat:
    """A pytree of arrays as one flat vector: ``ravel(tree)`` and ``unravel(vector)``.

    ``shapes`` are the leaves' shapes; ``n`` the total size. Built from a tree of plain
    values or boxes (only the shapes are read)."""

    __slots__ = ("shapes", "sizes", "rebuild", "n", "single")

    def __init__(self, tree):
        leaves, self.rebuild = flatten(tree)
        self.shapes = [tuple(shape_of(x)) for x in leaves]
        self.sizes = [math.prod(s) for s in self.shapes]
        self.n = sum(self.sizes)
        self.single = len(leaves) == 1 and not isinstance(tree, (tuple, list, dict))

    def ravel(self, tree, who="", what="value"):
        """The leaves of ``tree`` (same structure and shapes) concatenated, flat."""
        leaves, _ = flatten(tree)
        if len(leaves) != len(self.shapes):
            raise ValueError(f"{who}: {what} has {len(leaves)} array(s) where {len(self.shapes)} "
                             f"were expected (the structure of the solution)")
        parts = []
        for i, (x, s) in enumerate(zip(leaves, self.shapes)):
            if not isinstance(x, Box):
                x = np.asarray(x)
            if tuple(shape_of(x)) != s:
                raise ValueError(f"{who}: {what} leaf {i} has shape {tuple(shape_of(x))}, "
                                 f"expected {s} (the shape of the solution's leaf {i})")
            parts.append(reshape(x, (math.prod(s),)))
        if len(parts) == 1:
            return parts[0]
        return concatenate(parts, axis=0)

    def unravel(self, flat):
        """The tree back from a flat vector (a box or a plain array)."""
        if self.single:
            return reshape(flat, self.shapes[0])
        out, start = [], 0
        for s, k in zip(self.shapes, self.sizes):
            out.append(reshape(flat[start:start + k], s))
            start += k
        return self.rebuild(out)


def batch_shape(t, primal):
    """The leading axes ``t`` (a tangent or cotangent) has beyond ``primal``'s shape."""
    return tuple(shape_of(t)[:ndim_of(t) - ndim_of(primal)])


def push(fn, primals, tangents):
    """Σ_i ∂fn/∂primals[i] · tangents[i] (``None``: a zero tangent), the tangents with the
    same leading batch axes; ``None`` when every tangent is ``None``. One forward sweep
    (vector mode: all the batch's directions at once)."""
    idx = [i for i, t in enumerate(tangents) if t is not None]
    if not idx:
        return None
    ts = [densified(tangents[i]) for i in idx]
    batch = batch_shape(ts[0], primals[idx[0]])
    if len(batch) > 1:     # api.jvp sweeps one batch axis: fold several into one
        ts = [reshape(t, (math.prod(batch),) + tuple(shape_of(primals[i])))
              for t, i in zip(ts, idx)]

    def restricted(*sub):
        full = list(primals)
        for i, s in zip(idx, sub):
            full[i] = s
        return fn(*full)
    _, out = _jvp(restricted, tuple(primals[i] for i in idx), tuple(ts))
    if len(batch) > 1:
        out = reshape(out, batch + tuple(shape_of(out)[1:]))
    return out


def pull(fn, primals, cotangent, out_shape):
    """The cotangents ``cotangentᵀ ∂fn/∂primals[i]`` of every primal, as a list: one
    reverse sweep, all the cotangent's batch directions (its axes before ``out_shape``,
    the shape of ``fn``'s output) at once."""
    ct = densified(cotangent)
    batch = tuple(shape_of(ct)[:ndim_of(ct) - len(out_shape)])
    _, pullback = _vjp(fn, *primals)
    grads = pullback(fold(ct, batch, out_shape))
    return [unfold(g, batch, shape_of(p)) for g, p in zip(grads, primals)]


def fold(t, batch, core):
    """``t`` of shape ``batch + core`` with its batch axes folded into one (or none)."""
    if len(batch) <= 1:
        return t
    return reshape(t, (math.prod(batch),) + tuple(core))


def unfold(t, batch, core):
    if len(batch) <= 1:
        return t
    return reshape(t, tuple(batch) + tuple(core))


def plain(x):
    """The plain NumPy value under every trace."""
    return np.asarray(primal_value(x))
