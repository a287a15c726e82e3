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

Every rule given to ``defjvp``/``defvjp`` is checked when it runs (see
:func:`rule_guard`): a cotangent must have its argument's shape and a tangent
the output's, or the error names the primitive, the argument and both shapes.
"""
from __future__ import annotations

import numpy as np

from .tracer import shape_of
from .primitive import Primitive

__all__ = ["primitive", "Function", "FunctionCtx", "rule_guard"]


def primitive(fn=None, *, name=None, sympy=None):
    """Declare ``fn`` (a function of plain arrays) as a primitive with its own rules."""
    if fn is None:
        return lambda f: primitive(f, name=name, sympy=sympy)
    # Every defjvp/defvjp rule is wrapped in a shape check (see rule_guard).
    prim = Primitive(name or getattr(fn, "__qualname__", repr(fn)), fn, sympy=sympy,
                     rule_guard=rule_guard, wraps=fn, doc=fn.__doc__)
    # Rules written for one direction are mapped over batches of tangents/cotangents
    # (vector mode, batched sweeps); defderiv's rules broadcast and switch this back on.
    prim.batch_rules = False
    return prim


def rule_guard(prim, rule, argnum, kind):
    """``rule`` (a user's JVP or VJP rule for argument ``argnum``) checked on every call.

    The contract (the same as :class:`Function`'s ``backward``/``jvp``):

    - a VJP returns the cotangent of argument ``argnum`` in that argument's shape (behind
      the cotangent's batch axes, if the rule is given any): a rule that forgot to sum
      over broadcast axes, or returns a scalar for an array, raises;
    - a JVP returns a tangent of the output's shape (behind the tangent's batch axes);
    - ``None`` is a zero; the dtype is free (float32 or float64), and a complex
      cotangent of a real argument is accepted when the output is complex (its real
      part is the cotangent, under the pairing ⟨u, v⟩ = Re Σ u·v), but a real
      primitive's rule that turns a real (co)tangent complex raises.

    The check compares two shape tuples (works on boxes too: ``shape_of``), negligible
    next to the rule itself."""
    def checked_vjp(ct, ans, *args, **params):
        g = rule(ct, ans, *args, **params)
        if g is None or type(ans) in _CONTAINERS:
            return g
        x = args[argnum]
        want, nb = _behind_batch(ct, ans, x)   # x's shape, behind ct's batch axes
        got = g.shape if type(g) is _ARRAY else shape_of(g)
        if got != want:
            raise ValueError(_shape_message(prim.name, "VJP", argnum, got, want, shape_of(x), nb))
        if type(g) is _ARRAY and g.dtype.kind == "c" or type(g) in _COMPLEX:
            _check_kind(prim.name, "VJP", argnum, g, ct, x, ans)
        return g

    def checked_jvp(t, ans, *args, **params):
        out = rule(t, ans, *args, **params)
        if out is None or type(ans) in _CONTAINERS:
            return out
        x = args[argnum]
        want, nb = _behind_batch(t, x, ans)    # the output's shape, behind t's batch axes
        got = out.shape if type(out) is _ARRAY else shape_of(out)
        if got != want:
            raise ValueError(_shape_message(prim.name, "JVP", argnum, got, want, shape_of(ans),
                                            nb))
        if type(out) is _ARRAY and out.dtype.kind == "c" or type(out) in _COMPLEX:
            _check_kind(prim.name, "JVP", argnum, out, t, ans, x)
        return out

    checked = checked_vjp if kind == "vjp" else checked_jvp
    checked.__wrapped__ = rule
    return checked


def _behind_batch(seed, primal, target):
    """The shape a rule must return, and the number of batch axes: ``target``'s shape
    behind the leading axes ``seed`` (a tangent or cotangent) has beyond ``primal``'s
    (the value it perturbs). Plain arrays are read directly: the guard runs every call."""
    want = target.shape if type(target) is _ARRAY else shape_of(target)
    nb = (seed.ndim if type(seed) is _ARRAY else len(shape_of(seed))) - \
        (primal.ndim if type(primal) is _ARRAY else len(shape_of(primal)))
    return (shape_of(seed)[:nb] + want if nb else want), nb


def _shape_message(name, kind, argnum, got, want, primal_shape, nb):
    what, of = ("cotangent", f"argument {argnum}") if kind == "VJP" else \
        ("tangent", "the output")
    batch = f" behind the {nb} batch axes {want[:nb]}" if nb else ""
    hint = ""
    if kind == "VJP" and len(got) >= len(want) and _broadcasts_to(want, got):
        hint = (f" Argument {argnum} was broadcast against the others: sum the cotangent "
                f"over the broadcast axes (np.sum(g, axis=...), keepdims where the argument "
                f"has size 1) before returning it.")
    elif kind == "JVP" and _broadcasts_to(got, want):
        hint = f" Broadcast it to the output's shape: np.broadcast_to(..., {primal_shape})."
    return (f"the {kind} rule of primitive '{name}' for argument {argnum} returned a {what} "
            f"of shape {got}, but {of} has shape {primal_shape}: return a {what} of shape "
            f"{want}, the shape of {of}{batch}.{hint}")


_CONTAINERS = (tuple, list)   # several outputs: their rule returns a container


# Plain complex values: their kind is checked (a traced value's at the level where the
# rule runs on plain ones). Tested by ``type``: the guard runs on every rule call.
_COMPLEX = (complex, np.complex128, np.complex64)
_ARRAY = np.ndarray


def _broadcasts_to(small, big):
    try:
        return np.broadcast_shapes(small, big) == tuple(big)
    except ValueError:
        return False


def _is_complex(v):
    dtype = getattr(v, "dtype", None)
    if dtype is None:
        return type(v) is complex
    return getattr(dtype, "kind", "") == "c"


def _check_kind(name, kind, argnum, out, seed, primal, other):
    """A rule of a real map (real seed, real primal, real other side) cannot return a
    complex value: that is a bug in the rule, not an imaginary part riding along."""
    if _is_complex(out) and not (_is_complex(seed) or _is_complex(primal)
                                  or _is_complex(other)):
        what = "cotangent" if kind == "VJP" else "tangent"
        dtype = getattr(out, "dtype", "complex")
        raise TypeError(f"the {kind} rule of primitive '{name}' for argument {argnum} returned "
                        f"a complex {what} (dtype {dtype})"
                        f" for a real argument, output and seed: return a real {what} "
                        f"(np.real(...) if the imaginary part is known to vanish)")


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
            prim = Primitive(cls.__name__, _forward_impl(cls), function_class=cls)
            prim.vjp_all = _function_vjp(cls)
            prim.jvp_all = _function_jvp(cls)
            prim.batch_rules = False  # backward/jvp are written for one direction
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
            if g is not None and shape_of(g) != shape_of(ct)[:nb] + shape_of(v):
                raise ValueError(f"{cls.__name__}.backward returned a gradient of shape "
                                 f"{shape_of(g)} for input {i} of shape {shape_of(v)}: " +
                                 _shape_message(cls.__name__, "VJP", i, shape_of(g),
                                                shape_of(ct)[:nb] + shape_of(v),
                                                shape_of(v), nb).split(": ", 1)[1])
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
            out = rule(ctx, *tangents)
        finally:
            ctx._view = None
        if out is not None and not isinstance(ans, (tuple, list)) and \
                shape_of(out) != batch + shape_of(ans):
            raise ValueError(f"{cls.__name__}.jvp returned a tangent of shape "
                             f"{shape_of(out)}, but the output has shape {shape_of(ans)}: "
                             f"return a tangent of shape {batch + shape_of(ans)}, the shape of "
                             f"the output" + (f" behind the batch axes {batch}" if batch else ""))
        return out
    return jvp_all
