r"""Collapsed Taylor mode: the sum of second directional derivatives in one forward sweep.

For directions :math:`v_1, \dots, v_S` of the input :math:`x` each intermediate value
:math:`u` carries its primal, its first derivatives along every direction,
:math:`J_u = (\partial u[v_s])_s` (a leading axis of length :math:`S`), and only the *sum*
of its second derivatives, :math:`L_u = \sum_s \partial^2 u[v_s, v_s]`. With the
coordinate directions :math:`L` is the Laplacian: the forward Laplacian of Li et al.
(2023), which Dangel et al. (2024) call collapsed Taylor mode. The second-order part is
propagated once instead of once per direction: for :math:`y = f(u_1, \dots, u_m)`

.. math::  J_y = \sum_i \partial_i f\, J_{u_i}, \qquad
           L_y = \sum_i \partial_i f\, L_{u_i}
                 + \sum_{i,j} \partial_{ij} f \sum_s J_{u_i,s}\, J_{u_j,s}.

Elementwise primitives take :math:`\partial_i f` and :math:`\partial_{ij} f` from their
own Taylor rules (order 2 along one or two arguments), linear primitives their JVP on
:math:`J` (batched) and on :math:`L`, and ``matmul``/``einsum`` their bilinear cross term.
Any other primitive raises :class:`NotCollapsible`; the caller then sweeps each direction
in full (``dualad.vmap`` over ``dualad.taylor``), which is exact for every primitive.
"""
from __future__ import annotations

import numpy as np

from ...core.boxes import PrimalBox
from ...core.tracer import Box, Trace, ndim_of, shape_of
from ..batching.vmap import vmap
from .rules import _zeros_like, push_tangents, taylor_rule
from .series import Series, TaylorTrace

__all__ = ["NotCollapsible", "Collapsed", "CollapsedTrace", "second_order_sum"]


class NotCollapsible(Exception):
    """A primitive whose second derivatives the collapsed sweep cannot sum."""


class Collapsed(PrimalBox):
    """A value of the collapsed sweep: primal, ``jac`` (S, *shape), ``lap`` (shape)."""

    __slots__ = ("jac", "lap")

    def __init__(self, trace, primal, jac, lap):
        self._trace = trace
        self.primal, self.jac, self.lap = primal, jac, lap


def _lift(j, out_ndim):
    """``j`` (S, *shape) with axes after S so it broadcasts against an output of
    ``out_ndim`` dimensions (NumPy aligns the trailing ones)."""
    missing = out_ndim - (ndim_of(j) - 1)
    if missing <= 0:
        return j
    s = shape_of(j)
    return j.reshape((s[0],) + (1,) * missing + tuple(s[1:]))


def _sum_product(a, b, out_ndim):
    """:math:`\\sum_s a_s b_s` over the directions' axis (broadcast to the output)."""
    return np.sum(_lift(a, out_ndim) * _lift(b, out_ndim), axis=0)


class CollapsedTrace(Trace):
    """The collapsed interpreter (see the module docstring)."""

    __slots__ = ()

    def own(self, a):
        return isinstance(a, Collapsed) and a._trace is self

    def process(self, prim, args, params):
        if not self.alive:
            raise self.escaped(prim, args)
        primals, lower = [], False
        for a in args:
            p = a.primal if self.own(a) else a
            lower = lower or isinstance(p, Box)
            primals.append(p)
        ans = prim(*primals, **params) if lower else prim.impl(*primals, **params)
        if prim.zero_derivative:
            return ans
        if isinstance(ans, (tuple, list)):
            raise NotCollapsible(prim.name)
        traced = [i for i, a in enumerate(args) if self.own(a)]
        kind = taylor_rule(prim).kind
        if kind == "linear":
            jac, lap = _linear(prim, args, traced, primals, params, ans)
        elif prim.elementwise and prim.derivs is not None:
            jac, lap = _elementwise(prim, args, traced, primals, params, ans)
        elif kind == "multilinear" and len(traced) <= 2:
            jac, lap = _bilinear(prim, args, traced, primals, params, ans)
        else:
            raise NotCollapsible(prim.name)
        return Collapsed(self, ans, jac, lap)


def _linear(prim, args, traced, primals, params, ans):
    jacs = [args[i].jac if i in traced else None for i in range(len(args))]
    laps = [args[i].lap if i in traced else None for i in range(len(args))]
    return (push_tangents(prim, jacs, ans, primals, params, nb=1),
            push_tangents(prim, laps, ans, primals, params))


def _partials(prim, primals, params, traced):
    """First and second partial derivatives at the primal point, from the primitive's own
    Taylor rule: along one argument (∂_i, ∂_ii/2) and along two (the mixed ∂_ij)."""
    def coefs(along):
        trace = TaylorTrace(2, taylor_rule)
        try:
            xs = [Series(trace, [p, _zeros_like(p) + 1.0, _zeros_like(p)])
                  if i in along else p for i, p in enumerate(primals)]
            y = prim(*xs, **params)
        finally:
            trace.stop()
        return (y.coefs[1], y.coefs[2]) if isinstance(y, Series) else (0.0, 0.0)
    first, second = {}, {}
    for i in traced:
        first[i], half = coefs((i,))
        second[i, i] = 2.0 * half
    for a in traced:
        for b in traced:
            if a < b:
                second[a, b] = coefs((a, b))[1] - 0.5 * (second[a, a] + second[b, b])
    return first, second


def _elementwise(prim, args, traced, primals, params, ans):
    first, second = _partials(prim, primals, params, traced)
    nd = ndim_of(ans)
    jac = lap = None
    for i in traced:
        j = _lift(args[i].jac, nd) * first[i]
        jac = j if jac is None else jac + j
        term = args[i].lap * first[i]
        lap = term if lap is None else lap + term
    for (a, b), d in second.items():
        weight = 1.0 if a == b else 2.0
        lap = lap + (weight * d) * _sum_product(args[a].jac, args[b].jac, nd)
    return _fit(jac, shape_of(ans)), np.broadcast_to(lap, shape_of(ans))


def _fit(jac, shape):
    s = shape_of(jac)
    return jac if tuple(s[1:]) == tuple(shape) else np.broadcast_to(jac, s[:1] + tuple(shape))


def _bilinear(prim, args, traced, primals, params, ans):
    jac, lap = _linear(prim, args, traced, primals, params, ans)
    if len(traced) == 2:
        a, b = traced

        def pair(u, v):
            xs = list(primals)
            xs[a], xs[b] = u, v
            return prim(*xs, **params)
        lap = lap + 2.0 * np.sum(vmap(pair)(args[a].jac, args[b].jac), axis=0)
    return jac, lap


def second_order_sum(f, x, directions):
    r""":math:`\sum_s \partial^2 f(x)[v_s, v_s]` for the rows :math:`v_s` of
    ``directions`` (shape ``(S, *x.shape)``), in one collapsed sweep.

    Raises
    ------
    NotCollapsible
        If ``f`` calls a primitive the collapsed sweep has no rule for.
    """
    trace = CollapsedTrace()
    try:
        out = f(Collapsed(trace, x, directions, np.zeros(shape_of(x), dtype=directions.dtype)))
    finally:
        trace.stop()
    if isinstance(out, Collapsed) and out._trace is trace:
        return out.lap
    return np.zeros(shape_of(out), dtype=directions.dtype)   # f does not depend on x
