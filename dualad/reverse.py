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


class Var(Box):
    """A reverse-mode traced value, and its own node on the tape.

    ``value`` is the primal one level down; ``prim``, ``args`` and ``params``
    record the operation that made it (``prim`` is None for a leaf). The
    parents of a node are the arguments that are Vars of the same trace.
    """

    __slots__ = ("value", "prim", "args", "params", "freed", "grad", "__weakref__")

    def __init__(self, trace, value, prim=None, args=None, params=None):
        self._trace = trace
        self.value = value
        self.prim = prim
        self.args = args
        self.params = params
        self.freed = False
        self.grad = None

    @property
    def _inner(self):
        return self.value

    @property
    def node(self):
        return self

    def free(self):
        if self.prim is not None:
            self.args = self.params = None
            self.freed = True

    def __repr__(self):
        return f"Var(value={self.value!r})"


def parents(node):
    """The (argnum, Var) pairs of ``node``'s arguments on its own tape."""
    trace = node._trace
    return [(i, a) for i, a in enumerate(node.args) if isinstance(a, Var) and a._trace is trace]


class VJPTrace(Trace):
    """Records primitives applied to its :class:`Var` boxes on a tape."""

    __slots__ = ("box_type",)

    def __init__(self, level=None, box_type=Var):
        super().__init__(level)
        self.box_type = box_type

    def process(self, prim, args, params):
        vals = []
        lower = False
        for a in args:
            if isinstance(a, Var) and a._trace is self:
                vals.append(a.value)
            else:
                vals.append(a)
                if isinstance(a, Box):
                    lower = True
        if lower:
            ans = prim(*vals, **params)
        else:
            for v in vals:
                if isinstance(v, Box):
                    ans = prim(*vals, **params)
                    break
            else:
                ans = prim.impl(*vals, **params)
        if prim.zero_derivative:
            return ans
        return self.box_type(self, ans, prim, args, params)

    def new_leaf(self, value):
        return self.box_type(self, value)


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
        if node.prim is None:
            continue
        if node.freed:
            raise RuntimeError(_FREED)
        trace = node._trace
        for a in node.args:
            if isinstance(a, Var) and a._trace is trace:
                child_counts[a] = child_counts.get(a, 0) + 1
                stack.append(a)
    order = []
    ready = [n for n in dict.fromkeys(roots) if child_counts.get(n, 0) == 0]
    while ready:
        node = ready.pop()
        order.append(node)
        if node.prim is None:
            continue
        trace = node._trace
        for a in node.args:
            if isinstance(a, Var) and a._trace is trace:
                c = child_counts[a] - 1
                child_counts[a] = c
                if c == 0:
                    ready.append(a)
    return order


def backward_sweep(seeds, *, trace, create_graph=False, retain_graph=False, wanted=None):
    """Run the reverse sweep from ``seeds`` ((Var, cotangent) pairs).

    Returns ``{var: cotangent}`` for the Vars in ``wanted`` (default: every
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
        if type(ct) is IndexedCotangent:
            ct = ct.materialize()
        prim = node.prim
        if wanted is None:
            if prim is None:
                results[node] = ct
                continue
        elif node in wanted:
            results[node] = ct
            if prim is None:
                continue
        if prim is None:
            continue
        node_args = node.args
        params = node.params
        if create_graph:
            args = node_args
            ans = node
        else:
            args = [a.value if isinstance(a, Var) and a._trace is trace else a
                    for a in node_args]
            ans = node.value
        if prim.vjp_all is not None:
            all_cts = prim.vjp_all(ct, ans, *args, **params)
            for i, a in enumerate(node_args):
                if isinstance(a, Var) and a._trace is trace and all_cts[i] is not None:
                    _accumulate(cts, a, all_cts[i])
        elif (prim is getitem and not create_graph and type(ct) is not Var
              and not isinstance(args[0], Box) and not isinstance(ct, Box)
              and np.ndim(ct) == np.ndim(ans)):
            acc = IndexedCotangent(np.shape(args[0]), np.result_type(ct, args[0]))
            acc.parts.append((params["idx"], ct))
            _accumulate(cts, node_args[0], acc)
        else:
            vjps = prim.vjps
            for i, a in enumerate(node_args):
                if isinstance(a, Var) and a._trace is trace:
                    rule = vjps.get(i)
                    if rule is None:
                        raise missing_rule(prim, i, "vjp")
                    g = rule(ct, ans, *args, **params)
                    if g is not None:
                        _accumulate(cts, a, g)
        if not retain_graph:
            node.free()
    return results
