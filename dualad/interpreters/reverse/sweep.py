"""Reverse mode, sweeping: the iterative backward sweep over a tape of Var nodes.

The sweep visits nodes in reverse creation order, without recursion, and
accumulates cotangents ``v̄_parent += vjp_i(v̄_node)``. A cotangent may carry
leading batch axes, so a batch of cotangents costs one sweep. The rule applied
at a node is its primitive's: for an elementwise primitive the compiled
partial derivatives (``prim.derivs``, see :mod:`dualad.core.partials`), read in the
loop itself; otherwise its ``vjp_all`` or per-argument ``vjps``; ``x[i]`` of an
array scatters into one :class:`IndexedCotangent` per indexed array.
"""
from __future__ import annotations

from heapq import heappop, heappush

import numpy as np

from .anomaly import check as check_anomaly
from ..batched_rules import map_batch
from ...ops.core.linear import unbroadcast
from ...ops.core.complex_numbers import real_p, to_complex
from ...ops.core.elementwise import is_complex
from ...ops.core.indexing import getitem
from .cotangents import IndexedCotangent, accumulate, scatter_index
from .masked import SELECTIONS, select_product, selected
from .tape import _next_seq
from ...core.tracer import ANOMALY, shape_of, unguarded_value
from ...core.primitive import add_note, missing_rule
from ...core.rules import rule_table

# Reverse mode's rule tables (filled by Primitive.defvjp/defderiv/def_linear/def_all).
VJP = rule_table("vjp", per_argument=True, owner=__package__, doc=(
    "rule_i(ct, ans, *args, **params) = unbroadcast(ct · ∂f/∂x_i): argument i's cotangent, "
    "of x_i's shape behind ct's batch axes"))
VJP_ALL = rule_table("vjp_all", owner=__package__, doc=(
    "rule(ct, ans, *args, **params) = every argument's cotangent at once (None for a zero); "
    "with rule.takes_wanted also given wanted=, the arguments whose cotangents are needed"))

__all__ = ["backward_sweep", "apply_rule", "apply_vjps"]

_FREED = ("Trying to backward through the graph a second time (or to read values the "
          "sweep already freed). The tape is freed after a backward sweep; pass "
          "retain_graph=True to the first backward/grad call to sweep it again.")

_NDARRAY = np.ndarray
_F64 = np.float64   # the scalar type of scalar code: tested by identity before the set
# Scalar types: a cotangent and its primal of one of these both have shape ().
_SCALAR_TYPES = frozenset({float, np.float64, np.float32, np.float16, np.complex128,
                           np.complex64, np.longdouble})


def backward_sweep(seeds, *, trace, create_graph=False, retain_graph=False, wanted=None,
                   tape=None, watch=None):
    r"""Run the reverse sweep: pull cotangents back from the seeds through the tape.

    Visits the nodes of ``trace`` reachable from the seeds in reverse creation order
    and applies each node's VJP rules (its pullback), accumulating every argument's
    cotangent :math:`\bar x_i \mathrel{+}= \bar y \cdot \partial f/\partial x_i`
    before the node that made ``x_i`` is visited. The sweep is iterative (no recursion
    limit) and frees each node's record as it goes unless ``retain_graph``.

    Parameters
    ----------
    seeds : iterable of tuple
        ``(var, cotangent)`` pairs: the outputs to sweep from and their cotangents
        (1.0 for a scalar gradient; with leading batch axes, a batch of cotangents).
    trace : VJPTrace
        The trace that recorded the Vars.
    create_graph : bool, optional
        Run the rules on the boxed values of ``trace`` itself, so the cotangents are
        recorded and differentiable again (reverse-over-reverse).
    retain_graph : bool, optional
        Keep the nodes' records, so the tape can be swept again.
    wanted : collection of Var, optional
        The Vars whose cotangents to return (default: every leaf reached).
    tape : list of Var, optional
        ``trace``'s nodes in creation order (what :meth:`VJPTrace.stop` returns): the
        sweep walks it from the end instead of ordering the nodes on a heap.
    watch : SweepWatch, optional
        Shown every leaf reached (every node, when ``watch.inner``) with its complete
        cotangent, before the node's pullback; the cotangent it returns is used instead
        (gradient hooks, retained gradients, recorded steps:
        :mod:`dualad.interpreters.reverse.hooks`).

    Returns
    -------
    dict
        ``{var: cotangent}`` for the wanted Vars the seeds reach; a Var not reached has
        no entry (its cotangent is zero).

    Raises
    ------
    RuntimeError
        If the tape was freed by an earlier sweep (sweep again with
        ``retain_graph=True`` the first time).
    NotImplementedError
        If a node's primitive has no VJP rule for a traced argument.

    See Also
    --------
    VJPTrace : Records the tape.

    Notes
    -----
    Why this loop is ~90 lines: it is the hot path of every gradient, and the elementwise
    rule ū_i = unbroadcast(ū · ∂ans/∂arg_i) is applied inline rather than in a function
    of its own. Measured with bench/instructions.py: that one call per node costs +5.0%
    on the scalar chain (257.3M instructions per call against 245.0M), and +17% when the
    loop then ends in ``while cts:`` alone (CPython 3.11 warms a function up for
    specialization on its JUMP_BACKWARDs: the inner loop over the parents is what warms
    this one). Everything else it does, the rare branches included, is in the functions
    below (:func:`_materialize`, :func:`_sweep_masked`, :func:`apply_rule`,
    :func:`_own_dtype`); tests/test_function_length.py holds it to its length.
    """
    cts = {}
    heap, tape_pop = _visit_order(seeds, cts, tape, create_graph, retain_graph)
    results = {}
    fast = not create_graph and not ANOMALY[0]
    # Only a wanted node that is not a leaf (autograd.grad allows those), or a watch that
    # looks at inner nodes, makes every node stop at the leaves' test below. (A bool: the
    # test runs per node, and ``x or None`` would make it ask None's truth each time.)
    inner = bool(wanted and any(w.prim is not None for w in wanted) or watch and watch.inner)
    get_ct, pop_ct = cts.get, cts.pop                             # bound once: the hot loop
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
            node = heappop(heap)[1]
            ct = pop_ct(node)
        else:
            break
        if ct.__class__ is IndexedCotangent:
            ct = _materialize(node, ct, cts, heap, results, wanted if inner else None,
                              create_graph, retain_graph, watch is not None and watch.inner)
            if ct is None:              # swept with its structural zeros (dualad.interpreters.reverse.masked)
                continue
        prim = node.prim
        if prim is None or inner:
            ct = _arrive(node, ct, results, wanted, watch)
            if prim is None:                 # a leaf
                continue
        node_args = node.args
        if node_args is None:
            raise RuntimeError(_FREED)
        try:
            derivs = prim.derivs
            if fast and derivs is not None:
                # An elementwise primitive: ū_i = unbroadcast(ū · ∂ans/∂arg_i), the partial
                # read from its compiled form (a constant, an argument, c·an argument, or a
                # call).
                args = node.vals
                for i in node.parents:
                    p = derivs[i]
                    dv = p.const
                    if dv is not None:   # a Python float (partials.compile_partial)
                        g = ct if dv == 1.0 else (-ct if dv == -1.0 else ct * dv)
                    else:
                        j = p.arg
                        if j is not None:
                            dv = args[j]
                        elif p.scaled_arg is not None:
                            dv = p.scale * args[p.scaled_arg]
                        else:
                            fn = p.fn
                            if fn is None:   # an argument without a partial: its own rule
                                apply_vjps(node, ct, cts, heap, False, (i,))
                                continue
                            if len(args) == 2:  # no tuple unpacking: the common binary case
                                dv = fn(node.value, args[0], args[1])
                            else:
                                dv = fn(node.value, *args)
                        if dv.__class__ is float:
                            g = ct if dv == 1.0 else (-ct if dv == -1.0 else ct * dv)
                        elif j is None and ct.__class__ is _NDARRAY and \
                                _broadcast_one(ct, dv, node):
                            g = dv      # ū = 1 broadcast (a sum's): ū · ∂ = ∂, no pass
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
                            heappush(heap, (-a.seq, a))
                        cts[a] = g
                    elif prev.__class__ is IndexedCotangent:
                        accumulate(cts, heap, a, g)
                    else:
                        cts[a] = prev + g
            elif create_graph or prim is not getitem or not scatter_index(node, ct, cts, heap):
                apply_rule(node, ct, cts, heap, create_graph)
        except Exception as e:  # say which rule failed, keep the original exception
            _note_rule(e, node, ct)
            raise
        if not retain_graph:
            if heap is None:
                node.args = None     # popped off its tape: only the references to other
                # nodes need cutting (x.items -> x[i] -> x would be a cycle), and the mark
            else:
                node.args = node.params = node.vals = None
    return results


def _arrive(node, ct, results, wanted, watch):
    """``node``'s cotangent ``ct`` is complete (a leaf's, or an inner node's when the sweep
    stops at those): shown to the ``watch``, whose result replaces it, then recorded in
    ``results`` if ``node`` is wanted (by default: every leaf). Returns the cotangent."""
    if watch is not None:
        ct = watch.visit(node, ct)
    if (node in wanted) if wanted is not None else node.prim is None:
        results[node] = _own_dtype(ct, node)
    return ct


def _materialize(node, ct, cts, heap, results, wanted, create_graph, retain_graph,
                 dense=False):
    """An :class:`IndexedCotangent` reaching ``node`` made an array: returned dense, or,
    when it has structural zeros (dualad.masked) and ``node`` is not a leaf, recorded in
    ``results`` if ``node`` is in ``wanted`` (None: an inner node is never wanted) and
    swept here with its mask (:func:`_sweep_masked`), and None returned. ``dense``: always
    dense (a watch is shown every node's cotangent, and a hook may replace it)."""
    ct, touched = ct.materialize(node.prim is not None and not dense)
    if touched is None:
        return ct
    if wanted is not None and node in wanted:
        results[node] = _own_dtype(ct, node)
    _sweep_masked(node, ct, touched, cts, heap, create_graph, retain_graph)
    return None


def _free(node, heap, retain_graph):
    if not retain_graph:
        if heap is None:
            node.args = None
        else:
            node.args = node.params = node.vals = None


def _sweep_masked(node, ct, touched, cts, heap, create_graph, retain_graph):
    """The sweep's step at ``node`` for a cotangent ``ct`` with structural zeros outside
    ``touched`` (dualad.interpreters.reverse.masked): an elementwise primitive multiplies its partials into the
    touched entries only and passes the mask on; a selection's rule makes its arguments'
    masks; any other rule sees ``ct`` as a dense array."""
    if node.args is None:
        raise RuntimeError(_FREED)
    try:
        if node.prim.derivs is not None:
            _masked_elementwise(node, ct, touched, cts, heap, create_graph)
        else:
            apply_rule(node, ct, cts, heap, create_graph, touched)
    except Exception as e:  # say which rule failed, keep the original exception
        _note_rule(e, node, ct)
        raise
    _free(node, heap, retain_graph)


def _masked_elementwise(node, ct, touched, cts, heap, create_graph):
    """ū_i = ū · ∂ans/∂arg_i on the touched entries, exactly 0 elsewhere; the mask goes on
    with ū_i (summed like ū_i where the argument was broadcast: an entry is touched when
    one of its summands is)."""
    derivs = node.prim.derivs
    args, ans = (node.args, node) if create_graph else (node.vals, node.value)
    nb = len(shape_of(ct)) - len(shape_of(node.value))
    for i in node.parents:
        p = derivs[i]
        if p.fn is None:              # an argument without a partial: its own rule, dense
            apply_vjps(node, ct, cts, heap, create_graph, (i,))
            continue
        dv = p.const if p.const is not None else p.fn(ans, *args)
        g = ct if dv.__class__ is float and dv == 1.0 else select_product(ct, dv, touched)
        if ANOMALY[0]:
            check_anomaly(node.prim, f"cotangent of argument {i}", g, node)
        x_shape = shape_of(args[i])
        if shape_of(g)[nb:] != x_shape:   # a broadcast argument: summed, and so is its mask
            g = IndexedCotangent.masked(
                unbroadcast(g, x_shape, nb),
                np.asarray(unbroadcast(touched.astype(np.float64), x_shape, nb)) != 0)
        else:
            g = IndexedCotangent.masked(g, touched)
        accumulate(cts, heap, node.args[i], g)


def _broadcast_one(ct, dv, node):
    """Whether ``ct`` is a broadcast 1 (every stride zero: the VJP of a sum of a scalar
    cotangent 1, what every ``np.sum(...)`` loss sends back) and ``ct · dv`` therefore
    ``dv`` itself, exactly: the same shape and dtype (1 · x = x in IEEE arithmetic,
    nan, inf and -0 included). ``dv`` must be a partial computed for this node, not its
    value or an argument (exp's partial is its value): a cotangent is never an array the
    caller also holds. Asked only of ndarray cotangents of an elementwise node whose
    partial is a call: a pass over the whole array (and, in forward-over-reverse,
    another over its tangent) saved per loss for a few attribute reads."""
    return ct.ndim and not any(ct.strides) and ct.size and ct.shape == shape_of(dv) and \
        ct.dtype == getattr(dv, "dtype", None) and ct.flat[0] == 1 and \
        dv is not node.value and all(dv is not a for a in node.vals)


def _visit_order(seeds, cts, tape, create_graph, retain_graph):
    """Seed ``cts`` and set up the order of the visit: ``(heap, tape_pop)``.

    Nodes are visited in decreasing creation order: every user of a node was created
    after it, so its cotangent is complete when the node is reached. A trace that keeps
    its tape is walked from the end (``tape_pop``, skipping nodes without a cotangent);
    otherwise the nodes reached are ordered on a max-heap of ``seq`` (``heap``)."""
    if create_graph and tape is not None:
        # The rules record on the trace as they run: the sweep orders its nodes on the heap,
        # and the nodes of a tape carry no ``seq`` (the tape is their order): number them.
        for node in tape:
            node.seq = _next_seq()
        tape = None
    heap = None if tape is not None else []
    tape_pop = None if tape is None else (list(tape) if retain_graph else tape).pop
    for node, ct in seeds:
        accumulate(cts, heap, node, ct)
    return heap, tape_pop


def _note_rule(e, node, ct):
    add_note(e, f"while running the VJP rule of primitive '{node.prim.name}' (cotangent "
                f"shape {shape_of(ct)}, argument shapes {[shape_of(a) for a in node.vals]})")


def apply_rule(node, ct, cts, heap, create_graph, touched=None):
    """Apply the VJP rule of ``node``'s primitive (its ``vjp_all`` or per-argument
    ``vjps``) to ``ct`` and accumulate the cotangents of its parents (a ``vjp_all``
    marked ``takes_wanted`` is told them: ``wanted=`` the traced argument indices). With
    ``create_graph`` the rules see the boxed arguments and ``node`` itself as ``ans``.
    ``touched``: the mask of ``ct``'s entries that are not structural zeros (None: all),
    which a selection passes on to its arguments (dualad.interpreters.reverse.masked)."""
    prim = node.prim
    vjp_all = prim.rules.get(VJP_ALL)
    if vjp_all is None:
        return apply_vjps(node, ct, cts, heap, create_graph, node.parents, touched)
    args, ans = (node.args, node) if create_graph else (node.vals, node.value)
    params = node.params
    if getattr(vjp_all, "takes_wanted", False):   # it skips the unwanted cotangents
        params = {**params, "wanted": node.parents}
    nb = len(shape_of(ct)) - len(shape_of(ans))
    if nb and not prim.batch_rules:
        all_cts = map_batch(vjp_all, ct, nb, ans, *args, **params)
    else:
        all_cts = vjp_all(ct, ans, *args, **params)
    for i in node.parents:
        g = all_cts[i]
        if ANOMALY[0]:
            check_anomaly(prim, f"cotangent of argument {i}", g, node)
        if g is not None:
            accumulate(cts, heap, node.args[i], g)


def apply_vjps(node, ct, cts, heap, create_graph, argnums, touched=None):
    """Apply ``node``'s per-argument VJP rules ``vjps[i]`` for ``i`` in ``argnums`` (rules
    written for one direction are mapped over the batch axes of ``ct``). A selection
    (dualad.interpreters.reverse.masked.SELECTIONS) marks its arguments' structural zeros."""
    prim = node.prim
    selects = SELECTIONS.get(prim)
    args, ans = (node.args, node) if create_graph else (node.vals, node.value)
    params = node.params
    vjps = prim.rules[VJP]
    nb = len(shape_of(ct)) - len(shape_of(ans))
    for i in argnums:
        rule = vjps.get(i)
        if rule is None:
            raise missing_rule(prim, i, "vjp")
        if nb and not prim.batch_rules:
            g = map_batch(rule, ct, nb, ans, *args, **params)
        else:
            g = rule(ct, ans, *args, **params) if params else rule(ct, ans, *args)
        if ANOMALY[0]:
            check_anomaly(prim, f"cotangent of argument {i}", g, node)
        if g is not None:
            if selects is not None and i in selects:
                g = IndexedCotangent.masked(g, selected(node, i, touched, ct))
            accumulate(cts, heap, node.args[i], g)


def _own_dtype(ct, node):
    """A result cotangent in its primal's dtype, as JAX and PyTorch give it: Re ū for a
    real value (an imaginary part riding on it is not its own, see
    dualad.ops.core.complex_numbers), complex for a complex one, and the primal's own
    precision (a float16 parameter used with float32 data gets a float16 cotangent, not
    the float32 the arithmetic promoted it to). Runs once per returned cotangent, never
    per node."""
    value = node.value
    if is_complex(ct) != is_complex(value):
        if not is_complex(ct):
            return to_complex(ct, dtype=_dtype_of(value))
        ct = real_p(ct)
    have = getattr(ct, "dtype", None)
    if have is not None:
        want = _dtype_of(value)
        if have != want and want.kind in "fc":
            return ct.astype(want)   # (a traced cotangent, create_graph: a recorded cast)
    return ct


def _dtype_of(value):
    dtype = getattr(value, "dtype", None)   # arrays, NumPy scalars, traced values
    return dtype if dtype is not None else np.result_type(unguarded_value(value))
