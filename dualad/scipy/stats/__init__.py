"""``dualad.scipy.stats``: SciPy's distributions with derivatives in both modes, any order.

Namespaces mirror SciPy's (``dualad.scipy.stats.norm.logpdf(x, loc, scale)``),
composed from registry primitives, so gradients, JVPs, Hessians and
batched sweeps work as for any NumPy code:

    norm, t, cauchy, logistic, laplace, expon, uniform, gamma, chi2, beta
        logpdf, pdf, cdf, logcdf, sf, logsf, ppf, isf
    poisson               logpmf, pmf, cdf, logcdf, sf, logsf   (in mu)
    multivariate_normal   logpdf, pdf                           (in x, mean, cov)
    dirichlet             logpdf, pdf                           (in x, alpha)

Calling a distribution freezes its parameters, as in SciPy (:mod:`._frozen`):
``norm(loc, scale).logpdf(x)``, ``t(df, loc, scale).cdf(x)``, ``poisson(mu).pmf(k)``,
``multivariate_normal(mean, cov).logpdf(x)``, ``dirichlet(alpha).mean()``, differentiable
in the frozen parameters and the argument; ``rvs`` samples with SciPy (plain parameters).
The continuous families, poisson and dirichlet also have mean, var, std and entropy
(:mod:`._moments`; poisson's entropy is SciPy's value, plain mu only).

What is differentiable, the conventions outside the support and for invalid
parameters, and what raises: the docstrings of :mod:`.continuous`,
:mod:`.discrete`, :mod:`.multivariate` and ``docs/special.md``.
"""
from .continuous import (beta, cauchy, chi2, expon, gamma, laplace, logistic,  # noqa: F401
                         norm, t, uniform)
from .discrete import poisson  # noqa: F401
from .multivariate import dirichlet, multivariate_normal  # noqa: F401

__all__ = [
    "beta", "cauchy", "chi2", "expon", "gamma", "laplace", "logistic", "norm", "t",
    "uniform", "poisson", "dirichlet", "multivariate_normal"
]
