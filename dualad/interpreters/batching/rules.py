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

from ...ops.core.linear import reshape_p
from ...ops.core.indexing import getitem
from ...ops.core.shape import stack
from ...ops.core.batch_ops import loop
from ...core.rules import rule_table
from ...core.tracer import Box, shape_of
from ...core.values import looped_call
from .tracer import BatchTracer, batch_tracer_in

__all__ = [
    "lift_to", "broadcast_rule", "linear_rule", "run_rule", "batching_rule", "is_looped",
    "looped_call_at", "per_example_rule"
]

# The batching interpreter's rule tables (filled by Primitive.defbatch and def_linear).
BATCH = rule_table("batch", owner=__package__, doc=(
    "rule(args, batched, **params): the primitive on arguments of which those with "
    "batched[i] carry a leading batch axis; the output carries it (or NotImplemented)"))
LINEAR_BATCHED = rule_table("linear_batched", owner=__package__, doc=(
    "batched(batch, **params): a linear primitive's parameters for a value with the leading "
    "batch axes batch (def_linear's batched=)"))


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
    return prim(*args, **prim.rules.get(LINEAR_BATCHED)((size,), **params))


def _linear_applies(prim, batched):
    return prim.rules.get(LINEAR_BATCHED) is not None and batched[0] and not any(batched[1:])


def run_rule(prim, args, batched, params):
    """Apply ``prim``'s batching rule (declared or derived) to ``args``."""
    rule = prim.rules.get(BATCH)
    if rule is not None:
        out = rule(args, batched, **params)
        if out is not NotImplemented:     # a declared rule may decline: then the loop
            return out
        return loop(prim, args, batched, params)
    if prim.elementwise or prim.derivs is not None:
        return broadcast_rule(prim, args, batched, params)
    if _linear_applies(prim, batched):
        return linear_rule(prim, args, batched, params)
    return loop(prim, args, batched, params)


def batching_rule(prim):
    """Return the batching rule ``dualad.vmap`` applies to a primitive.

    The declared one (:meth:`Primitive.defbatch`), else the derived one: broadcasting
    for an elementwise primitive, a linear primitive's ``batched=`` parameters
    (:meth:`Primitive.def_linear`), or a loop over the batch.

    Parameters
    ----------
    prim : Primitive
        The primitive.

    Returns
    -------
    callable
        ``rule(args, batched, **params)``: ``args`` one level down, ``batched[i]`` True
        where ``args[i]`` carries the leading batch axis; the output carries it. A
        declared rule may return ``NotImplemented`` for a call it does not cover (vmap
        then loops).

    See Also
    --------
    is_looped : Whether the rule in use is the loop.
    """
    if prim.rules.get(BATCH) is not None:
        return prim.rules.get(BATCH)
    return functools.partial(_derived, prim)


def _derived(prim, args, batched, **params):
    return run_rule(prim, args, batched, params)


def is_looped(prim, batched=None):
    """Tell whether vmap computes a primitive by a loop over the batch.

    A loop (B calls of the primitive, one per example, stacked) is what vmap falls back
    to when the primitive has no declared batching rule and nothing to derive one from
    (not elementwise, no partials, no ``batched=`` parameters): correct, but B times
    the Python overhead.

    Parameters
    ----------
    prim : Primitive
        The primitive.
    batched : sequence of bool, optional
        One flag per argument, for a particular call; default: a call with the first
        argument batched.

    Returns
    -------
    bool
        True when the batching rule in use is the loop.

    See Also
    --------
    batching_rule : The rule in use.

    Examples
    --------
    >>> from dualad.extend import REGISTRY, is_looped
    >>> is_looped(REGISTRY["sin"]), is_looped(REGISTRY["matmul"])
    (False, False)
    """
    if prim.rules.get(BATCH) is not None or prim.elementwise or prim.derivs is not None:
        return False
    return not _linear_applies(prim, (True,) if batched is None else tuple(batched))


def _top_box(values):
    """The box of the highest level among ``values`` (inside tuples/lists too)."""
    top = None
    for v in values:
        b = _top_box(v) if isinstance(v, (tuple, list)) else (v if isinstance(v, Box) else None)
        if b is not None and (top is None or b._trace.level > top._trace.level):
            top = b
    return top


def _example(v, k, top):
    """Example ``k`` of ``v`` along ``top``'s batch (inside tuples/lists too)."""
    if isinstance(v, (tuple, list)):
        return type(v)(_example(e, k, top) for e in v)
    return getitem(v.val, idx=(k,)) if isinstance(v, BatchTracer) and v._trace is top else v


def looped_call_at(top, fn, args, kwargs):
    """``fn(*args, **kwargs)`` (a differentiable function) called on each example of the
    batching trace ``top`` (the top batch among the arguments, BatchTracers also inside
    tuples/lists, such as an index tuple) and stacked: the loop fallback for front-end
    functions that take a batched argument where they need a plain one (an index array:
    ``np.take(x, i)`` with a batched ``i``, ``x[i]``; the values ``np.interp`` plans
    from). The examples are registry slices, so the derivative boxes underneath stay.
    What :func:`dualad.core.values.looped_call` asks of a batching trace."""
    above = _top_box((*args, *kwargs.values()))
    name = getattr(fn, "__name__", fn)
    if above is not None and above._trace.level > top.level:
        # a transformation inside vmap (grad, jvp) sees x per example: slicing the batch
        # under its boxes is not possible from here (the call must be a primitive)
        raise NotImplementedError(
            f"vmap: {name} reads its arguments' values (an index, a count, values it "
            f"plans its work from), and here they are batched under a transformation inside "
            f"vmap (grad, jvp, ...; per-example shape {shape_of(above)}), which dualad "
            f"cannot split per example yet. Select with a mask instead, which is batched "
            f"(np.sum(np.where(np.arange(n) == i, x, 0)) for x[i]), or differentiate "
            f"outside the vmap, e.g. grad(lambda X: np.sum(vmap(f)(X))) for per-example "
            f"gradients of a separable loss, or loop over the examples")
    outs = [looped_call(fn, *_example(args, k, top),
                        **{n: _example(v, k, top) for n, v in kwargs.items()})
            for k in range(top.size)]
    if not outs:
        raise ValueError(f"vmap: {name} with a batched argument is computed by a loop over "
                         f"the examples, which needs at least one")
    if isinstance(outs[0], (tuple, list)):
        return type(outs[0])(BatchTracer(top, stack([o[j] for o in outs]))
                             for j in range(len(outs[0])))
    return BatchTracer(top, stack(outs))


def per_example_rule(rule):
    """Make a derivative rule that plans its work from values correct under vmap.

    A JVP or VJP rule that reads its arguments' values to plan its work (sort's
    permutation, a pivot order) would plan once for a whole vmap batch. Wrapped, when a
    ``BatchTracer`` is among ``w``, ``ans``, ``args`` (vmap of grad: the rule runs on
    batched values), the rule runs on each example of the top batch and the results are
    stacked; otherwise it is ``rule`` itself. The derivative boxes inside stay (the
    examples are registry slices), so the result differentiates again.

    Parameters
    ----------
    rule : callable
        A JVP or VJP rule ``rule(w, ans, *args, **params)``: ``w`` the tangent or
        cotangent, ``ans`` the primal output.

    Returns
    -------
    callable
        The wrapped rule, with ``rule``'s name and signature.

    Raises
    ------
    NotImplementedError
        When called with the batched values underneath another transformation's
        (a derivative of a derivative under vmap, ``vmap(hvp(f))``), where examples
        cannot be taken apart; the message says to loop in Python.

    See Also
    --------
    per_example : The same for functions of plain values.
    """
    @functools.wraps(rule)
    def per_example_rule(w, ans, *args, **params):
        top = None
        for v in (w, ans, *args):
            if isinstance(v, BatchTracer) and (top is None or v._trace.level > top.level):
                top = v._trace
        above = _top_box((w, ans, *args))
        if top is None and not any(batch_tracer_in(v) is not None for v in (w, ans, *args)):
            return rule(w, ans, *args, **params)
        if top is None or above._trace.level > top.level:
            raise NotImplementedError(
                f"vmap: the derivative rule {rule.__name__} plans its work from its "
                f"arguments' values, which are batched by vmap underneath another "
                f"transformation's values here (a derivative of a derivative under vmap: "
                f"vmap(hvp(f)), vmap(grad(grad(f))), ...), so it cannot be run per example. "
                f"Loop over the batch in Python for this function, or take the derivative "
                f"outside: hvp(lambda X: np.sum(vmap(f)(X)), X, V)")

        def example(v, k):
            return getitem(v.val, idx=(k,)) if isinstance(v, BatchTracer) and \
                v._trace is top else v
        outs = [per_example_rule(example(w, k), example(ans, k),
                                 *[example(a, k) for a in args], **params)
                for k in range(top.size)]
        if isinstance(outs[0], (tuple, list)):
            return type(outs[0])(None if outs[0][j] is None else
                                 BatchTracer(top, stack([o[j] for o in outs]))
                                 for j in range(len(outs[0])))
        return None if outs[0] is None else BatchTracer(top, stack(outs))
    return per_example_rule
