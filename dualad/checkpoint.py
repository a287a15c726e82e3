"""Gradient checkpointing: trade recomputation for memory.

``checkpoint(f)(*args)`` computes ``f`` without recording its intermediates on
the tape; only the inputs and the output are kept. When the backward sweep
reaches it, ``f``'s forward is recomputed under a fresh tape and swept back:

    memory  O(inputs + output)   instead of O(every intermediate of f)
    time    one extra forward evaluation of f

Forward mode goes straight through (``jvp`` of ``f``), so checkpointed code
still composes with every other transformation, to any order.
"""
from __future__ import annotations

import functools

import numpy as np

from .api import jvp, vjp
from .tracer import shape_of
from .primitive import Primitive
from .vmap import vmap

__all__ = ["checkpoint"]


def checkpoint(f):
    """Wrap ``f`` (a function of arrays returning one array) to be recomputed in backward."""
    def impl(*args):
        return f(*args)

    def vjp_all(ct, ans, *args):
        _, pullback = vjp(f, *args)
        return pullback(ct)

    def jvp_all(tangents, ans, *args):
        ref = next(t for t in tangents if t is not None)
        i = tangents.index(ref)
        batch = shape_of(ref)[:len(shape_of(ref)) - len(shape_of(args[i]))]
        full = [t if t is not None else np.zeros(batch + shape_of(a)) for t, a in
                zip(tangents, args)]
        return jvp(f, tuple(args), tuple(full))[1]

    prim = Primitive(f"checkpoint({getattr(f, '__name__', 'f')})", impl)
    prim.vjp_all = vjp_all
    prim.jvp_all = jvp_all
    # under vmap, f itself is mapped (one batched pass), not called once per example
    prim.defbatch(lambda args, batched: vmap(f, in_axes=tuple(0 if b else None
                                                             for b in batched))(*args))

    @functools.wraps(f)
    def wrapped(*args):
        return prim(*args)

    wrapped.primitive = prim
    return wrapped
