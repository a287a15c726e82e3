"""Reverse mode: a tape of nodes and an iterative backward sweep.

Every primitive applied to a :class:`Var` records a :class:`Node`: the
primitive, its arguments (boxed, so the sweep can re-run rules on the tape
itself when ``create_graph`` is asked for), its parameters and its value.
The sweep visits nodes in reverse topological order, without recursion, and
accumulates cotangents ``v̄_parent += vjp_i(v̄_node)``. A cotangent may carry
leading batch axes, so a batch of cotangents costs one sweep.
"""
from __future__ import annotations

import numpy as np

from .tracer import Box, Trace, missing_rule

_FREED = ("Trying to backward through the graph a second time (or to read values the "
          "sweep already freed). The tape is freed after a backward sweep; pass "
          "retain_graph=True to the first backward/grad call to sweep it again.")


class Node:
    """One recorded operation on the tape (a leaf when ``prim`` is None)."""

    __slots__ = ("prim", "args", "params", "value", "parents", "freed", "grad", "__weakref__")

    def __init__(self, prim, args, params, value, parents):
        self.prim = prim
        self.args = args
        self.params = params
        self.value = value
        self.parents = parents  # list of (argnum, parent Node)
        self.freed = False
        self.grad = None

    def free(self):
        if self.prim is not None:
            self.args = self.params = self.value = None
            self.freed = True


class Var(Box):
    """A reverse-mode traced value: a ``value`` and the ``node`` that made it."""

    __slots__ = ("value", "node")

    def __init__(self, trace, value, node):
        self._trace = trace
        self.value = value
        self.node = node

    @property
    def _inner(self):
        return self.value

    def __repr__(self):
        return f"Var(value={self.value!r})"


class VJPTrace(Trace):
    """Records primitives applied to its :class:`Var` boxes on a tape."""

    __slots__ = ("box_type",)

    def __init__(self, level=None, box_type=Var):
        super().__init__(level)
        self.box_type = box_type

    def process(self, prim, args, params):
        vals = []
        parents = []
        for i, a in enumerate(args):
            if isinstance(a, Var) and a._trace is self:
                vals.append(a.value)
                if a.node is not None:
                    parents.append((i, a.node))
            else:
                vals.append(a)
        ans = prim(*vals, **params)
        if prim.zero_derivative or not parents:
            return ans if not parents else ans
        node = Node(prim, args, params, ans, parents)
        return self.box_type(self, ans, node)

    def new_leaf(self, value):
        return self.box_type(self, value, Node(None, None, None, value, ()))


# --------------------------------------------------------------------------
# Sparse accumulation of indexing cotangents.

class IndexedCotangent:
    """Pending scatter-adds ``zeros(shape)[idx] += ct`` into one cotangent.

    ``x[i]`` in a Python loop would otherwise allocate a dense cotangent of
    ``x``'s whole shape per index; these are kept as a list and scattered
    once, when the sweep reaches ``x``.
    """

    __slots__ = ("shape", "dtype", "parts", "dense")

    def __init__(self, shape, dtype):
        self.shape = shape
        self.dtype = dtype
        self.parts = []
        self.dense = None

    def add_dense(self, g):
        self.dense = g if self.dense is None else self.dense + g

    def materialize(self):
        out = np.zeros(self.shape, self.dtype) if self.dense is None else np.array(
            np.broadcast_to(self.dense, self.shape), dtype=np.result_type(self.dense, self.dtype))
        flat_idx, flat_ct = [], []
        for idx, ct in self.parts:
            if all(type(e) is int for e in idx) and len(idx) == len(self.shape):
                flat_idx.append(idx)
                flat_ct.append(ct)
            else:
                np.add.at(out, idx, ct)
        if flat_idx:
            pos = np.ravel_multi_index(tuple(np.array(flat_idx).T), self.shape,
                                       mode="wrap") if self.shape else np.zeros(len(flat_idx), int)
            out += np.bincount(pos, weights=np.array(flat_ct, dtype=out.dtype).ravel(),
                               minlength=max(out.size, 1)).reshape(self.shape).astype(out.dtype)
        return out


def _accumulate(cts, node, g):
    prev = cts.get(node)
    if prev is None:
        cts[node] = g
    elif isinstance(prev, IndexedCotangent):
        if isinstance(g, IndexedCotangent):
            prev.parts.extend(g.parts)
            if g.dense is not None:
                prev.add_dense(g.dense)
        else:
            prev.add_dense(g)
    elif isinstance(g, IndexedCotangent):
        g.add_dense(prev)
        cts[node] = g
    else:
        cts[node] = prev + g


def toposort(roots):
    """Nodes reachable from ``roots``, each after every node that uses it."""
    child_counts = {}
    stack = list(roots)
    seen = set()
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        for _, parent in node.parents:
            child_counts[parent] = child_counts.get(parent, 0) + 1
            stack.append(parent)
    order = []
    ready = [n for n in dict.fromkeys(roots) if child_counts.get(n, 0) == 0]
    while ready:
        node = ready.pop()
        order.append(node)
        for _, parent in node.parents:
            c = child_counts[parent] - 1
            child_counts[parent] = c
            if c == 0:
                ready.append(parent)
    return order


def backward_sweep(seeds, *, trace, create_graph=False, retain_graph=False, wanted=None):
    """Run the reverse sweep from ``seeds`` ((node, cotangent) pairs).

    Returns ``{node: cotangent}`` for the nodes in ``wanted`` (default: every
    leaf reached). With ``create_graph`` the rules run on the boxed values of
    ``trace`` itself, so the cotangents are recorded and differentiable.
    """
    from .ops.indexing import getitem  # late import: ops depend on this module

    cts = {}
    for node, ct in seeds:
        _accumulate(cts, node, ct)
    order = toposort([n for n, _ in seeds])
    results = {}
    for node in order:
        ct = cts.pop(node, None)
        if ct is None:
            continue
        if isinstance(ct, IndexedCotangent):
            ct = ct.materialize()
        if wanted is None:
            if node.prim is None:
                results[node] = ct
                continue
        elif node in wanted:
            results[node] = ct
            if node.prim is None:
                continue
        if node.freed:
            raise RuntimeError(_FREED)
        prim = node.prim
        if create_graph:
            args = node.args
            ans = trace.box_type(trace, node.value, node)
        else:
            args = [a.value if isinstance(a, Var) and a._trace is trace else a for a in node.args]
            ans = node.value
        params = node.params
        if prim.vjp_all is not None:
            all_cts = prim.vjp_all(ct, ans, *args, **params)
            for argnum, parent in node.parents:
                g = all_cts[argnum]
                if g is not None:
                    _accumulate(cts, parent, g)
        elif (prim is getitem and not create_graph and not isinstance(ct, Box)
              and np.ndim(ct) == np.ndim(ans) and not isinstance(args[0], Box)):
            acc = IndexedCotangent(np.shape(args[0]), np.result_type(ct, args[0]))
            acc.parts.append((params["idx"], ct))
            _accumulate(cts, node.parents[0][1], acc)
        else:
            for argnum, parent in node.parents:
                rule = prim.vjps.get(argnum)
                if rule is None:
                    raise missing_rule(prim, argnum, "vjp")
                g = rule(ct, ans, *args, **params)
                if g is not None:
                    _accumulate(cts, parent, g)
        if not retain_graph:
            node.free()
    return results
