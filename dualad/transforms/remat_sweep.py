r"""Running a :mod:`dualad.transforms.remat` schedule: advances, checkpoints, taped segments.

A schedule node over stages ``[i, j)`` is either one taped run (the equations between
the boundaries evaluated under :func:`dualad.vjp` from the checkpoint ``L(p_i)`` and
swept back from the cotangents of ``L(p_j)``) or a split at ``m``: advance plainly from
``L(p_i)`` to ``L(p_m)`` (freeing each value after its last reader), reverse ``[m, j)``,
drop ``L(p_m)``, reverse ``[i, m)``. A value live across a segment without being read in
it passes its cotangent straight through; the inputs' cotangents are summed over the
segments that read them. The equations are the recorded primitives, applied in the
recorded order, so each cotangent is the store-all sweep's, to rounding.
"""
from __future__ import annotations

import warnings

import numpy as np

from . import api
from .api import vjp
from .remat import RematWarning
from .remat_program import VAR
from .remat_schedule import make_plan
from ..core.tracer import Box, primal_value, shape_of
from ..core.tree import flatten
from ..interpreters.reverse.sweep import backward_sweep
from ..interpreters.reverse.tape import Var, VJPTrace

__all__ = ["Runner", "value_and_grad_within", "vjp_within"]


def _add(a, b):
    return b if a is None else a + b


class Runner:
    """Executes a :class:`~dualad.transforms.remat_schedule.RematPlan` on a packed
    program (:class:`~dualad.transforms.remat_program.Packed`) at the input values
    ``invals`` (one per input, in order)."""

    def __init__(self, plan, packed, invals):
        self.plan, self.prog, self.layout = plan, packed, plan.layout
        self.inputs = dict(enumerate(invals))
        self.live = self.layout.live_at_bounds()
        # values that are not boxes of an outer transformation: the primitives' impl
        # runs them directly, as the recording did
        self.plain = not any(isinstance(x, Box) for x in invals)
        self.outputs = None

    def _eval(self, p0, p1, env, keep=None):
        """Equations ``[p0, p1)`` evaluated into ``env``; with ``keep``, each value not in
        it freed after its last reader (an advance), and the guards checked."""
        P, last = self.prog, self.layout.last
        tmpl, n_in = P.templates, P.n_in
        tids = P.tid[p0:p1].tolist()
        starts = P.start[p0:p1 + 1].tolist()
        base = starts[0]
        args = P.args[base:starts[-1]].tolist()
        ends = last[P.args[base:starts[-1]]].tolist() if keep is not None else None
        direct = self.plain and keep is not None
        guards = P.guards
        for k, t in enumerate(tids):
            prim, params, pattern = tmpl[t]
            a0, a1 = starts[k] - base, starts[k + 1] - base
            vs = iter(args[a0:a1])
            vals = [env[next(vs)] if c is VAR else c for c in pattern]
            env[n_in + p0 + k] = (prim.impl if direct else prim)(*vals, **params)
            if keep is None:
                continue
            for g in guards.get(p0 + k + 1, ()):
                if not g.holds(primal_value(env[g.var])):
                    raise RuntimeError(f"remat({self.plan.name}): the guard "
                                       f"{g.describe()} no longer holds on replay")
            for v, end in zip(args[a0:a1], ends[a0:a1]):
                if end == p0 + k and v >= n_in and v not in keep:
                    env.pop(v, None)
        return env

    def advance(self, i, j, state):
        """``L(p_j)`` from ``L(p_i)``: the equations between, without a tape."""
        B = self.layout.bounds
        env = dict(self.inputs)
        env.update(state)
        keep = set(self.live[j])
        self._eval(B[i], B[j], env, keep)
        return {v: env[v] for v in self.live[j]}

    def _segment_vars(self, i, j):
        """``(s_in, x_in, outs)`` of the taped run of stages ``[i, j)``: the checkpoint's
        and the inputs' variables it reads, and the variables it makes that are read
        after it (with the program's outputs, for the last stage)."""
        P, B = self.prog, self.layout.bounds
        lo, hi = P.n_in + B[i], P.n_in + B[j]
        read = set(P.args[P.start[B[i]]:P.start[B[j]]].tolist())
        s_in = [v for v in self.live[i] if v in read]
        x_in = [v for v in range(P.n_in) if v in read]
        outs = [v for v in self.live[j] if lo <= v < hi]
        if j == len(B) - 1:
            outs = list(dict.fromkeys(outs + [a for a in P.outvars if a.__class__ is int
                                              and lo <= a < hi]))
        return s_in, x_in, outs

    def taped(self, i, j, state, ct_out, grads, batch):
        """Sweep stages ``[i, j)`` back: cotangents of ``L(p_i)`` from those of
        ``L(p_j)``, the inputs' cotangents added into ``grads``. The run is taped on its
        own reverse trace (its inputs are this runner's arrays: nothing is copied) and
        swept once, each node freed as the sweep passes it."""
        B = self.layout.bounds
        s_in, x_in, outs = self._segment_vars(i, j)
        trace = VJPTrace(tape=True)
        leaves = [trace.new_leaf(state[v]) for v in s_in] + \
            [trace.new_leaf(self.inputs[v]) for v in x_in]
        env = dict(self.inputs)
        env.update(state)
        env.update(zip(s_in + x_in, leaves))
        try:
            self._eval(B[i], B[j], env)
        finally:
            tape = trace.stop()
        made = [env[v] for v in outs]
        del env
        values = [o.value if isinstance(o, Var) and o._trace is trace else o for o in made]
        if j == len(B) - 1:
            self.outputs = dict(zip(outs, values))
        seeds = [(o, ct_out[v]) for v, o in zip(outs, made)
                 if ct_out.get(v) is not None and isinstance(o, Var) and o._trace is trace]
        del made, values
        results = backward_sweep(seeds, trace=trace, wanted=set(leaves), tape=tape) \
            if seeds else {}
        del seeds, tape
        ct_in = {v: ct_out.get(v) for v in self.live[i] if v in ct_out}
        for v, leaf in zip(s_in, leaves):
            ct_in[v] = _add(ct_in.get(v), results.get(leaf))
        for v, leaf in zip(x_in, leaves[len(s_in):]):
            grads[v] = _add(grads.get(v), results.get(leaf))
        return ct_in

    def reverse(self, node, i, j, state, ct_out, grads, batch):
        """Reverse stages ``[i, j)`` by the schedule ``node`` (see :func:`remat.solve`)."""
        if node is None:
            return self.taped(i, j, state, ct_out, grads, batch)
        m, right, left = node
        mid = self.advance(i, m, state)
        ct_mid = self.reverse(right, m, j, mid, ct_out, grads, batch)
        # the cotangents at p_j and the checkpoint at p_m are spent: freed now, not when
        # this frame returns (each level of the recursion would hold its own)
        ct_out.clear()
        mid.clear()
        return self.reverse(left, i, m, state, ct_mid, grads, batch)

    def run(self, ct_outvars, batch=()):
        """Cotangents of every input (``None`` where it does not reach an output) for
        the cotangents ``ct_outvars`` of the program's outputs, one per outvar."""
        grads, ct_out = {}, {}
        for a, c in zip(self.prog.outvars, ct_outvars):
            if a.__class__ is not int or c is None:
                continue
            if a in self.inputs:
                grads[a] = _add(grads.get(a), c)
            else:
                ct_out[a] = _add(ct_out.get(a), c)
        S = len(self.layout.bounds) - 1
        self.reverse(self.plan.tree, 0, S, {}, ct_out, grads, batch)
        return [grads.get(v) for v in range(self.prog.n_in)]

    def output_values(self):
        """The program's outputs from the last taped run (after :meth:`run`)."""
        out = []
        for a in self.prog.outvars:
            if a.__class__ is not int:
                out.append(a.value)
            else:
                out.append(self.inputs[a] if a in self.inputs else self.outputs[a])
        return out


def _ordinary(why, name, api_name, budget):
    warnings.warn(f"{api_name}({name}, max_memory={budget}): no schedule, because {why}; "
                  f"every intermediate is stored (the ordinary reverse sweep)",
                  RematWarning, stacklevel=5)


def _leaves_of(args, nums):
    per = [flatten(args[i]) for i in nums]
    return per, [x for leaves, _ in per for x in leaves]


def _per_arg(per, grads, leaves):
    """The flat input cotangents regrouped into one gradient per differentiated argument
    (zeros where an input does not reach the output)."""
    out, k = [], 0
    for ls, rebuild in per:
        n = len(ls)
        out.append(rebuild([np.zeros(shape_of(x)) if g is None else g
                            for g, x in zip(grads[k:k + n], leaves[k:k + n])]))
        k += n
    return out


def value_and_grad_within(f, argnums, has_aux, args, kwargs, holomorphic, max_memory):
    """``value_and_grad`` whose reverse sweep follows a schedule within ``max_memory``
    bytes (:mod:`dualad.transforms.remat`); the ordinary sweep when there is none."""
    name = getattr(f, "__name__", "f")
    single, nums = api._normalize_argnums("grad", argnums, len(args), f)
    if has_aux or holomorphic:
        _ordinary("has_aux and holomorphic are not scheduled yet", name, "grad", max_memory)
        return api._value_and_grad(f, argnums, has_aux, args, kwargs, holomorphic)
    plan, compiled = make_plan("grad", f, args, nums, kwargs, max_memory)
    if compiled is None or plan.tree is None:   # no schedule, or everything fits taped
        return api._value_and_grad(f, argnums, has_aux, args, kwargs, holomorphic)
    prog = compiled.program
    out = prog.outvars
    aval = prog.aval(out[0]) if len(out) == 1 and out[0].__class__ is int else None
    if aval is None or int(np.prod(aval[1])) != 1 or np.dtype(aval[2]).kind != "f":
        # not a real scalar output: the ordinary path raises grad's own error
        return api._value_and_grad(f, argnums, has_aux, args, kwargs, holomorphic)
    per, leaves = _leaves_of(args, nums)
    runner = Runner(plan, prog, leaves)
    grads = runner.run([np.ones(aval[1], dtype=aval[2])[()]])
    value = runner.output_values()[0]
    g = _per_arg(per, grads, leaves)
    return value, (g[0] if single else tuple(g))


def vjp_within(f, primals, max_memory):
    """``vjp`` whose pullback follows a schedule within ``max_memory`` bytes; each call of
    the pullback runs the schedule (its advances and taped segments) again."""
    nums = tuple(range(len(primals)))
    plan, compiled = make_plan("vjp", f, primals, nums, {}, max_memory)
    if compiled is None or plan.tree is None:
        return vjp(f, *primals)
    prog = compiled.program
    per, leaves = _leaves_of(primals, nums)
    leaves = [x.copy() if isinstance(x, np.ndarray) else x for x in leaves]
    runner = Runner(plan, prog, leaves)
    S = len(plan.layout.bounds) - 1
    final = runner.advance(0, S, {})       # the primal output, without a tape
    values = [a.value if a.__class__ is not int else
              runner.inputs[a] if a in runner.inputs else final[a] for a in prog.outvars]
    del final
    out = compiled.rebuild([v.copy() if isinstance(v, np.ndarray) else v for v in values])

    def pullback(cotangent):
        c_leaves, _ = flatten(cotangent)
        if len(c_leaves) != len(prog.outvars):
            raise ValueError(f"vjp pullback({plan.name}, max_memory): the cotangent has "
                             f"{len(c_leaves)} leaves, the output {len(prog.outvars)}")
        c_leaves = [np.asarray(c) for c in c_leaves]
        ints = [(a, c) for a, c in zip(prog.outvars, c_leaves) if a.__class__ is int]
        a, c = ints[0] if ints else (None, None)
        batch = c.shape[:c.ndim - len(prog.aval(a)[1])] if a is not None else ()
        grads = runner.run(c_leaves, batch)
        return tuple(_per_arg(per, grads, leaves)) if not batch else tuple(
            r([np.zeros(batch + np.shape(x)) if g is None else g
               for g, x in zip(grads[k:k + len(ls)], leaves[k:k + len(ls)])])
            for (ls, r), k in zip(per, np.cumsum([0] + [len(ls) for ls, _ in per])))

    return out, pullback


api.BUDGETED.update(value_and_grad=value_and_grad_within, vjp=vjp_within)
