"""Primitives with several outputs (the decompositions of :mod:`.decomp`): ONE primitive
whose value packs its outputs along a last axis, so the tape keeps one value per node;
the public function unpacks it with reshape/getitem, which are differentiable. Rules see
the unpacked outputs and tangents/cotangents (leading batch axes allowed).
"""
from __future__ import annotations

import numpy as np

from ...core.tracer import ndim_of, shape_of
from ...core.primitive import Primitive, register
from ..core.indexing import index
from ..core.batch_ops import stacked_rule
from ..core.shape import concatenate, reshape

__all__ = ["pack", "unpack", "multi_output"]

# --- packing several outputs into one value ---------------------------------------------
def _size(core):
    return int(np.prod(core, dtype=np.int64))


def pack(parts, cores):
    """Concatenate ``parts`` (leading axes + core shape each; None = zero) along a last axis."""
    lead = None
    for p, c in zip(parts, cores):
        if p is not None:
            lead = shape_of(p)[:ndim_of(p) - len(c)]
            break
    if lead is None:
        return None
    flat = [reshape(p, lead + (_size(c),)) if p is not None else np.zeros(lead + (_size(c),))
            for p, c in zip(parts, cores)]
    return concatenate(flat, axis=-1)


def unpack(x, cores):
    """The parts of a packed value (any leading axes), reshaped to their core shapes."""
    lead = shape_of(x)[:-1]
    out, start = [], 0
    for c in cores:
        n = _size(c)
        out.append(reshape(index(x, (Ellipsis, slice(start, start + n))), lead + tuple(c)))
        start += n
    return out


def _np_pack(parts, cores):
    lead = np.shape(parts[0])[:np.ndim(parts[0]) - len(cores[0])]
    return np.concatenate([np.reshape(p, lead + (_size(c),)) for p, c in zip(parts, cores)],
                          axis=-1)


def multi_output(name, impl, cores, jvp, vjp):
    """A primitive computing ``impl(*args, **params) -> tuple`` as one packed array.

    ``cores(*shapes, **params)`` gives the core shape of each output;
    ``jvp(tangents, outs, *args, **params)`` returns the output tangents (None = zero)
    and ``vjp(cts, outs, *args, **params)`` the list of argument cotangents.
    """
    def packed_impl(*args, **params):
        return _np_pack(impl(*args, **params), cores(*[np.shape(a) for a in args], **params))

    prim = register(Primitive(name, packed_impl, cores=cores, sparsity="matrix"))

    def jvp_all(tangents, ans, *args, **params):
        cs = cores(*[shape_of(a) for a in args], **params)
        return pack(jvp(tangents, unpack(ans, cs), *args, **params), cs)

    def vjp_all(ct, ans, *args, **params):
        cs = cores(*[shape_of(a) for a in args], **params)
        return vjp(unpack(ct, cs), unpack(ans, cs), *args, **params)

    prim.def_all(jvp=jvp_all, vjp=vjp_all)
    # vmap: a decomposition of a stack is the stack of decompositions, packed along the
    # last axis behind every stack axis, so the batch axis is one more stack axis
    prim.defbatch(stacked_rule(prim))
    return prim


def _call_unpacked(prim, *args, **params):
    cs = prim.cores(*[shape_of(a) for a in args], **params)
    return unpack(prim(*args, **params), cs)
