"""Reverse mode: a tape of nodes and an iterative backward sweep.

Every primitive applied to a :class:`Var` records a :class:`Node`: the
primitive, its arguments (boxed, so the sweep can re-run rules on the tape
itself when ``create_graph`` is asked for), its parameters and its value.
The sweep visits nodes in reverse topological order, without recursion, and
accumulates cotangents ``v̄_parent += vjp_i(v̄_node)``. A cotangent may carry
leading batch axes, so a batch of cotangents costs one sweep.
"""
from __future__ import annotations

import heapq
import itertools

import numpy as np

from . import compaction
from .tracer import (ANOMALY, PLAIN_TYPES, Box, Trace, map_batch, missing_rule, primal_value,
                     shape_of)

_FREED = ("Trying to backward through the graph a second time (or to read values the "
          "sweep already freed). The tape is freed after a backward sweep; pass "
          "retain_graph=True to the first backward/grad call to sweep it again.")


_next_seq = itertools.count().__next__


class Var(Box):
    """A reverse-mode traced value, and its own node on the tape.

    ``value`` is the primal one level down; ``prim``, ``args`` and ``params``
    record the operation that made it (``prim`` is None for a leaf). The
    parents of a node are the arguments that are Vars of the same trace.
    """

    __slots__ = ("value", "prim", "args", "params", "vals", "parents", "seq", "items",
                 "__weakref__")

    def __init__(self, trace, value, prim=None, args=None, params=None, vals=None,
                 parents=()):
        self._trace = trace
        self.value = value
        self.prim = prim
        self.args = args          # as called (boxed): what create_graph re-runs rules on
        self.params = params
        self.vals = vals          # the arguments one level down: what rules normally see
        self.parents = parents    # positions of the arguments that are Vars of this tape
        self.seq = _next_seq()    # creation order: a node's parents were made before it
        # ``items``, {i: x[i]} for integer indexing, starts unset (see dispatch._getitem).
        # (_record and operator_method set these same slots without calling __init__: keep
        # in step; on a trace that keeps a tape they leave ``seq`` unset, the tape being the
        # order.)

    @property
    def _inner(self):
        return self.value

    @property
    def shape(self):
        return shape_of(self.value)

    @property
    def node(self):
        return self

    @property
    def freed(self):
        return self.prim is not None and self.args is None

    def free(self):
        self.args = self.params = self.vals = None

    def __repr__(self):
        return f"Var(value={self.value!r})"


def parents(node):
    """The (argnum, Var) pairs of ``node``'s arguments on its own tape."""
    trace = node._trace
    return [(i, a) for i, a in enumerate(node.args) if isinstance(a, Var) and a._trace is trace]


class VJPTrace(Trace):
    """Records primitives applied to its :class:`Var` boxes on a tape.

    With ``tape=True`` the trace also keeps its nodes in a list in creation order
    (``self.tape``), which the backward sweep walks from the end instead of
    ordering the nodes it reaches on a heap; a trace that lives for one
    transformation (``grad``, ``vjp``) uses it. A long-lived trace (the imperative
    API's) does not, so nothing outlives the graph that uses it.
    """

    __slots__ = ("box_type", "tape", "fast_tape", "room")

    def __init__(self, level=None, box_type=Var, tape=False):
        super().__init__(level)
        self.box_type = box_type
        self.tape = [] if tape else None
        # Var's operators record straight onto this list (see operator_method) while the
        # trace is a plain VJPTrace that keeps a tape and records; None otherwise. A tape
        # trace stops recording by detach_tape, which clears it.
        self.fast_tape = self.tape if type(self) is VJPTrace and box_type is Var else None
        # Array bytes still to record before the tape is compacted (see dualad.compaction):
        # counted only where a recorded value is an array, never on scalar code's path.
        self.room = compaction.MIN_BYTES

    def process(self, prim, args, params):
        if not self.alive:
            raise self.escaped(prim, args)
        vals = []
        parents = []
        lower = False
        i = 0
        for a in args:
            if type(a) not in PLAIN_TYPES:
                if isinstance(a, Var) and a._trace is self:
                    parents.append(i)
                    a = a.value
                if type(a) not in PLAIN_TYPES and isinstance(a, Box):
                    lower = True
            vals.append(a)
            i += 1
        # Only when a lower trace is involved does the call go round dispatch again.
        ans = prim(*vals, **params) if lower else prim.impl(*vals, **params)
        if prim.zero_derivative:
            if self.decisions is not None:   # a value-dependent result: logged
                self.decisions.note(prim.name, ans)
            return ans
        if self.box_type is Var:
            if type(ans) is np.ndarray and self.tape is not None:
                self.room -= ans.nbytes
                if self.room < 0:
                    _compact(self)
            return _record(self, ans, prim, args, params, vals, parents)
        out = self.box_type(self, ans, prim, args, params, vals, parents)
        if self.tape is not None:
            self.tape.append(out)
        if ANOMALY[0]:
            from .anomaly import check, remember
            check(prim, "value", ans)
            remember(out)
        return out

    def process2(self, prim, x, y):
        """``process`` for a binary primitive without parameters: the operator hot path.
        (A subclass that overrides ``process`` must override this too.)

        The common case of scalar code, one operand a Var of this trace over a plain value
        and the other a plain value or such a Var, is tested with ``type`` (see
        ``PLAIN_TYPES``) and recorded here; everything else goes to :meth:`process`."""
        if type(x) is Var and x._trace is self:
            xv = x.value
            if type(y) is Var and y._trace is self:
                yv = y.value
                parents = _BOTH
            else:
                yv = y
                parents = _FIRST
        elif type(y) is Var and y._trace is self:
            xv = x
            yv = y.value
            parents = _SECOND
        else:
            return self.process(prim, (x, y), _NO_PARAMS)
        # (A Var of this trace means its box type is Var: a subclass of Var fails ``type``.)
        if type(xv) not in PLAIN_TYPES or type(yv) not in PLAIN_TYPES or not self.alive:
            return self.process(prim, (x, y), _NO_PARAMS)   # a lower trace below, or dead
        ans = prim.impl(xv, yv)
        if prim.zero_derivative:
            if self.decisions is not None:   # a value-dependent result: logged
                self.decisions.note(prim.name, ans)
            return ans
        if type(ans) is np.ndarray and self.tape is not None:
            self.room -= ans.nbytes
            if self.room < 0:
                _compact(self)
        return _record(self, ans, prim, (x, y), _NO_PARAMS, (xv, yv), parents)

    def process1(self, prim, x, params):
        """``process`` for a primitive of one argument, ``x[i]`` in a loop say: a Var of
        this trace over a plain value is recorded here, anything else by :meth:`process`.
        (Only on a plain VJPTrace: a subclass has its own ``process``.)"""
        if type(x) is not Var or x._trace is not self or type(self) is not VJPTrace \
                or type(x.value) not in PLAIN_TYPES or not self.alive:
            return self.process(prim, (x,), params)
        xv = x.value
        ans = prim.impl(xv, **params)
        if prim.zero_derivative:
            if self.decisions is not None:   # a value-dependent result: logged
                self.decisions.note(prim.name, ans)
            return ans
        return _record(self, ans, prim, (x,), params, (xv,), _FIRST)

    def detach_tape(self):
        """The recorded tape, handed over to the caller (who passes it to
        :func:`backward_sweep`): the trace keeps no reference to its nodes, so no
        cycle trace -> tape -> node -> trace outlives the transformation."""
        tape, self.tape = self.tape, None
        self.fast_tape = None
        return tape

    def new_leaf(self, value):
        leaf = self.box_type(self, value)
        if self.tape is not None:
            self.tape.append(leaf)
        return leaf


def _compact(trace):
    """Release what no output can need (dualad.compaction) and set the next budget.
    Runs while the forward pass records, once the array bytes recorded since the last
    pass exceed the budget (so its O(len(tape)) cost is amortized over those bytes)."""
    if compaction.ENABLED:
        compaction.compact(trace.tape)
    trace.room = compaction.budget(trace.tape)


def _record(trace, ans, prim, args, params, vals, parents):
    """A new node on ``trace`` (whose box type is Var): Var.__init__'s slots set in place,
    which saves the frame of a class call, and the tape (or ``seq``) kept."""
    out = _new_var(Var)
    out._trace = trace
    out.value = ans
    out.prim = prim
    out.args = args
    out.params = params
    out.vals = vals
    out.parents = parents
    tape = trace.tape
    if tape is not None:
        tape.append(out)      # the tape is the creation order: no ``seq`` needed
    else:
        out.seq = _next_seq()
    if ANOMALY[0]:
        from .anomaly import check, remember
        check(prim, "value", ans)
        remember(out)
    return out


def operator_method(prim, generic, reflected=False):
    """Var's method for the binary operator of ``prim`` (``x * y``: ``__mul__``, or
    ``__rmul__`` when ``reflected``), recording on the tape in one frame.

    The hot path of scalar code: ``self`` a Var of a plain :class:`VJPTrace` that records
    onto a tape (``grad``, ``vjp``: its ``fast_tape``) over a plain scalar, ``other`` a plain
    value or a Var of the same trace. (A Var over an array goes to ``generic``: its
    ``process2`` counts the array's bytes for the tape's compaction, dualad.compaction.) This is
    :meth:`VJPTrace.process2` inlined into the operator; everything else (boxes of other
    traces, values boxed further down, subclasses of the trace) goes to ``generic``,
    dispatch's method for every box.
    """
    impl = prim.impl
    own = _SECOND if reflected else _FIRST    # the position of ``self``, ``other`` plain
    assert not prim.zero_derivative

    def method(self, other):
        trace = self._trace
        tape = trace.fast_tape    # a plain VJPTrace recording onto its tape, or None
        if tape is None:
            return generic(self, other)
        kind = type(other)
        if kind is Var:
            ov = other.value
            if other._trace is not trace or (type(ov) is not _F64 and type(ov) not in PLAIN_TYPES):
                return generic(self, other)
            parents = _BOTH
        elif kind in PLAIN_TYPES:
            ov = other
            parents = own
        else:
            return generic(self, other)
        sv = self.value
        kind = type(sv)
        if kind is not _F64 and (kind is _NDARRAY or kind not in PLAIN_TYPES):
            return generic(self, other)   # arrays: process2 counts their bytes for compaction
        out = _new_var(Var)       # _record, inlined (the hot path: one frame per operation)
        out._trace = trace
        if reflected:
            out.value = impl(ov, sv)
            out.args = (other, self)
            out.vals = (ov, sv)
        else:
            out.value = impl(sv, ov)
            out.args = (self, other)
            out.vals = (sv, ov)
        out.prim = prim
        out.params = _NO_PARAMS
        out.parents = parents
        tape.append(out)          # the tape is the creation order: no ``seq``
        if ANOMALY[0]:
            from .anomaly import check, remember
            check(prim, "value", out.value)
            remember(out)
        return out
    return method


_NDARRAY = np.ndarray
_F64 = np.float64   # the scalar type of scalar code: tested by identity before the sets
_NO_PARAMS = {}
_new_var = object.__new__
_FIRST, _SECOND, _BOTH = (0,), (1,), (0, 1)  # shared: no allocation per recorded operation
# Scalar types: a cotangent and its primal of one of these both have shape ().
_SCALAR_TYPES = frozenset({float, np.float64, np.float32, np.float16, np.complex128,
                           np.complex64, np.longdouble})


# --------------------------------------------------------------------------
# Sparse accumulation of indexing cotangents.

class IndexedCotangent:
    """Pending scatter-adds ``zeros(x.shape)[idx] += ct`` into one cotangent.

    ``x[i]`` in a Python loop would otherwise allocate a dense cotangent of
    ``x``'s whole shape per index; the sweep keeps one of these per indexed
    array instead and scatters everything once, when it reaches that array.
    """

    __slots__ = ("shape", "dtype", "parts", "flat_idx", "flat_ct", "dense")

    def __init__(self, x):
        self.shape = x.shape
        self.dtype = x.dtype
        self.parts = []      # (index tuple, cotangent) in general
        self.flat_idx = []   # x[i] of a 1-D x: just i and a scalar cotangent
        self.flat_ct = []
        self.dense = None

    def add(self, idx, ct):
        if len(idx) == 1 and type(idx[0]) is int and len(self.shape) == 1:
            self.flat_idx.append(idx[0])
            self.flat_ct.append(ct)
        else:
            self.parts.append((idx, ct))

    def add_dense(self, g):
        self.dense = g if self.dense is None else self.dense + g

    def materialize(self):
        dtype = np.result_type(self.dtype, *[ct for _, ct in self.parts[:1]],
                               *self.flat_ct[:1])
        out = np.zeros(self.shape, dtype)
        if self.dense is not None:
            out = out + self.dense
        for idx, ct in self.parts:
            if np.iscomplexobj(ct) and out.dtype.kind != "c":  # a complex part after real ones
                out = out.astype(np.result_type(out, ct))
            np.add.at(out, idx, ct)
        if self.flat_idx:
            idx = np.array(self.flat_idx) % self.shape[0]
            w = np.array(self.flat_ct)
            if w.dtype.kind == "c":  # bincount weighs by reals only: the two parts apart
                out = out.astype(np.result_type(out, w), copy=False)
                out += np.bincount(idx, weights=w.real, minlength=self.shape[0]) \
                    + 1j * np.bincount(idx, weights=w.imag, minlength=self.shape[0])
            else:
                out += np.bincount(idx, weights=w.astype(float, copy=False),
                                   minlength=self.shape[0]).astype(dtype, copy=False)
        return out


def _accumulate(cts, node, g):
    prev = cts.get(node)
    if prev is None:
        cts[node] = g
    elif isinstance(prev, IndexedCotangent):
        if isinstance(g, IndexedCotangent):
            prev.parts.extend(g.parts)
            prev.flat_idx.extend(g.flat_idx)
            prev.flat_ct.extend(g.flat_ct)
            if g.dense is not None:
                prev.add_dense(g.dense)
        else:
            prev.add_dense(g)
    elif isinstance(g, IndexedCotangent):
        g.add_dense(prev)
        cts[node] = g
    else:
        cts[node] = prev + g


def _own_dtype(ct, node):
    """A result cotangent in its primal's kind: Re ū for a real value (an imaginary part
    riding on it is not its own, see dualad.ops.core.complex_numbers), complex for a complex one.
    Runs once per returned cotangent, never per node."""
    from .ops.core.elementwise import is_complex
    if is_complex(ct) != is_complex(node.value):
        from .ops.core.complex_numbers import real_p, to_complex
        if is_complex(ct):
            return real_p(ct)
        return to_complex(ct, dtype=np.result_type(primal_value(node.value)))
    return ct


def _note(e, text):
    if hasattr(e, "add_note") and text not in getattr(e, "__notes__", ()):
        e.add_note(text)


def backward_sweep(seeds, *, trace, create_graph=False, retain_graph=False, wanted=None,
                   tape=None):
    """Run the reverse sweep from ``seeds`` ((Var, cotangent) pairs).

    ``tape``, the list of ``trace``'s nodes in creation order (see
    :meth:`VJPTrace.detach_tape`), lets the sweep walk it instead of using a heap.

    Returns ``{var: cotangent}`` for the Vars in ``wanted`` (default: every
    leaf reached). With ``create_graph`` the rules run on the boxed values of
    ``trace`` itself, so the cotangents are recorded and differentiable.
    """
    from .ops._util import unbroadcast  # late imports: ops depend on this module
    from .ops.core.elementwise import multiply, power
    from .ops.core.indexing import getitem

    # Nodes are visited in decreasing creation order: every user of a node was
    # created after it, so its cotangent is complete when the node is reached. A
    # trace that keeps its tape is walked from the end, popping its nodes (skipping
    # those without a cotangent); otherwise the nodes reached are ordered on a max-heap
    # of ``seq``. No recursion, and no separate topological sort.
    cts = {}
    if create_graph and tape is not None:
        # The rules record on the trace as they run: the sweep orders its nodes on the heap,
        # and the nodes of a tape carry no ``seq`` (the tape is their order): number them.
        for node in tape:
            node.seq = _next_seq()
        tape = None
    heap = None if tape is not None else []
    if tape is not None:
        tape_pop = (list(tape) if retain_graph else tape).pop   # the sweep empties the tape
    get_ct, pop_ct = cts.get, cts.pop                             # bound once: the hot loop
    push, pop = heapq.heappush, heapq.heappop
    for node, ct in seeds:
        if heap is not None and node not in cts:
            push(heap, (-node.seq, node))
        _accumulate(cts, node, ct)
    results = {}
    anomaly = ANOMALY[0]
    inline = not create_graph and not anomaly
    # Only a wanted node that is not a leaf (autograd.grad allows those) makes every node
    # ask whether it is wanted.
    wanted_inner = wanted is not None and any(w.prim is not None for w in wanted)
    while cts:
        if heap is None:
            try:
                node = tape_pop()
            except IndexError:
                raise RuntimeError(_FREED) from None  # cotangents left for nodes not on the tape
            ct = pop_ct(node, None)
            if ct is None:
                continue
        elif heap:
            node = pop(heap)[1]
            ct = pop_ct(node)
        else:
            break
        if ct.__class__ is IndexedCotangent:
            ct = ct.materialize()
        prim = node.prim
        if prim is None:                     # a leaf
            if wanted is None or node in wanted:
                results[node] = _own_dtype(ct, node)
            continue
        if wanted_inner and node in wanted:
            results[node] = _own_dtype(ct, node)
        node_args = node.args
        if node_args is None:
            raise RuntimeError(_FREED)
        # The rules see the arguments one level down, or with create_graph the boxed ones.
        args = node.vals
        try:
            if inline and prim.derivs is not None:
                # Elementwise primitives, inlined: ū_i = unbroadcast(ū · ∂ans/∂arg_i).
                const = prim.const_derivs
                for i in node.parents:
                    if const is not None:        # add, subtract: ±1
                        dv = const[i]
                        g = ct if dv == 1.0 else (-ct if dv == -1.0 else ct * dv)
                    else:
                        # ∂(x·y)/∂x = y is read, not called (the hot path of scalar code);
                        # a binary partial is called without unpacking (no C-level call)
                        if prim is multiply:
                            dv = args[1 - i]
                        elif prim is power and i == 0 and args[1].__class__ is int \
                                and args[1] == 2:
                            dv = 2.0 * args[0]   # ∂(x²)/∂x, what _dpow_base returns for 2
                        elif len(args) == 2:
                            dv = prim.derivs[i](node.value, args[0], args[1])
                        else:
                            dv = prim.derivs[i](node.value, *args)
                        if type(dv) is float:
                            g = ct if dv == 1.0 else (-ct if dv == -1.0 else ct * dv)
                        else:
                            g = ct * dv
                    # A scalar ū_i (so a scalar value and no batch axes: the primitive is
                    # elementwise, so its arguments are scalars too) has nothing to sum.
                    if g.__class__ is not _F64 and g.__class__ not in _SCALAR_TYPES:
                        x = args[i]
                        if getattr(g, "shape", None) != getattr(x, "shape", ()):
                            g = unbroadcast(g, shape_of(x),
                                            len(shape_of(ct)) - len(shape_of(node.value)))
                    a = node_args[i]
                    prev = get_ct(a)
                    if prev is None:
                        if heap is not None:
                            push(heap, (-a.seq, a))
                        cts[a] = g
                    elif type(prev) is IndexedCotangent:
                        _accumulate(cts, a, g)
                    else:
                        cts[a] = prev + g
            elif (prim is getitem and not create_graph and type(args[0]) is np.ndarray
                  and (type(ct) is _F64 or type(ct) in PLAIN_TYPES or not isinstance(ct, Box))
                  and getattr(ct, "ndim", 0) == getattr(node.value, "ndim", 0)):
                a = node_args[0]
                acc = get_ct(a)
                if type(acc) is not IndexedCotangent:
                    dense = acc
                    acc = cts[a] = IndexedCotangent(args[0])
                    if dense is not None:
                        acc.dense = dense
                    elif heap is not None:
                        push(heap, (-a.seq, a))
                acc.add(node.params["idx"], ct)
            elif prim.vjp_all is not None:
                if create_graph:
                    args = node_args
                ans = node if create_graph else node.value
                params = node.params
                nb = len(shape_of(ct)) - len(shape_of(ans))
                if nb and not prim.batch_rules:
                    all_cts = map_batch(prim.vjp_all, ct, nb, ans, *args, **params)
                else:
                    all_cts = prim.vjp_all(ct, ans, *args, **params)
                for i in node.parents:
                    g = all_cts[i]
                    if anomaly:
                        from .anomaly import check
                        check(prim, f"cotangent of argument {i}", g, node)
                    if g is not None:
                        a = node_args[i]
                        if heap is not None and a not in cts:
                            push(heap, (-a.seq, a))
                        _accumulate(cts, a, g)
            else:
                if create_graph:
                    args = node_args
                ans = node if create_graph else node.value
                params = node.params
                vjps = prim.vjps
                for i in node.parents:
                    rule = vjps.get(i)
                    if rule is None:
                        raise missing_rule(prim, i, "vjp")
                    if not prim.batch_rules and len(shape_of(ct)) > len(shape_of(ans)):
                        g = map_batch(rule, ct, len(shape_of(ct)) - len(shape_of(ans)), ans,
                                      *args, **params)
                    else:
                        g = rule(ct, ans, *args, **params) if params else rule(ct, ans, *args)
                    if anomaly:
                        from .anomaly import check
                        check(prim, f"cotangent of argument {i}", g, node)
                    if g is not None:
                        a = node_args[i]
                        prev = get_ct(a)
                        if prev is None:
                            if heap is not None:
                                push(heap, (-a.seq, a))
                            cts[a] = g
                        elif type(prev) is IndexedCotangent or type(g) is IndexedCotangent:
                            _accumulate(cts, a, g)
                        else:
                            cts[a] = prev + g
        except Exception as e:  # say which rule failed, keep the original exception
            _note(e, f"while running the VJP rule of primitive '{prim.name}' (cotangent shape "
                     f"{shape_of(ct)}, argument shapes {[shape_of(a) for a in args]})")
            raise
        if not retain_graph:
            if heap is None:
                node.args = None     # popped off its tape: only the references to other
                # nodes need cutting (x.items -> x[i] -> x would be a cycle), and the mark
            else:
                node.args = node.params = node.vals = None
    return results
