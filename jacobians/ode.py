"""``scipy.integrate.solve_ivp(..., jac=)``: the Jacobian ∂fun/∂y of an ODE's right-hand
side, as the stiff solvers (BDF, Radau, LSODA) call it, ``jac(t, y, *args)``.

A plan (:func:`dualad.jacobians.plan`) is made once, at ``(t0, y0)``, differentiating the
second argument only: the planner detects the sparsity of ``fun`` in ``y``, colors it,
and picks forward, reverse or their sparse forms; every call reuses that choice (and
checks the pattern against the decisions ``fun`` takes, as :func:`sparse_jacobian_fn`
does). BDF and Radau take the sparse result as it is and factor it sparsely.
"""
from __future__ import annotations

__all__ = ["ode_jacobian_fn"]

from typing import TYPE_CHECKING, Any

import numpy as np

from ._common import fname as _name
from .plan import plan

if TYPE_CHECKING:
    from collections.abc import Callable


def _state(fun, name, y):
    """``y`` as a float64 array; None, text and complex states are refused by name (a
    complex state cast to float would lose its imaginary part without a word)."""
    if y is None:
        raise TypeError(f"ode_jacobian_fn({_name(fun)}): {name} is None; pass the state as "
                        f"a 1-D float array")
    y = np.asarray(y)
    if y.dtype.kind == "c":
        raise TypeError(f"ode_jacobian_fn({_name(fun)}): {name} is complex ({y.dtype}, shape "
                        f"{y.shape}); the planned Jacobian is real. Write the system in its "
                        f"real and imaginary parts (np.concatenate([y.real, y.imag]))")
    if y.dtype.kind not in "biuf":
        raise TypeError(f"ode_jacobian_fn({_name(fun)}): {name} has dtype {y.dtype}; pass "
                        f"the state as a 1-D float array")
    return y.astype(float, copy=False)


def ode_jacobian_fn(fun: Callable[..., Any], y0: Any, *args: Any, t0: float = 0.0,
                    sparse: str | bool = "auto", mode: str = "auto",
                    jit: bool = True) -> Callable[..., Any]:
    r"""The Jacobian :math:`(t, y) \mapsto \partial f/\partial y\,(t, y)`, for ``solve_ivp(jac=)``.

    Planned once at ``(t0, y0)`` (:func:`dualad.jacobians.plan` with ``argnums=1``):
    dense or, when the pattern is sparse enough to pay, a SciPy CSR matrix, which BDF and
    Radau factor sparsely. LSODA needs a dense Jacobian: pass ``sparse=False``.

    Parameters
    ----------
    fun : callable
        The right-hand side, ``fun(t, y, *args)``, as ``solve_ivp`` calls it.
    y0 : array_like
        The initial state (1-D): the plan is made there.
    *args : object
        Extra arguments of ``fun``, used when ``solve_ivp`` passes none (give them to
        ``solve_ivp(args=...)`` too).
    t0 : float, optional
        The time to plan at (default 0.0; ``t`` is not differentiated).
    sparse : {"auto", True, False}, optional
        ``"auto"`` (default): as the planner chooses; ``True``: always CSR; ``False``:
        always a dense array.
    mode : str, optional
        As in :func:`dualad.jacobians.plan` (default ``"auto"``).
    jit : bool, optional
        Replay the plan's sweeps through :func:`dualad.jit` (default True): the first
        call traces and compiles them, later calls run the program, guarded so a replay is
        never stale; ``False``: eager sweeps at every call. A side effect of ``fun``
        happens once per trace, not per call (docs/jit.md).

    Returns
    -------
    callable
        ``jac(t, y, *args)``, the ``n x n`` Jacobian (float64 array or CSR matrix);
        ``jac.plan`` is the :class:`~dualad.jacobians.Plan` (``jac.plan.explain()``).

    Raises
    ------
    ValueError
        ``y0`` is not 1-D, ``fun(t0, y0)`` does not have ``y0``'s shape, or (from ``jac``)
        ``y`` has another shape than ``y0``.
    TypeError
        ``y0`` or ``y`` is None, text or complex, or ``fun`` returns None.

    See Also
    --------
    jacobian_fn : Dense Jacobians for ``least_squares``.
    sparse_jacobian_fn : CSR Jacobians for ``least_squares``.

    Examples
    --------
    Robertson's stiff chemical kinetics, integrated by BDF with the exact Jacobian:

    >>> from scipy.integrate import solve_ivp
    >>> from dualad.jacobians.optimize import ode_jacobian_fn
    >>> def robertson(t, y):
    ...     return np.array([-0.04 * y[0] + 1e4 * y[1] * y[2],
    ...                      0.04 * y[0] - 1e4 * y[1] * y[2] - 3e7 * y[1] ** 2,
    ...                      3e7 * y[1] ** 2])
    >>> y0 = np.array([1.0, 0.0, 0.0])
    >>> sol = solve_ivp(robertson, (0.0, 40.0), y0, method="BDF", rtol=1e-6, atol=1e-10,
    ...                 jac=ode_jacobian_fn(robertson, y0))
    >>> print(sol.success, np.round(sol.y[:, -1], 4))
    True [0.7158 0.     0.2842]
    """
    y0 = _state(fun, "y0", y0)
    if y0.ndim != 1:
        raise ValueError(f"ode_jacobian_fn({_name(fun)}): y0 must be 1-D as solve_ivp takes "
                         f"it, got shape {y0.shape}")
    t0 = float(t0)
    value = fun(t0, y0, *args)
    if value is None:
        raise TypeError(f"ode_jacobian_fn({_name(fun)}): fun(t0, y0) returned None; did it "
                        f"forget to return dy/dt?")
    out = np.shape(value)
    if out != y0.shape:
        raise ValueError(f"ode_jacobian_fn({_name(fun)}): fun(t0, y0) has shape {out}, but "
                         f"an ODE's right-hand side has y0's shape {y0.shape}")
    output = {"auto": "auto", True: "sparse", False: "dense"}.get(sparse)
    if output is None:
        raise ValueError(f"ode_jacobian_fn: sparse={sparse!r} is not one of 'auto', True, "
                         f"False")
    p = plan(fun, t0, y0, *args, argnums=1, mode=mode, output=output,
             sparse=False if sparse is False else "auto", jit=jit)

    def jac(t, y, *more):
        y = _state(fun, "y", y)
        if y.shape != y0.shape:
            raise ValueError(f"ode_jacobian_fn({_name(fun)}): planned for y of shape "
                             f"{y0.shape}, got {y.shape}")
        j = p(float(t), y, *(more or args))
        return j if not isinstance(j, np.ndarray) else np.asarray(j, float).reshape(
            y.size, y.size)
    jac.__name__ = f"ode_jacobian({_name(fun)})"
    jac.plan = p
    return jac
