"""``dualad.scipy.integrate``: solve_ivp, odeint and quad, differentiable in both modes,
to order 2. (solve_ivp: :mod:`._ivp_api` and the primitive :mod:`._ivp`.)

odeint solves y' = f(y, t, p), y(t₀) = y₀ and returns Y_i = y(t_i). Its rules:

  forward (sensitivity equations), S = the tangent of y along (ẏ₀, ṫ, ṗ):
      S' = J_y f · S + J_p f · ṗ,          S(t₀) = ẏ₀ − f(y₀, t₀) ṫ₀
      Ẏ_i = S(t_i) + f(Y_i, t_i) ṫ_i
  reverse (adjoint method), backwards over each [t_{i−1}, t_i], from a = Ȳ_{N−1}, p̄ = 0:
      y' = f,   a' = −aᵀ J_y f,   p̄' = −aᵀ J_p f,   then a ← a + Ȳ_{i−1} at t_{i−1}
      t̄_i = f(Y_i, t_i)·Ȳ_i (i ≥ 1),   ȳ₀ = a(t₀),   t̄₀ = −f(y₀, t₀)·(a(t₀) − Ȳ₀)

quad computes F = ∫_a^b f(x, p) dx:

      Ḟ = f(b) ḃ − f(a) ȧ + ∫_a^b J_p f · ṗ dx
      ā = −F̄·f(a),   b̄ = F̄·f(b),   p̄ = ∫_a^b F̄ᵀ J_p f dx

Each is one registered primitive whose rules call the same primitive again on augmented
dynamics (integrands) built with ``dualad.jvp``/``vjp`` of the user's function, so the
rules differentiate again (second order, any mix of modes). A batch axis on tangents or
cotangents is integrated in one augmented system. The sweeps use tolerances tighter than
the primal's (``sweep_rtol``/``sweep_atol``): they approximate the derivatives of the exact
solution, not of the solver's steps. Traced values reach ``func`` through ``args`` or its
closure (converted to arguments by :mod:`._closure`). See docs/integrate.md.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import scipy.integrate as _si

from ..transforms.api import jvp as _jvp, vjp as _vjp
from ..numpy import array as _array
from ..ops import concatenate, index, moveaxis, ravel, reshape, stack
from ..ops import sum as _sum
from ..core.tracer import Box, primal_value, shape_of, unguarded_value
from ..core.primitive import Primitive, register, sample
from ._integrate_common import (_SCIPY_RTOL, _SWEEP_OPTIONS, _SWEEP_TOL, _batch, _bind, _lift,
                                _plain, _with)
from ._quadrature import QuadSettings, quad, quad_p, quad_vec, simpson, trapezoid  # noqa: F401
from ._ivp import IvpSettings, ivp_p  # noqa: F401
from ._ivp_api import OdeResult, solve_ivp  # noqa: F401

__all__ = [
    "QuadSettings", "quad", "quad_p", "quad_vec", "simpson", "trapezoid", "IvpSettings",
    "ivp_p", "OdeResult", "solve_ivp", "OdeSettings", "odeint_p", "odeint"
]

# --- odeint ------------------------------------------------------------------------------
class OdeSettings(NamedTuple):
    """Primal and sweep tolerances, other odeint keywords as (name, value) pairs, and
    the dict receiving the infodict (``full_output``)."""
    rtol: object = None
    atol: object = None
    sweep_rtol: float = _SWEEP_TOL
    sweep_atol: float = _SWEEP_TOL
    options: tuple = ()
    info: dict | None = None

    def is_sweep(self):
        """Whether the primal was solved as tightly as the derivative sweeps are."""
        return all(v is not None and np.ndim(v) == 0 and v <= w for v, w in
                   ((self.rtol, self.sweep_rtol), (self.atol, self.sweep_atol)))

    def sweep(self):
        """The settings of the augmented (sensitivity, adjoint) solves."""
        opts = dict((k, v) for k, v in self.options if k in _SWEEP_OPTIONS)
        opts["mxstep"] = max(dict(self.options).get("mxstep", 0) or 500, 20000)
        return OdeSettings(self.sweep_rtol, self.sweep_atol, self.sweep_rtol, self.sweep_atol,
                           tuple(opts.items()), None)


def _odeint_impl(y0, t, *args, func, settings):
    shape = np.shape(y0)

    def rhs(y, s):
        dy = _plain("odeint", func(y.reshape(shape), s, *args))
        if dy.size != y.size:
            raise ValueError(f"odeint: func returned shape {dy.shape} for a state y of shape "
                             f"{shape}; dy/dt must have y's shape")
        return dy.ravel()
    opts = dict(settings.options)
    dfun = opts.pop("Dfun", None)
    if dfun is not None:
        opts["Dfun"] = lambda y, s: dfun(y.reshape(shape), s, *args)
    out = _si.odeint(rhs, np.ravel(y0).astype(float), t, rtol=settings.rtol, atol=settings.atol,
                     full_output=settings.info is not None, **opts)
    if settings.info is not None:
        out, info = out
        settings.info.update(info)
    return out.reshape((len(t),) + shape)


odeint_p = register(Primitive("odeint", _odeint_impl))


def _odeint_jvp(tangents, ys, y0, t, *args, func, settings):
    """Forward sensitivities: one augmented solve of z = (y, S), S with the batch axis."""
    y_dot, t_dot, arg_dots = tangents[0], tangents[1], tangents[2:]
    ref = next(i for i, d in enumerate(tangents) if d is not None)
    batch, bs = _batch(tangents[ref], (y0, t, *args)[ref])
    shape, n, T, m = shape_of(y0), math.prod(shape_of(y0)), shape_of(t)[0], len(args)
    pos = [k for k, d in enumerate(arg_dots) if d is not None]
    p_dots = [reshape(arg_dots[k], bs + shape_of(args[k])) for k in pos]
    s0 = np.zeros(bs + shape) if y_dot is None else reshape(y_dot, bs + shape)
    if t_dot is not None:
        t_dot = reshape(t_dot, bs + (T,))
        f0 = reshape(func(y0, index(t, 0), *args), shape)
        s0 = s0 - f0 * _lift(index(t_dot, (slice(None),) * len(bs) + (0,)), len(shape))

    def sensitivity_dynamics(z, s, *a):
        y = reshape(index(z, slice(0, n)), shape)
        S = reshape(index(z, slice(n, None)), bs + shape)
        prm = a[:m]
        f = lambda y, *q: reshape(func(y, s, *_with(prm, pos, q)), shape)  # noqa: E731
        dy, dS = _jvp(f, (y, *[prm[k] for k in pos]), (S, *a[m:]))
        return concatenate([ravel(dy), ravel(dS)])

    zs = odeint_p(concatenate([ravel(y0), ravel(s0)]), t, *args, *p_dots,
                  func=sensitivity_dynamics, settings=settings.sweep())
    S = reshape(index(zs, (slice(None), slice(n, None))), (T,) + bs + shape)
    S = moveaxis(S, 0, len(bs))
    if t_dot is not None:  # y(t_i) moves with t_i along f(Y_i, t_i), Y from the tight solve
        ys = reshape(index(zs, (slice(None), slice(0, n))), (T,) + shape)
        F = stack([reshape(func(index(ys, i), index(t, i), *args), shape) for i in range(T)])
        S = S + F * _lift(t_dot, len(shape))
    return reshape(S, batch + (T,) + shape)


def _odeint_vjp(ct, ys, y0, t, *args, func, settings):
    """The adjoint method: one backward solve of (y, a, p̄) per interval between outputs."""
    shape, n, T, m = shape_of(y0), math.prod(shape_of(y0)), shape_of(t)[0], len(args)
    batch, bs = _batch(ct, ys)
    ct = reshape(ct, bs + (T,) + shape)
    if not settings.is_sweep():  # restart y from outputs as accurate as the sweep
        ys = odeint_p(y0, t, *args, func=func, settings=settings.sweep())
    nbs, axes = len(bs), tuple(range(len(bs), len(bs) + len(shape)))
    ct_at = lambda i: index(ct, (slice(None),) * nbs + (i,))  # noqa: E731

    def f_dot(i, c):  # f(Y_i, t_i)·c over the state axes
        return _sum(reshape(func(index(ys, i), index(t, i), *args), shape) * c, axis=axes)

    p_shapes = [bs + shape_of(p) for p in args]
    sizes = [math.prod(s) for s in [bs + shape] + p_shapes]
    cuts = np.cumsum([n] + sizes)

    def adjoint_dynamics(z, s, *prm):
        y = reshape(index(z, slice(0, n)), shape)
        a = reshape(index(z, slice(cuts[0], cuts[1])), bs + shape)
        f = lambda y, *q: reshape(func(y, s, *q), shape)  # noqa: E731
        dy, pullback = _vjp(f, y, *prm)
        return concatenate([ravel(dy)] + [-ravel(c) for c in pullback(a)])

    a, p_bars, t_bars = ct_at(T - 1), [np.zeros(s) for s in p_shapes], []
    for i in range(T - 1, 0, -1):
        t_bars.append(f_dot(i, ct_at(i)))
        z = concatenate([ravel(index(ys, i)), ravel(a)] + [ravel(p) for p in p_bars])
        zs = odeint_p(z, stack([index(t, i), index(t, i - 1)]), *args, func=adjoint_dynamics,
                      settings=settings.sweep())
        z = index(zs, 1)
        a = reshape(index(z, slice(cuts[0], cuts[1])), bs + shape)
        p_bars = [reshape(index(z, slice(cuts[k + 1], cuts[k + 2])), p_shapes[k])
                  for k in range(m)]
        if i > 1:
            a = a + ct_at(i - 1)
    t_bars.append(-f_dot(0, a) if T > 1 else np.zeros(bs))
    y0_bar = ct_at(0) + a if T > 1 else ct_at(0)
    t_bar = stack(t_bars[::-1], axis=nbs)
    return [reshape(y0_bar, batch + shape), reshape(t_bar, batch + (T,))] + \
        [reshape(p, batch + shape_of(q)) for p, q in zip(p_bars, args)]


odeint_p.def_all(jvp=_odeint_jvp, vjp=_odeint_vjp)


def _check_y0(y0):
    arr = np.asarray(unguarded_value(y0))   # dtype and shape (the values: plain y0 only)
    if arr.dtype.kind not in "iuf" or arr.size == 0:
        hint = "; integrate Re and Im as separate components" * (arr.dtype.kind == "c")
        raise TypeError(f"odeint: argument y0 has dtype {arr.dtype} and shape {arr.shape}; "
                        f"odeint integrates non-empty real floating-point states{hint}")
    if isinstance(y0, Box):
        return reshape(y0, (1,)) if arr.ndim == 0 else y0
    return np.atleast_1d(arr.astype(float))


def _check_times(t):
    tv = np.asarray(primal_value(t))
    if tv.ndim != 1 or tv.size == 0 or tv.dtype.kind not in "iuf" or not np.isfinite(tv).all():
        raise ValueError(f"odeint: argument t has shape {tv.shape} and dtype {tv.dtype}; it must "
                         f"be a non-empty 1-D sequence of finite real output times")
    d = np.sign(np.diff(tv.astype(float)))
    bad = np.nonzero(d == -d[d != 0][0])[0] if d.any() else ()
    if len(bad):
        k = bad[0]
        raise ValueError(f"odeint: argument t of shape {tv.shape} is not monotonic: t[{k}] = "
                         f"{tv[k]} then t[{k + 1}] = {tv[k + 1]}; output times must increase "
                         f"(or decrease) throughout")
    return t if isinstance(t, Box) else tv.astype(float)


def odeint(func, y0, t, args=(), Dfun=None, col_deriv=0, full_output=0, ml=None, mu=None,
           rtol=None, atol=None, tcrit=None, h0=0.0, hmax=0.0, hmin=0.0, ixpr=0, mxstep=0,
           mxhnil=0, mxordn=12, mxords=5, printmessg=0, tfirst=False, *, sweep_rtol=None,
           sweep_atol=None):
    """``scipy.integrate.odeint`` (LSODA), differentiable in y0, t, every traced
    entry of ``args`` and traced values ``func`` closes over, in forward and reverse
    mode, to second order.

    ``func(y, t, *args)`` (``func(t, y, *args)`` with ``tfirst``) gets y in y0's shape
    (SciPy's odeint flattens; a 0-d y0 is a 1-vector, as in SciPy) and returns dy/dt;
    the result has shape ``(len(t), *y0.shape)``. ``Dfun`` serves the primal solve only.
    The derivative sweeps solve the sensitivity (forward) or adjoint (reverse) equations
    with tolerances ``sweep_rtol``/``sweep_atol`` (default min(rtol or atol, 1e-10)).
    With ``full_output``, returns ``(y, infodict)`` of the primal solve.
    """
    if not callable(func):
        raise TypeError(f"odeint: func must be callable, got {type(func).__name__}")
    as_array = lambda v: _array(v) if isinstance(v, (list, tuple)) else v  # noqa: E731
    y0, t = _check_y0(as_array(y0)), _check_times(as_array(t))
    args = args if isinstance(args, tuple) else (args,)
    bound, traced = _bind(func, args, 2, tfirst)
    opts = dict(col_deriv=col_deriv, ml=ml, mu=mu, tcrit=tcrit, h0=h0, hmax=hmax, hmin=hmin,
                ixpr=ixpr, mxstep=mxstep, mxhnil=mxhnil, mxordn=mxordn, mxords=mxords,
                printmessg=printmessg)
    if Dfun is not None:
        opts["Dfun"] = _bind(Dfun, args, 2, tfirst)[0]
    tight = lambda tol, given: float(given) if given is not None else min(  # noqa: E731
        float(np.min(_SCIPY_RTOL if tol is None else tol)), _SWEEP_TOL)
    info = {} if full_output else None
    settings = OdeSettings(rtol, atol, tight(rtol, sweep_rtol), tight(atol, sweep_atol),
                           tuple(opts.items()), info)
    ys = odeint_p(y0, t, *traced, func=bound, settings=settings)
    return (ys, info) if full_output else ys


# --- rule-checker samples: nonlinear, non-autonomous; decreasing t and a matrix state -------
_TIGHT = OdeSettings(1e-12, 1e-12, 1e-12, 1e-12)
odeint_p.samples = [
    sample((2,), np.array([0.0, 0.4, 1.0]), (), domain=[(-1.0, 1.0), None, (0.2, 1.5)],
           settings=_TIGHT, func=lambda y, t, k: -k * y + 0.5 * np.sin(t) * np.tanh(y[::-1])),
    sample((2, 2), np.array([1.0, 0.7, 0.0]), (2,), domain=[(-1.0, 1.0), None, (0.2, 1.0)],
           settings=_TIGHT, func=lambda y, t, p: -p[:, None] * y + 0.3 * np.cos(t) * y.T ** 2)]
