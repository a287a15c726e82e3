"""``minimize``: SciPy's minimizers, the minimizer differentiable by the implicit function
theorem on its optimality condition (:mod:`._stationary`): ∇ₓf(x, θ) = 0, with active
bounds held fixed and active constraints through the KKT system."""
from __future__ import annotations

import numpy as np
import scipy.optimize as _so

from ...core.tracer import primal_value
from ._active import minimize_bounds, parse_constraints
from ._common import bind, start, check_args, plain, plain_callable, require_callable
from ._stationary import stationary_point


def _objective(api, g, jac_in_output):
    """f(x, *θ) as a 0-d value (the first of (f, g) when ``jac=True``)."""
    def f(x, *theta):
        out = g(x, *theta)
        if jac_in_output:
            if not isinstance(out, (tuple, list)) or len(out) != 2:
                raise ValueError(f"{api}: with jac=True, fun must return (f, gradient), got "
                                 f"{type(out).__name__}")
            out = out[0]
        if np.size(primal_value(out)) != 1:
            raise ValueError(f"{api}: fun must return a scalar, got shape "
                             f"{np.shape(primal_value(out))}")
        return np.reshape(out, ()) if np.ndim(primal_value(out)) else out
    f.__name__ = getattr(g, "__name__", "fun")
    return f


_BOUNDED = ("nelder-mead", "l-bfgs-b", "tnc", "slsqp", "powell", "trust-constr", "cobyla",
            "cobyqa")
_CONSTRAINED = ("cobyla", "cobyqa", "slsqp", "trust-constr")


def _check_method(api, method, box, cons):
    """A method SciPy runs while ignoring the bounds or constraints (it only warns) would
    have its unconstrained solution differentiated as if they held: refused."""
    if not isinstance(method, str):
        return
    m = method.lower()
    if box is not None and m not in _BOUNDED:
        raise ValueError(f"{api}: method={method!r} ignores bounds (SciPy only warns); use one of "
                         f"{', '.join(_BOUNDED)}")
    if cons and m not in _CONSTRAINED:
        raise ValueError(f"{api}: method={method!r} ignores constraints (SciPy only warns); use "
                         f"one of {', '.join(_CONSTRAINED)}")


def minimize(fun, x0, args=(), method=None, jac=None, hess=None, hessp=None, bounds=None,
             constraints=(), tol=None, callback=None, options=None):
    r"""Minimize ``fun(x, *args)`` by ``scipy.optimize.minimize``, differentiably.

    SciPy runs on plain values with every method and keyword as given (``jac``, ``hess``,
    ``hessp`` serve the solve only: the derivative uses dualad's derivatives of ``fun``).
    ``res.x`` and ``res.fun`` are then differentiable in the traced ``args``, the traced
    values ``fun`` (and the constraints) close over, and traced bound and constraint
    values, in both modes and to any order, by the implicit function theorem on the
    optimality condition at SciPy's solution: :math:`\nabla_x f(x^*, \theta) = 0`, a
    component at an active bound held there (derivative 0, or the bound's derivative if it
    is traced), active constraints through the KKT system with multipliers recovered by
    least squares.

    Parameters
    ----------
    fun : callable
        The objective, ``fun(x, *args)``, a scalar.
    x0 : array_like
        The starting point, 1-D (its derivative is 0).
    args : tuple, optional
        Extra arguments of ``fun``; traced ones are differentiated.
    method : str, optional
        SciPy's method. With traced bounds or constraints, one that honours them.
    jac : callable or bool or str, optional
        The gradient for SciPy's solve, or True if ``fun`` returns ``(f, gradient)``.
    hess : callable or str, optional
        The Hessian for SciPy's solve.
    hessp : callable, optional
        The Hessian-vector product for SciPy's solve.
    bounds : sequence or scipy.optimize.Bounds, optional
        Bounds on ``x``; values may be traced.
    constraints : dict or sequence of dict or constraint objects, optional
        SciPy's constraints; the functions may close over traced values.
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
    ValueError
        ``x0`` not 1-D; a method that ignores the given bounds or constraints.

    Warns
    -----
    DegenerateSolutionWarning
        A degenerate active set: the derivative returned is one-sided.

    See Also
    --------
    least_squares : Nonlinear least squares.
    dualad.jacobians.optimize.minimize_kwargs : Exact derivatives *for* SciPy's solve.

    Examples
    --------
    >>> from dualad.scipy import optimize
    >>> def argmin(c):
    ...     return optimize.minimize(lambda x, c: np.sum((x - c) ** 2) + x[0] * x[1],
    ...                              np.zeros(2), args=(c,)).x
    >>> from dualad import jacobians
    >>> c = np.array([3.0, 0.0])
    >>> print(np.round(argmin(c), 4))
    [ 4. -2.]
    >>> print(np.round(jacobians.jacobian(argmin, c), 4))
    [[ 1.3333 -0.6667]
     [-0.6667  1.3333]]
    """
    api = "minimize"
    require_callable(api, "fun", fun)
    args = check_args(api, args)
    g, theta_f = bind(fun, args, api=api)
    x0 = np.atleast_1d(start(api, x0))
    if x0.ndim != 1:
        raise ValueError(f"{api}: x0 has shape {x0.shape}; SciPy's minimize takes a 1-D x0 "
                         f"(ravel it and reshape inside fun)")
    box = minimize_bounds(api, bounds, x0.size)
    cons = parse_constraints(api, constraints, x0)
    traced = theta_f + (box.theta if box is not None else ()) + \
        tuple(t for c in cons for t in c.theta)
    if not traced:
        return _so.minimize(fun, x0, args=args, method=method, jac=jac, hess=hess,
                            hessp=hessp, bounds=bounds, constraints=constraints, tol=tol,
                            callback=callback, options=options)
    _check_method(api, method, box, cons)
    jac_in_output = not callable(jac) and jac is not None and not isinstance(jac, str) \
        and bool(jac)
    res = _so.minimize(plain(api, "fun", g, theta_f), x0, method=method,
                       jac=plain_callable(api, "jac", jac, args),
                       hess=plain_callable(api, "hess", hess, args),
                       hessp=plain_callable(api, "hessp", hessp, args),
                       bounds=None if box is None else box.scipy_form,
                       constraints=[c.scipy_form for c in cons], tol=tol,
                       callback=callback, options=options)
    phi = _objective(api, g, jac_in_output)
    x = stationary_point(api, phi, theta_f, res.x, box, cons, (res.success, res.message))
    res.x = x
    res.fun = phi(x, *theta_f)
    return res


__all__ = ["minimize"]
