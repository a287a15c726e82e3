"""scipy.optimize, fed exact derivatives.

The helpers below give SciPy's solvers the derivatives they ask for (``jac=``,
``hess=``, ``hessp=``), computed by dualad::

    minimize(f, x0, jac=gradient(f, x0), hess=hessian_fn(f, x0))  Newton-type methods
    minimize(f, x0, jac=gradient(f, x0), hessp=hessp_fn(f, x0))   Hessian-free (CG) methods
    minimize(**minimize_kwargs(f, x0, method="trust-exact"))    the same, in one call
    least_squares(r, x0, jac=jacobian_fn(r, x0))                dense Jacobian
    least_squares(r, x0, jac=sparse_jacobian_fn(r, x0))         scipy.sparse Jacobian, the
                                                                pattern detected once and
                                                                checked at every point
    least_squares(r, x0, jac_sparsity=jacobian_sparsity(r, x0)) scipy's own finite differences,
                                                                grouped by our pattern (the
                                                                pattern at x0: right at every
                                                                x only if r takes no decision
                                                                on values, see .validity)

    solve_ivp(fun, t_span, y0, method="BDF", jac=ode_jacobian_fn(fun, y0))
                                                                ∂fun/∂y as jac(t, y), dense or
                                                                CSR as the planner chooses

Each helper returns a plain function of ``x`` (and ``p`` for ``hessp``; ``(t, y)`` for
``ode_jacobian_fn``) as SciPy calls it, returning float64 NumPy arrays (or CSR matrices).

One convention for all: ``helper(f, x0, *args)``, the function, then the point, then
the function's extra arguments (SciPy passes its own ``args=`` at each call, and they
win). The point is required where the helper prepares something there (the sparse
helpers, ``ode_jacobian_fn``) and optional for the dense ones (given, it fixes the shape
checked at every call). Before issue 30 the dense helpers took ``helper(f, *args)``;
``helper(f, a)`` where ``a`` is an extra argument of ``f`` now raises a TypeError saying
what to write whenever ``f``'s signature tells the two readings apart.
"""
from __future__ import annotations

__all__ = ["HESS_METHODS", "HESSP_METHODS", "gradient", "value_and_gradient", "hessian_fn",
           "sparse_hessian_fn", "hessp_fn", "minimize_kwargs", "jacobian_fn",
           "sparse_jacobian_fn", "least_squares_kwargs", "ode_jacobian_fn"]

import inspect
from typing import TYPE_CHECKING, Any, Literal, overload

import numpy as np

import dualad

from dualad.extend import Replayed

from ._common import DEFAULT_MAX_MEMORY, Problem
from .coloring import star_coloring
from .dense import jacobian
from .hessian import hessian, hessian_chunk, hvp, scalar_problem
from . import nested
from .plan import plan
from .sparsity import detect_hessian, jacobian_sparsity  # noqa: F401  (re-exported)
from .validity import CheckedPattern

if TYPE_CHECKING:
    from collections.abc import Callable

    import scipy.sparse as sp
    from numpy.typing import NDArray
from .ode import ode_jacobian_fn  # noqa: E402,F401  (jac(t, y) for solve_ivp)

#: Methods of scipy.optimize.minimize that use ``hess`` / ``hessp``.
HESS_METHODS = ("newton-cg", "dogleg", "trust-ncg", "trust-krylov", "trust-exact",
                "trust-constr")
HESSP_METHODS = ("newton-cg", "trust-ncg", "trust-krylov", "trust-constr")


def _name(f):
    return getattr(f, "__name__", type(f).__name__)


def _binds(sig, n):
    if sig is None:
        return True
    try:
        sig.bind(*range(n))
    except TypeError:
        return False
    return True


def _point(helper, f, x0, args):
    """``x0`` as a float64 array (or None) for ``helper(f, x0, *args)``, after refusing
    the pre-issue-30 spelling ``helper(f, a, ...)`` with ``a`` an extra argument of ``f``:
    when ``f`` cannot take ``(x, *args)`` but could take ``(x, x0, *args)``."""
    if x0 is None:
        return None
    try:
        sig = inspect.signature(f)
    except (TypeError, ValueError):
        sig = None
    n = 1 + len(args)
    if not _binds(sig, n) and not _binds(sig, n + 1):
        raise TypeError(f"{helper}({_name(f)}, x0, *args): {_name(f)}{sig} cannot be called "
                        f"with x and the {len(args)} extra argument(s) given; give exactly "
                        f"the arguments it takes after x")
    if not _binds(sig, n) and _binds(sig, n + 1):
        more = ", ".join(["a"] + [f"a{k}" for k in range(2, len(args) + 2)])
        raise TypeError(
            f"{helper}({_name(f)}, ...): the argument after the function is the point x0 "
            f"(helper(f, x0, *args), as sparse_jacobian_fn takes it), but {_name(f)}"
            f"{sig} needs {n + 1} positional arguments and would get {n}. If that argument "
            f"was an extra argument of {_name(f)} (the spelling before issue 30), write "
            f"{helper}({_name(f)}, x0, {more}), or {helper}({_name(f)}, None, {more}) "
            f"without a point")
    x0 = np.asarray(x0, float)
    return x0


def _at(helper, f, x0, x):
    """``x`` as float64, of ``x0``'s size when a point was given (SciPy passes a scalar
    point as shape (1,))."""
    x = np.asarray(x, float)
    if x0 is not None and x.size != x0.size:
        raise ValueError(f"{helper}({_name(f)}): prepared for x of shape {x0.shape}, got "
                         f"{x.shape}")
    return x


def gradient(f: Callable[..., Any], x0: Any = None, *args: Any,
             jit: bool = True) -> Callable[..., NDArray[np.float64]]:
    r"""The gradient function :math:`x \mapsto \nabla f(x, *\mathrm{args})`, for SciPy's ``jac=``.

    One reverse sweep per call (``dualad.grad``), exact to rounding; the result is a
    float64 NumPy array as SciPy expects.

    Parameters
    ----------
    f : callable
        The scalar objective, ``f(x, *args)``.
    x0 : array_like, optional
        The point (any point of the shape SciPy will pass): every call checks ``x`` has
        its shape. ``None`` (default) skips the check.
    *args : object
        Default extra arguments, used when SciPy passes none.
    jit : bool, optional
        Replay through :func:`dualad.jit` (default True): the first call with a given
        shape and dtype traces the gradient and compiles it, later calls replay the program
        (guarded, never stale); a function jit cannot trace runs without it after one
        ``JitFallbackWarning``. ``False``: every call runs the eager sweeps. See
        docs/jit.md, "Prepared derivatives" (a side effect of ``f`` happens once per
        trace, not per call).

    Returns
    -------
    callable
        ``jac(x, *args)``, the gradient as a float64 array of ``x``'s shape.

    See Also
    --------
    value_and_gradient : The value too, in the same sweep.
    minimize_kwargs : Every derivative ``minimize`` can use, in one call.

    Examples
    --------
    >>> import scipy.optimize
    >>> from dualad.jacobians.optimize import gradient
    >>> from dualad.scipy.optimize import rosen
    >>> x0 = np.zeros(2)
    >>> res = scipy.optimize.minimize(rosen, x0, jac=gradient(rosen, x0), method="BFGS")
    >>> print(np.round(res.x, 4))
    [1. 1.]

    Extra arguments of ``f`` come after the point, as SciPy passes them after ``x``:

    >>> f = lambda x, c: np.sum((x - c) ** 2)
    >>> print(gradient(f, x0, np.ones(2))(x0))
    [-2. -2.]
    """
    x0 = _point("gradient", f, x0, args)
    g = Replayed(dualad.grad(f), f"gradient({_name(f)})", jit)

    def jac(x, *more):
        return np.asarray(g(_at("gradient", f, x0, x), *(more or args)), float)
    jac.__name__ = f"gradient({_name(f)})"
    return jac


def value_and_gradient(f: Callable[..., Any], x0: Any = None, *args: Any, jit: bool = True
                       ) -> Callable[..., tuple[float, NDArray[np.float64]]]:
    r"""The function :math:`x \mapsto (f(x), \nabla f(x))` in one sweep, for ``jac=True``.

    One recording and one reverse sweep per call (``dualad.value_and_grad``); the value
    is returned as a float, the gradient as a float64 array.

    Parameters
    ----------
    f : callable
        The scalar objective, ``f(x, *args)``.
    x0 : array_like, optional
        The point (any point of the shape SciPy will pass): every call checks ``x`` has
        its shape. ``None`` (default) skips the check.
    *args : object
        Default extra arguments, used when SciPy passes none.
    jit : bool, optional
        Replay through :func:`dualad.jit` (default True): the first call with a given
        shape and dtype traces the value and the gradient and compiles it, later calls replay the program
        (guarded, never stale); a function jit cannot trace runs without it after one
        ``JitFallbackWarning``. ``False``: every call runs the eager sweeps. See
        docs/jit.md, "Prepared derivatives" (a side effect of ``f`` happens once per
        trace, not per call).

    Returns
    -------
    callable
        ``fun(x, *args)`` returning ``(value, gradient)``.

    See Also
    --------
    gradient : The gradient alone.
    """
    x0 = _point("value_and_gradient", f, x0, args)
    vg = Replayed(dualad.value_and_grad(f), f"value_and_gradient({_name(f)})", jit)

    def fun(x, *more):
        v, g = vg(_at("value_and_gradient", f, x0, x), *(more or args))
        return float(v), np.asarray(g, float)
    fun.__name__ = f"value_and_gradient({_name(f)})"
    return fun


@overload
def hessian_fn(f: Callable[..., Any], x0: Any = None, *args: Any, sparse: Literal[False] = False,
               jit: bool = True) -> Callable[..., np.ndarray[Any, Any]]: ...
@overload
def hessian_fn(f: Callable[..., Any], x0: Any = None, *args: Any, sparse: Literal[True],
               jit: bool = True) -> Callable[..., sp.csr_matrix]: ...
def hessian_fn(f: Callable[..., Any], x0: Any = None, *args: Any, sparse: bool = False,
               jit: bool = True) -> Callable[..., Any]:
    r"""The Hessian function :math:`x \mapsto \nabla^2 f(x)`, for SciPy's ``hess=``.

    Dense by default: forward-over-reverse sweeps (:func:`dualad.jacobians.hessian`),
    exactly symmetric. With ``sparse=True`` (which ``trust-constr`` accepts) a SciPy CSR
    matrix: the pattern is detected and star-colored at the first point and checked at
    every later one, as in :func:`sparse_hessian_fn`.

    Parameters
    ----------
    f : callable
        The scalar objective, ``f(x, *args)``.
    x0 : array_like, optional
        The point: every call checks ``x`` has its shape, and with ``sparse=True`` the
        pattern is detected there (else at the first call's point).
    *args : object
        Default extra arguments, used when SciPy passes none.
    sparse : bool, optional
        Return CSR matrices (default False: dense arrays).
    jit : bool, optional
        Replay through :func:`dualad.jit` (default True): the first call with a given
        shape and dtype traces the Hessian sweeps and compiles it, later calls replay the program
        (guarded, never stale); a function jit cannot trace runs without it after one
        ``JitFallbackWarning``. ``False``: every call runs the eager sweeps. See
        docs/jit.md, "Prepared derivatives" (a side effect of ``f`` happens once per
        trace, not per call).

    Returns
    -------
    callable
        ``hess(x, *args)``, the ``n x n`` Hessian.

    See Also
    --------
    hessp_fn : Hessian-vector products, for Hessian-free methods.
    sparse_hessian_fn : The sparse Hessian prepared at a given point.
    """
    x0 = _point("hessian_fn", f, x0, args)
    prepared = [] if x0 is None or not sparse else [sparse_hessian_fn(f, x0, *args, jit=jit)]
    dense = None if sparse else Replayed(lambda x, *a: hessian(f, x, *a),
                                         f"hessian_fn({_name(f)})", jit)

    def hess(x, *more):
        x = _at("hessian_fn", f, x0, x)
        if sparse:
            if not prepared:
                prepared.append(sparse_hessian_fn(f, x, *args, jit=jit))
            return prepared[0](x, *more)
        return dense(x, *(more or args))
    hess.__name__ = f"hessian({_name(f)})"
    return hess


def sparse_hessian_fn(f: Callable[..., Any], x0: Any, *args: Any, chunk_size: int | None = None,
                      max_memory: int = DEFAULT_MAX_MEMORY,
                      jit: bool = True) -> Callable[..., sp.csr_matrix]:
    """The Hessian function as an exactly symmetric SciPy CSR matrix, prepared at ``x0``.

    The pattern is detected and star-colored once, at ``x0``; each call then costs one
    forward-over-reverse product per color. At every later point the decisions ``f`` takes
    (comparisons, index functions, branches) are checked against the detection's and the
    pattern is detected again where they differ, so the result is never wrong;
    ``hess.checked.redetections`` counts those points.

    Parameters
    ----------
    f : callable
        The scalar objective, ``f(x, *args)``.
    x0 : array_like
        The point to detect the pattern at.
    *args : object
        Extra arguments of ``f``, used when SciPy passes none.
    chunk_size : int, optional
        Colors per sweep (default: as many as fit in ``max_memory``).
    max_memory : int, optional
        Bytes of one sweep's tangents (default 256 MiB).
    jit : bool, optional
        Replay through :func:`dualad.jit` (default True): the first call with a given
        shape and dtype traces the compressed sweeps (and, when the pattern depends on decisions
        ``f`` takes, the detection, guarded by those decisions: a point where ``f``
        decides otherwise traces again) and compiles it, later calls replay the program
        (guarded, never stale); a function jit cannot trace runs without it after one
        ``JitFallbackWarning``. ``False``: every call runs the eager sweeps. See
        docs/jit.md, "Prepared derivatives" (a side effect of ``f`` happens once per
        trace, not per call).

    Returns
    -------
    callable
        ``hess(x, *args)``, a CSR matrix; ``hess.checked`` holds the pattern check (of the
        calls without jit: under jit a point where ``f`` decides otherwise is traced
        again, counted in ``hess.replayed.cache_info()``).

    Raises
    ------
    ValueError
        (from ``hess``) ``x`` has another shape than ``x0``.

    See Also
    --------
    dualad.jacobians.sparse_hessian : The one-off computation.
    """
    problem = scalar_problem("sparse_hessian_fn", f, (np.asarray(x0, float),) + args, 0)
    sparsity = detect_hessian(problem)
    checked = CheckedPattern("hessian", sparsity, star_coloring(sparsity.pattern))
    chunk = hessian_chunk(problem, "forward-over-reverse", chunk_size, max_memory)
    # Under jit the pattern is given when it holds at every point (no decisions of f
    # shaped it), else detected in each trace at its point, guarded by f's decisions.
    given = sparsity.pattern if sparsity.decisions is None else None
    traces = []

    def same_shape(shape):
        if tuple(shape) != tuple(problem.in_shapes[0]):
            raise ValueError(f"sparse_hessian_fn({_name(f)}): prepared for x of shape "
                             f"{problem.in_shapes[0]}, got {tuple(shape)}")

    def eager(x, *a):
        at = Problem("sparse_hessian_fn", f, (x,) + a, 0)
        same_shape(at.in_shapes[0])
        return checked.evaluate(at, chunk)[0]

    def traced(x, *a):
        same_shape(x.shape)
        if given is None:      # the pattern is detected in this trace: count as the check does
            traces.append(1)
            if len(traces) > 1:
                checked.redetections += 1
                checked.points += 1
        return nested.sparse_hessian(f, x, *a, sparsity=given, chunk_size=chunk)
    replayed = Replayed(traced, f"sparse_hessian_fn({_name(f)})", jit) if jit else None

    def hess(x, *more):
        x = np.asarray(x, float)
        if replayed is None:
            return eager(x, *(more or args))
        return replayed(x, *(more or args))
    hess.__name__ = f"sparse_hessian({_name(f)})"
    hess.checked = checked
    hess.replayed = replayed
    return hess


def hessp_fn(f: Callable[..., Any], x0: Any = None, *args: Any,
             jit: bool = True) -> Callable[..., NDArray[np.float64]]:
    r"""The Hessian-vector product :math:`(x, p) \mapsto \nabla^2 f(x)\, p`, for ``hessp=``.

    One forward-over-reverse sweep per call (:func:`dualad.jacobians.hvp`), without
    forming the Hessian: for Newton-CG and the Krylov trust-region methods.

    Parameters
    ----------
    f : callable
        The scalar objective, ``f(x, *args)``.
    x0 : array_like, optional
        The point (any point of the shape SciPy will pass): every call checks ``x`` has
        its shape. ``None`` (default) skips the check.
    *args : object
        Default extra arguments, used when SciPy passes none.
    jit : bool, optional
        Replay through :func:`dualad.jit` (default True): the first call with a given
        shape and dtype traces the product and compiles it, later calls replay the program
        (guarded, never stale); a function jit cannot trace runs without it after one
        ``JitFallbackWarning``. ``False``: every call runs the eager sweeps. See
        docs/jit.md, "Prepared derivatives" (a side effect of ``f`` happens once per
        trace, not per call).

    Returns
    -------
    callable
        ``hessp(x, p, *args)``, a float64 array of ``x``'s shape.

    See Also
    --------
    hessian_fn : The whole Hessian.
    """
    x0 = _point("hessp_fn", f, x0, args)
    product = Replayed(lambda x, p, *a: hvp(f, x, p, *a), f"hessp_fn({_name(f)})", jit)

    def hessp(x, p, *more):
        return np.asarray(product(_at("hessp_fn", f, x0, x), np.asarray(p, float),
                                  *(more or args)), float)
    hessp.__name__ = f"hessp({_name(f)})"
    return hessp


def minimize_kwargs(f: Callable[..., Any], x0: Any, method: str = "trust-exact",
                    hessian: Literal["auto", "hess", "hessp"] | None = "auto",
                    args: tuple[Any, ...] = (), jit: bool = True) -> dict[str, Any]:
    """Keyword arguments for ``scipy.optimize.minimize`` with exact derivatives.

    ``fun``, ``x0``, ``method``, ``args``, ``jac`` (:func:`gradient`) and, as the method
    uses them, ``hess`` (:func:`hessian_fn`) or ``hessp`` (:func:`hessp_fn`):
    ``minimize(**minimize_kwargs(f, x0, method="trust-exact"))``.

    Parameters
    ----------
    f : callable
        The scalar objective, ``f(x, *args)``.
    x0 : array_like
        The starting point.
    method : str, optional
        SciPy's method (default ``"trust-exact"``).
    hessian : {"auto", "hess", "hessp", None}, optional
        ``"auto"`` (default): ``hess`` for dogleg, trust-exact and trust-constr, ``hessp``
        for Newton-CG, trust-ncg and trust-krylov, neither for the other methods;
        ``"hess"``, ``"hessp"``: that one; None: neither.
    args : tuple, optional
        Extra arguments of ``f``.
    jit : bool, optional
        Passed to :func:`gradient`, :func:`hessian_fn`, :func:`hessp_fn` (default True:
        they replay through :func:`dualad.jit`; ``False``: eager sweeps at every call).

    Returns
    -------
    dict
        The keyword arguments.

    Raises
    ------
    ValueError
        An unknown ``hessian``.

    See Also
    --------
    least_squares_kwargs : The same for ``least_squares``.
    dualad.scipy.optimize.minimize : Differentiating *through* the minimizer.

    Examples
    --------
    >>> import scipy.optimize
    >>> from dualad.jacobians.optimize import minimize_kwargs
    >>> from dualad.scipy.optimize import rosen
    >>> kwargs = minimize_kwargs(rosen, np.zeros(3), method="newton-cg")
    >>> sorted(kwargs)
    ['args', 'fun', 'hessp', 'jac', 'method', 'x0']
    >>> res = scipy.optimize.minimize(**minimize_kwargs(rosen, np.zeros(3)))
    >>> print(res.success, np.round(res.x, 3))
    True [1. 1. 1.]
    """
    x0 = np.asarray(x0, float)
    kw = {"fun": f, "x0": x0, "method": method, "jac": gradient(f, x0, *args, jit=jit),
          "args": tuple(args)}
    m = method.lower() if isinstance(method, str) else method
    if hessian == "auto":
        hessian = "hess" if m in HESS_METHODS and m not in ("newton-cg", "trust-ncg",
                                                           "trust-krylov") else \
            ("hessp" if m in HESSP_METHODS else None)
    if hessian == "hess":
        kw["hess"] = hessian_fn(f, x0, *args, jit=jit)
    elif hessian == "hessp":
        kw["hessp"] = hessp_fn(f, x0, *args, jit=jit)
    elif hessian is not None:
        raise ValueError(f"minimize_kwargs: hessian={hessian!r} is not one of 'auto', 'hess', "
                         f"'hessp', None")
    return kw


def jacobian_fn(residual: Callable[..., Any], x0: Any = None, *args: Any, mode: str = "auto",
                jit: bool = True) -> Callable[..., NDArray[np.float64]]:
    r"""The dense Jacobian function :math:`x \mapsto J(x)`, for ``least_squares(..., jac=)``.

    Each call is :func:`dualad.jacobians.jacobian` of the residuals, reshaped to the
    ``m x n`` matrix SciPy expects.

    Parameters
    ----------
    residual : callable
        The residuals, ``residual(x, *args)``.
    x0 : array_like, optional
        The point (any point of the shape SciPy will pass): every call checks ``x`` has
        its shape. ``None`` (default) skips the check.
    *args : object
        Default extra arguments, used when SciPy passes none.
    mode : {"auto", "forward", "reverse"}, optional
        As in :func:`dualad.jacobians.jacobian` (default ``"auto"``).
    jit : bool, optional
        Replay through :func:`dualad.jit` (default True): the first call with a given
        shape and dtype traces the Jacobian sweeps and compiles it, later calls replay the program
        (guarded, never stale); a function jit cannot trace runs without it after one
        ``JitFallbackWarning``. ``False``: every call runs the eager sweeps. See
        docs/jit.md, "Prepared derivatives" (a side effect of ``f`` happens once per
        trace, not per call).

    Returns
    -------
    callable
        ``jac(x, *args)``, a float64 ``m x n`` array.

    Raises
    ------
    TypeError
        ``jacobian_fn(residual, a)`` with ``a`` an extra argument of ``residual`` (the
        spelling before issue 30): the argument after the function is the point.

    See Also
    --------
    sparse_jacobian_fn : A CSR Jacobian through a prepared plan.
    ode_jacobian_fn : ``jac(t, y)`` for ``scipy.integrate.solve_ivp``.

    Examples
    --------
    >>> import scipy.optimize
    >>> from dualad.jacobians.optimize import jacobian_fn
    >>> r = lambda x, c: np.array([x[0] ** 2 - c, x[0] * x[1] - 1.0])
    >>> x0 = np.array([1.0, 1.0])
    >>> res = scipy.optimize.least_squares(r, x0, jac=jacobian_fn(r, x0, 4.0), args=(4.0,))
    >>> print(np.round(res.x, 6))
    [2.  0.5]
    """
    x0 = _point("jacobian_fn", residual, x0, args)
    if jit not in (True, False):
        raise TypeError(f"jacobian_fn({_name(residual)}): jit= takes True or False, got {jit!r}")
    # Under jit: a plan, made at the first point (x0, or the first call's), weighs the sparse
    # ways as jacobian() does (detect="worth") and replays its choice.
    planned = []

    def sweeps(x, *a):
        if not jit:
            return jacobian(residual, x, *a, mode=mode)
        if not planned:
            planned.append(plan(residual, x if x0 is None else x0, *a, mode=mode,
                                output="dense", detect="worth"))
        return planned[0](x, *a)

    def jac(x, *more):
        x = _at("jacobian_fn", residual, x0, x)
        j = sweeps(x, *(more or args))
        return np.asarray(j, float).reshape(-1, np.size(x))
    jac.__name__ = f"jacobian({_name(residual)})"
    jac.planned = planned      # [the Plan] once made (jit=True)
    return jac


def sparse_jacobian_fn(residual: Callable[..., Any], x0: Any, *args: Any, mode: str = "auto",
                       jit: bool = True) -> Callable[..., sp.csr_matrix]:
    """The Jacobian function as SciPy CSR matrices, planned once at ``x0``.

    The planner (:func:`dualad.jacobians.plan`, ``output="sparse"``) runs once at ``x0``:
    the sparsity is detected and colored and the mode chosen; every call reuses the plan.
    The pattern is checked at each point against the decisions of ``residual`` and
    detected again where it may differ (``jac.plan.redetections`` counts those points).

    Parameters
    ----------
    residual : callable
        The residuals, ``residual(x, *args)``.
    x0 : array_like
        The point to plan at.
    *args : object
        Extra arguments of ``residual``, used when SciPy passes none.
    mode : str, optional
        As in :func:`dualad.jacobians.plan` (default ``"auto"``).
    jit : bool, optional
        As in :func:`dualad.jacobians.plan` (default True: the plan's calls replay
        through :func:`dualad.jit`).

    Returns
    -------
    callable
        ``jac(x, *args)``, a CSR ``m x n`` matrix; ``jac.plan`` is the
        :class:`~dualad.jacobians.Plan`.

    See Also
    --------
    jacobian_fn : Dense Jacobians.
    least_squares_kwargs : Everything ``least_squares`` needs, in one call.
    """
    p = plan(residual, np.asarray(x0, float), *args, mode=mode, output="sparse", jit=jit)

    def jac(x, *more):
        return p(np.asarray(x, float), *(more or args))
    jac.__name__ = f"sparse_jacobian({_name(residual)})"
    jac.plan = p
    return jac


def least_squares_kwargs(residual: Callable[..., Any], x0: Any, sparse: bool = False,
                         args: tuple[Any, ...] = (), jit: bool = True) -> dict[str, Any]:
    """Keyword arguments for ``scipy.optimize.least_squares`` with exact Jacobians.

    ``fun``, ``x0``, ``args`` and ``jac``: dense (:func:`jacobian_fn`), or with
    ``sparse=True`` CSR through a plan prepared at ``x0`` (:func:`sparse_jacobian_fn`),
    together with ``tr_solver="lsmr"``, which keeps the Jacobian sparse.

    Parameters
    ----------
    residual : callable
        The residuals, ``residual(x, *args)``.
    x0 : array_like
        The starting point.
    sparse : bool, optional
        A sparse Jacobian (default False).
    args : tuple, optional
        Extra arguments of ``residual``.
    jit : bool, optional
        Passed to :func:`jacobian_fn` / :func:`sparse_jacobian_fn` (default True).

    Returns
    -------
    dict
        The keyword arguments.

    See Also
    --------
    minimize_kwargs : The same for ``minimize``.
    dualad.scipy.optimize.least_squares : Differentiating *through* the solution.

    Examples
    --------
    >>> import scipy.optimize
    >>> from dualad.jacobians.optimize import least_squares_kwargs
    >>> def residual(x):
    ...     return np.concatenate([x[1:] - x[:-1] ** 2, [x[0] - 1.0]])
    >>> res = scipy.optimize.least_squares(**least_squares_kwargs(residual, np.zeros(5),
    ...                                                          sparse=True))
    >>> print(res.success, np.round(res.x, 6))
    True [1. 1. 1. 1. 1.]
    """
    x0 = np.asarray(x0, float)
    kw = {"fun": residual, "x0": x0, "args": tuple(args)}
    if sparse:
        kw["jac"] = sparse_jacobian_fn(residual, x0, *args, jit=jit)
        kw["tr_solver"] = "lsmr"
    else:
        kw["jac"] = jacobian_fn(residual, x0, *args, jit=jit)
    return kw
