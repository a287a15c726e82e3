"""Frozen distributions: ``norm(loc, scale)``, ``t(df, loc, scale)``, ``poisson(mu)``...

Calling a distribution with its parameters freezes them, as in SciPy; each method of the
frozen object calls the unfrozen one with those parameters, so it is differentiable in
the (traced) frozen parameters and in its own argument exactly as the unfrozen method is:

    norm(mu, sigma).logpdf(x) ≡ norm.logpdf(x, mu, sigma)

``rvs`` draws samples with SciPy's own frozen distribution; it needs plain parameters
(a traced one raises NotDifferentiableError: samples are drawn, not differentiated).
"""
from __future__ import annotations

import scipy.stats

from ...ops.special.common import plain_param

__all__ = ["FrozenDistribution"]

_METHODS = ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf", "logpmf", "pmf",
            "mean", "var", "std", "entropy", "median")


class FrozenDistribution:
    """``dist(*args, **kwds)``: ``dist``'s methods with the parameters bound.

    Attributes as SciPy's frozen distributions: ``dist`` (the unfrozen one), ``args``,
    ``kwds``. Methods: those of ``dist`` among logpdf, pdf, cdf, logcdf, sf, logsf, ppf,
    isf, logpmf, pmf (one argument), mean, var, std, entropy, median (none), and rvs.
    """

    def __init__(self, dist, args, kwds):
        self.dist, self.args, self.kwds = dist, tuple(args), dict(kwds)

    def __repr__(self):
        return f"<frozen dualad.scipy.stats.{self.dist.name}>"

    def __getattr__(self, name):
        if name.startswith("__") or name in ("dist", "args", "kwds"):
            raise AttributeError(name)   # copy/pickle probe before __init__ ran
        if name in _METHODS and hasattr(self.dist, name):
            method = getattr(self.dist, name)
            if name in ("mean", "var", "std", "entropy", "median"):
                return lambda: method(*self.args, **self.kwds)
            return lambda x: method(x, *self.args, **self.kwds)
        raise AttributeError(f"frozen {self.dist.name} has no method {name!r} in "
                             f"dualad.scipy.stats (it has: "
                             f"{', '.join(m for m in _METHODS if hasattr(self.dist, m))}, rvs)")

    def rvs(self, size=None, random_state=None):
        """Samples from SciPy's frozen distribution (plain parameters only)."""
        name = f"{self.dist.name}.rvs"
        why = "samples are drawn, not differentiated"
        args = [plain_param(name, f"argument {i}", a, why) for i, a in enumerate(self.args)]
        kwds = {k: plain_param(name, k, v, why) for k, v in self.kwds.items()}
        return getattr(scipy.stats, self.dist.name)(*args, **kwds).rvs(
            size=size, random_state=random_state)
