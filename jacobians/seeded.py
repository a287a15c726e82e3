"""What one direction of a dense Jacobian's sweep costs when its seeds are one-hot.

A dense Jacobian seeds forward mode with columns of the identity and reverse mode with
its rows, kept structured (:mod:`dualad.core.onehot`): a tangent (cotangent) stays one-hot
through what preserves that, at the cost of a few numbers per direction, and the first
product it meets is a gather, not a matrix product. So a direction does not cost the
function's whole arithmetic: in forward mode the values computed from the inputs by
elementwise maps, reshapes and sums carry one-hot tangents and cost next to nothing;
in reverse mode, symmetrically, the values on the output side do. For ``tanh(B @ sin(x))``
with ``B`` m x n, a forward direction costs O(m) (a column of ``B``, then m elementwise
products) and a reverse one O(n), not the 2mn of a matrix-vector product each: forward
over n directions and reverse over m cost about the same, and the interpreter's
per-sweep overheads decide. The census did not know this and charged every direction
the full product (issue 31: ``mode="auto"`` chose reverse at 1000 -> 100, where forward
was 1.3-1.8x faster).

:class:`SeedFlow` is filled by the census as ``f`` runs (one small record per primitive
applied to traced values, the shapes of the values) and read once per plan by
:meth:`SeedFlow.work`: a forward pass propagating "which tangents are one-hot" and a
backward pass propagating "which cotangents are", each summing what one direction costs
per primitive:

- one-hot through the primitive (an elementwise primitive with partial derivatives,
  whose rule multiplies by them, its traced arguments one-hot at the same positions and
  of the output's shape; ``reshape``, ``copy``, ``cast``, ``conj``; ``transpose`` and
  ``sum`` move the positions; a reverse elementwise rule that sums a broadcast argument
  too): 1 element;
- a one-hot operand of ``matmul`` against a constant matrix: a gather, the result's
  (forward) or the traced operand's (reverse) elements, dense from there on;
- anything else: the census' arithmetic estimate (:func:`cost.flops`), dense, plus the
  elements of a one-hot operand made dense; cotangents of one value from several uses
  that do not share their positions add up densely (its elements).

Elements are charged at ``cost.TAU`` a flop, products' flops at ``cost.TAU_BLAS``. The
rules were read off the interpreters (the one-hot seeds' types primitive by primitive,
tests/jacobians/test_plan_seeded.py checks the prediction against them).
"""
from __future__ import annotations

__all__ = ["SeedFlow"]

import math

# How a primitive treats a one-hot tangent or cotangent (module docstring).
_EW, _KEEP, _MOVE, _SUM, _PRODUCT, _DENSE = range(6)
_KEEPS = frozenset({"reshape", "copy", "cast", "conj"})
_MOVES = frozenset({"transpose"})
_BLAS = frozenset({"matmul", "einsum"})
# A gather of a constant matrix's columns (strided) larger than a core's cache costs about
# STRIDED elements' time per element (measured: a transposed copy of 3.2 MB, 3.2 ns an
# element against 0.36 for a plain copy; under 1 MB, 0.7 against 0.3).
CACHE_BYTES, STRIDED = 1 << 20, 4.0


_KINDS = {}     # primitive -> _kind(primitive)


def _kind(prim):
    """``(how prim treats a one-hot operand, whether its work is a BLAS product)``."""
    known = _KINDS.get(prim)
    if known is None:
        known = _KINDS[prim] = _classify(prim)
    return known


def _classify(prim):
    name = prim.name
    if prim.derivs is not None:
        kind = _EW
    elif name in _KEEPS:
        kind = _KEEP
    elif name in _MOVES:
        kind = _MOVE
    elif name == "sum":
        kind = _SUM
    elif name == "matmul":
        kind = _PRODUCT
    else:
        kind = _DENSE
    return kind, name in _BLAS


class SeedFlow:
    """Records of one census run for the one-hot analysis (module docstring).

    ``leaf(shape)`` and ``op(...)`` number the values as the run makes them; ``outputs``
    holds the numbers of the traced outputs; :meth:`work` is the per-direction cost of a
    forward and of a reverse sweep seeded one-hot."""

    __slots__ = ("ops", "shapes", "n_leaves", "outputs", "_work")

    def __init__(self):
        self.ops = []         # (kind, blas, input ids, output ids, flops, gather costs)
        self.shapes = []      # value id -> shape
        self.n_leaves = 0
        self.outputs = []     # ids of the traced outputs
        self._work = None

    def leaf(self, shape):
        """Number an input leaf of ``shape`` (its seeds: one-hot, positions of its own)."""
        self.n_leaves += 1
        self.shapes.append(shape)
        return len(self.shapes) - 1

    def op(self, prim, ins, primals, traced, out_shapes, flops):
        """Record ``prim`` applied to the values ``ins`` (at positions ``traced`` of its
        ``primals``), making values of ``out_shapes``, ``flops`` its arithmetic; returns
        the numbers of its outputs."""
        gather = None           # (forward, reverse) cost per gathered element, or None
        if prim.name == "matmul" and len(ins) == 1 and len(primals) == 2 and \
                len(self.shapes[ins[0]]) <= 2:
            const = primals[1 - traced[0]]     # a gather: against a constant matrix
            if len(getattr(const, "shape", ())) == 2:
                strided = STRIDED if getattr(const, "nbytes", 0) > CACHE_BYTES else 1.0
                # A @ x gathers A's columns going forward and its rows going back; x @ A
                # the other way round
                gather = (strided, 1.0) if traced[0] == 1 else (1.0, strided)
        shapes = self.shapes
        first = len(shapes)
        shapes.extend(out_shapes)
        outs = tuple(range(first, len(shapes)))
        kind, blas = _kind(prim)
        self.ops.append((kind, blas, ins, outs, flops, gather))
        self._work = None
        return outs

    def counts(self):
        """``((elements, blas_flops) forward, (elements, blas_flops) reverse)``: the work
        of one direction of a sweep seeded one-hot, elementwise and in products."""
        if self._work is None:
            sizes = [math.prod(s) for s in self.shapes]
            self._work = (self._forward(sizes)[:2], self._reverse(sizes))
        return self._work

    def work(self, tau, tau_blas):
        """``(forward, reverse)``: seconds one direction of a sweep seeded one-hot costs,
        elements at ``tau`` and products' flops at ``tau_blas`` each."""
        (ef, bf), (er, br) = self.counts()
        return ef * tau + bf * tau_blas, er * tau + br * tau_blas

    def forward_onehot(self):
        """Per recorded primitive, whether its output's tangent stays one-hot in a forward
        sweep seeded one-hot (what :meth:`counts` assumed; the tests compare it with the
        interpreter's)."""
        pos = self._forward([math.prod(s) for s in self.shapes])[2]
        return [len(outs) == 1 and pos[outs[0]] >= 0 for _, _, _, outs, _, _ in self.ops]

    def _forward(self, sizes):
        shapes = self.shapes
        pos = [-1] * len(sizes)          # value id -> positions token of a one-hot tangent
        pos[:self.n_leaves] = range(self.n_leaves)      # (-1: dense)
        fresh = self.n_leaves
        e = b = 0.0
        for kind, blas, ins, outs, flops, gather in self.ops:
            k = pos[ins[0]] if ins else -1
            if k >= 0 and len(outs) == 1:
                o = outs[0]
                if len(ins) == 1:
                    if kind == _EW and shapes[ins[0]] == shapes[o] or kind == _KEEP:
                        pos[o] = k
                        e += 1
                        continue
                    if kind == _MOVE or (kind == _SUM and sizes[o] > 1):
                        pos[o] = fresh
                        fresh += 1
                        e += 1
                        continue
                    if kind == _SUM:
                        e += sizes[o]
                        continue
                    if gather is not None:
                        e += sizes[o] * gather[0]
                        continue
                elif kind == _EW and all(pos[i] == k and shapes[i] == shapes[o] for i in ins):
                    pos[o] = k
                    e += len(ins)
                    continue
            # dense: the arithmetic, after the one-hot operands are made dense
            for i in ins:
                if pos[i] >= 0:
                    e += sizes[i]
            if blas:
                b += flops
            else:
                e += flops
        return e, b, pos

    def _reverse(self, sizes):
        shapes = self.shapes
        ct = {}                          # value id -> positions token (-1: dense)
        fresh = 0
        for o in self.outputs:
            ct[o] = fresh
            fresh += 1
        e = b = 0.0
        for kind, blas, ins, outs, flops, gather in reversed(self.ops):
            if len(outs) == 1:
                tok = ct.pop(outs[0], None)
                if tok is None:
                    continue             # no cotangent reaches it: not visited
            else:
                got = [ct.pop(o) for o in outs if o in ct]
                if not got:
                    continue
                tok = -1
            share = flops / max(1, len(ins))   # the rule's arithmetic for one argument
            for i in ins:
                g = -1
                if tok < 0:              # dense: the rule's arithmetic
                    if blas:
                        b += share
                    else:
                        e += share
                elif kind == _EW:
                    if shapes[i] == shapes[outs[0]]:
                        g = tok
                    elif sizes[i] > 1:   # unbroadcast: a sum over the broadcast axes
                        g = fresh
                        fresh += 1
                    e += 1
                elif kind == _KEEP:
                    g = tok
                    e += 1
                elif kind == _MOVE:
                    g = fresh
                    fresh += 1
                    e += 1
                elif gather is not None:
                    e += sizes[i] * gather[1]
                else:                    # a one-hot cotangent made dense, then the rule
                    e += sizes[outs[0]]
                    if blas:
                        b += share
                    else:
                        e += share
                prev = ct.get(i)
                if prev is None:
                    ct[i] = g
                elif prev != g or g < 0:  # different positions, or dense: a dense sum
                    ct[i] = -1
                    e += sizes[i]
        return e, b
