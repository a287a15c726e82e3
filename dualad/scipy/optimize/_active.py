"""Bounds and constraints of ``minimize`` and ``least_squares``: their plain form for
SciPy, their traced values, and the active set at SciPy's solution.

A bound or constraint value may be traced (a bound that is a parameter): it is passed to
SciPy at its primal value and enters the optimality condition with its derivative, so
a component held at a traced bound moves with it (dx_i/db_i = 1).

A bound is **active** at x* when x*_i is within ``ACTIVE_TOL·max(1, |b_i|)`` of it; an
inequality constraint lb ≤ c(x) ≤ ub likewise, in c. The active set is then held fixed
(as where it is locally constant: strict complementarity). It is **degenerate** when an
active bound has zero gradient ``|∂f/∂x_i| ≤ ZERO_TOL·max(1, |f|)`` (or an active
inequality a zero multiplier): the solution is not differentiable there; dualad reports
it (:class:`._common.DegenerateSolutionWarning`) and returns the one-sided derivative
with the set fixed.
"""
from __future__ import annotations

__all__ = ["ACTIVE_TOL", "ZERO_TOL", "Side", "BoxBounds", "minimize_bounds",
           "least_squares_bounds", "Constraint", "parse_constraints"]

import numpy as np
import scipy.optimize as _so

from ...numpy import array as _array
from ...core.tracer import Box, primal_value
from ._common import bind, is_traced, plain, plain_callable

ACTIVE_TOL = 1e-6
ZERO_TOL = 1e-8


class Side:
    """One side of a box bound over n components: ``plain`` (n,) floats (±inf where
    absent) and the traced values it holds (``theta``), rebuilt by ``values(theta)``."""

    def __init__(self, plain_values, theta, make):
        self.plain, self.theta, self._make = plain_values, tuple(theta), make

    def values(self, theta):
        return self._make(theta) if self.theta else self.plain


def _side(api, what, v, n, default):
    """A bound side from an array/scalar (maybe traced) or from n entries (None = none)."""
    if isinstance(v, Box):
        pv = np.asarray(primal_value(v), dtype=float)
        try:
            plain_v = np.broadcast_to(pv, (n,)).copy()
        except ValueError:
            raise ValueError(f"{api}: {what} has shape {pv.shape}; it must be a scalar or "
                             f"have the shape of x0, ({n},)") from None
        return Side(plain_v, (v,), lambda th: np.broadcast_to(th[0], (n,)))
    if isinstance(v, (list, tuple)) and any(isinstance(e, Box) for e in v):
        if len(v) != n:
            raise ValueError(f"{api}: {what} has {len(v)} entries; x0 has {n}")
        pos = [i for i, e in enumerate(v) if isinstance(e, Box)]
        entries = [default if e is None else e for e in v]
        plain_v = np.array([float(primal_value(e)) for e in entries])

        def make(th):
            full = list(entries)
            for i, t in zip(pos, th):
                full[i] = t
            return _array(full)
        return Side(plain_v, [v[i] for i in pos], make)
    pv = np.asarray([default if e is None else e for e in v] if isinstance(v, (list, tuple))
                    else (default if v is None else v), dtype=float)
    try:
        return Side(np.broadcast_to(pv, (n,)).copy(), (), None)
    except ValueError:
        raise ValueError(f"{api}: {what} has shape {pv.shape}; it must be a scalar or have "
                         f"the shape of x0, ({n},)") from None


class BoxBounds:
    """Bounds lb ≤ x ≤ ub: ``lower``/``upper`` sides and the form SciPy is given."""

    def __init__(self, lower, upper, scipy_form):
        self.lower, self.upper, self.scipy_form = lower, upper, scipy_form

    @property
    def theta(self):
        return self.lower.theta + self.upper.theta

    def active(self, x, grad, f):
        """``(mask, target side per component, degenerate indices)`` at x."""
        lo, hi = self.lower.plain, self.upper.plain
        at_lo = np.isfinite(lo) & (np.abs(x - lo) <= ACTIVE_TOL * np.maximum(1, np.abs(lo)))
        at_hi = np.isfinite(hi) & (np.abs(hi - x) <= ACTIVE_TOL * np.maximum(1, np.abs(hi))) \
            & ~at_lo
        mask = at_lo | at_hi
        zero = np.abs(grad) <= ZERO_TOL * max(1.0, abs(f))
        return mask, at_hi, np.flatnonzero(mask & zero)

    def targets(self, theta, at_hi):
        """The bound value of each component (lower or upper, as active), maybe traced."""
        k = len(self.lower.theta)
        lo, hi = self.lower.values(theta[:k]), self.upper.values(theta[k:])
        return np.where(at_hi, hi, lo)


def minimize_bounds(api, bounds, n):
    """``minimize``'s bounds: a ``Bounds`` or n (min, max) pairs (None = unbounded)."""
    if bounds is None:
        return None
    if isinstance(bounds, _so.Bounds):
        lo = _side(api, "bounds.lb", bounds.lb, n, -np.inf)
        hi = _side(api, "bounds.ub", bounds.ub, n, np.inf)
        return BoxBounds(lo, hi, bounds)
    pairs = list(bounds)
    if len(pairs) != n or any(len(p) != 2 for p in pairs):
        raise ValueError(f"{api}: bounds must be a Bounds or {n} (min, max) pairs, one per "
                         f"component of x0, got {len(pairs)} entries")
    lo = _side(api, "bounds (min)", [p[0] for p in pairs], n, -np.inf)
    hi = _side(api, "bounds (max)", [p[1] for p in pairs], n, np.inf)
    form = [(None if p[0] is None else float(primal_value(p[0])),
             None if p[1] is None else float(primal_value(p[1]))) for p in pairs]
    return BoxBounds(lo, hi, form)


def least_squares_bounds(api, bounds, n):
    """``least_squares``' bounds: a ``Bounds`` or a pair (lb, ub) of scalars or arrays."""
    if isinstance(bounds, _so.Bounds):
        return minimize_bounds(api, bounds, n)
    if not isinstance(bounds, (tuple, list)) or len(bounds) != 2:
        raise ValueError(f"{api}: bounds must be a Bounds or a pair (lb, ub) of scalars or "
                         f"arrays of x0's shape")
    lo = _side(api, "bounds[0] (lb)", bounds[0], n, -np.inf)
    hi = _side(api, "bounds[1] (ub)", bounds[1], n, np.inf)
    if not (np.isfinite(lo.plain).any() or np.isfinite(hi.plain).any()):
        return None
    return BoxBounds(lo, hi, (lo.plain, hi.plain))


class Constraint:
    """One constraint lb ≤ c(x) ≤ ub: ``fn(x, *θ_c)`` its values (traced), ``lower`` and
    ``upper`` its sides, ``theta`` = θ_c + the sides' traced values, ``scipy_form`` what
    SciPy is given."""

    def __init__(self, fn, theta_c, lower, upper, scipy_form):
        self.fn, self.theta_c, self.lower, self.upper = fn, tuple(theta_c), lower, upper
        self.scipy_form = scipy_form

    @property
    def theta(self):
        return self.theta_c + self.lower.theta + self.upper.theta

    def split(self, theta):
        a, b = len(self.theta_c), len(self.theta_c) + len(self.lower.theta)
        return theta[:a], theta[a:b], theta[b:]


def _vector_fn(fn):
    def c(x, *theta):
        out = fn(x, *theta)
        out = _array(out) if isinstance(out, (list, tuple)) and is_traced(out) else out
        return np.reshape(out, (-1,))
    return c


def parse_constraints(api, constraints, x0):
    """``constraints`` (a dict, a ``NonlinearConstraint``/``LinearConstraint``, or a list
    of them) as :class:`Constraint` records, each evaluated once at x0 for its size."""
    if constraints is None:
        return []
    items = [constraints] if isinstance(constraints, (dict, _so.NonlinearConstraint,
                                                      _so.LinearConstraint)) \
        else list(constraints)
    out = []
    for i, con in enumerate(items):
        where = f"constraints[{i}]"
        if isinstance(con, dict):
            kind = con.get("type")
            if kind not in ("eq", "ineq") or not callable(con.get("fun")):
                raise ValueError(f"{api}: {where} must have 'type' 'eq' or 'ineq' and a "
                                 f"callable 'fun', got {sorted(con)}")
            unknown = set(con) - {"type", "fun", "jac", "args"}
            if unknown:
                raise ValueError(f"{api}: {where} has unknown keys {sorted(unknown)}")
            cargs = con.get("args", ())
            cargs = cargs if isinstance(cargs, tuple) else (cargs,)
            g, theta = bind(con["fun"], cargs, api=api)
            fn = _vector_fn(g)
            m = np.size(plain(api, f"{where}['fun']", g, theta)(x0))
            lo = Side(np.zeros(m), (), None)
            hi = lo if kind == "eq" else Side(np.full(m, np.inf), (), None)
            form = {"type": kind, "fun": plain(api, f"{where}['fun']", g, theta)}
            if "jac" in con:
                form["jac"] = plain_callable(api, f"{where}['jac']", con["jac"], cargs)
            out.append(Constraint(fn, theta, lo, hi, form))
        elif isinstance(con, _so.NonlinearConstraint):
            g, theta = bind(con.fun, api=api)
            fn = _vector_fn(g)
            m = np.size(plain(api, f"{where}.fun", g, theta)(x0))
            lo = _side(api, f"{where}.lb", con.lb, m, -np.inf)
            hi = _side(api, f"{where}.ub", con.ub, m, np.inf)
            form = _so.NonlinearConstraint(
                plain(api, f"{where}.fun", g, theta), lo.plain, hi.plain,
                jac=plain_callable(api, f"{where}.jac", con.jac),
                hess=plain_callable(api, f"{where}.hess", con.hess),
                keep_feasible=con.keep_feasible,
                finite_diff_rel_step=con.finite_diff_rel_step,
                finite_diff_jac_sparsity=con.finite_diff_jac_sparsity)
            out.append(Constraint(fn, theta, lo, hi, form))
        elif isinstance(con, _so.LinearConstraint):
            A = con.A
            m = A.shape[0]
            fn = lambda x, A=A: np.reshape(A @ x, (-1,))   # noqa: E731
            lo = _side(api, f"{where}.lb", con.lb, m, -np.inf)
            hi = _side(api, f"{where}.ub", con.ub, m, np.inf)
            out.append(Constraint(fn, (), lo, hi, con))
        else:
            raise TypeError(f"{api}: {where} is a {type(con).__name__}; constraints are "
                            f"dicts, NonlinearConstraint or LinearConstraint objects")
    return out
