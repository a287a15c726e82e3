"""Rewrites that make a generated NumPy program do fewer calls and passes over its arrays.

Run by the code generator (:mod:`dualad.interpreters.staging.codegen`) after the exact identities of
:mod:`dualad.interpreters.staging.passes`. Every rewrite here is EXACT too: the program computes bit for bit
what the recorded one did, for every input value (NaN and infinities included):

- **One reduction, two shapes.** ``max(x, axis, keepdims=False)`` and later
  ``max(x, axis, keepdims=True)`` (the value and its rule's mask, as ``logsumexp`` has them)
  are one reduction: the second is a reshape of the first (the same numbers).
- **No materialized broadcast.** ``broadcast_to(s, shape)`` read only by elementwise
  arithmetic (``+ - * /``) whose other operand already has ``shape`` and the same dtype:
  the arithmetic reads ``s`` and NumPy broadcasts it (the same values enter the same
  operations; the broadcast array was a copy).
- **Negation after the sum.** ``sum(-x)`` over a non-empty axis, ``-x`` read nowhere else:
  ``-sum(x)``. Rounding to nearest is symmetric under negation, so each partial sum of
  the negated entries is the negation of the partial sum of the entries, in the same
  order. (An empty sum would give ``+0.0`` against ``-0.0``: not rewritten.)
- **Structural-zero masks that select nothing.** The reverse sweep writes a cotangent
  with structural zeros (:mod:`dualad.interpreters.reverse.masked`) times a partial as
  ``where(touched, ct * partial, 0.0)``, so that an untouched entry stays 0 even where the
  partial is inf or NaN (0 · inf). The ``where`` is dropped when the program proves the
  product is already ``+0.0`` at every untouched entry: ``ct`` comes from ``untake``
  (zeros outside its index), and the partial is a constant finite scalar without a sign
  bit (``0.0 * c`` is ``+0.0`` for such ``c``, never NaN), through ``+`` of two such arrays
  (``0.0 + 0.0`` is ``+0.0``) and ``where(m, ., 0.0)``. A partial that is an array or a
  traced value keeps its mask: nothing proves it finite.

:func:`emit` writes two primitives without their Python wrappers: ``sum``/``max``/``min``
of an ndarray as the ufunc reduction the ndarray method calls (``np.add.reduce``, with
the method's arguments), and ``untake`` at a basic index (ints and slices) as
``np.zeros`` and one slice assignment (what its implementation does).
"""
from __future__ import annotations

import math

import numpy as np

from ...core.primitive import REGISTRY
from ...ops.core.linear import short_last_axis, sum_last
from .passes import known, uses
from .program import Const, Eqn, Guard, Program
from .selected import one_share

_ARITH = ("add", "subtract", "multiply", "divide")
_REDUCTIONS = ("sum", "max", "min")
# ndarray.sum/max/min(axis, keepdims=k) is numpy's _methods._sum/_amax/_amin, which is
# this ufunc's reduce(a, axis, None, None, k) (dtype and out None): the same call without
# the two Python frames (bound once: each ``np.add.reduce`` is a new bound method)
_UFUNC_REDUCE = {"sum": ("add_reduce", np.add.reduce),
                 "max": ("maximum_reduce", np.maximum.reduce),
                 "min": ("minimum_reduce", np.minimum.reduce)}


def _basic(idx):
    return idx.__class__ is tuple and all(
        i.__class__ is int or i.__class__ is slice and all(
            p is None or p.__class__ is int for p in (i.start, i.stop, i.step)) for i in idx)


def _shape_dtype(a, avals):
    if a.__class__ is int:
        kind, shape, dtype = avals[a]
        return kind, shape, (None if dtype is None else np.dtype(dtype))
    v = a.value
    if isinstance(v, np.ndarray):
        return np.ndarray, v.shape, v.dtype
    if v.__class__ is float or isinstance(v, np.floating):
        return v.__class__, (), np.result_type(v)
    return v.__class__, None, None


def _positive_finite(a):
    """A constant real scalar that is finite and has no sign bit (0.0 * it is +0.0)."""
    if a.__class__ is not Const:
        return False
    v = a.value
    if v.__class__ is bool or not (v.__class__ in (int, float) or isinstance(v, (np.floating,
                                                                                  np.integer))):
        return False
    return bool(np.isfinite(v)) and not np.signbit(v)


def _plus_zero(a):
    return a.__class__ is Const and _positive_finite(a) and a.value == 0


def tighten(prog, pyfloat=frozenset()):
    """``(program, notes)``: the rewrites of the module docstring. The variables keep
    their numbers; a rewritten equation keeps its output variable (its aval may change
    only for a variable whose every use is rewritten with it)."""
    avals = dict(prog.avals)
    outputs = {a for a in prog.outvars if a.__class__ is int}
    n_uses = uses(prog)
    readers = {}
    for k, e in enumerate(prog.body):
        if e.__class__ is Eqn:
            for a in e.ins:
                if a.__class__ is int:
                    readers.setdefault(a, []).append(k)
    body = list(prog.body)
    notes = {}
    sub = {}
    _one_reduction(body, avals, outputs, notes)
    _unbroadcast(body, avals, readers, outputs, pyfloat, notes)
    _negation_after_sum(body, avals, n_uses, outputs, notes)
    one_share(body, avals, outputs, notes)
    _drop_masks(body, avals, outputs, sub, notes)
    if sub:
        def res(a):
            while a.__class__ is int and a in sub:
                a = sub[a]
            return a
        for k, e in enumerate(body):
            if e.__class__ is Eqn and any(a.__class__ is int and a in sub for a in e.ins):
                body[k] = Eqn(e.prim, tuple(res(a) for a in e.ins), e.params, e.out)
            elif e.__class__ is Guard and e.var in sub:
                body[k] = Guard(e.kind, res(e.var), e.expected, e.where)
    body = [e for e in body if e is not None]
    out = Program(prog.invars, body, prog.outvars, avals, prog.name)
    return out.pruned(), notes


def _one_reduction(body, avals, outputs, notes):
    first = {}
    reshape = REGISTRY["reshape"]
    for k, e in enumerate(body):
        if e.__class__ is not Eqn or known(e.prim) not in _REDUCTIONS or len(e.ins) != 1 or \
                set(e.params) != {"axis", "keepdims"}:
            continue
        x = e.ins[0]
        if x.__class__ is not int:
            continue
        key = (id(e.prim), x, e.params["axis"])
        prev = first.get(key)
        if prev is None:
            first[key] = (e.out, e.params["keepdims"])
            continue
        v, kd = prev
        kind, shape, _ = avals[e.out]
        if kd == e.params["keepdims"] or e.out in outputs or kind is not np.ndarray or \
                shape is None:
            continue
        body[k] = Eqn(reshape, (v,), {"shape": tuple(shape)}, e.out)
        notes[e.out] = (f"v{e.out} = {e.prim.name}(v{x}, keepdims={e.params['keepdims']}) "
                        f"is v{v} reshaped (one reduction)")


def _unbroadcast(body, avals, readers, outputs, pyfloat, notes):
    for k, e in enumerate(body):
        if e.__class__ is not Eqn or known(e.prim) != "broadcast_to" or len(e.ins) != 1:
            continue
        b = e.out
        x = e.ins[0]
        kind, shape, dtype = avals[b]
        if kind is not np.ndarray or not shape or b in outputs:
            continue
        xk, xs, xd = _shape_dtype(x, avals)
        if x.__class__ is int and x in pyfloat:
            xd = np.dtype(np.float64)
        if xd != dtype or xs is None or len(xs) > len(shape):
            continue
        for r in readers.get(b, ()):
            u = body[r]
            if u.__class__ is not Eqn or known(u.prim) not in _ARITH or u.params or \
                    len(u.ins) != 2 or u.ins.count(b) != 1:
                continue
            other = u.ins[1] if u.ins[0] == b else u.ins[0]
            ok, os_, od = _shape_dtype(other, avals)
            if os_ is None or tuple(os_) != tuple(shape) or od != dtype or \
                    avals[u.out][1] != shape or np.dtype(avals[u.out][2]) != dtype:
                continue
            body[r] = Eqn(u.prim, tuple(x if a == b else a for a in u.ins), u.params, u.out)
            notes[u.out] = f"v{u.out} reads v{b}'s operand: NumPy broadcasts it"


def _negation_after_sum(body, avals, n_uses, outputs, notes):
    where = {e.out: k for k, e in enumerate(body) if e.__class__ is Eqn}
    neg = REGISTRY["negative"]
    for k, e in enumerate(body):
        if e.__class__ is not Eqn or known(e.prim) != "sum" or len(e.ins) != 1 or \
                set(e.params) != {"axis", "keepdims"}:
            continue
        n = e.ins[0]
        if n.__class__ is not int or n_uses.get(n) != 1 or n in outputs or n not in where:
            continue
        ne = body[where[n]]
        if known(ne.prim) != "negative" or ne.params or len(ne.ins) != 1:
            continue
        x = ne.ins[0]
        kind, shape, dtype = _shape_dtype(x, avals)
        rkind, rshape, rdtype = avals[e.out]
        axis = e.params["axis"]
        if kind is not np.ndarray or dtype is None or dtype.kind != "f" or \
                rkind is not np.ndarray or np.dtype(rdtype) != dtype or \
                axis.__class__ is not tuple or math.prod(shape[i] for i in axis) == 0:
            continue
        body[where[n]] = Eqn(e.prim, (x,), e.params, n)
        avals[n] = avals[e.out]
        body[k] = Eqn(neg, (n,), {}, e.out)
        notes[e.out] = f"v{e.out} = -sum(v{x}): sum(-x) is -sum(x) (exact)"


def _drop_masks(body, avals, outputs, sub, notes):
    zero = {}     # variable -> boolean array: True where the value is known to be +0.0

    def z(a):
        a = sub.get(a, a) if a.__class__ is int else a
        return zero.get(a) if a.__class__ is int else None

    for k, e in enumerate(body):
        if e.__class__ is not Eqn:
            continue
        name = known(e.prim)
        kind, shape, dtype = avals[e.out]
        if kind is not np.ndarray or dtype is None or np.dtype(dtype).kind != "f" or \
                shape is None:
            continue
        ins = e.ins
        if name == "untake" and len(ins) == 1 and _basic(e.params.get("idx")) and \
                tuple(e.params.get("shape", ())) == tuple(shape):
            m = np.ones(shape, bool)
            m[e.params["idx"]] = False
            zero[e.out] = m
        elif name in ("multiply", "divide") and len(ins) == 2 and not e.params:
            x, c = ins
            if name == "multiply" and _positive_finite(x):
                x, c = c, x
            zx = z(x)
            if zx is not None and zx.shape == tuple(shape) and _positive_finite(c) and \
                    not (name == "divide" and c.value == 0):
                zero[e.out] = zx
        elif name == "add" and len(ins) == 2 and not e.params:
            za, zb = z(ins[0]), z(ins[1])
            if za is not None and zb is not None and za.shape == zb.shape == tuple(shape):
                zero[e.out] = za & zb
        elif name == "where" and len(ins) == 3 and not e.params:
            m, a, c = ins
            if m.__class__ is not Const or not isinstance(m.value, np.ndarray) or \
                    m.value.dtype != bool or m.value.shape != tuple(shape) or not _plus_zero(c):
                continue
            za = z(a)
            if za is not None and za.shape == tuple(shape):
                zero[e.out] = ~m.value | za
                if a.__class__ is int and e.out not in outputs and \
                        avals[a] == avals[e.out] and not (~m.value & ~za).any():
                    sub[e.out] = sub.get(a, a)
                    body[k] = None
                    notes[e.out] = (f"v{e.out} = v{a}: v{a} is +0.0 wherever the mask is "
                                    f"False (a structural zero times a finite constant)")
            else:
                zero[e.out] = ~m.value


# --- emission -------------------------------------------------------------------------
def emit(em, e, args, ind, out, index_source, sites=None):
    """Source lines for equation ``e`` without its primitive's Python wrapper, or None.
    ``args``: the operands' source as NumPy code receives them; ``sites``: where a large
    result's array comes from (:class:`dualad.interpreters.staging.codegen.Sites`), or
    None (new arrays)."""
    name = known(e.prim)
    if name in _REDUCTIONS and len(args) == 1 and set(e.params) == {"axis", "keepdims"} and \
            e.ins[0].__class__ is int and em.prog.avals[e.ins[0]][0] is np.ndarray:
        axis = e.params["axis"]
        keep = e.params["keepdims"]
        if axis.__class__ is tuple and all(a.__class__ is int for a in axis) and \
                keep.__class__ is bool:
            # the implementations call the ndarray method (sum) or np.max/np.min, which
            # for an ndarray is the method's reduction: the ufunc's reduce that the
            # method's Python wrapper (numpy's _methods) calls, with the same arguments
            kind, shape, dtype = em.prog.avals[e.ins[0]]
            k = short_last_axis(shape, dtype, axis) if name == "sum" and \
                shape is not None and dtype is not None else 0
            _, oshape, odtype = em.prog.avals[out]
            if k:     # what the implementation does for a short last axis
                red = em.ns.bind(sum_last, "sum_last")
                into = sites and sites.take(oshape[:-1] if keep else oshape, odtype)
                tail = f", {into}" if into else ""
                return [f"{ind}v{out} = {red}({args[0]}, {k}, {keep!r}{tail})"]
            hint, fn = _UFUNC_REDUCE[name]
            red = em.ns.bind(fn, hint)
            into = sites and sites.take(oshape, odtype)
            return [f"{ind}v{out} = {red}({args[0]}, {axis!r}, None, {into or None}, {keep!r})"]
    if name in _ARITH and len(args) == 2 and not e.params:
        lines = _cast_first(em, e, args, ind, out)
        if lines is not None:
            return lines
    if name == "untake" and len(args) == 1 and set(e.params) == {"idx", "shape"} and \
            _basic(e.params["idx"]) and e.params["idx"]:
        kind, shape, dtype = em.prog.avals[out]
        if kind is np.ndarray and dtype is not None and tuple(e.params["shape"]) == shape:
            zeros = sites and sites.zeros(shape, dtype)
            if not zeros:
                dt = np.dtype(dtype)
                dts = f"np.{dt.name}" if getattr(np, dt.name, None) is dt.type else \
                    em.ns.bind(dt, "dtype")
                zeros = f"np.zeros({shape!r}, {dts})"
            return [f"{ind}v{out} = {zeros}",
                    f"{ind}v{out}[{index_source(e.params['idx'], em.ns)}] = {args[0]}"]
    return None


_OPS = {"add": "+", "subtract": "-", "multiply": "*", "divide": "/"}


def _cast_first(em, e, args, ind, out):
    """``b / cnt`` with ``cnt`` an integer (or bool) array smaller than the float64 result
    (a count broadcast along a short axis): ``b / cnt.astype(np.float64)``. The ufunc
    would cast ``cnt`` to float64 itself, by the same conversion, but in its buffered loop,
    chunk by chunk of the broadcast (a (1000, 10) ``bool / int``: 2.5x slower than with a
    float64 ``cnt``); cast once, the loop runs on float64 operands."""
    kind, shape, dtype = em.prog.avals[out]
    if kind is not np.ndarray or dtype is None or np.dtype(dtype) != np.float64:
        return None
    size = math.prod(shape)
    new = list(args)
    for k, a in enumerate(e.ins):
        ak, ashape, adt = _shape_dtype(a, em.prog.avals)
        if ak is np.ndarray and adt is not None and adt.kind in "biu" and \
                math.prod(ashape) < size:
            new[k] = f"{args[k]}.astype(np.float64)"
    if new == list(args):
        return None
    return [f"{ind}v{out} = {new[0]} {_OPS[known(e.prim)]} {new[1]}  # the integer operand cast "
            f"once (the same conversion the ufunc makes)"]


__all__ = ["tighten", "emit"]
