"""Multivariate normal and Dirichlet densities, differentiable in every argument.

multivariate_normal, with r = x - mean and Σ = L Lᵀ (Cholesky):

    logpdf(x; mean, cov) = -½ (d·log 2π + log det Σ + rᵀ Σ⁻¹ r)
    entropy(mean, cov)   = ½ (d·(1 + log 2π) + log det Σ)      ∂cov = ½ Σ⁻¹
    log det Σ = 2 Σᵢ log Lᵢᵢ,     rᵀ Σ⁻¹ r = |L⁻¹ r|²   (one triangular solve)
    ∂x = -Σ⁻¹ r,   ∂mean = Σ⁻¹ r,   ∂cov = ½ (Σ⁻¹ r rᵀ Σ⁻¹ - Σ⁻¹)   (symmetric)

``cov`` is read as the symmetric matrix (cov + covᵀ)/2, so its gradient is
the symmetric one above (SciPy reads a symmetric matrix; a perturbation of one
off-diagonal entry alone moves both halves by half of it). A scalar cov is
cov·I, a vector the diagonal. Shapes as SciPy: x is (..., d) (a 1-D x is one
point, or n points when d = 1) and the result is squeezed. Σ must be positive
definite; a singular Σ (``allow_singular=True`` in SciPy) is not supported.

``dirichlet.rvs`` draws samples with SciPy and, as in HIPS autograd, has no
derivative (a traced alpha raises).

dirichlet, on the simplex Σₖ xₖ = 1 (components along axis 0 of x, as SciPy;
with K-1 components given the last is 1 - Σ, and differentiated through):

    logpdf(x; α) = log Γ(Σα) - Σ log Γ(αₖ) + Σ (αₖ - 1) log xₖ
    ∂α_k = ψ(Σα) - ψ(αₖ) + log xₖ,     ∂x_k = (αₖ - 1)/xₖ

The x-gradient is that of the formula in ambient coordinates (each xₖ free),
as SciPy evaluates it. Inputs off the simplex raise SciPy's ValueErrors.
"""
from __future__ import annotations

import numpy as np
import scipy.stats

from ...ops.core.elementwise import exp, log
from ...ops.core.products import diag, diagonal
from ...ops.linalg.basic import cholesky, solve_triangular
from ...ops.core.reductions import sum as sum_
from ...ops.core.shape import concatenate, expand_dims, reshape, squeeze, transpose
from ...ops.special.gamma import digamma, gammaln
from ...ops.special.common import plain_param
from ...ops.special.log import xlogy
from ...core.tracer import shape_of
from ._base import plain

__all__ = ["multivariate_normal", "dirichlet"]

_LOG_2PI = np.log(2.0 * np.pi)


def _squeeze_output(out):
    shape = shape_of(out)
    if 1 in shape:
        out = squeeze(out)
    return out


class _MultivariateNormal:
    """``dualad.scipy.stats.multivariate_normal``: logpdf and pdf in x, mean and cov;
    entropy in cov."""

    def __repr__(self):
        return "<dualad.scipy.stats.multivariate_normal>"

    @staticmethod
    def _dim(mean, cov):
        if mean is not None and np.ndim(plain(mean)) > 0:
            return shape_of(mean)[-1]
        cs = shape_of(cov)
        return cs[0] if len(cs) > 0 else 1

    def _cov_factor(self, method, mean, cov):
        """(d, mean as a d-vector, lower Cholesky factor of (cov + covᵀ)/2)."""
        d = self._dim(mean, cov)
        cs = shape_of(cov)
        if len(cs) == 0:
            cov = cov * np.eye(d)
        elif len(cs) == 1:
            cov = diag(cov)
        if shape_of(cov) != (d, d):
            raise ValueError(f"multivariate_normal.{method}: cov of shape {cs} does not match "
                             f"the dimension {d} of mean (shape {shape_of(mean)})")
        if mean is None:
            mean = np.zeros(d)
        elif shape_of(mean) == ():
            mean = mean * np.ones(d)
        sym = 0.5 * (cov + transpose(cov))
        try:
            L = cholesky(sym)
        except np.linalg.LinAlgError as e:
            raise ValueError(f"multivariate_normal.{method}: cov (shape {(d, d)}) is not "
                             f"positive definite; singular covariances (SciPy's "
                             f"allow_singular=True) are not differentiable here") from e
        return d, mean, L

    def __call__(self, mean=None, cov=1, allow_singular=False, seed=None):
        """The frozen ``multivariate_normal(mean, cov)``, as SciPy's."""
        self._cov_factor("__call__", mean, cov)
        return _FrozenMultivariateNormal(self, mean, cov, allow_singular, seed)

    def logpdf(self, x, mean=None, cov=1, allow_singular=False):
        """-½ (d log 2π + log det Σ + (x-μ)ᵀ Σ⁻¹ (x-μ)), over the last axis of x."""
        d, mean, L = self._cov_factor("logpdf", mean, cov)
        xs = shape_of(x)
        if len(xs) == 0:
            x = reshape(x, (1,))
        elif len(xs) == 1:
            x = reshape(x, (xs[0], 1) if d == 1 else (1, xs[0]))
        if shape_of(x)[-1] != d:
            raise ValueError(f"multivariate_normal.logpdf: x of shape {xs} does not have the "
                             f"dimension {d} along its last axis")
        r = x - mean
        batch = shape_of(r)[:-1]
        cols = transpose(reshape(r, (-1, d)))                     # (d, n)
        z = solve_triangular(L, cols, lower=True)                 # L⁻¹ r
        maha = reshape(sum_(z * z, axis=0), batch)
        logdet = 2.0 * sum_(log(diagonal(L)))
        return _squeeze_output(-0.5 * (d * _LOG_2PI + logdet + maha))

    def pdf(self, x, mean=None, cov=1, allow_singular=False):
        return exp(self.logpdf(x, mean, cov, allow_singular))

    def entropy(self, mean=None, cov=1):
        """½ (d (1 + log 2π) + log det Σ) = Σᵢ log Lᵢᵢ + d (1 + log 2π)/2, differentiable
        in cov: ∂cov = ½ Σ⁻¹ (symmetric; the mean does not enter)."""
        d, _, L = self._cov_factor("entropy", mean, cov)
        return 0.5 * d * (1.0 + _LOG_2PI) + sum_(log(diagonal(L)))


class _Dirichlet:
    """``dualad.scipy.stats.dirichlet``: logpdf and pdf in x and alpha."""

    def __repr__(self):
        return "<dualad.scipy.stats.dirichlet>"

    @staticmethod
    def _check(x, alpha):
        a = plain(alpha)
        if a.ndim != 1:
            raise ValueError(f"dirichlet: parameter vector 'alpha' must be one dimensional, "
                             f"but alpha.shape = {a.shape}")
        if np.min(a) <= 0:
            raise ValueError("dirichlet: all parameters alpha must be greater than 0")
        xs = shape_of(x)
        if len(xs) == 0 or xs[0] not in (a.shape[0], a.shape[0] - 1):
            raise ValueError(f"dirichlet: vector 'x' must have either the same number of "
                             f"entries as, or one entry fewer than, parameter vector 'alpha', "
                             f"but alpha.shape = {a.shape} and x.shape = {xs}")
        if len(xs) > 2:
            raise ValueError(f"dirichlet: x must be one or two dimensional, got shape {xs}")
        if xs[0] != a.shape[0]:
            last = 1.0 - sum_(x, axis=0, keepdims=True)
            x = concatenate([x, last], axis=0)
        xp = plain(x)
        if np.min(xp) < 0:
            raise ValueError("dirichlet: each entry in 'x' must be greater than or equal to zero")
        if np.max(xp) > 1:
            raise ValueError("dirichlet: each entry in 'x' must be smaller or equal one")
        a_b = a.reshape(a.shape + (1,) * (xp.ndim - 1))
        if np.any((xp == 0) & (a_b < 1)):
            raise ValueError("dirichlet: each entry in 'x' must be greater than zero if its "
                             "alpha is less than one")
        if np.any(np.abs(np.sum(xp, axis=0) - 1.0) > 10e-10):
            raise ValueError(f"dirichlet: the input vector 'x' must lie within the normal "
                             f"simplex, but np.sum(x, 0) = {np.sum(xp, axis=0)}")
        return x

    def __call__(self, alpha, seed=None):
        """The frozen ``dirichlet(alpha)``, as SciPy's."""
        self._alpha("__call__", alpha)
        return _FrozenDirichlet(self, alpha, seed)

    @staticmethod
    def _alpha(method, alpha):
        a = plain(alpha)
        if a.ndim != 1 or a.size == 0 or np.min(a) <= 0:
            raise ValueError(f"dirichlet.{method}: alpha must be a non-empty 1-D array of "
                             f"positive numbers, got shape {a.shape}")
        return alpha

    def mean(self, alpha):
        """α/α₀, α₀ = Σα."""
        alpha = self._alpha("mean", alpha)
        return alpha / sum_(alpha)

    def var(self, alpha):
        """α(α₀ − α)/(α₀²(α₀ + 1))."""
        alpha = self._alpha("var", alpha)
        a0 = sum_(alpha)
        return alpha * (a0 - alpha) / (a0 * a0 * (a0 + 1.0))

    def entropy(self, alpha):
        """log B(α) + (α₀ − K)ψ(α₀) − Σ(αⱼ − 1)ψ(αⱼ)."""
        alpha = self._alpha("entropy", alpha)
        a0, K = sum_(alpha), shape_of(alpha)[0]
        return (sum_(gammaln(alpha)) - gammaln(a0) + (a0 - K) * digamma(a0)
                - sum_((alpha - 1.0) * digamma(alpha)))

    def logpdf(self, x, alpha):
        """log Γ(Σα) - Σ log Γ(αₖ) + Σₖ (αₖ - 1) log xₖ, summed over axis 0 of x."""
        x = self._check(x, alpha)
        extra = len(shape_of(x)) - 1
        alpha_b = expand_dims(alpha, tuple(range(1, 1 + extra))) if extra else alpha
        log_b = sum_(gammaln(alpha)) - gammaln(sum_(alpha))
        out = sum_(xlogy(alpha_b - 1.0, x), axis=0) - log_b
        return _squeeze_output(out)

    def pdf(self, x, alpha):
        return exp(self.logpdf(x, alpha))

    def rvs(self, alpha, size=1, random_state=None):
        """``scipy.stats.dirichlet.rvs``: samples, as in HIPS autograd not differentiable
        (a traced alpha raises NotDifferentiableError)."""
        alpha = plain_param("dirichlet.rvs", "alpha", alpha,
                            "samples are drawn, not differentiated")
        return scipy.stats.dirichlet.rvs(alpha, size=size, random_state=random_state)


class _FrozenMultivariateNormal:
    """``multivariate_normal(mean, cov)``: ``mean``, ``cov`` attributes; logpdf, pdf,
    entropy differentiable in the frozen mean and cov; rvs by SciPy (plain only)."""

    def __init__(self, dist, mean, cov, allow_singular, seed):
        self.dist, self._allow, self._seed = dist, allow_singular, seed
        d, self.mean, _ = dist._cov_factor("__call__", mean, cov)
        cs = shape_of(cov)
        self.cov = cov * np.eye(d) if len(cs) == 0 else diag(cov) if len(cs) == 1 else cov
        self.dim = d

    def logpdf(self, x):
        return self.dist.logpdf(x, self.mean, self.cov, self._allow)

    def pdf(self, x):
        return self.dist.pdf(x, self.mean, self.cov, self._allow)

    def entropy(self):
        return self.dist.entropy(self.mean, self.cov)

    def rvs(self, size=1, random_state=None):
        why = "samples are drawn, not differentiated"
        mean = plain_param("multivariate_normal.rvs", "mean", self.mean, why)
        cov = plain_param("multivariate_normal.rvs", "cov", self.cov, why)
        return scipy.stats.multivariate_normal(mean, cov, self._allow, self._seed).rvs(
            size=size, random_state=random_state)


class _FrozenDirichlet:
    """``dirichlet(alpha)``: logpdf, pdf, mean, var, entropy in the frozen alpha; rvs."""

    def __init__(self, dist, alpha, seed):
        self.dist, self.alpha, self._seed = dist, alpha, seed

    def logpdf(self, x):
        return self.dist.logpdf(x, self.alpha)

    def pdf(self, x):
        return self.dist.pdf(x, self.alpha)

    def mean(self):
        return self.dist.mean(self.alpha)

    def var(self):
        return self.dist.var(self.alpha)

    def entropy(self):
        return self.dist.entropy(self.alpha)

    def rvs(self, size=1, random_state=None):
        return self.dist.rvs(self.alpha, size=size,
                             random_state=self._seed if random_state is None else random_state)


multivariate_normal = _MultivariateNormal()
dirichlet = _Dirichlet()
