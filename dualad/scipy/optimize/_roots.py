"""``root``, ``fsolve`` and ``fixed_point``: SciPy's solvers, differentiable solutions.

SciPy solves ``fun(x, *args) = 0`` on the primal values; the solution x* is then made a
function of the traced values θ the problem depends on (traced ``args``, closed-over
traced values) by the implicit function theorem on F(x, θ) = fun(x, *args) (for
``fixed_point``, F = func(x, *args) − x): ẋ = −(∂F/∂x)⁻¹ ∂F/∂θ θ̇, one linear solve with
the Jacobian at x* per direction (see :mod:`._common`). ``jac``/``fprime`` serve SciPy's
solve only: the derivative uses ∂F/∂x computed by dualad from ``fun``.
"""
from __future__ import annotations

import numpy as np
import scipy.optimize as _so

from ._common import (bind, start, check_args, check_converged, flat_residual,
                      plain, plain_callable, require_callable, residual_norm, solution)


def _first(api, g, jac_in_output):
    """``fun`` without the Jacobian it returns as a second output when ``jac=True``."""
    if not jac_in_output:
        return g

    def f(x, *theta):
        out = g(x, *theta)
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise ValueError(f"{api}: with jac=True, fun must return (f, jacobian), got "
                             f"{type(out).__name__}")
        return out[0]
    f.__name__ = getattr(g, "__name__", "fun")
    return f


def root(fun, x0, args=(), method="hybr", jac=None, tol=None, callback=None, options=None):
    """``scipy.optimize.root``, with ``res.x`` (and ``res.fun``) differentiable in the
    traced ``args`` and the traced values ``fun`` closes over, in both modes and to any
    order, by the implicit function theorem on fun(x, *args) = 0.

    Same signature and result as SciPy; every method. The solve is SciPy's, on plain
    values. Differentiating an unconverged solve (``res.success`` False) raises
    :class:`ConvergenceError`. ``x0`` only starts the solve: the solution's derivative
    in it is 0."""
    api = "root"
    require_callable(api, "fun", fun)
    args = check_args(api, args)
    g, theta = bind(fun, args, api=api)
    x0 = start(api, x0)
    if not theta:
        return _so.root(fun, x0, args=args, method=method, jac=jac, tol=tol,
                        callback=callback, options=options)
    jac_in_output = not callable(jac) and bool(jac)
    res = _so.root(plain(api, "fun", g, theta), x0, method=method,
                   jac=plain_callable(api, "jac", jac, args) if callable(jac) else jac,
                   tol=tol, callback=callback, options=options)
    F = flat_residual(api, "fun", _first(api, g, jac_in_output), np.shape(res.x))
    plain_F = plain(api, "fun", F, theta)
    check_converged(api, res.success, res.message, residual_norm(plain_F, res.x))
    res.x = solution(api, F, res.x, theta)
    res.fun = F(res.x, *theta)
    return res


def fsolve(func, x0, args=(), fprime=None, full_output=0, col_deriv=0, xtol=1.49012e-08,
           maxfev=0, band=None, epsfcn=None, factor=100, diag=None):
    """``scipy.optimize.fsolve`` (MINPACK's hybrd/hybrj), the returned x differentiable in
    the traced ``args`` and closed-over traced values by the implicit function theorem on
    func(x, *args) = 0.

    Where SciPy only warns about an unconverged solve (ier 2–5: too many calls, slow
    progress), a solve being differentiated raises :class:`ConvergenceError` instead:
    the derivative of a non-solution would be silently wrong. With ``full_output`` the
    infodict, ier and message are SciPy's (``infodict['fvec']`` plain)."""
    api = "fsolve"
    require_callable(api, "func", func)
    args = check_args(api, args)
    g, theta = bind(func, args, api=api)
    x0 = start(api, x0)
    kw = dict(col_deriv=col_deriv, xtol=xtol, maxfev=maxfev, band=band, epsfcn=epsfcn,
              factor=factor, diag=diag)
    if not theta:
        return _so.fsolve(func, x0, args=args, fprime=fprime, full_output=full_output, **kw)
    x, info, ier, msg = _so.fsolve(plain(api, "func", g, theta), x0,
                                   fprime=plain_callable(api, "fprime", fprime, args),
                                   full_output=True, **kw)
    F = flat_residual(api, "func", g, np.shape(x))
    check_converged(api, ier == 1, msg, residual_norm(plain(api, "func", F, theta), x))
    x = solution(api, F, x, theta)
    return (x, info, ier, msg) if full_output else x


def fixed_point(func, x0, args=(), xtol=1e-08, maxiter=500, method="del2"):
    """``scipy.optimize.fixed_point``: x = func(x, *args), the returned x differentiable in
    the traced ``args`` and closed-over traced values by the implicit function theorem
    on F(x) = func(x, *args) − x (∂F/∂x = ∂func/∂x − I, invertible where the fixed point
    is attracting). SciPy raises RuntimeError when the iteration does not converge."""
    api = "fixed_point"
    require_callable(api, "func", func)
    args = check_args(api, args)
    g, theta = bind(func, args, api=api)
    x0 = start(api, x0)
    if not theta:
        return _so.fixed_point(func, x0, args=args, xtol=xtol, maxiter=maxiter, method=method)
    x = _so.fixed_point(plain(api, "func", g, theta), x0, xtol=xtol, maxiter=maxiter,
                        method=method)
    shape = np.shape(x)
    mapped = flat_residual(api, "func", g, shape)
    F = lambda z, *th: mapped(z, *th) - z   # noqa: E731
    return solution(api, F, x, theta)


__all__ = ["root", "fsolve", "fixed_point"]
