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

from ...core.tracer import primal_value
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
    solve.__doc__ = _DOC.format(api=api, extra="")
    return solve


_DOC = r"""Find a root of ``f(x, *args)`` in the bracket ``[a, b]`` with ``scipy.optimize.{api}``.

The root is differentiable in the traced ``args`` and closed-over traced values, in
both modes and to any order: with :math:`f(x^*, \theta) = 0` and
:math:`f_x(x^*) \neq 0`, :math:`dx^*/d\theta = -f_\theta / f_x` at the root (the
implicit function theorem; the 1 x 1 linear solve is a division). The bracket only
locates the root: its derivative in ``a`` and ``b`` is 0.

Parameters
----------
f : callable
    The scalar function, ``f(x, *args)``, with ``f(a)`` and ``f(b)`` of opposite signs.
a, b : float
    The bracket (traced values are used at their primal values).
args : tuple, optional
    Extra arguments of ``f``; traced ones are differentiated.{extra}
xtol, rtol : float, optional
    SciPy's absolute and relative tolerances on the root.
maxiter : int, optional
    SciPy's maximum number of iterations.
full_output : bool, optional
    Also return SciPy's ``RootResults`` (its ``root`` differentiable).
disp : bool, optional
    SciPy's: raise ``RuntimeError`` if the solve does not converge. With
    ``disp=False`` an unconverged root being differentiated raises
    :class:`ConvergenceError` (SciPy would return it with ``r.converged`` False).

Returns
-------
x : float or traced scalar
    The root, differentiable.
r : scipy.optimize.RootResults
    With ``full_output`` only.

Raises
------
ConvergenceError
    An unconverged root is being differentiated.
ValueError
    ``f(a)`` and ``f(b)`` have the same sign (SciPy's).

See Also
--------
root_scalar : All scalar methods in one interface.
newton : Newton, secant and Halley iterations.

Examples
--------
>>> from dualad.scipy import optimize
>>> def sqrt(a):
...     return optimize.{api}(lambda x, a: x ** 2 - a, 0.0, 10.0, args=(a,))
>>> print(round(float(sqrt(4.0)), 8), round(float(dualad.grad(sqrt)(4.0)), 8))
2.0 0.25
"""
_K = """
k : int, optional
    SciPy's number of Newton steps per iteration (1 or 2)."""
brentq = _bracketing("brentq", _so.brentq)
brenth = _bracketing("brenth", _so.brenth)
bisect = _bracketing("bisect", _so.bisect)
ridder = _bracketing("ridder", _so.ridder)


def toms748(f, a, b, args=(), k=1, xtol=2e-12, rtol=4 * np.finfo(float).eps, maxiter=100,
            full_output=False, disp=True):
    return _bracketed("toms748", _so.toms748, f, a, b, args, full_output,
                      dict(k=k, xtol=xtol, rtol=rtol, maxiter=maxiter, disp=disp))


toms748.__doc__ = _DOC.format(api="toms748", extra=_K)



def root_scalar(f, args=(), method=None, bracket=None, fprime=None, fprime2=None, x0=None,
                x1=None, xtol=None, rtol=None, maxiter=None, options=None):
    r"""A root of scalar ``f(x, *args)`` by ``scipy.optimize.root_scalar``, differentiably.

    Every method. The ``root`` of the returned ``RootResults`` is differentiable in the
    traced ``args`` and closed-over traced values, both modes and any order:
    :math:`dx^*/d\theta = -f_\theta / f_x` at the root (the implicit function theorem).
    The bracket and starting points only locate the root; their derivative is 0.

    Parameters
    ----------
    f : callable
        The scalar function, ``f(x, *args)`` (or returning ``(f, f')`` or
        ``(f, f', f'')`` when ``fprime``/``fprime2`` is True).
    args : tuple, optional
        Extra arguments of ``f``; traced ones are differentiated.
    method : str, optional
        SciPy's method (``"brentq"``, ``"newton"``, ``"halley"``, ...).
    bracket : sequence of 2 floats, optional
        The bracket for bracketing methods.
    fprime : callable or bool, optional
        The derivative for SciPy's iteration, or True if ``f`` returns it.
    fprime2 : callable or bool, optional
        The second derivative for SciPy's iteration, or True if ``f`` returns it.
    x0, x1 : float, optional
        Starting points.
    xtol, rtol : float, optional
        SciPy's tolerances.
    maxiter : int, optional
        SciPy's maximum number of iterations.
    options : dict, optional
        The method's options (SciPy's).

    Returns
    -------
    scipy.optimize.RootResults
        SciPy's result, with ``root`` differentiable.

    Raises
    ------
    ConvergenceError
        An unconverged root is being differentiated.

    See Also
    --------
    brentq, newton : The methods as functions.

    Examples
    --------
    >>> from dualad.scipy import optimize
    >>> def sqrt(a):
    ...     return optimize.root_scalar(lambda x, a: x ** 2 - a, bracket=[0.0, 10.0],
    ...                                 args=(a,)).root
    >>> print(round(float(dualad.grad(sqrt)(4.0)), 8))
    0.25
    """
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
    r"""A root by ``scipy.optimize.newton`` (Newton, secant or Halley), differentiably.

    The root is differentiable in the traced ``args`` and closed-over traced values,
    :math:`dx^*/d\theta = -f_\theta / f_x` at the root. An array ``x0`` solves independent
    scalar problems (SciPy's vectorized form): the Jacobian is diagonal and each root's
    derivative is its own division. Differentiating an unconverged root (SciPy only warns
    for arrays, or with ``disp=False``) raises :class:`ConvergenceError`.

    Parameters
    ----------
    func : callable
        The function, ``func(x, *args)``.
    x0 : float or array_like
        The starting point(s) (derivative 0).
    fprime : callable, optional
        The derivative for SciPy's iteration (Newton; secant without it).
    args : tuple, optional
        Extra arguments of ``func``; traced ones are differentiated.
    tol : float, optional
        SciPy's absolute tolerance.
    maxiter : int, optional
        SciPy's maximum number of iterations.
    fprime2 : callable, optional
        The second derivative (Halley's method).
    x1 : float, optional
        A second starting point (secant).
    rtol : float, optional
        SciPy's relative tolerance.
    full_output : bool, optional
        Also return SciPy's ``RootResults`` (scalar ``x0``) or ``(root, converged,
        zero_der)`` (array ``x0``).
    disp : bool, optional
        SciPy's: raise ``RuntimeError`` if a scalar solve does not converge.

    Returns
    -------
    root : float or numpy.ndarray
        The root(s), differentiable.
    r : scipy.optimize.RootResults or tuple
        With ``full_output`` only.

    Raises
    ------
    ConvergenceError
        An unconverged root is being differentiated.

    See Also
    --------
    root_scalar : All scalar methods in one interface.

    Examples
    --------
    >>> from dualad.scipy import optimize
    >>> def solve(a):                                  # cos(x) = a x
    ...     return optimize.newton(lambda x, a: np.cos(x) - a * x, 0.5, args=(a,))
    >>> print(round(float(solve(1.0)), 6), round(float(dualad.grad(solve)(1.0)), 6))
    0.739085 -0.441611
    """
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
