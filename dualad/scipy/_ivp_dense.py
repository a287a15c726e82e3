"""y(s) from SciPy's dense output, fast: the adjoint reads the forward interpolant at every
right-hand-side evaluation of its backward solves.

SciPy's ``OdeSolution(t)`` finds the step by ``np.searchsorted`` and evaluates the step's
polynomial with ``np.tile`` and ``np.cumprod``: tens of µs of NumPy calls on a two-state
system, as much as the adjoint's own replayed dynamics. For the Runge–Kutta methods'
interpolant (RK23, RK45: y(t) = y_old + h·Q·(x, x², ..., x^k), x = (t − t_old)/h)
:func:`interpolant` returns the same evaluation with the step found by ``bisect`` and the
powers of x as Python floats. The values are bitwise SciPy's (the same products in the
same order, the same ``np.dot``); any other interpolant (DOP853, BDF, Radau, LSODA) is
SciPy's own call.

Also here: which interpolant the adjoint reads (:func:`dense_solution`: the primal's own
when it was solved at the same values) and where each backward solve starts
(:func:`segment`).
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right

import numpy as np
import scipy.integrate as _si
from scipy.integrate._ivp.rk import RkDenseOutput

from ..core.tracer import primal_value
from ._integrate_common import _plain

__all__ = ["at", "dense_solution", "interpolant", "same", "segment"]


def interpolant(sol):
    """``t ↦ sol(t)`` for a scalar ``t``; faster when every step is a Runge–Kutta one."""
    try:
        if not all(type(s) is RkDenseOutput for s in sol.interpolants):
            return sol
        ts, side, ascending, n = (list(map(float, sol.ts_sorted)), sol.side, sol.ascending,
                                  sol.n_segments)
        steps = [(float(s.t_old), float(s.h), s.Q, s.y_old, s.order) for s in sol.interpolants]
    except (AttributeError, TypeError):    # another SciPy's OdeSolution: its own call
        return sol
    find = bisect_left if side == "left" else bisect_right
    last = n - 1

    def y_at(t):
        t = float(t)
        segment = min(max(find(ts, t) - 1, 0), last)
        if not ascending:
            segment = last - segment
        t_old, h, Q, y_old, order = steps[segment]
        x = (t - t_old) / h
        p = [x]
        for _ in range(order):
            p.append(p[-1] * x)
        y = h * np.dot(Q, np.array(p))
        y += y_old
        return y
    return y_at


def same(a, b):
    return np.shape(a) == np.shape(b) and np.array_equal(a, b)


def segment(settings, dense, t_from, t_to):
    """The settings of one backward solve of the adjoint, from t_from to t_to. With the
    forward solution's interpolant at hand, the first step is the forward solver's step
    at t_from (λ's dynamics have the same Jacobian, so the same time scales): each of the
    segments between output times starts at its working step size, not from SciPy's
    cautious initial guess and the steps that grow out of it."""
    s = settings.sweep(t_end=None)
    ts = getattr(dense, "ts", None)
    if ts is None or len(ts) < 2 or any(k == "first_step" for k, _ in s.options):
        return s
    a, b = float(primal_value(t_from)), float(primal_value(t_to))
    i = min(max(int(np.searchsorted(ts, a)), 1), len(ts) - 1)
    h = min(abs(float(ts[i] - ts[i - 1])), abs(a - b))
    return s if not h > 0 else s._replace(options=s.options + (("first_step", h),))


def dense_solution(y0, t0, times, params, func, settings):
    """The forward solution's dense output at sweep tolerance, for y(s) in the adjoint:
    the primal solve's own interpolant when it was solved at these values and tolerances
    (``settings.cache``: the user's solve, or the latest primal call, see
    :func:`dualad.scipy._ivp._ivp_impl`), else one dense forward solve."""
    y0, params = np.asarray(y0, float), list(params)
    t0, tv = float(t0), np.asarray(times, float)
    end = settings.t_end
    if end is None:
        end = tv[np.argmax(np.abs(tv - t0))]
    s = settings.sweep()
    if end == t0:
        return lambda t: y0
    cache = settings.cache
    if cache is not None and s.rtol == settings.rtol and np.array_equal(s.atol, settings.atol):
        for entry in (cache, cache.get("last")):
            if (entry is not None and entry.get("sol") is not None and
                    at(entry, y0, t0, params) and
                    entry["sol"].t_min <= min(t0, end) and entry["sol"].t_max >= max(t0, end)):
                return entry["sol"]   # the primal's own interpolant: same solution
    res = _si.solve_ivp(lambda t, y: _plain("solve_ivp", func(t, y, *params)), (t0, float(end)),
                        y0, method=s.method, dense_output=True, rtol=s.rtol, atol=s.atol,
                        **dict(s.options))
    if res.status == -1:
        raise RuntimeError(f"solve_ivp: the dense forward solve of the adjoint sweep failed: "
                           f"{res.message}")
    return res.sol


def at(entry, y0, t0, params):
    """Whether a cached solve ``entry`` was solved from ``y0``, ``t0`` with ``params``."""
    return (same(entry["y0"], y0) and entry["t0"] == t0 and
            len(params) == len(entry["params"]) and
            all(same(p, q) for p, q in zip(params, entry["params"])))
