"""``dualad.scipy.sparse.linalg``: sparse solves, differentiable in b and in A's stored values.

``A`` is a constant scipy.sparse matrix (any format) or a sparse matrix with traced
stored values (:func:`dualad.scipy.sparse.csr_array` and friends); ``b`` a dense vector
or matrix, traced or not. With x = A⁻¹ b (one primitive, ``sparse_solve``):

    JVP   ẋ = A⁻¹ (ḃ − Ȧ x)                     one more solve with A; Ȧ x is O(nnz)
    VJP   b̄ = A⁻ᵀ x̄                             one solve with Aᵀ
          Ā_k = −b̄[row_k] · x[col_k]             at the stored positions only, O(nnz)
                                                (summed over the columns of a matrix b)

``spsolve`` factors A once with SuperLU (``scipy.sparse.linalg.splu``) and reuses the
factorization for every tangent and adjoint solve with the same stored values (Aᵀ solves
use ``trans='T'``). The iterative solvers (``cg``, ``gmres``, ``bicgstab``, ``minres``)
differentiate the *exact* solution by the same implicit rules: each tangent or adjoint
solve runs the same method with the same ``rtol``, ``atol``, ``maxiter``, restart and
preconditioner (Mᵀ for the adjoint), on A (tangents) or Aᵀ (cotangents), from a zero
initial guess. The derivative is then as accurate as those solves. Conventions:

- the primal returns ``(x, info)`` as SciPy does; when the primal solve did not converge
  (``info != 0``) and an argument is traced, a ``RuntimeWarning`` says that the derivative
  is that of the exact solution, which ``x`` is not;
- a tangent or adjoint solve that does not converge raises ``RuntimeError`` naming the
  solver (never a silently wrong derivative);
- a singular A in ``spsolve``: SciPy's ``MatrixRankWarning`` and NaN, as SciPy; a rule's
  solve with a singular A raises ``numpy.linalg.LinAlgError``;
- a constant ``LinearOperator`` A (matrix-free) in the iterative solvers: differentiable
  in b; the adjoint of gmres/bicgstab uses its ``rmatvec`` (Aᵀ).

Complex values follow JAX's convention (cotangents are not conjugated: Aᵀ, not Aᴴ).
"""
from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ...core.batch_axes import batch_ndim
from ...ops.core.batch_ops import looping_when
from ...ops.core.elementwise import multiply, subtract
from ...ops.core.indexing import getitem
from ...ops.core.linear import unbroadcast
from ...ops.core.reductions import sum as _sum
from ...core.primitive import Primitive, register, sample
from ...core.scaled import dense
from ...core.tracer import Box, ndim_of, primal_value, shape_of, unguarded_value
from ._traced import Structure, TracedSparse, apply

__all__ = ["spsolve", "cg", "gmres", "bicgstab", "minres", "sparse_solve_p"]


class Solver:
    """How ``sparse_solve`` solves: ``method`` ('splu' or an iterative method's name), its
    ``options`` (``rtol``, ``atol``, ``maxiter``, ``M``, ``restart``, ``permc_spec``), the
    primal's own ``x0`` and ``callback``, the primal's ``info`` once solved, and the
    last SuperLU factorization (reused while the stored values are the same)."""

    __slots__ = ("method", "options", "x0", "callback", "info", "_lu_data", "_lu",
                 "__weakref__")

    def __init__(self, method, options=None, x0=None, callback=None):
        self.method = method
        self.options = dict(options or {})
        self.x0 = x0
        self.callback = callback
        self.info = 0
        self._lu_data = self._lu = None

    def __repr__(self):
        return f"Solver({self.method!r}, {self.options})"

    # --- direct ------------------------------------------------------------------------
    def _factor(self, data, struct, dtype, role):
        """SuperLU of A in ``dtype``, reused while the stored values are the same."""
        if self._lu is not None and self._lu_data.dtype == data.dtype and \
                self._lu.U.dtype == dtype and np.array_equal(self._lu_data, data):
            return self._lu
        a = struct.matrix(data.astype(dtype, copy=False), "csc")
        try:
            lu = spla.splu(a, permc_spec=self.options.get("permc_spec"))
        except RuntimeError as e:     # "Factor is exactly singular"
            if role != "primal":
                raise np.linalg.LinAlgError(
                    f"spsolve: the {role} solve of the derivative needs A⁻¹, but A "
                    f"{struct.shape} is singular ({e})") from None
            warnings.warn(f"spsolve: matrix is exactly singular ({e})",
                          spla.MatrixRankWarning, stacklevel=5)
            return None
        self._lu_data, self._lu = np.array(data, copy=True), lu
        return lu

    def _direct(self, data, struct, rhs, trans, role):
        # float32 stays float32 (as SciPy's spsolve); integers solve in float64
        dtype = np.result_type(data, rhs, np.float32)
        split = np.iscomplexobj(rhs) and not np.iscomplexobj(data)  # a real A, a complex b
        lu = self._factor(data, struct, dtype.type(0).real.dtype if split else dtype, role)
        if lu is None:
            return np.full(rhs.shape, np.nan, dtype)
        t = "T" if trans else "N"
        if split:
            return lu.solve(np.ascontiguousarray(rhs.real), trans=t) + \
                1j * lu.solve(np.ascontiguousarray(rhs.imag), trans=t)
        return lu.solve(np.ascontiguousarray(rhs, dtype=dtype), trans=t)

    # --- iterative -----------------------------------------------------------------------
    def _iterative(self, data, struct, rhs, trans, role):
        symmetric = self.method in ("cg", "minres")    # these require A = Aᵀ and M = Mᵀ
        a = struct.operator if struct.operator is not None else struct.matrix(data, "csr")
        opts = dict(self.options)
        m = opts.pop("M", None)
        if trans and struct.operator is not None:
            if not symmetric:
                a = _transposed(a, self.method, "A")
        elif trans:
            a = a.T.tocsr()
        if trans and m is not None and not symmetric:
            m = _transposed(m, self.method, "M")
        fn = getattr(spla, self.method)
        out = np.empty(rhs.shape, np.result_type(data, rhs, np.float32))
        infos = []
        for j in range(rhs.shape[1]):
            kw = dict(opts)
            if role == "primal":
                if self.x0 is not None:
                    kw["x0"] = np.asarray(primal_value(self.x0))
                if self.callback is not None:
                    kw["callback"] = self.callback
            if m is not None:
                kw["M"] = m
            out[:, j], info = fn(a, rhs[:, j], **kw)
            infos.append(int(info))
        bad = [i for i in infos if i != 0]
        if role == "primal":
            self.info = bad[0] if bad else 0
        elif bad:
            raise RuntimeError(
                f"{self.method}: the {role} solve of the derivative did not converge "
                f"(info={bad[0]}, with {self._settings()}); the derivative would be wrong. "
                f"Loosen rtol/atol, raise maxiter, or give a preconditioner M")
        return out

    def _settings(self):
        return ", ".join(f"{k}={v!r}" for k, v in self.options.items() if k != "M") or \
            "SciPy's defaults"

    def solve(self, data, struct, rhs, trans, role):
        if self.method == "splu":
            return self._direct(data, struct, rhs, trans, role)
        return self._iterative(data, struct, rhs, trans, role)


def _transposed(op, method, name):
    """Aᵀ or Mᵀ of a matrix or LinearOperator, for an adjoint solve."""
    t = spla.aslinearoperator(op).T if not (sp.issparse(op) or isinstance(op, np.ndarray)) \
        else op.T
    if isinstance(t, spla.LinearOperator):
        try:
            t.matvec(np.zeros(t.shape[1], t.dtype))
        except NotImplementedError as e:
            raise NotImplementedError(
                f"{method}: the adjoint solve needs {name}ᵀ, which the LinearOperator {name} "
                f"does not provide ({e}); give {name} with rmatvec, or as a matrix") from None
    return t


def _solve_impl(data, b, *, struct, trans, vector, solver, role):
    data = np.asarray(dense(data))
    b = np.asarray(dense(b))
    n = struct.shape[0]
    if vector:
        rhs = b.reshape(-1, n).T
        x = solver.solve(data, struct, rhs, trans, role)
        return x.T.reshape(b.shape)
    moved = np.moveaxis(b, -2, 0)
    x = solver.solve(data, struct, moved.reshape(n, -1), trans, role)
    return np.moveaxis(x.reshape(moved.shape), 0, -2)


def _sympy_solve(sympy, data, b, *, struct, trans, vector, solver, role):
    """The SymPy translation: the dense A (Aᵀ when ``trans``) from its stored values, solved
    by cofactors (A⁻¹ = adj(A)/det(A): rational expressions that differentiate fast)."""
    n = struct.shape[0]
    a = sympy.zeros(n, n)
    r, c = (struct.col, struct.row) if trans else (struct.row, struct.col)
    for k, v in enumerate(np.asarray(data, dtype=object)):
        a[int(r[k]), int(c[k])] += v
    b = np.asarray(b, dtype=object)             # batch axes in front, as in _solve_impl
    cols = b.reshape(-1, n).T if vector else np.moveaxis(b, -2, 0).reshape(n, -1)
    x = np.array((a.adjugate() * sympy.Matrix(cols.tolist()) / a.det()).tolist(), dtype=object)
    if vector:
        return x.T.reshape(b.shape)
    return np.moveaxis(x.reshape(np.moveaxis(b, -2, 0).shape), 0, -2)


sparse_solve_p = register(Primitive("sparse_solve", _solve_impl, sparsity="sparse_solve",
                                    sympy=_sympy_solve))


def _effective(struct, trans):
    """The coordinates of the matrix actually solved with (Aᵀ's when ``trans``)."""
    return struct.T if trans else struct


def _solve_jvp_all(tangents, ans, data, b, *, struct, trans, vector, solver, role):
    """ẋ = A⁻¹ (ḃ − Ȧ x): one solve of the combined right-hand side."""
    t_data, t_b = tangents
    axis = -1 if vector else -2
    rhs = t_b
    if t_data is not None:
        a_dot_x = apply(t_data, _effective(struct, trans), ans, axis)
        rhs = -a_dot_x if rhs is None else subtract(rhs, a_dot_x)
    return sparse_solve_p(data, rhs, struct=struct, trans=trans, vector=vector,
                          solver=solver, role="tangent")


def _solve_vjp_all(ct, ans, data, b, *, struct, trans, vector, solver, role):
    """b̄ = A⁻ᵀ x̄ (one solve), Ā_k = −b̄[row_k] · x[col_k] at the stored positions."""
    gb = sparse_solve_p(data, ct, struct=struct, trans=not trans, vector=vector,
                        solver=solver, role="adjoint")
    eff = _effective(struct, trans)
    # b (and x) may carry leading axes of their own (vmap's batch axis, say): A is shared
    # by all of them, so its cotangent sums over them (unbroadcast)
    core = 1 if vector else 2
    tail = () if vector else (slice(None),)
    g_rows = getitem(gb, idx=(slice(None),) * (ndim_of(gb) - core) + (eff.row,) + tail)
    x_cols = getitem(ans, idx=(slice(None),) * (ndim_of(ans) - core) + (eff.col,) + tail)
    gd = -multiply(g_rows, x_cols)                    # (..., nnz) or (..., nnz, k)
    if not vector:
        gd = _sum(gd, axis=-1)
    return [unbroadcast(gd, shape_of(data), batch_ndim(ct, ans)), gb]


sparse_solve_p.def_all(jvp=_solve_jvp_all, vjp=_solve_vjp_all)
# vmap: right-hand sides carry leading axes already (one factorization serves them all);
# batched stored values are a different matrix per example: one solve each (a loop)
sparse_solve_p.defbatch(looping_when(sparse_solve_p, (0,), lambda args, batched, **params:
                                     sparse_solve_p(*args, **params)))

# Rule-checker samples: a well-conditioned nonsymmetric 4 x 4 with 10 stored values.
_ROW = np.array([0, 0, 1, 1, 1, 2, 2, 3, 3, 0])
_COL = np.array([0, 2, 0, 1, 3, 1, 2, 2, 3, 3])
_DATA = np.array([4.0, 1.0, -0.5, 3.0, 0.7, 1.2, 5.0, -1.0, 2.5, 0.3])
_SAMPLE = Structure(_ROW, _COL, (4, 4))
sparse_solve_p.samples = [
    sample(_DATA, (4,), struct=_SAMPLE, trans=False, vector=True, solver=Solver("splu"),
           role="primal"),
    sample(_DATA, (4, 2), struct=_SAMPLE, trans=True, vector=False, solver=Solver("splu"),
           role="primal"),
    # gmres is exact after n = 4 steps; an rtol float32 can reach (the float32 sweep)
    sample(_DATA, (4,), struct=_SAMPLE, trans=False, vector=True,
           solver=Solver("gmres", {"rtol": 1e-6, "atol": 0.0}), role="primal"),
    # small enough for the SymPy oracle: 3 stored values, an integer (constant) b
    sample(np.array([2.0, 0.5, 3.0]), np.array([1, -2]), struct=Structure([0, 0, 1], [0, 1, 1],
           (2, 2)), trans=True, vector=True, solver=Solver("splu"), role="primal"),
]


# --- the front ends ---------------------------------------------------------------------------
def _operands(A, b, who):
    """(data, struct, b as given, vector) for a solve, with SciPy's shape checks."""
    if isinstance(A, TracedSparse):
        data, struct = A.data, A.struct
    elif isinstance(A, spla.LinearOperator) and who != "spsolve":   # matrix-free, constant
        data, struct = np.zeros(0), Structure([], [], A.shape, operator=A)
    elif sp.issparse(A):
        if A.ndim != 2:
            raise ValueError(f"{who}: A must be a 2-D sparse matrix, got shape {A.shape}")
        coo = A.tocoo()
        data, struct = coo.data.copy(), Structure(coo.row, coo.col, coo.shape)
    elif isinstance(A, Box) or isinstance(A, np.ndarray):
        raise TypeError(f"{who}: A of shape {shape_of(A)} is dense; use "
                        f"dualad.scipy.linalg.solve / numpy.linalg.solve, or make it sparse "
                        f"(a traced one with dualad.scipy.sparse.csr_array((data, indices, "
                        f"indptr)))")
    else:
        kinds = "a sparse matrix" if who == "spsolve" else "a sparse matrix or LinearOperator"
        raise TypeError(f"{who}: A must be {kinds}, got {type(A).__name__}")
    n, m = struct.shape
    if n != m:
        raise ValueError(f"{who}: A must be square, got shape {struct.shape}")
    if sp.issparse(b):
        if isinstance(A, TracedSparse) or isinstance(data, Box):
            raise TypeError(f"{who}: a sparse right-hand side with traced A; pass b.toarray()")
        b = b.toarray()
    bs = shape_of(b)
    if len(bs) not in (1, 2) or bs[0] != n:
        raise ValueError(f"{who}: b of shape {bs} does not match A of shape {struct.shape}: "
                         f"expected ({n},) or ({n}, k)")
    dt = np.result_type(unguarded_value(b))
    if isinstance(b, Box) and dt.kind not in "fc":
        raise TypeError(f"{who}: b of dtype {dt} is not differentiable")
    return data, struct, b, len(bs) == 1


def _traced(*xs):
    return any(isinstance(x, Box) for x in xs)


def spsolve(A, b, permc_spec=None, use_umfpack=True):
    """``scipy.sparse.linalg.spsolve``: x = A⁻¹ b for a vector b (shape (n,), or (n, 1),
    which gives (n,) as in SciPy) or a matrix b (n, k). SuperLU (``splu``) with
    ``permc_spec``; ``use_umfpack`` is accepted and ignored. Rules: module docstring."""
    data, struct, b, vector = _operands(A, b, "spsolve")
    if not _traced(data, b):
        return spla.spsolve(struct.matrix(data, "csc"), b, permc_spec=permc_spec,
                            use_umfpack=False)
    column = not vector and shape_of(b)[1] == 1
    x = sparse_solve_p(data, b, struct=struct, trans=False, vector=vector,
                       solver=Solver("splu", {"permc_spec": permc_spec}), role="primal")
    return x[:, 0] if column else x


def _iterative(method, A, b, x0, callback, options):
    data, struct, b, vector = _operands(A, b, method)
    if not vector:
        if shape_of(b)[1] != 1:
            raise ValueError(f"{method}: b must be a vector, got shape {shape_of(b)}")
        b = b[:, 0]
    solver = Solver(method, {k: v for k, v in options.items() if v is not None}, x0, callback)
    if not _traced(data, b):
        x = sparse_solve_p(data, b, struct=struct, trans=False, vector=True, solver=solver,
                           role="primal")
        return x, solver.info
    x = sparse_solve_p(data, b, struct=struct, trans=False, vector=True, solver=solver,
                       role="primal")
    if solver.info != 0:
        warnings.warn(f"{method} did not converge (info={solver.info}); the derivative is "
                      f"that of the exact solution A⁻¹b, which the returned x is not",
                      RuntimeWarning, stacklevel=3)
    return x, solver.info


def cg(A, b, x0=None, *, rtol=1e-5, atol=0.0, maxiter=None, M=None, callback=None):
    """``scipy.sparse.linalg.cg`` (A symmetric positive definite): ``(x, info)``. The
    tangent and adjoint solves are cg with the same rtol, atol, maxiter and M."""
    return _iterative("cg", A, b, x0, callback, dict(rtol=rtol, atol=atol, maxiter=maxiter,
                                                      M=M))


def gmres(A, b, x0=None, *, rtol=1e-5, atol=0.0, restart=None, maxiter=None, M=None,
          callback=None, callback_type=None):
    """``scipy.sparse.linalg.gmres``: ``(x, info)``; tangent solves gmres on A, adjoint
    solves gmres on Aᵀ (with Mᵀ), the same rtol, atol, restart, maxiter."""
    return _iterative("gmres", A, b, x0, callback,
                      dict(rtol=rtol, atol=atol, restart=restart, maxiter=maxiter, M=M,
                           callback_type=callback_type))


def bicgstab(A, b, x0=None, *, rtol=1e-5, atol=0.0, maxiter=None, M=None, callback=None):
    """``scipy.sparse.linalg.bicgstab``: ``(x, info)``; rules as for :func:`gmres`."""
    return _iterative("bicgstab", A, b, x0, callback,
                      dict(rtol=rtol, atol=atol, maxiter=maxiter, M=M))


def minres(A, b, x0=None, *, rtol=1e-5, shift=0.0, maxiter=None, M=None, callback=None,
           show=False, check=False):
    """``scipy.sparse.linalg.minres`` (A symmetric): ``(x, info)``. ``shift`` solves
    (A − shift·I) x = b; the rules then differentiate that matrix."""
    if shift:
        raise NotImplementedError("minres: shift != 0 is not differentiable here; subtract "
                                  "shift * identity from A's stored values instead")
    return _iterative("minres", A, b, x0, callback, dict(rtol=rtol, maxiter=maxiter, M=M))
