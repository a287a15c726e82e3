"""``solve_ivp``: SciPy's signature and result, differentiable (the primitive: :mod:`._ivp`).

SciPy solves the user's problem once, with the user's settings, on the plain values
underneath every trace: ``t``, ``status``, ``message``, ``nfev`` ... are SciPy's own, and
``y`` has SciPy's values. When something is traced (y0, args, t_span's ends, t_eval, or
a value ``fun`` closes over: see :mod:`._closure`), ``y`` (and ``sol(t)``) is the output of
the ``ivp_p`` primitive, whose primal call reuses that solution and whose rules solve the
sensitivity or adjoint equations. Without t_eval the output times are the solver's steps:
their interior is a constant of the derivative (the steps are the solver's choice), the
first and last are t_span's ends and differentiable (the last is a terminal event's
time when one stopped the solve: :mod:`._ivp_events`).
"""
from __future__ import annotations

import numpy as np
import scipy.integrate as _si
from scipy.optimize import OptimizeResult

from ..numpy import array as _array
from ..ops import concatenate, index, reshape, stack, transpose
from ..core.tracer import Box, primal_value, shape_of, unguarded_value
from ._integrate_common import _bind
from ._ivp import AUTO_FORWARD_MAX, IvpSettings, ivp_p, jacobian_y
from ._ivp_events import event_times

__all__ = ["OdeResult", "DenseOutput", "solve_ivp"]

_SENSITIVITIES = ("auto", "forward", "adjoint")


class OdeResult(OptimizeResult):
    """SciPy's ``solve_ivp`` result (t, y, sol, t_events, y_events, nfev, njev, nlu,
    status, message, success) with ``y`` (and ``t``, ``sol``) differentiable."""


class DenseOutput:
    """``sol`` of a differentiable ``solve_ivp``: ``sol(t)`` is y(t), shape (n,) for a
    scalar t and (n, k) for k times, differentiable in t (dy/dt = f) and in everything the
    solution depends on. SciPy's ``OdeSolution`` attributes (``ts``, ``t_min``, ``t_max``,
    ``interpolants``, ``n_segments``) are those of the primal solution."""

    def __init__(self, solution, y0, t0, traced, func, settings):
        self._solution, self._y0, self._t0 = solution, y0, t0
        self._traced, self._func, self._settings = traced, func, settings

    def __getattr__(self, name):
        return getattr(self._solution, name)

    def __call__(self, t):
        if isinstance(t, (list, tuple)):
            t = _array(t)
        if not isinstance(t, Box) and not any(isinstance(v, Box) for v in
                                              (self._y0, self._t0, *self._traced)):
            return self._solution(t)
        tv = np.asarray(primal_value(t))
        if tv.ndim > 1 or tv.dtype.kind not in "iuf":
            raise ValueError(f"solve_ivp: sol(t) takes a real scalar or 1-D array of times, "
                             f"got shape {tv.shape} and dtype {tv.dtype}")
        times = reshape(t, (-1,)) if isinstance(t, Box) else tv.astype(float).reshape(-1)
        Y = ivp_p(self._y0, self._t0, times, *self._traced, func=self._func,
                  settings=self._settings)
        return reshape(Y, (-1,)) if tv.ndim == 0 else transpose(Y)


def _vector(name, v):
    """A list or tuple (maybe of traced scalars) as one array."""
    if isinstance(v, (list, tuple)):
        return _array(v) if any(isinstance(x, Box) for x in v) else np.asarray(v, dtype=float)
    return v


def _check_y0(y0):
    y0 = _vector("y0", y0)
    arr = np.asarray(unguarded_value(y0))   # its shape and dtype only
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"solve_ivp: argument y0 has shape {arr.shape}; it must be a non-empty "
                         f"1-D array (SciPy's solve_ivp integrates 1-D states: ravel a matrix "
                         f"state and reshape inside fun)")
    if isinstance(y0, Box) and arr.dtype.kind not in "f":
        raise TypeError(f"solve_ivp: argument y0 has dtype {arr.dtype} and shape {arr.shape}; "
                        f"traced states must be real floating-point (integrate Re and Im as "
                        f"separate components)")
    return y0


def solve_ivp(fun, t_span, y0, method="RK45", t_eval=None, dense_output=False, events=None,
              vectorized=False, args=None, *, sensitivity="auto", sweep_rtol=None,
              sweep_atol=None, jit=True, **options):
    """``scipy.integrate.solve_ivp``, differentiable in y0, the traced entries of ``args``,
    traced values ``fun`` closes over, t_span's ends and t_eval, in forward and reverse
    mode; second order too (see docs/integrate.md).

    Same signature and result as SciPy (``fun(t, y, *args)``, y0 1-D, SciPy's methods
    and options). The derivative is that of the exact solution, computed by further
    solves at ``sweep_rtol`` (default ``rtol``) and ``sweep_atol`` (default ``atol``):
    the sensitivities are in SciPy's error control, as accurate as the solution; pass
    tighter ones for a tighter derivative. Their right-hand sides are traced once by
    ``dualad.jit`` and replayed (``jit=False``: eagerly); implicit methods get dualad's
    ∂f/∂y when you give no ``jac``. Forward mode uses forward sensitivities; reverse mode uses
    ``sensitivity="adjoint"`` (backward solve, cost independent of the number of
    parameters), ``"forward"`` (one solve of the whole Jacobian) or ``"auto"`` (forward
    while n·(n + 1 + P) ≤ 4000). Event times (``t_events``) and states
    (``y_events``) are differentiable too (implicit function theorem, :mod:`._ivp_events`);
    a terminal event's time is then the last output time.
    """
    if not callable(fun):
        raise TypeError(f"solve_ivp: fun must be callable, got {type(fun).__name__}")
    if sensitivity not in _SENSITIVITIES:
        raise ValueError(f"solve_ivp: sensitivity={sensitivity!r}; use one of {_SENSITIVITIES}")
    if jit is not True and jit is not False:
        raise TypeError(f"solve_ivp: jit= takes True or False, got {jit!r}")
    if isinstance(args, Box) or (args is not None and not isinstance(args, (tuple, list))):
        raise TypeError(f"solve_ivp: args must be a tuple (e.g. args=(k,)), got "
                        f"{type(args).__name__}")
    if not isinstance(t_span, (tuple, list)) and np.shape(primal_value(t_span)) != (2,):
        raise ValueError("solve_ivp: t_span must be a pair (t0, tf)")
    if len(t_span) != 2:
        raise ValueError(f"solve_ivp: t_span must be a pair (t0, tf), got {len(t_span)} values")
    t0, tf = t_span[0], t_span[1]
    y0 = _check_y0(y0)
    t_eval = _vector("t_eval", t_eval)
    args = tuple(args) if args is not None else ()
    bound, traced = _bind(fun, args, 2)
    ev_list = None if events is None else (
        list(events) if isinstance(events, (list, tuple)) else [events])
    # Under dualad.jit the parameters' and y0's values are read without a guard when the
    # recorded program does not depend on them: output times given, no events, no dense
    # output. The primal solve below only fills the primitive's cache, which a replay with
    # other values misses (it compares them) and solves again; the first-order adjoint is
    # one primitive reading the interpolant at its call (a differentiated one reads values
    # with guards). Otherwise (res.t or an event decides the output times, the user holds
    # the interpolant) a read guards, and other values trace again.
    replayable = t_eval is not None and ev_list is None and not dense_output
    read = unguarded_value if replayable else primal_value
    plain_params = [read(p) for p in traced]
    plain_fun = lambda t, y: bound(t, y, *plain_params)  # noqa: E731
    extra = dict(options)
    if "jac" in extra and callable(extra["jac"]):
        jac, jac_traced = _bind(extra["jac"], args, 2)
        jac_plain = [read(p) for p in jac_traced]
        extra["jac"] = lambda t, y: jac(t, y, *jac_plain)
    bound_events = [_bind(ev, args, 2) for ev in ev_list or ()]
    is_traced = any(isinstance(v, Box) for v in (y0, t0, tf, t_eval, *traced)) or any(
        q for _, q in bound_events)
    if ev_list is not None:
        extra["events"] = [_plain_event(ev, g, q) for ev, (g, q) in zip(ev_list, bound_events)]
    t_eval_plain = None if t_eval is None else np.asarray(primal_value(t_eval), float)
    y0_plain = np.asarray(read(y0))
    if is_traced and "jac" not in extra and not vectorized:
        jac = _dualad_jac(bound, plain_params, method, float(primal_value(t0)), y0_plain, jit)
        if jac is not None:
            extra["jac"] = jac
    # the adjoint reuses the primal's interpolant (same tolerances): ask SciPy for it
    dense = dense_output or (is_traced and _may_use_adjoint(sensitivity, y0_plain,
                                                            plain_params))
    res = _si.solve_ivp(plain_fun, (float(primal_value(t0)), float(primal_value(tf))),
                        y0_plain, method=method, t_eval=t_eval_plain,
                        dense_output=dense, vectorized=vectorized, **extra)
    if is_traced and res.status == -1:
        raise RuntimeError(f"solve_ivp: the integration failed ({res.message}), so its "
                           f"derivatives cannot be computed")
    if not is_traced and res.sol is None:
        return res
    func, y0, times, settings = _prepare(res, bound, plain_params, y0, t0, tf, t_eval,
                                         t_eval_plain, method, vectorized, sensitivity,
                                         sweep_rtol, sweep_atol, options, jit, read)
    if not dense_output:
        res.sol = None   # asked for the adjoint only (kept in settings.cache)
    sol = None if res.sol is None else DenseOutput(res.sol, y0, t0, traced, func, settings)
    if not is_traced:   # SciPy's result; sol(t) differentiable in a traced t
        res.sol = sol
        return res
    t_events, y_events = res.t_events, res.y_events
    if ev_list is not None:
        taus, ys, end = event_times(res, ev_list, bound_events, y0, t0, traced, func, settings)
        t_events = [stack(t) if t else np.zeros(0) for t in taus]
        y_events = [stack(y) if y else np.zeros((0, shape_of(y0)[0])) for y in ys]
        if end is not None:   # a terminal event ended the solve at its (traced) time
            times = _ends_at(times, t_eval, res, end)
            settings = settings._replace(t_end=float(res.t[-1]))
    Y = ivp_p(y0, t0, times, *traced, func=func, settings=settings)
    return OdeResult(t=times if isinstance(times, Box) else np.asarray(times),
                     y=transpose(Y), sol=sol, t_events=t_events, y_events=y_events,
                     nfev=res.nfev, njev=res.njev, nlu=res.nlu, status=res.status,
                     message=res.message, success=res.success)


def _may_use_adjoint(sensitivity, y0, params):
    """Whether reverse mode may take the adjoint (``_ivp._choose``'s rule)."""
    if sensitivity != "auto":
        return sensitivity == "adjoint"
    n = y0.size
    return n * (n + 1 + sum(np.size(p) for p in params)) > AUTO_FORWARD_MAX


def _dualad_jac(bound, params, method, t0, y0, jit):
    """∂f/∂y from dualad for an implicit method's Newton iterations (SciPy estimates it
    by differences otherwise), or None when the method takes none or dualad cannot
    differentiate ``fun`` at (t0, y0) (then SciPy's differences, as before)."""
    if not IvpSettings(method).implicit():
        return None
    n = y0.size
    jy = jacobian_y(lambda t, y, *p: reshape(bound(t, y, *p), (n,)),
                    getattr(bound, "__name__", "fun"), jit)
    try:
        j0 = np.asarray(jy(t0, np.asarray(y0, float), *params))
    except Exception:   # noqa: BLE001  (SciPy's differences, as without dualad)
        return None
    if j0.shape != (n, n) or not np.all(np.isfinite(j0)):
        return None
    return lambda t, y: jy(float(t), y, *params)


def _plain_event(ev, g, q):
    """The event function SciPy calls: on plain values, with its terminal/direction."""
    plain_q = [primal_value(v) for v in q]

    def h(t, y):
        return g(t, y, *plain_q)
    for attr in ("terminal", "direction"):
        if hasattr(ev, attr):
            setattr(h, attr, getattr(ev, attr))
    return h


def _ends_at(times, t_eval, res, end):
    """The output times when a terminal event at ``end`` stopped the solve."""
    if t_eval is not None:   # the t_eval times before the event; none moves with it
        return index(t_eval, slice(0, len(res.t))) if isinstance(t_eval, Box) else res.t
    if len(res.t) < 2:
        return reshape(end, (1,))
    first = index(times, slice(0, 1)) if isinstance(times, Box) else times[:1]
    return concatenate([first, res.t[1:-1], reshape(end, (1,))])


def _prepare(res, bound, plain_params, y0, t0, tf, t_eval, t_eval_plain, method, vectorized,
             sensitivity, sweep_rtol, sweep_atol, options, jit=True, read=primal_value):
    """The primitive's func (on 1-D states), y0, output times and settings, the cache
    holding SciPy's solution ``res``."""
    n = shape_of(y0)[0]
    if vectorized:   # SciPy calls a vectorized fun with (n, k) states: give it (n, 1)
        def func(t, y, *p):
            return reshape(bound(t, reshape(y, (n, 1)), *p), (n,))
    else:
        def func(t, y, *p):
            return reshape(bound(t, y, *p), (n,))
    func.__name__ = bound.__name__
    if not isinstance(y0, Box):
        y0 = np.asarray(y0, dtype=float)
    if t_eval is not None:
        times = t_eval
    elif len(res.t) < 2:   # t_span of zero length: the one output is y0 at t0
        times = reshape(t0, (1,)) if isinstance(t0, Box) else res.t
    elif isinstance(t0, Box) or isinstance(tf, Box):
        times = concatenate([reshape(t0, (1,)), res.t[1:-1], reshape(tf, (1,))])
    else:
        times = res.t
    rtol, atol = options.get("rtol", 1e-3), options.get("atol", 1e-6)
    settings = IvpSettings(
        method, rtol, atol, float(primal_value(tf)),
        tuple((k, v) for k, v in options.items() if k in ("max_step", "min_step", "first_step",
                                                          "lband", "uband")),
        float(sweep_rtol) if sweep_rtol is not None else float(np.min(rtol)),
        float(sweep_atol) if sweep_atol is not None else float(np.min(atol)),
        sensitivity,
        {"y0": np.asarray(read(y0), float), "t0": float(primal_value(t0)),
         "params": plain_params, "times": res.t if t_eval is None else t_eval_plain,
         "y": res.y.T.copy(), "sol": res.sol}, jit)
    return func, y0, times, settings
