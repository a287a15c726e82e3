"""Box-Cox transforms of scipy.special, differentiable in x and λ, any order.

With L = log x (boxcox) or log(1 + x) (boxcox1p) and y = λL:

    boxcox(x, λ)   = (x^λ − 1)/λ          (log x at λ = 0)
    boxcox1p(x, λ) = ((1+x)^λ − 1)/λ      (log(1+x) at λ = 0)
        ∂x = x^(λ−1), (1+x)^(λ−1)
        ∂λ = (x^λ log x)/λ − (x^λ − 1)/λ² = L²·g(y),   g(y) = (y eʸ − (eʸ − 1))/y²
    inv_boxcox(y, λ)   = (1 + λy)^(1/λ)    (eʸ at λ = 0): the x with boxcox(x, λ) = y
    inv_boxcox1p(y, λ) = (1 + λy)^(1/λ) − 1
        ∂y = x^(1−λ), (1+x)^(1−λ)          (x = the output: 1/∂x of the forward transform)
        ∂λ = −∂y · ∂λ boxcox(x, λ)         (implicit differentiation at the output)

g(y) = Σⱼ (j+1)/(j+2)!·yʲ = ½ + y/3 + y²/8 + … is entire; for |y| < 1 the rule
uses this series (21 terms, the first omitted < 10⁻¹⁹), so the limit λ → 0
(∂λ boxcox = (log x)²/2 at λ = 0) and every higher derivative there is exact
with no cancellation, as sinc at 0. For |y| ≥ 1 the closed form,
(λ·x^λ·log x − (x^λ − 1))/λ², written with ``xlogy``/``xlog1py`` so that at
x = 0 (x = −1 for boxcox1p) with λ > 0 it is the one-sided limit 1/λ². ∂x
is ``power(x, λ − 1)``: at x = 0 it is 0 (λ > 1), 1 (λ = 1) or +inf (λ < 1).
Outside the domain (x < 0, x < −1, 1 + λy < 0) SciPy's value and the
derivatives are nan; ``inv_boxcox1p`` at 1 + λy = 0 is −1 with ∂y = 0 (λ < 1).
"""
from __future__ import annotations

from math import factorial

import scipy.special as sc

from ..core.elementwise import exp, expm1, less, log, log1p, power, where
from ..core.complex_numbers import absolute
from .common import declare
from .log import xlog1py, xlogy
from ...core.primitive import implements

__all__ = ["boxcox", "boxcox1p", "inv_boxcox", "inv_boxcox1p"]

_G_SERIES = [(j + 1) / factorial(j + 2) for j in range(21)]


def _g_series(y):
    out = _G_SERIES[-1]
    for c in reversed(_G_SERIES[:-1]):
        out = out * y + c
    return out


def _dlmbda(x, lmbda, log_f, xlog_f, one):
    """∂λ (f(x)^λ − 1)/λ with log_f = log f and xlog_f(a, x) = a·log f(x) (0 at a = 0);
    ``one`` is the x where f(x) = 1 (a safe point for the unused branch)."""
    small = less(absolute(xlog_f(lmbda, x)), 1.0)
    # the series, at a safe x (L = 0) where it is not used
    L = log_f(where(small, x, one))
    series = L * L * _g_series(lmbda * L)
    # the closed form, at a safe λ (= 1) where it is not used
    lam = where(small, 1.0, lmbda)
    y = xlog_f(lam, x)
    closed = (lam * xlog_f(exp(y), x) - expm1(y)) / (lam * lam)
    return where(small, series, closed)


def _dlmbda_boxcox(x, lmbda):
    return _dlmbda(x, lmbda, log, xlogy, 1.0)


def _dlmbda_boxcox1p(x, lmbda):
    return _dlmbda(x, lmbda, log1p, xlog1py, 0.0)


_XL = [(0.2, 4.0), (-1.5, 1.5)]
_X1L = [(-0.5, 3.0), (-1.5, 1.5)]
_YL = [(-0.5, 1.5), (-0.6, 0.6)]

boxcox = declare(
    "boxcox", sc.boxcox, lambda a, x, lmbda: power(x, lmbda - 1.0),
    lambda a, x, lmbda: _dlmbda_boxcox(x, lmbda),
    sympy=lambda sp, x, lmbda: (x ** lmbda - 1) / lmbda, domain=_XL)
boxcox1p = declare(
    "boxcox1p", sc.boxcox1p, lambda a, x, lmbda: power(1.0 + x, lmbda - 1.0),
    lambda a, x, lmbda: _dlmbda_boxcox1p(x, lmbda),
    sympy=lambda sp, x, lmbda: ((1 + x) ** lmbda - 1) / lmbda, domain=_X1L)
inv_boxcox = declare(
    "inv_boxcox", sc.inv_boxcox, lambda a, y, lmbda: power(a, 1.0 - lmbda),
    lambda a, y, lmbda: -power(a, 1.0 - lmbda) * _dlmbda_boxcox(a, lmbda),
    sympy=lambda sp, y, lmbda: (1 + lmbda * y) ** (1 / lmbda), domain=_YL)
inv_boxcox1p = declare(
    "inv_boxcox1p", sc.inv_boxcox1p, lambda a, y, lmbda: power(1.0 + a, 1.0 - lmbda),
    lambda a, y, lmbda: -power(1.0 + a, 1.0 - lmbda) * _dlmbda_boxcox1p(a, lmbda),
    sympy=lambda sp, y, lmbda: (1 + lmbda * y) ** (1 / lmbda) - 1, domain=_YL)

implements(sc.boxcox)(boxcox)
implements(sc.boxcox1p)(boxcox1p)
implements(sc.inv_boxcox)(inv_boxcox)
implements(sc.inv_boxcox1p)(inv_boxcox1p)
