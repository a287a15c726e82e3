"""Event times of ``solve_ivp``, differentiable: the implicit function theorem.

An event time τ is a root of G(τ, θ) = g(τ, y(τ; θ), θ), θ = (y₀, t₀, p, q) (p: the
right-hand side's traced parameters, q: the event function's). Differentiating
G(τ(θ), θ) = 0,

    τ̇ = −(∂G/∂θ · θ̇) / (dG/dτ),      dG/dτ = ∂g/∂t + ∂g/∂y · f(τ, y(τ)),
    θ̄ = −τ̄ · (∂G/∂θ)ᵀ / (dG/dτ),

with y(τ; θ) the ``ivp_p`` primitive (its own rules give ∂y(τ)/∂θ), and ∂G/∂θ, dG/dτ one
``dualad.jvp``/``vjp`` of G. The rules are compositions of differentiable calls in which
τ is the primitive's output, so they differentiate again (second order). A terminal
event ends the solution at τ: the last output time is then this traced τ, and y there
moves with it (ẏ = S + f τ̇). dG/dτ = 0 (an event the solution only touches) raises.
"""
from __future__ import annotations

import numpy as np
import scipy.integrate as _si

from ..transforms.api import jvp as _jvp, vjp as _vjp
from ..ops import index, reshape
from ..core.values import any_true, staged_value
from ..core.tracer import primal_value, shape_of, unguarded_value
from ..core.primitive import Primitive, register, sample
from ._integrate_common import _plain
from ._ivp import IvpSettings, ivp_p

__all__ = ["event_time_p", "event_times"]


def _event_impl(y0, t0, *params, func, event, n_f, occurrence, settings):
    c = settings.cache
    if c is not None and np.array_equal(c["y0"], y0) and c["t0"] == t0 and all(
            np.array_equal(a, b) for a, b in zip(c["params"], params)):
        return np.float64(c["tau"])
    p, q = params[:n_f], params[n_f:]

    def g(t, y):
        return float(_plain("solve_ivp", event(t, y, *q)).reshape(()))
    g.direction = getattr(event, "direction", 0.0)
    res = _si.solve_ivp(lambda t, y: _plain("solve_ivp", func(t, y, *p)),
                        (float(t0), float(settings.t_end)), np.asarray(y0, float),
                        method=settings.method, rtol=settings.rtol, atol=settings.atol,
                        events=[g])
    found = res.t_events[0]
    if len(found) <= occurrence:
        raise RuntimeError(f"solve_ivp: event {getattr(event, '__name__', 'event')} has "
                           f"{len(found)} occurrence(s) at these inputs; occurrence "
                           f"{occurrence} was differentiated")
    return np.float64(found[occurrence])


event_time_p = register(Primitive("solve_ivp_event", _event_impl, symbolic_rules=False,
                                   sparsity="dense"))


def _residual(func, event, n_f, settings):
    """G(τ, y₀, t₀, *p, *q) = g(τ, y(τ), *q)."""
    sweep = settings.sweep(t_end=None)._replace(cache=None)

    def G(tau, y0, t0, *params):
        y = index(ivp_p(y0, t0, reshape(tau, (1,)), *params[:n_f], func=func,
                        settings=sweep), 0)
        return reshape(event(tau, y, *params[n_f:]), ())
    return G


def _slope(G, tau, inputs):
    # a unit tangent of tau's (per-example) shape: under vmap primal_value has the batch axis
    seed = np.ones(shape_of(tau), dtype=np.result_type(unguarded_value(tau)))
    _, d = _jvp(lambda s: G(s, *inputs), (tau,), (seed,))
    if any_true(staged_value(d) == 0.0):   # (under vmap: at any example's event)
        raise ZeroDivisionError("solve_ivp: an event's dg/dt is 0 at the event time (the "
                                "solution touches g = 0 without crossing it): its time has no "
                                "derivative")
    return d


def _event_jvp(tangents, tau, *inputs, func, event, n_f, occurrence, settings):
    G = _residual(func, event, n_f, settings)
    pos = [i for i, d in enumerate(tangents) if d is not None]

    def G_of(*traced):
        full = list(inputs)
        for i, v in zip(pos, traced):
            full[i] = v
        return G(tau, *full)
    _, num = _jvp(G_of, tuple(inputs[i] for i in pos), tuple(tangents[i] for i in pos))
    return -num / _slope(G, tau, inputs)


def _event_vjp(ct, tau, *inputs, func, event, n_f, occurrence, settings):
    G = _residual(func, event, n_f, settings)
    _, pullback = _vjp(lambda *a: G(tau, *a), *inputs)
    return list(pullback(-ct / _slope(G, tau, inputs)))


event_time_p.def_all(jvp=_event_jvp, vjp=_event_vjp)


def event_times(res, events, bound_events, y0, t0, traced, func, settings):
    """Traced ``t_events`` and ``y_events`` of the SciPy result ``res``, and the traced time
    of a terminal event that ended the solve (None if none did)."""
    t_events, y_events, end = [], [], None
    for j, (ev, (g, q)) in enumerate(zip(events, bound_events)):
        taus, ys = [], []
        for k, tau0 in enumerate(res.t_events[j]):
            cache = {"y0": settings.cache["y0"], "t0": settings.cache["t0"],
                     "params": list(settings.cache["params"]) + [primal_value(v) for v in q],
                     "tau": tau0}
            tau = event_time_p(y0, t0, *traced, *q, func=func, event=g, n_f=len(traced),
                               occurrence=k, settings=settings._replace(cache=cache))
            y = index(ivp_p(y0, t0, reshape(tau, (1,)), *traced, func=func,
                            settings=settings), 0)
            taus.append(tau)
            ys.append(y)
            if (res.status == 1 and getattr(ev, "terminal", False)
                    and tau0 == res.t[-1]):
                end = tau
        t_events.append(taus)
        y_events.append(ys)
    return t_events, y_events, end


# --- rule-checker sample: decay through a level, with a parameter in the event too ----------
def _sample_rhs(t, y, k):
    return -k * y


def _sample_event(t, y, c):
    return y[0] - c[0]


_EVENT_SETTINGS = IvpSettings("RK45", 1e-11, 1e-12, 3.0, (), 1e-11, 1e-12, "adjoint")
event_time_p.samples = [
    sample((1,), (), (1,), (1,), domain=[(0.9, 1.1), (-0.1, 0.1), (0.5, 1.0), (0.3, 0.4)],
           func=_sample_rhs, event=_sample_event, n_f=1, occurrence=0,
           settings=_EVENT_SETTINGS)]
