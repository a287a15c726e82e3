"""The while loop as ONE primitive: its value and its rules.

Inputs ``(k_body..., k_cond..., c_0 leaves...)`` (``k``: the lifted values the body and
the predicate closed over, :mod:`dualad.transforms.while_loop.trace`); the value packs
the final carry into one 1-D array (the tape keeps one value per node). With
``c_{i+1} = body(k_body, c_i)`` while ``cond(k_cond, c_i)``, ``n`` trips:

- value: the loop on plain values, nothing kept;
- reverse (``vjp_all``): a second primitive, ``while_loop_vjp``, whose value runs the
  loop again placing at most ``s`` snapshots online
  (the placement ``schedule`` names, :mod:`~dualad.transforms.while_loop.online`), then
  reverses the
  intervals between them by the offline binomial schedule, pulling back one taped trip
  at a time,

      (c̄_i, k̄_i) = c̄_{i+1} · ∂c_{i+1}/∂(c_i, k_body),   k̄ = Σ_i k̄_i;

  the predicate gets no cotangent (its value is a boolean);
- forward (``jvp_all``): a new while loop over the carry and its tangent,
  ``(c, ċ) -> (body(c), ∂body/∂(c, k)·(ċ, k̇))`` while ``cond(c)``;
- vmap (``defbatch``): a new while loop over the batched carry that runs while any lane's
  predicate holds and leaves a finished lane's carry as it is,
  ``c' = where(p, body(c), c)``.

Under a :func:`dualad.jit` trace every one of these is one equation of a primitive that
holds the programs, so a replay runs the loop again and counts its own trips (no trip
count is baked into a program). Under another differentiating trace (``hessian``,
``grad`` of ``grad``) the reverse sweep runs in Python on that trace's values (the
predicate read from the primal values); under jit, where it is an equation, the reverse
primitive's own rules differentiate it (:func:`_reverse_loops`: the sweep as while
loops, quadratic in the trips). Under vmap it is one batched sweep of the masked loop
(:func:`_batch_reverse`).
"""
from __future__ import annotations

import numpy as np

from ..api import jvp, vjp
from ...core.primitive import Primitive
from ...core.tracer import Box, primal_value, shape_of
from ...core.values import is_batched, is_staged, staged_value
from ...interpreters.batching.vmap import vmap
from ...ops import broadcast_to, concatenate, reshape, sum as _sum, where
from ..scan.rules import _cast, _inexact, _merge, _pack, _pack_plain, _packed_dtype, _unpack
from .online import DEFAULT_SCHEDULE, placement
from .. import schedule_log
from .trace import trace_leaves

__all__ = ["WhileSpec", "while_leaves"]


class WhileSpec:
    """One while loop: the traced ``cond`` and ``body``, the carry's avals, ``snapshots``
    slots for reverse mode placed by ``schedule`` (a key of
    :data:`~dualad.transforms.while_loop.online.SCHEDULES`), the packed dtype ``pd`` and
    the differentiable positions (``dk``: body's lifted values, ``dc``: carry leaves)."""

    def __init__(self, cond, body, name, c_avals, snapshots, schedule=DEFAULT_SCHEDULE):
        self.cond, self.body, self.name = cond, body, name
        self.c_avals, self.snapshots = list(c_avals), snapshots
        self.schedule = schedule
        self.kb_avals = [aval_of(v) for v in body.lifted]
        self.nkb, self.nkc, self.nc = len(body.lifted), len(cond.lifted), len(c_avals)
        self.out_avals = self.c_avals
        self.pd = _packed_dtype(self.c_avals)
        self.dk = [j for j, (_, d) in enumerate(self.kb_avals) if _inexact(d)]
        self.dc = [j for j, (_, d) in enumerate(self.c_avals) if _inexact(d)]
        self._reverse = None

    def split(self, args):
        """``(k_body, k_cond, c)`` from the primitive's flat arguments."""
        a, b = self.nkb, self.nkb + self.nkc
        return list(args[:a]), list(args[a:b]), list(args[b:])

    def holds(self, kc, c):
        """The predicate as a Python bool (of the primal values)."""
        return bool(primal_value(self.cond(kc, c)[0]))

    def reverse_primitive(self):
        if self._reverse is None:
            self._reverse = Primitive(f"while_loop_vjp({self.name})",
                                      lambda *a: _reverse_value(self, a[:-1], a[-1]))
            self._reverse.defbatch(lambda args, batched: _batch_reverse(self, args, batched))
            _differentiable_reverse(self, self._reverse)
        return self._reverse


def aval_of(v):
    return tuple(shape_of(v)), np.result_type(v.dtype if isinstance(v, Box) else
                                              np.asarray(v).dtype)


def while_primitive(spec):
    """The primitive of ``spec`` and ``unpack(packed) -> [c_n leaves]``."""
    def impl(*args):
        kb, kc, c = spec.split(args)
        while spec.holds(kc, c):
            c = spec.body(kb, c)
        return _pack_plain(c, spec.c_avals, spec.pd, spec.name)

    def vjp_all(ct, ans, *args):
        return _vjp(spec, ct, args)

    def jvp_all(tangents, ans, *args):
        return _jvp(spec, tangents, args)

    def batch(args, batched):
        return _batch(spec, args, batched)

    prim = Primitive(f"while_loop({spec.name})", impl)
    prim.def_all(jvp=jvp_all, vjp=vjp_all)
    all_in = spec.kb_avals + [aval_of(v) for v in spec.cond.lifted] + spec.c_avals
    prim.nondiff_argnums = tuple(j for j, (_, d) in enumerate(all_in)
                                 if not _inexact(d) or spec.nkb <= j < spec.nkb + spec.nkc)
    prim.defbatch(batch)

    def unpack(packed):
        if not is_staged(packed):
            return _unpack(packed, spec.out_avals, spec.pd, (), None)
        parts = _unpack(packed, [(s, spec.pd) for s, _ in spec.out_avals], spec.pd, (), None)
        return [p if _inexact(d) else integer_leaf(staged_value(p), dtype=d)
                for p, (_, d) in zip(parts, spec.out_avals)]
    return prim, unpack


# An integer carry leaf (a counter) recorded by a jit trace: cast by an equation, not read
# as a constant of the trace (an integer cast of a traced value is a plain value with a
# guard in dualad; a guard inside a traced body would refuse the loop).
integer_leaf = Primitive("while_loop_integer_leaf",
                         lambda x, dtype: np.asarray(x).astype(dtype), zero_derivative=True)
integer_leaf.defbatch(lambda args, batched, dtype: integer_leaf(args[0], dtype=dtype))


def while_leaves(cond_fn, body_fn, name, carry, snapshots, check=None,
                 schedule=DEFAULT_SCHEDULE):
    """The final carry leaves of ``while cond_fn(c)[0]: c = body_fn(c)`` (functions of
    lists of leaves, written with registry operations) as ONE primitive call, reverse
    mode placing ``snapshots`` online by ``schedule``. ``check(cond, body)`` may inspect
    the two traces first (the public API's errors)."""
    cond = trace_leaves(cond_fn, f"{name}_cond", f"dualad.while_loop: cond_fun ({name})",
                        carry)
    body = trace_leaves(body_fn, f"{name}_body", f"dualad.while_loop: body_fun ({name})",
                        carry)
    if check is not None:
        check(cond, body)
    spec = WhileSpec(cond, body, name, [aval_of(v) for v in carry], snapshots, schedule)
    kb, kc = body.lifted, cond.lifted
    prim, unpack = while_primitive(spec)
    cond.release()
    body.release()
    outs = unpack(prim(*kb, *kc, *carry))
    return [o[()] if isinstance(o, np.ndarray) and o.ndim == 0 else o for o in outs]


# --- reverse ------------------------------------------------------------------------------
def _vjp(spec, ct, args):
    """The reverse rule: ``while_loop_vjp`` at ``(args, c̄_n)``, its packed cotangents
    of the body's lifted values and of ``c_0`` put back at their positions. Under an
    enclosing differentiating trace (not jit, not vmap) the same sweep runs in Python on
    its values, so that trace records it (second order: one trip's rules at a time)."""
    if not (spec.dk or spec.dc):
        return [None] * len(args)
    lead = tuple(shape_of(ct)[:-1])
    values = list(args) + [ct]
    if any(isinstance(v, Box) for v in values) and not any(
            is_staged(v) or is_batched(v) for v in values):
        packed = _reverse_value(spec, args, ct)   # recorded by the enclosing trace
    else:
        packed = spec.reverse_primitive()(*args, ct)
    r_avals = [spec.kb_avals[j] for j in spec.dk] + [spec.c_avals[j] for j in spec.dc]
    cts = _unpack(packed, r_avals, _packed_dtype(r_avals), lead, ())
    out = [None] * len(args)
    for p, j in enumerate(spec.dk):
        out[j] = cts[p]
    base = spec.nkb + spec.nkc
    for p, j in enumerate(spec.dc):
        out[base + j] = cts[len(spec.dk) + p]
    return out


def _online_sweep(spec, kb, kc, c0):
    """Run the loop placing snapshots online: ``(n, slots, stored)``."""
    slots = placement(spec.schedule, spec.snapshots)
    stored, cur, n = {0: c0}, c0, 0
    while spec.holds(kc, cur):
        if n:
            kept, dropped = slots.offer(n)
            if kept:
                stored.pop(dropped, None)
                stored[n] = cur
        cur = spec.body(kb, cur)
        n += 1
    return n, slots, stored


def _reverse_value(spec, args, ct):
    """``while_loop_vjp``'s value on plain values: the online sweep, then the reversal
    (the placement's ``reverse_actions``), one taped trip per ``reverse``."""
    kb, kc, c0 = spec.split(args)
    lead = tuple(shape_of(ct)[:-1])
    ct_c = _unpack(ct, spec.out_avals, spec.pd, lead, ())
    ct_k = [np.zeros(lead + spec.kb_avals[j][0], spec.kb_avals[j][1]) for j in spec.dk]
    n, slots, stored = _online_sweep(spec, kb, kc, c0)
    schedule_log.online(spec.name, n, spec.snapshots, spec.schedule, stored)
    cur = None
    for act in slots.reverse_actions(n):
        kind = act[0]
        if kind == "restore":
            cur = stored[act[1]]
        elif kind == "store":
            stored[act[1]] = cur
        elif kind == "free":
            stored.pop(act[1], None)
        elif kind == "advance":
            for _ in range(act[1], act[2]):
                cur = spec.body(kb, cur)
        else:
            _pull_trip(spec, kb, cur, ct_c, ct_k, lead)
            cur = None
    r_avals = [spec.kb_avals[j] for j in spec.dk] + [spec.c_avals[j] for j in spec.dc]
    parts = ct_k + [_zero_if_none(ct_c[j], lead, spec.c_avals[j]) for j in spec.dc]
    return _pack(parts, r_avals, _packed_dtype(r_avals), lead)


def _zero_if_none(g, lead, av):
    return np.zeros(lead + av[0], av[1]) if g is None else g


def _pull_trip(spec, kb, c, ct_c, ct_k, lead):
    """One taped trip at ``c = c_i``: ``ct_c`` becomes c̄_i, k̄_i is added to ``ct_k``."""
    dk, dc = spec.dk, spec.dc

    def trip(a, b):
        c1 = spec.body(_merge(kb, dk, a), _merge(c, dc, b))
        return [c1[j] for j in dc]
    _, pullback = vjp(trip, [kb[j] for j in dk], [c[j] for j in dc])
    g_k, g_c = pullback([_zero_if_none(ct_c[j], lead, spec.c_avals[j]) for j in dc])
    for p, j in enumerate(dc):
        ct_c[j] = _cast(_zero_if_none(g_c[p], lead, spec.c_avals[j]), spec.c_avals[j][1])
    for p, j in enumerate(dk):
        if g_k[p] is not None:
            ct_k[p] = _cast(ct_k[p] + g_k[p], spec.kb_avals[j][1])


# --- the reverse sweep's own derivatives (second order under jit) ------------------------
def _reverse_loops(spec, args, ct):
    """``while_loop_vjp``'s value written as while loops, for differentiating it where the
    sweep is an equation (under jit): the trip count ``n`` by one loop, then a loop over
    ``i = n-1, ..., 0`` whose trip recomputes ``c_i`` from ``c_0`` (an inner loop of ``i``
    trips) and pulls back one taped trip,

        (c̄_i, k̄) = (c̄_{i+1} · ∂c_{i+1}/∂c_i,  k̄ + c̄_{i+1} · ∂c_{i+1}/∂k_body).

    ``n + n(n-1)/2`` untaped trips and O(1) carries (one snapshot: ``c_0``); every piece
    is a while loop, whose rules (forward: a loop over the tangents; reverse: online
    checkpointing) differentiate it."""
    kb, kc, c0 = spec.split(args)
    lead = tuple(shape_of(ct)[:-1])
    dk, dc, nc = spec.dk, spec.dc, spec.nc
    ct_c = _unpack(ct, spec.out_avals, spec.pd, lead, ())

    def loop(cond, body, what, carry):
        return while_leaves(cond, body, f"{spec.name}_{what}", carry, spec.snapshots,
                            schedule=spec.schedule)

    def advance(C):
        return list(spec.body(kb, C[:nc])) + [C[nc] + 1]
    n = loop(lambda C: spec.cond(kc, C[:nc]), advance, "count", list(c0) + [np.int64(0)])[nc]

    def pull(C):
        c_i = loop(lambda D: [D[nc] < C[0]], advance, "replay", list(c0) + [np.int64(0)])[:nc]
        g_c, g_k = _merge([None] * nc, dc, C[1:1 + len(dc)]), list(C[1 + len(dc):])
        _pull_trip(spec, kb, c_i, g_c, g_k, lead)   # (updates g_c, g_k in place)
        return [C[0] - 1] + [g_c[j] for j in dc] + g_k
    ct0 = [_cast(_zero_if_none(ct_c[j], lead, spec.c_avals[j]), spec.c_avals[j][1])
           for j in dc]
    k0 = [np.zeros(lead + spec.kb_avals[j][0], spec.kb_avals[j][1]) for j in dk]
    out = loop(lambda C: [C[0] >= 0], pull, "reverse", [n - 1] + ct0 + k0)
    r_avals = [spec.kb_avals[j] for j in dk] + [spec.c_avals[j] for j in dc]
    parts = out[1 + len(dc):] + out[1:1 + len(dc)]
    return _pack(parts, r_avals, _packed_dtype(r_avals), lead)


def _differentiable_reverse(spec, prim):
    """Give ``while_loop_vjp`` derivative rules: those of :func:`_reverse_loops` (the
    same sweep as while loops) at the differentiable arguments (the body's lifted inexact
    values, the inexact carry leaves, the cotangent)."""
    n_args = spec.nkb + spec.nkc + spec.nc
    avals = spec.kb_avals + [None] * spec.nkc + spec.c_avals
    diff = [j for j in range(n_args) if avals[j] is not None and _inexact(avals[j][1])]
    diff.append(n_args)                                      # the cotangent

    def on_diff(args):
        def f(*d):
            full = _merge(args, diff, d)
            return _reverse_loops(spec, full[:-1], full[-1])
        return f

    def jvp_all(tangents, ans, *args):
        t, a = next((t, a) for t, a in zip(tangents, args) if t is not None)
        lead = tuple(shape_of(t)[:len(shape_of(t)) - len(shape_of(a))])
        ts = [tangents[j] if tangents[j] is not None else
              np.zeros(lead + tuple(shape_of(args[j])), _dtype(args[j])) for j in diff]
        return jvp(on_diff(list(args)), tuple(args[j] for j in diff), tuple(ts))[1]

    def vjp_all(ct, ans, *args):
        _, pullback = vjp(on_diff(list(args)), *(args[j] for j in diff))
        return _merge([None] * (n_args + 1), diff, pullback(ct))
    prim.def_all(jvp=jvp_all, vjp=vjp_all)
    prim.nondiff_argnums = tuple(j for j in range(n_args + 1) if j not in diff)


def _dtype(v):
    return np.result_type(v.dtype if isinstance(v, Box) else np.asarray(v).dtype)


def _batch_reverse(spec, args, batched):
    """vmap of ``while_loop_vjp`` (``vmap(grad(f))``): ONE reverse sweep for every lane,
    the pullback of the batched loop of :func:`_batch` (masked trips
    ``c' = where(p, body(c), c)``, run while any lane's predicate holds), so a lane that
    stopped after ``n_b`` trips passes its cotangent through the later trips unchanged:

        (c̄_0, k̄)_b = c̄_n,b · ∂c_{n_b},b / ∂(c_0, k_body)_b  for every lane b.

    Every differentiable input is broadcast to the batch first, so a value shared by
    the lanes (a parameter closed over) gets one cotangent per lane, not their sum.
    A cotangent with axes of its own (``jacrev`` inside ``vmap``) is left to vmap's
    loop over the lanes (``NotImplemented``)."""
    *a, ct = args
    size = next(shape_of(v)[0] for v, b in zip(args, batched) if b)
    if len(shape_of(ct)) != 1 + batched[-1]:
        return NotImplemented
    kb, kc, c0 = spec.split(a)
    bk, bkc, bc = spec.split(list(batched[:-1]))
    kb = [v if b else broadcast_to(v, (size,) + s)
          for v, b, (s, _) in zip(kb, bk, spec.kb_avals)]
    c0 = [v if b else broadcast_to(v, (size,) + s)
          for v, b, (s, _) in zip(c0, bc, spec.c_avals)]
    flags = [True] * spec.nkb + list(bkc) + [True] * spec.nc
    dk, dc = spec.dk, spec.dc

    def masked_loop(k_d, c_d):
        return _batch(spec, _merge(kb, dk, k_d) + kc + _merge(c0, dc, c_d), flags)
    _, pullback = vjp(masked_loop, [kb[j] for j in dk], [c0[j] for j in dc])
    g_k, g_c = pullback(ct if batched[-1] else broadcast_to(ct, (size,) + shape_of(ct)))
    lead = (size,)
    parts = [_zero_if_none(g_k[p], lead, spec.kb_avals[j]) for p, j in enumerate(dk)]
    parts += [_zero_if_none(g_c[p], lead, spec.c_avals[j]) for p, j in enumerate(dc)]
    r_avals = [spec.kb_avals[j] for j in dk] + [spec.c_avals[j] for j in dc]
    return _pack(parts, r_avals, _packed_dtype(r_avals), lead)


# --- forward ------------------------------------------------------------------------------
def _jvp(spec, tangents, args):
    """The forward rule: a while loop over ``(c, ċ)`` (see the module doc); a missing
    tangent is a zero of its aval (with the tangents' leading axes)."""
    kb, kc, c0 = spec.split(args)
    t_k, _, t_c = spec.split(list(tangents))
    t, a = next((t, a) for t, a in zip(tangents, args) if t is not None)
    lead = tuple(shape_of(t)[:len(shape_of(t)) - len(shape_of(a))])
    dk, dc, nc = spec.dk, spec.dc, spec.nc
    tk = [_zero_if_none(t_k[j], lead, spec.kb_avals[j]) for j in dk]
    tc = [_cast(_zero_if_none(t_c[j], lead, spec.c_avals[j]), spec.c_avals[j][1])
          for j in dc]

    def cond_t(C):
        return spec.cond(kc, C[:nc])

    def body_t(C):
        c = C[:nc]

        def f(a, b):
            return spec.body(_merge(kb, dk, a), _merge(c, dc, b))
        c1, tc1 = jvp(f, ([kb[j] for j in dk], [c[j] for j in dc]), (tk, list(C[nc:])))
        return list(c1) + [_cast(_zero_if_none(tc1[j], lead, spec.c_avals[j]),
                                 spec.c_avals[j][1]) for j in dc]
    outs = while_leaves(cond_t, body_t, f"{spec.name}_jvp", list(c0) + tc, spec.snapshots,
                        schedule=spec.schedule)
    parts = _merge([np.zeros(lead + s, spec.pd) for s, _ in spec.c_avals], dc, outs[nc:])
    return _pack(parts, spec.out_avals, spec.pd, lead)


# --- vmap ---------------------------------------------------------------------------------
def _batch(spec, args, batched):
    """The batching rule: a while loop over the batched carry, running while any lane's
    predicate holds, a finished lane's carry kept (``where(p, body(c), c)``); the packed
    value laid out as ``(B, N)``."""
    size = next(shape_of(a)[0] for a, b in zip(args, batched) if b)
    kb, kc, c = spec.split(args)
    bk, bkc, _ = spec.split(list(batched))
    nkb, nkc = spec.nkb, spec.nkc
    carry = [a if b else broadcast_to(a, (size,) + s)
             for a, b, (s, _) in zip(c, batched[nkb + nkc:], spec.c_avals)]
    axes = (0,) * spec.nc
    body_b = vmap(lambda *v: tuple(spec.body(v[:nkb], v[nkb:])),
                  in_axes=tuple(0 if b else None for b in bk) + axes)
    cond_b = vmap(lambda *v: spec.cond(v[:nkc], v[nkc:])[0],
                  in_axes=tuple(0 if b else None for b in bkc) + axes)

    def any_lane(C):
        return [_sum(where(cond_b(*kc, *C), 1.0, 0.0)) > 0.5]

    def masked_trip(C):
        p = cond_b(*kc, *C)
        new = body_b(*kb, *C)
        return [where(reshape(p, (size,) + (1,) * len(s)), v, old)
                for v, old, (s, _) in zip(new, C, spec.c_avals)]
    outs = while_leaves(any_lane, masked_trip, f"{spec.name}_vmap", carry, spec.snapshots,
                        schedule=spec.schedule)
    parts = [reshape(_cast(o, spec.pd), (size, -1)) for o in outs]
    return concatenate(parts, axis=-1) if parts else np.zeros((size, 0), spec.pd)
