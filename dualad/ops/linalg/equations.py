"""Lyapunov and Stein equations: the control-theory solves of scipy.linalg.

    continuous Lyapunov   A X + X Aᴴ = Q      the Sylvester equation syl(A, Aᴴ, Q):
                          Ẋ = syl(A, Aᴴ, Q̇ - Ȧ X - X Ȧᴴ)     (solve_sylvester's rules)
    Stein                 X = A X Bᵀ + Q      one primitive, ``solve_stein``:
                          Ẋ = stein(A, B, Q̇ + Ȧ X Bᵀ + A X Ḃᵀ)
                          Q̄ = stein(Aᵀ, Bᵀ, X̄),   Ā = Q̄ B Xᵀ,   B̄ = Q̄ᵀ A X
    discrete Lyapunov     A X Aᴴ - X + Q = 0  is stein(A, conj(A), Q)

Both follow from implicit differentiation of the equation; the adjoint of the
Stein operator X ↦ X - A X Bᵀ is Y ↦ Y - Aᵀ Y B, hence Q̄. The Stein
solution is a rational function of the entries of A, B and Q, so the
primitive is holomorphic in all three (no conjugates, the codebase's complex
convention); the conjugate in the discrete Lyapunov equation is the ``conj``
primitive outside it. Every rule calls ``solve_stein`` or ``solve_sylvester``
on traced values, so it differentiates again. A unique solution needs
λᵢ(A)·μⱼ(B) ≠ 1 (discrete: A stable, spectral radius < 1, is the usual case)
and, for the continuous equation, λᵢ(A) + conj λⱼ(A) ≠ 0.

Values: one matrix A against any number of right-hand sides (the batched
tangents and cotangents of the rules) is ONE LU of I - A⊗B for n ≤ 10
(SciPy's "direct" method); larger n goes to SciPy's bilinear method per
right-hand side.
"""
from __future__ import annotations

import numpy as np

from ...core.tracer import shape_of, unguarded_value
from ...core.primitive import Primitive, register, sample
from ...core.batch_axes import batch_ndim
from ..core.batch_ops import stacked_rule
from ..core.linear import unbroadcast
from ..core.complex_numbers import conj
from ._common import scipy_linalg
from ._common import (_A2, _A3, _sym_solve, check_matrix, check_square, mm, mT, sym_map,
                      tangent_rhs)
from .func import solve_sylvester_p

__all__ = ["solve_stein_p", "solve_continuous_lyapunov", "solve_discrete_lyapunov", "solve_stein"]

_DIRECT_MAX = 10


def _stein_one(a, b, q):
    """One X = A X Bᵀ + Q; SciPy's bilinear solver where B is A or conj(A)."""
    n = a.shape[-1]
    if n > _DIRECT_MAX and (np.array_equal(b, a.conj())
                            or (not np.iscomplexobj(a) and np.array_equal(b, a))):
        return scipy_linalg().solve_discrete_lyapunov(a, q, method="bilinear")
    lhs = np.eye(n * n) - np.kron(a, b)          # row-major vec(A X Bᵀ) = (A ⊗ B) vec X
    return np.linalg.solve(lhs, q.reshape(n * n)).reshape(n, n)


def _stein_impl(a, b, q):
    a, b, q = np.asarray(a), np.asarray(b), np.asarray(q)
    n = a.shape[-1]
    dtype = np.result_type(a, b, q, 1.0)
    if a.ndim == 2 and b.ndim == 2 and n <= _DIRECT_MAX:   # one operator, every rhs at once
        lhs = np.eye(n * n) - np.kron(a, b)
        rhs = q.reshape(-1, n * n).T
        return np.linalg.solve(lhs, rhs).T.reshape(q.shape).astype(dtype, copy=False)
    lead = np.broadcast_shapes(a.shape[:-2], b.shape[:-2], q.shape[:-2])
    a, b, q = (np.broadcast_to(x, lead + x.shape[-2:]) for x in (a, b, q))
    out = np.empty(lead + (n, n), dtype)
    for idx in np.ndindex(*lead):
        out[idx] = _stein_one(a[idx], b[idx], q[idx])
    return out


def _stein_sympy(sp, a, b, q):
    def one(A, B, Q):
        n = Q.shape[0]
        K = sp.eye(n * n) - sp.kronecker_product(A, B)
        return _sym_solve(K, Q.reshape(n * n, 1)).reshape(n, n)
    return sym_map(sp, one, a, b, q)


solve_stein_p = register(Primitive("solve_stein", _stein_impl, sympy=_stein_sympy,
                                   sparsity="matrix"))


def _stein_jvp_all(tangents, x, a, b, q):
    ta, tb, tq = tangents
    rhs = tangent_rhs(x, (tq, q, None), (ta, a, lambda t: mm(mm(t, x), mT(b))),
                      (tb, b, lambda t: mm(mm(a, x), mT(t))))
    return solve_stein_p(a, b, rhs)


def _stein_vjp_all(ct, x, a, b, q):
    nb = batch_ndim(ct, x)
    gq = solve_stein_p(mT(a), mT(b), ct)
    return [unbroadcast(mm(mm(gq, b), mT(x)), shape_of(a), nb),
            unbroadcast(mm(mm(mT(gq), a), x), shape_of(b), nb),
            unbroadcast(gq, shape_of(q), nb)]


solve_stein_p.def_all(jvp=_stein_jvp_all, vjp=_stein_vjp_all)
solve_stein_p.defbatch(stacked_rule(solve_stein_p, (2, 2, 2)))   # vmap: one more stack axis
solve_stein_p.holomorphic = True


def _check_lyapunov(fname, a, q):
    check_square(fname, a, "a")
    check_matrix(fname, q, "q")
    n = shape_of(a)[-1]
    if shape_of(q)[-2:] != (n, n):
        raise ValueError(f"{fname}: argument q has shape {shape_of(q)}, expected (..., {n}, "
                         f"{n}) for a of shape {shape_of(a)}")


def _adjoint(a):
    """Aᴴ (Aᵀ for a real A), as registry operations."""
    return conj(mT(a)) if np.iscomplexobj(unguarded_value(a)) else mT(a)


def solve_continuous_lyapunov(a, q):
    """``scipy.linalg.solve_continuous_lyapunov``: X with A X + X Aᴴ = Q, the Sylvester
    equation syl(A, Aᴴ, Q); differentiable in a and q (both modes, any order)."""
    _check_lyapunov("solve_continuous_lyapunov", a, q)
    return solve_sylvester_p(a, _adjoint(a), q)


def solve_discrete_lyapunov(a, q, method=None):
    """``scipy.linalg.solve_discrete_lyapunov``: X with A X Aᴴ - X + Q = 0, i.e. the Stein
    equation X = A X Aᴴ + Q; differentiable in a and q. ``method`` ('direct',
    'bilinear') only chooses how the value is computed; the result is the same."""
    if method not in (None, "direct", "bilinear"):
        raise ValueError(f"solve_discrete_lyapunov: method must be None, 'direct' or "
                         f"'bilinear', got {method!r}")
    _check_lyapunov("solve_discrete_lyapunov", a, q)
    b = conj(a) if np.iscomplexobj(unguarded_value(a)) else a
    return solve_stein_p(a, b, q)


def solve_stein(a, b, q):
    """X with X = A X Bᵀ + Q (A, B n×n): the primitive behind solve_discrete_lyapunov."""
    check_square("solve_stein", a, "a")
    check_square("solve_stein", b, "b")
    _check_lyapunov("solve_stein", a, q)
    if shape_of(b)[-1] != shape_of(a)[-1]:
        raise ValueError(f"solve_stein: argument b of shape {shape_of(b)} does not match "
                         f"argument a of shape {shape_of(a)}")
    return solve_stein_p(a, b, q)


_S2 = 0.3 * _A2
_S3 = 0.25 * _A3
solve_stein_p.samples = [
    sample(np.array([[0.4]]), np.array([[-0.7]]), (1, 1)),
    sample(_S2, _S2, (2, 2)), sample(_S3, _S3.T[::-1].copy(), (3, 3)),
    sample(np.stack([_S2, -_S2.T]), _S2, (2, 2)),
    sample(_S2 + 0.2j * _S2.T, _S2 - 0.2j * _S2.T, np.array([[1.0, 0.5j], [-0.3, 2.0 + 1j]]))]
