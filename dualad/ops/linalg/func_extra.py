"""More of scipy.linalg's matrix functions: fractional powers, trigonometric and
hyperbolic functions, the polar decomposition.

    fractional_matrix_power   X = A^p (principal branch, real p)
        Ẋ = L_p(A, Ȧ) + ṗ log(A) X          L_p = Fréchet derivative of A ↦ A^p
        Ā = L_p(Aᵀ, X̄),   p̄ = Σ X̄ ∘ (log(A) X)
    cosm, sinm   the blocks of exp([[0, A], [-A, 0]]) = [[cos A, sin A], [-sin A, cos A]]
    coshm, sinhm ½(e^A ± e^-A),   tanhm = coshm(A)⁻¹ sinhm(A)
    polar        A = W S Vᵀ (reduced SVD):  U = W Vᵀ,  P = V S Vᵀ (right) or W S Wᵀ (left)

L_p is the upper-right block of [[A, E], [0, A]]^p (Mathias 1996), and its
adjoint is L_p at Aᵀ, as for expm and logm in :mod:`.func`. The rules
apply ``fractional_matrix_power`` and ``logm`` to traced values, so they
differentiate again, in A and p. cosm and sinm need no complex arithmetic for a
real A (SciPy goes through expm(iA)): the 2n×2n real block exponential holds both,
because J = [[0, 1], [-1, 0]] squares to -I. Everything else is a composition of
expm, solve and svd, so their rules (and caveats) apply: polar needs distinct,
nonzero singular values for its derivative (the SVD's), although U and P
themselves are unique for any full-rank A.

Like logm and sqrtm, fractional_matrix_power of a real matrix with a complex
result (eigenvalues on the negative real axis, non-integer p) raises
NotImplementedError rather than differentiate a complex branch.
"""
from __future__ import annotations

import numpy as np

from ...core.tracer import ndim_of, primal_value, shape_of, unguarded_value
from ...core.primitive import Primitive, register, sample
from ...core.batch_axes import batch_ndim
from ..core.batch_ops import looping_when, stacked_rule
from ..core.indexing import index
from .basic import solve_p
from ._common import _A2, _SPD3, check_matrix, check_real, check_square, mm, mT, scipy_linalg
from .decomp import svd
from .func import _real_part, block_frechet, expm_p, logm_p
from ..core.reductions import sum as sum_
from ..core.shape import concatenate, expand_dims, reshape

__all__ = [
    "fractional_matrix_power_p", "fractional_matrix_power", "cosm", "sinm", "tanm", "coshm",
    "sinhm", "tanhm", "polar"
]

# --- fractional matrix power -------------------------------------------------------------
def _fmp_impl(a, p):
    a = np.asarray(a)
    p = float(p)
    if a.ndim == 2:
        return _real_part("fractional_matrix_power", a,
                          scipy_linalg().fractional_matrix_power(a, p))
    out = None
    for idx in np.ndindex(*a.shape[:-2]):
        x = _real_part("fractional_matrix_power", a[idx],
                       scipy_linalg().fractional_matrix_power(a[idx], p))
        if out is None:
            out = np.empty(a.shape, x.dtype)
        out[idx] = x
    return out if out is not None else np.empty(a.shape, np.result_type(a, 1.0))


fractional_matrix_power_p = register(Primitive("fractional_matrix_power", _fmp_impl,
                                                     sparsity="matrix"))


def _per_matrix(t, ans):
    """A batch of scalars ``t`` (batch + ()) made broadcastable against matrices ``ans``."""
    return reshape(t, shape_of(t) + (1,) * ndim_of(ans))


def _log_times(a, x):
    """log(A) X: the derivative of A^p in p."""
    return mm(logm_p(a), x)


fractional_matrix_power_p.defjvp(
    lambda t, x, a, p: block_frechet(lambda m: fractional_matrix_power_p(m, p), a, t),
    lambda t, x, a, p: _per_matrix(t, x) * _log_times(a, x))
# vmap: a batched A is one more stack axis; a batched exponent t loops over the examples
# (SciPy's Schur-Padé algorithm takes one scalar power per call)
fractional_matrix_power_p.defbatch(looping_when(
    fractional_matrix_power_p, (1,), stacked_rule(fractional_matrix_power_p, (2, 0))))
fractional_matrix_power_p.defvjp(
    lambda ct, x, a, p: block_frechet(lambda m: fractional_matrix_power_p(m, p), mT(a), ct),
    lambda ct, x, a, p: sum_(ct * _log_times(a, x),
                             axis=tuple(range(batch_ndim(ct, x), ndim_of(ct)))))


def fractional_matrix_power(A, t):
    """``scipy.linalg.fractional_matrix_power``: A^t for a real exponent t, differentiable
    in A and in t (the Fréchet derivative by the block-triangular trick; ∂t = log(A) A^t).
    Needs no eigenvalue of A on the closed negative real axis (for a real A)."""
    check_square("fractional_matrix_power", A, "A")
    tp = primal_value(t)
    if np.ndim(tp) != 0 or np.iscomplexobj(tp):
        raise ValueError(f"fractional_matrix_power: exponent t must be a real scalar, got "
                         f"{'complex ' if np.iscomplexobj(tp) else ''}shape {np.shape(tp)}")
    return fractional_matrix_power_p(A, t)


# --- trigonometric and hyperbolic matrix functions ---------------------------------------
def _cos_sin(a):
    """(cos A, sin A) from one real 2n×2n exponential exp([[0, A], [-A, 0]])."""
    n = shape_of(a)[-1]
    zeros = np.zeros(shape_of(a), np.result_type(unguarded_value(a), 1.0))
    e = expm_p(concatenate([concatenate([zeros, a], axis=-1),
                            concatenate([-a, zeros], axis=-1)], axis=-2))
    return (index(e, (Ellipsis, slice(0, n), slice(0, n))),
            index(e, (Ellipsis, slice(0, n), slice(n, 2 * n))))


def cosm(A):
    """``scipy.linalg.cosm``: cos A (the top-left block of exp([[0, A], [-A, 0]]))."""
    check_square("cosm", A, "A")
    return _cos_sin(A)[0]


def sinm(A):
    """``scipy.linalg.sinm``: sin A (the top-right block of exp([[0, A], [-A, 0]]))."""
    check_square("sinm", A, "A")
    return _cos_sin(A)[1]


def tanm(A):
    """``scipy.linalg.tanm``: cos(A)⁻¹ sin(A)."""
    check_square("tanm", A, "A")
    c, s = _cos_sin(A)
    return solve_p(c, s)


def coshm(A):
    """``scipy.linalg.coshm``: ½(e^A + e^-A)."""
    check_square("coshm", A, "A")
    return 0.5 * (expm_p(A) + expm_p(-A))


def sinhm(A):
    """``scipy.linalg.sinhm``: ½(e^A - e^-A)."""
    check_square("sinhm", A, "A")
    return 0.5 * (expm_p(A) - expm_p(-A))


def tanhm(A):
    """``scipy.linalg.tanhm``: cosh(A)⁻¹ sinh(A) (they commute)."""
    check_square("tanhm", A, "A")
    ep, em = expm_p(A), expm_p(-A)
    return solve_p(ep + em, ep - em)


# --- polar decomposition ----------------------------------------------------------------
def polar(a, side="right"):
    """``scipy.linalg.polar``: (U, P) with A = U P (``side='right'``, P n×n) or A = P U
    (``'left'``, P m×m); U has orthonormal columns (rows, if m < n), P is positive
    semidefinite. Built from the reduced SVD, so its derivative needs distinct,
    nonzero singular values; real matrices only."""
    if side not in ("right", "left"):
        raise ValueError(f"polar: side must be 'right' or 'left', got {side!r}")
    check_matrix("polar", a, "a")
    check_real("polar", a, "a")
    w, s, vh = svd(a, full_matrices=False)
    u = mm(w, vh)
    s_row = expand_dims(s, -2)
    if side == "right":
        return u, mm(mT(vh) * s_row, vh)
    return u, mm(w * s_row, mT(w))


# Two samples: SciPy's Schur-Padé power is slow (milliseconds), and order 2 calls it
# on 2n and 4n blocks a hundred times. The stack holds a matrix with complex eigenvalues.
fractional_matrix_power_p.samples = [
    sample(_SPD3, np.array(0.5)), sample(np.stack([_SPD3[:2, :2], _A2]), np.array(-0.7))]
