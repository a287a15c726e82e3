"""Rules written for one direction, applied to a batch of them.

A user's custom rule (and a ``Function``'s) is written for one tangent or
cotangent of its primal's shape. Forward mode's vector mode and batched reverse
sweeps give it ``nb`` leading batch axes; :func:`map_batch` applies the rule to
each slice and stacks the results.
"""
from __future__ import annotations

import math

from ..ops.core.shape import reshape, stack
from ..core.tracer import shape_of

__all__ = ["map_batch", "map_batch_all"]


def map_batch(rule, batched, nb, *rest, **params):
    """Apply an unbatched ``rule(v, *rest)`` to each of the leading ``nb`` batch slices
    of ``batched`` and stack the results: how rules written for one direction
    (users' custom rules) serve vector mode and batched sweeps."""
    shape = shape_of(batched)
    batch, n = shape[:nb], math.prod(shape[:nb])
    flat = reshape(batched, (n,) + shape[nb:])
    outs = [rule(flat[k], *rest, **params) for k in range(n)]
    if isinstance(outs[0], (tuple, list)):
        return type(outs[0])(None if outs[0][j] is None else
                             reshape(stack([o[j] for o in outs]), batch + shape_of(outs[0][j]))
                             for j in range(len(outs[0])))
    return None if outs[0] is None else reshape(stack(outs), batch + shape_of(outs[0]))


def map_batch_all(jvp_all, tangents, nb, ans, primals, params):
    """``jvp_all`` (written for one direction) over the batch of ``tangents``."""
    ref = next(t for t in tangents if t is not None)
    batch = shape_of(ref)[:nb]
    n = math.prod(batch)
    flat = [None if t is None else reshape(t, (n,) + shape_of(t)[nb:]) for t in tangents]
    outs = [jvp_all([None if t is None else t[k] for t in flat], ans, *primals, **params)
            for k in range(n)]
    return reshape(stack(outs), batch + shape_of(outs[0]))
