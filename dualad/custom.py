"""Custom rules: the ``primitive`` decorator and PyTorch-style ``Function``.

A user's primitive is interpreted exactly like a built-in one::

    @dualad.primitive
    def logsumexp(x):
        m = np.max(x)
        return m + np.log(np.sum(np.exp(x - m)))

    logsumexp.defvjp(lambda g, ans, x: g * np.exp(x - ans))
    logsumexp.defjvp(lambda t, ans, x: np.sum(t * np.exp(x - ans), axis=-1))

Rules receive the tangent ``t`` (or cotangent ``g``), the output ``ans`` and
the inputs. Written with NumPy calls on their arguments, rules are
differentiable again. For elementwise scalar functions one derivative per
argument gives both rules: ``f.defderiv(lambda ans, x: cos(x))``.
"""
from __future__ import annotations

import numpy as np

from .tracer import Primitive, shape_of


def primitive(fn=None, *, name=None, sympy=None):
    """Declare ``fn`` (a function of plain arrays) as a primitive with its own rules."""
    if fn is None:
        return lambda f: primitive(f, name=name, sympy=sympy)
    prim = Primitive(name or getattr(fn, "__qualname__", repr(fn)), fn, sympy=sympy)
    # Rules written for one direction are mapped over batches of tangents/cotangents
    # (vector mode, batched sweeps); defderiv's rules broadcast and switch this back on.
    prim.batch_rules = False
    prim.__doc__ = fn.__doc__
    prim.__wrapped__ = fn
    return prim


class FunctionCtx:
    """What ``forward`` hands to ``backward``/``jvp``.

    Tensors saved with :meth:`save_for_backward` come back from
    :attr:`saved_tensors` as the inputs and output *of the level being
    differentiated*, so a ``backward`` written with NumPy operations is
    differentiable again (second order), as in PyTorch.
    """

    def __init__(self):
        self._saved = ()
        self._raw_inputs = ()
        self._raw_output = None
        self._view = None

    def save_for_backward(self, *tensors):
        self._saved = tensors

    def mark_non_differentiable(self, *args):  # accepted for PyTorch compatibility
        pass

    @property
    def saved_tensors(self):
        if self._view is None:
            return self._saved
        vals, ans = self._view
        out = []
        for s in self._saved:
            if s is self._raw_output:
                out.append(ans)
                continue
            for raw, v in zip(self._raw_inputs, vals):
                if s is raw:
                    out.append(v)
                    break
            else:
                out.append(s)
        return tuple(out)


class Function:
    """Subclass with static ``forward(ctx, *inputs)`` and ``backward(ctx, *grads)``
    (and optionally ``jvp(ctx, *tangents)`` for forward mode); call ``apply``."""

    _prim = None

    @staticmethod
    def forward(ctx, *inputs):  # pragma: no cover - abstract
        raise NotImplementedError

    @staticmethod
    def backward(ctx, *grad_outputs):  # pragma: no cover - abstract
        raise NotImplementedError

    @classmethod
    def _primitive(cls):
        prim = cls.__dict__.get("_prim")
        if prim is None:
            prim = Primitive(cls.__name__, _forward_impl(cls))
            prim.vjp_all = _function_vjp(cls)
            prim.jvp_all = _function_jvp(cls)
            prim.batch_rules = False  # backward/jvp are written for one direction
            prim.function_class = cls
            cls._prim = prim
        return prim

    @classmethod
    def apply(cls, *inputs):
        return cls._primitive()(*inputs, ctx=FunctionCtx())

    def __call__(self, *inputs):
        return type(self).apply(*inputs)


def _forward_impl(cls):
    def impl(*inputs, ctx):
        ctx._raw_inputs = inputs
        out = cls.forward(ctx, *inputs)
        ctx._raw_output = out
        return out
    return impl


def _function_vjp(cls):
    def vjp_all(ct, ans, *vals, ctx):
        ctx._view = (vals, ans)
        try:
            grads = cls.backward(ctx, ct)
        finally:
            ctx._view = None
        if not isinstance(grads, (tuple, list)):
            grads = (grads,)
        if len(grads) != len(vals):
            raise TypeError(f"{cls.__name__}.backward returned {len(grads)} gradient(s), but "
                            f"{cls.__name__}.forward took {len(vals)} input(s): return one "
                            f"gradient (or None) per input")
        nb = len(shape_of(ct)) - len(shape_of(ans))
        for i, (g, v) in enumerate(zip(grads, vals)):
            if g is not None and shape_of(g)[nb:] != shape_of(v):
                raise ValueError(f"{cls.__name__}.backward returned a gradient of shape "
                                 f"{shape_of(g)} for input {i} of shape {shape_of(v)}")
        return grads
    return vjp_all


def _function_jvp(cls):
    def jvp_all(tangents, ans, *vals, ctx):
        rule = getattr(cls, "jvp", None)
        if rule is None:
            raise NotImplementedError(
                f"{cls.__name__} has no jvp: it is a Function with only a backward rule, so "
                f"forward mode cannot push tangents through it. Define a static "
                f"{cls.__name__}.jvp(ctx, *tangents), or use reverse mode")
        ref = next(t for t in tangents if t is not None)
        nb = len(shape_of(ref)) - len(shape_of(vals[tangents.index(ref)]))
        batch = shape_of(ref)[:nb]
        tangents = [t if t is not None else np.zeros(batch + shape_of(v))
                    for t, v in zip(tangents, vals)]
        ctx._view = (vals, ans)
        try:
            return rule(ctx, *tangents)
        finally:
            ctx._view = None
    return jvp_all
