"""The sweeps behind :class:`dualad.GradientTape`: gradients, Jacobians, batch Jacobians.

Each is one call of the reverse engine's :func:`backward_sweep` over the tape's trace, seeded
from the targets; a Jacobian seeds the rows of the identity as one batch of cotangents, so the
whole Jacobian is one sweep, not a Python loop over its rows:

    gradient        Σ_k  ȳ_kᵀ ∂y_k/∂x                    (ȳ_k = output_gradients, default 1)
    jacobian        J[i..., j...] = ∂y[i...]/∂x[j...]     seeds e_i, i < y.size, one batch
    batch_jacobian  B[b, i..., j...] = ∂y[b, i...]/∂x[b, j...]
                    seeds e_i broadcast over b (one batch of y[0].size cotangents), valid
                    because row b of y depends on row b of x only, which a second, randomly
                    weighted batch of seeds checks in the same sweep.

The sources a result is asked for are resolved here too (:func:`resolve`): a traced value of
the tape, or a value the tape watched, found by identity.
"""
from __future__ import annotations

import numpy as np

from ...core.tracer import Box, shape_of, unguarded_value
from ...core.tree import flatten, flatten_like
from ...interpreters.reverse.sweep import backward_sweep
from ...interpreters.reverse.tape import Var

__all__ = ["WATCH_HINT", "own_node", "resolve", "target_nodes", "one_value", "single_target", "sweep", "jacobian_of",
           "batch_jacobian_of", "unconnected", "distinct", "SEED_BYTES", "blocks",
           "identity_rows"]

WATCH_HINT = ("NumPy arrays cannot be marked in place: tape.watch(x) returns the value the "
               "tape records, so write `x = tape.watch(x)` inside the `with` block and compute "
               "from that x")


def own_node(trace, x):
    """The node of ``trace`` that ``x`` is or wraps (walking down its boxes), or None."""
    while isinstance(x, Box):
        if isinstance(x, Var) and x._trace is trace:
            return x
        x = x._inner
    return None


def resolve(tape, api, sources):
    """``(leaves, rebuild, nodes)``: the flattened sources and, for each, the tape's node it
    stands for (None for a value the tape never watched or recorded)."""
    leaves, rebuild = flatten(sources)
    nodes = []
    for k, x in enumerate(leaves):
        where = f"sources{_path(sources, k)}"
        if x is None:
            raise TypeError(f"{api}: {where} is None; pass the values to differentiate with "
                            f"respect to (what tape.watch returned, or the array it watched)")
        node = own_node(tape._trace, x)
        if node is None:
            if not _numeric(x):
                raise TypeError(f"{api}: {where} is a {type(x).__name__}; sources are arrays "
                                f"(what tape.watch returned, or the array it watched), or a "
                                f"list, tuple or dict of them")
            entry = tape._watched_entry(x)
            node = None if entry is None else entry[1]
        nodes.append(node)
    return leaves, rebuild, nodes


def _numeric(x):
    """Whether ``x`` is a value a source can be: a traced value, an array or a number."""
    if isinstance(x, (Box, np.ndarray, np.generic, int, float, complex)):
        return True
    return hasattr(x, "__array__") or hasattr(x, "__array_namespace__")


def _path(tree, k):
    return "" if not isinstance(tree, (list, tuple, dict)) else f" (leaf {k})"


def target_nodes(tape, api, target, output_gradients):
    """``[(node, seed)]``: the tape's node of every leaf of ``target`` with its cotangent
    (``output_gradients``'s leaf, or ones). A target not recorded on this tape raises."""
    if target is None:
        raise TypeError(f"{api}: target is None (did the function return nothing?); pass the "
                        f"value computed inside the tape's `with` block")
    leaves, _ = flatten(target)
    if not leaves:
        raise ValueError(f"{api}: target is an empty {type(target).__name__}; pass a value")
    seeds = (flatten_like(target, output_gradients, api, "output_gradients",
                          like_name="target") if output_gradients is not None
             else [None] * len(leaves))
    pairs = []
    for k, (y, g) in enumerate(zip(leaves, seeds)):
        if y is None:
            raise TypeError(f"{api}: target (leaf {k}) is None; every target must be a "
                            f"value computed inside the tape's `with` block")
        node = own_node(tape._trace, y)
        if node is None:
            raise ValueError(_not_recorded(api, target, k, y))
        pairs.append((node, _seed(api, k, node, g)))
    return pairs


def _not_recorded(api, target, k, y):
    where = "target" if not isinstance(target, (list, tuple, dict)) else f"target (leaf {k})"
    if isinstance(y, Box) and type(y).__name__ == "Variable":
        how = ("it is a dualad.autograd.Variable computed without the arrays this tape "
               "watched: ask for its gradient with respect to trainable Variables only "
               "(tape.gradient(y, [w, b])), or compute it from what tape.watch returned")
    elif isinstance(y, Box):
        how = ("it is a traced value of another transformation or tape (or of this tape "
               "before its reset())")
    else:
        how = (f"it is a plain {type(y).__name__}: computed from values the tape did not "
               f"record, or by an operation whose derivative is zero everywhere (floor, "
               f"sign, a comparison). {WATCH_HINT}. A gradient taken inside the block is "
               f"not recorded either: for a second derivative nest two tapes")
    return (f"{api}: {where} (shape {shape_of(y)}) was not recorded on this tape, so it has "
            f"no derivative here: {how}")


def _seed(api, k, node, g):
    # (the shape of the value as this tape sees it: under vmap, one example's)
    shape, dtype = shape_of(node.value), _dtype(node.value)
    if g is None:
        if dtype.kind == "c":
            raise TypeError(f"{api}: target (leaf {k}) is complex ({dtype}); pass "
                            f"output_gradients (1+0j gives the holomorphic derivative), or "
                            f"differentiate a real value such as np.abs(y) ** 2")
        return np.ones(shape, dtype=dtype)
    if isinstance(g, Box):
        return g
    g = np.array(g)   # a copy: a target that is a source returns its seed, never the caller's
    if g.shape != shape:
        raise ValueError(f"{api}: output_gradients (leaf {k}) has shape {g.shape} but the "
                         f"target has shape {shape}; pass one of the target's shape")
    if g.dtype.kind == "c" and dtype.kind != "c":
        raise TypeError(f"{api}: output_gradients (leaf {k}) is complex ({g.dtype}) but the "
                        f"target is real ({dtype}); pass a real seed")
    if g.dtype.kind not in "fc":
        g = g.astype(dtype)
    return g


def sweep(tape, api, seeds, nodes, retain):
    """One reverse sweep of the tape's trace from ``seeds``: ``{node: cotangent}``."""
    wanted = {n for n in nodes if n is not None}
    if not wanted:
        return {}
    trace = tape._trace
    if trace.stamps is not None:
        trace.stamps.check(api)
    if trace.constants is not None:   # called inside the block
        trace.constants.check()
    return backward_sweep(seeds, trace=trace, retain_graph=retain, wanted=wanted,
                          tape=trace.tape)


def unconnected(mode, like_shape, dtype):
    """The result for a source the target does not depend on: None, or zeros."""
    return None if mode == "none" else np.zeros(like_shape, dtype=dtype)


def distinct(results):
    """``results`` with a repeated array (a source listed twice) copied, so that updating
    one gradient in place never changes another."""
    seen, out = set(), []
    for g in results:
        if isinstance(g, np.ndarray):
            if id(g) in seen:
                g = g.copy()
            seen.add(id(g))
        out.append(g)
    return out


def _dtype(x):
    # (unguarded: a dtype decides no value, so under dualad.jit it is no guard)
    return np.result_type(unguarded_value(x))


def one_value(api, target):
    """``target``, which must be one value (a Jacobian's), not a container."""
    if isinstance(target, (list, tuple, dict)):
        raise TypeError(f"{api}: target is a {type(target).__name__}; a Jacobian is of one "
                        f"value (stack the targets, or call it once per target)")
    return target


def single_target(tape, api, target):
    """The tape's node of ``target``, which must be one value (a Jacobian's)."""
    (node, _), = target_nodes(tape, api, one_value(api, target), None)
    return node


# A batch of seeds larger than this is swept in blocks of rows (each block one batched sweep):
# a Jacobian's cotangents are (rows × each value's size), which for a large target would
# otherwise hold the whole identity and its pullback through every node at once.
SEED_BYTES = 1 << 26   # 64 MiB


def blocks(rows, row_bytes):
    """``[(a, b), ...]``: the rows of a batch of seeds in blocks of at most
    :data:`SEED_BYTES` (at least one row each)."""
    per = max(1, SEED_BYTES // max(row_bytes, 1))
    return [(a, min(a + per, rows)) for a in range(0, rows, per)]


def identity_rows(a, b, shape, dtype):
    """Rows ``a..b`` of the identity of size ``prod(shape)``, each of shape ``shape``."""
    m = int(np.prod(shape, dtype=np.int64))
    seed = np.zeros((b - a, m), dtype)
    seed[np.arange(b - a), np.arange(a, b)] = 1
    return seed.reshape((b - a,) + tuple(shape))


def _swept_rows(tape, api, node, make, rows, row_bytes, wanted, retain):
    """``{source node: cotangents}`` for seeds ``make(a, b)`` (rows a..b of one batch of
    seeds, of ``node``'s shape behind the batch axis), in blocks of at most
    :data:`SEED_BYTES`; the tape is kept between blocks. A node a block does not reach gets
    zeros there; one no block reaches is left out."""
    spans = blocks(rows, row_bytes)
    parts = {}
    for i, (a, b) in enumerate(spans):
        found = sweep(tape, api, [(node, make(a, b))], wanted,
                      retain if i == len(spans) - 1 else True)
        for n in found:
            parts.setdefault(n, {})[i] = found[n]
    out = {}
    for n, got in parts.items():
        pieces = [got[i] if i in got else
                  np.zeros((b - a,) + shape_of(got[next(iter(got))])[1:], _dtype(n.value))
                  for i, (a, b) in enumerate(spans)]
        out[n] = pieces[0] if len(pieces) == 1 else np.concatenate(pieces)
    return out


def jacobian_of(tape, api, node, source_nodes, retain):
    """``{source node: J}`` with ``J`` of shape ``target.shape + source.shape`` for the target
    ``node``: the identity's rows seeded as one batch of ``target.size`` cotangents (in
    blocks of rows beyond :data:`SEED_BYTES`)."""
    tshape = shape_of(node.value)
    m = int(np.prod(tshape, dtype=np.int64))
    if m == 0:
        return {n: np.zeros(tshape + shape_of(n.value), _dtype(n.value))
                for n in source_nodes if n is not None}
    dtype = _dtype(node.value)

    def rows(a, b):   # rows a..b of the identity, each of the target's shape
        return identity_rows(a, b, tshape, dtype)

    found = _swept_rows(tape, api, node, rows, m, m * dtype.itemsize, source_nodes, retain)
    return {n: np.reshape(ct, tshape + shape_of(n.value)) for n, ct in found.items()}


def batch_jacobian_of(tape, api, node, source_node, retain):
    """``B`` of shape ``(b,) + target.shape[1:] + source.shape[1:]`` (None if unconnected).

    Seeds: ``S[i, b] = e_i`` for every example b, and ``R[i, b] = r_b e_i`` with random
    weights r. Row b of the swept ``S`` is ``Σ_c ∂y[c, i]/∂x[b]``, which is the wanted
    ``∂y[b, i]/∂x[b]`` exactly when y's rows depend on x's own row only; then row b of the
    swept ``R`` is ``r_b`` times it, which is checked (a cross-example dependence raises).
    Each ``i`` is one pair of rows of seeds, swept in one batch (in blocks beyond
    :data:`SEED_BYTES`).
    """
    tshape, sshape = shape_of(node.value), shape_of(source_node.value)
    if len(tshape) < 1 or len(sshape) < 1 or tshape[0] != sshape[0]:
        raise ValueError(f"{api}: target has shape {tshape} and source {sshape}; both need "
                         f"the same leading batch dimension (target[b] depends on source[b])")
    b, m = tshape[0], int(np.prod(tshape[1:], dtype=np.int64))
    dtype = _dtype(node.value)
    if m == 0 or b == 0:
        return np.zeros(tshape + sshape[1:], dtype=_dtype(source_node.value))
    weights = np.random.default_rng(0).uniform(1.0, 2.0, size=b).astype(dtype)
    weights = weights.reshape((1, b) + (1,) * (len(tshape) - 1))

    def rows(a, c):   # for i in a..c: S[i] = e_i on every example, then R[i] = r_b e_i
        eye = np.zeros((c - a, m), dtype)
        eye[np.arange(c - a), np.arange(a, c)] = 1
        eye = eye.reshape((c - a, 1) + tshape[1:])
        return np.stack([np.broadcast_to(eye, (c - a,) + tshape), eye * weights], axis=1
                        ).reshape((2 * (c - a),) + tshape)

    found = _swept_rows(tape, api, node, rows, m, 2 * b * m * dtype.itemsize,
                        [source_node], retain)
    if source_node not in found:
        return None
    pairs = found[source_node]          # rows S[a], R[a], S[a+1], R[a+1], ...
    plain, probe = pairs[0::2], pairs[1::2]
    if not _rows_independent(plain, probe, weights, len(sshape)):
        raise ValueError(f"{api}: target (shape {tshape}) has rows that depend on other "
                         f"rows of the source (shape {sshape}): the per-example Jacobian "
                         f"assumes target[b] depends on source[b] only. Use tape.jacobian "
                         f"for the full Jacobian")
    # the seed axis and the batch axis swapped (np.transpose: a traced result too)
    out = np.transpose(plain, (1, 0) + tuple(range(2, len(shape_of(plain)))))
    return np.reshape(out, tshape + sshape[1:])


def _rows_independent(plain, probe, weights, ndim):
    """Whether the weighted sweep is the plain one scaled row by row (to rounding):
    ``probe[:, b] = r_b plain[:, b]``. Computed with NumPy functions on the results, which
    may be traced (nested tapes, vmap): the verdict is read from the primal values, one per
    example under vmap."""
    scale = weights.reshape((1, -1) + (1,) * (ndim - 1))
    error = np.max(np.abs(probe - scale * plain))
    size = np.max(np.abs(plain)) + 1.0
    tol = 1e-4 if _dtype(plain) == np.float32 else 1e-9
    # (unguarded under dualad.jit: the dependence of rows is structural, not a value's)
    return bool(np.all(unguarded_value(error) <= tol * unguarded_value(size)))
