"""Riemann's and Hurwitz's zeta functions, differentiable in x (and q), any order.

    zeta(x, q)          = ζ(x, q) = Σₙ (n+q)⁻ˣ     ∂x = ζ⁽¹⁾(x, q)    ∂q = −x ζ(x+1, q)
    riemann_zeta(x)     = ζ(x) = ζ(x, 1)           ∂x = ζ'(x)
    zeta_deriv(k, x, q) = ζ⁽ᵏ⁾(x, q) = ∂ᵏζ/∂xᵏ = Σₙ (−log(n+q))ᵏ (n+q)⁻ˣ
        ∂x = ζ⁽ᵏ⁺¹⁾(x, q)    ∂q = −(x ζ⁽ᵏ⁾(x+1, q) + k ζ⁽ᵏ⁻¹⁾(x+1, q))

SciPy has no ∂ζ/∂x. ``zeta_deriv`` computes it by Euler–Maclaurin summation:
the first 8 terms directly, the rest as ∫_y^∞ (−log t)ᵏ t⁻ˣ dt (a closed
form, y = 8 + q) + f(y)/2 − Σⱼ₌₁¹⁰ B₂ⱼ/(2j)!·f⁽²ʲ⁻¹⁾(y), with f⁽ᵐ⁾(y) =
y^(−x−m)·Pₘ(log y) for polynomials Pₘ₊₁ = −(x+m)Pₘ + Pₘ'. For x > 1 every
term has the sign of the result and the remainder is below 10⁻¹⁷ relative:
ζ⁽ᵏ⁾(x, q) is accurate to a few ulps (2·10⁻¹⁵ against mpmath for k ≤ 3); for
−½ ≤ x < 1 (the continuation, Riemann's ζ only) the terms cancel a little
(5·10⁻¹⁴). Below x = −½ the Riemann ζ' comes from the functional equation
ζ(s) = χ(s)ζ(1−s), χ(s) = 2ˢπˢ⁻¹ sin(πs/2) Γ(1−s), differentiated with
registry primitives (at s = 0 it would be 0·∞, hence Euler–Maclaurin there):

    ζ'(s) = A(s)·[((log 2π − ψ(1−s)) sin(πs/2) + (π/2) cos(πs/2))·ζ(1−s) − sin(πs/2)·ζ'(1−s)]

with A(s) = (2π)ˢ Γ(1−s)/π, so every order works on both sides of −½. At the
pole x = 1 value and derivatives are infinite or nan. ``zeta_deriv`` itself is
nan for x < −½; Hurwitz's ζ(x, q) is SciPy's for x > 1 and q > 0 (nan elsewhere).
"""
from __future__ import annotations

from math import factorial

import numpy as np
import scipy.special as sc

from ...core.primitive import sample, implements
from ..core.elementwise import cos, exp, sin, where
from .common import declare
from .gamma import digamma, gammaln

__all__ = ["zeta_deriv", "zeta", "riemann_zeta"]

_N_DIRECT = 8
_M = 10
_BERNOULLI = sc.bernoulli(2 * _M)
_EM = [float(_BERNOULLI[2 * j]) / factorial(2 * j) for j in range(1, _M + 1)]  # B₂ⱼ/(2j)!
_LOG_2PI = float(np.log(2.0 * np.pi))
_LOG_PI = float(np.log(np.pi))
_EM_FROM = -0.5      # Euler–Maclaurin from here; below, the functional equation


def _order(name, k, least=0):
    k_arr = np.asarray(k)
    if k_arr.ndim or k_arr.dtype.kind not in "iuf" or k_arr != np.round(k_arr) or k_arr < least:
        raise ValueError(f"{name}: the order k must be an integer >= {least} (a scalar), got "
                         f"{k!r} (shape {k_arr.shape})")
    return int(k_arr)


def _zeta_deriv_impl(k, x, q=1.0):
    k = _order("zeta_deriv", k)
    dtype = np.result_type(x, q, np.float32)
    x, q = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(q, dtype=float))
    sgn = (-1.0) ** k
    with np.errstate(all="ignore"):
        ln = np.log(q[..., None] + np.arange(_N_DIRECT))
        direct = np.sum(sgn * ln ** k * np.exp(-x[..., None] * ln), axis=-1)
        y = q + _N_DIRECT
        ly, a = np.log(y), x - 1.0
        powers = [np.ones_like(ly)]                    # ly⁰, ly¹, ..., lyᵏ
        for _ in range(k):
            powers.append(powers[-1] * ly)
        integral = sum(factorial(k) // factorial(k - j) * powers[k - j] / a ** (j + 1)
                       for j in range(k + 1))
        total = direct + sgn * np.exp(-a * ly) * integral + 0.5 * sgn * powers[k] * y ** -x
        coeffs = [np.zeros_like(x) for _ in range(k)] + [np.full_like(x, sgn)]   # P₀
        for m in range(1, 2 * _M):
            coeffs = [-(x + (m - 1)) * coeffs[j] + ((j + 1) * coeffs[j + 1] if j < k else 0.0)
                      for j in range(k + 1)]
            if m % 2:
                p_m = sum(c * p for c, p in zip(coeffs, powers))
                total = total - _EM[m // 2] * p_m * y ** (-x - m)
        total = np.where(x >= _EM_FROM, total, np.nan)
    return total.astype(dtype, copy=False)[()]


def _dq_zeta_deriv(k, x, q):
    lower = zeta(x + 1.0, q) if k == 1 else zeta_deriv(k - 1, x + 1.0, q)
    return -(x * zeta_deriv(k, x + 1.0, q) + k * lower)


_PXQ = [None, (1.2, 5.0), (0.3, 3.0)]
zeta_deriv = declare(
    "zeta_deriv", _zeta_deriv_impl, None,
    lambda r, k, x, q: zeta_deriv(_order("zeta_deriv", k) + 1, x, q),
    lambda r, k, x, q: _dq_zeta_deriv(_order("zeta_deriv", k, 1), x, q),
    domain=_PXQ, orders={0: ("k", "the order of the derivative, an integer")},
    samples=[sample(1, (), (), domain=_PXQ), sample(1, (2, 4), (2, 4), domain=_PXQ),
             sample(2, (3, 1), (1, 4), domain=_PXQ), sample(3, (3,), 1.0, domain=_PXQ)])
zeta_deriv.__doc__ = "ζ⁽ᵏ⁾(x, q) = ∂ᵏζ(x, q)/∂xᵏ (k ≥ 1), by Euler–Maclaurin summation."

_PQ = [(1.2, 5.0), (0.3, 3.0)]
zeta = declare("zeta", lambda x, q: sc.zeta(x, q), lambda r, x, q: zeta_deriv(1, x, q),
               lambda r, x, q: -x * zeta(x + 1.0, q),
               sympy=lambda sp, x, q: sp.zeta(x, q), domain=_PQ,
               samples=[sample(2.5, (), domain=_PQ),
                        sample(np.array([1.5, 2.0, 3.0, 4.5]), (2, 4), domain=_PQ),
                        sample((2, 4), (2, 4), domain=_PQ), sample((3, 1), (1, 4), domain=_PQ)])


def _reflected_dzeta(s):
    """ζ'(s) for s < −½ from ζ(s) = χ(s) ζ(1 − s)."""
    half_pi_s = (0.5 * np.pi) * s
    sin_, cos_ = sin(half_pi_s), cos(half_pi_s)
    scale = exp(s * _LOG_2PI - _LOG_PI + gammaln(1.0 - s))         # (2π)ˢ Γ(1−s)/π
    dchi = (_LOG_2PI - digamma(1.0 - s)) * sin_ + (0.5 * np.pi) * cos_
    return scale * (dchi * riemann_zeta(1.0 - s) - sin_ * zeta_deriv(1, 1.0 - s, 1.0))


def _driemann(ans, x):
    right = x >= _EM_FROM
    return where(right, zeta_deriv(1, where(right, x, 2.0), 1.0),
                 _reflected_dzeta(where(right, -1.0, x)))


_PR = [(1.1, 6.0)]
riemann_zeta = declare(
    "riemann_zeta", lambda x: sc.zeta(x), _driemann, domain=_PR,
    samples=[sample((), domain=_PR), sample((2, 4), domain=_PR),
             sample((3,), domain=[(-0.45, 0.95)]), sample((2, 3), domain=[(-5.0, -0.55)])])

implements(sc._ufuncs._zeta)(zeta)
implements(sc._ufuncs._riemann_zeta)(riemann_zeta)
