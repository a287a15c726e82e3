"""Continuous distributions: norm, t, cauchy, logistic, laplace, expon, uniform, gamma,
chi2, beta — standard densities of z = (x - loc)/scale and their distribution functions.

    norm      log φ(z) = -z²/2 - log√(2π)          Φ(z) = ndtr(z)
    t(df)     log Γ((ν+1)/2) - log Γ(ν/2) - ½log(νπ) - (ν+1)/2·log(1 + z²/ν)
                                                   stdtr(ν, z); ppf stdtrit(ν, q)
    cauchy    -log π - log(1 + z²)                 ½ + arctan(z)/π
    logistic  log σ(z) + log σ(-z)                 σ(z) = expit(z)
    laplace   -|z| - log 2                         ½e^(-|z|) (z < 0), 1 - ½e^(-|z|)
    expon     -z  (z ≥ 0)                          1 - e^(-z)
    uniform   0   (0 ≤ z ≤ 1)                      z
    gamma(a)  (a-1)·log z - z - log Γ(a)  (z ≥ 0)  P(a, z) = gammainc(a, z)
    chi2(df)  gamma(df/2) with scale 2             P(df/2, z/2)
    beta(a, b) (a-1)·log z + (b-1)·log(1-z) - log B(a, b)  (0 ≤ z ≤ 1)
                                                   I_z(a, b) = betainc(a, b, z)

Differentiable: x, loc, scale everywhere; the shape parameters (df, a, b)
wherever they appear in closed form — logpdf/pdf of t, gamma, chi2, beta —
and t's df in every method: stdtr and stdtrit are differentiable in ν (by
quadrature of the density's ν-derivatives, :mod:`dualad.ops.special.student`).
The distribution functions (cdf, sf, logcdf, logsf) and quantiles (ppf,
isf) of gamma, chi2 and beta go through gammainc(c), betainc(c) and their
inverses, whose derivatives in the shape parameters have no closed form: a
traced shape parameter there raises NotDifferentiableError. ``laplace`` at z = 0 uses
abs'(0) = 0 (the mean of the one-sided derivatives); ``log(1-z)`` and
``(a-1)·log z`` are ``xlog1py``/``xlogy``, so the densities at the ends of
their supports take SciPy's values (0, finite or inf by the shape).
"""
from __future__ import annotations

import numpy as np

from ...ops.core.elementwise import arctan, exp, expm1, log, log1p, tan, where
from ...ops.core.complex_numbers import absolute, sign
from ...ops.special.erf import log_ndtr, ndtr, ndtri
from ...ops.special.gamma import (betainc, betaincc, betaincinv, betaln, gammainc, gammaincc,
                                  gammainccinv, gammaincinv, gammaln)
from ...ops.special.student import stdtr, stdtrit
from ...ops.special.log import expit, log_expit, logit, xlog1py, xlogy
from ._base import Continuous, plain

__all__ = [
    "norm", "t", "cauchy", "logistic", "laplace", "expon", "uniform", "gamma", "chi2",
    "beta"
]

_LOG_SQRT_2PI = 0.5 * np.log(2.0 * np.pi)
_LOG_PI = np.log(np.pi)
_LOG2 = np.log(2.0)

norm = Continuous("norm", (), {
    "logpdf": lambda z: -0.5 * (z * z) - _LOG_SQRT_2PI,
    "cdf": ndtr, "sf": lambda z: ndtr(-z), "logcdf": log_ndtr, "logsf": lambda z: log_ndtr(-z),
    "ppf": ndtri, "isf": lambda q: -ndtri(q)},
    doc="The normal distribution N(loc, scale²).")


def _t_logpdf(z, df):
    return (gammaln(0.5 * (df + 1.0)) - gammaln(0.5 * df) - 0.5 * (log(df) + _LOG_PI)
            - 0.5 * (df + 1.0) * log1p(z * z / df))


def _t_ppf(q, df):
    """stdtrit(ν, q). SciPy's stdtrit(ν, 0) is +inf (scipy.stats corrects it to -inf): at
    q = 0 this takes -stdtrit(ν, 1 - q), whose value -inf and derivative +inf are right."""
    at0 = plain(q) == 0
    if not np.any(at0):
        return stdtrit(df, q)
    return where(at0, -stdtrit(df, 1.0 - where(at0, q, 0.5)), stdtrit(df, where(at0, 0.5, q)))


t = Continuous("t", ("df",), {
    "logpdf": _t_logpdf, "cdf": lambda z, df: stdtr(df, z), "sf": lambda z, df: stdtr(df, -z),
    "ppf": _t_ppf, "isf": lambda q, df: -_t_ppf(q, df)},
    shapes_ok=lambda df: df > 0, doc="Student's t distribution with df degrees of freedom.")

def _cauchy_ppf(q):
    """tan(π(q - ½)); at q = 0, 1 the float tan is ±1.6e16, so ±inf is added there (the
    derivative stays tan's, huge and positive, as the true one is infinite)."""
    qp = plain(q)
    ends = np.where(qp == 0, -np.inf, np.where(qp == 1, np.inf, 0.0))
    return tan(np.pi * (q - 0.5)) + ends


cauchy = Continuous("cauchy", (), {
    "logpdf": lambda z: -_LOG_PI - log1p(z * z),
    "cdf": lambda z: 0.5 + arctan(z) / np.pi, "sf": lambda z: 0.5 - arctan(z) / np.pi,
    "ppf": _cauchy_ppf, "isf": lambda q: -_cauchy_ppf(q)},
    doc="The Cauchy distribution.")

logistic = Continuous("logistic", (), {
    "logpdf": lambda z: log_expit(z) + log_expit(-z),
    "cdf": expit, "sf": lambda z: expit(-z), "logcdf": log_expit,
    "logsf": lambda z: log_expit(-z), "ppf": logit, "isf": lambda q: -logit(q)},
    doc="The logistic distribution.")


def _laplace_cdf(z):
    half_tail = 0.5 * exp(-absolute(z))
    return where(z < 0, half_tail, 1.0 - half_tail)


def _laplace_logcdf(z):
    return where(z < 0, -_LOG2 - absolute(z), log1p(-0.5 * exp(-absolute(z))))


def _laplace_ppf(q):
    return -sign(q - 0.5) * log1p(-2.0 * absolute(q - 0.5))


laplace = Continuous("laplace", (), {
    "logpdf": lambda z: -absolute(z) - _LOG2,
    "cdf": _laplace_cdf, "sf": lambda z: _laplace_cdf(-z), "logcdf": _laplace_logcdf,
    "logsf": lambda z: _laplace_logcdf(-z), "ppf": _laplace_ppf,
    "isf": lambda q: -_laplace_ppf(q)},
    doc="The Laplace (double exponential) distribution.")

expon = Continuous("expon", (), {
    "logpdf": lambda z: -z, "cdf": lambda z: -expm1(-z), "sf": lambda z: exp(-z),
    "logcdf": lambda z: log(-expm1(-z)), "logsf": lambda z: -z,
    "ppf": lambda q: -log1p(-q), "isf": lambda q: -log(q)},
    support=(0.0, np.inf), safe_z=1.0, doc="The exponential distribution.")

uniform = Continuous("uniform", (), {
    "logpdf": lambda z: 0.0 * z, "cdf": lambda z: z, "sf": lambda z: 1.0 - z,
    "logcdf": log, "logsf": lambda z: log1p(-z), "ppf": lambda q: q, "isf": lambda q: 1.0 - q},
    support=(0.0, 1.0), safe_z=0.5, doc="The uniform distribution on [loc, loc + scale].")


def _gamma_logpdf(z, a):
    return xlogy(a - 1.0, z) - z - gammaln(a)


gamma = Continuous("gamma", ("a",), {
    "logpdf": _gamma_logpdf,
    "cdf": lambda z, a: gammainc(a, z), "sf": lambda z, a: gammaincc(a, z),
    "ppf": lambda q, a: gammaincinv(a, q), "isf": lambda q, a: gammainccinv(a, q)},
    support=(0.0, np.inf), safe_z=1.0, shapes_ok=lambda a: a > 0,
    doc="The gamma distribution with shape a.")

chi2 = Continuous("chi2", ("df",), {
    "logpdf": lambda z, df: _gamma_logpdf(0.5 * z, 0.5 * df) - _LOG2,
    "cdf": lambda z, df: gammainc(0.5 * df, 0.5 * z),
    "sf": lambda z, df: gammaincc(0.5 * df, 0.5 * z),
    "ppf": lambda q, df: 2.0 * gammaincinv(0.5 * df, q),
    "isf": lambda q, df: 2.0 * gammainccinv(0.5 * df, q)},
    support=(0.0, np.inf), safe_z=1.0, shapes_ok=lambda df: df > 0,
    doc="The chi-squared distribution with df degrees of freedom.")

beta = Continuous("beta", ("a", "b"), {
    "logpdf": lambda z, a, b: xlogy(a - 1.0, z) + xlog1py(b - 1.0, -z) - betaln(a, b),
    "cdf": lambda z, a, b: betainc(a, b, z), "sf": lambda z, a, b: betaincc(a, b, z),
    "ppf": lambda q, a, b: betaincinv(a, b, q),
    "isf": lambda q, a, b: betaincinv(a, b, 1.0 - q)},
    support=(0.0, 1.0), safe_z=0.5, shapes_ok=lambda a, b: (a > 0) & (b > 0),
    doc="The beta distribution with shapes a, b.")
