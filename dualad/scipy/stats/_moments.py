"""Mean, variance and entropy of the standard (loc = 0, scale = 1) continuous families.

Each entry maps the shape parameters to (m₀, v₀, h₀); then, as in SciPy,

    mean = loc + scale·m₀     var = scale²·v₀     std = √var     entropy = h₀ + log scale

All are compositions of registry primitives (ψ is ``digamma``), so they differentiate
in loc, scale and the shapes, any order. Where SciPy's moment is infinite or undefined
(t with df ≤ 2, cauchy) the value is inf or nan, a constant (derivative 0).

    norm      0, 1, ½ log(2πe)
    t(ν)      0 (ν > 1), ν/(ν−2) (ν > 2; inf for 1 < ν ≤ 2),
              (ν+1)/2·(ψ((ν+1)/2) − ψ(ν/2)) + ½ log ν + log B(ν/2, ½)
    cauchy    nan, nan, log 4π          logistic  0, π²/3, 2
    laplace   0, 2, 1 + log 2           expon     1, 1, 1          uniform   ½, 1/12, 0
    gamma(a)  a, a, a + log Γ(a) + (1 − a) ψ(a)
    chi2(k)   k, 2k, k/2 + log 2 + log Γ(k/2) + (1 − k/2) ψ(k/2)
    beta(a,b) a/(a+b), ab/((a+b)²(a+b+1)),
              log B(a,b) − (a−1)ψ(a) − (b−1)ψ(b) + (a+b−2)ψ(a+b)
"""
from __future__ import annotations

import numpy as np

from ...ops.core.elementwise import log, where
from ...ops.special.gamma import betaln, digamma, gammaln
from ...core.tracer import primal_value

__all__ = ["STANDARD_MOMENTS"]

_LOG2 = np.log(2.0)


def _t(df):
    dfp = np.asarray(primal_value(df))
    d2 = where(dfp > 2, df, 3.0)
    mean = where(dfp > 1, 0.0 * df, np.nan)
    var = where(dfp > 2, d2 / (d2 - 2.0), np.where(dfp > 1, np.inf, np.nan))
    h = (0.5 * (df + 1.0) * (digamma(0.5 * (df + 1.0)) - digamma(0.5 * df))
         + 0.5 * log(df) + betaln(0.5 * df, 0.5))
    return mean, var, h


def _gamma(a):
    return a, a, a + gammaln(a) + (1.0 - a) * digamma(a)


def _chi2(df):
    k = 0.5 * df
    return df, 2.0 * df, k + _LOG2 + gammaln(k) + (1.0 - k) * digamma(k)


def _beta(a, b):
    s = a + b
    return (a / s, a * b / (s * s * (s + 1.0)),
            betaln(a, b) - (a - 1.0) * digamma(a) - (b - 1.0) * digamma(b)
            + (s - 2.0) * digamma(s))


STANDARD_MOMENTS = {
    "norm": lambda: (0.0, 1.0, 0.5 * np.log(2.0 * np.pi * np.e)),
    "t": _t,
    "cauchy": lambda: (np.nan, np.nan, np.log(4.0 * np.pi)),
    "logistic": lambda: (0.0, np.pi ** 2 / 3.0, 2.0),
    "laplace": lambda: (0.0, 2.0, 1.0 + _LOG2),
    "expon": lambda: (1.0, 1.0, 1.0),
    "uniform": lambda: (0.5, 1.0 / 12.0, 0.0),
    "gamma": _gamma,
    "chi2": _chi2,
    "beta": _beta,
}
