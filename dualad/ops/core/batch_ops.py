"""Batching helpers written with the core primitives (the shape-only ones are in
:mod:`dualad.ops._batch`): stacks aligned for a broadcasting primitive, an unbatched
operand given the batch axis, and the per-example loop for the arguments a rule cannot
batch (a batched exponent of a matrix power, a batched sparse matrix).

Everything here is written with registry primitives, so a rule built from it runs on
the boxes of lower traces too (vmap inside grad, grad inside vmap).
"""
from __future__ import annotations

import numpy as np

from ...core.tracer import primal_value, shape_of
from .._batch import batch_size, stack_shape
from .indexing import getitem
from .linear import broadcast_to_p, reshape_p
from .shape import stack

__all__ = ["with_batch", "align_stacks", "stacked_rule", "loop", "looping_when"]


def with_batch(x, size):
    """An unbatched operand broadcast to ``(size,) + shape``: the same value for every
    example, where a rule needs every operand to carry the batch axis (concatenate,
    scatter)."""
    return broadcast_to_p(x, shape=(size,) + tuple(shape_of(x)))


def align_stacks(args, batched, cores):
    """The operands of a primitive on broadcast stacks of blocks (``cores[i]`` core
    dimensions for operand i), the batched ones reshaped so that their batch axes line
    up in front of every stack axis (:func:`dualad.ops._batch.stack_shape`)."""
    return [a if s is None else reshape_p(a, shape=s)
            for a, s in zip(args, stack_shape(args, batched, cores))]


def stacked_rule(prim, cores=None):
    """The batching rule of a primitive that acts on stacks of blocks and broadcasts the
    stacks (numpy.linalg's convention): the batch axis becomes one more stack axis.
    ``cores``: the core dimensions of each operand (default 2, matrices); a primitive of
    one operand needs none (its stack simply grows)."""
    def rule(args, batched, **params):
        if len(args) > 1:
            args = align_stacks(args, batched, cores or (2,) * len(args))
        return prim(*args, **params)
    rule.__name__ = rule.__qualname__ = f"{prim.name}_batch"
    return rule


def loop(prim, args, batched, params):
    """``prim`` applied example by example and the results stacked along a new axis 0
    (each output of a tuple-valued primitive too): the rule for the arguments no batched
    form of the primitive takes, and vmap's fallback for a primitive without a rule
    (B calls instead of one). Written with getitem and stack, so it differentiates like
    the primitive. An empty batch calls ``prim`` once on a stand-in example of ones, for
    the output's shape (no example exists whose value or derivative it could change)."""
    n = batch_size(args, batched)
    if n == 0:
        return _empty_batch(prim, args, batched, params)
    outs = [prim(*[getitem(a, idx=(k,)) if b else a for a, b in zip(args, batched)],
                 **params) for k in range(n)]
    if isinstance(outs[0], (tuple, list)):
        return type(outs[0])(stack([o[j] for o in outs]) for j in range(len(outs[0])))
    return stack(outs)


def _empty_batch(prim, args, batched, params):
    example = [np.ones(shape_of(a)[1:], dtype=np.result_type(primal_value(a))) if b else a
               for a, b in zip(args, batched)]
    try:
        with np.errstate(all="ignore"):
            out = prim(*example, **params)
    except Exception as e:
        raise ValueError(f"vmap: primitive '{prim.name}' is computed by a loop over the "
                         f"examples here and the batch is empty; a stand-in example to find "
                         f"the output's shape failed ({e})") from e

    def empty(o):
        return np.zeros((0,) + shape_of(o), dtype=np.result_type(primal_value(o)))
    return type(out)(empty(o) for o in out) if isinstance(out, (tuple, list)) else empty(out)


def looping_when(prim, argnums, otherwise):
    """A rule that loops over the examples when any argument in ``argnums`` is batched and
    uses the rule ``otherwise`` when not."""
    def rule(args, batched, **params):
        if any(batched[i] for i in argnums if i < len(batched)):
            return loop(prim, args, batched, params)
        return otherwise(args, batched, **params)
    rule.__name__ = rule.__qualname__ = f"{prim.name}_batch"
    rule.loops_on = tuple(argnums)
    return rule
