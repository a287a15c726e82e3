"""The optimality condition of a minimum, with its active set fixed, differentiated by
the implicit function theorem (shared by ``minimize`` and ``least_squares``).

For an objective φ(x, θ) at SciPy's minimizer x*:

- **no active bound or constraint**: stationarity F(x, θ) = ∇ₓφ(x, θ) = 0, whose
  Jacobian is the Hessian ∇²ₓφ;
- **active bounds only**: F_i = x_i − b_i(θ) for an active component (held at its bound:
  derivative 0, or db_i when the bound is traced) and F_i = ∂φ/∂x_i for the others;
- **active constraints** c_a(x, θ) = b_a(θ) (equalities, inequalities at a side, and
  active bounds among them as rows x_i = b_i): the KKT system in z = (x, λ),

      F(z, θ) = ( ∇ₓφ(x, θ) + J_a(x, θ)ᵀ λ ,  c_a(x, θ) − b_a(θ) ) = 0,

  with λ* recovered at x* by least squares from ∇φ + J_aᵀλ = 0 (exact at a KKT point
  with J_a of full row rank; SciPy's methods return multipliers, if at all, in differing
  conventions). Its Jacobian is the KKT matrix [[∇²L, J_aᵀ], [J_a, 0]].
"""
from __future__ import annotations

__all__ = ["stationary_point"]

import warnings

import numpy as np

from ...transforms.api import grad as _grad, vjp as _vjp
from ...core.tracer import primal_value
from ._active import ACTIVE_TOL, ZERO_TOL
from ._common import DegenerateSolutionWarning, check_converged, solution


def _report(api, what, depth):
    warnings.warn(f"{api}: degenerate active set at the solution: {what}. The solution is "
                  f"not differentiable there; the derivative returned holds the active set "
                  f"fixed (one-sided)", DegenerateSolutionWarning, stacklevel=depth)


def _split(theta, sizes):
    out, k = [], 0
    for s in sizes:
        out.append(theta[k:k + s])
        k += s
    return out


def stationary_point(api, phi, theta_phi, x_star, bounds=None, constraints=(),
                     status=(True, "")):
    """x(θ), SciPy's minimizer ``x_star`` of ``φ(x, *θ_phi)`` subject to ``bounds``
    (:class:`._active.BoxBounds` or None) and ``constraints`` (:class:`._active.Constraint`
    records), differentiable in θ = θ_phi + the bounds' and constraints' traced values.
    ``status`` is SciPy's (success, message), checked against the KKT residual
    (:func:`._common.check_converged`)."""
    x_star = np.asarray(x_star, dtype=float)
    n = x_star.size
    groups = [tuple(theta_phi), bounds.theta if bounds is not None else ()]
    groups += [c.theta for c in constraints]
    theta = tuple(v for grp in groups for v in grp)
    sizes = [len(grp) for grp in groups]
    p_phi = tuple(primal_value(t) for t in theta_phi)
    f_star = float(phi(x_star, *p_phi))
    g_star = np.asarray(_grad(lambda x: phi(x, *p_phi))(x_star), dtype=float)
    gradient = lambda x, th: _grad(lambda y: phi(y, *th))(x)   # noqa: E731

    mask, at_hi = np.zeros(n, bool), np.zeros(n, bool)
    if bounds is not None:
        mask, at_hi, degenerate = bounds.active(x_star, g_star, f_star)
        if degenerate.size:
            _report(api, f"x[{degenerate.tolist()[:10]}] at a bound with zero gradient", 4)
    rows = _active_rows(constraints, x_star)
    if not rows:
        check_converged(api, *status, float(np.max(np.abs(g_star[~mask]), initial=0.0)),
                        f_star)
        if not mask.any():
            F = lambda x, *th: gradient(x, th[:sizes[0]])   # noqa: E731
            return solution(api, F, x_star, theta, symmetric=True)
        free, held = (~mask).astype(float), mask.astype(float)

        def F(x, *th):
            t_phi, t_b = _split(th, sizes[:2])
            return free * gradient(x, t_phi) + held * (x - bounds.targets(t_b, at_hi))
        return solution(api, F, x_star, theta)
    return _kkt(api, phi, x_star, f_star, g_star, theta, sizes, bounds, mask, at_hi,
                constraints, rows, status)


def _active_rows(constraints, x_star):
    """Per constraint: (its index, the active component indices, which sit at the upper
    side, which are equalities), for those with an active component."""
    rows = []
    for k, con in enumerate(constraints):
        c = np.asarray(primal_value(con.fn(x_star, *(primal_value(t) for t in con.theta_c))),
                       dtype=float)
        lo, hi = con.lower.plain, con.upper.plain
        eq = lo == hi
        at_lo = np.isfinite(lo) & (np.abs(c - lo) <= _tol(lo))
        at_hi = np.isfinite(hi) & (np.abs(c - hi) <= _tol(hi)) & ~at_lo
        act = eq | at_lo | at_hi
        if act.any():
            idx = np.flatnonzero(act)
            rows.append((k, idx, at_hi[idx] & ~eq[idx], eq[idx]))
    return rows


def _tol(b):
    return ACTIVE_TOL * np.maximum(1, np.where(np.isfinite(b), np.abs(b), 1))


def _kkt(api, phi, x_star, f_star, g_star, theta, sizes, bounds, mask, at_hi, constraints,
         rows, status):
    n = x_star.size
    bidx = np.flatnonzero(mask)
    b_hi = at_hi[bidx]

    def c_active(x, th):
        """c_a(x, θ) − b_a(θ): the active constraint rows, then the active bound rows."""
        parts_theta = _split(th, sizes)
        t_b, t_cons = parts_theta[1], parts_theta[2:]
        parts = []
        for k, idx, hi_side, _ in rows:
            con = constraints[k]
            t_c, t_lo, t_hi = con.split(t_cons[k])
            c = con.fn(x, *t_c)
            lo, hi = con.lower.values(t_lo), con.upper.values(t_hi)
            target = np.where(hi_side, _take(hi, idx), _take(lo, idx))
            parts.append(_take(c, idx) - target)
        if bidx.size:
            parts.append(_take(x, bidx) - _take(bounds.targets(t_b, at_hi), bidx))
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    p_theta = tuple(primal_value(t) for t in theta)
    _, pullback = _vjp(lambda x: c_active(x, p_theta), x_star)
    m = sum(r[1].size for r in rows) + bidx.size
    J = np.asarray(pullback(np.eye(m))[0], dtype=float).reshape(m, n)
    lam = np.linalg.lstsq(J.T, -g_star, rcond=None)[0]
    kkt = np.concatenate([g_star + J.T @ lam,
                          np.asarray(c_active(x_star, p_theta), dtype=float)])
    check_converged(api, *status, float(np.max(np.abs(kkt))), f_star)
    inequality = np.concatenate([~r[3] for r in rows] + [np.ones(bidx.size, bool)])
    small = np.abs(lam) <= ZERO_TOL * max(1.0, abs(f_star))
    if np.any(inequality & small):
        _report(api, f"active inequality rows {np.flatnonzero(inequality & small).tolist()[:10]}"
                     f" (constraints, then bounds) with zero multiplier", 5)
    z_star = np.concatenate([x_star.reshape(-1), lam])

    def F(z, *th):
        x, lam = z[:n], z[n:]
        t_phi = th[:sizes[0]]
        lagrangian = lambda y: phi(y, *t_phi) + np.sum(lam * c_active(y, th))  # noqa: E731
        return np.concatenate([_grad(lagrangian)(x), c_active(x, th)])
    z = solution(api, F, z_star, theta, symmetric=True)
    return z[:n]


def _take(v, idx):
    return v[idx]
