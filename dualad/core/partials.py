"""Partial derivatives of elementwise primitives, compiled once.

An elementwise primitive is declared by one partial derivative per argument,
``∂ans/∂arg_i``, in one of three forms:

- a number: a constant partial (``add``: 1 and 1, ``subtract``: 1 and −1);
- ``arg(j)``: the partial is argument ``j`` itself (``multiply``:
  ∂(x·y)/∂x = y, so ``arg(1), arg(0)``), or ``arg(j, c)`` a constant ``c`` times it
  (``square``: ∂x²/∂x = 2x, ``arg(0, 2)``);
- a function ``d(ans, *args)`` written with registry operations (``sin``:
  ``lambda ans, x: cos(x)``), or ``None`` for an argument without a derivative.

:func:`compile_partial` turns each into a :class:`Partial`, the one description
from which the JVP (ṫ_out = Σ_i ∂ans/∂arg_i · ṫ_i), the VJP
(ū_i = unbroadcast(ū_out · ∂ans/∂arg_i)) and the reverse sweep's elementwise
fast path are all built (:mod:`dualad.ops.core.elementwise`, :mod:`dualad.interpreters.reverse.sweep`).
The sweep reads a constant or an argument without calling anything.
"""
from __future__ import annotations

import numbers

__all__ = ["arg", "Partial", "compile_partial"]


class arg:  # noqa: N801 - a declaration marker, read like a function: arg(1)
    """Declares the partial ∂ans/∂arg_i to be argument ``j`` of the primitive."""

    __slots__ = ("index", "scale")

    def __init__(self, index: int, scale=1.0):
        self.index = int(index)
        self.scale = float(scale)

    def __repr__(self):
        return f"arg({self.index})" if self.scale == 1.0 else f"arg({self.index}, {self.scale})"


class Partial:
    """∂ans/∂arg_i of an elementwise primitive, in compiled form.

    At most one of ``const`` (a Python float), ``arg`` (an argument position) and
    ``scaled_arg`` (an argument position, times the float ``scale``) is set, for the
    three cheap kinds, all None for a general partial; ``fn(ans, *args)``
    computes the partial for every kind (what the JVP and VJP rules call). A Partial is
    itself callable as ``fn``. An argument declared without a partial (``None``: not
    differentiable, or given its own rules) has all three None, so the sweep tests
    for it only on its slow branch.
    """

    __slots__ = ("const", "arg", "scaled_arg", "scale", "fn")

    def __init__(self, const=None, arg=None, fn=None, scaled_arg=None, scale=None):
        self.const = const
        self.arg = arg
        self.scaled_arg = scaled_arg
        self.scale = scale
        self.fn = fn

    def __call__(self, ans, *args):
        return self.fn(ans, *args)

    def __repr__(self):
        if self.const is not None:
            return f"Partial(const={self.const})"
        if self.arg is not None:
            return f"Partial(arg={self.arg})"
        if self.scaled_arg is not None:
            return f"Partial(scaled_arg={self.scaled_arg}, scale={self.scale})"
        return f"Partial({getattr(self.fn, '__name__', self.fn)})"


def compile_partial(d):
    """The :class:`Partial` of a declaration (a number, :class:`arg`, a function, None,
    or an already compiled Partial)."""
    if d is None:
        return Partial()
    if isinstance(d, Partial):
        return d
    if isinstance(d, arg):
        j, c = d.index, d.scale
        if c == 1.0:
            return Partial(arg=j, fn=lambda ans, *args: args[j])
        return Partial(scaled_arg=j, scale=c, fn=lambda ans, *args: c * args[j])
    if isinstance(d, numbers.Real) and not isinstance(d, bool):
        c = float(d)   # a Python float: never promotes a float32 (co)tangent (NEP 50)
        return Partial(const=c, fn=lambda ans, *args: c)
    if callable(d):
        return Partial(fn=d)
    raise TypeError(f"a partial derivative is a number, dualad.core.partials.arg(j) or a function "
                    f"(ans, *args) -> partial; got {d!r}")
