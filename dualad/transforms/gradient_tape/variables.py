"""Trainable variables for :class:`~dualad.transforms.gradient_tape.GradientTape`: the
imperative :class:`dualad.autograd.Variable` with ``requires_grad=True``.

TensorFlow watches a trainable ``tf.Variable`` when it is read inside the block. Such a
Variable records on dualad's imperative tape by itself (the same reverse engine, a lower
level than any GradientTape), so with ``watch_accessed_variables=True`` (the default) a
GradientTape differentiates with respect to it by sweeping that tape, through
:func:`dualad.autograd.grad`, from the imperative value under each target:

    ∂y/∂w = Σ_k ȳ_kᵀ ∂y_k/∂w   (the tape's watched arrays held fixed, as in TensorFlow)

TensorFlow records only what runs inside the block; the imperative tape records always. So
every operation between the target and the Variables must have been recorded while this
GradientTape was recording (checked by creation order, ``Var.seq``): one computed before the
block, after it or in ``stop_recording`` raises instead of being differentiated where
TensorFlow would treat it as a constant.
"""
from __future__ import annotations

import numpy as np

from ...core.tracer import Box, shape_of
from ...core.tree import flatten, flatten_like
from ...interpreters.reverse.tape import Var

__all__ = ["is_trainable", "now", "variable_seeds", "variable_gradients", "jacobian_target",
           "variable_jacobians"]


_VARIABLE = []   # [dualad.autograd.Variable], imported on first use


def _variable_type():
    if not _VARIABLE:
        from ...autograd import Variable   # (the imperative face: loaded with dualad)
        _VARIABLE.append(Variable)
    return _VARIABLE[0]


def is_trainable(x):
    """Whether ``x`` is a leaf :class:`dualad.autograd.Variable` with ``requires_grad``."""
    variable = _variable_type()
    return isinstance(x, variable) and x.requires_grad and x.is_leaf


def now():
    """A point in the creation order of tape nodes (``Var.seq``): the next node is later."""
    return _variable_type()(0.0).seq


def _imperative_under(y):
    """The imperative Variable that ``y`` is or wraps (its value one level down, the tapes'
    boxes stripped), or None."""
    variable = _variable_type()
    while isinstance(y, Box):
        if isinstance(y, variable):
            return y if y.requires_grad else None
        y = y._inner
    return None


def variable_seeds(tape, api, target, output_gradients):
    """``(outputs, seeds)``: the imperative Variable under each leaf of ``target`` (those
    that have one) and its seed (``output_gradients``'s leaf, or ones), checked: the seed's
    shape, and that what leads to the Variables was recorded while the tape recorded."""
    leaves, _ = flatten(target)
    given = (flatten_like(target, output_gradients, api, "output_gradients",
                          like_name="target") if output_gradients is not None
             else [None] * len(leaves))
    outputs, seeds = [], []
    for k, (y, g) in enumerate(zip(leaves, given)):
        inner = _imperative_under(y)
        if inner is None:
            continue
        if g is None:
            g = np.ones(shape_of(inner), inner.dtype)
        elif not isinstance(g, Box) and np.shape(g) != shape_of(inner):
            raise ValueError(f"{api}: output_gradients (leaf {k}) has shape {np.shape(g)} "
                             f"but the target has shape {shape_of(inner)}; pass one of the "
                             f"target's shape")
        outputs.append(inner)
        seeds.append(g)
    _check_recorded(tape, api, outputs)
    return outputs, seeds


def variable_gradients(outputs, seeds, variables, retain):
    """``{id(w): gradient or None}`` for the trainable Variables ``variables``: one sweep of
    the imperative tape from ``outputs`` (:func:`variable_seeds`)."""
    from ...autograd import grad
    if not outputs:
        return {}
    found = grad(outputs, list(variables), grad_outputs=seeds, retain_graph=retain,
                 allow_unused=True)
    return {id(w): g for w, g in zip(variables, found)}


def jacobian_target(tape, api, target):
    """The imperative Variable under the one value ``target`` (checked as
    :func:`variable_seeds` checks), or None."""
    inner = _imperative_under(target)
    if inner is not None:
        _check_recorded(tape, api, [inner])
    return inner


def variable_jacobians(inner, variables, retain):
    """``{id(w): J}``, ``J`` of shape ``inner.shape + w.shape`` (None if unconnected): the
    identity's rows as one batch of seeds of the imperative tape's sweep
    (:func:`dualad.autograd.grad` with ``is_grads_batched``), in blocks of rows beyond
    ``sweeps.SEED_BYTES``."""
    from ...autograd import grad
    from .sweeps import blocks, identity_rows
    if inner is None:
        return {}
    tshape = shape_of(inner)
    m = int(np.prod(tshape, dtype=np.int64))
    dtype = np.dtype(inner.dtype)
    if m == 0:
        return {id(w): np.zeros(tshape + shape_of(w), np.dtype(w.dtype)) for w in variables}
    parts = [[] for _ in variables]
    spans = blocks(m, m * dtype.itemsize)
    for i, (a, b) in enumerate(spans):
        found = grad([inner], list(variables), grad_outputs=[identity_rows(a, b, tshape, dtype)],
                     retain_graph=retain if i == len(spans) - 1 else True, allow_unused=True,
                     is_grads_batched=True)
        for part, g in zip(parts, found):
            part.append(g)
    out = {}
    for w, part in zip(variables, parts):
        if all(g is None for g in part):
            out[id(w)] = None
            continue
        rows = [np.zeros((b - a,) + shape_of(w), np.dtype(w.dtype)) if g is None else g
                for g, (a, b) in zip(part, spans)]
        out[id(w)] = np.reshape(np.concatenate(rows), tshape + shape_of(w))
    return out


def _check_recorded(tape, api, outputs):
    """Raise if an operation between ``outputs`` and their leaves was recorded while the
    tape was not recording (TensorFlow would have taken its value as a constant)."""
    stack, seen = list(outputs), set()
    while stack:
        node = stack.pop()
        if id(node) in seen or node.prim is None:
            continue
        seen.add(id(node))
        if not tape._recorded_at(node.seq):
            raise ValueError(
                f"{api}: the target depends on a trainable Variable through "
                f"'{node.prim.name}' (shape {shape_of(node)}), computed while this tape was "
                f"not recording (before or after its `with` block, or in stop_recording). "
                f"dualad.autograd.Variable records always, where TensorFlow would take that "
                f"value as a constant: compute it inside the block, or wrap it in "
                f"dualad.stop_gradient")
        if node.args is None:   # freed by an earlier sweep
            continue
        stack.extend(node.args[i] for i in node.parents if isinstance(node.args[i], Var))
