"""``dualad.custom_linear_solve``: the front end of :mod:`.linear_solve`.

One function, two spellings:

- dualad's: ``custom_linear_solve(A, b, *, method="auto", symmetric=False, rmatvec=None,
  rtol=..., atol=0.0, maxiter=None, restart=None, M=None)`` with A a dense array (traced
  or not), a ``scipy.sparse`` matrix or a :func:`dualad.scipy.sparse.csr_array` with traced
  stored values, a ``scipy.sparse.linalg.LinearOperator``, or a callable ``matvec(v)``
  (which may close over traced values);
- JAX's (``jax.lax.custom_linear_solve``): ``custom_linear_solve(matvec, b, solve,
  transpose_solve=None, symmetric=False)``: ``solve(matvec, b) -> x`` is the user's
  solver, run on plain values, ``transpose_solve(vecmat, b)`` the one for Aᵀ (``symmetric``:
  ``solve`` serves both; neither: the transposed system is solved with ``method``).

b is a vector (n,), a matrix (n, k) of k right-hand sides (A a matrix or sparse), or,
for a matvec, any pytree of arrays (the matvec maps that structure to itself).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ...scipy._closure import closure_convert
from ...scipy.sparse import TracedSparse
from ...scipy.sparse.linalg import Solver, _operands, sparse_solve_p
from ...core.tracer import Box, primal_value, shape_of
from ...core.tree import tree_map
from ._symmetry import check_symmetric_matrix
from ._util import Flat, plain
from .linear_solve import DENSE_MAX, ITERATIVE, METHODS, LinearSystem, linear_solve_p

if TYPE_CHECKING:
    from collections.abc import Callable

_NAME = "custom_linear_solve"


def custom_linear_solve(A: Any, b: Any, solve: Callable[..., Any] | None = None,
                        transpose_solve: Callable[..., Any] | None = None,
                        symmetric: bool = False, has_aux: bool = False, *, method: str = "auto",
                        rmatvec: Callable[..., Any] | None = None, rtol: float | None = None,
                        atol: float = 0.0, maxiter: int | None = None,
                        restart: int | None = None, M: Any = None) -> Any:
    r"""Solve :math:`A x = b`, differentiable in ``b`` and ``A`` by the implicit function theorem.

    :math:`x = A^{-1} b` is computed by a solver that is never differentiated
    through; its derivatives come from the linear equations themselves:

    .. math::

        \dot x = A^{-1}\,(\dot b - \dot A\,x), \qquad
        \bar b = A^{-T}\,\bar x, \qquad \bar A = -\bar b\,x^T,

    one more solve per tangent (with :math:`A`) or cotangent (with
    :math:`A^T`), in both modes and to any order. ``A`` may be a dense array
    (traced or not), a ``scipy.sparse`` matrix or a
    :func:`dualad.scipy.sparse.csr_array` with traced stored values, a
    ``scipy.sparse.linalg.LinearOperator``, or a callable ``matvec(v)`` that may
    close over traced values (its derivative is then the derivative with respect
    to those values). With JAX's spelling, ``custom_linear_solve(matvec, b,
    solve, transpose_solve, symmetric)``, ``solve(matvec, b) -> x`` is your own
    solver, run on plain values.

    Parameters
    ----------
    A : array_like, sparse matrix, LinearOperator or callable
        The matrix (n x n) or the map :math:`v \mapsto A v`.
    b : array_like or pytree
        The right-hand side: a vector ``(n,)``, a matrix ``(n, k)`` of k
        right-hand sides (``A`` a matrix), or, for a matvec, any pytree of
        arrays the matvec maps to itself.
    solve : callable, optional
        JAX's spelling: ``solve(matvec, b) -> x`` (or ``(x, aux)`` with
        ``has_aux``), run on plain values; it replaces ``method``.
    transpose_solve : callable, optional
        ``transpose_solve(vecmat, b) -> x`` for :math:`A^T x = b`, used by reverse
        mode; without it the transposed systems use ``solve`` when
        ``symmetric``, else ``method``.
    symmetric : bool, default False
        Declare :math:`A = A^T` (``solve`` then serves both directions, and
        ``"auto"`` picks minres for a large matvec). Checked at each primal solve:
        a dense A in O(n²), a matvec by one random probe
        :math:`\langle u, Av\rangle = \langle Au, v\rangle`; a non-symmetric A
        raises ValueError.
    has_aux : bool, default False
        ``solve`` returns ``(x, aux)``; the result is then ``(x, aux)``, with
        ``aux`` (from the primal solve) not differentiated.
    method : {"auto", "direct", "cg", "gmres", "bicgstab", "minres"}, default "auto"
        ``"auto"``: a dense LU up to 500 unknowns, else gmres (minres when
        ``symmetric``); SuperLU for a sparse matrix. ``"cg"`` needs a symmetric
        positive definite ``A``, ``"minres"`` a symmetric one.
    rmatvec : callable, optional
        :math:`u \mapsto A^T u` for a matvec ``A``; without it the transpose comes
        from a reverse sweep of the matvec.
    rtol : float, optional
        Relative tolerance of the iterative methods (default 1e-10 in float64,
        1e-5 in float32).
    atol : float, default 0.0
        Absolute tolerance of the iterative methods.
    maxiter : int, optional
        Iteration limit of the iterative methods.
    restart : int, optional
        The restart length of gmres.
    M : array_like, LinearOperator or callable, optional
        A preconditioner for the iterative methods.

    Returns
    -------
    array_like or pytree
        The solution, with the structure of ``b``; ``(x, aux)`` with
        ``has_aux=True``.

    Raises
    ------
    TypeError
        If ``A`` is of an unsupported type, ``b`` is ``None``, ``solve`` is not
        callable, ``transpose_solve`` is given without ``solve``, or
        ``has_aux=True`` without ``solve``.
    ValueError
        If ``method`` is unknown, ``b``'s shape does not match ``A``, or
        ``symmetric=True`` is given for an ``A`` that is not symmetric.
    numpy.linalg.LinAlgError
        If ``A`` is singular to working precision (the solution is then not a
        differentiable function of the inputs), or an iterative method does
        not converge.

    See Also
    --------
    dualad.custom_root : Roots of nonlinear equations, differentiated the same way.
    dualad.lax.custom_linear_solve : The same function under JAX's name.

    Examples
    --------
    >>> A = np.array([[4.0, 1.0], [1.0, 3.0]])
    >>> b = np.array([1.0, 2.0])
    >>> print(np.allclose(dualad.custom_linear_solve(A, b), np.linalg.solve(A, b)))
    True

    The gradient with respect to ``b`` is :math:`A^{-T} \mathbf{1}`, one transposed solve:

    >>> g = dualad.grad(lambda b: np.sum(dualad.custom_linear_solve(A, b)))(b)
    >>> print(np.allclose(g, np.linalg.solve(A.T, np.ones(2))))
    True

    A matrix-free operator and JAX's spelling with your own solver:

    >>> matvec = lambda v: np.array([2.0, 3.0]) * v
    >>> print(dualad.custom_linear_solve(matvec, np.ones(2), lambda mv, b: b / np.array([2.0, 3.0]),
    ...                                  symmetric=True))
    [0.5        0.33333333]
    """
    aux = []
    if has_aux and solve is None:
        raise TypeError(f"{_NAME}: has_aux=True needs a solve function returning (x, aux)")
    if solve is not None:
        if not callable(solve):
            raise TypeError(f"{_NAME}: solve must be a callable solve(matvec, b) -> x, got "
                            f"{type(solve).__name__}")
        method = _plain_callable(solve)
        if has_aux:
            method = _with_aux(method, aux)
        if transpose_solve is not None:
            transpose_solve = _plain_callable(transpose_solve)
    elif transpose_solve is not None:
        raise TypeError(f"{_NAME}: transpose_solve without solve; give both (JAX's "
                        f"spelling) or use method=")
    if not callable(method) and method not in METHODS:
        raise ValueError(f"{_NAME}: unknown method {method!r}; use one of "
                         f"{', '.join(METHODS)}")
    if b is None:
        raise TypeError(f"{_NAME}: b is None; pass the right-hand side as an array")
    if getattr(A, "shape", None) is not None and len(A.shape) == 2 and A.shape[0] == 0:
        x = b * 0.0 if isinstance(b, Box) else np.zeros(np.shape(b))   # 0 x 0: nothing to solve
        return (x, None) if has_aux else x
    options = {k: v for k, v in dict(rtol=rtol, atol=atol, maxiter=maxiter, restart=restart,
                                     M=M).items() if v is not None}
    if isinstance(A, (TracedSparse, spla.LinearOperator)) or sp.issparse(A):
        x = _sparse(A, b, method, options, symmetric)
    elif isinstance(A, (Box, np.ndarray)) or (not callable(A) and hasattr(A, "shape")):
        x = _dense(A, b, method, options, symmetric, transpose_solve)
    elif not callable(A):
        raise TypeError(f"{_NAME}: A must be a matrix (dense or scipy.sparse), a "
                        f"LinearOperator or a callable matvec(v), got {type(A).__name__}")
    else:
        x = _matvec(A, b, method, options, symmetric, rmatvec, transpose_solve)
    return (x, aux[0] if aux else None) if has_aux else x


def _with_aux(solve, aux):
    """``solve`` returning (x, aux): x for the solves, the first call's aux kept (the
    primal solve's: JAX's has_aux; aux is not differentiated)."""
    def solve_x(matvec, b):
        out = solve(matvec, b)
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise TypeError(f"{_NAME}: with has_aux=True, solve must return (x, aux), got "
                            f"{type(out).__name__}")
        if not aux:
            aux.append(out[1])
        return out[0]
    return solve_x


def _plain_callable(fn):
    """A user's solve function with the traced values in its closure replaced by their
    plain values (it runs on plain values only, never differentiated through)."""
    conv, found = closure_convert(fn)
    if not found:
        return fn
    values = tuple(primal_value(v) for v in found)
    return lambda matvec, b: conv(matvec, b, *values)


def _check_b(b, n, what, matrix):
    bs = tuple(shape_of(b))
    ok = (len(bs) == 1 and bs[0] == n) or (matrix and len(bs) == 2 and bs[0] == n)
    if not ok:
        more = f", or ({n}, k) for k right-hand sides" if matrix else ""
        raise ValueError(f"{_NAME}: b has shape {bs} but A is {what}: b must have shape "
                         f"({n},){more}")
    dt = np.result_type(primal_value(b))
    if dt.kind not in "fc":
        if isinstance(b, Box):
            raise TypeError(f"{_NAME}: b of dtype {dt} is not differentiable")
    return len(bs) == 1


def _dense(A, b, method, options, symmetric, transpose_solve):
    shape = tuple(shape_of(A))
    if len(shape) != 2 or shape[0] != shape[1]:
        raise ValueError(f"{_NAME}: a dense A must be a square matrix, got shape {shape}")
    n = shape[0]
    if not isinstance(b, Box):
        b = np.asarray(b)
    vector = _check_b(b, n, f"{n} x {n}", True)
    dt = np.result_type(primal_value(A))
    if dt.kind not in "fc":
        if isinstance(A, Box):
            raise TypeError(f"{_NAME}: A of dtype {dt} is not differentiable")
        A = np.asarray(A, dtype=float)

    def matvec(v, a):        # A v for each row v: v @ Aᵀ (leading axes broadcast)
        return v @ a.T

    def rmatvec(u, a):
        return u @ a

    system = LinearSystem(matvec, n, rmatvec=rmatvec, matrix=lambda a: a, method=method,
                          transpose_method=transpose_solve, options=options,
                          symmetric=symmetric, name=_NAME, batched=True)
    rhs = b if vector else b.T      # leading axes are right-hand sides
    x = linear_solve_p(rhs, A, system=system, role="primal")
    return x if vector else x.T


def _matvec(fn, b, method, options, symmetric, rmatvec, transpose_solve):
    flat = Flat(b)
    n = flat.n
    b_flat = flat.ravel(b, _NAME, "b")

    def both(which, v):
        if which == 0:
            return flat.ravel(fn(flat.unravel(v)), _NAME, "matvec(v)")
        return flat.ravel(rmatvec(flat.unravel(v)), _NAME, "rmatvec(u)")
    conv, consts = closure_convert(both)
    _check_linear(conv, n, consts, b_flat)
    system = LinearSystem(lambda v, *c: conv(0, v, *c), n,
                          rmatvec=None if rmatvec is None else (lambda u, *c: conv(1, u, *c)),
                          method=method, transpose_method=transpose_solve, options=options,
                          symmetric=symmetric, name=_NAME)
    if callable(method):
        system.method = _on_tree(method, flat)
        if transpose_solve is not None:
            system.transpose_method = _on_tree(transpose_solve, flat)
    x = linear_solve_p(b_flat, *consts, system=system, role="primal")
    return flat.unravel(x)


def _check_linear(conv, n, consts, b_flat):
    """matvec(0) must be 0: an affine map (A v + c) would be solved as if c were not
    there. One matvec on plain values."""
    dtype = np.result_type(primal_value(b_flat), np.float64)
    at_zero = plain(conv(0, np.zeros(n, dtype), *[primal_value(c) for c in consts]))
    if at_zero.shape == (n,) and np.any(at_zero != 0):
        raise ValueError(f"{_NAME}: matvec(0) is not 0 (max |matvec(0)| = "
                         f"{np.max(np.abs(at_zero)):.3g}): the matvec must be linear, "
                         f"v ↦ A v; move a constant term c of A v + c = b into the "
                         f"right-hand side (b − c)")


def _on_tree(solve, flat):
    """A JAX-style ``solve(matvec, b)`` on the user's pytree structure, as one on flat
    vectors (plain values)."""
    if flat.single and len(flat.shapes[0]) == 1:
        return solve

    def flat_solve(matvec, b):
        def tree_matvec(v):
            return _plain_tree(flat.unravel(matvec(plain(flat.ravel(v, _NAME, "v")))))
        x = solve(tree_matvec, _plain_tree(flat.unravel(b)))
        return plain(flat.ravel(x, _NAME, "solve(matvec, b)"))
    return flat_solve


def _plain_tree(tree):
    return tree_map(plain, tree)


def _sparse(A, b, method, options, symmetric):
    if callable(method):
        raise TypeError(f"{_NAME}: a solve function is for a matvec A (JAX's spelling); "
                        f"for a sparse A or LinearOperator use method=")
    is_op = isinstance(A, spla.LinearOperator)
    n = A.shape[0]
    if A.shape[0] != A.shape[1]:
        raise ValueError(f"{_NAME}: A must be square, got shape {A.shape}")
    if method == "direct" and is_op:    # a dense copy of the operator, then LU
        return _dense(A @ np.eye(n), b, "direct", options, symmetric, None)
    if symmetric and not is_op:
        check_symmetric_matrix(A.primal() if isinstance(A, TracedSparse) else A, _NAME)
    if method == "auto":
        method = ("minres" if symmetric else "gmres") if is_op else "direct"
    if sp.issparse(b):
        b = b.toarray()
    if not isinstance(b, Box):
        b = np.asarray(b)
    vector = _check_b(b, n, f"a {n} x {n} sparse matrix", True)
    data, struct, _, _ = _operands(A, b if vector else b[:, 0], method if method != "direct"
                                   else "spsolve")
    if method == "direct":
        solver = Solver("splu")
    else:
        solver = Solver(method, _sparse_options(method, options, b))
    rhs = b if vector else b.T
    x = sparse_solve_p(data, rhs, struct=struct, trans=False, vector=True, solver=solver,
                       role="primal")
    if solver.info != 0:
        raise RuntimeError(f"{_NAME}: {method} did not converge (info={solver.info}, with "
                           f"{solver._settings()}); the solution and its derivative would be "
                           f"wrong. Raise maxiter, loosen rtol, give a preconditioner M or "
                           f"use method='direct'")
    return x if vector else x.T


def _sparse_options(method, options, b):
    opts = dict(options)
    dt = np.result_type(primal_value(b), np.float32)
    opts.setdefault("rtol", 1e-10 if dt.itemsize >= 8 else 1e-5)
    if method == "minres":
        opts.pop("atol", None)
    if method != "gmres":
        opts.pop("restart", None)
    return opts


__all__ = ["custom_linear_solve", "DENSE_MAX", "ITERATIVE"]
