"""Rewrites for cotangents that reach a few selected entries: the reverse rule of max/min.

The pullback of ``m = max(x, axis, keepdims)`` gives each entry that attains the
maximum an equal share of the cotangent and every other entry zero:

.. math::

    \\bar x = \\mathrm{where}\\Big(M,\\; \\bar m \\cdot \\frac{M}{C},\\; 0\\Big),
    \\qquad M = (x = m),\\quad C = \\textstyle\\sum_{\\text{axis}} M,

and the sweep then adds :math:`\\bar x` to the cotangent the other paths give ``x``
(``logsumexp`` stabilised by its maximum: the softmax). Written as recorded, that is four
passes over ``x``'s shape after the comparison (``M / C``, the product, the ``where``,
the addition), where the numbers that change are one per reduced slice. Two rewrites,
both EXACT (every number bit for bit what the recorded program computes, infinities and
signed zeros included, and NaN where it gives NaN), cut them to one pass that touches
only the selected entries. (A NaN's sign bit, which no arithmetic reads, may differ:
NumPy 2.2's vector addition gives ``NaN + 0.0`` the other sign, and the masked addition
does not compute that sum.)

- **The share, once per slice** (:func:`one_share`, run by
  :func:`dualad.interpreters.staging.tighten.tighten`, so by every backend): ``where(M, a * (M / c), 0.0)``
  with ``M`` boolean becomes ``where(M, a * (1.0 / c), 0.0)``, the product on the
  reduced shape. Where ``M`` is True, ``M / c`` is ``1.0 / c`` (True converts to 1.0),
  so each selected entry gets the same product of the same two numbers; elsewhere the
  ``where`` gives ``0.0`` either way.
- **A masked addition** (:func:`masked_adds`, run by the NumPy code generator only):
  ``y + where(M, s, 0.0)`` becomes ``np.add(y, s, out=..., where=M)`` on (a copy of, or
  when it dies there the array of) ``y``; ``y - where(M, s, 0.0)`` likewise
  ``np.subtract``, with no condition (``y - 0.0`` is ``y`` for every ``y``). At a selected entry both compute ``y + s``;
  elsewhere the recorded program computes ``y + 0.0``, which is ``y`` for every ``y``
  except ``-0.0`` (``-0.0 + 0.0`` is ``+0.0``). So the rewrite is made only when the
  program proves that ``y`` holds no ``-0.0``: :func:`no_negative_zero`, a forward pass
  marking values whose every entry is NaN or at least ``+0.0`` (``exp``, ``abs``,
  squares, and sums, products, quotients, reductions and selections of such values).

For the gradient of GradBench's ``lse`` at 1.28·10⁶ entries the program goes from nine
full passes to five (the softmax's own) and the selected entries' update.
"""
from __future__ import annotations

import numpy as np

from ...core.primitive import REGISTRY, Primitive
from .passes import _is_zero, known, uses
from .program import Const, Eqn, Program

__all__ = ["MASKED_ADD", "one_share", "masked_adds", "no_negative_zero", "emit"]


def _masked_add_impl(y, s, m, swap=False, op="add"):
    """``where(m, y + s, y)`` (``s + y`` when ``swap``; ``y - s`` for ``op="subtract"``):
    the value of the equation."""
    out = np.array(y, copy=True)
    ufunc = np.add if op == "add" else np.subtract
    if swap:
        ufunc(s, out, out=out, where=m)
    else:
        ufunc(out, s, out=out, where=m)
    return out


# A primitive of generated programs only, never recorded nor registered: no rules, no
# interpreter sees it (the rewritten program is replayed, not differentiated).
MASKED_ADD = Primitive("masked_add", _masked_add_impl)


def _aval(a, avals):
    """``(kind, shape, dtype)`` of a variable or constant (shape None: not an array)."""
    if a.__class__ is int:
        kind, shape, dtype = avals[a]
        if kind in (float, np.float64):       # a float64 scalar (maybe a Python float)
            return kind, (), np.dtype(np.float64)
        if kind is not np.ndarray or shape is None or dtype is None:
            return kind, None, None
        return kind, tuple(shape), np.dtype(dtype)
    v = a.value
    if isinstance(v, np.ndarray):
        return np.ndarray, v.shape, v.dtype
    return v.__class__, (), np.result_type(v) if isinstance(v, (int, float, np.number)) \
        else None


def _eqn_of(body):
    return {e.out: k for k, e in enumerate(body) if e.__class__ is Eqn}


def _uniform(a):
    """A constant float64 array whose entries are one number (bit for bit: a constant
    cotangent the trace broadcast) as that number; anything else as it is."""
    if a.__class__ is Const and isinstance(a.value, np.ndarray) and a.value.size and \
            a.value.dtype == np.float64:
        bits = a.value.reshape(-1).view(np.uint64)
        if (bits == bits[0]).all():
            return Const(a.value.reshape(-1)[0])
    return a


def one_share(body, avals, outputs, notes):
    """Rewrite ``body`` (a list, in place): the share of the module docstring."""
    n_uses = uses(Program((), [e for e in body if e is not None], (), avals, ""))
    at = _eqn_of(body)
    divide, multiply = REGISTRY["divide"], REGISTRY["multiply"]

    def single(v):
        return v.__class__ is int and v in at and n_uses.get(v) == 1 and v not in outputs

    for e in list(body):
        if e.__class__ is not Eqn or known(e.prim) != "where" or len(e.ins) != 3 or \
                e.params or not _is_zero(e.ins[2]):
            continue
        m, prod = e.ins[0], e.ins[1]
        if not single(prod):
            continue
        pe = body[at[prod]]
        if known(pe.prim) != "multiply" or pe.params or len(pe.ins) != 2:
            continue
        left = single(pe.ins[1]) and known(body[at[pe.ins[1]]].prim) == "divide"
        q = pe.ins[1] if left else pe.ins[0]
        a = pe.ins[0] if left else pe.ins[1]
        if not single(q):
            continue
        qe = body[at[q]]
        if known(qe.prim) != "divide" or qe.params or len(qe.ins) != 2 or qe.ins[0] != m:
            continue
        c = qe.ins[1]
        a = _uniform(a)
        _, ms, md = _aval(m, avals)
        _, cs, cd = _aval(c, avals)
        _, as_, ad = _aval(a, avals)
        _, qs, qd = _aval(q, avals)
        _, ws, wd = _aval(e.out, avals)
        if md != np.bool_ or None in (cs, as_, qs, ws) or qd != np.float64 or \
                wd != np.float64 or ad != np.float64 or cd is None or \
                not (cd.kind in "biu" or cd == np.float64):
            continue
        try:
            small = np.broadcast_shapes(as_, cs)
            if np.broadcast_shapes(ms, small) != ws:
                continue
        except ValueError:
            continue
        if int(np.prod(small)) >= int(np.prod(ws)):
            continue       # nothing smaller to compute: leave the program as it is
        # 1.0 / c is float64 for an integer, bool or float64 c: the conversion M / c made
        avals[q] = (np.ndarray, cs, np.dtype(np.float64))
        body[at[q]] = Eqn(divide, (Const(1.0), c), {}, q)
        avals[prod] = (np.ndarray, small, np.dtype(np.float64))
        body[at[prod]] = Eqn(multiply, (q, a) if left is False else (a, q), {}, prod)
        notes[prod] = (f"v{prod}: the share of each selected entry, once per reduced "
                       f"slice (where v{m}: v{m} / c is 1.0 / c)")


# --- no -0.0 ---------------------------------------------------------------------------
_KEEPS = frozenset(["add", "multiply", "divide", "sum", "max", "min", "maximum", "minimum",
                    "reshape", "broadcast_to", "transpose", "expand_dims", "squeeze",
                    "getitem", "reciprocal", "sqrt"])
_MAKES = frozenset(["exp", "absolute", "square"])


def _const_ok(v):
    if isinstance(v, bool) or not isinstance(v, (int, float, np.ndarray, np.number)):
        return False
    arr = np.asarray(v)
    if arr.dtype.kind not in "fiu":
        return False
    if arr.dtype.kind == "f":
        return bool(np.all(np.isnan(arr) | ~np.signbit(arr)))
    return bool(np.all(arr >= 0))


def no_negative_zero(body):
    """The variables of ``body`` proved to hold only NaN or values >= +0.0 (so none is
    -0.0): made by ``exp``, ``abs`` or ``square``, or by an operation of :data:`_KEEPS`
    whose operands all are such values or such constants (a sum, product or quotient
    of numbers >= +0.0 is one, NaN aside; ``sqrt`` of one is one)."""
    good = set()
    for e in body:
        if e is None or e.__class__ is not Eqn:
            continue
        name = known(e.prim)
        if name in _MAKES:
            good.add(e.out)
        elif name == "where" and len(e.ins) == 3:
            if all(a in good if a.__class__ is int else _const_ok(a.value)
                   for a in e.ins[1:]):
                good.add(e.out)
        elif name in _KEEPS and e.ins and all(
                a in good if a.__class__ is int else _const_ok(a.value) for a in e.ins):
            good.add(e.out)
    return good


def masked_adds(prog, notes):
    """``prog`` with the masked additions of the module docstring (a new Program)."""
    body = list(prog.body)
    avals = prog.avals
    outputs = {a for a in prog.outvars if a.__class__ is int}
    n_uses = uses(prog)
    at = _eqn_of(body)
    good = None    # no_negative_zero of the recorded body, made when an addition first asks
    for k, e in enumerate(body):
        if e.__class__ is not Eqn:
            continue
        op = known(e.prim)
        if op not in ("add", "subtract") or e.params or len(e.ins) != 2:
            continue
        for side in (1, 0) if op == "add" else (1,):
            w, y = e.ins[side], e.ins[1 - side]
            # y - 0.0 is y for every y (-0.0 - 0.0 is -0.0): no proof needed
            if w.__class__ is not int or w not in at or n_uses.get(w) != 1 or \
                    w in outputs or y.__class__ is not int:
                continue
            if op == "add":
                if good is None:
                    good = no_negative_zero(prog.body)
                if y not in good:
                    continue
            we = body[at[w]]
            if we is None or known(we.prim) != "where" or we.params or len(we.ins) != 3 or \
                    not _is_zero(we.ins[2]):
                continue
            m, s = we.ins[0], we.ins[1]
            _, os_, od = _aval(e.out, avals)
            _, ys, yd = _aval(y, avals)
            _, ws, wd = _aval(w, avals)
            _, ms, md = _aval(m, avals)
            _, ss, sd = _aval(s, avals)
            if od != np.float64 or yd != od or wd != od or ys != os_ or ws != os_ or not os_ or \
                    md != np.bool_ or ms is None or sd is None or sd.kind not in "fiu" or \
                    avals[e.out][0] is not np.ndarray or avals[y][0] is not np.ndarray:
                continue
            try:
                if np.broadcast_shapes(ms, os_) != os_ or \
                        np.broadcast_shapes(ss, os_) != os_:
                    continue
            except ValueError:
                continue
            body[at[w]] = None
            body[k] = Eqn(MASKED_ADD, (y, s, m), {"swap": side == 0, "op": op}, e.out)
            notes[e.out] = (
                f"v{e.out} = v{y} + where(v{m}, v{s}, 0.0) as an addition at the selected "
                f"entries only (v{y} holds no -0.0)" if op == "add" else
                f"v{e.out} = v{y} - where(v{m}, v{s}, 0.0) as a subtraction at the "
                f"selected entries only (y - 0.0 is y)")
            break
    body = [e for e in body if e is not None]
    return Program(prog.invars, body, prog.outvars, avals, prog.name)


def emit(e, args, ind, out, into):
    """Source lines of a MASKED_ADD equation; ``into``: the variable whose dead array it
    writes into (its first operand), or None (then into a copy)."""
    y, s, m = args
    dst = f"v{into}" if into is not None else f"v{out}"
    lines = [] if into is not None else [f"{ind}v{out} = {y}.copy()"]
    ops = (s, dst) if e.params["swap"] else (dst, s)
    lines.append(f"{ind}np.{e.params['op']}({ops[0]}, {ops[1]}, out={dst}, where={m})")
    if into is not None:
        lines.append(f"{ind}v{out} = {dst}")
    return lines
