"""The imperative face, as PyTorch and OneFlow users know it.

``Variable(x, requires_grad=True)`` is a leaf on one process-wide tape; every
operation on it records there. ``y.backward()`` sweeps back and *accumulates*
into ``leaf.grad``; :func:`grad` returns gradients instead. With
``create_graph=True`` the sweep runs the VJP rules on the tape itself, so the
gradients are Variables that can be differentiated again.
"""
from __future__ import annotations

import numpy as np

from .api import check_input
from .custom import Function, FunctionCtx  # noqa: F401  (part of this namespace)
from .reverse import Node, Var, VJPTrace, backward_sweep
from .tracer import Box, primal_value, shape_of


class Variable(Var):
    """A value on the imperative tape; ``.grad`` holds accumulated gradients."""

    __slots__ = ()

    def __init__(self, value, requires_grad=False, *, _trace=None, _node=None):
        if _trace is not None:  # created by the tape for an operation's result
            super().__init__(_trace, value, _node)
            return
        if isinstance(value, Box):
            raise TypeError("Variable: wrap a plain array, not a traced value")
        arr = np.asarray(value)
        if requires_grad:
            arr = check_input("Variable", 0, arr)
        node = Node(None, None, None, arr, ()) if requires_grad else None
        super().__init__(_TAPE, arr, node)

    @property
    def requires_grad(self):
        return self.node is not None

    @property
    def is_leaf(self):
        return self.node is None or self.node.prim is None

    @property
    def grad(self):
        return None if self.node is None else self.node.grad

    @grad.setter
    def grad(self, value):
        if self.node is None:
            raise RuntimeError("Variable.grad: this Variable does not require grad")
        self.node.grad = value

    @property
    def data(self):
        return primal_value(self.value)

    def numpy(self):
        return np.array(primal_value(self.value))

    def detach(self):
        return Variable(primal_value(self.value))

    def zero_grad(self):
        if self.node is not None:
            self.node.grad = None

    def backward(self, grad=None, retain_graph=None, create_graph=False):
        backward([self], None if grad is None else [grad], retain_graph, create_graph)

    def __repr__(self):
        rg = ", requires_grad=True" if self.requires_grad else ""
        return f"Variable({primal_value(self.value)!r}{rg})"


def _box(trace, value, node):
    return Variable(value, _trace=trace, _node=node)


# Level 0: below every functional transformation, which nests above it.
_TAPE = VJPTrace(level=0, box_type=_box)


def _seeds(api, outputs, grad_outputs, batched):
    outputs = list(outputs) if isinstance(outputs, (tuple, list)) else [outputs]
    if grad_outputs is None:
        grad_outputs = [None] * len(outputs)
    elif not isinstance(grad_outputs, (tuple, list)):
        grad_outputs = [grad_outputs]
    if len(grad_outputs) != len(outputs):
        raise ValueError(f"{api}: {len(outputs)} outputs but {len(grad_outputs)} grad_outputs")
    seeds = []
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if not isinstance(out, Variable) or out.node is None:
            raise RuntimeError(f"{api}: output {i} (shape {shape_of(out)}) does not require "
                               f"grad and has no grad_fn: nothing on it was computed from a "
                               f"Variable with requires_grad=True")
        oshape = shape_of(out)
        if g is None:
            if oshape != ():
                raise RuntimeError(f"{api}: grad can be implicitly created only for scalar "
                                   f"outputs; output {i} has shape {oshape}, pass "
                                   f"grad_outputs/gradient of that shape")
            g = np.ones((), dtype=primal_value(out).dtype)
        g = g if isinstance(g, Box) else np.asarray(g, dtype=primal_value(out).dtype)
        gshape = shape_of(g)
        want = gshape[1:] if batched else gshape
        if want != oshape or (batched and not gshape):
            rule = (f"with is_grads_batched=True grad_outputs[{i}] must have shape (B, *"
                    f"outputs[{i}].shape) = (B, {', '.join(map(str, oshape))})"
                    if batched else f"grad_outputs[{i}] must have the output's shape {oshape}")
            raise ValueError(f"{api}: grad_outputs[{i}] has shape {gshape}, but {rule}")
        seeds.append((out.node, g))
    if batched and len({shape_of(g)[0] for _, g in seeds}) > 1:
        raise ValueError(f"{api}: batched grad_outputs disagree on the batch size B")
    return seeds


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False):
    """Accumulate d(tensors)/d(leaf) · grad_tensors into every reachable leaf's ``.grad``."""
    seeds = _seeds("backward", tensors, grad_tensors, False)
    retain = create_graph if retain_graph is None else retain_graph
    results = backward_sweep(seeds, trace=_TAPE, create_graph=create_graph, retain_graph=retain)
    for node, g in results.items():
        node.grad = g if node.grad is None else node.grad + g


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         allow_unused=False, is_grads_batched=False):
    """Gradients of ``outputs`` with respect to ``inputs`` (returned, not accumulated).

    With ``is_grads_batched=True``, ``grad_outputs[i]`` has shape
    ``(B, *outputs[i].shape)`` and every result ``(B, *inputs[j].shape)``: B
    vector-Jacobian products in one batched sweep.
    """
    single = not isinstance(inputs, (tuple, list))
    inputs = [inputs] if single else list(inputs)
    for j, x in enumerate(inputs):
        if not isinstance(x, Variable) or x.node is None:
            raise RuntimeError(f"grad: inputs[{j}] (shape {shape_of(x)}) does not require grad")
    seeds = _seeds("grad", outputs, grad_outputs, is_grads_batched)
    retain = create_graph if retain_graph is None else retain_graph
    wanted = {x.node for x in inputs}
    results = backward_sweep(seeds, trace=_TAPE, create_graph=create_graph, retain_graph=retain,
                             wanted=wanted)
    out = []
    for j, x in enumerate(inputs):
        g = results.get(x.node)
        if g is None:
            if not allow_unused:
                raise RuntimeError(f"grad: inputs[{j}] (shape {shape_of(x)}) was not used to "
                                   f"compute the outputs; pass allow_unused=True to get None")
        out.append(g)
    return tuple(out)
