"""The reverse rule of a loop primitive as ONE primitive: the forward loop storing the
residuals, then the reverse loop reading them (:mod:`dualad.transforms.scan.loop_rules`).

As two loop equations the residuals go through one packed array: each step writes
its values into it and the reverse loop takes each step's slices back out, two NumPy
calls per residual per step (the LSTM's step reads some 60 small residuals). Fused,
the implementation keeps each step's residuals as the tuple the forward step returned
and hands it to the reverse step as it is: no copy, one list append per step.

The fused primitive's own rules (second order) differentiate, batch or push tangents
through the two loop equations it stands for (:func:`unfused`), whose rules are loops.
"""
from __future__ import annotations

from itertools import repeat

import numpy as np

from ..api import jvp, vjp
from ...interpreters.staging.codegen import RETRACE
from ...core.primitive import Primitive
from ...core.tracer import shape_of
from ...interpreters.batching.vmap import vmap
from .loop import pack_steps
from .rules import _inexact, _merge, _pack, _packed_dtype, _unpack

__all__ = ["fused_reverse"]


def fused_reverse(fwd, rev, consts, c0, xs, carry, ct_ys, x_traced, run):
    """``(cotangent carry at the end, x̄s)`` of ``rev``'s loop over the residuals that
    ``fwd`` stores (its ys after its own ``len(fwd.y_avals) - n_residuals``) and
    ``ct_ys``, as one primitive (see the module doc)."""
    nk, nc, nx = len(fwd.k_avals), len(fwd.c_avals), len(fwd.x_avals)
    n_ct, n_cy = len(rev.c_avals), len(ct_ys)
    ny = len(fwd.y_avals) - (len(rev.x_avals) - n_cy)   # fwd's own ys, before residuals
    l = fwd.l
    out_avals = rev.out_avals
    pd = _packed_dtype(out_avals)
    bounds = np.cumsum([0, nk, nc, nx, n_ct, n_cy])

    def split(args):
        return [list(args[bounds[i]:bounds[i + 1]]) for i in range(5)]

    def impl(*args):
        k, c, x, g, cy = split(args)
        saved = _store_residuals(fwd, k, c, x, nc, ny)
        g, gx = _reverse_loop(fwd, rev, k, g, saved, cy, n_ct)
        return pack_steps(g, gx, out_avals, rev.y_avals, pd, rev.name)

    def unfused(*args):
        k, c, x, g, cy = split(args)
        res = run(fwd, k, c, x)[nc + ny:]
        return _pack(run(rev, k, g, res + cy), out_avals, pd, ())

    in_avals = fwd.k_avals + fwd.c_avals + [((l,) + s, d) for s, d in fwd.x_avals] + \
        rev.c_avals + [((l,) + s, d) for s, d in rev.x_avals[len(rev.x_avals) - n_cy:]]
    plain_x = {nk + nc + j for j in range(nx) if not x_traced[j]}
    diff = [j for j, (_, d) in enumerate(in_avals) if _inexact(d) and j not in plain_x]

    def on_diff(args):
        def f(*d):
            return unfused(*_merge(list(args), diff, d))
        return f, tuple(args[j] for j in diff)

    def vjp_all(ct, ans, *args):
        f, primals = on_diff(args)
        cts = vjp(f, *primals)[1](ct)
        return _merge([None] * len(args), diff, cts)

    def jvp_all(tangents, ans, *args):
        t, a = next((t, a) for t, a in zip(tangents, args) if t is not None)
        lead = tuple(shape_of(t)[:len(shape_of(t)) - len(shape_of(a))])
        f, primals = on_diff(args)
        ts = tuple(tangents[j] if tangents[j] is not None else
                   np.zeros(lead + in_avals[j][0], in_avals[j][1]) for j in diff)
        return jvp(f, primals, ts)[1]

    def batch(args, batched):
        return vmap(unfused, in_axes=tuple(0 if b else None for b in batched))(*args)

    prim = Primitive(f"scan_loop_grad({fwd.name})", impl)
    prim.nondiff_argnums = tuple(j for j in range(len(in_avals)) if j not in diff)
    prim.def_all(jvp=jvp_all, vjp=vjp_all)
    prim.defbatch(batch)
    outs = _unpack(prim(*consts, *c0, *xs, *carry, *ct_ys), out_avals, pd, (), None)
    outs = [o[()] if isinstance(o, np.ndarray) and o.ndim == 0 else o for o in outs]
    return outs[:n_ct], outs[n_ct:]


def _store_residuals(fwd, k, c, x, nc, ny):
    """The forward loop: each step's residuals (its outputs after the carry and ``ny``
    own ys), kept as the tuple the step returned, latest first (the reverse loop's
    order)."""
    step = fwd.step()
    saved = []
    keep = saved.append
    for row in (zip(*[v[::-1] if fwd.reverse else v for v in x]) if x else repeat((), fwd.l)):
        out = step(*k, *c, *row)
        if out is RETRACE:   # (the programs have no guards: loop_call checked)
            raise RuntimeError(f"dualad.scan({fwd.name}): the step failed a guard")
        c = out[:nc]
        keep(out[nc + ny:])
    saved.reverse()
    return saved


def _reverse_loop(fwd, rev, k, g, saved, cy, n_ct):
    """The reverse loop: ``(ḡ at the start, [x̄ per step in the order of xs])`` from the
    cotangent carry ``g``, each step reading its residuals and its ys' cotangents."""
    back = rev.step()
    gx = []
    keep = gx.append
    rows = zip(*[v if fwd.reverse else v[::-1] for v in cy]) if cy else repeat((), fwd.l)
    for r, row in zip(saved, rows):
        out = back(*k, *g, *r, *row)
        if out is RETRACE:
            raise RuntimeError(f"dualad.scan({fwd.name}): the reverse step failed a guard")
        g = out[:n_ct]
        keep(out[n_ct:])
    if not fwd.reverse:
        gx.reverse()   # in the order of xs
    return g, gx
