"""Pseudo-inverse, least squares and norms.

    pinv  P = A⁺ (locally constant rank; Golub & Pereyra 1973):
          Ṗ = -P Ȧ P + P Pᵀ Ȧᵀ (I - A P) + (I - P A) Ȧᵀ Pᵀ P
          Ā = -Pᵀ P̄ Pᵀ + (I - A P) P̄ᵀ P Pᵀ + Pᵀ P P̄ᵀ (I - P A)
          hermitian=True: NumPy's eigh-based path reads the lower triangle only, so
          P = A_eff⁺ with A_eff = tril(A) + tril(A, -1)ᵀ: the same rules at A_eff, with
          Ȧ_eff = sym_lower(Ȧ) and Ā = sym_lower_T(Ā_eff) (as eigh and cholesky do)
    lstsq x = A⁺ b (differentiable in A and b); residuals Σ(A x - b)²; s = svdvals(A)
    norm  composed of registry operations, every ord/axis/keepdims of np.linalg.norm

Complex input: every norm is real-valued, |x|² = Re(x·conj x), and the matrix norms
2, -2 and 'nuc' use the complex singular values; pinv, lstsq and cond stay real-only.

Conventions: ``|·|'(0) = 0``; every 2-norm, p-norm and Frobenius norm has
derivative 0 at x = 0 (a subgradient; the double-where trick keeps inf·0
out of both modes and of second derivatives); ``ord=0`` counts nonzeros and
has zero derivative; ±inf and ±1 norms follow max/min (ties split evenly);
matrix norms 2, -2 and 'nuc' go through singular values (simple ones for 2/-2).
"""
from __future__ import annotations

import numpy as np

from ...core.tracer import Box, ndim_of, primal_value, shape_of
from ...core.values import per_example   # under vmap: a rank, a count per example
from ...core.primitive import Primitive, implements, register, sample
from .._util import normalize_axes
from ..core.batch_ops import stacked_rule
from ..core.elementwise import equal, power, sqrt, where
from ..core.complex_numbers import absolute
from .basic import inv
from ..core.complex_numbers import conj, real
from ._common import (_A3, check_matrix, check_real, check_square, is_complex_value, mm, mT,
                      sym_lower, sym_lower_T)
from .decomp import _HERM_POINT, _SYM3, _TALL, svdvals_p
from ..core.reductions import max as max_, min as min_, sum as sum_
from ..core.shape import moveaxis, reshape

__all__ = ["pinv_p", "pinv", "lstsq", "matrix_rank", "cond", "norm", "vector_norm", "matrix_norm"]

# --- pseudo-inverse and least squares -----------------------------------------------
def _pinv_jvp(t, p, a, rcond, hermitian=False):
    if hermitian:
        t, a = sym_lower(t), sym_lower(a)
    tt = mT(t)
    ppt = mm(p, mT(p))
    ptp = mm(mT(p), p)
    term2 = mm(ppt, tt) - mm(mm(ppt, tt), mm(a, p))
    term3 = mm(tt, ptp) - mm(mm(p, a), mm(tt, ptp))
    return -mm(mm(p, t), p) + term2 + term3


def _pinv_vjp(ct, p, a, rcond, hermitian=False):
    if hermitian:
        return sym_lower_T(_pinv_vjp(ct, p, sym_lower(a), rcond))
    gt = mT(ct)
    ppt = mm(p, mT(p))
    ptp = mm(mT(p), p)
    term1 = -mm(mm(mT(p), ct), mT(p))
    term2 = mm(gt, ppt) - mm(a, mm(p, mm(gt, ppt)))
    term3 = mm(ptp, gt) - mm(mm(ptp, gt), mm(p, a))
    return term1 + term2 + term3


pinv_p = register(Primitive("pinv", lambda a, rcond, hermitian=False: np.linalg.pinv(
    a, rcond=rcond, hermitian=hermitian), sparsity="matrix"))
pinv_p.defjvp(_pinv_jvp)
pinv_p.defvjp(_pinv_vjp)
pinv_p.defbatch(stacked_rule(pinv_p))   # vmap: the batch axis is one more stack axis


@implements(np.linalg.pinv)
def pinv(a, rcond=None, hermitian=False, **kwargs):
    """``np.linalg.pinv`` (Golub & Pereyra 1973 derivative, valid where the rank is
    locally constant). ``hermitian=True`` reads the lower triangle only, as NumPy does."""
    check_matrix("pinv", a, real=True)
    if "rtol" in kwargs and kwargs["rtol"] is not None:
        rcond = kwargs["rtol"]
    if rcond is None:
        rcond = max(shape_of(a)[-2:]) * np.finfo(float).eps
    if hermitian:
        check_square("pinv", a, real=True)
        return pinv_p(a, rcond=float(rcond), hermitian=True)
    return pinv_p(a, rcond=float(rcond))


@implements(np.linalg.lstsq)
def lstsq(a, b, rcond=None):
    """``np.linalg.lstsq``: (x, residuals, rank, s) with x = A⁺ b differentiable in A and
    b, residuals = Σ(A x - b)² when rank = n < m (else empty), s = svdvals(A)."""
    if ndim_of(a) != 2:
        raise ValueError(f"lstsq: argument a must be 2-D, got shape {shape_of(a)}")
    check_real("lstsq", a)
    check_real("lstsq", b, "b")
    m, n = shape_of(a)
    if ndim_of(b) not in (1, 2) or shape_of(b)[0] != m:
        raise ValueError(f"lstsq: argument b of shape {shape_of(b)} does not match argument a "
                         f"of shape {shape_of(a)}: expected ({m},) or ({m}, k)")
    if rcond is None:
        rcond = np.finfo(float).eps * max(m, n)
    rank = per_example(lambda a_, b_: np.linalg.lstsq(a_, b_, rcond=rcond)[2], (a, b), {})
    rank_value = _common_rank(rank)
    x = mm(pinv_p(a, rcond=float(rcond)), b if ndim_of(b) == 2 else reshape(b, (m, 1)))
    x = x if ndim_of(b) == 2 else reshape(x, (n,))
    if rank_value == n and m > n:
        r = mm(a, x if ndim_of(b) == 2 else reshape(x, (n, 1))) - \
            (b if ndim_of(b) == 2 else reshape(b, (m, 1)))
        resid = sum_(r * r, axis=0)
    else:
        resid = np.empty((0,))
    return x, resid, rank, svdvals_p(a)


def _common_rank(rank):
    """lstsq's rank as a Python int for its branch; under vmap (one rank per example) the
    examples must agree, since the residuals' shape depends on it."""
    if not isinstance(rank, Box):
        return rank
    ranks = np.unique(primal_value(rank))
    if ranks.size != 1:
        raise ValueError(f"lstsq under vmap: the examples have different ranks "
                         f"{ranks.tolist()}, so their residuals have different shapes; "
                         f"use np.linalg.pinv(a) @ b for the solution")
    return int(ranks[0])


@implements(np.linalg.matrix_rank)
def matrix_rank(a, *args, **kwargs):
    """An integer: zero derivative, computed on the primal (per example under vmap)."""
    return per_example(lambda v: np.linalg.matrix_rank(v, *args, **kwargs), (a,), {})


@implements(np.linalg.cond)
def cond(x, p=None):
    """``np.linalg.cond``: s_max/s_min for p in (None, 2), s_min/s_max for -2, else
    norm(x, p) · norm(inv(x), p) over the last two axes."""
    check_matrix("cond", x, "x", real=True)
    if p in (None, 2, -2):
        s = svdvals_p(x)
        big, small = max_(s, axis=-1), min_(s, axis=-1)
        return big / small if p != -2 else small / big
    return norm(x, p, axis=(-2, -1)) * norm(inv(x), p, axis=(-2, -1))


# --- norms ---------------------------------------------------------------------------
def _safe_root(s, p=2.0):
    """s^(1/p) with derivative 0 at s = 0 (double-where: no inf·0 in either mode)."""
    zero = equal(s, 0.0)
    safe = where(zero, 1.0, s)
    root = sqrt(safe) if p == 2.0 else power(safe, 1.0 / p)
    return where(zero, 0.0, root)


def _abs2(x):
    """|x|² elementwise: x·x for real x, Re(x·conj x) for complex x (smooth at 0)."""
    if is_complex_value(x):
        return real(x * conj(x))
    return x * x


def _vector_norm(x, ord, axes):
    if ord is None or ord == 2:
        return _safe_root(sum_(_abs2(x), axis=axes))
    if ord == np.inf:
        return max_(absolute(x), axis=axes)
    if ord == -np.inf:
        return min_(absolute(x), axis=axes)
    if ord == 0:  # the number of nonzeros: piecewise constant, zero derivative
        dtype = np.abs(primal_value(x)).dtype
        return per_example(lambda v: np.sum(v != 0, axis=axes).astype(dtype), (x,), {})
    if ord == 1:
        return sum_(absolute(x), axis=axes)
    if isinstance(ord, str):
        raise ValueError(f"norm: invalid norm order {ord!r} for vectors")
    p = float(ord)
    return _safe_root(sum_(power(absolute(x), p), axis=axes), p)


def _matrix_norm(x, ord, axes):
    """Matrix norm over ``axes`` (row axis, column axis)."""
    r, c = axes
    if ord in (None, "fro", "f"):
        return _safe_root(sum_(_abs2(x), axis=(r, c)))
    if ord in (2, -2, "nuc"):
        s = svdvals_p(moveaxis(x, (r, c), (-2, -1)))
        return max_(s, axis=-1) if ord == 2 else (min_(s, axis=-1) if ord == -2
                                                  else sum_(s, axis=-1))
    if ord in (1, -1):   # max/min over columns of the column sums
        col = sum_(absolute(x), axis=r)
        return (max_ if ord == 1 else min_)(col, axis=c - 1 if c > r else c)
    if ord in (np.inf, -np.inf):
        row = sum_(absolute(x), axis=c)
        return (max_ if ord == np.inf else min_)(row, axis=r - 1 if r > c else r)
    raise ValueError(f"norm: invalid norm order {ord!r} for matrices")


@implements(np.linalg.norm)
def norm(x, ord=None, axis=None, keepdims=False):
    """``np.linalg.norm``: every vector and matrix order, ``axis`` and ``keepdims``, of
    real and complex arrays (real-valued, so ``grad`` of a complex input is
    ∂‖x‖/∂Re x − i ∂‖x‖/∂Im x, docs/complex.md)."""
    nd = ndim_of(x)
    if axis is None:
        if ord is None:
            axes = tuple(range(nd))
            res = _safe_root(sum_(_abs2(x), axis=axes))
        elif nd == 1:
            axes = (0,)
            res = _vector_norm(x, ord, axes)
        elif nd == 2:
            axes = (0, 1)
            res = _matrix_norm(x, ord, axes)
        else:
            raise ValueError(f"norm: improper number of dimensions to norm: shape "
                             f"{shape_of(x)} with ord={ord!r} needs axis")
    else:
        axes_in = axis if isinstance(axis, (tuple, list)) else (axis,)
        axes = tuple(int(a) % nd for a in axes_in)
        if len(axes) == 1:
            res = _vector_norm(x, ord, axes)
        elif len(axes) == 2:
            if axes[0] == axes[1]:
                raise ValueError(f"norm: duplicate axes given: {axis}")
            res = _matrix_norm(x, ord, axes)
        else:
            raise ValueError(f"norm: improper number of dimensions to norm: axis={axis}")
    if keepdims:
        res = reshape(res, tuple(1 if i in axes else s for i, s in enumerate(shape_of(x))))
    return res


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """NumPy 2's ``np.linalg.vector_norm`` (axis=None: over all elements)."""
    nd = ndim_of(x)
    axes = normalize_axes(axis, nd)
    res = _vector_norm(x, ord, axes)
    if keepdims:
        res = reshape(res, tuple(1 if i in axes else s for i, s in enumerate(shape_of(x))))
    return res


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """NumPy 2's ``np.linalg.matrix_norm`` over the last two axes."""
    check_matrix("matrix_norm", x, "x")
    return norm(x, ord=ord, axis=(-2, -1), keepdims=keepdims)


pinv_p.samples = [sample(_TALL, rcond=1e-15), sample(_TALL.T, rcond=1e-15),
                  sample(_A3, rcond=1e-15), sample((3, 2), rcond=1e-15),
                  sample(_SYM3, rcond=1e-15, hermitian=True),
                  sample(_HERM_POINT, rcond=1e-15, hermitian=True)]
