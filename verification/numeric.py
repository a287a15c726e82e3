"""Numeric oracles: derivatives from function values alone.

- central differences  (f(x + h v) − f(x − h v)) / 2h,  error O(h²) + O(ε/h),
  with the step ``h = ε^(1/3)·max(1, |x|)`` that balances the two;
- Richardson extrapolation of central differences: D(h) = D + c₂h² + c₄h⁴ + …,
  so (4 D(h/2) − D(h)) / 3 removes the h² term; repeated, with the last
  correction as the error estimate;
- the complex step  Im f(x + i h v) / h  for functions analytic near x: no
  subtraction, so h = 1e-20 gives first derivatives to machine precision;
- the Taylor remainder test: ``r(h) = |f(x + h v) − f(x) − h ⟨∇f, v⟩|`` is O(h²)
  exactly when the gradient is right; the fitted slope of log r against log h
  is the convergence order (≈ 2 right, ≈ 1 wrong), a verdict independent of
  tolerances.

Complex numbers are treated as R²: a central difference along a complex
direction v (a real step h) is the R-linear derivative J v of any smooth f,
holomorphic or not. :func:`real_jacobian` is the Jacobian of the realified map
(coordinates [Re, Im] of each complex argument and output), which checks
``abs``, ``real``, ``conj`` as well as holomorphic functions; for a holomorphic
f, :func:`holomorphic_defect` measures how far J(i v) is from i·J v (zero
exactly when f is complex-differentiable along v, the Cauchy–Riemann equations).
"""
from __future__ import annotations

__all__ = ["default_step", "central_difference", "richardson", "complex_step", "realify",
           "real_directions", "real_jacobian", "holomorphic_defect", "numerical_jacobian",
           "taylor_test"]

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence


def _as_float(x):
    x = np.asarray(x)
    return x if np.issubdtype(x.dtype, np.inexact) else x.astype(float)


def default_step(x, dtype=np.float64):
    eps = np.finfo(dtype).eps
    return eps ** (1 / 3) * max(1.0, float(np.max(np.abs(x))) if np.size(x) else 1.0)


def central_difference(f: Callable[..., Any], x: Any, v: Any,
                       h: float | None = None) -> np.ndarray[Any, Any]:
    r"""The directional derivative :math:`J v` of ``f`` at ``x`` by a central difference.

    .. math::

        D(h) = \frac{f(x + h v) - f(x - h v)}{2 h},

    with truncation error :math:`O(h^2)` and rounding error :math:`O(\varepsilon / h)`;
    the default step :math:`h = \varepsilon^{1/3} \max(1, |x|_\infty)` balances the two,
    for about two thirds of the digits.

    Parameters
    ----------
    f : callable
        The function, of one array.
    x : array_like
        The point (integers are converted to float).
    v : array_like
        The direction, of ``x``'s shape (complex for a complex direction).
    h : float, optional
        The step (default :math:`\varepsilon^{1/3} \max(1, |x|_\infty)` for ``x``'s dtype).

    Returns
    -------
    numpy.ndarray
        The estimate of :math:`J v`, of ``f``'s output shape.

    See Also
    --------
    richardson : Extrapolated central differences, far more accurate.
    complex_step : Exact to rounding for analytic functions.

    Examples
    --------
    >>> from dualad.verification import central_difference
    >>> d = central_difference(lambda x: np.sum(x ** 3), np.array([1.0, 2.0]),
    ...                        np.array([1.0, 0.0]))
    >>> print(round(float(d), 6))
    3.0
    """
    x, v = _as_float(x), _as_float(v)
    h = default_step(x, x.dtype) if h is None else h
    return (np.asarray(f(x + h * v)) - np.asarray(f(x - h * v))) / (2 * h)


def richardson(f: Callable[..., Any], x: Any, v: Any, h: float | None = None,
               levels: int = 4) -> tuple[np.ndarray[Any, Any], float]:
    r"""The Richardson-extrapolated central difference :math:`J v`, and an estimate of its error.

    Central differences expand as :math:`D(h) = D + c_2 h^2 + c_4 h^4 + \dots`, so

    .. math::

        D_1(h) = \frac{4 D(h/2) - D(h)}{3}

    cancels the :math:`h^2` term; repeating with factors :math:`4^k` over a table of
    ``levels`` steps :math:`h, h/2, h/4, \dots` cancels :math:`h^4, h^6, \dots`, giving
    :math:`O(h^{2\,\mathrm{levels}})` truncation error. The size of the last correction
    is the error estimate [1]_.

    Parameters
    ----------
    f : callable
        The function, of one array.
    x : array_like
        The point.
    v : array_like
        The direction, of ``x``'s shape.
    h : float, optional
        The first (largest) step (default :math:`10^{-2} \max(1, |x|_\infty)`).
    levels : int, optional
        Number of steps in the table (default 4).

    Returns
    -------
    estimate : numpy.ndarray
        The extrapolated :math:`J v`, of ``f``'s output shape.
    error : float
        The largest entry of the last correction (``inf`` when ``levels`` is 1).

    See Also
    --------
    central_difference : One step.
    check_grads : Uses this oracle.

    References
    ----------
    .. [1] L. F. Richardson, "The deferred approach to the limit", *Phil. Trans. R. Soc.
       A* 226 (1927), 299-349.

    Examples
    --------
    >>> from dualad.verification import richardson
    >>> estimate, error = richardson(lambda x: np.sum(np.exp(x)), np.array([0.0]),
    ...                              np.array([1.0]))
    >>> print(round(float(estimate), 12), error < 1e-12)
    1.0 True
    """
    x, v = _as_float(x), _as_float(v)
    h = (1e-2 * max(1.0, float(np.max(np.abs(x))) if x.size else 1.0)) if h is None else h
    table = [central_difference(f, x, v, h / 2 ** k) for k in range(levels)]
    err = np.inf
    for m in range(1, levels):
        factor = 4.0 ** m
        new = [(factor * table[k + 1] - table[k]) / (factor - 1) for k in range(len(table) - 1)]
        err = np.max(np.abs(new[-1] - table[-1])) if new else err
        table = new
    return table[-1], float(err)


def complex_step(f: Callable[..., Any], x: Any, v: Any,
                 h: float = 1e-20) -> np.ndarray[Any, Any]:
    r"""The directional derivative :math:`J v` by the complex step.

    For ``f`` analytic near a real ``x``,

    .. math::

        J v = \frac{\operatorname{Im} f(x + i h v)}{h} + O(h^2),

    with no subtraction of nearly equal values, so the step can be tiny (default
    :math:`h = 10^{-20}`) and the result is exact to rounding [1]_. ``f`` must accept complex
    input and be analytic: ``abs``, ``real``, comparisons or ``conj`` make it wrong.

    Parameters
    ----------
    f : callable
        The function, of one array, analytic, taking complex input.
    x : array_like
        The (real) point.
    v : array_like
        The (real) direction, of ``x``'s shape.
    h : float, optional
        The step (default ``1e-20``).

    Returns
    -------
    numpy.ndarray
        :math:`J v`, real, of ``f``'s output shape.

    See Also
    --------
    central_difference : For functions that are not analytic.

    References
    ----------
    .. [1] W. Squire and G. Trapp, "Using complex variables to estimate derivatives of
       real functions", *SIAM Review* 40 (1998), 110-112.

    Examples
    --------
    >>> from dualad.verification import complex_step
    >>> d = complex_step(np.sin, np.array([0.0, 1.0]), np.ones(2))
    >>> print(d[0], bool(d[1] == np.cos(1.0)))
    1.0 True
    """
    x, v = _as_float(x), _as_float(v)
    return np.imag(np.asarray(f(x + 1j * h * v))) / h


def realify(v):
    """``v`` flattened to real coordinates: ``[Re v, Im v]`` if complex, else ``v``."""
    v = np.ravel(np.asarray(v))
    return np.concatenate([v.real, v.imag]) if np.iscomplexobj(v) else v


def real_directions(x):
    """The basis of ``x``'s real coordinates as directions of ``x``'s shape and kind:
    e_k, then (for complex x) i·e_k, matching :func:`realify`."""
    x = np.asarray(x)
    eye = np.eye(x.size).reshape((x.size,) + x.shape)
    return np.concatenate([eye, 1j * eye]) if np.iscomplexobj(x) else eye


def real_jacobian(f, x, h=None):
    """The Jacobian of ``f`` with complex numbers as R² (``realify`` coordinates), by
    central differences: shape (output coordinates, input coordinates)."""
    x = _as_float(x)
    cols = [realify(central_difference(f, x, d, h)) for d in real_directions(x)]
    return np.stack(cols, axis=1) if cols else np.zeros((realify(f(x)).size, 0))


def holomorphic_defect(f, x, v, h=None):
    """``max |D_{iv} f − i·D_v f| / max(1, |D_v f|)``: ~0 when ``f`` is holomorphic at ``x``."""
    x, v = _as_float(x), _as_float(v)
    d = central_difference(f, x, v, h)
    di = central_difference(f, x, 1j * v, h)
    return float(np.max(np.abs(di - 1j * d), initial=0.0) / max(1.0, np.max(np.abs(d),
                                                                             initial=0.0)))


def numerical_jacobian(f: Callable[..., Any], x: Any,
                       h: float | None = None) -> np.ndarray[Any, Any]:
    r"""The Jacobian of ``f`` at ``x`` by central differences, one column per input element.

    Column ``k`` is :func:`central_difference` along the basis vector :math:`e_k`; the
    result has shape ``out.shape + x.shape``. For a complex ``x`` the columns are the
    derivatives along the real directions, which is the complex Jacobian when ``f`` is
    holomorphic; for the full derivative of a function that is not, use
    ``dualad.verification.numeric.real_jacobian`` (complex numbers as
    :math:`\mathbb{R}^2`).

    Parameters
    ----------
    f : callable
        The function, of one array.
    x : array_like
        The point.
    h : float, optional
        The step (default as in :func:`central_difference`).

    Returns
    -------
    numpy.ndarray
        The Jacobian, shape ``out.shape + x.shape``.

    See Also
    --------
    dualad.jacobians.jacobian : The same by AD.

    Examples
    --------
    >>> from dualad.verification import numerical_jacobian
    >>> print(np.round(numerical_jacobian(lambda x: x ** 2, np.array([1.0, 2.0])), 6))
    [[2. 0.]
     [0. 4.]]
    """
    x = _as_float(x)
    out = np.asarray(f(x))
    J = np.zeros(out.shape + x.shape, dtype=np.result_type(out, float))
    flat = J.reshape(out.shape + (-1,))
    for k in range(x.size):
        e = np.zeros(x.size)
        e[k] = 1.0
        flat[..., k] = central_difference(f, x, e.reshape(x.shape), h)
    return J


def taylor_test(f: Callable[..., Any], gradient: Any, x: Any, v: Any = None,
                steps: Sequence[float] | None = None,
                seed: int = 0) -> tuple[float, np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    r"""The convergence order of the Taylor remainder: about 2 when ``gradient`` is right.

    The remainder

    .. math::

        r(h) = \left| f(x + h v) - f(x) - h \langle \nabla f(x), v \rangle \right|

    is :math:`O(h^2)` exactly when the gradient is right, and :math:`O(h)` otherwise. The
    slope of :math:`\log r` against :math:`\log h`, fitted over steps from :math:`10^{-2}`
    to :math:`10^{-5}` (times :math:`\max(1, |x|_\infty)`), is the verdict, independent of
    any tolerance [1]_. Remainders at the rounding level are left out of the fit; when fewer
    than two are left (``f`` linear along ``v``) the order is reported as 2.

    Parameters
    ----------
    f : callable
        A scalar function of one array.
    gradient : array_like or callable
        :math:`\nabla f(x)` (an array of ``x``'s shape), or a function computing it.
    x : array_like
        The point.
    v : array_like, optional
        The direction (default: standard normal, from ``seed``).
    steps : array_like, optional
        The steps ``h`` (relative to :math:`\max(1, |x|_\infty)`; default 7 steps from
        ``1e-2`` to ``1e-5``).
    seed : int, optional
        Seed of the random direction (default 0).

    Returns
    -------
    order : float
        The fitted convergence order.
    hs : numpy.ndarray
        The steps used.
    residuals : numpy.ndarray
        :math:`r(h)` at each step.

    See Also
    --------
    check_grads : Tolerance-based checks of JVPs and VJPs.

    References
    ----------
    .. [1] P. E. Farrell, D. A. Ham, S. W. Funke and M. E. Rognes, "Automated derivation
       of the adjoint of high-level transient finite element programs", *SIAM J. Sci.
       Comput.* 35 (2013), C369-C393 (the Taylor test).

    Examples
    --------
    >>> from dualad.verification import taylor_test
    >>> def f(x):
    ...     return np.sum(np.sin(x))
    >>> x = np.array([0.1, 0.2, 0.3])
    >>> order, hs, residuals = taylor_test(f, np.cos, x)
    >>> print(round(order, 1))
    2.0
    >>> order, _, _ = taylor_test(f, lambda x: 1.01 * np.cos(x), x)   # a 1% error
    >>> print(round(order, 1))
    1.0
    """
    x = _as_float(x)
    rng = np.random.default_rng(seed)
    v = rng.standard_normal(x.shape) if v is None else _as_float(v)
    g = gradient(x) if callable(gradient) else np.asarray(gradient)
    f0 = float(f(x))
    slope = float(np.sum(g * v))
    scale = max(1.0, float(np.max(np.abs(x))) if x.size else 1.0)
    hs = scale * (np.logspace(-2, -5, 7) if steps is None else np.asarray(steps))
    res = np.array([abs(float(f(x + h * v)) - f0 - h * slope) for h in hs])
    ok = res > 1e-13 * max(1.0, abs(f0))  # below this, rounding dominates
    if ok.sum() < 2:
        return 2.0, hs, res  # the remainder vanishes (f is linear along v): exact
    order = np.polyfit(np.log(hs[ok]), np.log(res[ok]), 1)[0]
    return float(order), hs, res
