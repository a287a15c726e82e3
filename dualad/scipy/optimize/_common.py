"""What every ``dualad.scipy.optimize`` solver shares: the traced values a problem depends
on, the plain problem SciPy solves, the convergence check, and the one call to
:func:`dualad.custom_root` that makes the solution differentiable.

A problem ``fun(x, *args)`` depends on θ: the traced leaves of ``args`` (nested tuples,
lists and dicts allowed) and the traced values ``fun`` closes over (found by
:func:`dualad.scipy._closure.closure_convert`). SciPy solves it on the primal values of θ;
the solution x* satisfies an optimality condition F(x*, θ) = 0 (a root: F = fun; a
minimum: F = ∇ₓf; a fixed point: F = func(x) − x), and the implicit function theorem
gives its derivative,

    ∂F/∂x · ẋ = −∂F/∂θ · θ̇        (forward),        θ̄ = −(∂F/∂θ)ᵀ (∂F/∂x)⁻ᵀ x̄   (reverse),

which :func:`dualad.custom_root` computes (a linear solve with ∂F/∂x at x*, never a
differentiated solver), in both modes and to any order.
"""
from __future__ import annotations

__all__ = ["ConvergenceError", "DegenerateSolutionWarning", "is_traced", "start", "bind",
           "plain", "plain_callable", "as_array", "check_args", "require_callable",
           "residual_norm", "check_converged", "ACCEPT_TOL", "NEWTON_TOL", "solution",
           "shape_message", "flat_residual"]

import warnings

import numpy as np

from ...numpy import array as _array
from ...ops import reshape
from ...core.tracer import Box, primal_value, shape_of
from ...core.tree import flatten
from ...transforms.implicit import custom_root
from .._closure import closure_convert


class ConvergenceError(RuntimeError):
    """A solver did not converge on a problem being differentiated: the implicit function
    theorem would give the derivative of a point that is not a solution."""


class DegenerateSolutionWarning(RuntimeWarning):
    """A solution where the active set is degenerate (a component exactly at a bound with
    zero gradient, an active inequality with a zero multiplier): the solution is not
    differentiable there, and the derivative returned is one-sided (the set held fixed)."""


def is_traced(tree):
    return any(isinstance(v, Box) for v in flatten(tree)[0])


def start(api, x0, name="x0"):
    """The starting point as a plain float array (its derivative is 0: it only starts the
    solve); None, empty, complex or non-numeric input is refused."""
    if x0 is None:
        raise TypeError(f"{api}: {name} is None; pass the starting point, an array of floats")
    if isinstance(x0, (list, tuple)) and is_traced(x0):
        x0 = [primal_value(v) for v in x0]
    x = np.asarray(primal_value(x0))
    if x.dtype.kind == "c":
        raise TypeError(f"{api}: {name} is complex (dtype {x.dtype}, shape {x.shape}); SciPy's "
                        f"solvers are real: split the unknowns into real and imaginary parts")
    if x.dtype.kind not in "biuf":
        raise TypeError(f"{api}: {name} has dtype {x.dtype}; pass an array of floats")
    if x.size == 0:
        raise ValueError(f"{api}: {name} is empty (shape {x.shape}); there is nothing to solve for")
    return x.astype(float)


def _real(api, theta):
    for v in theta:
        dt = np.asarray(primal_value(v)).dtype
        if dt.kind == "c":
            raise TypeError(f"{api}: a traced argument of shape {shape_of(v)} is complex "
                            f"({dt}); SciPy's solvers and their implicit derivatives are real: "
                            f"pass the real and imaginary parts as separate real arguments")


def bind(fn, args=(), kwargs=None, api="optimize"):
    """``(g, θ)``: ``g(x, *θ) ≡ fn(x, *args, **kwargs)`` with θ the traced leaves of args and
    kwargs and then the traced values ``fn`` closes over, in that order (real ones: a
    complex traced value is refused)."""
    fn, closed = closure_convert(fn)
    tree = (tuple(args), dict(kwargs or {}))
    leaves, rebuild = flatten(tree)
    pos = [i for i, a in enumerate(leaves) if isinstance(a, Box)]
    k = len(pos)

    def g(x, *theta):
        full = list(leaves)
        for i, v in zip(pos, theta[:k]):
            full[i] = v
        a, kw = rebuild(full)
        return fn(x, *a, *theta[k:], **kw)
    g.__name__ = getattr(fn, "__name__", "func")
    theta = tuple(leaves[i] for i in pos) + closed
    _real(api, theta)
    return g, theta


def _refuse_traced(api, name, out):
    if is_traced(out):
        raise TypeError(
            f"{api}: {name} returned a traced value when called on plain numbers: it reads a "
            f"value being differentiated that dualad could not find among its arguments and "
            f"closure (a global variable, or an object reached indirectly). Pass that value "
            f"through args=(...) so that its derivative is computed")
    return out


def plain(api, name, g, theta):
    """``g`` with θ at its primal values, as SciPy calls it: a function of x alone. A
    traced value in what it returns means ``fun`` read a traced value dualad did not find
    (a global variable, an object reached indirectly): refused, naming args=(...)."""
    p = tuple(primal_value(t) for t in theta)

    def call(x):
        return _refuse_traced(api, name, g(x, *p))
    call.__name__ = getattr(g, "__name__", name)
    return call


def plain_callable(api, name, fn, args=(), kwargs=None):
    """A user callable SciPy calls as ``fn(*lead, *args, **kwargs)`` (``jac(x)``,
    ``hessp(x, p)``, ``fprime``, ...), with ``args``, ``kwargs`` and the traced values it
    closes over at their primal values; None and non-callables (``jac=True``,
    ``'2-point'``, a ``HessianUpdateStrategy``) are returned as they are."""
    if not callable(fn) or isinstance(fn, type):
        return fn
    leaves, rebuild = flatten((tuple(args), dict(kwargs or {})))
    p_args, p_kwargs = rebuild([primal_value(v) for v in leaves])
    whole = lambda *a: fn(*a[:-1], **a[-1])     # noqa: E731  (kwargs as one argument)
    conv, closed = closure_convert(whole)
    p_closed = tuple(primal_value(v) for v in closed)

    def call(*lead):
        return _refuse_traced(api, name, conv(*lead, *p_args, p_kwargs, *p_closed))
    call.__name__ = getattr(fn, "__name__", name)
    return call


def as_array(out):
    """A list or tuple (of maybe traced scalars) that SciPy accepts as an array, as one."""
    if isinstance(out, (list, tuple)):
        return _array(out) if is_traced(out) else np.asarray(out, dtype=float)
    return out


def check_args(api, args):
    """SciPy's ``args``: a tuple; a single value is wrapped, as SciPy does."""
    if args is None:
        return ()
    return tuple(args) if isinstance(args, (tuple, list)) and not isinstance(args, Box) \
        else (args,)


def require_callable(api, name, fn):
    if not callable(fn):
        raise TypeError(f"{api}: {name} must be callable, got {type(fn).__name__}")


def residual_norm(F, x):
    """‖F(x)‖∞ on plain values (for messages)."""
    try:
        return float(np.max(np.abs(np.asarray(F(x), dtype=float)), initial=0.0))
    except Exception:      # pragma: no cover - the message only
        return float("nan")


def check_converged(api, success, message, residual=None, scale=1.0, hint=""):
    """Refuse to differentiate an unconverged solve (:class:`ConvergenceError`).

    Only called when θ is traced: with nothing to differentiate, SciPy's result is
    returned as SciPy returns it. A failure SciPy reports at a point whose optimality
    residual ‖F(x*)‖∞ is at most ``ACCEPT_TOL·max(1, |scale|)`` (BFGS's "precision
    loss" at a minimum whose gradient is as small as SciPy's own default gtol accepts)
    is differentiated, with a RuntimeWarning saying so."""
    if success:
        return
    if residual is not None and residual <= ACCEPT_TOL * max(1.0, abs(scale)):
        warnings.warn(f"{api}: SciPy reports failure ({message!s}), but the optimality "
                      f"residual at res.x is {residual:.3g}, within {ACCEPT_TOL:g}·max(1, |f|): "
                      f"differentiating it as a solution", RuntimeWarning, stacklevel=4)
        return
    at = "" if residual is None else f" (the optimality residual there is {residual:.3g})"
    raise ConvergenceError(
        f"{api}: the solver did not converge ({message!s}){at}, so res.x is not a solution and "
        f"its implicit derivative would be that of a point that solves nothing. Tighten the "
        f"tolerances, raise the iteration limit, start closer or choose another method"
        f"{hint}; check res.success with plain (not traced) arguments first")


ACCEPT_TOL = 1e-6    # a reported failure with a residual this small is still a solution


NEWTON_TOL = 1e-4   # custom_root's check: one Newton step moves SciPy's x* by at most this


class _Hidden:
    """A callable whose closure :func:`closure_convert` does not search (no ``__dict__``).

    The optimality conditions built here receive every traced value they depend on as
    an argument (θ, found by :func:`bind`); their closures also hold the bookkeeping
    copies of those values (the args tree, bound sides), which custom_root would
    otherwise collect a second time as closed-over parameters."""
    __slots__ = ("fn",)

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, *a):
        return self.fn(*a)


def solution(api, optimality, x_star, theta, *, symmetric=False, solve=None):
    """x(θ) with ``optimality(x(θ), *θ) = 0`` and x(θ*) = ``x_star`` (SciPy's solution), made
    differentiable in θ by :func:`dualad.custom_root`: an array of ``x_star``'s shape.

    ``symmetric``: ∂F/∂x is symmetric (a Hessian, a KKT matrix), for the matrix-free
    solves (minres). ``solve(matvec, b)`` solves (∂F/∂x) v = b and its transpose when
    the structure is known (diagonal for elementwise problems). custom_root checks that
    x* is a root (one Newton step within ``NEWTON_TOL·max(1, |x*|)``): SciPy's success
    at a point that is not one (a solver's loose tolerance, a misjudged active set)
    raises :class:`ConvergenceError`."""
    x_star = np.array(x_star, dtype=float)
    kw = dict(symmetric=symmetric, tol=NEWTON_TOL)
    if solve is not None:
        kw.update(linear_solve=solve, transpose_solve=solve)
    root = custom_root(_Hidden(lambda *th: x_star), _Hidden(optimality), **kw)
    try:
        return root(*theta)
    except np.linalg.LinAlgError as err:      # a singular ∂F/∂x: name the SciPy function
        raise np.linalg.LinAlgError(f"{api}: at SciPy's solution, {err}") from err
    except RuntimeError as err:
        if not str(err).startswith("custom_root: the solver did not converge"):
            raise
        raise ConvergenceError(
            f"{api}: SciPy's solution is not a root of the optimality condition to within "
            f"{NEWTON_TOL:g} (relative): {str(err).split(': ', 1)[1].split('. ')[0]}. Solve more "
            f"accurately (tighter tol/gtol/xtol) before differentiating the solution") \
            from err


def shape_message(api, name, got, want):
    return (f"{api}: {name} returned shape {got}; it must have the shape of x, {want} "
            f"(a system of as many equations as unknowns)")


def flat_residual(api, name, g, shape):
    """``F(x, *θ) = g(x reshaped to shape, *θ)`` raveled, checked to have x's size."""
    size = int(np.prod(shape, dtype=int))

    def F(x, *theta):
        out = as_array(g(x, *theta))
        got = tuple(shape_of(out))
        if int(np.prod(got, dtype=int)) != size:
            raise ValueError(shape_message(api, name, got, tuple(shape)))
        return out if got == tuple(shape) else _reshape(out, shape)
    return F


def _reshape(v, shape):
    return reshape(v, tuple(shape))
