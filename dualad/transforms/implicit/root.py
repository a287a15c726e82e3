"""``custom_root``: the root x*(θ) of F(x, θ) = 0 found by the user's solver, differentiated
by the implicit function theorem.

F(x*(θ), θ) = 0 for all θ gives ∂_x F · ẋ + ∂_θ F · θ̇ = 0, so with J = ∂_x F at (x*, θ):

    JVP   ẋ = −J⁻¹ (∂_θ F · θ̇)            one forward sweep of F in θ, one solve with J
    VJP   λ = J⁻ᵀ x̄,  θ̄ = −(∂_θ F)ᵀ λ      one solve with Jᵀ, one reverse sweep of F in θ

The solves are :func:`custom_linear_solve`'s primitive with the matvec v ↦ ∂_x F v (a JVP
of F in x) and its constants (x*, θ): differentiating the rules again differentiates
that solve (second derivatives of F appear through its own rules), so Hessians, grad of
grad and jvp of grad of a loss of x* are exact. J is dense (one vector-mode sweep of F
over the identity, LU-factored once and reused by every tangent and adjoint solve) up
to :data:`DENSE_MAX` unknowns, matrix-free beyond (gmres, or minres when ``symmetric``:
each iteration one JVP, or one VJP for Jᵀ, of F).

θ is every array in ``params`` (pytrees allowed) and every traced value ``optimality``
closes over (closure conversion). ``solve`` runs on plain values (its closure's traced
values replaced by their values) and is never differentiated.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ...ops import concatenate, reshape
from ...core.primitive import Primitive, register
from ...scipy._closure import closure_convert
from ...core.tracer import Box, primal_value, shape_of
from ...core.tree import flatten
from ._util import Flat, plain, pull, push
from .linear_solve import DENSE_MAX, METHODS, LinearSystem, linear_solve_p

if TYPE_CHECKING:
    from collections.abc import Callable

_NAME = "custom_root"
DEFAULT_TOL = {2: 3e-2, 4: 1e-3, 8: 1e-6}   # by itemsize: the accepted Newton step, relative


def ravel_any(tree):
    """All leaves of ``tree`` flattened into one vector (registry operations)."""
    leaves, _ = flatten(tree)
    parts = [reshape(x if isinstance(x, Box) else np.asarray(x), (-1,)) for x in leaves]
    if not parts:
        return np.zeros(0)
    return parts[0] if len(parts) == 1 else concatenate(parts, axis=0)


class RootProblem:
    """One call of a root function: the plain ``solve``, the converted ``optimality``
    ``F(x_tree, *params, *closed)``, the parameter leaves (the traced ones are the
    primitive's arguments ``traced[k]``, the rest kept as they are), the solution's
    structure ``flat`` (known once solved), the tolerance, and ``linear``: the system
    J = ∂_x F(x*, θ) with constants ``(x*, *args)``."""

    __slots__ = ("solve", "optimality", "leaves", "rebuild", "traced", "flat", "tol",
                 "has_aux", "aux", "linear", "method", "symmetric", "options",
                 "transpose_method", "jacobian", "jit", "__weakref__")

    def __init__(self, solve, optimality, leaves, rebuild, traced, *, tol, has_aux, method,
                 symmetric, options, transpose_method, jacobian=None, jit=True):
        self.solve, self.optimality = solve, optimality
        self.leaves, self.rebuild, self.traced = leaves, rebuild, traced
        self.flat = self.aux = self.linear = None
        self.tol, self.has_aux = tol, has_aux
        self.method, self.symmetric, self.options = method, symmetric, options
        self.transpose_method = transpose_method
        self.jacobian = jacobian     # the user's ∂_x F(x, *params) on plain values, or None
        self.jit = jit               # Krylov matvecs traced once and replayed

    def __repr__(self):
        return f"RootProblem(n={None if self.flat is None else self.flat.n})"

    def params(self, args):
        """The parameters' pytree with the traced leaves taken from ``args``."""
        full = list(self.leaves)
        for i, a in zip(self.traced, args):
            full[i] = a
        return self.rebuild(full)

    def F(self, x_flat, *args):
        """F(x, θ) flattened, with x given flat and θ = the primitive's arguments."""
        k = len(self.traced)
        out = self.optimality(self.flat.unravel(x_flat), *self.params(args[:k]), *args[k:])
        if out is None:
            raise TypeError(f"{_NAME}: optimality returned None; it must return F(x, *params), "
                            f"zero at the solution")
        return ravel_any(out)

    def make_linear(self):
        n = self.flat.n

        def matvec(v, x, *args):          # ∂_x F v: one forward sweep of F in x
            return push(lambda x_: self.F(x_, *args), (x,), (v,))

        def rmatvec(u, x, *args):         # (∂_x F)ᵀ u: one reverse sweep of F in x
            return pull(lambda x_: self.F(x_, *args), (x,), u, (n,))[0]

        def jacobian(x, *args):           # ∂_x F: one vector-mode sweep over the identity
            if self.jacobian is not None:     # the user's (dense or scipy.sparse)
                return self.jacobian(self.flat.unravel(x), *self.params(args))
            eye = np.eye(n, dtype=np.result_type(plain(x), np.float64))
            return plain(push(lambda x_: self.F(x_, *args), (x,), (eye,))).T
        self.linear = LinearSystem(matvec, n, rmatvec=rmatvec, matrix=jacobian,
                                   method=self.method, transpose_method=self.transpose_method,
                                   options=self.options, symmetric=self.symmetric, name=_NAME,
                                   what="∂F/∂x (the Jacobian of optimality in x)", jit=self.jit)


def _root_impl(*args, problem):
    params = problem.params(args[:len(problem.traced)])
    out = problem.solve(*params)
    if problem.has_aux:
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise TypeError(f"{_NAME}: with has_aux=True, solve must return (x, aux), got "
                            f"{type(out).__name__}")
        out, problem.aux = out
    x_flat = _solution(out, problem)
    r = plain(problem.F(x_flat, *args))
    n = problem.flat.n
    if r.shape != (n,):
        raise ValueError(f"{_NAME}: optimality returned {r.size} value(s) for {n} unknown(s) "
                         f"(solution of shape {_shapes(problem)}); the implicit function "
                         f"theorem needs as many equations as unknowns (for a minimum, use "
                         f"the gradient as the optimality condition)")
    if problem.linear is None:
        problem.make_linear()
    _check_residual(problem, x_flat, r, args)
    return x_flat


def _shapes(problem):
    s = problem.flat.shapes
    return s[0] if problem.flat.single else s


def _solution(out, problem):
    if out is None:
        raise TypeError(f"{_NAME}: solve returned None; it must return the solution x (an "
                        f"array or a pytree of arrays)")
    leaves, _ = flatten(out)
    for x in leaves:
        if isinstance(x, Box):
            raise TypeError(f"{_NAME}: solve returned a traced value (shape {shape_of(x)}): "
                            f"solve runs on plain values and must not use traced ones (a "
                            f"global, or an object custom_root cannot see into). Compute the "
                            f"solution from solve's own arguments; the derivative comes from "
                            f"optimality")
    arrays = []
    for i, x in enumerate(leaves):
        a = np.asarray(x)
        if a.dtype.kind == "c":
            raise TypeError(f"{_NAME}: solve returned a complex solution (leaf {i}, dtype "
                            f"{a.dtype}); custom_root differentiates real roots: split it "
                            f"into real and imaginary parts")
        if a.dtype.kind not in "f":
            if a.dtype.kind not in "iub":
                raise TypeError(f"{_NAME}: solve returned leaf {i} of dtype {a.dtype}; return "
                                f"a floating-point array")
            a = a.astype(np.float64)
        arrays.append(a)
    _, rebuild = flatten(out)
    flat = Flat(rebuild(arrays))
    if flat.n == 0:
        raise ValueError(f"{_NAME}: solve returned an empty solution")
    if problem.flat is not None and problem.flat.shapes != flat.shapes:
        raise ValueError(f"{_NAME}: solve returned shapes {flat.shapes}, earlier "
                         f"{problem.flat.shapes}")
    problem.flat = flat
    x_flat = np.concatenate([a.reshape(-1) for a in arrays])
    if not np.all(np.isfinite(x_flat)):
        raise FloatingPointError(f"{_NAME}: solve returned a non-finite solution "
                                 f"{x_flat if x_flat.size < 8 else ''}; the solver failed")
    return x_flat


def _check_residual(problem, x, r, args):
    """Refuse a non-solution: the Newton step J⁻¹ F(x) (dense J), or ‖F‖ against ‖J‖·‖x‖
    (matrix-free), must be within ``tol`` of ‖x‖ (at least 1)."""
    tol = problem.tol
    if tol is None:
        tol = DEFAULT_TOL.get(x.dtype.itemsize, 1e-6)
    if tol is False:
        return
    size = max(1.0, float(np.max(np.abs(x))))
    system = problem.linear
    consts = (x,) + tuple(args)
    if not np.all(np.isfinite(r)):
        raise FloatingPointError(f"{_NAME}: optimality is not finite at solve's solution")
    if system.resolved_method() == "direct":
        lu = system.factor(consts, "primal")
        step = lu.solve(r)
        err, what = float(np.max(np.abs(step))), "the Newton step |J⁻¹ F(x)|"
        if err <= tol * size:
            return
    else:
        z = np.where(np.arange(x.size) % 2, 1.0, -1.0)
        jz = plain(system.matvec(z, *consts))
        scale = float(np.max(np.abs(jz)))
        err, what = float(np.max(np.abs(r))), f"|F(x)| (against |J| ≈ {scale:.3g})"
        if err <= tol * size * max(scale, np.finfo(float).tiny):
            return
    raise RuntimeError(
        f"{_NAME}: the solver did not converge: at the x it returned, max {what} = {err:.3g} "
        f"(max |F(x)| = {float(np.max(np.abs(r))):.3g}), more than tol = {tol:g} times "
        f"max(1, |x|) = {size:.3g}. The implicit derivative is only that of a root; solve "
        f"more accurately (tighter tolerance, more iterations, a better initial guess), or "
        f"pass tol= to accept it")


root_p = register(Primitive("custom_root", _root_impl, sparsity="dense"))


def _root_jvp_all(tangents, ans, *args, problem):
    """ẋ = −J⁻¹ (∂_θ F · θ̇)."""
    f_theta = push(lambda *a: problem.F(ans, *a), args, tangents)
    return linear_solve_p(-f_theta, ans, *args, system=problem.linear, role="tangent")


def _root_vjp_all(ct, ans, *args, problem):
    """λ = J⁻ᵀ x̄, θ̄ = −(∂_θ F)ᵀ λ."""
    lam = linear_solve_p(ct, ans, *args, system=problem.linear.T, role="adjoint")
    return pull(lambda *a: problem.F(ans, *a), args, -lam, (problem.flat.n,))


root_p.def_all(jvp=_root_jvp_all, vjp=_root_vjp_all)


def custom_root(solve: Callable[..., Any], optimality: Callable[..., Any], *,
                linear_solve: str | Callable[..., Any] = "auto",
                transpose_solve: Callable[..., Any] | None = None, symmetric: bool = False,
                jacobian: Callable[..., Any] | None = None, tol: float | bool | None = None,
                has_aux: bool = False, rtol: float | None = None, atol: float | None = None,
                maxiter: int | None = None, restart: int | None = None, M: Any = None,
                jit: bool = True) -> Callable[..., Any]:
    r"""Make a root finder differentiable by the implicit function theorem.

    Returns ``root`` with ``root(*params) = x*``, where ``x* = solve(*params)``
    satisfies :math:`F(x^*, \theta) = 0` for ``F = optimality``. The solver runs
    on plain values and is never differentiated; :math:`F(x^*(\theta), \theta) = 0`
    for all :math:`\theta` gives, with :math:`J = \partial_x F(x^*, \theta)`,

    .. math::

        \dot x = -J^{-1}\,(\partial_\theta F\,\dot\theta), \qquad
        \bar\theta = -(\partial_\theta F)^T J^{-T}\,\bar x,

    one forward (reverse) sweep of ``F`` in :math:`\theta` and one solve with
    :math:`J` (:math:`J^T`), in both modes and to any order (Hessians of a
    loss of :math:`x^*` are exact). :math:`\theta` is every array in
    ``params`` (pytrees allowed) and every traced value ``optimality`` closes
    over.

    Parameters
    ----------
    solve : callable
        ``solve(*params) -> x*`` (an array or a pytree of arrays), your own
        solver (SciPy's, Newton's, anything), called on plain values; with
        ``has_aux=True`` it returns ``(x*, aux)``.
    optimality : callable
        ``optimality(x, *params) -> F``, written with NumPy operations (it is
        differentiated, to second order for Hessians), returning as many values
        as ``x`` has.
    linear_solve : str or callable, default "auto"
        How the systems with :math:`J` are solved: ``"auto"`` (dense LU up to
        500 unknowns, else matrix-free gmres, or minres when ``symmetric``),
        ``"direct"``, ``"gmres"``, ``"bicgstab"``, ``"cg"``, ``"minres"``, or a
        callable ``solve(matvec, b) -> x`` on plain values.
    transpose_solve : callable, optional
        With a callable ``linear_solve``, the one for :math:`J^T`.
    symmetric : bool, default False
        Declare :math:`J` symmetric (the Hessian of a minimised function).
    jacobian : callable, optional
        ``jacobian(x, *params)``: :math:`\partial_x F` at a solution on plain
        values, dense or ``scipy.sparse`` (n x n, columns in the order of ``x``'s
        flattened leaves); the direct solves then factor it instead of building
        it from n directions of ``F``.
    tol : float or False, optional
        How far from a root the returned ``x`` may be (relative Newton step,
        default 1e-6 in float64); ``False`` switches the check off.
    has_aux : bool, default False
        ``solve`` returns ``(x*, aux)`` and ``root`` then returns ``(x*, aux)``;
        ``aux`` is not differentiated.
    rtol : float, optional
        Relative tolerance of an iterative ``linear_solve``.
    atol : float, optional
        Absolute tolerance of an iterative ``linear_solve``.
    maxiter : int, optional
        Iteration limit of an iterative ``linear_solve``.
    restart : int, optional
        The restart length of gmres.
    M : array_like, LinearOperator or callable, optional
        A preconditioner for an iterative ``linear_solve``.
    jit : bool, default True
        An iterative ``linear_solve`` calls ∂_x F·v (or its transpose) once per
        iteration: it is traced once by ``dualad.jit`` and replayed (falling back to the
        eager path, with one ``JitFallbackWarning``, when it cannot be traced).
        ``False`` runs it eagerly every time (docs/jit.md: what this changes for an
        ``optimality`` with side effects).

    Returns
    -------
    callable
        ``root(*params)`` returning ``x*`` (or ``(x*, aux)``), differentiable in
        ``params``. Parameters are positional only.

    Raises
    ------
    TypeError
        If ``solve`` or ``optimality`` is not callable, or ``root`` is called
        with keywords.
    ValueError
        If ``linear_solve`` is an unknown method.
    RuntimeError
        When differentiating, if the solver's ``x`` is not a root within ``tol``
        (never a silently wrong derivative).
    numpy.linalg.LinAlgError
        When differentiating, if :math:`J` is singular at the root.

    See Also
    --------
    dualad.custom_linear_solve : Linear systems, differentiated the same way.
    dualad.lax.custom_root : JAX's spelling.

    Examples
    --------
    :math:`\sqrt a` as the root of :math:`x^2 - a`, found by Newton's method;
    its derivative :math:`1/(2\sqrt a)` comes from the equation, not the loop:

    >>> def newton(a):
    ...     x = 1.0
    ...     for _ in range(30):
    ...         x = 0.5 * (x + a / x)
    ...     return x
    >>> sqrt = dualad.custom_root(newton, lambda x, a: x ** 2 - a)
    >>> print(float(sqrt(4.0)), float(dualad.grad(sqrt)(4.0)))
    2.0 0.25
    """
    if not callable(solve) or not callable(optimality):
        bad = "solve" if not callable(solve) else "optimality"
        raise TypeError(f"{_NAME}: {bad} must be a callable, got "
                        f"{type(solve if bad == 'solve' else optimality).__name__}")
    if not callable(linear_solve) and linear_solve not in METHODS:
        raise ValueError(f"{_NAME}: unknown linear_solve {linear_solve!r}; use one of "
                         f"{', '.join(METHODS)} or a callable solve(matvec, b) -> x")
    if jit is not True and jit is not False:
        raise TypeError(f"{_NAME}: jit= takes True or False, got {jit!r}")
    options = {k: v for k, v in dict(rtol=rtol, atol=atol, maxiter=maxiter, restart=restart,
                                     M=M).items() if v is not None}

    def root(*params: Any, **keywords: Any) -> Any:
        if keywords:
            raise TypeError(f"{_NAME}: root(...) takes its parameters positionally, got the "
                            f"keyword(s) {', '.join(sorted(keywords))}: pass them in the "
                            f"order solve(*params) and optimality(x, *params) take them, or "
                            f"close over them in both functions")
        leaves, rebuild = flatten(params)
        traced = [i for i, x in enumerate(leaves) if isinstance(x, Box)]
        opt, closed = closure_convert(optimality)
        plain_solve = _plain_solve(solve)
        if not traced and not closed:
            return plain_solve(*params)
        method = "direct" if jacobian is not None and linear_solve == "auto" else linear_solve
        problem = RootProblem(plain_solve, opt, leaves, rebuild, traced, tol=tol,
                              has_aux=has_aux, method=method, symmetric=symmetric,
                              options=options, transpose_method=transpose_solve,
                              jacobian=None if jacobian is None else _plain_solve(jacobian),
                              jit=jit)
        x_flat = root_p(*[leaves[i] for i in traced], *closed, problem=problem)
        x = problem.flat.unravel(x_flat)
        return (x, problem.aux) if has_aux else x

    root.__name__ = f"custom_root({getattr(solve, '__name__', 'solve')})"
    return root


def _plain_solve(solve):
    """``solve`` with its arguments and the traced values in its closure made plain."""
    conv, found = closure_convert(solve)
    values = tuple(primal_value(v) for v in found)

    def run(*params):
        leaves, rebuild = flatten(params)
        plain_params = rebuild([primal_value(x) for x in leaves])
        return conv(*plain_params, *values) if found else solve(*plain_params)
    return run


__all__ = ["custom_root", "root_p", "RootProblem", "DENSE_MAX"]
