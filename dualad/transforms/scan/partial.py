"""Splitting a loop's reverse step into what the forward loop stores and what the reverse
loop computes (partial evaluation, as JAX's ``scan`` transpose does).

The reverse step, traced once (:mod:`dualad.transforms.scan.loop_rules`), is a program of

    (consts k | carry: cotangents | x: c_k, x_k, ȳ_k) -> (c̄_k, k̄ + k̄_k) , x̄_k .

Its equations fall into three kinds by what they read: ``I`` (only consts and
constants: the same at every step), ``F`` (also ``c_k`` or ``x_k``, no cotangent: the
step's own forward values, the tanh the pullback of tanh reads) and ``B`` (a
cotangent). The ``F`` values that a ``B`` equation or an output reads, the residuals,
are computed by the forward loop, which runs the step program and these ``F``
equations (those the step holds already are not added again) and stacks the residuals
as extra ys; the reverse loop reads them as xs and runs the ``I`` and ``B``
equations only. So no forward step is computed twice, and the reverse loop stores one
stacked array per residual, as the tape of the unrolled loop would.
"""
from __future__ import annotations

from ...interpreters.staging.program import Eqn, Program
from ...interpreters.staging.trace import cse_key

__all__ = ["split_reverse"]

_I, _F, _B = 0, 1, 2


def split_reverse(step, back, n_k, n_ct, n_state):
    """``(forward, reverse, residual_avals)``: ``forward``, ``step`` (inputs ``(k, c, x)``,
    outputs ``(c', y)``) with the residuals as extra outputs; ``reverse``, ``back`` with
    inputs ``(k, cotangent carry, residuals, ȳ)``. ``back``'s inputs are ``n_k`` consts,
    ``n_ct`` cotangent carries, then ``n_state`` forward inputs (``c_k, x_k``, the same
    leaves as ``step``'s after its consts), then the ys' cotangents."""
    b_in = back.invars
    k_in, ct_in = b_in[:n_k], b_in[n_k:n_k + n_ct]
    st_in, cty_in = b_in[n_k + n_ct:n_k + n_ct + n_state], b_in[n_k + n_ct + n_state:]
    kind = {v: _I for v in k_in}
    kind.update({v: _F for v in st_in})
    kind.update({v: _B for v in list(ct_in) + list(cty_in)})
    eqns = [e for e in back.body]   # (no guards: loop_call checked)
    for e in eqns:
        kind[e.out] = max((kind[a] for a in e.ins if a.__class__ is int), default=_I)
    needed = []
    seen = set()

    def need(v):
        if v.__class__ is int and kind[v] == _F and v not in seen:
            seen.add(v)
            needed.append(v)
    for e in eqns:
        if kind[e.out] == _B:
            for a in e.ins:
                need(a)
    for a in back.outvars:
        need(a)
    # the forward step: step's program, then back's I and F equations, renumbered
    offset = max(list(step.avals) + [-1]) + 1
    s_in = step.invars
    rename = dict(zip(list(k_in) + list(st_in), list(s_in[:n_k]) + list(s_in[n_k:])))

    def new(v):
        if v.__class__ is not int:
            return v
        w = rename.get(v)
        if w is None:
            w = rename[v] = v + offset
        return w
    avals = dict(step.avals)
    body = list(step.body)
    seen = {}   # an equation the step already holds is not added again (pure primitives)
    for e in body:
        key = cse_key(e.prim, e.ins, e.params)
        if key is not None:
            seen.setdefault(key, e.out)
    for e in eqns:
        if kind[e.out] != _B:
            ins = tuple(new(a) for a in e.ins)
            key = cse_key(e.prim, ins, e.params)
            hit = None if key is None else seen.get(key)
            if hit is not None and avals[hit] == back.avals[e.out]:
                rename[e.out] = hit
                continue
            body.append(Eqn(e.prim, ins, e.params, new(e.out)))
            avals[new(e.out)] = back.avals[e.out]
            if key is not None:
                seen[key] = new(e.out)
    fwd = Program(list(s_in), body, list(step.outvars) + [new(v) for v in needed], avals,
                  step.name).pruned()
    rev = Program(list(k_in) + list(ct_in) + needed + list(cty_in),
                  [e for e in eqns if kind[e.out] != _F], list(back.outvars), back.avals,
                  back.name).pruned()
    return fwd, rev, [back.avals[v][1:] for v in needed]
