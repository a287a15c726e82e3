"""The loop primitive (:func:`loop_primitive`, described in :mod:`dualad.transforms.scan.loop`) and its
rules, each itself ONE loop.

With ``step(k, c_k, x_k) = (c_{k+1}, y_k)`` (``k``: the consts):

- reverse (``vjp_all``): the loop, in the opposite order, of the step's pullback

      (c̄_{k+1}, k̄) , (c_k, x_k, ȳ_k)  ->  (c̄_k, k̄ + k̄_k) , x̄_k,
      (k̄_k, c̄_k, x̄_k) = (c̄_{k+1}, ȳ_k) · ∂(c_{k+1}, y_k)/∂(k, c_k, x_k),

  the consts' cotangent summed in the carry. Traced once, the reverse step is split
  (:mod:`dualad.transforms.scan.partial`): the forward values it reads are stored by a forward
  loop (the step program plus those values as extra ys), the reverse loop reads them,
  the two as one primitive (:mod:`dualad.transforms.scan.fused`); a reverse step that branches on
  a value: the carries stored by a loop, the reverse sweep run in Python;
- forward (``jvp_all``): the loop of ``jvp(step)`` over ``(c, ċ)``, ``(x, ẋ)``;
- vmap: the loop of ``vmap(step)``, every carry batched.

Each derived step is written with :func:`dualad.vjp`, :func:`dualad.jvp`,
:func:`dualad.vmap` and registry operations on the step's program replayed through the
primitives, and made a loop by :func:`loop_call`: so it is traced once
into a program, and the rules of that loop are derived the same way (second order).
"""
from __future__ import annotations

from itertools import repeat

import numpy as np

from ..api import jvp, vjp
from ...interpreters.staging.codegen import RETRACE
from ...interpreters.staging.program import Program
from ...interpreters.staging.replay import run as replay_run
from ...ops import broadcast_to, concatenate, moveaxis, reshape
from ...core.primitive import Primitive
from ...core.tracer import Box, shape_of
from ...interpreters.batching.vmap import vmap
from .closure import aval, example_value
from .loop import LoopSpec, first_slices, pack_steps, python_loop, trace_leaves
from .fused import fused_reverse
from .partial import split_reverse
from .rules import _cast, _inexact, _merge, _pack, _packed_dtype, _unpack

__all__ = ["define_rules", "loop_primitive", "run", "loop_call"]


def _replay(spec, inputs):
    out = replay_run(spec.program, inputs)
    if out.__class__ is not tuple:   # RETRACE: a traced step has no guards (loop_call)
        raise RuntimeError(f"dualad.scan({spec.name}): the step's program failed a guard")
    return out


def _zeros(lead, aval):
    return np.zeros(lead + aval[0], aval[1])


def _or_zero(g, lead, aval):
    return _zeros(lead, aval) if g is None else g


def define_rules(prim, spec, x_traced, pd):
    """Set ``prim``'s reverse, forward and batching rules (see the module doc): the
    methods :meth:`_LoopRules.vjp`, :meth:`_LoopRules.jvp` and :meth:`_LoopRules.batch`
    of this loop's :class:`_LoopRules`."""
    rules = _LoopRules(spec, x_traced, pd)

    def vjp_all(ct, ans, *args):
        return rules.vjp(ct, args)

    def jvp_all(tangents, ans, *args):
        return rules.jvp(tangents, args)

    def batch(args, batched):
        return rules.batch(args, batched)

    prim.def_all(jvp=jvp_all, vjp=vjp_all)
    prim.defbatch(batch)


class _LoopRules:
    """The rules of one loop primitive: its ``spec``, the packed dtype ``pd``, the
    numbers of consts, carry, xs and ys leaves (``nk``, ``nc``, ``nx``, ``ny``) and the
    differentiable positions of each (``dk``, ``dc``, ``dx``, ``dy``: inexact, and for xs
    traced at the call)."""

    def __init__(self, spec, x_traced, pd):
        self.spec, self.x_traced, self.pd = spec, x_traced, pd
        self.nk, self.nc, self.nx, self.ny = len(spec.k_avals), len(spec.c_avals), \
            len(spec.x_avals), len(spec.y_avals)
        self.dk = [j for j, (_, d) in enumerate(spec.k_avals) if _inexact(d)]
        self.dc = [j for j, (_, d) in enumerate(spec.c_avals) if _inexact(d)]
        self.dx = [j for j, (_, d) in enumerate(spec.x_avals) if _inexact(d) and x_traced[j]]
        self.dy = [j for j, (_, d) in enumerate(spec.y_avals) if _inexact(d)]

    def split(self, args):
        """``(consts, c_0, xs)`` from the primitive's flat arguments."""
        nk, nc = self.nk, self.nc
        return list(args[:nk]), list(args[nk:nk + nc]), list(args[nk + nc:])

    def step_fn(self, k, c, x):
        """The step at (k, c, x) as a function of its differentiable leaves."""
        spec, nc, dk, dc, dx = self.spec, self.nc, self.dk, self.dc, self.dx

        def f(a, b, e):
            out = _replay(spec, _merge(k, dk, a) + _merge(c, dc, b) + _merge(x, dx, e))
            return list(out[:nc]), list(out[nc:])
        return f, ([k[j] for j in dk], [c[j] for j in dc], [x[j] for j in dx])

    def reverse_step(self, lead):
        """The reverse loop's step (cotangents with leading axes ``lead``)."""
        spec, nc, nx, dk, dc, dx, dy = self.spec, self.nc, self.nx, self.dk, self.dc, \
            self.dx, self.dy
        step_fn = self.step_fn

        def back(K, C, X):
            """(c̄_{k+1}, k̄), (c_k, x_k, ȳ_k) -> (c̄_k, k̄ + k̄_k), x̄_k."""
            g_next, acc = C[:len(dc)], C[len(dc):]
            c_k, x_k, ct_yk = X[:nc], X[nc:nc + nx], X[nc + nx:]
            f, primals = step_fn(K, c_k, x_k)

            def g(a, b, e):
                c1, y = f(a, b, e)
                return [c1[j] for j in dc], [y[j] for j in dy]
            _, pullback = vjp(g, *primals)
            g_k, g_c, g_x = pullback((list(g_next), list(ct_yk)))
            g_c = [_cast(_or_zero(v, lead, spec.c_avals[j]), spec.c_avals[j][1])
                   for v, j in zip(g_c, dc)]
            acc = [_cast(a + _or_zero(v, lead, spec.k_avals[j]), spec.k_avals[j][1])
                   for a, v, j in zip(acc, g_k, dk)]
            return g_c + acc, [_or_zero(v, lead, spec.x_avals[j]) for v, j in zip(g_x, dx)]
        return back

    def vjp(self, ct, args):
        """The reverse rule: the loop of the step's pullback in the opposite order, the
        consts' cotangent summed in the carry; fused with a forward loop that stores what
        it reads (:meth:`_fused_reverse`) when its step traces without branching, else
        over carries stored by a loop with the sweep in Python (:meth:`_python_reverse`)."""
        spec, nk, nc, nx = self.spec, self.nk, self.nc, self.nx
        dk, dc, dx, dy = self.dk, self.dc, self.dx, self.dy
        consts, c0, xs = self.split(args)
        lead = tuple(shape_of(ct)[:-1])
        m = len(lead)
        if not (dc or dk or dx):
            return [None] * len(args)
        cts = _unpack(ct, spec.out_avals, self.pd, lead, ())
        ct_c, ct_y = cts[:nc], cts[nc:]
        carry = [ct_c[j] for j in dc] + [_zeros(lead, spec.k_avals[j]) for j in dk]
        ct_ys = [moveaxis(ct_y[j], m, 0) if m else ct_y[j] for j in dy]
        state = [example_value(c) for c in c0] + first_slices(xs, spec.reverse)
        back = self.reverse_step(lead)
        traced = trace_leaves(back, f"{spec.name}_vjp", consts, carry,
                              state + first_slices(ct_ys, spec.reverse))
        if traced is not None and not traced[1]:
            c_out, g_xs = self._fused_reverse(traced, lead, consts, c0, xs, carry, ct_ys)
        else:   # the reverse step branches: the carries stored, the reverse sweep in Python
            c_out, g_xs = self._python_reverse(back, consts, c0, xs, carry, ct_ys)
        out = [None] * (nk + nc + nx)
        for p, j in enumerate(dc):
            out[nk + j] = c_out[p]
        for p, j in enumerate(dk):
            out[j] = c_out[len(dc) + p]
        for p, j in enumerate(dx):
            out[nk + nc + j] = moveaxis(g_xs[p], 0, m) if m else g_xs[p]
        return out

    def _fused_reverse(self, traced, lead, consts, c0, xs, carry, ct_ys):
        """The traced reverse step split (:func:`split_reverse`) into a forward loop (the
        step program, the values the reverse step reads as extra ys, the ys themselves
        dropped) and a reverse loop reading them, run as one :func:`fused_reverse`."""
        spec, nk, nc, nx, ny, dy = self.spec, self.nk, self.nc, self.nx, self.ny, self.dy
        name, l = spec.name, spec.l
        fwd_p, rev_p, r_avals = split_reverse(spec.program, traced[0], nk, len(carry),
                                              nc + nx)
        fwd_p = Program(fwd_p.invars, fwd_p.body, fwd_p.outvars[:nc] +
                        fwd_p.outvars[nc + ny:], fwd_p.avals, fwd_p.name).pruned()
        fwd = LoopSpec(fwd_p, name, spec.k_avals, spec.c_avals, spec.x_avals, r_avals,
                       l, spec.reverse)   # (the ys are not needed)
        rev = LoopSpec(rev_p, f"{name}_vjp", spec.k_avals, [aval(v) for v in carry],
                       r_avals + [(lead + spec.y_avals[j][0], spec.y_avals[j][1])
                                  for j in dy], traced[2], l, not spec.reverse)
        return fused_reverse(fwd, rev, consts, c0, xs, carry, ct_ys, self.x_traced, run)

    def _python_reverse(self, back, consts, c0, xs, carry, ct_ys):
        """The carry before each step stored by one loop, then ``back`` run step by step
        in the opposite order (:func:`python_loop`)."""
        spec, nk, nc, ny = self.spec, self.nk, self.nc, self.ny
        carries = LoopSpec(_with_carries(spec.program, nk, nc), spec.name, spec.k_avals,
                           spec.c_avals, spec.x_avals, spec.y_avals + spec.c_avals, spec.l,
                           spec.reverse)
        res = run(carries, consts, c0, xs)[nc + ny:]
        return python_loop(back, consts, carry, res + list(xs) + ct_ys, spec.l,
                           not spec.reverse)

    def jvp(self, tangents, args):
        """The forward rule: the loop of ``jvp(step)`` over ``(c, ċ)``, ``(x, ẋ)``, the
        consts' tangents among the consts; a missing tangent is a zero of its aval."""
        spec, nk, nc, nx, ny = self.spec, self.nk, self.nc, self.nx, self.ny
        dk, dc, dx, dy, l = self.dk, self.dc, self.dx, self.dy, spec.l
        step_fn = self.step_fn
        consts, c0, xs = self.split(args)
        t_k, t_c, t_x = self.split(list(tangents))
        t, a = next((t, a) for t, a in zip(tangents, args) if t is not None)
        lead = tuple(shape_of(t)[:len(shape_of(t)) - len(shape_of(a))])
        m = len(lead)

        def full(ts, avals, diff):
            return [ts[j] if ts[j] is not None else _zeros(lead, avals[j]) for j in diff]
        tk = full(t_k, spec.k_avals, dk)
        tc = full(t_c, spec.c_avals, dc)
        tx = [moveaxis(v, m, 0) if m else v
              for v in full(t_x, [((l,) + s, d) for s, d in spec.x_avals], dx)]

        def fwd(K, C, X):
            f, primals = step_fn(K[:nk], C[:nc], X[:nx])
            (c1, y), (tc1, ty) = jvp(f, primals, (K[nk:], C[nc:], X[nx:]))
            tc1 = [_or_zero(tc1[j], lead, spec.c_avals[j]) for j in dc]
            ty = [_or_zero(ty[j], lead, spec.y_avals[j]) for j in dy]
            return list(c1) + [_cast(v, spec.c_avals[j][1]) for v, j in zip(tc1, dc)], \
                list(y) + ty
        c_l, ys = loop_call(fwd, f"{spec.name}_jvp", consts + tk, c0 + tc, xs + tx, l,
                            spec.reverse)

        def lead_first(v):
            return moveaxis(v, 0, m) if m else v
        parts = _merge([_zeros(lead, av) for av in spec.c_avals], dc, c_l[nc:])
        parts += _merge([_zeros(lead, ((l,) + s, d)) for s, d in spec.y_avals], dy,
                        [lead_first(v) for v in ys[ny:]])
        return _pack(parts, spec.out_avals, self.pd, lead)

    def batch(self, args, batched):
        """The batching rule: the loop of ``vmap(step)``, every carry batched (an
        unbatched initial carry broadcast), the packed value laid out as ``(B, N)``."""
        spec, nk, nc, pd = self.spec, self.nk, self.nc, self.pd
        size = next(shape_of(a)[0] for a, b in zip(args, batched) if b)
        consts = list(args[:nk])
        carry = [a if b else broadcast_to(a, (size,) + s)
                 for a, b, (s, _) in zip(args[nk:nk + nc], batched[nk:nk + nc], spec.c_avals)]
        xs = [moveaxis(a, 0, 1) if b else a
              for a, b in zip(args[nk + nc:], batched[nk + nc:])]
        in_axes = tuple(0 if b else None for b in batched[:nk]) + (0,) * nc + \
            tuple(0 if b else None for b in batched[nk + nc:])

        def flat(*leaves):
            return tuple(_replay(spec, list(leaves)))
        mapped = vmap(flat, in_axes=in_axes)

        def bstep(K, C, X):
            out = mapped(*K, *C, *X)
            return list(out[:nc]), list(out[nc:])
        c_l, ys = loop_call(bstep, f"{spec.name}_vmap", consts, carry, xs, spec.l,
                            spec.reverse)
        parts = list(c_l) + [moveaxis(v, 0, 1) for v in ys]
        flat_parts = [reshape(_cast(p, pd), (size, -1)) for p in parts]
        return concatenate(flat_parts, axis=-1) if flat_parts else np.zeros((size, 0), pd)


def _with_carries(prog, nk, nc):
    """``prog`` with its carry inputs as extra outputs (the carry before each step)."""
    return Program(prog.invars, prog.body, list(prog.outvars) + list(prog.invars[nk:nk + nc]),
                   prog.avals, prog.name)


def loop_primitive(spec, x_traced):
    """The primitive of ``spec`` and ``unpack(packed) -> [c_l..., ys...]``.
    ``x_traced[j]``: whether xs leaf j was traced at the call (a plain one never needs a
    cotangent)."""
    name = f"scan_loop({spec.name})"
    out_avals = spec.out_avals
    pd = _packed_dtype(out_avals)
    nk, nc = len(spec.k_avals), len(spec.c_avals)
    reverse, l = spec.reverse, spec.l

    def impl(*args):
        consts, c = args[:nk], args[nk:nk + nc]
        xs = args[nk + nc:]
        fn = spec.step()
        steps = []
        keep = steps.append
        # each step's slices: iterating an array gives its rows as views
        rows = zip(*[x[::-1] if reverse else x for x in xs]) if xs else repeat((), l)
        for row in rows:
            out = fn(*consts, *c, *row)
            if out is RETRACE:   # (the program has no guards: loop_call checked)
                raise RuntimeError(f"dualad.{name}: the step's program failed a guard")
            c = out[:nc]
            keep(out[nc:])   # (new arrays, or views of values nothing writes)
        if reverse:
            steps.reverse()   # in the order of xs
        return pack_steps(c, steps, out_avals, spec.y_avals, pd, name)

    prim = Primitive(name, impl)
    k_avals = spec.k_avals
    all_in = k_avals + spec.c_avals + [((spec.l,) + s, d) for s, d in spec.x_avals]
    prim.nondiff_argnums = tuple(j for j, (_, d) in enumerate(all_in) if not _inexact(d))
    define_rules(prim, spec, x_traced, pd)

    def unpack(packed):
        return _unpack(packed, out_avals, pd, (), None)
    return prim, unpack


def run(spec, consts, carry, xs):
    """The unpacked outputs ``[c_l..., ys...]`` of ``spec``'s primitive at these inputs
    (leaves in their own dtypes; a 0-d output as a scalar, as a loop gives)."""
    prim, unpack = loop_primitive(spec, [isinstance(x, Box) for x in xs])
    return [o[()] if isinstance(o, np.ndarray) and o.ndim == 0 else o
            for o in unpack(prim(*consts, *carry, *xs))]


def loop_call(fn, name, consts, carry, xs, l, reverse):
    """``(c_l, ys)`` of the loop of ``fn(consts, c, x) -> (c', y)`` (lists of leaves) over
    the leading axis of ``xs``: ONE loop primitive when ``fn`` traces to a program without
    guards, else ``fn`` run at every step (see the module doc)."""
    x_first = first_slices(xs, reverse)
    traced = trace_leaves(fn, name, consts, carry, x_first)
    if traced is None:
        return python_loop(fn, consts, carry, xs, l, reverse)
    prog, lifted, y_avals = traced
    ks = list(consts) + lifted
    spec = LoopSpec(prog, name, [aval(v) for v in ks], [aval(v) for v in carry],
                    [aval(v) for v in x_first], y_avals, l, reverse)
    outs = run(spec, ks, carry, xs)
    return outs[:len(carry)], outs[len(carry):]
