"""Determinants (det, slogdet) and their derivative, the cofactor matrix
C(A) = adj(A)ᵀ = ∂det(A)/∂A, defined at singular matrices too.

    det        d = |A|          ḋ = tr(adj(A) Ȧ)          Ā = d̄ adj(A)ᵀ  (= d̄ d A⁻ᵀ)
    logabsdet  l = log|det A|   l̇ = tr(A⁻¹ Ȧ)             Ā = l̄ A⁻ᵀ

At a singular A, log|det A| is -inf and has no derivative: LinAlgError naming slogdet.

det's derivative is ḋ = tr(adj(A) Ȧ) = Σ C ⊙ Ȧ and Ā = d̄ C. Where A is invertible,
C = det(A)·A⁻ᵀ (the fast path: one LU). At an exactly singular A that formula fails
(A⁻¹ does not exist) although C does (adj is a polynomial in A's entries). There C
comes from the SVD A = U S Vᴴ: adj is multiplicative, adj(S) = diag(∏_{j≠i} s_j) and
adj(Q) = det(Q)·Qᴴ for a unitary Q, so

    adj(A) = adj(Vᴴ) adj(S) adj(U) = det(U)·det(Vᴴ) · V diag(∏_{j≠i} s_j) Uᴴ.

The products involve no division, so rank n − 1 (one s_i = 0: only p_i survives) and
rank ≤ n − 2 (every product has a zero factor: adj = 0) need no special case.

The cofactor's own derivative (det's second derivative), for invertible A with
X = A⁻ᵀ and d = det A:

    Ċ = tr(A⁻¹Ȧ)·C − d·X Ȧᵀ X           Ā = ⟨C̄, C⟩·X − d·X C̄ᵀ X

At a singular A this needs A⁻¹ and is not provided: LinAlgError, naming det.
"""
from __future__ import annotations

import numpy as np

import collections

from ...core.values import all_true, any_true, is_staged, staged_value
from ...core.tracer import primal_value, shape_of, unguarded_value
from ...core.primitive import Primitive, implements, register, sample
from ...core.batch_axes import batch_ndim
from ..core.batch_ops import stacked_rule
from ..core.linear import unbroadcast
from ..core.elementwise import multiply
from ..core.reductions import sum as sum_
from ._common import _A2, _A3, _STACK, check_square, expand2, mm, mT, sym_map
from .basic import inv_p

__all__ = ["cofactor_p", "is_singular", "det_p", "logabsdet_p", "SlogdetResult", "det", "slogdet"]


def _cofactor_svd(a):
    """adj(A)ᵀ of a stack of matrices by the SVD (any rank)."""
    u, s, vh = np.linalg.svd(a)
    n = s.shape[-1]
    # p_i = ∏_{j≠i} s_j: the product of the other singular values, no division
    p = np.stack([np.prod(np.delete(s, i, axis=-1), axis=-1) for i in range(n)], axis=-1) \
        if n > 1 else np.ones_like(s)
    phase = np.linalg.det(u) * np.linalg.det(vh)
    adj = (np.conj(np.swapaxes(vh, -1, -2)) * p[..., None, :]) @ np.conj(np.swapaxes(u, -1, -2))
    return np.swapaxes(phase[..., None, None] * adj, -1, -2).astype(a.dtype, copy=False)


def _cofactor_impl(a):
    a = np.asarray(a)
    d = np.linalg.det(a)
    singular = d == 0
    if not np.any(singular):
        try:
            return d[..., None, None] * np.swapaxes(np.linalg.inv(a), -1, -2)
        except np.linalg.LinAlgError:      # a zero pivot that det did not see (underflow)
            return _cofactor_svd(a)
    if a.ndim == 2:
        return _cofactor_svd(a)
    out = np.empty_like(a, dtype=np.result_type(a, d))
    out[singular] = _cofactor_svd(a[singular])
    regular = ~singular
    if np.any(regular):
        out[regular] = d[regular][..., None, None] * np.swapaxes(
            np.linalg.inv(a[regular]), -1, -2)
    return out


cofactor_p = register(Primitive(
    "cofactor", _cofactor_impl, sparsity="matrix",
    sympy=lambda sp, a: _sym_cofactor(sp, a)))


def _sym_cofactor(sp, a):
    return sym_map(sp, lambda m: m.adjugate().T, a)


def is_singular(a) -> bool:
    """Whether (a stack) ``a`` holds an exactly singular matrix (det = 0 in LAPACK's LU);
    False for symbolic values (the SymPy oracle), which have no such test here."""
    v = unguarded_value(a)
    if getattr(v, "dtype", None) is None or v.dtype.kind not in "fc":
        return False
    if is_staged(a):   # dualad.jit: guard the answer, not the matrix
        return any_true(det_p(staged_value(a)) == 0)
    return bool(np.any(np.linalg.det(primal_value(a)) == 0))


def _inv_T(a, fname="det"):
    """A⁻ᵀ for the cofactor's derivative; a clear error at a singular A."""
    if is_singular(a):
        raise np.linalg.LinAlgError(
            f"{fname}: the second derivative at a singular matrix (argument a, shape "
            f"{shape_of(a)}) is not implemented; the first derivative (the adjugate) is. "
            f"Differentiate det twice at a nonsingular point, or perturb a")
    return mT(inv_p(a))


def _cofactor_jvp(t, ans, a):
    x = _inv_T(a)
    return expand2(sum_(x * t, axis=(-2, -1))) * ans - expand2(det_p(a)) * mm(mm(x, mT(t)), x)


def _cofactor_vjp(ct, ans, a):
    x = _inv_T(a)
    g = expand2(sum_(ct * ans, axis=(-2, -1))) * x - expand2(det_p(a)) * mm(mm(x, mT(ct)), x)
    return unbroadcast(g, shape_of(a), batch_ndim(ct, ans))


cofactor_p.defjvp(_cofactor_jvp)
cofactor_p.defvjp(_cofactor_vjp)
cofactor_p.holomorphic = True

cofactor_p.defbatch(stacked_rule(cofactor_p))
cofactor_p.samples = [sample(_A2), sample(_A3), sample(np.stack([_A3, _A3.T]))]


# --- determinants ------------------------------------------------------------------------
det_p = register(Primitive("det", np.linalg.det, sparsity="matrix",
                           sympy=lambda sp, a: sym_map(sp, lambda m: m.det(), a)))
# ∂det/∂A = adj(A)ᵀ, the cofactor matrix: d·A⁻ᵀ where A is invertible, and defined at
# singular A too (the cofactor above).
det_p.defjvp(lambda t, ans, a: sum_(multiply(cofactor_p(a), t), axis=(-2, -1)))
det_p.defvjp(lambda ct, ans, a: expand2(ct) * cofactor_p(a))
det_p.defbatch(stacked_rule(det_p))   # vmap: the batch axis is one more stack axis


def _logdet_inv_T(a):
    """A⁻ᵀ, log|det A|'s derivative, which does not exist at a singular A (log|det| is
    −inf there): a LinAlgError naming slogdet, not NumPy's bare 'Singular matrix'."""
    if is_singular(a):
        raise np.linalg.LinAlgError(
            f"slogdet: argument a (shape {shape_of(a)}) is a singular matrix (or a stack "
            f"holding one): log|det a| is -inf and has no derivative there. Differentiate "
            f"np.linalg.det(a) instead (its derivative, the adjugate, exists at singular "
            f"matrices), or regularize, e.g. slogdet(a + eps * np.eye(n))")
    return mT(inv_p(a))


logabsdet_p = register(Primitive(
    "logabsdet", lambda a: np.linalg.slogdet(a)[1], sparsity="matrix",
    sympy=lambda sp, a: sym_map(sp, lambda m: sp.log(m.det() ** 2) / 2, a)))  # = log|det|, smooth
logabsdet_p.defjvp(lambda t, ans, a: sum_(multiply(_logdet_inv_T(a), t), axis=(-2, -1)))
logabsdet_p.defvjp(lambda ct, ans, a: expand2(ct) * _logdet_inv_T(a))
logabsdet_p.defbatch(stacked_rule(logabsdet_p))

SlogdetResult = collections.namedtuple("SlogdetResult", ["sign", "logabsdet"])


@implements(np.linalg.det)
def det(a):
    """``np.linalg.det`` on a matrix or a stack: ḋ = tr(adj(A)Ȧ), Ā = d̄ adj(A)ᵀ
    (= d̄ d A⁻ᵀ where A is invertible; the adjugate also at a singular A)."""
    check_square("det", a)
    return det_p(a)


@implements(np.linalg.slogdet)
def slogdet(a):
    """``np.linalg.slogdet``: (sign, log|det A|); the sign is piecewise constant
    (zero derivative), log|det A| has derivative tr(A⁻¹Ȧ)."""
    check_square("slogdet", a, real=True)
    if is_staged(a):   # dualad.jit: the sign recorded as sign(det), where det is finite, nonzero
        d = det_p(staged_value(a))
        if all_true(np.logical_and(np.isfinite(d), d != 0)):
            return SlogdetResult(np.sign(d), logabsdet_p(a))
    return SlogdetResult(np.linalg.slogdet(primal_value(a))[0], logabsdet_p(a))

det_p.samples = [sample(_A2), sample(_A3), sample(_STACK)]
logabsdet_p.samples = [sample(_A2), sample(-_A3), sample(_STACK)]
