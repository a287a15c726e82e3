"""The binomial-checkpointed loop as ONE primitive: its value and its rules.

Inputs ``(lifted..., c_0 leaves..., xs leaves...)`` (:mod:`dualad.transforms.scan.closure`); the
value packs the final carry and the stacked ys into one 1-D array (the tape keeps one
value per node; :func:`_unpacker` takes the leaves back, each in its own dtype). With
``body(lifted, c_k, x_k) = (c_{k+1}, y_k)``:

- value: the loop on plain values, nothing kept;
- reverse (``vjp_all``): the schedule of :func:`dualad.revolve.iter_schedule(l, s)
  <dualad.revolve.iter_schedule>`. ``advance`` runs ``body`` without a tape, ``store`` keeps a
  carry (at most ``s`` at once, ``c_0`` included), and ``reverse k`` records ONE step,
  ``vjp(body)`` at the recomputed ``c_k``, and pulls back

      (c̄_k, x̄_k, l̄_k) = (c̄_{k+1}, ȳ_k) · ∂(c_{k+1}, y_k)/∂(c_k, x_k, lifted),

  the lifted cotangent summed over the steps. Memory O(s) carries plus one step's tape;
  ``forward_steps(l, s)`` advances, ``l`` taped steps.
- forward (``jvp_all``): the loop of ``jvp(body)``, tangents carried along, none stored.
- vmap (``defbatch``): the same loop of ``vmap(body)``, one batched primitive.

Every rule calls ``body`` (the program replayed through the primitives), ``jvp``, ``vjp``,
``vmap`` and registry ops, never NumPy on traced values: on boxes of an enclosing trace
they record there, so the rules differentiate again (second order).
"""
from __future__ import annotations


import numpy as np

from ..api import jvp, vjp
from ...ops import concatenate, index, moveaxis, reshape, stack, broadcast_to
from ...core.primitive import Primitive
from ...revolve import iter_schedule
from .. import schedule_log
from ...core.tracer import Box, shape_of
from ...interpreters.batching.vmap import vmap

__all__ = ["scan_primitive"]


def _inexact(dtype):
    return np.issubdtype(dtype, np.inexact)


def _size(shape):
    return int(np.prod(shape, dtype=np.int64))


def _cast(x, dtype):
    """``x`` (plain or traced) in ``dtype``; a real cotangent taken from a complex one."""
    d = np.result_type(x.dtype if isinstance(x, Box) else np.asarray(x).dtype)
    if d == dtype:
        return x
    if d.kind == "c" and np.dtype(dtype).kind != "c":
        x = x.real if isinstance(x, Box) else np.real(x)
    return x.astype(dtype) if isinstance(x, Box) else np.asarray(x).astype(dtype)


def scan_primitive(body, step_name, l_avals, c_avals, x_avals, y_avals, l, snapshots,
                   reverse, x_traced):
    """The primitive of one scan call and ``unpack(packed) -> [carry leaves, ys leaves]``.

    ``body(lifted, c, x) -> (c', y)`` on lists of leaves; ``l_avals``, ``c_avals``,
    ``x_avals``, ``y_avals``: ``(shape, dtype)`` of the lifted values, the carry leaves,
    one slice of each xs leaf and each y leaf; ``l`` steps; ``snapshots`` stored carries;
    ``reverse`` as scan's. ``x_traced[j]``: whether xs leaf j was traced at the call (a
    plain one never needs a cotangent at any level: the rules skip its l slices).

    The primitive's value is :func:`_scan_value`, its reverse rule :func:`_scan_vjp`, its
    forward rule :func:`_scan_jvp` and its batching rule :func:`_batched_scan`, all on the
    one :class:`_ScanCall` that describes this call."""
    sc = _ScanCall(body, step_name, l_avals, c_avals, x_avals, y_avals, l, snapshots,
                   reverse, x_traced)

    def impl(*args):
        return _scan_value(sc, args)

    def vjp_all(ct, ans, *args):
        return _scan_vjp(sc, ct, args)

    def jvp_all(tangents, ans, *args):
        return _scan_jvp(sc, tangents, args)

    def batch(args, batched):
        return _batched_scan(step_name, body, args, batched, l_avals, c_avals, x_avals,
                             y_avals, l, snapshots, reverse, sc.packed_dtype)

    def unpack(packed):
        return _unpack(packed, sc.out_avals, sc.packed_dtype, (), None)

    prim = Primitive(sc.name, impl)
    prim.def_all(jvp=jvp_all, vjp=vjp_all)
    prim.nondiff_argnums = tuple(
        j for j, (_, d) in enumerate(l_avals + list(c_avals) +
                                     [((l,) + s, d) for s, d in x_avals]) if not _inexact(d))
    prim.defbatch(batch)
    return prim, unpack


class _ScanCall:
    """One scan call as its rules see it: the body, the avals of the lifted values (l),
    the carry (c), one step's xs (x) and ys (y) slices, the packed output's layout, the
    differentiable positions of each (``diff_*``: inexact, and for xs traced at the
    call), and ``order`` (step k reads ``xs[order[k]]``)."""

    def __init__(self, body, step_name, l_avals, c_avals, x_avals, y_avals, l, snapshots,
                 reverse, x_traced):
        self.body, self.l, self.snapshots = body, l, snapshots
        self.l_avals, self.c_avals, self.x_avals, self.y_avals = \
            l_avals, c_avals, x_avals, y_avals
        self.name = f"scan({step_name})"
        self.out_avals = list(c_avals) + [((l,) + s, d) for s, d in y_avals]
        self.packed_dtype = _packed_dtype(self.out_avals)
        self.nl, self.nc, self.nx = len(l_avals), len(c_avals), len(x_avals)
        self.diff_l = [j for j, (_, d) in enumerate(l_avals) if _inexact(d)]
        self.diff_c = [j for j, (_, d) in enumerate(c_avals) if _inexact(d)]
        self.diff_x = [j for j, (_, d) in enumerate(x_avals) if _inexact(d) and x_traced[j]]
        self.diff_y = [j for j, (_, d) in enumerate(y_avals) if _inexact(d)]
        self.order = range(l - 1, -1, -1) if reverse else range(l)

    def split(self, args):
        """``(lifted, c_0, xs)`` from the primitive's flat arguments."""
        nl, nc = self.nl, self.nc
        return list(args[:nl]), list(args[nl:nl + nc]), list(args[nl + nc:])


def _scan_value(sc, args):
    """The value: ``c_{k+1}, y_k = body(lifted, c_k, xs[order[k]])`` on plain values for
    k = 0 .. l-1, the final carry and the stacked ys packed into one array."""
    lifted, c, xs = sc.split(args)
    ys = [np.empty((sc.l,) + s, d) for s, d in sc.y_avals]
    for i in sc.order:
        c, y = sc.body(lifted, c, [x[i] for x in xs])
        for buf, v in zip(ys, y):
            buf[i] = v
    return _pack_plain([np.asarray(v, d) for v, (_, d) in zip(c, sc.c_avals)] + ys,
                       sc.out_avals, sc.packed_dtype, sc.name)


def _scan_vjp(sc, ct, args):
    """The reverse rule: walk revolve's schedule (:func:`_follow_schedule` for the
    advance/store/restore/free actions, O(s) carries kept) and at each ``reverse k``
    pull back one taped step (:func:`_reverse_step`),
    (c̄_k, x̄_k, l̄_k) = (c̄_{k+1}, ȳ_k) · ∂(c_{k+1}, y_k)/∂(c_k, x_k, lifted)."""
    lifted, c0, xs = sc.split(args)
    lead = shape_of(ct)[:-1]
    ct_leaves = _unpack(ct, sc.out_avals, sc.packed_dtype, lead, ())
    ct_c, ct_ys = ct_leaves[:sc.nc], ct_leaves[sc.nc:]
    ct_lift = [None] * sc.nl
    ct_x = [[None] * sc.l for _ in range(sc.nx)]
    stored, cur = {}, c0
    schedule_log.binomial(sc.name, sc.l, sc.snapshots)
    for act in iter_schedule(sc.l, sc.snapshots):   # lazily: O(s) memory
        if act[0] == "reverse":   # one taped step from the recomputed carry c_k
            _reverse_step(sc, act[1], lifted, cur, xs, ct_c, ct_ys, ct_lift, ct_x, lead)
            cur = None
        else:
            cur = _follow_schedule(sc, act, stored, cur, lifted, xs)
    xs_ct = [stack(ct_x[j], axis=len(lead)) if j in sc.diff_x else None
             for j in range(sc.nx)]
    return ct_lift + [ct_c[j] if j in sc.diff_c else None for j in range(sc.nc)] + xs_ct


def _follow_schedule(sc, act, stored, cur, lifted, xs):
    """One action of revolve's schedule other than ``reverse``: ``store``/``restore``/
    ``free`` a checkpointed carry, or ``advance`` from step a to b without a tape.
    Returns the current carry."""
    kind = act[0]
    if kind == "store":
        stored[act[1]] = cur
    elif kind == "restore":
        cur = stored[act[1]]
    elif kind == "free":
        del stored[act[1]]
    elif kind == "advance":
        for k in range(act[1], act[2]):
            cur = sc.body(lifted, cur, [x[sc.order[k]] for x in xs])[0]
    return cur


def _reverse_step(sc, k, lifted, cur, xs, ct_c, ct_ys, ct_lift, ct_x, lead):
    """``reverse k``: pull (c̄_{k+1}, ȳ_k) back through step k taped at the carry ``cur``
    = c_k; c̄_k replaces ``ct_c``, x̄_k goes to its slot of ``ct_x`` and l̄ is summed into
    ``ct_lift`` over the steps."""
    i = sc.order[k]
    at = (slice(None),) * len(lead)
    g_l, g_c, g_x = _pull_step(sc.body, lifted, cur, [x[i] for x in xs], ct_c,
                               [index(y, at + (i,)) for y in ct_ys],
                               sc.diff_l, sc.diff_c, sc.diff_x, sc.diff_y, lead,
                               sc.c_avals, sc.y_avals)
    for j, g in zip(sc.diff_l, g_l):
        ct_lift[j] = g if ct_lift[j] is None else ct_lift[j] + g
    for j, g in zip(sc.diff_c, g_c):
        ct_c[j] = g
    for j, g in zip(sc.diff_x, g_x):
        ct_x[j][i] = g


def _scan_jvp(sc, tangents, args):
    """The forward rule: the loop of ``jvp(body)``, (ċ_{k+1}, ẏ_k) = ∂(c_{k+1}, y_k)/
    ∂(lifted, c_k, x_k) · (l̇, ċ_k, ẋ_k), tangents carried along (a missing one is a
    zero of its aval) and none stored; the ẏ_k stacked and packed like the value."""
    lifted, c, xs = sc.split(args)
    t_l, t_c, t_xs = sc.split(list(tangents))
    ref = next((t, a) for t, a in zip(tangents, args) if t is not None)
    lead = shape_of(ref[0])[:len(shape_of(ref[0])) - len(shape_of(ref[1]))]

    def full(ts, avals, diff):
        return [ts[j] if ts[j] is not None else np.zeros(lead + avals[j][0], avals[j][1])
                for j in diff]
    tl = full(t_l, sc.l_avals, sc.diff_l)
    tc = full(t_c, sc.c_avals, sc.diff_c)
    txs = full(t_xs, [((sc.l,) + s, d) for s, d in sc.x_avals], sc.diff_x)
    at = (slice(None),) * len(lead)
    ty_steps = [[None] * sc.l for _ in sc.y_avals]
    for i in sc.order:
        x_i = [x[i] for x in xs]
        tx_i = [index(t, at + (i,)) for t in txs]
        c, tc, ty = _push_step(sc, lifted, c, x_i, tl, tc, tx_i)
        for j, t in enumerate(ty):
            ty_steps[j][i] = t
    parts = _merge([np.zeros(lead + s, sc.packed_dtype) for s, _ in sc.c_avals],
                   sc.diff_c, tc)
    parts += [stack(ts, axis=len(lead)) for ts in ty_steps]
    return _pack(parts, sc.out_avals, sc.packed_dtype, lead)


def _push_step(sc, lifted, c, x_i, tl, tc, tx_i):
    """One step's JVP: ``(c_{k+1}, ċ_{k+1} at diff_c, ẏ_k)`` from c_k, x_k and the
    tangents of the differentiable positions."""
    body, diff_l, diff_c, diff_x = sc.body, sc.diff_l, sc.diff_c, sc.diff_x

    def f(dl, dc, dx):
        return body(_merge(lifted, diff_l, dl), _merge(c, diff_c, dc), _merge(x_i, diff_x, dx))
    (c, _), (tc_all, ty) = jvp(f, ([lifted[j] for j in diff_l], [c[j] for j in diff_c],
                                   [x_i[j] for j in diff_x]), (tl, tc, tx_i))
    return c, [tc_all[j] for j in diff_c], ty


def _merge(full, positions, values):
    """``full`` with the entries at ``positions`` replaced by ``values``."""
    out = list(full)
    for j, v in zip(positions, values):
        out[j] = v
    return out


def _pull_step(body, lifted, c, x, ct_c, ct_y, diff_l, diff_c, diff_x, diff_y, lead,
               c_avals, y_avals):
    """One taped step: the cotangents of (lifted, c_k, x_k) at the differentiable
    positions, from those of (c_{k+1}, y_k)."""
    def f(dl, dc, dx):
        c1, y = body(_merge(lifted, diff_l, dl), _merge(c, diff_c, dc), _merge(x, diff_x, dx))
        return [c1[j] for j in diff_c], [y[j] for j in diff_y]
    _, pullback = vjp(f, [lifted[j] for j in diff_l], [c[j] for j in diff_c],
                      [x[j] for j in diff_x])
    seeds = ([ct_c[j] if ct_c[j] is not None else np.zeros(lead + c_avals[j][0], c_avals[j][1])
              for j in diff_c],
             [ct_y[j] if ct_y[j] is not None else np.zeros(lead + y_avals[j][0], y_avals[j][1])
              for j in diff_y])
    return pullback(seeds)


# --- packing ------------------------------------------------------------------------------
def _packed_dtype(avals):
    """One dtype holding every output: the inexact leaves' common dtype (float64 at least
    when integer leaves, carried exactly up to 2**53, ride along)."""
    inexact = [d for _, d in avals if _inexact(d)]
    pd = np.result_type(*inexact) if inexact else np.dtype(np.float64)
    if len(inexact) < len(avals):
        pd = np.result_type(pd, np.float64)
    return pd


def _pack_plain(values, avals, pd, name):
    flat = []
    for j, (v, (shape, d)) in enumerate(zip(values, avals)):
        v = np.asarray(v)
        f = v.astype(pd).ravel()
        if not _inexact(d) and not np.array_equal(f.astype(d), v.ravel()):
            raise OverflowError(f"dualad.{name}: the integer output leaf {j} (shape {shape}) "
                                f"holds values too large to carry exactly in {pd}; keep such "
                                f"integers out of the carry (or use checkpoints=None)")
        flat.append(f)
    return np.concatenate(flat) if flat else np.zeros(0, pd)


def _pack(parts, avals, pd, lead):
    """Traced or plain parts (each ``lead + shape``) as one ``lead + (N,)`` array."""
    flat = [reshape(_cast(p, pd), lead + (_size(s),)) for p, (s, _) in zip(parts, avals)]
    if not flat:
        return np.zeros(lead + (0,), pd)
    return concatenate(flat, axis=-1)


def _unpack(packed, avals, pd, lead, only):
    """The leaves of ``packed`` (``lead + (N,)``) in their shapes; ``only=None``: each in
    its own dtype (integer leaves as plain integers); ``only=()``: as cotangents (None for
    an integer leaf, real leaves the real part)."""
    out, start = [], 0
    ell = (Ellipsis,)
    for s, d in avals:
        n = _size(s)
        part = reshape(index(packed, ell + (slice(start, start + n),)), lead + s)
        start += n
        if only is not None and not _inexact(d):
            out.append(None)
            continue
        out.append(_cast(part, d))
    return out


# --- vmap ---------------------------------------------------------------------------------
def _batched_scan(step_name, body, args, batched, l_avals, c_avals, x_avals, y_avals, l,
                  snapshots, reverse, pd):
    """The batching rule: ONE scan of ``vmap(body)`` over carries that all carry the batch
    axis (an unbatched initial carry is broadcast: a step may mix it with batched values),
    its packed value laid out as ``(B, N)`` for the batched output."""
    nl, nc = len(l_avals), len(c_avals)
    size = next(shape_of(a)[0] for a, b in zip(args, batched) if b)
    lifted = list(args[:nl])
    carry = [a if b else broadcast_to(a, (size,) + s)
             for a, b, (s, _) in zip(args[nl:nl + nc], batched[nl:nl + nc], c_avals)]
    xs = [moveaxis(a, 0, 1) if b else a for a, b in zip(args[nl + nc:], batched[nl + nc:])]
    bl, bx = batched[:nl], batched[nl + nc:]

    def flat_body(*leaves):
        c, y = body(list(leaves[:nl]), list(leaves[nl:nl + nc]), list(leaves[nl + nc:]))
        return tuple(c) + tuple(y)
    mapped = vmap(flat_body, in_axes=tuple(0 if b else None for b in bl) + (0,) * nc +
                  tuple(0 if b else None for b in bx))

    def batched_body(L, C, X):
        out = mapped(*L, *C, *X)
        return list(out[:nc]), list(out[nc:])
    bl_avals = [((size,) + s if f else s, d) for (s, d), f in zip(l_avals, bl)]
    bc_avals = [((size,) + s, d) for s, d in c_avals]
    bx_avals = [((size,) + s if f else s, d) for (s, d), f in zip(x_avals, bx)]
    by_avals = [((size,) + s, d) for s, d in y_avals]
    prim, unpack = scan_primitive(batched_body, step_name, bl_avals, bc_avals, bx_avals,
                                  by_avals, l, snapshots, reverse,
                                  [isinstance(x, Box) for x in xs])
    outs = unpack(prim(*lifted, *carry, *xs))
    parts = [reshape(o, (size, -1)) for o in outs[:nc]]
    parts += [reshape(moveaxis(o, 0, 1), (size, -1)) for o in outs[nc:]]
    return concatenate([_cast(p, pd) for p in parts], axis=-1) if parts else \
        np.zeros((size, 0), pd)


def _stack(values):
    if any(isinstance(v, Box) for v in values):
        return stack(values)
    return np.stack([np.asarray(v) for v in values])
