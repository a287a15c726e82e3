"""Scalar root finding: ``brentq``, ``brenth``, ``bisect``, ``ridder``, ``toms748``,
``newton`` and ``root_scalar``, the root differentiable by the implicit function theorem.

For f(x*, θ) = 0 with f'(x*) ≠ 0, dx*/dθ = −(∂f/∂θ)/(∂f/∂x) at x* (a division: the
1×1 linear solve). The bracket and starting points only locate the root: its derivative
in them is 0, so traced brackets are used at their primal values. ``fprime``/``fprime2``
serve SciPy's iteration; ∂f/∂x for the derivative is dualad's. ``newton`` with an array
``x0`` solves independent scalar problems (SciPy's vectorized Newton): the Jacobian is
diagonal and the linear solve is a division.
"""
from __future__ import annotations

import numpy as np
import scipy.optimize as _so

from ...tracer import primal_value
from ._common import (bind, start, check_args, check_converged, plain, plain_callable,
                      require_callable, residual_norm, solution)


def _scalar(api, g, outputs):
    """f(x, *θ) as a 0-d residual; ``outputs`` > 1 when f also returns derivatives."""
    def F(x, *theta):
        out = g(x, *theta)
        if outputs > 1:
            if not isinstance(out, (tuple, list)) or len(out) < outputs:
                raise ValueError(f"{api}: f must return a tuple of {outputs} values (f and "
                                 f"its derivatives, fprime=True/fprime2=True), got "
                                 f"{type(out).__name__}")
            out = out[0]
        return out
    return F


def _bracketed(api, solver, f, a, b, args, full_output, kw):
    """One bracketing solve: SciPy's on plain values, then the implicit root."""
    require_callable(api, "f", f)
    args = check_args(api, args)
    g, theta = bind(f, args, api=api)
    a, b = primal_value(a), primal_value(b)
    if not theta:
        return solver(f, a, b, args=args, full_output=full_output, **kw)
    x, r = solver(plain(api, "f", g, theta), a, b, full_output=True, **kw)
    F = _scalar(api, g, 1)
    check_converged(api, r.converged, r.flag, residual_norm(plain(api, "f", F, theta), x))
    r.root = x = solution(api, F, x, theta)
    return (x, r) if full_output else x


def _bracketing(api, solver):
    def solve(f, a, b, args=(), xtol=2e-12, rtol=4 * np.finfo(float).eps, maxiter=100,
              full_output=False, disp=True):
        return _bracketed(api, solver, f, a, b, args, full_output,
                          dict(xtol=xtol, rtol=rtol, maxiter=maxiter, disp=disp))
    solve.__name__ = solve.__qualname__ = api
    solve.__doc__ = _DOC.format(api=api)
    return solve


_DOC = ("``scipy.optimize.{api}``: the root of f(x, *args) in the bracket [a, b], "
        "differentiable in the traced ``args`` and closed-over traced values (dx/dθ = "
        "−f_θ/f_x at the root), both modes, any order. SciPy's signature; with "
        "``disp=False`` an unconverged root being differentiated raises ConvergenceError "
        "(SciPy would return it with r.converged False).")
brentq = _bracketing("brentq", _so.brentq)
brenth = _bracketing("brenth", _so.brenth)
bisect = _bracketing("bisect", _so.bisect)
ridder = _bracketing("ridder", _so.ridder)


def toms748(f, a, b, args=(), k=1, xtol=2e-12, rtol=4 * np.finfo(float).eps, maxiter=100,
            full_output=False, disp=True):
    return _bracketed("toms748", _so.toms748, f, a, b, args, full_output,
                      dict(k=k, xtol=xtol, rtol=rtol, maxiter=maxiter, disp=disp))


toms748.__doc__ = _DOC.format(api="toms748")



def root_scalar(f, args=(), method=None, bracket=None, fprime=None, fprime2=None, x0=None,
                x1=None, xtol=None, rtol=None, maxiter=None, options=None):
    """``scipy.optimize.root_scalar``: a ``RootResults`` whose ``root`` is differentiable
    in the traced ``args`` and closed-over traced values (dx/dθ = −f_θ/f_x at the root).

    Every method; ``fprime``/``fprime2`` as SciPy (callables, or True when f returns
    its derivatives too). An unconverged root being differentiated raises
    :class:`ConvergenceError`."""
    api = "root_scalar"
    require_callable(api, "f", f)
    args = check_args(api, args)
    g, theta = bind(f, args, api=api)
    if bracket is not None:
        bracket = [primal_value(v) for v in bracket]
    x0, x1 = (None if v is None else start(api, v, name) for v, name in ((x0, "x0"), (x1, "x1")))
    kw = dict(method=method, bracket=bracket, x0=x0, x1=x1, xtol=xtol, rtol=rtol,
              maxiter=maxiter, options=options)
    if not theta:
        return _so.root_scalar(f, args=args, fprime=fprime, fprime2=fprime2, **kw)
    outputs = 3 if fprime2 is True else (2 if fprime is True else 1)
    r = _so.root_scalar(plain(api, "f", g, theta),
                        fprime=plain_callable(api, "fprime", fprime, args),
                        fprime2=plain_callable(api, "fprime2", fprime2, args), **kw)
    F = _scalar(api, g, outputs)
    check_converged(api, r.converged, r.flag,
                    residual_norm(plain(api, "f", F, theta), r.root))
    r.root = solution(api, F, r.root, theta)
    return r


def _diagonal_solve(matvec, b):
    """(∂F/∂x) v = b for an elementwise F: the Jacobian's diagonal is matvec(1)."""
    return b / matvec(np.ones(np.shape(primal_value(b))))


def newton(func, x0, fprime=None, args=(), tol=1.48e-08, maxiter=50, fprime2=None, x1=None,
           rtol=0.0, full_output=False, disp=True):
    """``scipy.optimize.newton`` (Newton, secant or Halley), the root differentiable in
    the traced ``args`` and closed-over traced values (dx/dθ = −f_θ/f_x). An array ``x0``
    solves independent scalar problems (SciPy's vectorized form): each root's derivative
    is its own division. Differentiating an unconverged root (SciPy only warns for
    arrays, or ``disp=False``) raises :class:`ConvergenceError`."""
    api = "newton"
    require_callable(api, "func", func)
    args = check_args(api, args)
    g, theta = bind(func, args, api=api)
    x0, x1 = start(api, x0), (None if x1 is None else start(api, x1, "x1"))
    kw = dict(tol=tol, maxiter=maxiter, x1=x1, rtol=rtol, disp=disp)
    if not theta:
        return _so.newton(func, x0, fprime=fprime, args=args, fprime2=fprime2,
                          full_output=full_output, **kw)
    out = _so.newton(plain(api, "func", g, theta), x0,
                     fprime=plain_callable(api, "fprime", fprime, args),
                     fprime2=plain_callable(api, "fprime2", fprime2, args),
                     full_output=True, **kw)
    F = _scalar(api, g, 1)
    if np.ndim(x0) == 0:
        x, r = out
        check_converged(api, r.converged, r.flag,
                        residual_norm(plain(api, "func", F, theta), x))
        r.root = x = solution(api, F, x, theta)
        return (x, r) if full_output else x
    x, converged, zero_der = out[0], out[1], out[2]
    if not np.all(converged):
        bad = np.flatnonzero(np.ravel(converged) == 0)
        check_converged(api, False, f"entries {bad.tolist()[:10]} of x0 did not converge"
                        + (" (zero derivative)" if np.any(np.ravel(zero_der)[bad]) else ""))
    x = solution(api, F, x, theta, solve=_diagonal_solve)
    return out._replace(root=x) if full_output else x     # SciPy's (root, converged, zero_der)


__all__ = ["brentq", "brenth", "bisect", "ridder", "toms748", "root_scalar", "newton"]
