r"""Chains of bottleneck cuts in ``f``'s recorded program, and the order of their product.

A *piece* of a guard-free program is the map from a set of its values ``A`` to another,
``B``: the equations on the paths from ``A`` to ``B`` (and those computing the constants
they read), found by walking back from ``B`` and stopping at ``A`` (:class:`Piece`). ``A``
is a *vertex cut* of the piece when every path from its inputs to ``B`` passes through it;
the narrowest one (weight: the sum of its values' sizes) is a maximum flow on the
node-split graph (Menger; :func:`min_cut`, as for a single cut in
:mod:`jacobians.bottleneck`). Cutting a piece ``A -> B`` at ``C`` writes its Jacobian as
the product :math:`J_{B \leftarrow C} J_{C \leftarrow A}`; cutting again gives

.. math::

    J_f = J_L \cdots J_2 J_1, \qquad J_i \in \mathbb{R}^{d_i \times d_{i-1}},

with ``d_0 = n``, ``d_L = m`` and ``d_i`` the width of the ``i``-th cut (Griewank and
Walther, *Evaluating Derivatives*, 2nd ed., ch. 9-10: a chain of cuts is an elimination
order that takes the vertices between two cuts together).

**When a cut pays** (:func:`find_chain`). A piece of ``a`` inputs and ``b`` outputs whose
equations cost ``W`` multiply-adds is modelled at ``min(a, b) W`` (one sweep per direction
of the cheaper pure mode, a tangent or cotangent costing about the primal's arithmetic;
``W``: a product ``(p x q)(q x r)`` costs ``pqr``, :func:`work`). Cut at ``C`` of width
``k`` into parts of ``W_1`` and ``W_2``, it costs ``min(a, k) W_1 + min(k, b) W_2`` plus
the product, ``b k a``: a piece is cut while that is less (so never at a ``k`` no smaller
than ``min(a, b)``), each part cut again, up to :data:`MAX_PIECES` pieces.

**The product's order** (:func:`chain_order`). Multiplying ``L`` dense factors costs
:math:`\sum d_i d_j d_k` multiply-adds over the products made, depending on the
association; the cheapest association is the classical matrix-chain dynamic programme over
the widths ``d_0 .. d_L`` (Cormen et al., *Introduction to Algorithms*, ch. 15.2), in
:math:`O(L^3)`. For ``n = 2000 -> 10 -> 500 -> 8 -> 2000`` left to right costs
:math:`10 \cdot 2000 \cdot 500 + \dots`; the programme's order multiplies across the
narrow cuts first.
"""
from __future__ import annotations

__all__ = ["Piece", "min_cut", "separators", "find_chain", "chain_order", "chain_product",
           "work", "MAX_PIECES", "CANDIDATES", "PIECE", "RHO"]

import numpy as np

#: At most this many pieces in a chain (each gets a plan of its own: a census, an
#: evaluation, maybe a detection and a trace).
MAX_PIECES = 8
#: At most this many single-value cuts (the narrowest) are weighed for a chain.
CANDIDATES = 24
#: A piece's fixed cost in multiply-adds (its plan's call, its sweeps' per-primitive
#: overhead: about 0.2 ms at 1 ns a multiply-add), and a reverse direction's arithmetic
#: relative to a forward one's (jacobians.cost.RHO).
PIECE = 200_000
RHO = 1.3
_PRODUCTS = ("matmul", "dot", "einsum", "tensordot", "inner", "outer", "vdot", "kron")


def _size(program, a):
    """The number of values of ``a``: a program variable or a constant."""
    if a.__class__ is int:
        return int(np.prod(program.avals[a][1], dtype=np.int64))
    return int(np.size(a.value))


class Piece:
    """The values ``outs`` of ``program`` as a function of its values ``ins`` (lists of
    variables): ``body``, the equations on the way (program order), found by walking back
    from ``outs`` and stopping at ``ins``; a ``ValueError`` when that walk reaches one of
    the program's inputs not in ``ins`` (``ins`` does not cut it off from ``outs``).
    Calling it on values of ``ins`` (plain or traced) returns the ``outs`` (a tuple when
    there are several)."""

    __slots__ = ("program", "ins", "outs", "body", "__name__")

    def __init__(self, program, ins, outs, name="f"):
        self.program, self.ins, self.outs = program, list(ins), list(outs)
        self.body = _walk_back(program, set(self.ins), self.outs)
        self.__name__ = name

    @property
    def widths(self):
        """``(a, b)``: the sizes of the inputs and of the outputs."""
        return (sum(_size(self.program, v) for v in self.ins),
                sum(_size(self.program, v) for v in self.outs))

    def run(self, values):
        """The ``outs`` (a list) at the ``ins``' ``values``, through the primitives."""
        env = dict(zip(self.ins, values))
        for e in self.body:
            env[e.out] = e.prim(*[env[a] if a.__class__ is int else a.value for a in e.ins],
                                **e.params)
        return [env[v] for v in self.outs]

    def __call__(self, *values):
        outs = self.run(values)
        return outs[0] if len(outs) == 1 else tuple(outs)


def _walk_back(program, ins, outs):
    """The equations computing ``outs`` from ``ins`` (and constants), in program order."""
    needed = {v for v in outs if v not in ins}
    keep = []
    for e in reversed(program.body):
        if e.out in needed:
            keep.append(e)
            needed.discard(e.out)
            needed.update(a for a in e.ins if a.__class__ is int and a not in ins)
    if needed:
        raise ValueError(f"chain: values {sorted(needed)} are program inputs not among the "
                         f"piece's inputs {sorted(ins)}: not a cut")
    return keep[::-1]


def work(program, body):
    """Multiply-adds of one evaluation of ``body``, roughly: a product of ``p x q`` by
    ``q x r`` costs ``pqr`` (the square root of its three sizes' product), any other
    equation the largest of its argument and output sizes."""
    total = 0
    for e in body:
        sizes = [_size(program, a) for a in e.ins] + [_size(program, e.out)]
        if e.prim.name in _PRODUCTS and len(sizes) == 3:
            total += int(np.sqrt(float(sizes[0]) * sizes[1] * sizes[2]))
        else:
            total += max(sizes)
    return total


def min_cut(piece, big):
    """The minimum weight vertex cut of ``piece`` between its inputs and its outputs, the
    one nearest the inputs (its variables in program order), by a maximum flow on the
    node-split graph: ``v_in -> v_out`` of capacity ``size(v)``, every equation's reads and
    the source and sink edges of capacity ``big``; the cut is the vertices whose ``v_in``
    the source reaches in the residual graph and whose ``v_out`` it does not. Capacities
    are clipped at ``big`` (a cut as wide is no cut)."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import breadth_first_order, maximum_flow
    order = list(piece.ins) + [e.out for e in piece.body if e.out not in piece.ins]
    index = {v: i for i, v in enumerate(order)}
    nv = len(order)
    source, sink = 2 * nv, 2 * nv + 1
    edges = {(2 * i, 2 * i + 1): min(_size(piece.program, v), big) for v, i in index.items()}
    for e in piece.body:
        for a in e.ins:
            if a.__class__ is int:
                edges[(2 * index[a] + 1, 2 * index[e.out])] = big
    for v in piece.ins:
        edges[(source, 2 * index[v])] = big
    for v in piece.outs:
        edges[(2 * index[v] + 1, sink)] = big
    rows, cols = np.array(list(edges)).T
    cap = sp.csr_matrix((np.fromiter(edges.values(), np.int32, len(edges)), (rows, cols)),
                        shape=(2 * nv + 2, 2 * nv + 2))
    flow = maximum_flow(cap, source, sink).flow
    residual = (cap - flow).tocsr()
    residual.data[residual.data < 0] = 0
    residual.eliminate_zeros()
    reached = np.zeros(2 * nv + 2, dtype=bool)
    reached[breadth_first_order(residual, source, directed=True,
                                return_predecessors=False)] = True
    cut = [v for v in order if reached[2 * index[v]] and not reached[2 * index[v] + 1]]
    return sorted(cut, key=_program_order(piece.program))


def _program_order(program):
    position = {v: i for i, v in enumerate(program.invars)}
    position.update({e.out: len(program.invars) + i for i, e in enumerate(program.body)})
    return position.__getitem__


def separators(program, limit):
    """The values ``v`` (equation outputs, the output excepted) narrower than ``limit``
    through which every path from the program's inputs to its output passes, in program
    order (which is the order every path meets them in: were ``u`` before ``v`` on one
    path and after it on another, joining the first path's start with the second's end
    would avoid ``u``).

    They are the output's dominators in the graph of values with one source before the
    inputs: in program order (a topological order) each value's immediate dominator is
    the nearest common dominator of the values it reads (Cooper, Harvey and Kennedy, "A
    simple, fast dominance algorithm", 2001: one pass suffices on an acyclic graph); the
    chain of immediate dominators from the output back to the source is the answer.
    Values computed from constants alone are on no path and are skipped."""
    source = None
    idom, depth = {}, {source: 0}
    for v in program.invars:
        idom[v], depth[v] = source, 1
    for e in program.body:
        reads = [a for a in e.ins if a.__class__ is int and a in idom]
        if not reads:
            continue            # constants only: on no path from the inputs
        d = reads[0]
        for a in reads[1:]:
            d = _common_dominator(d, a, idom, depth)
        idom[e.out], depth[e.out] = d, depth[d] + 1
    out = program.outvars[0]
    made = {e.out for e in program.body}
    found, v = [], idom.get(out)
    while v is not None:
        if v in made and _size(program, v) < limit:
            found.append(v)
        v = idom[v]
    return found[::-1]


def _common_dominator(a, b, idom, depth):
    """The nearest value dominating both ``a`` and ``b`` (walking up the dominator tree)."""
    while a != b:
        if depth[a] >= depth[b]:
            a = idom[a]
        else:
            b = idom[b]
    return a


def _piece_cost(program, ins, outs, d_in, d_out, n):
    """The modelled multiply-adds of one piece's factor (``d_out x d_in``): the cheaper of
    ``d_in`` forward and ``d_out`` reverse directions (each :data:`RHO` times a forward
    one) through its work, the product into the accumulated factor (``d_out d_in n``, but
    for the first piece) and :data:`PIECE` for its plan's fixed costs."""
    body = Piece(program, ins, outs).body
    directions = min(d_in, RHO * d_out)
    product = d_out * d_in * n if ins != list(program.invars) else 0
    return directions * work(program, body) + product + PIECE


def find_chain(program, first, max_pieces=MAX_PIECES):
    """The pieces ``f = s_L ∘ ... ∘ s_1`` of a guard-free, pruned ``program`` with one
    output, in order (the first taking the program's inputs, the last returning its
    output). ``first`` is its narrowest cut (:func:`jacobians.bottleneck.find_bottleneck`);
    when that is one value, the cuts are chosen among the single-value cuts narrower than
    ``min(n, m)`` (:func:`separators`, at most :data:`CANDIDATES`, the narrowest) by a
    shortest path over them in program order, each piece weighed by
    :func:`_piece_cost`; with at most ``max_pieces`` pieces, else the one cut ``first``.
    A cut of several values (an input ``g`` reads directly, say) gives two pieces."""
    out = program.outvars[0]
    n = sum(_size(program, v) for v in program.invars)
    single = [Piece(program, program.invars, first, program.name),
              Piece(program, first, [out], program.name)]
    if len(first) != 1 or max_pieces <= 2:
        return single
    limit = min(n, _size(program, out))
    found = separators(program, limit)
    found = sorted(sorted(found, key=lambda v: _size(program, v))[:CANDIDATES],
                   key=_program_order(program))
    if first[0] not in found:
        found = sorted(found + [first[0]], key=_program_order(program))
    nodes = [list(program.invars)] + [[v] for v in found] + [[out]]
    dims = [n] + [_size(program, v) for v in found] + [_size(program, out)]
    best, back = [0.0] + [float("inf")] * (len(nodes) - 1), [0] * len(nodes)
    for j in range(1, len(nodes)):
        for i in range(j):
            c = best[i] + _piece_cost(program, nodes[i], nodes[j], dims[i], dims[j], n)
            if c < best[j]:
                best[j], back[j] = c, i
    path, j = [], len(nodes) - 1
    while j:
        path.append(j)
        j = back[j]
    path = [0] + path[::-1]
    if len(path) - 1 > max_pieces or len(path) == 2:
        return single
    return [Piece(program, nodes[i], nodes[j], program.name) for i, j in zip(path, path[1:])]


def chain_order(dims):
    r"""``(cost, split)``: the fewest multiply-adds of the product :math:`J_L \cdots J_1`
    of dense factors :math:`J_i` of ``dims[i] x dims[i - 1]`` (``dims = [d_0, ..., d_L]``),
    and ``split[(i, j)]``, the ``s`` at which the product of factors ``i..j`` (1-based)
    is best split into ``(J_j \cdots J_{s+1}) (J_s \cdots J_i)``: the matrix-chain dynamic
    programme."""
    n = len(dims) - 1
    best = {(i, i): 0 for i in range(1, n + 1)}
    split = {}
    for length in range(2, n + 1):
        for i in range(1, n - length + 2):
            j = i + length - 1
            best[(i, j)], split[(i, j)] = min(
                (best[(i, s)] + best[(s + 1, j)] + dims[j] * dims[s] * dims[i - 1], s)
                for s in range(i, j))
    return best[(1, n)], split


def chain_product(factors, split, multiply):
    """:math:`J_L \\cdots J_1` of ``factors = [J_1, ..., J_L]`` in the association
    ``split`` gives (:func:`chain_order`), each product by ``multiply(left, right)``."""
    def product(i, j):
        if i == j:
            return factors[i - 1]
        s = split[(i, j)]
        return multiply(product(s + 1, j), product(i, s))
    return product(1, len(factors))
