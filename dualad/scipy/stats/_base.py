"""Location-scale families from a standard density: the machinery behind ``norm.logpdf``...

A distribution is declared by functions of the standardized variable
z = (x - loc) / scale and its shape parameters (``logpdf0(z, *shapes)``,
``cdf0``, ``sf0``, ...); then, as in SciPy,

    logpdf(x) = logpdf0(z) - log(scale)     cdf(x) = cdf0(z)     ppf(q) = loc + scale·ppf0(q)

All are compositions of registry primitives, so every argument that enters
the formulas (x, loc, scale and shape parameters that appear in closed form)
is differentiable in both modes to any order. SciPy's conventions for values:
outside the support logpdf is -inf (pdf 0), cdf is 0 below and 1 above, and
invalid parameters (scale <= 0, a shape out of range) give nan. Those
branches are constants, so their derivatives are 0; the formula is evaluated
there at a safe point (``where``'s safe pattern), so no nan or inf from the
unselected branch leaks into the derivatives of valid elements. At a finite
end of the support the derivative is the one-sided one from inside.
"""
from __future__ import annotations

import numpy as np

from ...ops.core.elementwise import exp, log, sqrt, where
from ...core.tracer import primal_value
from ._frozen import FrozenDistribution
from ._moments import STANDARD_MOMENTS

__all__ = ["plain", "safe", "nan_unless", "parse", "Continuous"]

_OUTSIDE = {  # method: (value below the support, value above it)
    "logpdf": (-np.inf, -np.inf), "cdf": (0.0, 1.0), "sf": (1.0, 0.0),
    "logcdf": (-np.inf, 0.0), "logsf": (0.0, -np.inf),
}


def plain(x):
    """The value under every trace, as an array (for masks and checks, never for values)."""
    return np.asarray(primal_value(x))


def safe(x, ok, fill):
    """``x`` where ``ok`` (a plain mask), ``fill`` elsewhere; ``x`` itself if all ok."""
    return x if np.all(ok) else where(ok, x, fill)


def nan_unless(value, ok):
    return value if np.all(ok) else where(ok, value, np.nan)


def parse(dist, method, args, kwargs, shape_names, loc_scale=True):
    """SciPy's calling convention: shapes, then loc and scale, positional or by name."""
    names = tuple(shape_names) + (("loc", "scale") if loc_scale else ())
    if len(args) > len(names):
        raise TypeError(f"{dist}.{method}: takes at most {len(names) + 1} arguments "
                        f"(x, {', '.join(names)}), got {len(args) + 1}")
    vals = dict(zip(names, args))
    for k, v in kwargs.items():
        if k not in names:
            raise TypeError(f"{dist}.{method}: unexpected keyword argument {k!r} "
                            f"(parameters: {', '.join(names)})")
        if k in vals:
            raise TypeError(f"{dist}.{method}: got multiple values for argument {k!r}")
        vals[k] = v
    missing = [k for k in shape_names if k not in vals]
    if missing:
        raise TypeError(f"{dist}.{method}: missing shape parameter(s) {', '.join(missing)}")
    return [vals[k] for k in shape_names], vals.get("loc", 0.0), vals.get("scale", 1.0)


def _undefined(moment):
    """A moment that is nan for every parameter (cauchy's mean and variance)."""
    return isinstance(moment, float) and np.isnan(moment)


def _nan_like(loc, scale):
    """nan of the parameters' broadcast shape: a constant, so its derivative is 0."""
    return np.full(np.broadcast_shapes(np.shape(plain(loc)), np.shape(plain(scale))), np.nan)[()]


class Continuous:
    """A location-scale family ``name(x, *shapes, loc=0, scale=1)`` in SciPy's shape.

    ``standard`` maps method names (logpdf, cdf, sf, logcdf, logsf, ppf, isf) to
    functions of (z, *shapes); ``support`` is (lo, hi) for z; ``shapes_ok`` the
    plain validity mask of the shape parameters; ``safe_shapes`` their safe values.
    """

    def __init__(self, name, shape_names, standard, support=(-np.inf, np.inf), safe_z=0.0,
                 shapes_ok=None, safe_shapes=None, doc=""):
        self.name = name
        self.shape_names = tuple(shape_names)
        self.standard = dict(standard)
        if "cdf" in self.standard:
            self.standard.setdefault("logcdf", lambda z, *s, f=self.standard["cdf"]: log(f(z, *s)))
        if "sf" in self.standard:
            self.standard.setdefault("logsf", lambda z, *s, f=self.standard["sf"]: log(f(z, *s)))
        self.support = support
        self.safe_z = safe_z
        self.shapes_ok = shapes_ok
        self.safe_shapes = safe_shapes or (1.0,) * len(self.shape_names)
        self.__doc__ = doc
        for method in ("logpdf", "cdf", "sf", "logcdf", "logsf", "ppf", "isf"):
            if method not in self.standard:
                setattr(self, method, self._missing(method))

    def __repr__(self):
        return f"<dualad.scipy.stats.{self.name}>"

    def __call__(self, *args, **kwargs):
        """The frozen distribution ``name(*shapes, loc=0, scale=1)``, as SciPy's."""
        parse(self.name, "__call__", args, kwargs, self.shape_names)
        return FrozenDistribution(self, args, kwargs)

    def _moments(self, method, args, kwargs):
        shapes, loc, scale, ok = self._setup(method, args, kwargs)
        with np.errstate(divide="ignore", invalid="ignore"):
            m0, v0, h0 = STANDARD_MOMENTS[self.name](*shapes)
        return loc, scale, ok, m0, v0, h0

    def mean(self, *args, **kwargs):
        """loc + scale·m₀(shapes) (see :mod:`._moments`)."""
        loc, scale, ok, m0, _, _ = self._moments("mean", args, kwargs)
        if _undefined(m0):
            return _nan_like(loc, scale)
        return nan_unless(loc + scale * m0, ok)

    def var(self, *args, **kwargs):
        """scale²·v₀(shapes)."""
        loc, scale, ok, _, v0, _ = self._moments("var", args, kwargs)
        if _undefined(v0):
            return _nan_like(loc, scale)
        return nan_unless(scale * scale * v0 + 0.0 * loc, ok)

    def std(self, *args, **kwargs):
        with np.errstate(invalid="ignore"):
            return sqrt(self.var(*args, **kwargs))

    def entropy(self, *args, **kwargs):
        """h₀(shapes) + log scale (differential entropy, nats)."""
        loc, scale, ok, _, _, h0 = self._moments("entropy", args, kwargs)
        return nan_unless(h0 + log(scale) + 0.0 * loc, ok)

    def median(self, *args, **kwargs):
        return self.ppf(0.5, *args, **kwargs)

    def _missing(self, method):
        def call(*args, **kwargs):
            raise NotImplementedError(f"{self.name}.{method} is not provided by "
                                      f"dualad.scipy.stats (see docs/special.md)")
        return call

    def _setup(self, method, args, kwargs):
        shapes, loc, scale = parse(self.name, method, args, kwargs, self.shape_names)
        ok = plain(scale) > 0
        safe_shapes = shapes
        if self.shapes_ok is not None:
            shape_ok = self.shapes_ok(*[plain(s) for s in shapes])
            safe_shapes = [safe(s, shape_ok, f) for s, f in zip(shapes, self.safe_shapes)]
            ok = ok & shape_ok
        return safe_shapes, loc, safe(scale, plain(scale) > 0, 1.0), ok

    def _at(self, method, x, args, kwargs):
        with np.errstate(divide="ignore", invalid="ignore"):  # log 0 = -inf, as SciPy: silent
            return self._at_support(method, x, args, kwargs)

    def _at_support(self, method, x, args, kwargs):
        shapes, loc, scale, ok = self._setup(method, args, kwargs)
        z = (x - loc) / scale
        zp = plain(z)
        lo, hi = self.support
        below, above = zp < lo, zp > hi
        inside = ~(below | above)
        value = self.standard[method](safe(z, inside, self.safe_z), *shapes)
        if method == "logpdf":
            value = value - log(scale)
        if not np.all(inside):
            out_lo, out_hi = _OUTSIDE[method]
            value = where(below, out_lo, where(above, out_hi, value))
        return nan_unless(value, ok)

    def logpdf(self, x, *args, **kwargs):
        return self._at("logpdf", x, args, kwargs)

    def pdf(self, x, *args, **kwargs):
        return exp(self.logpdf(x, *args, **kwargs))

    def cdf(self, x, *args, **kwargs):
        return self._at("cdf", x, args, kwargs)

    def sf(self, x, *args, **kwargs):
        return self._at("sf", x, args, kwargs)

    def logcdf(self, x, *args, **kwargs):
        return self._at("logcdf", x, args, kwargs)

    def logsf(self, x, *args, **kwargs):
        return self._at("logsf", x, args, kwargs)

    def _quantile(self, method, q, args, kwargs):
        shapes, loc, scale, ok = self._setup(method, args, kwargs)
        qp = plain(q)
        q_ok = (qp >= 0) & (qp <= 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            value = loc + scale * self.standard[method](safe(q, q_ok, 0.5), *shapes)
        return nan_unless(value, ok & q_ok)

    def ppf(self, q, *args, **kwargs):
        return self._quantile("ppf", q, args, kwargs)

    def isf(self, q, *args, **kwargs):
        return self._quantile("isf", q, args, kwargs)
