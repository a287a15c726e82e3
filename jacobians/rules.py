"""Pattern rules: how each kind of primitive maps its arguments' index sets.

A primitive declares its kind next to its rules (``Primitive.sparsity``, one of
``dualad.core.primitive.SPARSITY_KINDS``, or a rule of its own); :data:`KIND_RULES` maps
each kind to its rule. A rule ``rule(prim, pats, primals, ans, params)`` returns the
:class:`Pattern` of ``ans`` (a list for a primitive that returns several arrays)
from the patterns ``pats`` of its arguments (``None`` for an argument that is not
traced) — a conservative superset of the structural nonzeros of the JVP:

- ``elementwise`` (also the default of primitives declared by their partials or
  flagged ``elementwise``, and ``where``): the union of the arguments' rows,
  broadcast to the output;
- ``structural`` linear maps (reshape, transpose, broadcast_to, getitem,
  concatenate, diagonal, diag_embed): every output element is one input
  element or a zero, so the primitive's own ``impl`` applied to an array of
  element labels says which one;
- ``untake`` (scatter-add) and ``reduction`` (sum, max, min, prod): unions over
  the groups of elements that meet in one output element; ``cumulative`` (cumsum,
  cumprod): over the prefix along the axis; ``slice`` (sort): over the whole slice
  along the axis; ``axes`` (fft, rfft, irfft): over the whole slice over ``axes``;
- ``matrix`` (inv, det, solve, decompositions, matrix functions): each output
  element from the matrices of its own batch index;
- ``matmul`` / ``einsum``: by their index structure, ``C[o]`` depends on operand t at
  every index tuple consistent with o where the *constant* operands are
  nonzero (numeric zeros of traced operands are ignored: they can move);
- ``dense``, and any primitive that declares no kind: every output element depends
  on every input element the arguments depend on. That is always safe;
  :func:`rule_for` returns None for an undeclared one so ``explain()`` can say so.

No rule reads the *values* of traced arguments, so a pattern changes with x only
through the decisions f takes (:mod:`jacobians.validity` logs and checks them):

- value-independent unions: ``maximum``/``minimum``/``fmax``/``fmin``, ``abs``,
  ``clip``, ``where`` (both branches, whatever the condition), ``sign``-like
  kinks of any elementwise primitive (the union of the arguments), the ``max``/
  ``min`` reductions (every element of the group, not only the winner), ``sort``
  (its whole slice along the axis; partition, median, quantile go through it);
- covered by the decision log: what reads plain values computed from traced ones —
  ``getitem``/``take``/``untake`` indices and boolean masks (argmax, nonzero, a
  comparison), the zeros of a constant operand of ``matmul``/``einsum`` or of a
  mask multiplied in, and Python ``if``/``while`` on a traced value.
"""
from __future__ import annotations

__all__ = ["JOINT_LIMIT", "dense_rule", "elementwise_rule", "structural_rule", "untake_rule",
           "reduction_rule", "cumsum_rule", "sort_rule", "einsum_rule", "matmul_rule",
           "axes_rule", "matrix_rule", "KIND_RULES", "rule_for"]

import math
import string

import numpy as np

from dualad.extend import shape_of

from .patterns import Pattern, group, union, vstack
from .sparse_matrix_rules import SPARSE_MATRIX_RULES

_INT = np.int64
JOINT_LIMIT = 20_000_000   # largest einsum index space enumerated exactly


def _size(x):
    return math.prod(shape_of(x))


def _bmap(src_shape, dst_shape):
    """Flat index of the source element each destination element broadcasts from."""
    return np.broadcast_to(np.arange(math.prod(src_shape), dtype=_INT).reshape(src_shape),
                           dst_shape).ravel()


def _n(pats):
    return next(p.n for p in pats if p is not None)


def dense_rule(prim, pats, primals, ans, params):
    """Conservative: every output element depends on everything any argument depends on."""
    n = _n(pats)
    cols = np.unique(np.concatenate([p.indices for p in pats if p is not None]))
    outs = ans if isinstance(ans, (tuple, list)) else (ans,)
    res = [Pattern.full(_size(o), cols, n) for o in outs]
    return res if isinstance(ans, (tuple, list)) else res[0]


def elementwise_rule(prim, pats, primals, ans, params):
    out_shape = shape_of(ans)
    skip = set(prim.nondiff_argnums)
    parts = []
    for i, (p, x) in enumerate(zip(pats, primals)):
        if p is None or i in skip:
            continue
        xs = shape_of(x)
        parts.append(p if tuple(xs) == tuple(out_shape) else p.gather(_bmap(xs, out_shape)))
    if not parts:
        return Pattern.empty(_size(ans), _n(pats))
    return union(parts)


def _uniform_pays(pats):
    """Whether every traced argument is uniform and of nearly one width: the uniform path
    pads each argument to the widest, so a wide one next to many narrow elements (the
    arrowhead's dense row concatenated with its diagonal) would cost rows x width."""
    traced = [p for p in pats if p is not None]
    if not all(p.cols is not None for p in traced):
        return False
    width = max(p.width for p in traced)
    return sum(p.rows for p in traced) * width <= 2 * sum(p.nnz for p in traced) + 64


def structural_rule(prim, pats, primals, ans, params):
    """Apply ``impl`` to element labels (1-based; 0 marks a constant or a filled zero)."""
    traced = [p for p in pats if p is not None]
    if prim.name != "diag_embed" and len(traced) == len(pats) and \
            all(p.sat is not None and np.array_equal(p.sat, traced[0].sat) for p in traced):
        # Every element of every argument depends on the same inputs, and these maps only
        # move elements: so does every element of the result.
        return Pattern.full(_size(ans), traced[0].sat, traced[0].n)
    if prim.name != "diag_embed" and _uniform_pays(pats):
        # Uniform patterns: apply impl to each column of input indices directly, constants
        # reading as padding (no zero fill is ever introduced by these maps).
        n = _n(pats)
        width = max(p.width for p in pats if p is not None)
        cols = []
        for j in range(width):
            args = [np.full(shape_of(x), n, _INT) if p is None or j >= p.width else
                    p.cols[j].reshape(shape_of(x)) for p, x in zip(pats, primals)]
            cols.append(np.ascontiguousarray(prim.impl(*args, **params)).ravel())
        return Pattern.uniform(cols, _size(ans), n, all(p is None or p.clean for p in pats))
    labels, stacked, base = [], [], 1
    for p, x in zip(pats, primals):
        shape = shape_of(x)
        if p is None:
            labels.append(np.zeros(shape, _INT))
        else:
            labels.append(np.arange(base, base + p.rows, dtype=_INT).reshape(shape))
            stacked.append(p)
            base += p.rows
    src = np.asarray(prim.impl(*labels, **params)).astype(_INT, copy=False).ravel() - 1
    return vstack(stacked).gather(src)


def untake_rule(prim, pats, primals, ans, params):
    shape, idx = tuple(params["shape"]), params["idx"]
    pos = np.arange(math.prod(shape), dtype=_INT).reshape(shape)[idx]
    u = primals[0]
    src = np.broadcast_to(np.arange(_size(u), dtype=_INT).reshape(shape_of(u)), np.shape(pos))
    return group(pats[0], math.prod(shape), np.ravel(pos), src.ravel())


def reduction_rule(prim, pats, primals, ans, params):
    xs = tuple(shape_of(primals[0]))
    axis = params.get("axis")
    axes = range(len(xs)) if axis is None else \
        [a % len(xs) for a in (axis if isinstance(axis, (tuple, list)) else (axis,))]
    kept = tuple(1 if i in axes else s for i, s in enumerate(xs))
    out_of = _bmap(kept, xs)
    return group(pats[0], math.prod(kept), out_of, np.arange(math.prod(xs), dtype=_INT))


def cumsum_rule(prim, pats, primals, ans, params):
    xs = tuple(shape_of(primals[0]))
    axis = params["axis"] % len(xs)
    idx = np.moveaxis(np.arange(math.prod(xs), dtype=_INT).reshape(xs), axis, -1)
    idx = idx.reshape(-1, xs[axis])
    k, j = np.tril_indices(xs[axis])
    return group(pats[0], math.prod(xs), idx[:, k].ravel(), idx[:, j].ravel())


def sort_rule(prim, pats, primals, ans, params):
    """Sorting moves entries within their slice along ``axis``, in an order that depends on
    the values: each output depends on its whole slice (valid for every permutation)."""
    xs = tuple(shape_of(primals[0]))
    axis = params["axis"] % len(xs)
    idx = np.moveaxis(np.arange(math.prod(xs), dtype=_INT).reshape(xs), axis, -1)
    idx = idx.reshape(-1, xs[axis])
    k, j = np.divmod(np.arange(xs[axis] ** 2, dtype=_INT), xs[axis])
    return group(pats[0], math.prod(xs), idx[:, k].ravel(), idx[:, j].ravel())


# --- products by their index structure ---------------------------------------------------
def _matmul_subs(a_nd, b_nd):
    if b_nd == 1:                       # a stack of matrices times one vector
        batch = string.ascii_letters[:a_nd - 2]
        i, j = string.ascii_letters[a_nd - 2:a_nd]
        return (batch + i + j, j), batch + i
    nb = max(a_nd, b_nd) - 2
    batch = string.ascii_letters[:nb]
    i, j, k = string.ascii_letters[nb:nb + 3]
    return (batch[nb - (a_nd - 2):] + i + j, batch[nb - (b_nd - 2):] + j + k), batch + i + k


def _joint_coords(subs, out, primals, pats, letters, dims):
    """Coordinates (one array per letter) of the index tuples where every constant operand
    is nonzero, or None when the index space is too large to enumerate."""
    joint = math.prod(dims.values())
    if joint > JOINT_LIMIT:
        return None
    shape = tuple(dims[c] for c in letters)
    mask = np.ones((1,) * len(letters), bool)
    for sub, x, p in zip(subs, primals, pats):
        if p is not None:
            continue
        nz = np.asarray(x) != 0
        uniq = "".join(dict.fromkeys(sub))
        if uniq != sub:  # repeated letters: their diagonal
            nz = np.einsum(f"{sub}->{uniq}", nz.astype(np.int8)) != 0
        view = np.transpose(nz, [uniq.index(c) for c in letters if c in uniq])
        view = view.reshape([np.shape(nz)[uniq.index(c)] if c in uniq else 1 for c in letters])
        mask = mask & view
    return np.nonzero(np.broadcast_to(mask, shape))


def _ravel(coords, letters, sub, shape):
    """Flat index into an operand of ``shape`` (subscripts ``sub``), size-1 axes broadcast."""
    if not sub:
        return np.zeros(len(coords[0]) if coords else 1, _INT)
    cs = [coords[letters.index(c)] if d > 1 else np.zeros_like(coords[0])
          for c, d in zip(sub, shape)]
    return np.ravel_multi_index(cs, shape).astype(_INT)


def einsum_rule(prim, pats, primals, ans, params, subs=None, out=None):
    if subs is None:
        subs, out = params["subs"], params["out"]
    letters = "".join(dict.fromkeys("".join(subs) + out))
    dims = {}
    for sub, x in zip(subs, primals):
        for c, d in zip(sub, shape_of(x)):
            dims[c] = max(dims.get(c, 1), d)
    coords = _joint_coords(subs, out, primals, pats, letters, dims)
    if coords is None:
        return dense_rule(prim, pats, primals, ans, params)
    out_shape = tuple(shape_of(ans))
    out_idx = _ravel(coords, letters, out, out_shape) if out else \
        np.zeros(len(coords[0]), _INT)
    parts = []
    for sub, x, p in zip(subs, primals, pats):
        if p is None:
            continue
        src = _ravel(coords, letters, sub, tuple(shape_of(x)))
        pairs = np.unique(np.stack([out_idx, src]), axis=1) if len(src) > 1 else \
            np.stack([out_idx, src])
        parts.append(group(p, _size(ans), pairs[0], pairs[1]))
    return union(parts)


def matmul_rule(prim, pats, primals, ans, params):
    subs, out = _matmul_subs(len(shape_of(primals[0])), len(shape_of(primals[1])))
    return einsum_rule(prim, pats, primals, ans, params, subs, out)


def _groups_then_gather(p, key_of_src, n_keys, key_of_out):
    """``Q[o] = ∪ {P[s] : key_of_src[s] == key_of_out[o]}``: the union over each group of
    source rows, then each output row reads its group's."""
    grouped = group(p, n_keys, key_of_src, np.arange(len(key_of_src), dtype=_INT))
    return grouped.gather(np.asarray(key_of_out, _INT))


def axes_rule(prim, pats, primals, ans, params):
    """Transforms over ``axes`` (fft, rfft, irfft): each output element depends on the whole
    slice of the input over ``axes`` through it (the other axes keep their sizes)."""
    xs, os = tuple(shape_of(primals[0])), tuple(shape_of(ans))
    axes = params.get("axes")
    axes = range(len(xs)) if axes is None else [a % len(xs) for a in axes]
    kept = [i for i in range(len(xs)) if i not in axes]
    if len(os) != len(xs) or any(xs[i] != os[i] for i in kept):
        raise ValueError("axes rule: the untransformed axes differ in size")

    def keys(shape):   # the flat index over the untransformed axes of each element
        sub = tuple(shape[i] if i in kept else 1 for i in range(len(shape)))
        return _bmap(sub, shape)
    n_keys = math.prod(xs[i] for i in kept)
    return _groups_then_gather(pats[0], keys(xs), n_keys, keys(os))


def matrix_rule(prim, pats, primals, ans, params):
    """Functions of stacks of matrices (inv, det, solve, decompositions, ...): the last two
    axes of an argument are its matrix, the axes before them a batch that broadcasts, and
    each output element depends only on the matrices of its own batch index. An argument
    with fewer than two axes (a vector, a scalar) reaches every output element: always a
    superset, whatever the primitive's own convention for vectors is."""
    shapes = [tuple(shape_of(x)) for x in primals]
    batch = np.broadcast_shapes(*[s[:-2] for s in shapes if len(s) >= 2])
    nb, size_b = len(batch), math.prod(batch)
    outs = ans if isinstance(ans, (tuple, list)) else (ans,)
    res = []
    for o in outs:
        os = tuple(shape_of(o))
        if os[:nb] != batch:
            raise ValueError("matrix rule: the output does not lead with the batch axes")
        core = math.prod(os[nb:])
        out_batch = np.repeat(np.arange(size_b, dtype=_INT), core)
        parts = []
        for p, s in zip(pats, shapes):
            if p is None:
                continue
            if len(s) < 2:
                parts.append(_groups_then_gather(p, np.zeros(p.rows, _INT), 1,
                                                 np.zeros(len(out_batch), _INT)))
                continue
            own = math.prod(s[:-2])
            key_of_src = np.repeat(np.arange(own, dtype=_INT), s[-2] * s[-1])
            arg_batch = _bmap(s[:-2], batch)     # the argument's matrix of each batch index
            parts.append(_groups_then_gather(p, key_of_src, own, arg_batch[out_batch]))
        res.append(union(parts))
    return res if isinstance(ans, (tuple, list)) else res[0]


# The pattern rule of each sparsity kind a primitive declares (Primitive.sparsity; the
# kinds are listed, with their meaning, in dualad.core.primitive.SPARSITY_KINDS).
KIND_RULES = {
    "elementwise": elementwise_rule, "structural": structural_rule,
    "reduction": reduction_rule, "cumulative": cumsum_rule, "slice": sort_rule,
    "axes": axes_rule, "matrix": matrix_rule, "untake": untake_rule,
    "matmul": matmul_rule, "einsum": einsum_rule, "dense": dense_rule,
}
KIND_RULES.update(SPARSE_MATRIX_RULES)   # sparse_matmul, sparse_solve


def rule_for(prim):
    """The pattern rule of ``prim`` from its ``sparsity`` field (a kind or a rule), or
    None when it declares none (then :func:`dense_rule` is used and reported)."""
    kind = prim.sparsity
    if kind is None:
        return elementwise_rule if prim.elementwise or prim.derivs is not None else None
    if callable(kind):
        return kind
    return KIND_RULES[kind]
