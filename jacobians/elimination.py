r"""Vertex elimination on a small program's graph, in Markowitz order (a cost comparison).

Griewank and Walther (*Evaluating Derivatives*, 2nd ed., ch. 9-10) write the Jacobian
of a program as the result of eliminating its intermediate vertices from the linearized
graph: every edge ``u → v`` carries the local Jacobian :math:`J_{vu} = \partial v / \partial u`
and eliminating ``v`` adds, for every predecessor ``u`` and successor ``w``,

.. math::

    J_{wu} \mathrel{+}= J_{wv} J_{vu},

then removes ``v``. When only inputs and the output are left, the edges from the inputs
to the output are ``J_f``. Eliminating in program order is forward mode, in reverse order
reverse mode; any other order is a cross-country accumulation, and the cut of
:mod:`jacobians.bottleneck` is one (``h``'s vertices in reverse order, ``g``'s in program
order, the cut last). The *Markowitz* order eliminates next the vertex whose elimination
costs the fewest multiply-adds now (a greedy heuristic: the optimal order is NP-hard,
Naumann 2008).

Here the vertices are the program's values (arrays, not scalars), so an edge is a block:
a block that is diagonal (elementwise primitives) is kept as its diagonal and its products
cost what a diagonal scaling costs. :func:`eliminate` accumulates ``J_f`` in a given order
and counts the multiply-adds; it builds every local Jacobian densely (one forward sweep
per equation), so it is for small programs: a comparison of orders, not a planner path.
"""
from __future__ import annotations

__all__ = ["eliminate", "ORDERS"]

import numpy as np

ORDERS = ("forward", "reverse", "markowitz", "cut")


class _Block:
    """A local Jacobian: ``diag`` (a vector: a diagonal block) or ``dense`` (a matrix)."""

    __slots__ = ("diag", "dense")

    def __init__(self, diag=None, dense=None):
        self.diag, self.dense = diag, dense

    def rows(self):
        return (self.diag if self.dense is None else self.dense).shape[0]

    def cols(self):
        return self.diag.shape[0] if self.dense is None else self.dense.shape[1]

    def matrix(self):
        return np.diag(self.diag) if self.dense is None else self.dense


def _cost(a, b):
    """Multiply-adds of the block product ``a b`` (a diagonal block scales the other)."""
    if a.dense is None:
        return a.diag.size if b.dense is None else b.dense.size
    if b.dense is None:
        return a.dense.size
    return a.dense.shape[0] * a.dense.shape[1] * b.dense.shape[1]


def _times(a, b):
    """``(a b, multiply-adds)`` of two blocks."""
    if a.dense is None and b.dense is None:
        prod = _Block(diag=a.diag * b.diag)
    elif a.dense is None:
        prod = _Block(dense=a.diag[:, None] * b.dense)
    elif b.dense is None:
        prod = _Block(dense=a.dense * b.diag[None, :])
    else:
        prod = _Block(dense=a.dense @ b.dense)
    return prod, _cost(a, b)


def _plus(a, b):
    """``a + b`` (a block, or None for no edge yet)."""
    if a is None:
        return b
    if a.dense is None and b.dense is None:
        return _Block(diag=a.diag + b.diag)
    return _Block(dense=a.matrix() + b.matrix())


def _local_blocks(program, inputs):
    """The primal values and ``{(w, u): block}``: each equation's local Jacobian with
    respect to each variable it reads (dense by a forward sweep; kept as its diagonal
    when it is one)."""
    from .dense import jacfwd
    env = dict(zip(program.invars, [np.asarray(x, dtype=np.float64) for x in inputs]))
    edges = {}
    for e in program.body:
        args = [env[a] if a.__class__ is int else a.value for a in e.ins]
        env[e.out] = np.asarray(e.prim(*args, **e.params), dtype=np.float64)
        for i, a in enumerate(e.ins):
            if a.__class__ is not int or (e.out, a) in edges:
                continue
            at = [k for k, b in enumerate(e.ins) if b == a]

            def local(v, at=at, args=args, e=e):
                return e.prim(*[v if k in at else x for k, x in enumerate(args)], **e.params)
            J = np.asarray(jacfwd(local, env[a])).reshape(env[e.out].size, env[a].size)
            square = J.shape[0] == J.shape[1]
            if square and not np.any(J - np.diag(np.diag(J))):
                edges[(e.out, a)] = _Block(diag=np.diag(J).copy())
            else:
                edges[(e.out, a)] = _Block(dense=J)
    return env, edges


def _cost_of(v, edges, preds, succs):
    """Multiply-adds of eliminating ``v`` now (Markowitz's measure, by blocks)."""
    return sum(_cost(edges[(w, v)], edges[(v, u)]) for u in preds.get(v, ())
               for w in succs.get(v, ()))


def _order(kind, program, middle, cut):
    """The fixed orders: program order, its reverse, or the cut's (``h`` reversed, ``g``
    in order, the cut last); None for Markowitz (chosen as it goes)."""
    if kind == "forward":
        return list(middle)
    if kind == "reverse":
        return list(reversed(middle))
    if kind == "cut":
        cut_vars = set(cut.cut)
        prefix = {e.out for e in cut.prefix}
        h = [v for v in middle if v in prefix and v not in cut_vars]
        g = [v for v in middle if v not in prefix and v not in cut_vars]
        return h[::-1] + g + [v for v in middle if v in cut_vars]
    return None


def eliminate(program, inputs, order="markowitz", cut=None):
    """``(J, multiply_adds, sequence)``: ``J_f`` (``m x n``, dense) of a guard-free program
    with one output, accumulated by eliminating its intermediate vertices in ``order``
    (one of :data:`ORDERS`; ``"cut"`` needs the :class:`jacobians.gathers.Cut` of
    :func:`jacobians.bottleneck.find_bottleneck`), the multiply-adds the eliminations
    cost, and the vertices in the order they were eliminated."""
    if order not in ORDERS:
        raise ValueError(f"eliminate: order={order!r} is not one of {ORDERS}")
    if order == "cut" and cut is None:
        raise ValueError("eliminate: order='cut' needs cut=, the Cut that "
                         "jacobians.bottleneck.find_bottleneck(program, n, m) returns")
    if program.guards or len(program.outvars) != 1 or program.outvars[0].__class__ is not int:
        raise ValueError("eliminate: a program without guards and with one output array "
                         "computed from its inputs is needed")
    program = program.pruned()
    env, edges = _local_blocks(program, inputs)
    out = program.outvars[0]
    middle = [e.out for e in program.body if e.out != out]
    preds, succs = {}, {}
    for (w, u) in edges:
        preds.setdefault(w, set()).add(u)
        succs.setdefault(u, set()).add(w)
    sequence = _order(order, program, middle, cut)
    left, done, flops = set(middle), [], 0
    while left:
        v = sequence[len(done)] if sequence is not None else min(
            left, key=lambda x: (_cost_of(x, edges, preds, succs), x))
        flops += _eliminate_one(v, edges, preds, succs)
        left.discard(v)
        done.append(v)
    cols = []
    for v in program.invars:
        block = edges.get((out, v))
        cols.append(block.matrix() if block is not None else
                    np.zeros((env[out].size, env[v].size)))
    return np.hstack(cols), flops, done


def _eliminate_one(v, edges, preds, succs):
    """Eliminate ``v``: ``J_wu += J_wv J_vu`` for its predecessors ``u`` and successors
    ``w``; the multiply-adds."""
    flops = 0
    for u in preds.get(v, ()):
        for w in succs.get(v, ()):
            prod, cost = _times(edges[(w, v)], edges[(v, u)])
            edges[(w, u)] = _plus(edges.get((w, u)), prod)
            preds[w].add(u)
            succs[u].add(w)
            flops += cost
    for u in preds.pop(v, ()):
        succs[u].discard(v)
        del edges[(v, u)]
    for w in succs.pop(v, ()):
        preds[w].discard(v)
        del edges[(w, v)]
    return flops
