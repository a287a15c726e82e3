"""Products and matrix structure: matmul, einsum, diagonal, and what composes from them.

    matmul  C = A B:     Ċ = Ȧ B + A Ḃ          Ā = C̄ Bᵀ,   B̄ = Aᵀ C̄
    einsum:              linear in each operand; the VJP of operand i is the
                         einsum of the output cotangent with the other operands.
                         A subscript repeated within operand i ('ii->i', 'ii->',
                         'iij->ij') reads a diagonal of it: the cotangent is that
                         diagonal's, embedded back (each repeat of i a fresh
                         letter I tied to i by an identity δ_iI: the adjoint of
                         reading a diagonal is writing one, zeros elsewhere)
    diagonal d = diag(X):  ḋ = diag(Ẋ)          X̄ = embed(d̄) on the diagonal

dot, tensordot, inner, outer, trace, diag, triu, tril are compositions.
"""
from __future__ import annotations

import string

import math

import numpy as np

from ...core.scaled import dense
from ...core.tracer import PLAIN_TYPES, Box, ndim_of, shape_of, unguarded_value
from ...core.primitive import JVP, VJP
from ...core.primitive import Primitive, implements, register, sample
from .._batch import einsum_in_batch, example_ndim
from ...core.batch_axes import batch_ndim
from .batch_ops import align_stacks
from .contract import contract2
from .linear import lift, unbroadcast
from .elementwise import multiply, where
from .reductions import sum as sum_
from .shape import reshape, transpose, ravel, moveaxis, broadcast_to

__all__ = [
    "matmul_p", "matmul", "einsum_p", "einsum", "tensordot", "dot", "inner", "outer",
    "vdot", "diagonal_p", "diag_embed_p", "diagonal", "trace", "diag", "triu", "tril"
]


def _mT(x):
    if type(x) is np.ndarray:   # a constant matrix (W in W @ x): transpose_p's value, a view
        return x.swapaxes(-1, -2)
    nd = ndim_of(x)
    return transpose(x, tuple(range(nd - 2)) + (nd - 1, nd - 2))


# --- matmul on arrays of two or more dimensions -------------------------------------
def _matmul_impl(a, b):
    """``np.matmul``, with stacks against one matrix done as ONE matrix product.

    Batched tangents and cotangents meet constant matrices as ``W @ T`` with T of
    shape (B, k, 1) or ``C @ W`` with C of shape (B, 1, k); NumPy runs those as B
    matrix-vector products, several times slower than the single GEMM
    ``T[..., 0] @ Wᵀ`` (the same numbers, in the same order of summation per entry).
    """
    a, b = dense(a), dense(b)       # a scaled batch of tangents: multiplied out here
    if type(a) is np.ndarray and type(b) is np.ndarray and a.dtype != object:
        if b.ndim == 1 and a.ndim > 2 and a.flags.c_contiguous:   # a stack against one vector
            return (a.reshape(-1, a.shape[-1]) @ b).reshape(a.shape[:-1])
        if a.ndim == 2 and b.ndim > 2 and b.shape[-1] == 1:
            k = b.shape[-2]
            return (b.reshape(-1, k) @ a.T).reshape(b.shape[:-2] + (a.shape[0], 1))
        if b.ndim == 2 and a.ndim > 2 and (a.shape[-2] == 1 or a.flags.c_contiguous):
            return (a.reshape(-1, a.shape[-1]) @ b).reshape(a.shape[:-1] + (b.shape[1],))
    return np.matmul(a, b)


matmul_p = register(Primitive("matmul", _matmul_impl, sparsity="matmul",
                              sympy=lambda sp, a, b: np.matmul(a, b)))


# A vector b (``A @ x``, a (..., m, n) stack against x of shape (n,)) is taken as it is,
# without the reshapes to a column and back: y = A x with
#     ẏ = Ȧ x + A ẋ        Ā = ȳ xᵀ (an outer product),   x̄ = Σ_stack Aᵀ ȳ.
def _matmul_jvp_a(t, ans, a, b):
    if ndim_of(b) == 1:
        return matmul_p(t, b)
    return matmul_p(lift(t, batch_ndim(t, a), ndim_of(ans)), b)


def _matmul_jvp_b(t, ans, a, b):
    if ndim_of(b) == 1:
        nb = batch_ndim(t, b)
        if nb == 0:
            return matmul_p(a, t)
        if ndim_of(a) == 2:              # B directions at once: rows ẋ_k, one product
            return matmul_p(t, _mT(a))
        ts = shape_of(t)                 # each direction against every matrix of the stack
        col = reshape(t, ts[:nb] + (1,) * (ndim_of(a) - 2) + (ts[-1], 1))
        out = matmul_p(a, col)
        return reshape(out, shape_of(out)[:-1])
    return matmul_p(a, lift(t, batch_ndim(t, b), ndim_of(ans)))


def _matmul_vjp_a(ct, ans, a, b):
    if ndim_of(b) == 1:
        return multiply(reshape(ct, shape_of(ct) + (1,)), b)
    return unbroadcast(matmul_p(ct, _mT(b)), shape_of(a), batch_ndim(ct, ans))


def _matmul_vjp_b(ct, ans, a, b):
    if ndim_of(b) == 1:
        nb = batch_ndim(ct, ans)
        if ndim_of(a) == 2:
            return matmul_p(_mT(a), ct) if nb == 0 else matmul_p(ct, a)
        cs = shape_of(ct)                # (B..., S..., m): rows against the stack, summed
        g = matmul_p(reshape(ct, cs[:-1] + (1, cs[-1])), a)
        g = reshape(g, shape_of(g)[:-2] + shape_of(g)[-1:])
        return sum_(g, axis=tuple(range(nb, nb + ndim_of(a) - 2)))
    return unbroadcast(matmul_p(_mT(a), ct), shape_of(b), batch_ndim(ct, ans))


matmul_p.defjvp(_matmul_jvp_a, _matmul_jvp_b)
matmul_p.defvjp(_matmul_vjp_a, _matmul_vjp_b)


def _matmul_batch(args, batched):
    """vmap: ``np.matmul`` per example (a 1-D operand a row or column vector: promoted to
    a matrix, and its axis squeezed from the result), the batch axis one more stack
    axis, lined up in front of both operands' stacks."""
    a, b = args
    row, col = example_ndim(a, batched[0]) == 1, example_ndim(b, batched[1]) == 1
    if row:
        a = reshape(a, shape_of(a)[:-1] + (1,) + shape_of(a)[-1:])
    if col:
        b = reshape(b, shape_of(b) + (1,))
    c = matmul_p(*align_stacks((a, b), batched, (2, 2)))
    if row or col:
        cs = shape_of(c)
        c = reshape(c, cs[:-2] + (() if row else cs[-2:-1]) + (() if col else cs[-1:]))
    return c


matmul_p.defbatch(_matmul_batch)


def _maybe_sparse(x):
    """Whether ``x`` may be a SciPy sparse matrix (it has ``tocsr``). Arrays, numbers and
    boxes are not: asked first, as a missing attribute of a class costs an exception."""
    t = type(x)
    return t not in PLAIN_TYPES and not issubclass(t, Box) and hasattr(t, "tocsr")


@implements(np.matmul)
def matmul(a, b):
    """NumPy's ``a @ b``: 1-D operands are promoted to matrices and squeezed back."""
    if _maybe_sparse(a) or _maybe_sparse(b):   # sparse: dualad.scipy.sparse
        from ...scipy.sparse._matmul import sparse_matmul
        return sparse_matmul(a, b)
    na, nb = ndim_of(a), ndim_of(b)
    if na == 0 or nb == 0:
        raise ValueError(f"matmul: operands must not be scalars (shapes {shape_of(a)} and "
                         f"{shape_of(b)}); use multiply")
    sa, sb = shape_of(a), shape_of(b)
    if sa[-1] != sb[0 if nb == 1 else -2]:
        raise ValueError(f"matmul: shapes {sa} and {sb} are not aligned: "
                         f"{sa[-1]} (dim {na - 1}) != {sb[0 if nb == 1 else -2]}")
    if nb == 1 and na >= 2:
        return matmul_p(a, b)        # matrix (or stack) times vector: one primitive
    if na == 1:
        a = reshape(a, (1,) + sa)
    if nb == 1:
        b = reshape(b, sb + (1,))
    c = matmul_p(a, b)
    if na == 1 or nb == 1:
        cs = shape_of(c)
        if na == 1 and nb == 1:
            return reshape(c, ())
        if nb == 1:
            return reshape(c, cs[:-1])
        return reshape(c, cs[:-2] + cs[-1:])
    return c


# --- einsum --------------------------------------------------------------------------
def _parse_einsum(spec, shapes):
    """Explicit form ``((sub_0, sub_1, ...), out)``: ellipses become letters."""
    spec = spec.replace(" ", "")
    if "->" in spec:
        lhs, out = spec.split("->")
    else:
        lhs, out = spec, None
    subs = lhs.split(",")
    if len(subs) != len(shapes):
        raise ValueError(f"einsum: {len(subs)} operand subscripts in {spec!r} but "
                         f"{len(shapes)} operands")
    used = set(spec) & set(string.ascii_letters)
    free = [c for c in string.ascii_letters if c not in used]
    ell_nd = max((len(s) - (len(sub) - 3) for sub, s in zip(subs, shapes) if "..." in sub),
                 default=0)
    ell = "".join(free[:ell_nd])
    expanded = []
    for sub, s in zip(subs, shapes):
        if "..." in sub:
            k = len(s) - (len(sub) - 3)
            sub = sub.replace("...", ell[ell_nd - k:] if k else "")
        if len(sub) != len(s):
            raise ValueError(f"einsum: subscripts {sub!r} do not match an operand of shape {s}")
        expanded.append(sub)
    if out is None:
        counts = {}
        for c in "".join(expanded):
            counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in ell))
    else:
        out = out.replace("...", ell)
    return tuple(expanded), out


def _einsum_impl(*ops, subs, out):
    if len(ops) == 2:   # a batched matmul (BLAS) where it pays, see .contract
        c = contract2(subs[0], subs[1], out, ops[0], ops[1])
        if c is not None:
            return c
    return np.einsum(",".join(subs) + "->" + out, *ops, optimize=len(ops) > 2)


einsum_p = register(Primitive("einsum", _einsum_impl, sparsity="einsum",
                              sympy=lambda sp, *ops, subs, out: _einsum_impl(
                                  *ops, subs=subs, out=out)))


def _fresh(subs, out, n):
    used = set("".join(subs) + out)
    return "".join([c for c in string.ascii_letters if c not in used][:n])


def _einsum_jvp(i):
    def jvp(t, ans, *ops, subs, out):
        bl = _fresh(subs, out, batch_ndim(t, ops[i]))
        new_subs = tuple(bl + s if j == i else s for j, s in enumerate(subs))
        new_ops = tuple(t if j == i else o for j, o in enumerate(ops))
        return einsum_p(*new_ops, subs=new_subs, out=bl + out)
    return jvp


def _identity_like(ct, n):
    """δ of size n × n in the real dtype of ``ct`` (float32 stays float32)."""
    dt = np.result_type(unguarded_value(ct))
    return np.eye(n, dtype=dt if dt.kind == "f" else (np.float32 if dt == np.complex64
                                                          else np.float64))


def _einsum_vjp(i):
    def vjp(ct, ans, *ops, subs, out):
        target = subs[i]
        nb = batch_ndim(ct, ans)
        n_rep = len(target) - len(set(target))
        fresh = _fresh(subs, out, nb + n_rep)
        bl, rep = fresh[:nb], iter(fresh[nb:])
        xs = shape_of(ops[i])
        # Repeated subscripts: the k-th repeat of letter c becomes a fresh letter C, with a
        # constant δ_cC among the operands (the diagonal embedding).
        renamed, deltas, seen = "", [], set()
        for c, n in zip(target, xs):
            if c in seen:
                new = next(rep)
                deltas.append((c + new, _identity_like(ct, n)))
                c = new
            seen.add(c)
            renamed += c
        others = [s for j, s in enumerate(subs) if j != i] + [d for d, _ in deltas]
        avail = set(out) | set("".join(others))
        kept = "".join(c for c in renamed if c in avail)
        g = einsum_p(ct, *[o for j, o in enumerate(ops) if j != i], *[e for _, e in deltas],
                     subs=(bl + out,) + tuple(others), out=bl + kept)
        if kept != renamed:     # letters summed within operand i alone: broadcast back
            batch = shape_of(g)[:len(bl)]
            g = reshape(g, batch + tuple(n if c in avail else 1 for c, n in zip(renamed, xs)))
            g = broadcast_to(g, batch + xs)
        return g
    return vjp


def _sublist_letters(sub, what):
    """One sublist (ints 0-51 and Ellipsis) as subscript letters, NumPy's mapping:
    0-25 → 'A'-'Z', 26-51 → 'a'-'z'; Ellipsis → '...'."""
    try:
        items = list(sub)
    except TypeError:
        raise TypeError(f"einsum: the {what} must be a list of integers in [0, 52) or "
                        f"Ellipsis, got {sub!r}") from None
    letters = ""
    for k in items:
        if k is Ellipsis:
            letters += "..."
        elif isinstance(k, (int, np.integer)) and not isinstance(k, bool) and 0 <= k < 52:
            letters += string.ascii_uppercase[k] if k < 26 else string.ascii_lowercase[k - 26]
        else:
            raise TypeError(f"einsum: the {what} must hold integers in [0, 52) or Ellipsis "
                            f"(NumPy's sublist form), got {k!r} in {sub!r}")
    return letters


def _sublist_to_subscripts(args):
    """``einsum(op0, sub0, op1, sub1, ..., [sub_out])`` → ``(spec, operands)``."""
    operands = list(args[0::2])
    subs = list(args[1::2])
    out = None
    if len(args) % 2:                 # an odd count: the last item is the output sublist
        out = operands.pop()
    spec = ",".join(_sublist_letters(s, f"sublist of operand {i}") for i, s in enumerate(subs))
    if out is not None:
        spec += "->" + _sublist_letters(out, "output sublist")
    return spec, operands


@implements(np.einsum)
def einsum(spec, *operands, **kwargs):
    """``np.einsum`` in the subscripts form (``einsum('ij,jk->ik', a, b)``) or NumPy's
    sublist form (``einsum(a, [0, 1], b, [1, 2], [0, 2])``, Ellipsis allowed), which is
    converted to subscripts (integer k is letter k of 'A'…'Z' 'a'…'z', as in NumPy)."""
    if not isinstance(spec, str):
        spec, operands = _sublist_to_subscripts((spec,) + operands)
    subs, out = _parse_einsum(spec, [shape_of(o) for o in operands])
    for i in range(len(operands)):
        einsum_p.rules[JVP][i] = einsum_p.rules[JVP].get(i) or _einsum_jvp(i)
        einsum_p.rules[VJP][i] = einsum_p.rules[VJP].get(i) or _einsum_vjp(i)
    return einsum_p(*operands, subs=subs, out=out)


for _i in range(8):
    einsum_p.rules[JVP][_i] = _einsum_jvp(_i)
    einsum_p.rules[VJP][_i] = _einsum_vjp(_i)


def _einsum_batch(args, batched, subs, out):
    """vmap: the batch axis gets a subscript letter of its own, on every batched operand
    and the output; unbatched operands are shared by every example."""
    subs, out = einsum_in_batch(subs, out, batched)
    return einsum_p(*args, subs=subs, out=out)


einsum_p.defbatch(_einsum_batch)


# --- compositions ------------------------------------------------------------------
@implements(np.tensordot)
def tensordot(a, b, axes=2):
    na, nb = ndim_of(a), ndim_of(b)
    if isinstance(axes, (int, np.integer)):
        ax_a, ax_b = list(range(na - axes, na)), list(range(axes))
    else:
        ax_a, ax_b = axes
        ax_a = [ax_a] if isinstance(ax_a, (int, np.integer)) else list(ax_a)
        ax_b = [ax_b] if isinstance(ax_b, (int, np.integer)) else list(ax_b)
    ax_a = [int(x) % na for x in ax_a]
    ax_b = [int(x) % nb for x in ax_b]
    sa, sb = shape_of(a), shape_of(b)
    for p, q in zip(ax_a, ax_b):
        if sa[p] != sb[q]:
            raise ValueError(f"tensordot: shape mismatch for sum: {sa} axis {p} vs {sb} axis {q}")
    free_a = [i for i in range(na) if i not in ax_a]
    free_b = [i for i in range(nb) if i not in ax_b]
    k = math.prod(sa[i] for i in ax_a)
    a2 = reshape(transpose(a, free_a + ax_a), (-1, k))
    b2 = reshape(transpose(b, ax_b + free_b), (k, -1))
    return reshape(matmul_p(a2, b2), tuple(sa[i] for i in free_a) + tuple(sb[i] for i in free_b))


@implements(np.dot)
def dot(a, b):
    na, nb = ndim_of(a), ndim_of(b)
    if na == 0 or nb == 0:
        return multiply(a, b)
    if na <= 2 and nb <= 2:
        return matmul(a, b)
    return tensordot(a, b, axes=([na - 1], [0 if nb == 1 else nb - 2]))


@implements(np.inner)
def inner(a, b):
    if ndim_of(a) == 0 or ndim_of(b) == 0:
        return multiply(a, b)
    return tensordot(a, b, axes=([-1], [-1]))


@implements(np.outer)
def outer(a, b):
    return multiply(reshape(ravel(a), (-1, 1)), reshape(ravel(b), (1, -1)))


@implements(np.vdot)
def vdot(a, b):
    """``np.vdot``: Σ conj(a)·b (the first argument conjugated when complex)."""
    from .complex_numbers import conj
    return sum_(multiply(ravel(conj(a)), ravel(b)))


# --- diagonals ----------------------------------------------------------------------
def _diag_index(n_rows, n_cols, offset):
    rows = np.arange(max(0, -offset), n_rows)
    cols = rows + offset
    keep = (cols >= 0) & (cols < n_cols)
    return rows[keep], cols[keep]


diagonal_p = register(Primitive(
    "diagonal", lambda x, offset: np.diagonal(x, offset, axis1=-2, axis2=-1).copy(), linear=True,
    sparsity="structural",
    sympy=lambda sp, x, offset: np.diagonal(x, offset, axis1=-2, axis2=-1)))


def _embed_impl(d, offset, shape):
    out = np.zeros(shape_of(d)[:-1] + tuple(shape), dtype=np.result_type(d))
    r, c = _diag_index(shape[0], shape[1], offset)
    out[..., r, c] = d
    return out


diag_embed_p = register(Primitive("diag_embed", _embed_impl, linear=True, sparsity="structural"))
diagonal_p.defjvp(lambda t, ans, x, offset: diagonal_p(t, offset=offset))
diagonal_p.defvjp(lambda ct, ans, x, offset:
                  diag_embed_p(ct, offset=offset, shape=shape_of(x)[-2:]))
diag_embed_p.defjvp(lambda t, ans, d, offset, shape: diag_embed_p(t, offset=offset, shape=shape))
diag_embed_p.defvjp(lambda ct, ans, d, offset, shape: diagonal_p(ct, offset=offset))
# vmap: both act on the last axes of stacks, so the batch axis is one more stack axis
diagonal_p.defbatch(lambda args, batched, offset: diagonal_p(args[0], offset=offset))
diag_embed_p.defbatch(lambda args, batched, offset, shape:
                      diag_embed_p(args[0], offset=offset, shape=shape))


@implements(np.diagonal)
def diagonal(x, offset=0, axis1=0, axis2=1):
    if ndim_of(x) < 2:
        raise ValueError(f"diagonal: needs an array of at least 2 dimensions, got shape "
                         f"{shape_of(x)}")
    return diagonal_p(moveaxis(x, (axis1, axis2), (-2, -1)), offset=int(offset))


@implements(np.trace)
def trace(x, offset=0, axis1=0, axis2=1):
    return sum_(diagonal(x, offset, axis1, axis2), axis=-1)


@implements(np.diag)
def diag(v, k=0):
    nd = ndim_of(v)
    if nd == 1:
        n = shape_of(v)[0] + abs(int(k))
        return diag_embed_p(v, offset=int(k), shape=(n, n))
    if nd == 2:
        return diagonal_p(v, offset=int(k))
    raise ValueError(f"diag: input must be 1-D or 2-D, got shape {shape_of(v)}")


def _tri_mask(x, k, upper):
    n, m = shape_of(x)[-2:]
    return np.triu(np.ones((n, m), bool), k) if upper else np.tril(np.ones((n, m), bool), k)


@implements(np.triu)
def triu(x, k=0):
    return where(_tri_mask(x, k, True), x, 0.0)


@implements(np.tril)
def tril(x, k=0):
    return where(_tri_mask(x, k, False), x, 0.0)

matmul_p.samples = [sample((1, 2), (2, 1)), sample((2, 3), (3, 4)), sample((2, 2, 3), (3, 2)),
                    sample((3, 3), (2, 3, 1)), sample((2, 3), (3,)), sample((2, 4, 3), (3,))]
einsum_p.samples = [sample((2, 3), (3, 4), subs=("ij", "jk"), out="ik"),
                    sample((3,), (3,), subs=("i", "i"), out=""),
                    sample((2, 3), (3,), subs=("ij", "j"), out="ij"),
                    # repeated subscripts within an operand: diagonals, traces
                    sample((3, 3), subs=("ii",), out="i"),
                    sample((3, 3, 2), subs=("iij",), out=""),
                    sample((2, 3), (3, 3), subs=("ij", "jj"), out="i")]
diagonal_p.samples = [sample((3, 3), offset=0), sample((3, 4), offset=1), sample((2, 3, 3), offset=-1)]
diag_embed_p.samples = [sample((3,), offset=0, shape=(3, 3)), sample((2,), offset=1, shape=(3, 3))]
