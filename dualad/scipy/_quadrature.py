"""quad, quad_vec, trapezoid and simpson for :mod:`dualad.scipy.integrate`.

quad computes F = ∫_a^b f(x, p) dx:

      Ḟ = f(b) ḃ − f(a) ȧ + ∫_a^b J_p f · ṗ dx
      ā = −F̄·f(a),   b̄ = F̄·f(b),   p̄ = ∫_a^b F̄ᵀ J_p f dx

The rules call the same primitive again on integrands built with ``dualad.jvp``/``vjp``
of the user's function, so they differentiate again.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import scipy.integrate as _si

from ..transforms.api import jvp as _jvp, vjp as _vjp
from ..ops import concatenate, index, moveaxis, ravel, reshape
from ..ops import sum as _sum
from ..ops.core.elementwise import where
from ..ops.numpy.calculus import trapezoid as _trapezoid
from ..core.values import all_true, any_true, map_value, staged_unbatched, staged_value
from ..core.tracer import Box, primal_value, shape_of, unguarded_value
from ..core.primitive import Primitive, register, sample
from ._integrate_common import _bind, _batch, _lift, _plain, _with

__all__ = ["QuadSettings", "quad_p", "quad", "quad_vec", "trapezoid", "simpson"]

# --- quad ----------------------------------------------------------------------------------
class QuadSettings(NamedTuple):
    """SciPy's ``quad`` or (``vector``) ``quad_vec`` settings; ``info`` receives abserr."""
    epsabs: float = 1.49e-8
    epsrel: float = 1.49e-8
    limit: int = 50
    points: object = None
    vector: bool = False
    full_output: bool = False
    info: dict | None = None

    def sweep(self, vector):
        return QuadSettings(min(self.epsabs, 1e-12), min(self.epsrel, 1e-10),
                            max(self.limit, 200), self.points, vector)


def _quad_impl(a, b, *args, func, settings):
    s = settings
    rest = ()
    if s.vector:
        val, err = _si.quad_vec(lambda x: _plain("quad", func(x, *args)), a, b,
                                epsabs=s.epsabs, epsrel=s.epsrel, limit=s.limit, points=s.points)
    else:
        def scalar(x):
            y = _plain("quad", func(x, *args))
            if y.size != 1:
                raise ValueError(f"quad: func returned shape {y.shape}; quad integrates scalar "
                                 f"functions (quad_vec integrates arrays)")
            return float(y.reshape(()))
        val, err, *rest = _si.quad(scalar, a, b, epsabs=s.epsabs, epsrel=s.epsrel,
                                   limit=s.limit, points=s.points, full_output=s.full_output)
    if s.info is not None:
        s.info.update(abserr=err, rest=tuple(rest))
    return np.asarray(val, dtype=float)[()]


quad_p = register(Primitive("quad", _quad_impl))


def _limit_term(func, lim, args, oshape):
    """f at a limit, or None at an infinite limit (f vanishes there for a finite integral).
    Under vmap the limits are one per example: f at the finite ones, 0 at the infinite."""
    if staged_unbatched(lim):   # dualad.jit: guard the answers
        inf = np.isinf(staged_value(lim))
        if all_true(inf):
            return None
        if not any_true(inf):
            return reshape(func(lim, *args), oshape)
        return where(inf, 0.0, reshape(func(where(inf, 0.0, lim), *args), oshape))
    inf = np.isinf(primal_value(lim))
    if np.all(inf):
        return None
    if not np.any(inf):
        return reshape(func(lim, *args), oshape)
    at = map_value(lim, np.isinf)                 # mixed: a per-example selection
    return where(at, 0.0, reshape(func(where(at, 0.0, lim), *args), oshape))


def _quad_jvp(tangents, F, a, b, *args, func, settings):
    """Ḟ = f(b) ḃ − f(a) ȧ + ∫ J_p f·ṗ dx (one quad of the tangent integrand)."""
    ref = next(i for i, d in enumerate(tangents) if d is not None)
    batch, bs = _batch(tangents[ref], (a, b, *args)[ref])
    oshape, m = shape_of(F), len(args)
    pos = [k for k, d in enumerate(tangents[2:]) if d is not None]
    out = None
    for lim, dot, sign in ((b, tangents[1], 1.0), (a, tangents[0], -1.0)):
        fl = None if dot is None else _limit_term(func, lim, args, oshape)
        if fl is not None:
            term = sign * fl * _lift(reshape(dot, bs), len(oshape))
            out = term if out is None else out + term
    if pos:
        def tangent_integrand(x, *a):
            prm = a[:m]
            f = lambda *q: reshape(func(x, *_with(prm, pos, q)), oshape)  # noqa: E731
            return _jvp(f, tuple(prm[k] for k in pos), a[m:])[1]
        p_dots = [reshape(tangents[2 + k], bs + shape_of(args[k])) for k in pos]
        term = quad_p(a, b, *args, *p_dots, func=tangent_integrand,
                      settings=settings.sweep(bool(bs + oshape)))
        out = term if out is None else out + term
    return None if out is None else reshape(out, batch + oshape)


def _quad_vjp(ct, F, a, b, *args, func, settings):
    """ā = −F̄·f(a), b̄ = F̄·f(b), p̄ = ∫ F̄ᵀ J_p f dx (one quad_vec of all p̄ at once)."""
    batch, bs = _batch(ct, F)
    oshape, m = shape_of(F), len(args)
    ct = reshape(ct, bs + oshape)
    axes = tuple(range(len(bs), len(bs) + len(oshape)))
    lims = []
    for lim, sign in ((a, -1.0), (b, 1.0)):
        fl = _limit_term(func, lim, args, oshape)
        lims.append(np.zeros(batch) if fl is None else
                    reshape(sign * _sum(ct * fl, axis=axes), batch))
    if not m:
        return lims
    p_shapes = [bs + shape_of(p) for p in args]
    cuts = np.cumsum([0] + [math.prod(s) for s in p_shapes])

    def cotangent_integrand(x, *a):
        _, pullback = _vjp(lambda *q: reshape(func(x, *q), oshape), *a[:m])
        return concatenate([ravel(g) for g in pullback(a[m])])
    p_bar = quad_p(a, b, *args, ct, func=cotangent_integrand, settings=settings.sweep(True))
    return lims + [reshape(index(p_bar, slice(cuts[k], cuts[k + 1])), batch + shape_of(p))
                   for k, p in enumerate(args)]


quad_p.def_all(jvp=_quad_jvp, vjp=_quad_vjp)


def _quad_call(fname, func, a, b, args, settings):
    """Checks, binds the constant args, calls quad_p; returns (value, info)."""
    if not callable(func):
        raise TypeError(f"{fname}: func must be callable, got {type(func).__name__}")
    lims = []
    for name, x in (("a", a), ("b", b)):
        v = np.asarray(unguarded_value(x))   # its shape and dtype (float() below: plain only)
        if v.shape != () or v.dtype.kind not in "iuf":
            raise ValueError(f"{fname}: argument {name} has shape {v.shape} and dtype {v.dtype}; "
                             f"the limits are real scalars")
        lims.append(x if isinstance(x, Box) else float(v))
    bound, traced = _bind(func, args if isinstance(args, tuple) else (args,), 1)
    return quad_p(*lims, *traced, func=bound, settings=settings), settings.info


def quad(func, a, b, args=(), full_output=0, epsabs=1.49e-8, epsrel=1.49e-8, limit=50,
         points=None, weight=None, wvar=None, wopts=None, maxp1=50, limlst=50,
         complex_func=False):
    """``scipy.integrate.quad``: ``(∫_a^b func(x, *args) dx, abserr)``, the value
    differentiable in a, b (Leibniz: f(b), −f(a); 0 at an infinite limit), in every
    traced entry of ``args`` and in traced values ``func`` closes over (the integral of the integrand's derivative), both modes,
    second order. ``weight`` and ``complex_func`` are passed to SciPy untraced only."""
    args = args if isinstance(args, tuple) else (args,)
    if weight is not None or complex_func:
        if any(isinstance(v, Box) for v in (a, b, *args)):
            raise NotImplementedError("quad: weight= and complex_func= are not differentiable; "
                                      "fold the weight into func instead")
        return _si.quad(func, a, b, args, full_output, epsabs, epsrel, limit, points, weight,
                        wvar, wopts, maxp1, limlst, complex_func)
    settings = QuadSettings(epsabs, epsrel, limit, points, False, bool(full_output), {})
    val, info = _quad_call("quad", func, a, b, args, settings)
    return (val, info["abserr"]) + info["rest"]


def quad_vec(f, a, b, epsabs=1e-200, epsrel=1e-8, limit=10000, points=None, *, args=()):
    """``scipy.integrate.quad_vec`` for array-valued ``f(x, *args)``: ``(∫_a^b f dx,
    error estimate)``, differentiable as :func:`quad`."""
    settings = QuadSettings(epsabs, epsrel, limit, points, True, False, {})
    val, info = _quad_call("quad_vec", f, a, b, args, settings)
    return val, info["abserr"]


# --- sampled data --------------------------------------------------------------------------
def _as_array(v):
    return v if v is None or isinstance(v, Box) else np.asarray(v, dtype=float)


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """``scipy.integrate.trapezoid``: dualad's trapezoid (differentiable in y, x and dx)."""
    return _trapezoid(_as_array(y), x=_as_array(x), dx=dx, axis=axis)


def simpson(y, x=None, *, dx=1.0, axis=-1):
    """``scipy.integrate.simpson``, differentiable in y: the rule is linear in y, so it is
    Σ_j w_j y_j with SciPy's own weights w = simpson(I, x, dx) (SciPy's even-N rule too).
    ``x`` (None or 1-D) and ``dx`` are constants here."""
    if not any(isinstance(v, Box) for v in (y, x, dx)):
        return _si.simpson(y, x=x, dx=dx, axis=axis)
    if isinstance(x, Box) or isinstance(dx, Box) or (x is not None and np.ndim(x) != 1):
        raise NotImplementedError("simpson: only y is differentiable (x None or 1-D, plain "
                                  "dx); use trapezoid for derivatives in the abscissae")
    n = shape_of(y)[axis]
    weights = _si.simpson(np.eye(n), x=_as_array(x), dx=dx, axis=-1)
    return moveaxis(y, axis, -1) @ weights


# --- rule-checker samples ------------------------------------------------------------------
_LIMITS = [(-1.0, -0.2), (0.3, 1.2), (0.2, 1.0)]
quad_p.samples = [
    sample((), (), (2,), domain=_LIMITS, settings=QuadSettings(1e-13, 1e-13),
           func=lambda x, p: np.exp(-p[0] * x * x) * np.cos(p[1] * x)),
    sample((), (), (2,), domain=_LIMITS, settings=QuadSettings(1e-13, 1e-13, vector=True),
           func=lambda x, p: np.stack([np.exp(-p[0] * x), np.sin(p[1] * x) * x]))]
