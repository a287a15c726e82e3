"""The planner on traced values: Jacobians and Hessians inside dualad's transformations.

``jacobian(f, x)`` is *traced* when ``x`` (or a value ``f`` closes over) is a box of
an outer transformation: inside ``dualad.grad``/``jvp``/``vjp``/``hvp``/``derivative``,
inside another planner function (``jacfwd(jacrev(f))``), inside ``vmap``. The result
must then be traced too, differentiable at the outer level. The plain path cannot give
that (it writes each sweep's rows into a NumPy array); this module is the traced path.
It runs the same sweeps on the traced values and assembles the result with registry
operations only (``dualad.numpy``), so the outer transformations record every step::

    forward    Jᵀ = the output tangents of dualad.jvp(f, x, E)    E: rows of the n x n identity
    reverse    J  = pullback(E)  of ONE dualad.vjp tape            E: rows of the m x m identity
    Hessian    H  = R + Rᵀ,  R = ∂/∂ε ∇f(x + ε E/2)                forward-over-reverse (default;
               the other three compositions of :mod:`jacobians.hessian` likewise)
    sparse     the pattern detected at the primal values (it is structural), colored;
               the compressed sweeps of :mod:`jacobians.sparse` seeded with the color
               matrix S, on the traced values; decompressed by ONE gather of the
               compressed product, the stored values of a traced CSR matrix

in chunks of B directions (``chunk_size``, or as many as fit in ``max_memory`` by a
census of the function). Seeds are plain identity rows, not the one-hot batches of the
plain path (:mod:`dualad.core.onehot`): those are a fast path for plain primals.

What is cached, and what is not. The plain path caches per function a census whose
entry holds the function's *output*, and a plan whose costs were *timed*. The traced
path reads and writes neither: its outputs are traced (they belong to one call of the
outer transformation) and a timing would time the outer transformation too. The
census it runs for ``mode="auto"`` and for the chunk size is taken at the *primal*
values, uncached; only its operation counts are used (the mode, by the cost model of
:mod:`jacobians.cost`, and the chunk size), never its output.

Which path runs (:func:`jacobians._common.composes`, one decorator line on each public
function): a traced argument sends the call here; otherwise the plain path runs, and if
it meets a traced output or a traced sweep result (``f`` closes over a traced value:
``lambda x: x * w`` inside ``grad`` of ``w``) it raises :class:`TracedOutput`, caught by
the decorator, and the call is made again here.

Under :func:`dualad.jit` (the planner's boxes are then jit boxes, or sit on them) the
planning reads above take the primal values unguarded, so one recorded program serves
every point; the guards that keep a detected pattern valid are ``f``'s own (see
:func:`_for_planning` and docs/jacobians_nested.md).

Sparse results: a traced ``scipy.sparse`` matrix (``dualad.scipy.sparse.csr_matrix`` of
traced stored values, a ``TracedSparse``) with exactly the detected pattern, ``.data``
in that pattern's CSR order; it supports ``@``, ``.T``, ``.toarray()``, ``.data`` and
``.primal()`` (the plain SciPy matrix), each differentiable at the outer level. When no
stored value is traced the result is SciPy's own CSR matrix, as on the plain path.
"""
from __future__ import annotations

__all__ = ["forward_rows", "reverse_rows", "hessian_rows", "jacobian", "jacfwd", "jacrev",
           "hessian", "hvp", "star_positions", "sparse_jacobian", "sparse_hessian"]

import math

import numpy as np
import scipy.sparse as sp

import dualad
import dualad.numpy as dnp
import dualad.scipy.sparse as dsp
from dualad.extend import Box, flatten, shape_of, tree_map, unguarded_value

from . import cost
from ._common import (DEFAULT_MAX_MEMORY, TRACED_PATHS, Problem, chunks, float_dtype, fname,
                      identity_rows)
from .acyclic import COLORINGS
from .coloring import star_coloring
from .sweeps import check_mode
from .hessian_sweeps import (_directional, _grad_of, check_hessian_mode, check_real_inputs,
                             check_scalar, structured_square)
from .sparse import choose_jacobian, jacobian_colorings
from .sparsity import as_pattern, detect_hessian, detect_jacobian


# --- planning at the primal values ------------------------------------------------------
def _for_planning(problem):
    """The call to plan on (census, sparsity pattern): the same call at the primal values
    of every argument, which no outer trace records. Under ``vmap`` a primal value holds
    the whole batch (its shape is not the traced value's) and a pattern detected at one
    example need not hold at another: then the call is planned on the traced values
    themselves, where a pattern rule that would read a batched value falls back to the
    conservative dense one, so the pattern holds for every example.

    The primal values are read with ``unguarded_value``: under :func:`dualad.jit` no
    guard on them, so a program replays at every point. The census decides only the
    mode and the chunk size (speed, never the result); a pattern holds for the decisions
    ``f`` takes, and under jit each of those is guarded where the sweeps meet it on the
    traced values: a branch (``bool``), an index (``int``), an index function or cast
    (the value itself); the pattern rules read no other value (:mod:`jacobians.validity`).
    So a replay takes the same decisions as the trace that detected its pattern; a point
    that decides otherwise fails a guard and traces again, detecting its own pattern."""
    leaves = [x for a in problem.args for x in flatten(a)[0]]
    batched = any(np.shape(unguarded_value(x)) != shape_of(x) for x in leaves
                  if isinstance(x, Box))
    args = problem.args if batched else [tree_map(unguarded_value, a) for a in problem.args]
    return Problem(problem.api, problem.f, args, problem.nums[0] if problem.single else
                   problem.nums, traced_ok=True)


def _census(problem):
    """The census of ``problem``'s function at the primal values; sets ``problem``'s
    output shapes from it (the sweeps set them again from their own outputs)."""
    c, out = cost.census(_for_planning(problem))
    problem.set_outputs(out)
    return c


def _itemsize(problem):
    return np.dtype(float_dtype(problem.dtype)).itemsize




# --- assembling traced rows ---------------------------------------------------------------
def _rows(leaves, batch):
    """Leaves (B, *shape), traced or plain, as one (B, total) array (registry operations)."""
    flat = [dnp.reshape(t, (batch, math.prod(shape_of(t)[1:]))) for t in leaves]
    return flat[0] if len(flat) == 1 else dnp.concatenate(flat, axis=1)


def _stack(blocks):
    return blocks[0] if len(blocks) == 1 else dnp.concatenate(blocks, axis=0)


def forward_rows(problem, chunk, seeds=None):
    """``(J seedsᵀ)ᵀ`` (c x m) by vector-mode JVPs on the traced primals; ``seeds`` (c x n),
    the identity when None (then the result is Jᵀ)."""
    dtype = float_dtype(problem.dtype)
    c = problem.n if seeds is None else seeds.shape[0]
    blocks = []
    for start, count in chunks(c, chunk):
        block = identity_rows(start, count, problem.n, dtype) if seeds is None else \
            seeds[start:start + count]
        out, tans = dualad.jvp(problem.fun, problem.primals(), problem.tangent_seeds(block))
        if not blocks:
            problem.set_outputs(out)
        blocks.append(_rows(flatten(tans)[0], count))
    return _stack(blocks) if blocks else np.zeros((0, problem.m), dtype)


def reverse_rows(problem, chunk, seeds=None):
    """``seeds J`` (c x n) by batched pullbacks of ONE tape recorded on the traced primals;
    ``seeds`` (c x m), the identity when None (then the result is J)."""
    dtype = float_dtype(problem.dtype)
    out, pullback = dualad.vjp(problem.fun, *problem.primals())
    problem.set_outputs(out)
    c = problem.m if seeds is None else seeds.shape[0]
    blocks = []
    for start, count in chunks(c, chunk):
        block = identity_rows(start, count, problem.m, dtype) if seeds is None else \
            seeds[start:start + count]
        blocks.append(_rows(flatten(pullback(problem.cotangent_seeds(block)))[0], count))
    return _stack(blocks) if blocks else np.zeros((0, problem.n), dtype)


def hessian_rows(problem, mode, seeds, chunk):
    """``seeds H`` (c x n) for plain ``seeds`` (c x n), by ``mode`` (see
    :mod:`jacobians.hessian`), on the traced primals."""
    primals = problem.primals()
    if mode == "reverse-over-reverse":
        pullback = dualad.vjp(_grad_of(problem), *primals)[1]
    blocks = []
    for start, count in chunks(seeds.shape[0], chunk):
        block = seeds[start:start + count]
        if mode == "forward-over-reverse":
            rows = dualad.jvp(_grad_of(problem), primals, problem.tangent_seeds(block),
                              lazy=True)[1]
        elif mode == "reverse-over-reverse":
            rows = pullback(problem.tangent_seeds(block))
        elif mode == "reverse-over-forward":
            rows = dualad.vjp(_directional(problem, block), *primals)[1](
                np.eye(count, dtype=block.dtype))
        else:  # forward-over-forward
            eye = identity_rows(0, problem.n, problem.n, block.dtype)
            rows = dualad.jvp(_directional(problem, eye), primals,
                              problem.tangent_seeds(block))[1]
        blocks.append(_rows(flatten(rows)[0], count))
    return _stack(blocks) if blocks else np.zeros((0, problem.n), seeds.dtype)


# --- dense ----------------------------------------------------------------------------------
def jacobian(f, *args, mode="auto", argnums=0, chunk_size=None,
             max_memory=DEFAULT_MAX_MEMORY, api="jacobian"):
    """:func:`jacobians.jacobian` on traced values. ``mode="auto"`` is the cheaper of
    forward and reverse by the cost model of a census at the primal values (not timed)."""
    mode = check_mode(api, mode)
    problem = Problem(api, f, args, argnums, traced_ok=True)
    c = _census(problem)
    chunk = _chunk(problem, chunk_size, c.chunk_size(max_memory, _itemsize(problem)))
    if mode == "auto":
        fwd = cost.model(c, problem.n, chunk, "forward")
        rev = cost.model(c, problem.m, chunk, "reverse")
        mode = "forward" if fwd <= rev else "reverse"
    if mode == "forward":
        flat = dnp.transpose(forward_rows(problem, chunk))
    else:
        flat = reverse_rows(problem, chunk)
    return problem.structured(flat)


def jacfwd(f, *args, argnums=0, chunk_size=None, max_memory=DEFAULT_MAX_MEMORY):
    return jacobian(f, *args, mode="forward", argnums=argnums, chunk_size=chunk_size,
                    max_memory=max_memory, api="jacfwd")


def jacrev(f, *args, argnums=0, chunk_size=None, max_memory=DEFAULT_MAX_MEMORY):
    return jacobian(f, *args, mode="reverse", argnums=argnums, chunk_size=chunk_size,
                    max_memory=max_memory, api="jacrev")


def _chunk(problem, chunk_size, fitting):
    if chunk_size is None:
        return fitting
    if int(chunk_size) < 1:
        raise ValueError(f"{problem.api}({problem.name}): chunk_size must be a positive "
                         f"integer, got {chunk_size!r}")
    return int(chunk_size)


def _hessian_chunk(problem, c, mode, chunk_size, max_memory):
    # As jacobians.hessian.hessian_chunk: about three values per direction per census
    # element (the gradient's tape and its tangents), n times more when forward-over-forward.
    per = c.bytes_per_direction(_itemsize(problem)) * 3
    if mode == "forward-over-forward":
        per *= max(1, problem.n)
    return _chunk(problem, chunk_size, max(1, int(max_memory // per)))


def hessian(f, *args, mode="auto", argnums=0, chunk_size=None, max_memory=DEFAULT_MAX_MEMORY):
    """:func:`jacobians.hessian` on traced values: rows of H/2 (seeds scaled by ½, exact),
    then ``H = R + Rᵀ``, exactly symmetric, as on the plain path."""
    mode = check_hessian_mode(mode)
    if mode == "auto":      # the plain path's dense choice (its compressed one needs a pattern)
        mode = "forward-over-reverse"
    problem = Problem("hessian", f, args, argnums, traced_ok=True)
    c = _census(problem)
    check_scalar(problem)
    check_real_inputs(problem)
    chunk = _hessian_chunk(problem, c, mode, chunk_size, max_memory)
    half = identity_rows(0, problem.n, problem.n, float_dtype(problem.dtype)) * 0.5
    rows = hessian_rows(problem, mode, half, chunk)
    return structured_square(problem, dnp.add(rows, dnp.transpose(rows)))


def hvp(f, x, v, *args, argnums=0):
    """:func:`jacobians.hvp` on traced values (``x``, ``v``, an extra argument, or a value
    ``f`` closes over): one JVP through one gradient sweep, nothing cached."""
    call_args = list(args)
    call_args.insert(int(argnums), x)
    problem = Problem("hvp", f, call_args, int(argnums), traced_ok=True)
    if len(problem.leaves) != 1:
        raise TypeError("hvp: x must be one array; for containers use jacobians.hessian")
    v = v if isinstance(v, Box) else np.asarray(v)
    xs = tuple(problem.in_shapes[0])
    if shape_of(v) != xs and shape_of(v)[1:] != xs:
        raise ValueError(f"hvp({problem.name}): v has shape {shape_of(v)}, but x has shape "
                         f"{xs}; v must have shape {xs} or (B, *{xs})")
    def scalar_fun(x):      # the plain path's census check, made on the sweep's output
        out = problem.fun(x)
        problem.set_outputs(out)
        check_scalar(problem)
        return out
    return dualad.jvp(dualad.grad(scalar_fun), problem.primals(), (v,), lazy=True)[1]


# --- sparse -----------------------------------------------------------------------------------
def _csr(pattern, data):
    """The CSR matrix of ``pattern`` with stored values ``data`` (its CSR order): a
    ``TracedSparse`` when ``data`` is traced, SciPy's own otherwise."""
    if isinstance(data, Box):
        return dsp.csr_matrix((data, pattern.indices, pattern.indptr), shape=pattern.shape)
    out = sp.csr_matrix((np.asarray(data), pattern.indices, pattern.indptr),
                        shape=pattern.shape)
    out.has_sorted_indices = True
    return out


def _gather(compressed, positions):
    """``ravel(compressed)[positions]``: one gather, recorded by the outer traces (its
    positions int32 where they fit: a replay holds them as a constant)."""
    if positions.size and int(positions.max()) < 2 ** 31:
        positions = positions.astype(np.int32)
    return dnp.take(dnp.ravel(compressed), positions)


def _pattern_rows(pattern):
    return np.repeat(np.arange(pattern.shape[0], dtype=np.int64), np.diff(pattern.indptr))


def star_positions(pattern, coloring):
    """For each stored entry (i, j) of the symmetric ``pattern`` (CSR order), its flat
    position in the compressed product (H S)ᵀ (c x n) under the star ``coloring``::

        H[i, i] = (H S)[i, color(i)]
        H[a, b] = (H S)[a, color(b)]  if b is a's only neighbor of color(b)   (a < b)
                  (H S)[b, color(a)]  otherwise (star coloring: one of the two holds)

    as :func:`jacobians.sparse.decompress_star` reads them; (i, j) and (j, i) share
    their position, so the result is exactly symmetric."""
    n = pattern.shape[0]
    colors = np.asarray(coloring.colors, np.int64)
    k = int(coloring.ncolors)
    i, j = _pattern_rows(pattern), pattern.indices.astype(np.int64)
    a, b = np.minimum(i, j), np.maximum(i, j)
    upper = i < j
    oi, oj = i[upper], j[upper]
    counts = np.bincount(np.concatenate([oi * k + colors[oj], oj * k + colors[oi]]),
                         minlength=n * k)
    direct = counts[a * k + colors[b]] == 1
    pos = np.where(direct, colors[b] * n + a, colors[a] * n + b)
    return np.where(i == j, colors[i] * n + i, pos)


def sparse_jacobian(f, *args, mode="auto", argnums=0, sparsity=None, chunk_size=None,
                    max_memory=DEFAULT_MAX_MEMORY, colored=None):
    """:func:`jacobians.sparse_jacobian` on traced values (see the module docstring).
    ``colored``: a plan's own decisions, ``(way, coloring)`` for the CSR ``sparsity`` and
    ``chunk_size`` it gives (its census, coloring and choice are not made again)."""
    mode = check_mode("sparse_jacobian", mode, ("auto", "forward", "reverse", "bidirectional"))
    problem = Problem("sparse_jacobian", f, args, argnums, traced_ok=True)
    if colored is not None:
        way, coloring = colored
        pattern, chunk = sparsity, chunk_size
        col, row, bic = (coloring if way == w else None
                         for w in ("forward", "reverse", "bidirectional"))
    else:
        way, col, row, bic, pattern, chunk = _colored(problem, mode, sparsity, chunk_size,
                                                      max_memory)
    dtype = float_dtype(problem.dtype)
    if way == "bidirectional":
        return _csr(pattern, _gather(_bidirectional_rows(problem, chunk, bic, dtype),
                                     bic.positions(pattern)))
    if way == "forward":
        compressed_t = forward_rows(problem, chunk, col.seed(dtype))          # (c x m)
        pos = np.asarray(col.colors, np.int64)[pattern.indices] * problem.m + \
            _pattern_rows(pattern)
        return _csr(pattern, _gather(compressed_t, pos))
    compressed = reverse_rows(problem, chunk, row.seed(dtype))                # (c x n)
    pos = np.asarray(row.colors, np.int64)[_pattern_rows(pattern)] * problem.n + \
        pattern.indices
    return _csr(pattern, _gather(compressed, pos))


def _colored(problem, mode, sparsity, chunk_size, max_memory):
    """``(way, col, row, bic, pattern, chunk)`` for :func:`sparse_jacobian`: its census,
    pattern (detected unless given), chunk, colorings and the cheapest way among them."""
    c = _census(problem)
    if sparsity is None:
        pattern = detect_jacobian(_for_planning(problem)).pattern
    else:
        pattern = as_pattern("sparse_jacobian", sparsity, (problem.m, problem.n))
    chunk = _chunk(problem, chunk_size, c.chunk_size(max_memory, _itemsize(problem)))
    col, row, bic = jacobian_colorings(pattern, mode, c, chunk, kind="star")   # reads: gathers
    return choose_jacobian(c, col, row, bic, chunk), col, row, bic, pattern, chunk


def _bidirectional_rows(problem, chunk, bic, dtype):
    """``concatenate([ravel((J S_f)ᵀ), ravel(S_rᵀ J)])`` of a star bicoloring ``bic`` on
    the traced values: what :meth:`Bicoloring.positions` indexes."""
    parts = []
    if bic.ncolors_forward or not bic.ncolors_reverse:
        parts.append(dnp.ravel(forward_rows(problem, chunk, bic.forward_seed(dtype).T)))
    if bic.ncolors_reverse:
        parts.append(dnp.ravel(reverse_rows(problem, chunk, bic.reverse_seed(dtype).T)))
    return parts[0] if len(parts) == 1 else dnp.concatenate(parts)


def sparse_hessian(f, *args, argnums=0, sparsity=None, chunk_size=None,
                   max_memory=DEFAULT_MAX_MEMORY, coloring="auto"):
    """:func:`jacobians.sparse_hessian` on traced values: pattern at the primal values,
    star coloring (whatever ``coloring`` asks: direct recovery is a gather the outer
    transformation records), one forward-over-reverse product per color on the traced
    values."""
    if coloring not in COLORINGS:
        raise ValueError(f"sparse_hessian({fname(f)}): coloring={coloring!r} is not one of "
                         f"{COLORINGS}")
    problem = Problem("sparse_hessian", f, args, argnums, traced_ok=True)
    c = _census(problem)
    check_scalar(problem)
    check_real_inputs(problem)
    if sparsity is None:
        pattern = detect_hessian(_for_planning(problem)).pattern
    else:
        pattern = as_pattern("sparse_hessian", sparsity, (problem.n, problem.n))
        pattern = ((pattern + pattern.T) > 0).tocsr()
        pattern.sort_indices()
    coloring = star_coloring(pattern)
    chunk = _hessian_chunk(problem, c, "forward-over-reverse", chunk_size, max_memory)
    compressed = hessian_rows(problem, "forward-over-reverse",
                              coloring.seed(float_dtype(problem.dtype)), chunk)   # (c x n)
    return _csr(pattern, _gather(compressed, star_positions(pattern, coloring)))


TRACED_PATHS.update(jacobian=jacobian, jacfwd=jacfwd, jacrev=jacrev, hessian=hessian,
                    hvp=hvp, sparse_jacobian=sparse_jacobian, sparse_hessian=sparse_hessian)
