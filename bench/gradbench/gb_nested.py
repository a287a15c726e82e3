"""GradBench's two nested-derivative evals, ``particle`` and ``saddle``, over a peer
(bench/gradbench/gb_peers.py): a gradient-descent solver whose objective itself contains a
derivative.

GradBench ships no NumPy (or any Python) program for these two evals: written here from
its specification (``evals/particle/README.md``, ``evals/saddle/README.md``), the C++
reference headers (``cpp/gradbench/evals/{particle,saddle}.hpp``) and its shared solver
(``cpp/gradbench/gd.hpp``, the same in ``tools/futhark/solver.fut``), in plain NumPy:

- the solver (:func:`argmin`): gradient descent from ``x``, step ``eta`` = 1e-5, doubled
  after 10 accepted steps in a row, halved on a rejected one; stops when |g| <= 1e-5 or the
  step moves x by <= 1e-5. ``argmax`` is ``argmin`` of -f with -g; ``max`` is f there.
- ``particle``: naive Euler (dt = 0.1) of a unit charge from (0, 8) with velocity
  (0.75, 0) in the field of unit charges at (10, 10 - w) and (10, 0), the acceleration
  -grad_x p(x; w), p = sum 1/|x - c|, until the next step's y would be <= 0; the objective
  is x_0(t_f)^2 at the linear interpolation to y = 0; argmin over w from ``w``.
- ``saddle``: f(p1, p2) = (p1_0^2 + p1_1^2) - (p2_0^2 + p2_1^2); r1 = argmin over p1 of
  max over p2 of f(p1, p2) (the inner max a solve from ``start``), then r2 = argmax over p2
  of f(r1, p2); output r1 ++ r2.

The four functions ``ff``, ``fr``, ``rf``, ``rr``: the first letter the mode of the outer
derivative (the solver's gradient), the second the inner one (particle: grad_x p in each
Euler step; saddle: the inner solver's gradient). ``f``: forward mode, one JVP per unit
vector; ``r``: reverse mode, a gradient.

Two spellings of the same program: Python control flow (``while``, ``if`` on values:
NumPy, dualad, autograd, PyTorch), and loop primitives for a tracer that cannot branch on
values (``jax.lax.while_loop``/``cond``; a loop that a reverse derivative goes through is a
``scan`` of ``cond``s with a bound on its trips, since JAX cannot reverse a while loop; the
result says whether the bound was hit). The hand-derived NumPy solves
(:func:`particle_by_hand`, :func:`saddle_by_hand`) are the runner's reference time and the
independent check.
"""
from __future__ import annotations

import numpy as np

TOL = 1e-5            # gd.hpp: |g| and the step's length
ETA0 = 1e-5
DT = 0.1              # particle's Euler step
MAX_EULER = 1000      # the scan bound of the loop spelling (w = 0 takes 352 steps)
MAX_SOLVER = 1000     # ... and of an inner solver a reverse derivative goes through (170)

# GradBench's validation: the golden outputs of evals/{particle,saddle}/run.py (any
# function), compared as ADBench does, |a - b| / max(1, |a| + |b|) <= 1e-4
GOLDEN = {"particle": 0.2071918746486116, "saddle": [8.246324826140356e-06] * 4}
GOLDEN_TOL = 1e-4
VARIANTS = ("ff", "fr", "rf", "rr")


def golden_mismatch(module, out):
    """GradBench's check of ``out`` against the eval's golden output (its ``mismatch``)."""
    a, b = np.ravel(out), np.ravel(GOLDEN[module])
    return float(np.max(np.abs(a - b) / np.maximum(1.0, np.abs(a) + np.abs(b))))


# --- the solver (gd.hpp), Python control flow ----------------------------------------------
def _norm(xp, v):
    return xp.sqrt(xp.sum(v * v))


def argmin(xp, f, g, x):
    """gd.hpp's multivariate_argmin of ``f`` with gradient ``g`` from ``x``."""
    fx, gx, i, eta = f(x), g(x), 0, ETA0
    while True:
        if _norm(xp, gx) <= TOL:
            return x
        if i == 10:
            eta, i = 2 * eta, 0
            continue
        x_new = x - eta * gx
        if _norm(xp, x - x_new) <= TOL:
            return x
        fx_new = f(x_new)
        if fx_new < fx:
            x, fx, gx, i = x_new, fx_new, g(x_new), i + 1
        else:
            eta, i = eta / 2, 0


def argmax(xp, f, g, x):
    return argmin(xp, lambda v: -f(v), lambda v: -g(v), x)


def fmax(xp, f, g, x):
    return f(argmax(xp, f, g, x))


# --- the derivatives of the four variants ------------------------------------------------
def derivative(peer, mode, f):
    """The gradient of ``f`` (a vector's scalar function) in ``mode``: ``r`` the peer's
    composable gradient, ``f`` one JVP per unit vector (the peer's ``fwd_grad``)."""
    return peer.fgrad(f) if mode == "r" else peer.fwd_grad(f)


# --- particle --------------------------------------------------------------------------------
def _charges(peer, w):
    """(2, 2): the charges (10, 10 - w) and (10, 0), as 10 - w exactly."""
    base = peer.arr([[10.0, 10.0], [10.0, 0.0]])
    return base - w * peer.arr([[0.0, 1.0], [0.0, 0.0]])


def _potential(xp, charges):
    return lambda x: xp.sum(1.0 / xp.sqrt(xp.sum((x - charges) ** 2, 1)))


def particle_objective(peer, inner):
    """w (shape (1,)) -> x_0(t_f)^2, the Euler loop in Python, grad_x p in mode ``inner``."""
    xp = peer.xp
    x0, v0 = peer.arr([0.0, 8.0]), peer.arr([0.75, 0.0])

    def f(wv):
        accel = derivative(peer, inner, _potential(xp, _charges(peer, wv[0])))
        x, xdot = x0, v0
        while True:
            xddot = -1.0 * accel(x)
            x_new = x + DT * xdot
            if x_new[1] > 0:
                x, xdot = x_new, xdot + DT * xddot
            else:
                break
        dt_f = -x[1] / xdot[1]
        x_t_f = x + dt_f * xdot
        return x_t_f[0] * x_t_f[0]
    return f


def particle(peer, variant):
    """(f, g) of the outer solve, ``variant`` one of ff, fr, rf, rr."""
    f = particle_objective(peer, variant[1])
    return f, derivative(peer, variant[0], f)


# --- saddle ----------------------------------------------------------------------------------
def saddle_f(p1, p2):
    return (p1[0] * p1[0] + p1[1] * p1[1]) - (p2[0] * p2[0] + p2[1] * p2[1])


def saddle(peer, variant, start):
    """(r1 cost, its gradient, r2 cost maker) of the outer solve."""
    xp = peer.xp

    def r2_cost(p1):
        return lambda p: saddle_f(p1, p)

    def r1_cost(p1):
        cost = r2_cost(p1)
        return fmax(xp, cost, derivative(peer, variant[1], cost), start)
    return r1_cost, derivative(peer, variant[0], r1_cost), r2_cost


def saddle_solve(peer, variant, start, f=None, g=None):
    """r1 ++ r2 (shape (4,)); ``f``, ``g`` the outer cost and gradient (jitted, say)."""
    xp = peer.xp
    r1_cost, r1_grad, r2_cost = saddle(peer, variant, start)
    r1 = argmin(xp, f or r1_cost, g or r1_grad, start)
    cost = r2_cost(r1)
    r2 = argmax(xp, cost, derivative(peer, variant[0], cost), start)
    return xp.concatenate([r1, r2]) if peer.name != "torch" else xp.cat([r1, r2])


# --- by hand (the reference time and the independent check) ----------------------------------
def _accel_by_hand(x, c):
    d = x - c
    r = np.sqrt(np.sum(d * d, 1))
    return np.sum(d / (r ** 3)[:, None], 0), d, r          # -grad p, and what its JVP needs


def particle_by_hand_objective(w, tangent=False):
    """particle's objective at ``w`` (a float) with grad_x p by its closed form; with
    ``tangent`` its derivative in w instead (shape (1,)), by a forward sweep written out by
    hand (dual numbers), in plain NumPy."""
    dc = np.array([[0.0, -1.0], [0.0, 0.0]])
    c = np.array([[10.0, 10.0 - w], [10.0, 0.0]])
    x, xdot = np.array([0.0, 8.0]), np.array([0.75, 0.0])
    tx, txdot = np.zeros(2), np.zeros(2)
    while True:
        a, d, r = _accel_by_hand(x, c)
        x_new = x + DT * xdot
        if not x_new[1] > 0:
            break
        if tangent:
            td = tx - dc
            ta = np.sum(td / (r ** 3)[:, None]
                        - 3 * d * (np.sum(d * td, 1) / r ** 5)[:, None], 0)
            tx, txdot = tx + DT * txdot, txdot + DT * ta
        x, xdot = x_new, xdot + DT * a
    dt_f = -x[1] / xdot[1]
    xt = x + dt_f * xdot
    if not tangent:
        return xt[0] * xt[0]
    tdt = -tx[1] / xdot[1] + x[1] * txdot[1] / xdot[1] ** 2
    return np.array([2 * xt[0] * (tx[0] + tdt * xdot[0] + dt_f * txdot[0])])


def particle_by_hand(w0):
    """The particle solve on :func:`particle_by_hand_objective` and its derivative."""
    return argmin(np, lambda v: particle_by_hand_objective(v[0]),
                  lambda v: particle_by_hand_objective(v[0], True), np.array([float(w0)]))


def saddle_by_hand(start):
    """The saddle solve with its derivatives by their closed forms (inner -2 p2; outer
    2 p1: the inner solve's path does not depend on p1), in plain NumPy."""
    start = np.asarray(start, dtype=np.float64)

    def r1_cost(p1):
        return fmax(np, lambda p: saddle_f(p1, p), lambda p: -2 * p, start)
    r1 = argmin(np, r1_cost, lambda p1: 2 * p1, start)
    r2 = argmax(np, lambda p: saddle_f(r1, p), lambda p: -2 * p, start)
    return np.concatenate([r1, r2])


# --- the loop-primitive spelling (jax.jit of the whole solve) --------------------------------
def _lax_step(lax, xp, f, g):
    """One turn of gd.hpp's loop on the state (x, fx, gx, eta, i, go), its branches as
    ``cond``s (only the taken one runs: f and g are evaluated as in :func:`argmin`)."""
    no, yes = xp.asarray(False), xp.asarray(True)

    def step(s):
        x, fx, gx, eta, i, _ = s

        def grown(s):
            return (x, fx, gx, 2 * eta, xp.zeros_like(i), yes)

        def descend(s):
            x_new = x - eta * gx

            def moved(s):
                fx_new = f(x_new)
                return lax.cond(fx_new < fx,
                                lambda s: (x_new, fx_new, g(x_new), eta, i + 1, yes),
                                lambda s: (x, fx, gx, eta / 2, xp.zeros_like(i), yes), s)
            return lax.cond(_norm(xp, x - x_new) <= TOL, lambda s: (*s[:5], no), moved, s)
        return lax.cond(_norm(xp, gx) <= TOL, lambda s: (*s[:5], no),
                        lambda s: lax.cond(i == 10, grown, descend, s), s)
    return step


def _lax_init(xp, f, g, x):
    return (x, f(x), g(x), xp.asarray(ETA0), xp.asarray(0), xp.asarray(True))


def lax_argmin(lax, xp, f, g, x, bound=None):
    """:func:`argmin` as a ``while_loop`` (``bound`` None) or, for a reverse derivative to
    go through, a ``scan`` of ``bound`` turns, each a ``cond`` on still going; then the
    result is NaN if the bound was hit."""
    step = _lax_step(lax, xp, f, g)
    init = _lax_init(xp, f, g, x)
    if bound is None:
        return lax.while_loop(lambda s: s[5], step, init)[0]
    s = lax.scan(lambda s, _: (lax.cond(s[5], step, lambda s: s, s), None), init, None,
                 length=bound)[0]
    return xp.where(s[5], xp.nan, s[0])


def lax_euler_objective(peer, inner, bound=None):
    """:func:`particle_objective` with the Euler loop a ``while_loop`` (``bound`` None) or a
    ``scan`` of ``bound`` ``cond``s (NaN if the bound was hit)."""
    xp, lax = peer.xp, peer.lax
    x0, v0 = peer.arr([0.0, 8.0]), peer.arr([0.75, 0.0])

    def f(wv):
        accel = derivative(peer, inner, _potential(xp, _charges(peer, wv[0])))

        def step(s):
            x, xdot, _ = s
            xddot = -1.0 * accel(x)
            x_new = x + DT * xdot
            go = x_new[1] > 0
            return (xp.where(go, x_new, x), xp.where(go, xdot + DT * xddot, xdot), go)
        init = (x0, v0, xp.asarray(True))
        if bound is None:
            x, xdot, go = lax.while_loop(lambda s: s[2], step, init)
        else:
            x, xdot, go = lax.scan(lambda s, _: (lax.cond(s[2], step, lambda s: s, s), None),
                                   init, None, length=bound)[0]
        dt_f = -x[1] / xdot[1]
        x_t_f = x + dt_f * xdot
        out = x_t_f[0] * x_t_f[0]
        return out if bound is None else xp.where(go, xp.nan, out)
    return f


def lax_particle(peer, variant):
    """w0 -> the solve's w, as one function of loop primitives (to jit whole)."""
    f = lax_euler_objective(peer, variant[1])
    through = lax_euler_objective(peer, variant[1], None if variant[0] == "f" else MAX_EULER)
    g = derivative(peer, variant[0], through)
    return lambda w0: lax_argmin(peer.lax, peer.xp, f, g, w0)


def lax_saddle(peer, variant):
    """start -> r1 ++ r2, as one function of loop primitives (to jit whole)."""
    xp, lax = peer.xp, peer.lax

    def solve(start):
        def r2_cost(p1):
            return lambda p: saddle_f(p1, p)

        def r1_cost_with(bound):
            def r1_cost(p1):
                cost = r2_cost(p1)
                dcost = derivative(peer, variant[1], cost)
                xmax = lax_argmin(lax, xp, lambda v: -cost(v), lambda v: -dcost(v), start,
                                  bound)
                return cost(xmax)
            return r1_cost
        r1_grad = derivative(peer, variant[0],
                             r1_cost_with(None if variant[0] == "f" else MAX_SOLVER))
        r1 = lax_argmin(lax, xp, r1_cost_with(None), r1_grad, start)
        cost = r2_cost(r1)
        dcost = derivative(peer, variant[0], cost)
        r2 = lax_argmin(lax, xp, lambda v: -cost(v), lambda v: -dcost(v), start)
        return xp.concatenate([r1, r2])
    return solve
