"""The Poisson distribution, differentiable in its mean mu.

    logpmf(k; mu) = k·log mu - mu - log k!     ∂mu = k/mu - 1
    cdf(k; mu)    = Q(⌊k⌋ + 1, mu)             ∂mu = -pmf(⌊k⌋; mu)     (gammaincc)
    sf(k; mu)     = P(⌊k⌋ + 1, mu)             ∂mu =  pmf(⌊k⌋; mu)     (gammainc)

with j = k - loc. The count k and the shift loc are not differentiable
(a traced one raises); SciPy's values elsewhere: logpmf is -inf at a
non-integer or negative j, cdf is 0 (sf 1) for j < 0, and mu < 0 gives nan.
``k·log mu`` is ``xlogy``, so at mu = 0 the pmf is 1 at j = 0 and its
derivative there is -1 (the one-sided derivative of e^(-mu)).
"""
from __future__ import annotations

import numpy as np
import scipy.special as sc
import scipy.stats

from ...ops.core.elementwise import exp, log, sqrt, where
from ...ops.special.common import plain_param
from ...ops.special.gamma import gammainc, gammaincc
from ...ops.special.log import xlogy
from ._base import nan_unless, plain, safe
from ._frozen import FrozenDistribution

__all__ = ["poisson"]


class _Poisson:
    """``dualad.scipy.stats.poisson``: logpmf, pmf, cdf, logcdf, sf, logsf (k, mu, loc=0)."""

    name = "poisson"

    def __repr__(self):
        return "<dualad.scipy.stats.poisson>"

    def __call__(self, *args, **kwargs):
        """The frozen distribution ``poisson(mu, loc=0)``, as SciPy's."""
        self._parse("__call__", args, kwargs)
        return FrozenDistribution(self, args, kwargs)

    def mean(self, *args, **kwargs):
        """mu + loc (differentiable in mu)."""
        mu, loc = self._parse("mean", args, kwargs)
        loc = plain_param("poisson.mean", "loc", loc, "a count shift, not differentiable")
        return nan_unless(mu + loc, plain(mu) >= 0)

    def var(self, *args, **kwargs):
        """mu."""
        mu, _ = self._parse("var", args, kwargs)
        return nan_unless(mu + 0.0, plain(mu) >= 0)

    def std(self, *args, **kwargs):
        with np.errstate(invalid="ignore"):
            return sqrt(self.var(*args, **kwargs))

    def entropy(self, *args, **kwargs):
        """SciPy's value (a series with no closed form here): plain mu only."""
        mu, loc = self._parse("entropy", args, kwargs)
        mu = plain_param("poisson.entropy", "mu", mu, "SciPy sums a series; no rule here")
        return scipy.stats.poisson.entropy(mu, plain_param("poisson.entropy", "loc", loc, ""))

    def _setup(self, method, k, args, kwargs):
        mu, loc = self._parse(method, args, kwargs)
        why = "a count, not a differentiable variable"
        k = plain_param(f"poisson.{method}", "k", k, why)
        loc = plain_param(f"poisson.{method}", "loc", loc, why)
        j = np.asarray(k, dtype=float) - np.asarray(loc, dtype=float)
        ok = plain(mu) >= 0
        return j, safe(mu, ok, 1.0), ok

    @staticmethod
    def _parse(method, args, kwargs):
        """SciPy's ``(k, mu, loc=0)``, positional or by name."""
        if len(args) > 2:
            raise TypeError(f"poisson.{method}: takes (k, mu, loc=0), got {len(args) + 1} "
                            f"arguments")
        vals = dict(zip(("mu", "loc"), args))
        for key, v in kwargs.items():
            if key not in ("mu", "loc") or key in vals:
                raise TypeError(f"poisson.{method}: unexpected or repeated argument {key!r}")
            vals[key] = v
        if "mu" not in vals:
            raise TypeError(f"poisson.{method}: missing shape parameter mu")
        return vals["mu"], vals.get("loc", 0.0)

    def logpmf(self, k, *args, **kwargs):
        j, mu, ok = self._setup("logpmf", k, args, kwargs)
        valid = (j >= 0) & (j == np.floor(j))
        js = np.where(valid, j, 0.0)
        value = xlogy(js, mu) - mu - sc.gammaln(js + 1.0)
        return nan_unless(value if np.all(valid) else where(valid, value, -np.inf), ok)

    def pmf(self, k, *args, **kwargs):
        return exp(self.logpmf(k, *args, **kwargs))

    def _tail(self, method, k, args, kwargs, upper):
        j, mu, ok = self._setup(method, k, args, kwargs)
        below = j < 0
        a = np.floor(np.where(below, 0.0, j)) + 1.0
        value = gammaincc(a, mu) if upper else gammainc(a, mu)
        if np.any(below):
            value = where(below, 0.0 if upper else 1.0, value)
        return nan_unless(value, ok)

    def cdf(self, k, *args, **kwargs):
        return self._tail("cdf", k, args, kwargs, upper=True)

    def sf(self, k, *args, **kwargs):
        return self._tail("sf", k, args, kwargs, upper=False)

    def logcdf(self, k, *args, **kwargs):
        with np.errstate(divide="ignore"):   # log 0 = -inf below the support, as SciPy
            return log(self.cdf(k, *args, **kwargs))

    def logsf(self, k, *args, **kwargs):
        with np.errstate(divide="ignore"):
            return log(self.sf(k, *args, **kwargs))


poisson = _Poisson()
