"""Declaring scipy.special primitives: one derivative per differentiable argument.

:func:`declare` is :func:`dualad.ops.core.elementwise.elementwise` (JVP and VJP
both derived from ``d_i(ans, *args) = ∂ans/∂arg_i``) with three additions the
special functions need:

- an argument whose derivative is ``None`` is a non-differentiable *order* or
  *shape parameter* (the ``v`` of ``iv(v, x)``, the ``a`` of ``gammainc(a, x)``).
  It stays positional, as in SciPy's signature, so it broadcasts against the
  other arguments elementwise; passing a traced value there raises an error
  naming the function and the argument (never a silently dropped derivative);
- complex arguments raise: the rules are written for real arguments (several
  use ``|x|`` or ``sign(x)``, which are not holomorphic), unless the function is
  declared with a ``complex_domain`` (``lambertw``, ``spence``): its derivative is
  then a holomorphic expression, used with the codebase's complex convention;
- rule-checker samples. The first sample is all scalars, so the registry's
  SymPy oracle runs once, on a scalar, where it decides symbolically; the
  others are arrays (and broadcasting pairs) of more than 6 elements, on which
  the registry's oracle does not run: its numeric fallback evaluates the
  Jacobians with NumPy only, which has no ``polygamma``, ``besselj``, ``erfinv``...
  ``tests/dualad/ops/test_special.py`` runs the same oracle with SciPy's functions
  on vectors and broadcasting pairs. ``registry_sympy=False`` leaves the scalar
  sample out for functions whose derivative has an irrational constant *and* a
  special function (``erfinv``: √π/2·exp(erfinv(x)²)), which SymPy can decide
  neither symbolically (the constant is a float) nor with NumPy.
"""
from __future__ import annotations

import numpy as np

from ...core.tracer import Box, primal_value, shape_of, unguarded_value
from ...core.primitive import JVP, VJP
from ...core.values import staged_only
from ...core.primitive import sample
from ..core.elementwise import elementwise

__all__ = [
    "SQRT_PI", "SQRT_2PI", "TWO_OVER_SQRT_PI", "NotDifferentiableError", "default_samples",
    "declare", "plain_param", "sp_fn"
]

SQRT_PI = float(np.sqrt(np.pi))
SQRT_2PI = float(np.sqrt(2.0 * np.pi))
TWO_OVER_SQRT_PI = 2.0 / SQRT_PI


class NotDifferentiableError(NotImplementedError):
    """A traced value reached an argument that has no derivative rule (an order)."""


def _nondiff_rule(name, argname, i, why):
    """A JVP/VJP rule ``rule(t, ans, *args)`` for order ``i``: it only ever raises."""
    def rule(_t, ans, *args, **_params):
        return _nondiff_deriv(name, {i: (argname, why)}, i)(ans, *args)
    return rule


def _real_only(name, impl):
    def call(*args):
        for a in args:
            if np.iscomplexobj(a):
                raise TypeError(f"{name}: complex argument of shape {np.shape(a)} is not "
                                f"supported; dualad's special functions are real-only")
        return impl(*args)
    call.__name__ = name
    call.__doc__ = getattr(impl, "__doc__", None)
    return call


def default_samples(derivs, domain, registry_sympy=True):
    """Scalar (SymPy runs there), a (2, 4) array and a broadcasting pair."""
    n = len(derivs)
    dom = domain or [None] * n
    scalar = sample(*[()] * n, domain=dom)
    if n == 1:
        arrays = [sample((2, 4), domain=dom), sample((1, 7), domain=dom)]
    elif n == 2:
        arrays = [sample((2, 4), (2, 4), domain=dom), sample((2, 4), (4,), domain=dom),
                  sample((3, 1), (1, 4), domain=dom)]
    else:  # pragma: no cover - every 3-argument function here has orders and its own samples
        raise ValueError("declare: give samples for functions of three arguments")
    return ([scalar] if registry_sympy else []) + arrays


def declare(name, impl, *derivs, sympy=None, domain=None, samples=None, orders=None,
            registry_sympy=True, complex_domain=None):
    """Register an elementwise special function.

    ``derivs[i](ans, *args)`` is ∂ans/∂arg_i written with registry operations,
    or ``None`` for a non-differentiable parameter; ``orders`` maps such an
    argument's position to ``(name, why)`` for the error message.
    ``complex_domain`` (rectangles per argument, as for
    :func:`~dualad.ops.core.elementwise.elementwise`) declares a holomorphic function
    that takes complex arguments; without it complex arguments raise.
    """
    derivs = tuple(_keep_dtype(d) for d in derivs)
    prim = elementwise(name, impl if complex_domain is not None else _real_only(name, impl),
                       *derivs, sympy=sympy, domain=domain, complex_domain=complex_domain)
    orders = orders or {}
    for i, d in enumerate(derivs):
        if d is None:
            argname, why = orders.get(i, (f"argument {i}", "no derivative rule"))
            raising = _nondiff_rule(name, argname, i, why)
            prim.rules[JVP][i] = prim.rules[VJP][i] = raising
    prim.samples = samples if samples is not None else default_samples(
        derivs, domain, registry_sympy)
    return prim


def _keep_dtype(d):
    """``d`` with its value cast to the primal output's dtype when that is a narrower
    float (float32): SciPy evaluates many derivatives (``polygamma(1, x)``, the
    ``gammainc`` family's ``exp``/``gammaln`` terms) in float64 whatever x is, and a
    float32 primal keeps float32 tangents and cotangents. The cast is the registry's
    ``cast`` (linear), so the rule still differentiates."""
    if d is None:
        return None

    def deriv(ans, *args):
        dv = d(ans, *args)
        want = getattr(unguarded_value(ans), "dtype", None)
        if want is not None and want.kind == "f" and want.itemsize < 8:
            got = getattr(unguarded_value(dv), "dtype", None)
            if got is not None and got != want and got.kind == "f":
                from ..core.shape import cast
                return cast(dv, want)
        return dv
    deriv.__doc__ = d.__doc__
    return deriv


def _nondiff_deriv(name, orders, i):
    argname, why = orders.get(i, (f"argument {i}", "no derivative rule"))

    def deriv(ans, *args):
        raise NotDifferentiableError(
            f"{name}: argument {i} ({argname}) is not differentiable ({why}); it was given a "
            f"traced value of shape {shape_of(args[i])}. Pass a plain number or array for "
            f"{argname}")
    return deriv


def plain_param(fname, argname, value, why):
    """``value`` stripped of traces, or an error if it is traced (a non-differentiable
    parameter of a composed function, e.g. ``multigammaln``'s dimension ``d``). A value
    only dualad.jit traces is read with a guard (a new value traces again)."""
    if isinstance(value, Box) and not staged_only(value):
        raise NotDifferentiableError(
            f"{fname}: {argname} is not differentiable ({why}); it was given a traced value "
            f"of shape {shape_of(value)}. Pass a plain number or array")
    return primal_value(value)


def sp_fn(fname):
    """SymPy translation ``sympy.<fname>(*args)``."""
    return lambda sp, *args: getattr(sp, fname)(*args)
