"""Student's t distribution function and its inverse, differentiable in both arguments.

With f(t; ν) the t density, log f = log Γ((ν+1)/2) − log Γ(ν/2) − ½ log(νπ)
− (ν+1)/2 · log(1 + t²/ν), and F(ν, t) = ∫_{−∞}^t f(s; ν) ds:

    stdtr(ν, t)        = F(ν, t)        ∂t = f(t; ν)        ∂ν = D₁(ν, t)
    stdtrit(ν, p)      = t: F(ν, t) = p ∂p = 1/f(t; ν)      ∂ν = −D₁(ν, t)/f(t; ν)
    stdtr_ddf(n, ν, t) = Dₙ = ∂ⁿF/∂νⁿ   ∂t = ∂ⁿf/∂νⁿ(t; ν)  ∂ν = Dₙ₊₁(ν, t)

``stdtrit``'s rules are implicit differentiation of F(ν, t) = p at its own
output t. The ν-derivatives of the density are closed forms,
∂ⁿf/∂νⁿ = f·Yₙ with Y₀ = 1, Yₙ = Σⱼ C(n−1, j) ℓⱼ₊₁ Yₙ₋₁₋ⱼ (complete Bell
polynomials of ℓₖ = ∂ᵏ log f/∂νᵏ):

    ℓ₁ = ½(ψ((ν+1)/2) − ψ(ν/2)) + ½(t² − 1)·u − ½ log(1 + t²/ν),   u = 1/(ν + t²)
    ℓₖ = 2⁻ᵏ(ψ⁽ᵏ⁻¹⁾((ν+1)/2) − ψ⁽ᵏ⁻¹⁾(ν/2)) + ½(−1)ᵏ(k−2)! ν¹⁻ᵏ
         + (−1)ᵏ(k−1)! (ν+1)/2 · uᵏ − (−1)ᵏ (k/2)(k−2)! uᵏ⁻¹            (k ≥ 2)

all written with registry primitives, so every order works in both arguments.
The ν-derivatives of F have no closed form: since F(ν, 0) = ½ for every ν,
Dₙ(ν, t) = ∫₀ᵗ ∂ⁿf/∂νⁿ(s; ν) ds (n ≥ 1), odd in t, which ``stdtr_ddf``
evaluates by quadrature. With s = √ν sinh w, f(s; ν) ds = C(ν) cosh⁻ᵛ(w) dw
(C = Γ((ν+1)/2)/(√π Γ(ν/2))) and the integrand is analytic in the strip
|Im w| < π/2, so composite Gauss–Legendre on panels of width ≤ 2 (20 nodes
each) is exact to rounding. Far out (ν·W > 2 or W > 20, W = asinh(|t|/√ν))
the integral is taken as −∫_W^∞ instead (the whole integral over (0, ∞) is
0), by Gauss–Laguerre in z = ν(w − W): the integrand is e⁻ᶻ times a
polynomial of degree n in z times factors within e^(−2W) of 1. So Dₙ keeps
its relative accuracy in the tails, where it is small and ∂ν of ``stdtrit``
divides it by the small density. At t = ±∞, Dₙ = 0 (F is 0 or 1 for every ν);
ν ≤ 0 gives nan, as SciPy's values.
"""
from __future__ import annotations

from math import comb, factorial

import numpy as np
import scipy.special as sc

from ...core.tracer import Box
from ...core.primitive import sample, implements
from ..core.elementwise import exp, log, log1p
from .common import SQRT_PI, declare
from .gamma import digamma, gammaln, polygamma

__all__ = ["density_dnu", "stdtr_ddf", "stdtr", "stdtrit"]

_LOG2 = float(np.log(2.0))
_LOG_SQRT_PI = float(np.log(SQRT_PI))
_GL_X, _GL_W = np.polynomial.legendre.leggauss(20)
_LAG_Z, _LAG_W = np.polynomial.laguerre.laggauss(40)
_PANEL = 2.0


# --- the density and its ν-derivatives, with registry primitives ---------------------------
def _log_density(df, t):
    """log f(t; ν). A plain ν gives plain constants (a float32 t keeps a float32 tangent)."""
    if not isinstance(df, Box):
        df = np.asarray(df, dtype=float)
        log_c = sc.gammaln((df + 1.0) / 2.0) - sc.gammaln(df / 2.0) - 0.5 * np.log(df) \
            - _LOG_SQRT_PI
        if df.ndim == 0:
            df, log_c = float(df), float(log_c)
        return log_c - (df + 1.0) / 2.0 * log1p(t * t / df)
    return (gammaln(0.5 * (df + 1.0)) - gammaln(0.5 * df) - 0.5 * log(df) - _LOG_SQRT_PI
            - 0.5 * (df + 1.0) * log1p(t * t / df))


def _ell_const(k, df):
    """The part of ℓₖ = ∂ᵏ log f/∂νᵏ that does not depend on t."""
    h1, h0 = 0.5 * (df + 1.0), 0.5 * df
    if k == 1:
        return 0.5 * (digamma(h1) - digamma(h0))
    sgn = (-1.0) ** k
    return 0.5 ** k * (polygamma(k - 1, h1) - polygamma(k - 1, h0)) + \
        (0.5 * sgn * factorial(k - 2)) * df ** (1.0 - k)


def _ell_var(k, df, lr, u, v):
    """The rest of ℓₖ, from lr = log(1 + t²/ν), u = 1/(ν + t²) and v = (t² − 1)·u
    (½ − (ν+1)/2·u = ½v, without the cancellation)."""
    if k == 1:
        return 0.5 * (v - lr)
    h1 = 0.5 * (df + 1.0)
    sgn = (-1.0) ** k
    return (sgn * factorial(k - 1)) * h1 * u ** k - (sgn * 0.5 * k * factorial(k - 2)) * \
        u ** (k - 1)


def _bell(n, ells):
    """Yₙ from ells = [ℓ₁, ..., ℓₙ]: ∂ⁿ e^L = e^L·Yₙ."""
    ys = [1.0]
    for m in range(1, n + 1):
        terms = [comb(m - 1, j) * ells[j] * ys[m - 1 - j] for j in range(m)]
        total = terms[0]
        for term in terms[1:]:
            total = total + term
        ys.append(total)
    return ys[n]


def density_dnu(n, df, t):
    """∂ⁿf/∂νⁿ (t; ν), n = 0, 1, 2, ... (a Python int), with registry primitives."""
    f = exp(_log_density(df, t))
    if n == 0:
        return f
    t2 = t * t
    lr, u = log1p(t2 / df), 1.0 / (df + t2)
    v = (t2 - 1.0) * u
    return f * _bell(n, [_ell_const(k, df) + _ell_var(k, df, lr, u, v)
                         for k in range(1, n + 1)])


# --- Dₙ(ν, t) = ∂ⁿF/∂νⁿ by quadrature (plain NumPy) -------------------------------------------
def _integrand(n, nu, w, extra=0.0):
    """C(ν) cosh⁻ᵛ(w)·Yₙ, the integrand in w, times e^extra; nu has a trailing unit axis."""
    e = np.exp(-2.0 * w)
    lc = w + np.log1p(e) - _LOG2                     # log cosh w
    sech2 = 4.0 * e / (1.0 + e) ** 2
    log_c = sc.gammaln(0.5 * (nu + 1.0)) - sc.gammaln(0.5 * nu) - _LOG_SQRT_PI
    u = sech2 / nu                                   # 1/(ν + t²) at t = √ν sinh w
    v = (1.0 - sech2) - u                            # (t² − 1)·u = tanh² w − sech² w/ν
    ells = [_ell_const(k, nu) + _ell_var(k, nu, 2.0 * lc, u, v) for k in range(1, n + 1)]
    return np.exp(log_c - nu * lc + extra) * _bell(n, ells)


def _head(n, nu, W):
    """∫₀^W in w: composite Gauss–Legendre, panels of width ≤ 2."""
    panels = max(1, int(np.ceil(np.max(W, initial=0.0) / _PANEL)))
    offsets = (np.arange(panels)[:, None] + 0.5 * (_GL_X + 1.0)[None, :]).ravel() / panels
    weights = np.tile(0.5 * _GL_W, panels) / panels
    w = W[:, None] * offsets[None, :]
    return W * np.sum(_integrand(n, nu[:, None], w) * weights, axis=1)


def _tail(n, nu, W):
    """∫_W^∞ in w: Gauss–Laguerre in z = ν(w − W)."""
    z = _LAG_Z[None, :]
    g = _integrand(n, nu[:, None], W[:, None] + z / nu[:, None], extra=z)
    return np.sum(g * _LAG_W, axis=1) / nu     # ∫₀^∞ g dz = Σ wᵢ e^{zᵢ} g(zᵢ)


def _order(name, n):
    n_arr = np.asarray(n)
    if n_arr.ndim or n_arr.dtype.kind not in "iuf" or n_arr != np.round(n_arr) or n_arr < 1:
        raise ValueError(f"{name}: the order n must be a positive integer (a scalar), got "
                         f"{n!r} (shape {n_arr.shape})")
    return int(n_arr)


def _stdtr_ddf_impl(n, df, t):
    n = _order("stdtr_ddf", n)
    dtype = np.result_type(df, t, np.float32)
    nu, tt = np.broadcast_arrays(np.asarray(df, dtype=float), np.asarray(t, dtype=float))
    shape = nu.shape
    nu, tt = nu.ravel(), tt.ravel()
    out = np.full(nu.shape, np.nan)
    with np.errstate(all="ignore"):
        W = np.arcsinh(np.abs(tt) / np.sqrt(nu))
        ok = (nu > 0) & np.isfinite(W)
        far = ok & ((nu * W > 2.0) | (W > 20.0))
        near = ok & ~far
        if np.any(near):
            out[near] = _head(n, nu[near], W[near])
        if np.any(far):
            out[far] = -_tail(n, nu[far], W[far])
        out = np.sign(tt) * out
        out[(nu > 0) & np.isinf(tt)] = 0.0
    return out.reshape(shape).astype(dtype, copy=False)[()]


_PT = [(0.7, 6.0), (-3.0, 3.0)]
_PN = [None, (0.7, 6.0), (-3.0, 3.0)]
stdtr_ddf = declare(
    "stdtr_ddf", _stdtr_ddf_impl, None,
    lambda r, n, df, t: stdtr_ddf(n + 1, df, t),
    lambda r, n, df, t: density_dnu(_order("stdtr_ddf", n), df, t),
    domain=_PN, orders={0: ("n", "the order of the derivative, an integer")},
    samples=[sample(1, (), (), domain=_PN), sample(1, (2, 4), (2, 4), domain=_PN),
             sample(2, (3, 1), (1, 4), domain=_PN)])
stdtr_ddf.__doc__ = "∂ⁿ stdtr(ν, t)/∂νⁿ (n ≥ 1), by quadrature of ∂ⁿf/∂νⁿ over (0, t)."

stdtr = declare("stdtr", sc.stdtr, lambda r, df, t: stdtr_ddf(1, df, t),
                lambda r, df, t: density_dnu(0, df, t), domain=_PT,
                samples=[sample((), (), domain=_PT), sample((2, 4), (2, 4), domain=_PT),
                         sample(np.array([1.0, 2.5, 4.0, 30.0]), (2, 4), domain=_PT),
                         sample((3, 1), (1, 4), domain=_PT)])
_PP = [(0.7, 6.0), (0.05, 0.95)]
stdtrit = declare(
    "stdtrit", sc.stdtrit,
    lambda r, df, p: -stdtr_ddf(1, df, r) * exp(-_log_density(df, r)),
    lambda r, df, p: exp(-_log_density(df, r)), domain=_PP,
    samples=[sample((), (), domain=_PP), sample((2, 4), (2, 4), domain=_PP),
             sample(np.array([1.0, 2.5, 4.0, 30.0]), (2, 4), domain=_PP),
             sample((3, 1), (1, 4), domain=_PP)])

implements(sc.stdtr)(stdtr)
implements(sc.stdtrit)(stdtrit)
