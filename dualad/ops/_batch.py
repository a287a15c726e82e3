"""Shape bookkeeping shared by the batching rules (``vmap``); no primitive.

A batching rule ``rule(args, batched, **params)`` (declared with ``prim.defbatch``, see
:mod:`dualad.interpreters.batching.vmap`) receives the primitive's positional arguments one level down: a
batched argument carries the batch axis at position 0, in front of its per-example
shape; an unbatched one is the per-example value itself. The rule returns the batched
result, its batch axis at 0. Parameters (axes, shapes, subscripts, indices) describe
one example, so a rule translates them to the batched arrays:

- an axis of the example is an axis of the batched array shifted by one, after negative
  axes are read against the EXAMPLE's number of dimensions (:func:`axis_in_batch`,
  :func:`axes_in_batch`);
- primitives on stacks of core blocks (matrices, vectors, convolution windows) broadcast
  their leading stack axes as NumPy does, from the right; a batched operand whose stack
  is shorter than another operand's gets unit axes behind its batch axis, so that its
  batch axis stays in front of every stack axis (:func:`stack_shape`);
- einsum gives the batch axis a subscript letter of its own (:func:`batch_letter`).

The rules that need primitives to do this (reshapes, broadcasts, the per-example loop)
find them in :mod:`dualad.ops.core.batch_ops`.
"""
from __future__ import annotations

import string

from ..core.tracer import ndim_of, shape_of

__all__ = [
    "batch_size", "example_shape", "example_ndim", "axis_in_batch", "axes_in_batch",
    "stack_shape", "batch_letter", "einsum_in_batch"
]


def batch_size(args, batched) -> int:
    """The batch size: the leading axis of the first batched argument."""
    for a, b in zip(args, batched):
        if b:
            return shape_of(a)[0]
    raise ValueError("batching rule called with no batched argument")


def example_shape(x, is_batched) -> tuple:
    """The per-example shape of ``x`` (its shape without the batch axis, if it has one)."""
    s = shape_of(x)
    return s[1:] if is_batched else s


def example_ndim(x, is_batched) -> int:
    return ndim_of(x) - (1 if is_batched else 0)


def axis_in_batch(axis, ndim: int) -> int:
    """The example's ``axis`` (negative ones counted from the example's ``ndim``
    dimensions) as an axis of the batched array (batch axis at 0)."""
    a = int(axis)
    if not -ndim <= a < max(ndim, 1):
        raise ValueError(f"axis {a} is out of bounds for an example of dimension {ndim}")
    return (a % ndim if ndim else 0) + 1


def axes_in_batch(axes, ndim: int):
    """:func:`axis_in_batch` of every axis of a tuple (``None``: every axis of the
    example, as reductions read it); the order is kept (fft's axes are ordered)."""
    if axes is None:
        return tuple(range(1, ndim + 1))
    if not isinstance(axes, (tuple, list)):
        return (axis_in_batch(axes, ndim),)
    return tuple(axis_in_batch(a, ndim) for a in axes)


def stack_shape(args, batched, cores):
    """The shapes to reshape the batched operands of a stacked primitive to, or None
    where an operand stays as it is.

    Operand i is a stack of blocks with ``cores[i]`` core dimensions (2 for a matrix, 1
    for a vector, 0 for a scalar per block); the primitive broadcasts the stacks' leading
    axes from the right, NumPy's rule. The batch axis of a batched operand must line up
    with the batch axis of every other batched one and stand in front of every stack
    axis: it gets ``L − lead_i`` unit axes behind its batch axis, L the longest
    per-example stack. Unbatched operands broadcast against the result from the right
    as they are."""
    leads = [example_ndim(a, b) - c for a, b, c in zip(args, batched, cores)]
    longest = max(leads)
    out = []
    for a, b, lead in zip(args, batched, leads):
        if b and lead < longest:
            s = shape_of(a)
            out.append(s[:1] + (1,) * (longest - lead) + s[1:])
        else:
            out.append(None)
    return out


def batch_letter(subs, out) -> str:
    """A subscript letter that no operand's subscripts and not the output use: the batch
    axis's own letter in an einsum."""
    used = set("".join(subs) + out)
    for c in string.ascii_letters:
        if c not in used:
            return c
    raise ValueError(f"einsum: no free subscript letter for the batch axis (subscripts "
                     f"{','.join(subs)}->{out} use all 52)")


def einsum_in_batch(subs, out, batched):
    """(subs, out) of the batched einsum: the batch letter in front of every batched
    operand's subscripts and of the output's (unbatched operands are shared by every
    example, their subscripts unchanged)."""
    c = batch_letter(subs, out)
    return tuple(c + s if b else s for s, b in zip(subs, batched)), c + out
