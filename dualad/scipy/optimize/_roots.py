"""``root``, ``fsolve`` and ``fixed_point``: SciPy's solvers, differentiable solutions.

SciPy solves ``fun(x, *args) = 0`` on the primal values; the solution x* is then made a
function of the traced values θ the problem depends on (traced ``args``, closed-over
traced values) by the implicit function theorem on F(x, θ) = fun(x, *args) (for
``fixed_point``, F = func(x, *args) − x): ẋ = −(∂F/∂x)⁻¹ ∂F/∂θ θ̇, one linear solve with
the Jacobian at x* per direction (see ``_common``). ``jac``/``fprime`` serve SciPy's
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
    r"""Solve ``fun(x, *args) = 0`` with ``scipy.optimize.root``; the solution is differentiable.

    SciPy runs the solve on plain values, with every method and option as given. The
    solution :math:`x^*` is then a differentiable function of the traced values
    :math:`\theta` the problem depends on (traced ``args``, traced values ``fun`` closes
    over) by the implicit function theorem on :math:`F(x^*, \theta) = 0`:
    :math:`\dot x = -(\partial F/\partial x)^{-1} (\partial F/\partial \theta)\,\dot\theta`,
    one linear solve with the Jacobian at the solution per direction, in both modes and to
    any order (``dualad.custom_root``). Without traced values it is SciPy's call.

    Parameters
    ----------
    fun : callable
        The residual, ``fun(x, *args)``, an array of ``x``'s size. Written with NumPy
        operations, it is differentiated by dualad (``jac`` serves SciPy's solve only).
    x0 : array_like
        The starting point. Its derivative is 0: it only starts the solve.
    args : tuple, optional
        Extra arguments of ``fun``; traced ones are differentiated.
    method : str, optional
        SciPy's method (default ``"hybr"``).
    jac : bool or callable, optional
        The Jacobian for SciPy's solve, or True if ``fun`` returns ``(f, jacobian)``.
    tol : float, optional
        Tolerance for termination (SciPy's).
    callback : callable, optional
        SciPy's callback.
    options : dict, optional
        The method's options (SciPy's).

    Returns
    -------
    scipy.optimize.OptimizeResult
        SciPy's result, with ``res.x`` and ``res.fun`` differentiable.

    Raises
    ------
    ConvergenceError
        The solve did not converge (``res.success`` False) and is being differentiated.
    NotImplementedError
        Under ``dualad.vmap`` with a batched value (loop over the examples instead).
    TypeError
        A starting point that is None, complex or not numeric; ``fun`` not callable.

    See Also
    --------
    fsolve, fixed_point, root_scalar : The other root finders.
    dualad.custom_root : The implicit differentiation behind them.

    Examples
    --------
    >>> from dualad.scipy import optimize
    >>> def cube_root(a):
    ...     return optimize.root(lambda x, a: x ** 3 - a, np.array([1.0]), args=(a,)).x[0]
    >>> print(round(float(cube_root(8.0)), 10), round(float(dualad.grad(cube_root)(8.0)), 10))
    2.0 0.0833333333
    """
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
    r"""Solve ``func(x, *args) = 0`` by ``scipy.optimize.fsolve``, differentiably.

    MINPACK's hybrd/hybrj runs on plain values; the solution is made a function of the
    traced ``args`` and closed-over traced values by the implicit function theorem on
    :math:`F(x, \theta) = \mathrm{func}(x, *\mathrm{args}) = 0` (see :func:`root`). Where
    SciPy only warns about an unconverged solve (``ier`` 2-5: too many calls, slow
    progress), a solve being differentiated raises :class:`ConvergenceError` instead: the
    derivative of a non-solution would be silently wrong.

    Parameters
    ----------
    func : callable
        The residual, ``func(x, *args)``.
    x0 : array_like
        The starting point (its derivative is 0).
    args : tuple, optional
        Extra arguments of ``func``; traced ones are differentiated.
    fprime : callable, optional
        The Jacobian for SciPy's solve only.
    full_output : bool, optional
        Also return SciPy's ``infodict``, ``ier`` and ``mesg`` (``infodict['fvec']``
        plain).
    col_deriv : bool, optional
        SciPy's: ``fprime`` computes the Jacobian down the columns.
    xtol : float, optional
        SciPy's relative tolerance on ``x``.
    maxfev : int, optional
        SciPy's maximum number of calls (0: the default).
    band : tuple, optional
        SciPy's band of the Jacobian, ``(lower, upper)``.
    epsfcn : float, optional
        SciPy's step for the forward-difference Jacobian.
    factor : float, optional
        SciPy's initial step bound.
    diag : sequence, optional
        SciPy's scale factors.

    Returns
    -------
    x : numpy.ndarray
        The solution, differentiable.
    infodict, ier, mesg : dict, int, str
        With ``full_output`` only, SciPy's.

    Raises
    ------
    ConvergenceError
        The solve did not converge and is being differentiated.

    See Also
    --------
    root : The general interface.
    """
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
    r"""Find ``x = func(x, *args)`` with ``scipy.optimize.fixed_point``; x is differentiable.

    The returned x is differentiable in the traced ``args`` and closed-over traced values
    by the implicit function theorem on :math:`F(x, \theta) = \mathrm{func}(x, \theta) - x`,
    whose Jacobian :math:`\partial \mathrm{func}/\partial x - I` is invertible where the
    fixed point is attracting. SciPy raises ``RuntimeError`` when the iteration does not
    converge.

    Parameters
    ----------
    func : callable
        The map, ``func(x, *args)``.
    x0 : array_like
        The starting point (its derivative is 0).
    args : tuple, optional
        Extra arguments of ``func``; traced ones are differentiated.
    xtol : float, optional
        SciPy's convergence tolerance.
    maxiter : int, optional
        SciPy's maximum number of iterations.
    method : {"del2", "iteration"}, optional
        SciPy's method.

    Returns
    -------
    numpy.ndarray
        The fixed point, differentiable.

    See Also
    --------
    root : Roots of a residual.
    """
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
