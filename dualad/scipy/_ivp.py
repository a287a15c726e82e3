"""The ``solve_ivp`` primitive: y(t_i) of y' = f(t, y, p), y(t₀) = y₀, and its two rules.

``ivp_p(y0, t0, times, *params, func, settings)`` returns Y with Y_i = y(times_i), shape
``(T, n)``, from SciPy's ``solve_ivp`` (any of its methods). The derivative is that of the
exact solution, computed by solving more ODEs with SciPy (never by differentiating the
solver's adaptive steps), at the tolerances ``sweep_rtol``/``sweep_atol`` (by default the
primal's). Each rule's augmented dynamics are traced once per sweep and replayed
(``dynamics.plain``, a :class:`dualad.extend.Replayed`); for implicit methods
``dynamics.plain_jac`` gives SciPy the Newton matrix (:func:`jacobian_y`).

Forward mode (jvp, jacfwd): **forward sensitivities**. S = ∂y·(ẏ₀, ṫ₀, ṗ) solves

    S' = J_y f · S + J_p f · ṗ,     S(t₀) = ẏ₀ − f(t₀, y₀) ṫ₀,     Ẏ_i = S(t_i) + f(t_i, Y_i) ṫ_i

integrated with y as one augmented system; J_y f·S + J_p f·ṗ is one ``dualad.jvp`` of
``func`` (all B directions at once in vector mode).

Reverse mode (vjp, grad), ``settings.sensitivity``:

- ``"adjoint"``: the **adjoint method**. With cotangents Ȳ_i, backwards from the last
  output time, a jumping by Ȳ_i at each t_i,

      λ' = −J_y fᵀ λ,    μ' = −J_p fᵀ λ,    ȳ₀ = λ(t₀),  p̄ = μ(t₀),
      t̄_i = f(t_i, Y_i)·Ȳ_i,     t̄₀ = −f(t₀, y₀)·λ(t₀);

  λᵀJ_y f and λᵀJ_p f are one ``dualad.vjp`` of ``func``. At first order y(s) on the way
  back is the forward solution's dense output (the primal solve's, kept for it): stable
  for dissipative and stiff systems; the whole sweep is one call of ``adjoint_p`` on
  plain values (so ``dualad.jit`` records one equation, and replays it at new values).
  When the rule is
  itself differentiated (its inputs are traced: second order), y is integrated backwards
  with λ, μ instead, so that the whole sweep is made of differentiable primitive calls
  (ill-conditioned for strongly contracting dynamics; forward sensitivities are not).
- ``"forward"``: the Jacobian ∂Y/∂(y₀, t₀, p) in the traced ones of y₀, t₀, p by forward
  sensitivities in one solve (n·(1 + n + 1 + P) states when all are traced, n·(1 + P)
  for a fit's constant y₀ and t₀), contracted with Ȳ.
- ``"auto"``: forward while the Jacobian's augmented state n·(n + 1 + P) has at most
  4000 entries, else the adjoint, whose cost does not grow with P. (Measured with RK45,
  n = 10, 20 output times: forward 180 ms vs adjoint 470 ms at P = 50, 360 vs 425 ms at
  P = 410, 13 s vs 0.57 s at P = 1010; bench/solve_ivp_sensitivities.py.)

Both rules call ``ivp_p`` again on dynamics built from ``dualad.jvp``/``vjp`` of
``func``, so they differentiate again (second order).
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import scipy.integrate as _si

from ..transforms.api import jvp as _jvp, vjp as _vjp
from ..extend import Replayed   # jit with a fallback: the public extension surface's
from ..ops import concatenate, index, moveaxis, ravel, reshape, stack, tensordot
from ..ops import sum as _sum
from ..core.tracer import Box, primal_value, shape_of, unguarded_value
from ..core.values import staged_only
from ..core.primitive import Primitive, register, sample
from ._integrate_common import _SWEEP_TOL, _batch, _lift, _plain, _with
from ._ivp_dense import at as _at, dense_solution as _dense_solution, interpolant
from ._ivp_dense import same as _same, segment as _segment

__all__ = ["AUTO_FORWARD_MAX", "IvpSettings", "ivp_p"]

AUTO_FORWARD_MAX = 4000    # "auto": forward sensitivities up to this many Jacobian entries
_SWEEP_KEEP = ("max_step", "min_step", "lband", "uband")   # options valid for augmented systems
_IMPLICIT = ("BDF", "Radau", "LSODA")


class IvpSettings(NamedTuple):
    """The solver, primal and sweep tolerances, the primal's end time (``t_end``; None: the
    last output time), other SciPy options as (name, value) pairs, the reverse-mode
    method, and ``cache``: the user's primal solution, reused by the primal call."""
    method: object = "RK45"
    rtol: float = 1e-3
    atol: object = 1e-6
    t_end: object = None
    options: tuple = ()
    sweep_rtol: float = _SWEEP_TOL
    sweep_atol: float = _SWEEP_TOL
    sensitivity: str = "auto"
    cache: dict | None = None
    jit: bool = True

    def sweep(self, t_end="same"):
        """The settings of the augmented (sensitivity, adjoint) solves."""
        opts = tuple((k, v) for k, v in self.options if k in _SWEEP_KEEP)
        return IvpSettings(self.method, self.sweep_rtol, self.sweep_atol,
                           self.t_end if t_end == "same" else t_end, opts, self.sweep_rtol,
                           self.sweep_atol, self.sensitivity, None, self.jit)

    def implicit(self):
        """Whether the method solves a nonlinear system per step (it uses a Jacobian)."""
        m = self.method
        return m in _IMPLICIT or (isinstance(m, type) and issubclass(
            m, tuple(getattr(_si, k) for k in _IMPLICIT)))


def _from_cache(cache, y0, t0, times, params):
    if cache is None or not _at(cache, y0, t0, params):
        return None
    if _same(cache["times"], times):
        return cache["y"]
    if cache.get("sol") is not None:
        return np.asarray(cache["sol"](times)).T.reshape(len(times), -1)
    return None


def _ivp_impl(y0, t0, times, *params, func, settings):
    times = np.asarray(times, dtype=float)
    hit = _from_cache(settings.cache, y0, t0, times, params)
    if hit is not None:
        return hit
    n = np.size(y0)
    call = getattr(func, "plain", None) or func    # a rule's dynamics: its replayed form

    def rhs(s, y):
        dy = _plain("solve_ivp", call(float(s), y, *params))
        if dy.size != n:
            raise ValueError(f"solve_ivp: fun returned shape {dy.shape} for a state y of shape "
                             f"({n},); dy/dt must have y's shape")
        return dy.ravel()
    t0 = float(t0)
    end = settings.t_end
    if end is None:   # the farthest output time
        end = float(times[np.argmax(np.abs(times - t0))]) if len(times) else t0
    if end == t0:  # nothing to integrate: every output time is t0
        return np.broadcast_to(np.asarray(y0, float), (len(times), n)).copy()
    direction = np.sign(end - t0)
    ahead = direction * (times - t0)
    ordered = bool(np.all(np.diff(ahead) >= 0) and np.all(ahead >= 0)
                   and np.all(direction * (end - times) >= 0))
    options = dict(settings.options)
    jac = getattr(func, "plain_jac", None)
    if jac is not None and "jac" not in options and settings.implicit():
        options["jac"] = lambda s, y: jac(s, y, *params)
    # the primal of a call whose adjoint reads the interpolant (the user's solve kept it):
    # a replay at new values keeps its own, for the adjoint of this call (_dense_solution)
    keep = settings.cache is not None and settings.cache.get("sol") is not None
    res = _si.solve_ivp(rhs, (t0, float(end)), np.asarray(y0, float), method=settings.method,
                        t_eval=times if ordered else None, dense_output=keep or not ordered,
                        rtol=settings.rtol, atol=settings.atol, **options)
    if keep and res.status != -1:   # one assignment: a replay in another thread sees either
        settings.cache["last"] = {"y0": np.array(y0, float), "t0": t0, "sol": res.sol,
                                  "params": [np.array(p) for p in params]}
    if res.status == -1:
        raise RuntimeError(f"solve_ivp: the integration of a derivative sweep (n = {n} states, "
                           f"method {settings.method}) failed: {res.message}. Loosen sweep_rtol/"
                           f"sweep_atol or choose a method for stiff problems")
    return res.y.T.copy() if ordered else np.asarray(res.sol(times)).T.reshape(len(times), n)


ivp_p = register(Primitive("solve_ivp", _ivp_impl, symbolic_rules=False, sparsity="dense"))


def _rhs_at(func, s, y, params):
    return reshape(func(s, y, *params), shape_of(y))


def _ivp_jvp(tangents, ys, y0, t0, times, *params, func, settings):
    """Forward sensitivities: one augmented solve of z = (y, S), S with the batch axis."""
    y_dot, t0_dot, times_dot, p_dots = tangents[0], tangents[1], tangents[2], tangents[3:]
    ref = next(i for i, d in enumerate(tangents) if d is not None)
    batch, bs = _batch(tangents[ref], (y0, t0, times, *params)[ref])
    n, T, m = shape_of(y0)[0], shape_of(times)[0], len(params)
    pos = [k for k, d in enumerate(p_dots) if d is not None]
    out = None
    if y_dot is not None or t0_dot is not None or pos:
        s0 = np.zeros(bs + (n,)) if y_dot is None else reshape(y_dot, bs + (n,))
        if t0_dot is not None:
            s0 = s0 - _rhs_at(func, t0, y0, params) * _lift(reshape(t0_dot, bs), 1)
        dots = [reshape(p_dots[k], bs + shape_of(params[k])) for k in pos]

        def sensitivity_dynamics(s, z, *a):
            y, S, prm = index(z, slice(0, n)), reshape(index(z, slice(n, None)), bs + (n,)), a[:m]
            f = lambda y, *q: reshape(func(s, y, *_with(prm, pos, q)), (n,))  # noqa: E731
            dy, dS = _jvp(f, (y, *[prm[k] for k in pos]), (S, *a[m:]))
            return concatenate([dy, ravel(dS)])

        name, jit = getattr(func, "__name__", "fun"), _jit_ok(func, settings)
        sensitivity_dynamics.reads_values = not jit
        sensitivity_dynamics.plain = Replayed(
            sensitivity_dynamics, f"solve_ivp({name}): forward sensitivities", jit)
        if settings.implicit():
            jy = jacobian_y(func, name, jit)
            blocks = 1 + math.prod(bs)
            sensitivity_dynamics.plain_jac = lambda s, z, *a: _block_diagonal(
                jy(s, z[:n], *a[:m]), blocks)
        zs = ivp_p(concatenate([y0, ravel(s0)]), t0, times, *params, *dots,
                   func=sensitivity_dynamics, settings=settings.sweep())
        out = moveaxis(reshape(index(zs, (slice(None), slice(n, None))), (T,) + bs + (n,)),
                       0, len(bs))
        ys = index(zs, (slice(None), slice(0, n)))
    if times_dot is not None:  # y(t_i) moves with t_i along f(t_i, Y_i)
        F = stack([_rhs_at(func, index(times, i), index(ys, i), params) for i in range(T)])
        term = F * _lift(reshape(times_dot, bs + (T,)), 1)
        out = term if out is None else out + term
    return reshape(out, batch + (T, n))


def _choose(settings, n, params):
    if settings.sensitivity != "auto":
        return settings.sensitivity
    directions = n + 1 + sum(math.prod(shape_of(p)) for p in params)
    return "forward" if n * directions <= AUTO_FORWARD_MAX else "adjoint"


def _ivp_vjp(ct, ys, y0, t0, times, *params, func, settings, wanted=None):
    """Ȳ ↦ (ȳ₀, t̄₀, t̄, p̄...); ``wanted``: the indices of the traced arguments (None: all),
    so forward sensitivities integrate no direction of a constant y₀, t₀ or parameter."""
    batch, bs = _batch(ct, ys)
    n, T = shape_of(y0)[0], shape_of(times)[0]
    ct = reshape(ct, bs + (T, n))
    axes = len(bs) + 1
    F = stack([_rhs_at(func, index(times, i), index(ys, i), params) for i in range(T)])
    t_bar = _sum(ct * F, axis=axes)                                 # f(t_i, Y_i)·Ȳ_i
    # under vmap with per-example times (t0, t_eval batched) the adjoint's backward sweep,
    # which walks one time grid, cannot run batched: forward sensitivities can
    per_example_times = np.ndim(unguarded_value(t0)) > 0 or np.ndim(unguarded_value(times)) > 1
    if per_example_times or _choose(settings, n, params) == "forward":
        bars = _vjp_by_sensitivities(ct, bs, ys, y0, t0, times, params, func, settings,
                                     wanted)
    else:
        bars = _vjp_by_adjoint(ct, bs, y0, t0, times, params, func, settings)
    y0_bar, t0_bar, p_bars = bars
    shaped = lambda bar, shape: None if bar is None else reshape(bar, batch + shape)  # noqa: E731
    return [shaped(y0_bar, (n,)), shaped(t0_bar, ()), reshape(t_bar, batch + (T,))] + [
        shaped(p, shape_of(q)) for p, q in zip(p_bars, params)]


_ivp_vjp.takes_wanted = True


def _vjp_by_sensitivities(ct, bs, ys, y0, t0, times, params, func, settings, wanted=None):
    """The Jacobian of Y in the wanted arguments among y₀, t₀, p (D directions, one solve),
    contracted with Ȳ; None for the others."""
    n, m = shape_of(y0)[0], len(params)
    want = [True] * (3 + m) if wanted is None else [i in wanted for i in range(3 + m)]
    sizes = [n if want[0] else 0, 1 if want[1] else 0] + [
        math.prod(shape_of(p)) if want[3 + k] else 0 for k, p in enumerate(params)]
    D = sum(sizes)
    if D == 0:
        return None, None, [None] * m
    eye = np.eye(D)
    cuts = np.cumsum([0] + sizes)
    cols = lambda k: eye[:, cuts[k]:cuts[k + 1]]  # noqa: E731
    tangents = [cols(0) if want[0] else None, cols(1)[:, 0] if want[1] else None, None] + [
        cols(2 + k).reshape((D,) + shape_of(p)) if want[3 + k] else None
        for k, p in enumerate(params)]
    J = _ivp_jvp(tangents, ys, y0, t0, times, *params, func=func, settings=settings)
    bar = tensordot(ct, J, axes=([len(bs), len(bs) + 1], [1, 2]))    # bs + (D,)
    lead = (slice(None),) * len(bs)
    part = lambda k: index(bar, lead + (slice(cuts[k], cuts[k + 1]),))  # noqa: E731
    return (part(0) if want[0] else None,
            index(bar, lead + (int(cuts[1]),)) if want[1] else None,
            [reshape(part(2 + k), bs + shape_of(p)) if want[3 + k] else None
             for k, p in enumerate(params)])


def _vjp_by_adjoint(ct, bs, y0, t0, times, params, func, settings):
    """Backward solves of (λ, μ) (and y, at second order) between the output times.

    Not differentiated (plain values, or ``dualad.jit``'s staging alone): one call of
    :data:`adjoint_p`, whose implementation does the whole sweep on plain values, y(s)
    from the forward interpolant; so a jitted gradient replays it at new parameter values
    with no guard on them. Differentiated (second order, vmap): the sweep is made of
    ``ivp_p`` calls, y integrated backwards with λ and μ, restarted at each output time
    from an accurate forward solve."""
    n = shape_of(y0)[0]
    if not any(_differentiated(v) for v in (ct, y0, t0, times, *params)):
        flat = adjoint_p(ct, y0, t0, times, *params, func=func, settings=settings, bs=bs)
        sizes = [math.prod(bs + (n,)), math.prod(bs)] + [math.prod(bs + shape_of(p))
                                                         for p in params]
        cuts = np.cumsum([0] + sizes)
        part = lambda k, shape: reshape(index(flat, slice(int(cuts[k]), int(cuts[k + 1]))),  # noqa: E731,E501
                                        shape)
        return part(0, bs + (n,)), part(1, bs), [part(2 + j, bs + shape_of(p))
                                                 for j, p in enumerate(params)]
    return _adjoint_sweep(ct, bs, y0, t0, times, params, func, settings, dense=None)


def _adjoint_impl(ct, y0, t0, times, *params, func, settings, bs):
    lam, t0_bar, mu = _adjoint_sweep(ct, bs, y0, t0, times, params, func, settings,
                                     dense=_dense_solution(y0, t0, times, params, func,
                                                           settings))
    return np.concatenate([np.ravel(lam), np.ravel(t0_bar)] + [np.ravel(u) for u in mu])


adjoint_p = Primitive("solve_ivp_adjoint", _adjoint_impl, symbolic_rules=False)
adjoint_p.doc = ("(ȳ₀, t̄₀, p̄) of solve_ivp by the adjoint method, flat, on plain values (the "
                 "first-order reverse rule of ivp_p; not differentiable itself: a "
                 "differentiated rule takes the composite sweep)")


def _adjoint_sweep(ct, bs, y0, t0, times, params, func, settings, dense):
    """The backward solves: y(s) from ``dense`` (the forward interpolant), or, when None,
    integrated with (λ, μ) from a forward solve's outputs at each t_i."""
    n, m = shape_of(y0)[0], len(params)
    p_shapes = [bs + shape_of(p) for p in params]
    cuts = np.cumsum([0, math.prod(bs + (n,))] + [math.prod(s) for s in p_shapes])
    tv, t0v = np.asarray(primal_value(times), float), float(primal_value(t0))
    d = np.sign(tv - t0v)
    direction = d[d != 0][0] if d.any() else 1.0
    order = np.argsort(direction * (tv - t0v), kind="stable")
    lead = (slice(None),) * len(bs)
    ct_at = lambda i: index(ct, lead + (int(i),))  # noqa: E731
    if dense is None:  # y joins the backward state; restart it from accurate outputs at each t_i
        y_off = int(cuts[-1])
        ys_tight = ivp_p(y0, t0, times, *params, func=func, settings=settings.sweep())

    def adjoint_at(s, y, z, *prm):     # the backward dynamics, y given
        lam = reshape(index(z, slice(cuts[0], cuts[1])), bs + (n,))
        dy, pullback = _vjp(lambda y, *q: reshape(func(s, y, *q), (n,)), y, *prm)
        parts = [-ravel(c) for c in pullback(lam)]
        return concatenate(parts + ([dy] if dense is None else []))

    name, jit = getattr(func, "__name__", "fun"), _jit_ok(func, settings)
    what = f"solve_ivp({name}): adjoint"
    if dense is None:
        def adjoint_dynamics(s, z, *prm):
            return adjoint_at(s, index(z, slice(y_off, None)), z, *prm)
        adjoint_dynamics.plain = Replayed(adjoint_dynamics, what, jit)
        adjoint_dynamics.reads_values = not jit
    else:   # y(s) from SciPy's interpolant: the dynamics read s's value (not traceable)
        def adjoint_dynamics(s, z, *prm):
            return adjoint_at(s, dense(primal_value(s)), z, *prm)
        core, y_at = Replayed(adjoint_at, what, jit), interpolant(dense)
        adjoint_dynamics.plain = lambda s, z, *prm: core(s, y_at(s), z, *prm)
        adjoint_dynamics.reads_values = True
        if settings.implicit():    # d(λ, μ)'/d(λ, μ) = [[−J_yᵀ per batch, 0], [−J_pᵀ, 0]]
            jy, lam_size = jacobian_y(func, name, jit), int(cuts[1])

            def adjoint_jac(s, z, *prm):
                out = np.zeros((z.size, z.size))
                out[:lam_size, :lam_size] = _block_diagonal(-jy(s, y_at(s), *prm).T,
                                                            lam_size // n)
                return out
            adjoint_dynamics.plain_jac = adjoint_jac

    lam, mu = np.zeros(bs + (n,)), [np.zeros(s) for s in p_shapes]
    ends = [index(times, int(i)) for i in order[::-1]] + [t0]
    for k, i in enumerate(order[::-1]):
        lam = lam + ct_at(i)
        t_from, t_to = ends[k], ends[k + 1]
        if float(primal_value(t_from)) == float(primal_value(t_to)):
            continue
        z = concatenate([ravel(lam)] + [ravel(p) for p in mu] +
                        ([index(ys_tight, int(i))] if dense is None else []))
        z = index(ivp_p(z, t_from, reshape(t_to, (1,)), *params, func=adjoint_dynamics,
                        settings=_segment(settings, dense, t_from, t_to)), 0)
        lam = reshape(index(z, slice(cuts[0], cuts[1])), bs + (n,))
        mu = [reshape(index(z, slice(cuts[j + 1], cuts[j + 2])), p_shapes[j]) for j in range(m)]
    f0 = _rhs_at(func, t0, y0, params)
    return lam, -_sum(lam * f0, axis=len(bs)), mu


def _differentiated(x):
    """Whether ``x`` carries a derivative (a box of a differentiating trace somewhere under
    it), not only ``dualad.jit``'s staging: the adjoint rule is then itself differentiated.
    Under ``jit(grad(f))`` alone the rule's inputs are jit boxes over plain values: the
    sweep is one :data:`adjoint_p` equation, which reads the values when it runs, so the
    recorded program holds at other values too."""
    return isinstance(x, Box) and not staged_only(x)


def _jit_ok(func, settings):
    """Whether a rule's dynamics built on ``func`` are traced once and replayed: unless
    ``jit=False`` or ``func`` is itself a rule's dynamics that reads a value (SciPy's
    interpolant at s), which every replay would have to retrace."""
    return bool(settings.jit) and not getattr(func, "reads_values", False)


def jacobian_y(func, name, jit=True):
    """J_y f(s, y, *p) (n × n) on plain values: one vector-mode JVP of ``func`` over the
    identity, traced once and replayed (:class:`dualad.extend.Replayed`)."""
    def jac_y(s, y, *p):
        eye = np.eye(shape_of(y)[0])
        _, cols = _jvp(lambda y: reshape(func(s, y, *p), shape_of(y)), (y,), (eye,))
        return cols.T
    return Replayed(jac_y, f"solve_ivp({name}): Jacobian in y", jit)


def _block_diagonal(a, k):
    """``k`` copies of the square ``a`` on the diagonal (dense while small, else sparse)."""
    a = np.asarray(a, float)
    if k == 1:
        return a
    if a.shape[0] * k <= 400:
        return np.kron(np.eye(k), a)
    import scipy.sparse as sp
    return sp.kron(sp.identity(k, format="csc"), sp.csc_matrix(a), format="csc")


ivp_p.def_all(jvp=_ivp_jvp, vjp=_ivp_vjp)


# --- rule-checker samples: nonlinear, non-autonomous; output times not at t0 ----------------
def _sample_rhs(t, y, k):
    return -k * y + 0.5 * np.sin(t) * np.tanh(y[::-1])


_TIGHT = IvpSettings("RK45", 1e-11, 1e-12, None, (), 1e-11, 1e-12, "adjoint")
ivp_p.samples = [
    sample((2,), (), np.array([0.3, 0.8]), (2,), domain=[(-1.0, 1.0), (-0.1, 0.1), None,
                                                         (0.2, 1.5)],
           settings=_TIGHT, func=_sample_rhs),
    sample((2,), (), np.array([0.3, 0.8]), (2,), domain=[(-1.0, 1.0), (-0.1, 0.1), None,
                                                         (0.2, 1.5)],
           settings=_TIGHT._replace(sensitivity="forward"), func=_sample_rhs)]
