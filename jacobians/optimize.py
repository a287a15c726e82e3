"""scipy.optimize, fed exact derivatives.

    minimize(f, x0, jac=gradient(f), hess=hessian_fn(f))        Newton-type methods
    minimize(f, x0, jac=gradient(f), hessp=hessp_fn(f))         Hessian-free (CG) methods
    minimize(**minimize_kwargs(f, x0, method="trust-exact"))    the same, in one call
    least_squares(r, x0, jac=jacobian_fn(r))                    dense Jacobian
    least_squares(r, x0, jac=sparse_jacobian_fn(r, x0))         scipy.sparse Jacobian, the
                                                                pattern detected once and
                                                                checked at every point
    least_squares(r, x0, jac_sparsity=jacobian_sparsity(r, x0)) scipy's own finite differences,
                                                                grouped by our pattern (the
                                                                pattern at x0: right at every
                                                                x only if r takes no decision
                                                                on values, see .validity)

Each helper returns a plain function of ``x`` (and ``p`` for ``hessp``) as
SciPy calls it, returning float64 NumPy arrays (or CSR matrices).
"""
from __future__ import annotations

__all__ = ["HESS_METHODS", "HESSP_METHODS", "gradient", "value_and_gradient", "hessian_fn",
           "sparse_hessian_fn", "hessp_fn", "minimize_kwargs", "jacobian_fn",
           "sparse_jacobian_fn", "least_squares_kwargs"]

import numpy as np

import dualad

from ._common import DEFAULT_MAX_MEMORY, Problem
from .coloring import star_coloring
from .dense import jacobian
from .hessian import hessian, hessian_chunk, hvp, scalar_problem
from .plan import plan
from .sparsity import detect_hessian, jacobian_sparsity  # noqa: F401  (re-exported)
from .validity import CheckedPattern

#: Methods of scipy.optimize.minimize that use ``hess`` / ``hessp``.
HESS_METHODS = ("newton-cg", "dogleg", "trust-ncg", "trust-krylov", "trust-exact",
                "trust-constr")
HESSP_METHODS = ("newton-cg", "trust-ncg", "trust-krylov", "trust-constr")


def _name(f):
    return getattr(f, "__name__", type(f).__name__)


def gradient(f, *args):
    """``x ↦ ∇f(x, *args)`` (one reverse sweep) for ``jac=``."""
    g = dualad.grad(f)

    def jac(x, *more):
        return np.asarray(g(np.asarray(x, float), *(more or args)), float)
    jac.__name__ = f"gradient({_name(f)})"
    return jac


def value_and_gradient(f, *args):
    """``x ↦ (f(x), ∇f(x))`` in one sweep, for ``minimize(fun, x0, jac=True)``."""
    vg = dualad.value_and_grad(f)

    def fun(x, *more):
        v, g = vg(np.asarray(x, float), *(more or args))
        return float(v), np.asarray(g, float)
    fun.__name__ = f"value_and_gradient({_name(f)})"
    return fun


def hessian_fn(f, *args, sparse=False):
    """``x ↦ ∇²f(x)`` for ``hess=`` (dense, forward-over-reverse; or scipy.sparse when
    ``sparse=True``, which trust-constr accepts: the pattern is detected and star-colored
    at the first point, and checked at every later one, as in :func:`sparse_hessian_fn`)."""
    prepared = []

    def hess(x, *more):
        x = np.asarray(x, float)
        if sparse:
            if not prepared:
                prepared.append(sparse_hessian_fn(f, x, *args))
            return prepared[0](x, *more)
        return hessian(f, x, *(more or args))
    hess.__name__ = f"hessian({_name(f)})"
    return hess


def sparse_hessian_fn(f, x0, *args, chunk_size=None, max_memory=DEFAULT_MAX_MEMORY):
    """``x ↦ ∇²f(x)`` as an exactly symmetric scipy CSR: the pattern is detected and
    star-colored once at ``x0``; at every later point the decisions ``f`` takes
    (comparisons, index functions, branches) are checked against the detection's and
    the pattern detected again where they differ (see :mod:`jacobians.validity`;
    ``hess.checked.redetections`` counts those points)."""
    problem = scalar_problem("sparse_hessian_fn", f, (np.asarray(x0, float),) + args, 0)
    sparsity = detect_hessian(problem)
    checked = CheckedPattern("hessian", sparsity, star_coloring(sparsity.pattern))
    chunk = hessian_chunk(problem, "forward-over-reverse", chunk_size, max_memory)

    def hess(x, *more):
        at = Problem("sparse_hessian_fn", f, (np.asarray(x, float),) + (more or args), 0)
        if at.in_shapes != problem.in_shapes:
            raise ValueError(f"sparse_hessian_fn({_name(f)}): prepared for x of shape "
                             f"{problem.in_shapes[0]}, got {at.in_shapes[0]}")
        return checked.evaluate(at, chunk)[0]
    hess.__name__ = f"sparse_hessian({_name(f)})"
    hess.checked = checked
    return hess


def hessp_fn(f, *args):
    """``(x, p) ↦ ∇²f(x) p`` for ``hessp=``: one forward-over-reverse sweep."""
    def hessp(x, p, *more):
        return np.asarray(hvp(f, np.asarray(x, float), np.asarray(p, float), *(more or args)),
                          float)
    hessp.__name__ = f"hessp({_name(f)})"
    return hessp


def minimize_kwargs(f, x0, method="trust-exact", hessian="auto", args=()):
    """Keyword arguments for ``scipy.optimize.minimize``: ``fun``, ``x0``, ``method``,
    ``jac`` and, as the method uses them, ``hess`` or ``hessp``. ``hessian``: "auto"
    (``hess`` if the method takes one, else ``hessp``), "hess", "hessp" or None."""
    kw = {"fun": f, "x0": np.asarray(x0, float), "method": method, "jac": gradient(f),
          "args": tuple(args)}
    m = method.lower() if isinstance(method, str) else method
    if hessian == "auto":
        hessian = "hess" if m in HESS_METHODS and m not in ("newton-cg", "trust-ncg",
                                                           "trust-krylov") else \
            ("hessp" if m in HESSP_METHODS else None)
    if hessian == "hess":
        kw["hess"] = hessian_fn(f)
    elif hessian == "hessp":
        kw["hessp"] = hessp_fn(f)
    elif hessian is not None:
        raise ValueError(f"minimize_kwargs: hessian={hessian!r} is not one of 'auto', 'hess', "
                         f"'hessp', None")
    return kw


def jacobian_fn(residual, *args, mode="auto"):
    """``x ↦ J(x)`` (dense, m x n) for ``least_squares(..., jac=)``."""
    def jac(x, *more):
        j = jacobian(residual, np.asarray(x, float), *(more or args), mode=mode)
        return np.asarray(j, float).reshape(-1, np.size(x))
    jac.__name__ = f"jacobian({_name(residual)})"
    return jac


def sparse_jacobian_fn(residual, x0, *args, mode="auto"):
    """``x ↦ J(x)`` as scipy CSR for ``least_squares(..., jac=)``: the planner runs once at
    ``x0`` (sparsity detected, colored, mode chosen) and every call reuses its plan; the
    pattern is checked at each point (the decisions of ``f`` against the detection's) and
    detected again where it may differ (``jac.plan.redetections`` counts those points)."""
    p = plan(residual, np.asarray(x0, float), *args, mode=mode, output="sparse")

    def jac(x, *more):
        return p(np.asarray(x, float), *(more or args))
    jac.__name__ = f"sparse_jacobian({_name(residual)})"
    jac.plan = p
    return jac


def least_squares_kwargs(residual, x0, sparse=False, args=()):
    """Keyword arguments for ``scipy.optimize.least_squares``: ``fun``, ``x0``, ``jac``
    (sparse CSR through a prepared plan when ``sparse``; then also ``tr_solver="lsmr"``)."""
    x0 = np.asarray(x0, float)
    kw = {"fun": residual, "x0": x0, "args": tuple(args)}
    if sparse:
        kw["jac"] = sparse_jacobian_fn(residual, x0, *args)
        kw["tr_solver"] = "lsmr"
    else:
        kw["jac"] = jacobian_fn(residual, *args)
    return kw
