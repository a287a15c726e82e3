"""What the linear-algebra modules share: the matrix transpose and product, batch-axis
counting, argument checks, the SymPy mapping over stacked matrices, the symmetric-argument
maps of cholesky/eigh, and the concrete matrices the rule checker samples.

This module declares no primitive and imports none of its siblings, so every module of
the family can import it (the family's modules form no import cycle).
"""
from __future__ import annotations

import numpy as np

from ...core.tracer import ndim_of, shape_of, unguarded_value
from ...core.batch_axes import batch_ndim
from ..core.linear import lift
from ..core.products import matmul_p, tril, triu
from ..core.complex_numbers import conj
from ..core.elementwise import divide, equal, where
from ..core.shape import expand_dims, reshape, swapaxes

__all__ = [
    "mm", "mT", "expand2", "check_real", "check_square", "check_matrix", "sym_map",
    "sym_lower", "sym_lower_T", "is_complex_value", "gap_inverse", "row", "col",
    "tangent_rhs", "scipy_linalg"
]

mm = matmul_p


def scipy_linalg():
    """``scipy.linalg``, imported when a rule first calls it: numpy.linalg's rules do not
    need it, and importing it costs more than the rest of the family (docs/architecture.md,
    "What loads lazily")."""
    import scipy.linalg
    import scipy.linalg.lapack  # noqa: F401  (basic.py's trtrs)
    return scipy.linalg


def mT(x):
    """The matrix transpose of (a stack of) matrices: swap the last two axes."""
    return swapaxes(x, -1, -2)


def expand2(x):
    """``x[..., None, None]``: a per-matrix scalar made broadcastable to matrices."""
    return reshape(x, shape_of(x) + (1, 1))


def check_real(fname, a, argname="a"):
    """Complex input to a function whose rules assume a real argument (not holomorphic:
    transposes would need conjugates) is refused rather than differentiated wrongly."""
    if np.iscomplexobj(unguarded_value(a)):
        raise NotImplementedError(
            f"{fname}: argument {argname} (shape {shape_of(a)}) is complex; {fname} is not "
            f"holomorphic and its derivative is implemented for real matrices only")


def check_square(fname, a, argname="a", real=False):
    s = shape_of(a)
    if len(s) < 2 or s[-1] != s[-2]:
        raise ValueError(f"{fname}: argument {argname} must be a square matrix or a stack of "
                         f"square matrices (shape (..., n, n)), got shape {s}")
    if real:
        check_real(fname, a, argname)


def check_matrix(fname, a, argname="a", real=False):
    if ndim_of(a) < 2:
        raise ValueError(f"{fname}: argument {argname} must be a matrix or a stack of matrices "
                         f"(at least 2 dimensions), got shape {shape_of(a)}")
    if real:
        check_real(fname, a, argname)


# --- SymPy translations: a function of sympy.Matrix mapped over the stacked axes ------
def sym_map(sp, fn, *arrays):
    """Apply ``fn`` to the sympy Matrices of each stacked position of ``arrays``
    (object arrays whose last two axes are matrices); results are scalars or Matrices."""
    arrays = [np.asarray(a, dtype=object) for a in arrays]
    lead = np.broadcast_shapes(*[a.shape[:-2] for a in arrays])
    arrays = [np.broadcast_to(a, lead + a.shape[-2:]) for a in arrays]
    outs = []
    for idx in np.ndindex(*lead):
        r = fn(*[sp.Matrix(a[idx].tolist()) for a in arrays])
        outs.append(np.array(r.tolist(), dtype=object) if hasattr(r, "tolist") else r)
    if not outs:
        return np.empty(lead, dtype=object)
    out = np.empty(len(outs), dtype=object)
    if isinstance(outs[0], np.ndarray):
        return np.stack(outs).reshape(lead + outs[0].shape)
    out[:] = outs
    return out.reshape(lead)


def _sym_solve(m, r):
    """A⁻¹ R by cofactors: compact rational expressions that differentiate fast."""
    return m.adjugate() * r / m.det()



def sym_lower(t, lower=True, herm=False):
    """The tangent of A_eff = tril(A) + tril(A, -1)ᵀ (or from the upper triangle).

    ``herm`` (a complex Hermitian solver, as LAPACK's zheevd): A_eff = tril(A, -1) +
    Re diag(A) + tril(A, -1)ᴴ, which is ½(M + Mᴴ) with M = tril(A) + tril(A, -1): the
    imaginary parts of the diagonal are not read. An R-linear (not C-linear) map."""
    if herm:
        m = tril(t) + tril(t, -1) if lower else triu(t) + triu(t, 1)
        return 0.5 * (m + conj(mT(m)))
    if lower:
        return tril(t) + mT(tril(t, -1))
    return triu(t) + mT(triu(t, 1))


def sym_lower_T(g, lower=True, herm=False):
    """The transpose of :func:`sym_lower` (pairing Re Σ ū·v): tril(G) + tril(Gᵀ, -1);
    with ``herm``, tril(H) + tril(H, -1) for H = ½(G + Gᴴ) (the diagonal gets Re G_ii)."""
    if herm:
        h = 0.5 * (g + conj(mT(g)))
        return tril(h) + tril(h, -1) if lower else triu(h) + triu(h, 1)
    if lower:
        return tril(g) + tril(mT(g), -1)
    return triu(g) + triu(mT(g), 1)


def is_complex_value(x):
    """Whether the primal value of ``x`` is complex (decides which rules apply)."""
    return np.iscomplexobj(unguarded_value(x))


def gap_inverse(lam):
    """F_ij = 1/(λ_j - λ_i) off the diagonal, 0 on it and where λ_i == λ_j exactly."""
    d = expand_dims(lam, -2) - expand_dims(lam, -1)
    tie = equal(d, 0.0)
    return where(tie, 0.0, divide(1.0, where(tie, 1.0, d)))


def row(v):
    """v[..., None, :]: a vector scaling the columns of a matrix."""
    return expand_dims(v, -2)


def col(v):
    return expand_dims(v, -1)



# --- samples for the rule checker (well-conditioned concrete matrices) ----------------
_A2 = np.array([[2.0, 0.5], [-0.3, 1.5]])
_A3 = np.array([[3.0, 0.4, -0.2], [0.1, 2.0, 0.5], [-0.3, 0.2, 1.5]])
_SPD3 = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
_STACK = np.stack([_A2, _A2.T + 0.5 * np.eye(2)])


def tangent_rhs(x, *terms):
    """The right-hand side whose solve gives the tangent of ``x``, the solution of a
    linear equation L(p; x) = q: Σ_k apply_k(ṗ_k) over the terms ``(ṗ_k, p_k, apply_k)``
    whose tangent is not None (zero). Each ṗ_k (a tangent of the argument p_k, batch axes
    in front) is lifted to broadcast against ``x`` first; ``apply_k`` None is the identity
    (the tangent of q). For x = A⁻¹b: ẋ solves A ẋ = ḃ − Ȧ x, the terms
    ``(ḃ, b, None), (Ȧ, A, lambda t: -mm(t, x))``."""
    rhs = None
    for t, p, apply in terms:
        if t is not None:
            t = lift(t, batch_ndim(t, p), ndim_of(x))
            d = t if apply is None else apply(t)
            rhs = d if rhs is None else rhs + d
    return rhs
