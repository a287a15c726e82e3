"""Gamma, beta and zeta functions of scipy.special, both modes, any order.

    gammaln(x)   = log|Γ(x)|       gammaln'  = ψ(x)                 (digamma)
    loggamma(x)  = log Γ(x)        loggamma' = ψ(x)                 (real x > 0)
    digamma(x)   = ψ(x)            ψ'        = ψ⁽¹⁾(x)              (polygamma(1, x))
    polygamma(n, x) = ψ⁽ⁿ⁾(x)      ∂x        = ψ⁽ⁿ⁺¹⁾(x)            (n: integer order)
    gamma(x)     = Γ(x)            Γ'        = Γ(x) ψ(x)
    rgamma(x)    = 1/Γ(x)          rgamma'   = -ψ(x)/Γ(x)
    gammasgn(x)  = sign Γ(x)       zero derivative
    beta(a, b)   = B(a, b)         ∂a        = B(a, b)(ψ(a) - ψ(a+b))
    betaln(a, b) = log|B(a, b)|    ∂a        = ψ(a) - ψ(a+b)        (∂b symmetric)
    gammainc(a, x)  = P(a, x)      ∂x        = xᵃ⁻¹ e⁻ˣ / Γ(a)      (a: parameter)
    gammaincc(a, x) = Q(a, x)      ∂x        = -xᵃ⁻¹ e⁻ˣ / Γ(a)
    gammaincinv(a, y) = P⁻¹        ∂y        = 1 / ∂xP(a, x)        at x = P⁻¹(a, y)
    gammainccinv(a, y) = Q⁻¹       ∂y        = 1 / ∂xQ(a, x)
    betainc(a, b, x) = I_x(a, b)   ∂x        = xᵃ⁻¹(1-x)ᵇ⁻¹ / B(a, b)  (a, b: parameters)
    betaincc(a, b, x) = 1 - I_x    ∂x        = -xᵃ⁻¹(1-x)ᵇ⁻¹ / B(a, b)
    betaincinv(a, b, y)            ∂y        = 1 / ∂xI at x = I⁻¹(a, b, y)

(Student's t distribution function ``stdtr`` and its inverse are in
:mod:`.student`; Riemann's and Hurwitz's zeta in :mod:`.zeta`.)

Every derivative is itself written with these primitives (ψ' = polygamma(1, ·),
∂x polygamma(n, x) = polygamma(n + 1, x), ...), so every order works.

Parameters that are not differentiable, because the derivative has no closed
form in SciPy's terms: the order ``n`` of polygamma (an integer), the shape
``a`` of the incomplete gamma functions and ``a``, ``b`` of the incomplete
beta functions. A traced value there raises
:class:`~dualad.ops.special.common.NotDifferentiableError`.

Poles and conventions: Γ has poles at x = 0, -1, -2, …; there ``gamma`` is
nan (±inf at 0) and ψ is nan (-inf at 0), so the derivatives of gamma,
gammaln, digamma and polygamma are nan or inf there. ``rgamma`` is entire and
0 at those points, but its derivative rule -ψ/Γ is nan there (the true value
is (-1)ⁿ n! at x = -n): a documented nan, never a finite wrong number.
``gammaln`` is log|Γ|, so its derivative ψ(x) also holds for negative
non-integer x; ``loggamma`` of a negative real is nan (as SciPy). The
incomplete functions' ∂x uses ``xlogy(a-1, x)`` so that at x = 0 it is 0
(a > 1), e⁻⁰/Γ(1) = 1 (a = 1) or +inf (a < 1), as the one-sided limit.
"""
from __future__ import annotations

import numpy as np
import scipy.special as sc

from ..core.elementwise import exp, zero_derivative
from .common import declare, sp_fn
from .log import xlog1py, xlogy
from ...core.primitive import sample, implements

__all__ = [
    "gammaln", "loggamma", "digamma", "polygamma", "gamma", "rgamma", "gammasgn", "beta",
    "betaln", "gammainc", "gammaincc", "gammaincinv", "gammainccinv", "betainc", "betaincc",
    "betaincinv"
]

_X = [(0.2, 4.0)]


def _polygamma_impl(n, x):
    n_arr = np.asarray(n)
    if n_arr.dtype.kind not in "iuf" or np.any(n_arr < 0) or np.any(n_arr != np.floor(n_arr)):
        raise ValueError(f"polygamma: the order n must be a non-negative integer, got "
                         f"{n!r} (shape {n_arr.shape})")
    return sc.polygamma(n, x)


gammaln = declare("gammaln", sc.gammaln, lambda a, x: digamma(x), sympy=sp_fn("loggamma"),
                  domain=_X)
loggamma = declare("loggamma", sc.loggamma, lambda a, x: digamma(x), sympy=sp_fn("loggamma"),
                   domain=_X)
digamma = declare("digamma", sc.digamma, lambda a, x: polygamma(1, x), sympy=sp_fn("digamma"),
                  domain=_X)
polygamma = declare(
    "polygamma", _polygamma_impl, None, lambda a, n, x: polygamma(n + 1, x),
    sympy=lambda sp, n, x: sp.polygamma(n, x), domain=[None, (0.5, 4.0)],
    orders={0: ("n", "the order of the derivative, an integer")},
    samples=[sample(1, (), domain=[None, (0.5, 4.0)]),
             sample(np.array([0, 1, 2, 3]), (2, 4), domain=[None, (0.5, 4.0)]),
             sample(np.array([[0], [2]]), (1, 7), domain=[None, (0.5, 4.0)])])
gamma = declare("gamma", sc.gamma, lambda a, x: a * digamma(x), sympy=sp_fn("gamma"), domain=_X)
rgamma = declare("rgamma", sc.rgamma, lambda a, x: -a * digamma(x),
                 sympy=lambda sp, x: 1 / sp.gamma(x), domain=_X)
gammasgn = zero_derivative("gammasgn", sc.gammasgn, sympy=lambda sp, x: sp.sign(sp.gamma(x)))

beta = declare("beta", sc.beta, lambda r, a, b: r * (digamma(a) - digamma(a + b)),
               lambda r, a, b: r * (digamma(b) - digamma(a + b)), sympy=sp_fn("beta"),
               domain=[(0.2, 4.0), (0.2, 4.0)])
betaln = declare("betaln", sc.betaln, lambda r, a, b: digamma(a) - digamma(a + b),
                 lambda r, a, b: digamma(b) - digamma(a + b),
                 sympy=lambda sp, a, b: sp.loggamma(a) + sp.loggamma(b) - sp.loggamma(a + b),
                 domain=[(0.2, 4.0), (0.2, 4.0)])


# --- incomplete gamma and beta functions: differentiable in x, parameters a (b) -------
def _dgammainc(a, x):
    """∂P(a, x)/∂x = xᵃ⁻¹ e⁻ˣ / Γ(a), as exp(xlogy(a-1, x) - x - log Γ(a))."""
    return exp(xlogy(a - 1.0, x) - x - sc.gammaln(a))


def _dbetainc(a, b, x):
    """∂I_x(a, b)/∂x = xᵃ⁻¹ (1-x)ᵇ⁻¹ / B(a, b)."""
    return exp(xlogy(a - 1.0, x) + xlog1py(b - 1.0, -x) - sc.betaln(a, b))


_A = ("a", "the shape parameter; the derivative in it has no closed form")
_B = ("b", "the shape parameter; the derivative in it has no closed form")
_PX = [None, (0.2, 4.0)]
_GAMMA_SAMPLES = [sample(1.5, (), domain=_PX),
                  sample(np.array([0.5, 1.0, 2.5, 4.0]), (2, 4), domain=_PX),
                  sample(np.array([[0.7], [3.0]]), (1, 7), domain=_PX)]
_PY = [None, (0.1, 0.9)]
_GAMMAINV_SAMPLES = [sample(1.5, (), domain=_PY),
                     sample(np.array([0.5, 1.0, 2.5, 4.0]), (2, 4), domain=_PY)]

gammainc = declare("gammainc", sc.gammainc, None, lambda r, a, x: _dgammainc(a, x),
                   sympy=lambda sp, a, x: sp.lowergamma(a, x) / sp.gamma(a), domain=_PX,
                   orders={0: _A}, samples=_GAMMA_SAMPLES)
gammaincc = declare("gammaincc", sc.gammaincc, None, lambda r, a, x: -_dgammainc(a, x),
                    sympy=lambda sp, a, x: sp.uppergamma(a, x) / sp.gamma(a), domain=_PX,
                    orders={0: _A}, samples=_GAMMA_SAMPLES)
gammaincinv = declare("gammaincinv", sc.gammaincinv, None,
                      lambda r, a, y: 1.0 / _dgammainc(a, r), domain=_PY, orders={0: _A},
                      samples=_GAMMAINV_SAMPLES)
gammainccinv = declare("gammainccinv", sc.gammainccinv, None,
                       lambda r, a, y: -1.0 / _dgammainc(a, r), domain=_PY, orders={0: _A},
                       samples=_GAMMAINV_SAMPLES)

_PBX = [None, None, (0.05, 0.95)]
_BETA_SAMPLES = [sample(1.5, 2.5, (), domain=_PBX),
                 sample(np.array([0.5, 1.0, 2.5, 4.0]), 3.0, (2, 4), domain=_PBX),
                 sample(0.8, np.array([[0.7], [3.0]]), (1, 7), domain=_PBX)]
_BETA_INV_SAMPLES = [sample(1.5, 2.5, (), domain=_PBX),
                     sample(np.array([0.5, 1.0, 2.5, 4.0]), 3.0, (2, 4), domain=_PBX)]
betainc = declare("betainc", sc.betainc, None, None, lambda r, a, b, x: _dbetainc(a, b, x),
                  sympy=lambda sp, a, b, x: sp.betainc_regularized(a, b, 0, x), domain=_PBX,
                  orders={0: _A, 1: _B}, samples=_BETA_SAMPLES)
betaincc = declare("betaincc", sc.betaincc, None, None,
                   lambda r, a, b, x: -_dbetainc(a, b, x),
                   sympy=lambda sp, a, b, x: 1 - sp.betainc_regularized(a, b, 0, x),
                   domain=_PBX, orders={0: _A, 1: _B}, samples=_BETA_SAMPLES)
betaincinv = declare("betaincinv", sc.betaincinv, None, None,
                     lambda r, a, b, y: 1.0 / _dbetainc(a, b, r), domain=_PBX,
                     orders={0: _A, 1: _B}, samples=_BETA_INV_SAMPLES)

implements(sc.gammaln)(gammaln)
implements(sc.loggamma)(loggamma)
implements(sc.psi)(digamma)
implements(sc.gamma)(gamma)
implements(sc.rgamma)(rgamma)
implements(sc.gammasgn)(gammasgn)
implements(sc.beta)(beta)
implements(sc.betaln)(betaln)
implements(sc.gammainc)(gammainc)
implements(sc.gammaincc)(gammaincc)
implements(sc.gammaincinv)(gammaincinv)
implements(sc.gammainccinv)(gammainccinv)
implements(sc.betainc)(betainc)
implements(sc.betaincc)(betaincc)
implements(sc.betaincinv)(betaincinv)
