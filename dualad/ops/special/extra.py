"""Owen's T, the dilogarithm (spence) and Lambert's W, both modes, any order.

    owens_t(h, a) = 1/(2π) ∫₀ᵃ e^(−h²(1+x²)/2)/(1+x²) dx
        ∂h = −φ(h)·erf(a·h/√2)/2                    φ = the standard normal density
        ∂a = e^(−h²(1+a²)/2) / (2π(1+a²))
    spence(z)     = ∫₁ᶻ log t/(1 − t) dt = Li₂(1 − z)    (SciPy's dilogarithm)
        spence'   = log z/(1 − z),   spence'(1) = −1
    lambertw(z, k, tol) = W_k(z), the branch k of the inverse of w·eʷ
        W'        = W/(z(1 + W)) = e^(−W)/(1 + W),   W'(0) = 1 (k = 0)

``spence``'s derivative near z = 1 (|z − 1| < 0.05) is its Taylor series
−Σ (1 − z)ᵏ/(k+1) (20 terms), so the removable singularity of log z/(1 − z)
is exact at every order (spence'(1) = −1, spence''(1) = 1/2, as sinc at 0);
elsewhere the closed form. spence'(0) = −inf; for real z < 0 SciPy's value is
nan, and so is the derivative.

``lambertw`` and ``spence`` are holomorphic and take complex arguments (SciPy's
principal branches: W_k's cut is (−∞, −1/e] for k = 0 and (−∞, 0] otherwise,
Li₂(1 − z)'s is z ∈ (−∞, 0]), with the codebase's complex convention
(docs/complex.md, JAX's): ṫ·f'(z) forward, ū·f'(z) backward. ``lambertw`` is
complex-valued even for real z (SciPy's dtype); a real z gets a complex
tangent and, in reverse mode, the real part of its cotangent. Its derivative
e^(−W)/(1 + W) is written in W alone, so z = 0 needs no care (W₀'(0) = 1) and
only the branch point z = −1/e (W = −1) is singular. On a cut the derivative is
that of the branch SciPy's value lies on. The branch k and the tolerance are
parameters (a traced value raises).
"""
from __future__ import annotations

import numpy as np
import scipy.special as sc

from ...core.primitive import sample, implements
from ..core.elementwise import exp, less, log, where
from ..core.complex_numbers import absolute
from .common import SQRT_2PI, declare
from .erf import erf

__all__ = ["owens_t", "spence", "lambertw"]

_SQRT1_2 = float(np.sqrt(0.5))

owens_t = declare(
    "owens_t", sc.owens_t,
    lambda r, h, a: (-0.5 / SQRT_2PI) * exp(-0.5 * (h * h)) * erf(_SQRT1_2 * (a * h)),
    lambda r, h, a: exp(-0.5 * (h * h) * (1.0 + a * a)) / ((2.0 * np.pi) * (1.0 + a * a)),
    domain=[(-3.0, 3.0), (-3.0, 3.0)])

# --- spence ------------------------------------------------------------------------------
_RIGHT = ((0.3, 2.0), (-1.5, 1.5))     # clear of the cuts along the negative real axis
_SPENCE_NEAR = 0.05
_SPENCE_TAYLOR = [-1.0 / (k + 1) for k in range(20)]    # spence'(z) = Σ cₖ (1 − z)ᵏ


def _dspence(ans, z):
    u = 1.0 - z
    near = less(absolute(u), _SPENCE_NEAR)
    zs = where(near, 2.0, z)          # a safe point: the unused branch stays finite
    series = _SPENCE_TAYLOR[-1]
    for c in reversed(_SPENCE_TAYLOR[:-1]):
        series = series * u + c
    return where(near, series, log(zs) / (1.0 - zs))


def _spence_sympy(sp, z):
    t = sp.Dummy("t", positive=True)
    return sp.Integral(sp.log(t) / (1 - t), (t, 1, z))


_PZ = [(0.2, 3.0)]
_NEAR_ONE = ((0.97, 1.03), (-0.03, 0.03))
spence = declare(
    "spence", sc.spence, _dspence, sympy=_spence_sympy, domain=_PZ, complex_domain=[_RIGHT],
    samples=[sample((), domain=_PZ), sample((2, 4), domain=_PZ),
             sample((1, 7), domain=[(0.96, 1.04)]),             # the series around z = 1
             {**sample((2, 3)), "complex_domain": [_RIGHT]},
             {**sample((3,)), "complex_domain": [_NEAR_ONE]}])

# --- Lambert W ---------------------------------------------------------------------------
_K = ("k", "the branch index, an integer")
_TOL = ("tol", "the solver's tolerance")


def _lambertw_impl(z, k, tol):
    return sc.lambertw(z, k, tol)


_PW = [(-0.3, 3.0), None, None]
_KS = np.array([[0], [1], [-1]])
lambertw = declare(
    "lambertw", _lambertw_impl, lambda w, z, k, tol: exp(-w) / (1.0 + w), None, None,
    sympy=lambda sp, z, k, tol: sp.LambertW(z, k), domain=_PW, orders={1: _K, 2: _TOL},
    complex_domain=[_RIGHT, None, None],
    samples=[sample((2, 4), 0, 1e-8, domain=_PW),
             {**sample((3, 4), _KS, 1e-8), "complex_domain": [_RIGHT, None, None]},
             {**sample((), 2, 1e-8), "complex_domain": [((-2.0, -0.5), (0.2, 1.5)), None,
                                                         None]}])

implements(sc.owens_t)(owens_t)
implements(sc.spence)(spence)
implements(sc._ufuncs._lambertw)(lambertw)
