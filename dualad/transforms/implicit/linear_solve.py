"""``custom_linear_solve``: x = A⁻¹ b as one differentiable operation, A given as a matrix
or as a matvec ``v ↦ A v`` that may close over traced values.

With A = A(c) (c the values the matvec closes over, made explicit arguments by closure
conversion, :func:`dualad.scipy._closure.closure_convert`):

    JVP   ẋ = A⁻¹ (ḃ − Ȧ x)          Ȧ x = ∂_c [A(c) x] · ċ: one forward sweep of the matvec
    VJP   b̄ = A⁻ᵀ x̄                  one transposed solve
          c̄ = −∂_c [A(c) x]ᵀ b̄       one reverse sweep of the matvec at v = x (Ā = −b̄ xᵀ
                                     for a dense A)

Both rules solve by calling the primitive again (with A, or with Aᵀ: the transposed
system, whose matvec is ``rmatvec`` when given, A itself when ``symmetric``, else the VJP
of the matvec), so they differentiate again: Hessians, grad of grad, jvp of grad. A
batch of tangents or cotangents (vector mode, batched pullbacks) is one solve with many
right-hand sides: one LU factorization reused for all of them (and for the transposed
solves, by ``trans=1``), or one iterative solve per column.

Methods (``method=``): ``"direct"`` (the dense matrix, built by one vector-mode sweep of
the matvec over the identity when only a matvec is given, LU-factored once per value of
c), ``"cg"`` (A symmetric positive definite), ``"gmres"``, ``"bicgstab"``, ``"minres"``
(A symmetric) from ``scipy.sparse.linalg``, matrix-free; ``"auto"``: direct up to
:data:`DENSE_MAX` unknowns (:data:`DENSE_MANY_MAX` for n/10 or more right-hand sides at
once: a Jacobian's worth of tangents), else minres when ``symmetric``, gmres otherwise. A callable
``solve(matvec, b) -> x`` (JAX's convention) runs on plain values.
"""
from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ..api import jvp as _jvp
from ...interpreters.staging.default import Replayed
from ...ops import reshape, stack
from ...ops.core.batch_ops import loop
from ...core.primitive import Primitive, register
from ...core.tracer import shape_of
from ._symmetry import check_symmetric
from ._util import densified, plain, pull, push

DENSE_MAX = 500     # "auto": a dense LU up to this many unknowns, matrix-free beyond,
DENSE_MANY_MAX = 4000   # ... or up to this many with at least n/10 right-hand sides at once
ITERATIVE = ("cg", "gmres", "bicgstab", "minres")
METHODS = ("auto", "direct") + ITERATIVE


class LinearSystem:
    """A square linear map A(c) of size ``n``, known through functions of ``(v, *c)``:

    - ``matvec(v, *c) = A v`` (v of shape (n,)), written with NumPy/registry operations;
    - ``rmatvec(u, *c) = Aᵀ u`` or ``None`` (then the VJP of ``matvec`` in v);
    - ``matrix(*c)``: the plain dense A, or ``None`` (then built from the matvec);
    - ``batched``: ``matvec`` and ``rmatvec`` accept v with leading axes (one vector per
      row: ``v @ a.T``), so a batch of primal right-hand sides needs no loop;
    - ``method``, ``options`` (``rtol``, ``atol``, ``maxiter``, ``restart``, ``M``):
      how it is solved; ``transpose_method`` for the transposed system (a JAX
      ``transpose_solve``), ``symmetric``: A = Aᵀ.

    ``T`` is the transposed system (the same c), sharing the LU factorization. ``stats``
    counts solves (calls of the primitive's value, each with any number of right-hand
    sides), right-hand sides, and matvecs made on plain values, for cost measurements.
    ``jit=True`` (custom_root's ∂_x F) traces the matvec an iterative solve calls once
    and replays it (:class:`dualad.interpreters.staging.default.Replayed`); a user's own matvec
    (``custom_linear_solve``) runs as written.
    """

    __slots__ = ("matvec", "rmatvec", "matrix", "method", "transpose_method", "options",
                 "symmetric", "name", "what", "n", "batched", "transposed", "_T", "_lu_key",
                 "_lu", "stats", "jit", "_replayed", "__weakref__")

    def __init__(self, matvec, n, *, rmatvec=None, matrix=None, method="auto",
                 transpose_method=None, options=None, symmetric=False,
                 name="custom_linear_solve", what="the matrix A", batched=False, jit=False):
        if isinstance(method, str) and method not in METHODS:
            raise ValueError(f"{name}: unknown method {method!r}; use one of "
                             f"{', '.join(METHODS)} or a callable solve(matvec, b) -> x")
        self.matvec, self.rmatvec, self.matrix = matvec, rmatvec, matrix
        self.method, self.transpose_method = method, transpose_method
        self.options = dict(options or {})
        self.symmetric, self.name, self.what, self.n = bool(symmetric), name, what, int(n)
        self.batched = batched      # matvec and rmatvec map leading axes of v row by row
        self.transposed = None      # for the transposed system: the system it transposes
        self._T = self if self.symmetric else None
        self._lu_key = self._lu = None
        self.stats = {"solves": 0, "rhs": 0, "matvecs": 0, "factorizations": 0}
        self.jit, self._replayed = bool(jit), None   # the matvec a Krylov solve replays

    def __repr__(self):
        return f"LinearSystem(n={self.n}, method={self.method!r}" + \
            (", transposed" if self.transposed is not None else "") + ")"

    @property
    def T(self):
        """Aᵀ as a system: matvec ``rmatvec`` (or the VJP of ``matvec``), rmatvec ``matvec``."""
        if self._T is None:
            rmv = self.rmatvec if self.rmatvec is not None else _vjp_transpose(self.matvec,
                                                                              self.n)
            method = self.transpose_method
            if method is None:
                method = "auto" if callable(self.method) else self.method
            t = LinearSystem(rmv, self.n, rmatvec=self.matvec, method=method,
                             transpose_method=self.method, options=self.options,
                             name=self.name, what=self.what + "ᵀ",
                             batched=self.batched and self.rmatvec is not None, jit=self.jit)
            t.transposed, t._T, t.stats = self, self, self.stats
            self._T = t
        return self._T

    # --- plain solves ------------------------------------------------------------------
    def resolved_method(self, k=1):
        """The method for ``k`` right-hand sides: "auto" is direct up to DENSE_MAX
        unknowns, and up to DENSE_MANY_MAX when there are at least n/10 right-hand sides
        (a Jacobian's worth of tangents: one factorization beats k Krylov solves)."""
        m = self.method
        if m == "auto":
            if self.n <= DENSE_MAX or (self.n <= DENSE_MANY_MAX and 10 * k >= self.n):
                return "direct"
            return "minres" if self.symmetric else "gmres"
        return m

    def solve(self, consts, rhs, role):
        """X with A X[j] = rhs[j] for each row of ``rhs`` (k, n), on plain values."""
        self.stats["solves"] += 1
        self.stats["rhs"] += rhs.shape[0]
        method = self.resolved_method(rhs.shape[0])
        if callable(method):
            return self._solve_callable(method, consts, rhs, role)
        if method == "direct":
            base = self.transposed if self.transposed is not None else self
            lu = base.factor(consts, role)
            return lu.solve(rhs.T, self.transposed is not None).T
        return self._solve_iterative(method, consts, rhs, role)

    def plain_matvec(self, consts, dtype):
        n = self.n
        matvec = self.matvec
        if self.jit and all(type(c) in (np.ndarray, float, np.float64) for c in consts):
            # a Krylov solve calls it many times: traced once, replayed after
            if self._replayed is None:
                self._replayed = Replayed(self.matvec, f"{self.name}: A v ({self.what})")
            matvec = self._replayed

        def mv(v):
            self.stats["matvecs"] += 1
            out = plain(matvec(np.asarray(v, dtype).reshape(n), *consts))
            if out.shape != (n,):
                raise ValueError(f"{self.name}: matvec returned shape {out.shape} for a vector "
                                 f"of shape ({n},); A v must have v's shape")
            return out
        return mv

    def dense(self, consts, dtype):
        """The plain matrix A: ``matrix(*c)`` (dense, or ``scipy.sparse``: then SuperLU),
        else the matvec swept over the identity in vector mode (one evaluation of the
        matvec with n directions)."""
        if self.matrix is not None:
            a = self.matrix(*consts)
            a = a if sp.issparse(a) else plain(a)
            if a.shape != (self.n, self.n):
                raise ValueError(f"{self.name}: the matrix has shape {a.shape}, expected "
                                 f"({self.n}, {self.n})")
            return a
        n = self.n
        zero = np.zeros(n, dtype)
        try:
            _, cols = _jvp(lambda v: self.matvec(v, *consts), (zero,), (np.eye(n, dtype=dtype),))
            self.stats["matvecs"] += 1
            return plain(cols).T.copy()
        except (TypeError, NotImplementedError):
            # a matvec that dualad cannot trace (it calls plain SciPy code): column by column
            mv = self.plain_matvec(consts, dtype)
            return np.stack([mv(e) for e in np.eye(n, dtype=dtype)], axis=1)

    def factor(self, consts, role):
        """The LU factorization of A at ``consts``, reused while they are unchanged."""
        key = [plain(c) for c in consts]
        if self._lu is not None and len(key) == len(self._lu_key) and all(
                a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b)
                for a, b in zip(key, self._lu_key)):
            return self._lu
        dtype = np.result_type(*key, np.float64) if key else np.float64
        a = self.dense(consts, dtype)
        if not np.all(np.isfinite(a.data if sp.issparse(a) else a)):
            raise FloatingPointError(f"{self.name}: {self.what} ({self.n} x {self.n}) of the "
                                     f"{role} solve has non-finite entries")
        self.stats["factorizations"] += 1
        lu = Factorization(a, self, role)
        self._lu_key, self._lu = [np.array(k, copy=True) for k in key], lu
        return lu

    def _solve_iterative(self, method, consts, rhs, role):
        dtype = np.result_type(rhs, *[plain(c) for c in consts], np.float32)
        op = spla.LinearOperator((self.n, self.n), matvec=self.plain_matvec(consts, dtype),
                                 dtype=dtype)
        opts = dict(self.options)
        opts.setdefault("rtol", 1e-10 if dtype.itemsize >= 8 else 1e-5)
        opts.setdefault("atol", 0.0)
        if method == "minres":
            opts.pop("atol")
        if method != "gmres":
            opts.pop("restart", None)
        if self.transposed is not None and opts.get("M") is not None and not \
                self.symmetric and method not in ("cg", "minres"):
            opts["M"] = spla.aslinearoperator(opts["M"]).T
        fn = getattr(spla, method)
        out = np.empty(rhs.shape, dtype)
        for j in range(rhs.shape[0]):
            out[j], info = fn(op, rhs[j], **opts)
            if info != 0:
                raise RuntimeError(
                    f"{self.name}: {method} did not converge in the {role} solve (info="
                    f"{info}, rtol={opts['rtol']}, maxiter={opts.get('maxiter')}); the "
                    f"{'derivative' if role != 'primal' else 'solution'} would be wrong. "
                    f"Raise maxiter, loosen rtol, give a preconditioner M, use "
                    f"method='direct', or check that A is nonsingular" +
                    (" and symmetric positive definite (cg)" if method == "cg" else ""))
        return out

    def _solve_callable(self, solve, consts, rhs, role):
        dtype = np.result_type(rhs, *[plain(c) for c in consts], np.float32)
        mv = self.plain_matvec(consts, dtype)
        out = np.empty(rhs.shape, dtype)
        for j in range(rhs.shape[0]):
            x = solve(mv, rhs[j].copy())
            if x is None:
                raise TypeError(f"{self.name}: the solve function returned None for the "
                                f"{role} solve; it must return x with A x = b")
            x = plain(x)
            if x.shape != (self.n,):
                raise ValueError(f"{self.name}: the solve function returned shape {x.shape} "
                                 f"in the {role} solve; expected ({self.n},), b's shape")
            residual = mv(x) - rhs[j]
            scale = np.max(np.abs(rhs[j]), initial=0.0) + np.max(np.abs(mv(x)), initial=0.0)
            if not np.max(np.abs(residual), initial=0.0) <= 1e-6 * scale + 1e-300:
                raise RuntimeError(
                    f"{self.name}: the solve function's x does not solve A x = b in the "
                    f"{role} solve (max |A x − b| = {np.max(np.abs(residual)):.3g}, "
                    f"max |b| = {np.max(np.abs(rhs[j])):.3g}); a derivative from it would "
                    f"be wrong. Solve more accurately" + (
                        ", or give transpose_solve (or symmetric=True) for Aᵀ"
                        if self.transposed is not None else ""))
            out[j] = x
        return out


class Factorization:
    """The LU factors of a dense A (LAPACK, with its condition estimated) or of a
    ``scipy.sparse`` A (SuperLU); ``solve(B, trans)`` solves A X = B (Aᵀ X = B) for the
    columns of B. A singular A raises LinAlgError with the advice to regularise."""

    __slots__ = ("lu", "sparse")

    def __init__(self, a, system, role):
        self.sparse = sp.issparse(a)
        singular = None
        if self.sparse:
            try:
                self.lu = spla.splu(sp.csc_matrix(a))
            except RuntimeError as e:          # "Factor is exactly singular"
                singular = str(e)
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", sla.LinAlgWarning)
                self.lu = sla.lu_factor(a, check_finite=False)
            rcond = _rcond(a, self.lu)
            if not rcond > np.finfo(self.lu[0].dtype).eps * system.n:
                singular = f"reciprocal condition number {rcond:.3g}"
        if singular is not None:
            raise np.linalg.LinAlgError(
                f"{system.name}: {system.what} ({system.n} x {system.n}) of the {role} solve "
                f"is singular to working precision ({singular}); the solution is not a "
                f"differentiable function of its inputs here. Regularise the problem (a ridge "
                f"term, a small multiple of the identity) or check that the solution is "
                f"isolated")

    def solve(self, b, trans=False):
        if self.sparse:
            b = np.asarray(b)
            if np.iscomplexobj(b) and self.lu.U.dtype.kind != "c":
                return self.solve(b.real, trans) + 1j * self.solve(b.imag, trans)
            return self.lu.solve(np.ascontiguousarray(b), trans="T" if trans else "N")
        return sla.lu_solve(self.lu, b, trans=1 if trans else 0, check_finite=False)


def _rcond(a, lu):
    """LAPACK's estimate of 1/cond₁(A) from A's LU factors."""
    gecon, = sla.get_lapack_funcs(("gecon",), (lu[0],))
    rcond, info = gecon(lu[0], np.linalg.norm(a, 1), norm="1")
    return float(rcond)


def _vjp_transpose(matvec, n):
    """``u ↦ Aᵀ u`` from a reverse sweep of the (linear) ``v ↦ matvec(v, *c)`` at v = 0."""
    def rmatvec(u, *consts):
        zero = np.zeros(n, np.result_type(plain(u), np.float64))
        return pull(lambda v: matvec(v, *consts), (zero,), u, (n,))[0]
    rmatvec.__name__ = f"transpose_of_{getattr(matvec, '__name__', 'matvec')}"
    return rmatvec


# --- the primitive ---------------------------------------------------------------------
def _impl(b, *consts, system, role):
    b = np.asarray(b)
    if b.dtype.kind not in "fc":
        b = b.astype(np.float64)
    n = system.n
    rhs = b.reshape(-1, n)          # leading axes: independent right-hand sides
    if system.symmetric and role == "primal":
        check_symmetric(system, consts)
    # float32 in, float32 out (the factorization may run in float64)
    dtype = np.result_type(b, *[np.asarray(c) for c in consts], np.float32)
    return system.solve(consts, rhs, role).reshape(b.shape).astype(dtype, copy=False)


linear_solve_p = register(Primitive("custom_linear_solve", _impl, sparsity="dense"))


def _matvec_at(system, x, consts):
    """c ↦ A(c) x as a function of the constants, for ``x`` of shape S + (n,) (each of the
    leading S a separate vector)."""
    n = system.n
    lead = tuple(shape_of(x)[:-1])
    if not lead or system.batched:
        return lambda *c: system.matvec(x, *c)

    def many(*c):   # a batch of primal right-hand sides: the matvec one vector at a time
        flat = reshape(x, (-1, n))
        return reshape(stack([system.matvec(flat[i], *c) for i in range(shape_of(flat)[0])]),
                       lead + (n,))
    return many


def _jvp_all(tangents, ans, b, *consts, system, role):
    """ẋ = A⁻¹ (ḃ − Ȧ x): one solve of the combined right-hand sides."""
    tb = tangents[0]
    rhs = None if tb is None else densified(tb)
    a_dot_x = push(_matvec_at(system, ans, consts), consts, tangents[1:])
    if a_dot_x is not None:
        rhs = -a_dot_x if rhs is None else rhs - a_dot_x
    return linear_solve_p(rhs, *consts, system=system, role="tangent")


def _vjp_all(ct, ans, b, *consts, system, role):
    """b̄ = A⁻ᵀ x̄ (one transposed solve); c̄ = −∂_c[A(c) x]ᵀ b̄ (one reverse sweep)."""
    ct = densified(ct)
    gb = linear_solve_p(ct, *consts, system=system.T, role="adjoint")
    if not consts:
        return [gb]
    gc = pull(_matvec_at(system, ans, consts), consts, -gb, tuple(shape_of(ans)))
    return [gb] + gc


linear_solve_p.def_all(jvp=_jvp_all, vjp=_vjp_all)


def _batch(args, batched, *, system, role):
    """vmap: a batch of right-hand sides b with a shared operator is the primitive itself
    (its leading axes are independent right-hand sides: one factorization or one Krylov
    solve per column); an operator whose constants differ per example is one system per
    example, solved in a loop."""
    if not any(batched[1:]):
        return linear_solve_p(*args, system=system, role=role)
    return loop(linear_solve_p, args, batched, dict(system=system, role=role))


_batch.loops_on = ("1+ (the operator's constants)",)   # the coverage table says so
linear_solve_p.defbatch(_batch)

__all__ = ["LinearSystem", "Factorization", "linear_solve_p", "DENSE_MAX", "DENSE_MANY_MAX"]
