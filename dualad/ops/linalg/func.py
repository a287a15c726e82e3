"""Matrix functions (Sylvester equations, Fréchet derivatives) and compositions.

    solve_sylvester   A X + X B = Q   Ẋ = syl(A, B, Q̇ - Ȧ X - X Ḃ)
                                      Q̄ = syl(Aᵀ, Bᵀ, X̄),  Ā = -Q̄ Xᵀ,  B̄ = -Xᵀ Q̄
    expm       E = e^A          Ė = L(A, Ȧ)               Ā = L(Aᵀ, Ē)
               L(A, H) = upper-right block of exp([[A, H], [0, A]])  (Fréchet derivative)
    logm       X = log A        the same with log in place of exp
    sqrtm      X² = A           Ẋ = syl(X, X, Ȧ)          Ā = syl(Xᵀ, Xᵀ, X̄)

matrix_power (repeated squaring; negative powers of inv), multi_dot, tensorinv
and tensorsolve are compositions of registry operations.

syl(A, B, C) is the solution X of A X + X B = C. The adjoint of the Fréchet
derivative of a primary matrix function with a real power series (exp, log)
at A is its Fréchet derivative at Aᵀ; the adjoint of the
Sylvester operator X ↦ A X + X B is X ↦ Aᵀ X + X Bᵀ. All rules apply these
primitives to traced values, so they differentiate again (expm's second
derivative is a 4n×4n block exponential). Stacks of matrices broadcast.
"""
from __future__ import annotations

import numpy as np

from ...core.tracer import ndim_of, shape_of, unguarded_value
from ...core.primitive import Primitive, implements, register, sample
from ...core.batch_axes import batch_ndim
from ..core.batch_ops import stacked_rule
from ..core.linear import unbroadcast
from ..core.indexing import index
from ..core.products import matmul
from .basic import inv, inv_p, solve_p
from ._common import scipy_linalg
from ._common import (_A2, _A3, _SPD3, check_matrix, check_square, mm, mT, sym_map,
                      tangent_rhs)
from ..core.shape import broadcast_to, concatenate, reshape

__all__ = [
    "solve_sylvester_p", "solve_sylvester", "block_frechet", "expm_p", "expm",
    "expm_frechet", "logm_p", "logm", "sqrtm_p", "sqrtm", "matrix_power", "multi_dot",
    "tensorinv", "tensorsolve"
]

# --- Sylvester equations ------------------------------------------------------------------
def _sylvester_impl(a, b, q):
    lead = np.broadcast_shapes(a.shape[:-2], b.shape[:-2], q.shape[:-2])
    return scipy_linalg().solve_sylvester(np.broadcast_to(a, lead + a.shape[-2:]),
                                        np.broadcast_to(b, lead + b.shape[-2:]),
                                        np.broadcast_to(q, lead + q.shape[-2:]))


def _sylvester_sympy(sp, a, b, q):
    def one(A, B, Q):
        n, m = Q.shape
        K = sp.kronecker_product(sp.eye(m), A) + sp.kronecker_product(B.T, sp.eye(n))
        x = K.LUsolve(Q.T.reshape(n * m, 1))  # column-major vec
        return x.reshape(m, n).T
    return sym_map(sp, one, a, b, q)


solve_sylvester_p = register(Primitive("solve_sylvester", _sylvester_impl, sparsity="matrix",
                                       sympy=_sylvester_sympy))


def _sylvester_jvp_all(tangents, x, a, b, q):
    ta, tb, tq = tangents
    rhs = tangent_rhs(x, (tq, q, None), (ta, a, lambda t: -mm(t, x)),
                      (tb, b, lambda t: -mm(x, t)))
    return solve_sylvester_p(a, b, rhs)


def _sylvester_vjp_all(ct, x, a, b, q):
    nb = batch_ndim(ct, x)
    gq = solve_sylvester_p(mT(a), mT(b), ct)
    return [unbroadcast(-mm(gq, mT(x)), shape_of(a), nb),
            unbroadcast(-mm(mT(x), gq), shape_of(b), nb),
            unbroadcast(gq, shape_of(q), nb)]


solve_sylvester_p.def_all(jvp=_sylvester_jvp_all, vjp=_sylvester_vjp_all)
solve_sylvester_p.defbatch(stacked_rule(solve_sylvester_p, (2, 2, 2)))


def solve_sylvester(a, b, q):
    """``scipy.linalg.solve_sylvester``: X with A X + X B = Q (A n×n, B m×m, Q n×m).
    Needs the spectra of A and -B disjoint."""
    check_square("solve_sylvester", a, "a")
    check_square("solve_sylvester", b, "b")
    check_matrix("solve_sylvester", q, "q")
    n, m = shape_of(a)[-1], shape_of(b)[-1]
    if shape_of(q)[-2:] != (n, m):
        raise ValueError(f"solve_sylvester: argument q has shape {shape_of(q)}, expected "
                         f"(..., {n}, {m}) for a of shape {shape_of(a)} and b of shape "
                         f"{shape_of(b)}")
    return solve_sylvester_p(a, b, q)


# --- matrix exponential, logarithm and square root ---------------------------------------
def block_frechet(prim, a, e):
    """The Fréchet derivative L_f(A, E) = d/dε f(A + εE) at ε = 0 of the primary matrix
    function ``prim`` (f), as the upper-right block of f([[A, E], [0, A]]) (Mathias 1996).
    ``e`` may carry leading batch axes."""
    shape = np.broadcast_shapes(shape_of(a), shape_of(e))
    a = broadcast_to(a, shape)
    e = broadcast_to(e, shape)
    n = shape[-1]
    zeros = np.zeros(shape, np.result_type(unguarded_value(a), unguarded_value(e)))
    block = concatenate([concatenate([a, e], axis=-1), concatenate([zeros, a], axis=-1)],
                        axis=-2)
    return index(prim(block), (Ellipsis, slice(0, n), slice(n, 2 * n)))


def _real_part(fname, a, x, keep_complex=False):
    """A real matrix function of a real matrix: drop a round-off imaginary part.

    A true imaginary part (A has negative real eigenvalues) raises, or with
    ``keep_complex`` stays: the value is then the principal function of the real matrix,
    complex, and its derivative along real directions is the holomorphic one (a real
    input's cotangent is the real part, docs/complex.md)."""
    if np.iscomplexobj(x) and not np.iscomplexobj(a):
        # round-off relative to a's precision: SciPy's logm of a float32 matrix leaves
        # imaginary parts near 1e-8, far above a float64 tolerance
        eps = np.finfo(np.result_type(a, np.float32)).eps
        tol = max(1e-10, 100.0 * eps)
        if np.abs(x.imag).max(initial=0.0) > tol * max(np.abs(x.real).max(initial=0.0), 1.0):
            if keep_complex:
                return x if np.result_type(a) != np.float32 else x.astype(np.complex64)
            raise NotImplementedError(
                f"{fname}: the result for the real matrix of shape {np.shape(a)} is complex (it "
                f"has negative real eigenvalues); complex results of real matrices are not "
                f"differentiable here")
        x = x.real
        if np.result_type(a).kind == "f" and x.dtype != np.result_type(a):
            x = x.astype(np.result_type(a))   # float32 stays float32
    return x


expm_p = register(Primitive("expm", lambda a: scipy_linalg().expm(a), sparsity="matrix"))
expm_p.defjvp(lambda t, ans, a: block_frechet(expm_p, a, t))
expm_p.defvjp(lambda ct, ans, a: block_frechet(expm_p, mT(a), ct))
expm_p.defbatch(stacked_rule(expm_p))   # vmap: the batch axis is one more stack axis


def expm(a):
    """``scipy.linalg.expm``: Ė = L(A, Ȧ), Ā = L(Aᵀ, Ē) (the adjoint of the Fréchet
    derivative at A is the Fréchet derivative at Aᵀ)."""
    check_square("expm", a, "A")
    return expm_p(a)


def expm_frechet(a, e):
    """L(A, E) of exp (differentiable in both A and E)."""
    check_square("expm_frechet", a, "A")
    return block_frechet(expm_p, a, e)


logm_p = register(Primitive("logm", lambda a: _real_part("logm", a, scipy_linalg().logm(a)),
                           sparsity="matrix"))
logm_p.defjvp(lambda t, ans, a: block_frechet(logm_p, a, t))
logm_p.defvjp(lambda ct, ans, a: block_frechet(logm_p, mT(a), ct))
logm_p.defbatch(stacked_rule(logm_p))


def logm(a, disp=True):
    """``scipy.linalg.logm`` (principal logarithm, real case): Ẋ = L_log(A, Ȧ) and
    Ā = L_log(Aᵀ, X̄) by the same block-triangular trick as expm. Needs no eigenvalue
    of A on the closed negative real axis."""
    check_square("logm", a, "A")
    return logm_p(a)


def _sqrtm_impl(a):
    return _real_part("sqrtm", a, scipy_linalg().sqrtm(a), keep_complex=True)


sqrtm_p = register(Primitive("sqrtm", _sqrtm_impl, sparsity="matrix"))
sqrtm_p.defjvp(lambda t, x, a: solve_sylvester_p(x, x, t))
sqrtm_p.defvjp(lambda ct, x, a: solve_sylvester_p(mT(x), mT(x), ct))
sqrtm_p.defbatch(stacked_rule(sqrtm_p))


def sqrtm(a, disp=True, blocksize=64):
    """``scipy.linalg.sqrtm`` (principal square root): X Ẋ + Ẋ X = Ȧ, solved as a
    Sylvester equation; the VJP solves the transposed one (no conjugate: the function is
    holomorphic). Real and complex matrices; a real matrix with negative real eigenvalues
    has a complex square root, returned as SciPy returns it, and its derivative along real
    directions is the same formula (a real A's cotangent is the real part). Needs the
    Sylvester operator X ↦ X Ẋ + Ẋ X invertible: A nonsingular (no zero eigenvalue, where
    the square root has no derivative)."""
    check_square("sqrtm", a, "A")
    return sqrtm_p(a)



# --- compositions ------------------------------------------------------------------------
@implements(np.linalg.matrix_power)
def matrix_power(a, n):
    """``np.linalg.matrix_power`` for integer n (negative: powers of inv(a)), by repeated
    squaring of matmul; A⁰ is the identity (zero derivative)."""
    check_square("matrix_power", a)
    if int(n) != n:
        raise TypeError(f"matrix_power: exponent must be an integer, got {n!r}")
    n = int(n)
    if n == 0:
        return np.broadcast_to(np.eye(shape_of(a)[-1]), shape_of(a)).copy()
    if n < 0:
        a, n = inv(a), -n
    result, base = None, a
    while n:
        if n & 1:
            result = base if result is None else mm(result, base)
        n >>= 1
        if n:
            base = mm(base, base)
    return result


@implements(np.linalg.multi_dot)
def multi_dot(arrays, *, out=None):
    """``np.linalg.multi_dot``: a chain of matmuls (first/last may be 1-D), left to right."""
    if out is not None:
        raise TypeError("multi_dot: out= writes in place and is not differentiable")
    arrays = list(arrays)
    if len(arrays) < 2:
        raise ValueError("multi_dot: expecting at least two arrays")
    result = arrays[0]
    for b in arrays[1:]:
        result = matmul(result, b)
    return result


@implements(np.linalg.tensorinv)
def tensorinv(a, ind=2):
    """``np.linalg.tensorinv``: inv of ``a`` reshaped to a square matrix, reshaped back."""
    s = shape_of(a)
    rows = int(np.prod(s[:ind], dtype=np.int64))
    if ind <= 0 or rows != int(np.prod(s[ind:], dtype=np.int64)):
        raise ValueError(f"tensorinv: argument a of shape {s} with ind={ind} is not square "
                         f"(prod(shape[:ind]) must equal prod(shape[ind:]))")
    return reshape(inv_p(reshape(a, (rows, rows))), s[ind:] + s[:ind])


@implements(np.linalg.tensorsolve)
def tensorsolve(a, b, axes=None):
    """``np.linalg.tensorsolve``: solve of ``a`` reshaped to a square matrix."""
    from ..core.shape import transpose
    an = ndim_of(a)
    if axes is not None:
        order = [k for k in range(an) if k not in [ax % an for ax in axes]]
        a = transpose(a, order + [ax % an for ax in axes])
    old = shape_of(a)[-(an - ndim_of(b)):]
    n = int(np.prod(old, dtype=np.int64))
    if int(np.prod(shape_of(b), dtype=np.int64)) != n:
        raise ValueError(f"tensorsolve: argument a of shape {shape_of(a)} and argument b of "
                         f"shape {shape_of(b)} do not make a square system")
    return reshape(solve_p(reshape(a, (n, n)), reshape(b, (n, 1))), old)


solve_sylvester_p.samples = [sample(_A2, np.array([[0.7]]), (2, 1)), sample(_A2, _A2.T, (2, 2)),
                             sample(_A2, _A3, (2, 3))]
expm_p.samples = [sample((2, 2)), sample((3, 3)), sample((2, 2, 2))]
# the last sample has eigenvalues -1 and 2 (+ 0.2j): a complex square root of a real matrix
# and of a complex one near the negative axis
_NEG2 = np.array([[0.0, 1.0], [2.0, 1.0]])
sqrtm_p.samples = [sample(_SPD3), sample(_A2), sample(_NEG2), sample(_NEG2 + 0.1j * _A2),
                   sample(np.stack([_NEG2, _A2]))]
logm_p.samples = [sample(_SPD3), sample(_A2), sample(np.stack([_A2, _A2.T]))]
