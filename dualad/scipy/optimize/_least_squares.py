"""``least_squares``: SciPy's trust-region solvers, the solution differentiable by the
implicit function theorem on the stationarity of the cost

    C(x, θ) = ½ s² Σᵢ ρ((rᵢ(x, θ)/s)²)        (s = f_scale, ρ the loss; ρ(z) = z: ½‖r‖²)

whose gradient is ∇C = Jᵀ (ρ'(z) r). Its Jacobian, which the derivative solves with, is
the full Hessian of C (JᵀJ plus the residuals' curvature Σ rᵢ∇²rᵢ for a nonlinear model),
not the Gauss–Newton JᵀJ: at a solution with nonzero residuals only the full Hessian
gives the derivative of the minimizer. Bounds are handled as in ``minimize`` (an active
component is held at its bound)."""
from __future__ import annotations

import numpy as np
import scipy.optimize as _so

from ...core.tracer import Box, primal_value
from .._closure import closure_convert
from ._active import least_squares_bounds
from ._common import as_array, bind, start, check_args, plain, plain_callable, require_callable
from ._stationary import stationary_point


def _rho(api, loss):
    """The loss ρ(z, *θ_loss) as traced-value operations (SciPy's formulas:
    _lsq.least_squares); a callable loss closure-converted, θ_loss the traced values it
    closes over."""
    if callable(loss):
        def rho(z, *theta):
            try:
                return loss(z, *theta)[0]
            except TypeError as err:
                raise TypeError(
                    f"{api}: the callable loss is evaluated on traced values for the derivative "
                    f"(only its first row, ρ(z), is used) and failed: "
                    f"{str(err).splitlines()[0][:120]}... Write it with NumPy operations that "
                    f"build a new array, e.g. return np.stack([rho, drho, d2rho]), rather than "
                    f"assigning into np.empty(...)") from err
        return rho
    losses = {
        "linear": lambda z: z,
        "soft_l1": lambda z: 2 * (np.sqrt(1 + z) - 1),
        # the square root of the unselected branch is kept away from 0 (its derivative)
        "huber": lambda z: np.where(z <= 1, z, 2 * np.sqrt(np.maximum(z, 1)) - 1),
        "cauchy": lambda z: np.log1p(z),
        "arctan": lambda z: np.arctan(z),
    }
    if loss not in losses:
        raise ValueError(f"{api}: loss={loss!r}; use one of {sorted(losses)} or a callable")
    return losses[loss]


def least_squares(fun, x0, jac="2-point", bounds=(-np.inf, np.inf), method="trf",
                  ftol=1e-08, xtol=1e-08, gtol=1e-08, x_scale=None, loss="linear",
                  f_scale=1.0, diff_step=None, tr_solver=None, tr_options=None,
                  jac_sparsity=None, max_nfev=None, verbose=0, args=(), kwargs=None,
                  callback=None, workers=None):
    r"""Nonlinear least squares by ``scipy.optimize.least_squares``, differentiably.

    SciPy solves on plain values (every method, loss and option; ``jac`` serves the solve
    only). ``res.x``, ``res.fun`` (the residuals) and ``res.cost`` are then differentiable
    in the traced ``args``/``kwargs``, the traced values ``fun`` closes over, traced bounds
    and a traced ``f_scale``, both modes, any order: by the implicit function theorem on
    the stationarity of the cost,

    .. math::

        C(x, \theta) = \tfrac12 s^2 \sum_i \rho\big((r_i(x, \theta)/s)^2\big) ,
        \qquad \nabla_x C = 0,

    whose Jacobian is the full Hessian of :math:`C` (:math:`J^\top J` plus the residuals'
    curvature), not Gauss-Newton's :math:`J^\top J`, so the derivative is exact for
    nonzero residuals too. An active bound holds its component. ``res.jac``,
    ``res.grad`` and ``res.optimality`` stay SciPy's plain values.

    Parameters
    ----------
    fun : callable
        The residuals, ``fun(x, *args, **kwargs)``, an array.
    x0 : array_like
        The starting point (derivative 0).
    jac : {"2-point", "3-point", "cs"} or callable, optional
        The Jacobian for SciPy's solve only.
    bounds : 2-tuple or scipy.optimize.Bounds, optional
        Bounds on ``x``; values may be traced.
    method : {"trf", "dogbox", "lm"}, optional
        SciPy's method.
    ftol, xtol, gtol : float, optional
        SciPy's tolerances.
    x_scale : array_like or str, optional
        SciPy's variable scales (None: SciPy's default).
    loss : str or callable, optional
        ``"linear"``, ``"soft_l1"``, ``"huber"``, ``"cauchy"``, ``"arctan"`` or a callable
        ``rho(z)`` returning the rows ``(rho, rho', rho'')``, written with NumPy
        operations (it is differentiated).
    f_scale : float, optional
        The soft margin :math:`s` between inlier and outlier residuals; may be traced.
    diff_step : float, optional
        SciPy's finite-difference step.
    tr_solver : {"exact", "lsmr"}, optional
        SciPy's trust-region subproblem solver.
    tr_options : dict, optional
        SciPy's options for ``tr_solver``.
    jac_sparsity : array_like or sparse matrix, optional
        SciPy's sparsity structure of the Jacobian.
    max_nfev : int, optional
        SciPy's maximum number of function evaluations.
    verbose : {0, 1, 2}, optional
        SciPy's verbosity.
    args : tuple, optional
        Extra positional arguments of ``fun``; traced ones are differentiated.
    kwargs : dict, optional
        Extra keyword arguments of ``fun``; traced ones are differentiated.
    callback : callable, optional
        SciPy's callback.
    workers : int or map-like callable, optional
        SciPy's parallel evaluation of finite differences.

    Returns
    -------
    scipy.optimize.OptimizeResult
        SciPy's result, with ``res.x``, ``res.fun`` and ``res.cost`` differentiable.

    Raises
    ------
    ConvergenceError
        An unconverged solve (``max_nfev`` reached) is being differentiated.
    ValueError
        An unknown ``loss``.

    See Also
    --------
    minimize : General minimization.
    dualad.jacobians.optimize.least_squares_kwargs : Exact Jacobians *for* SciPy's solve.

    Examples
    --------
    >>> from dualad.scipy import optimize
    >>> t = np.array([0.0, 1.0, 3.0])
    >>> def slope(y):                     # the least-squares line through (t, y)
    ...     return optimize.least_squares(lambda p, y: p[0] + p[1] * t - y, np.zeros(2),
    ...                                   args=(y,)).x[1]
    >>> print(np.round(dualad.grad(slope)(np.array([1.0, 2.0, 4.0])), 6))
    [-0.285714 -0.071429  0.357143]
    """
    api = "least_squares"
    require_callable(api, "fun", fun)
    args = check_args(api, args)
    kwargs = dict(kwargs or {})
    g, theta_r = bind(fun, args, kwargs, api=api)
    x0 = np.atleast_1d(start(api, x0))
    box = least_squares_bounds(api, bounds, x0.size)
    scale_traced = isinstance(f_scale, Box)
    loss_fn, theta_l = closure_convert(loss) if callable(loss) else (loss, ())
    theta_phi = theta_r + ((f_scale,) if scale_traced else ()) + theta_l
    traced = theta_phi + (box.theta if box is not None else ())
    opts = dict(method=method, ftol=ftol, xtol=xtol, gtol=gtol, x_scale=x_scale, loss=loss,
                diff_step=diff_step, tr_solver=tr_solver, tr_options=tr_options,
                jac_sparsity=jac_sparsity, max_nfev=max_nfev, verbose=verbose,
                callback=callback, workers=workers)
    if x_scale is None:
        del opts["x_scale"]          # SciPy's own default (it changed in 1.16)
    if not traced:
        return _so.least_squares(fun, x0, jac=jac, bounds=bounds, f_scale=f_scale,
                                 args=args, kwargs=kwargs, **opts)
    plain_r = plain(api, "fun", lambda x, *th: as_array(g(x, *th)), theta_r)
    opts["loss"] = plain_callable(api, "loss", loss)
    res = _so.least_squares(plain_r, x0, jac=plain_callable(api, "jac", jac, args, kwargs),
                            bounds=(-np.inf, np.inf) if box is None else box.scipy_form,
                            f_scale=float(primal_value(f_scale)), **opts)
    rho = _rho(api, loss_fn)
    k, m = len(theta_r), len(theta_r) + scale_traced

    def residuals(x, *th):
        return np.reshape(as_array(g(x, *th[:k])), (-1,))

    def cost(x, *th):
        r = residuals(x, *th)
        if loss == "linear":
            return 0.5 * np.sum(r * r)
        s = th[k] if scale_traced else float(f_scale)
        return 0.5 * s ** 2 * np.sum(rho((r / s) ** 2, *th[m:]))
    x = stationary_point(api, cost, theta_phi, res.x, box, (), (res.success, res.message))
    res.x = x
    res.fun = residuals(x, *theta_phi)
    res.cost = cost(x, *theta_phi)
    return res


__all__ = ["least_squares"]
