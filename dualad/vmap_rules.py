"""Batching rules: the derived ones (the declared ones sit beside their primitives).

A batching rule is ``rule(args, batched, **params) -> out``: ``args`` the primitive's
positional arguments one level down, ``batched[i]`` True when ``args[i]`` carries the
leading batch axis, ``out`` (each element of a tuple output) carrying it. Written with
registry operations, so they run on lower traces' boxes.

Derived rules (:func:`batching_rule`), in order:

1. the rule the primitive declares (``prim.defbatch``);
2. elementwise primitives (``prim.elementwise``, or partials ``prim.derivs``): the
   operands' ranks are aligned and the primitive broadcasts. A batched operand of
   per-example rank r below the largest per-example rank R gets R − r unit axes after
   its batch axis, so its example axes stay right-aligned with everyone else's; an
   unbatched operand broadcasts as it is (its rank is at most R, so it never reaches the
   batch axis): f(x_b, y) for every b at once;
3. a linear primitive declared with ``def_linear(..., batched=fn)``: ``fn((B,),
   **params)`` gives the parameters that apply it behind one leading axis (sum's axes
   shifted by one, reshape's shape with B in front), the same callable forward mode uses
   for a batch of tangents;
4. otherwise a loop: the primitive on each example ``args[i][b]``, the results stacked.
   Always correct, B calls instead of one (:func:`is_looped`).
"""
from __future__ import annotations

import functools

from .ops.core.linear import reshape_p
from .ops.core.indexing import getitem
from .ops.core.shape import stack
from .tracer import shape_of


def _batch_size(args, batched):
    return next(shape_of(a)[0] for a, b in zip(args, batched) if b)


def lift_to(x, rank):
    """A batched ``x`` (batch axis 0) with unit axes inserted after the batch axis so its
    per-example rank is at least ``rank``."""
    s = shape_of(x)
    k = rank - (len(s) - 1)
    if k <= 0:
        return x
    return reshape_p(x, shape=s[:1] + (1,) * k + s[1:])


def broadcast_rule(prim, args, batched, params):
    """Derived rule of an elementwise primitive: align ranks, then broadcast."""
    ranks = [len(shape_of(a)) - b for a, b in zip(args, batched)]
    top = max(ranks)
    if any(b and r < top for r, b in zip(ranks, batched)):
        args = [lift_to(a, top) if b else a for a, b in zip(args, batched)]
    return prim(*args, **params)


def linear_rule(prim, args, batched, params):
    """Derived rule of a linear primitive declared with ``def_linear(batched=...)``."""
    size = shape_of(args[0])[0]
    return prim(*args, **prim.linear_batched((size,), **params))


def loop_rule(prim, args, batched, params):
    """The fallback: ``prim`` on each example, stacked along a new axis 0."""
    size = _batch_size(args, batched)
    outs = []
    for k in range(size):
        example = [getitem(a, idx=(k,)) if b else a for a, b in zip(args, batched)]
        outs.append(prim(*example, **params))
    if not outs:
        raise ValueError(f"vmap: primitive '{prim.name}' has no batching rule and the batch "
                         f"is empty; it is computed by a loop over the examples, which needs "
                         f"at least one to know the output's shape")
    if isinstance(outs[0], (tuple, list)):
        return type(outs[0])(stack([o[j] for o in outs]) for j in range(len(outs[0])))
    return stack(outs)


def _linear_applies(prim, batched):
    return prim.linear_batched is not None and batched[0] and not any(batched[1:])


def run_rule(prim, args, batched, params):
    """Apply ``prim``'s batching rule (declared or derived) to ``args``."""
    rule = prim.batch
    if rule is not None:
        return rule(args, batched, **params)
    if prim.elementwise or prim.derivs is not None:
        return broadcast_rule(prim, args, batched, params)
    if _linear_applies(prim, batched):
        return linear_rule(prim, args, batched, params)
    return loop_rule(prim, args, batched, params)


def batching_rule(prim):
    """``prim``'s batching rule ``rule(args, batched, **params)``: the declared one, else
    the derived one (broadcasting, a linear primitive's ``batched=`` parameters, a loop)."""
    if prim.batch is not None:
        return prim.batch
    return functools.partial(_derived, prim)


def _derived(prim, args, batched, **params):
    return run_rule(prim, args, batched, params)


def is_looped(prim, batched=None):
    """Whether vmap computes ``prim`` by a loop over the batch (B calls): no declared
    rule and nothing to derive one from. ``batched`` (one flag per argument) asks about
    a particular call; without it, about a call with the first argument batched."""
    if prim.batch is not None or prim.elementwise or prim.derivs is not None:
        return False
    return not _linear_applies(prim, (True,) if batched is None else tuple(batched))
