"""``dualad.scipy.spatial.distance``: ``cdist``, ``pdist``, ``squareform`` and the metrics
as single functions, differentiable in the points in both modes and to any order.

SciPy's own functions run compiled loops that never see a traced value; call these
instead (same names, same signatures). Each metric is written with registry operations
on the point differences ``d = u − v``:

    euclidean      ‖d‖₂ = √(Σ d²)                  sqeuclidean   Σ d²
    cityblock      Σ |d|                           chebyshev     max |d|
    minkowski      (Σ |d|ᵖ)^(1/p)   (p ≥ 1)        seuclidean    √(Σ d²/V)
    cosine         1 − u·v / (‖u‖ ‖v‖)             correlation   cosine of u − ū, v − v̄
    mahalanobis    √(dᵀ VI d)
    braycurtis     Σ |d| / Σ |u + v|               canberra      Σ |d| / (|u| + |v|)

Weights ``w`` (SciPy's ``w=``) multiply each coordinate's term as in SciPy.

Kinks (documented conventions, never a NaN from a finite distance):
- at a zero distance the root-type metrics (euclidean, minkowski, seuclidean,
  mahalanobis) have derivative 0 (a subgradient: the root is taken of a guarded
  argument, so no 0·∞ appears in either mode);
- ``|dᵢ|`` at dᵢ = 0 has derivative 0 (``abs``'s convention); ``chebyshev``'s ``max``
  splits ties evenly between the coordinates attaining it.
Cosine and correlation of a zero vector are NaN in value (0/0, as SciPy warns), and so
is their derivative. Canberra drops the 0/0 terms (coordinates both 0), as SciPy does.
"""
from __future__ import annotations

import numpy as np

from ...core.tracer import Box, ndim_of, primal_value, shape_of
from .._arrays import real_floats

__all__ = [
    "cdist", "pdist", "euclidean", "sqeuclidean", "cityblock", "chebyshev", "minkowski",
    "cosine", "correlation", "seuclidean", "mahalanobis", "braycurtis", "canberra",
    "squareform"
]

_METRICS = ("braycurtis", "canberra", "chebyshev", "cityblock", "correlation", "cosine",
            "dice", "euclidean", "hamming", "jaccard", "jensenshannon", "kulczynski1",
            "mahalanobis", "minkowski", "rogerstanimoto", "russellrao", "seuclidean",
            "sokalmichener", "sokalsneath", "sqeuclidean", "yule")
_ALIASES = {"euclid": "euclidean", "eu": "euclidean", "e": "euclidean", "sqe": "sqeuclidean",
            "sqeuclid": "sqeuclidean", "cblock": "cityblock", "manhattan": "cityblock",
            "cityblock": "cityblock", "taxicab": "cityblock", "cos": "cosine",
            "chebychev": "chebyshev", "cheby": "chebyshev", "cheb": "chebyshev",
            "ch": "chebyshev", "mi": "minkowski", "minkowski": "minkowski", "pnorm": "minkowski",
            "se": "seuclidean", "mahalanobis": "mahalanobis", "mahal": "mahalanobis",
            "mah": "mahalanobis", "corr": "correlation", "co": "correlation"}


def _root(s):
    """√s with derivative 0 where s = 0 (a subgradient): the root is taken of a guarded
    argument, so neither mode forms 0·∞."""
    pos = s > 0
    return np.where(pos, np.sqrt(np.where(pos, s, 1.0)), 0.0)


def _pow_root(s, p):
    pos = s > 0
    return np.where(pos, np.where(pos, s, 1.0) ** (1.0 / p), 0.0)


def _weighted(t, w):
    return t if w is None else t * w


def _pair_metric(name, u, v, p, w, V, VI):
    """The metric between rows u[..., n] and v[..., n] (broadcast), reduced over the last
    axis."""
    if name in ("euclidean", "sqeuclidean", "seuclidean"):
        d = u - v
        sq = d * d
        if name == "seuclidean":
            sq = sq / V
        s = np.sum(_weighted(sq, w), axis=-1)
        return s if name == "sqeuclidean" else _root(s)
    if name == "cityblock":
        return np.sum(_weighted(np.abs(u - v), w), axis=-1)
    if name == "chebyshev":
        a = np.abs(u - v)
        if w is not None:   # SciPy: the max over the coordinates with a positive weight
            a = np.where(primal_value(w) > 0, a, 0.0)
        return np.max(a, axis=-1)
    if name == "minkowski":
        a = np.abs(u - v)
        if p == np.inf:
            return _pair_metric("chebyshev", u, v, p, w, V, VI)
        if p == 1:
            return np.sum(_weighted(a, w), axis=-1)
        return _pow_root(np.sum(_weighted(a ** p, w), axis=-1), p)
    if name in ("cosine", "correlation"):
        if name == "correlation":
            if w is None:
                u = u - np.mean(u, axis=-1, keepdims=True)
                v = v - np.mean(v, axis=-1, keepdims=True)
            else:
                wn = w / np.sum(w)
                u = u - np.sum(u * wn, axis=-1, keepdims=True)
                v = v - np.sum(v * wn, axis=-1, keepdims=True)
        uv = np.sum(_weighted(u * v, w), axis=-1)
        uu = np.sum(_weighted(u * u, w), axis=-1)
        vv = np.sum(_weighted(v * v, w), axis=-1)
        return 1.0 - uv / np.sqrt(uu * vv)
    if name == "mahalanobis":
        d = u - v
        return _root(np.sum(np.matmul(d, VI) * d, axis=-1))
    if name == "braycurtis":
        return np.sum(_weighted(np.abs(u - v), w), axis=-1) / np.sum(
            _weighted(np.abs(u + v), w), axis=-1)
    if name == "canberra":      # SciPy drops the 0/0 terms (both coordinates 0)
        den = np.abs(u) + np.abs(v)
        pos = den > 0
        term = np.where(pos, np.abs(u - v) / np.where(pos, den, 1.0), 0.0)
        return np.sum(_weighted(term, w), axis=-1)
    raise AssertionError(name)   # _metric_name admits only the metrics above


_SUPPORTED = ("euclidean", "sqeuclidean", "seuclidean", "cityblock", "chebyshev", "minkowski",
              "cosine", "correlation", "mahalanobis", "braycurtis", "canberra")


def _metric_name(fname, metric):
    if callable(metric):
        raise NotImplementedError(
            f"{fname}: a callable metric is not supported here; write the loop yourself, e.g. "
            f"np.stack([metric(XA[i], XB[j]) ...]), which differentiates as written")
    if not isinstance(metric, str):
        raise TypeError(f"{fname}: metric must be a string or callable, got {metric!r}")
    name = _ALIASES.get(metric.lower(), metric.lower())
    if name not in _SUPPORTED:
        if name in _METRICS:
            raise NotImplementedError(f"{fname}: metric {metric!r} is not differentiable "
                                      f"(boolean, count or ratio metric); supported: "
                                      f"{', '.join(_SUPPORTED)}")
        raise ValueError(f"{fname}: unknown metric {metric!r}")
    return name


def _points(fname, arg, X):
    if not isinstance(X, Box):
        X = np.asarray(X)
    if ndim_of(X) != 2:
        raise ValueError(f"{fname}: {arg} must be a 2-dimensional array, got shape "
                         f"{shape_of(X)}")
    return real_floats(fname, arg, X)


def _options(fname, name, XA, XB, kwargs):
    p = kwargs.pop("p", 2.0 if name == "minkowski" else None)
    w = kwargs.pop("w", None)
    V = kwargs.pop("V", None)
    VI = kwargs.pop("VI", None)
    out = kwargs.pop("out", None)
    if out is not None:
        raise NotImplementedError(f"{fname}: out= cannot hold traced values; use the return "
                                  f"value")
    if kwargs:
        raise TypeError(f"{fname}: unexpected keyword arguments {sorted(kwargs)} for metric "
                        f"{name!r}")
    n = shape_of(XA)[1]
    if p is not None:
        if isinstance(p, Box):
            raise NotImplementedError(f"{fname}: p must be a plain number, not traced")
        p = float(p)
        if p <= 0:
            raise ValueError(f"{fname}: p must be greater than 0, got {p}")
        if p < 1 and name == "minkowski":
            raise NotImplementedError(f"{fname}: minkowski with p={p} < 1 is not a norm and "
                                      f"has infinite derivatives at ties; not supported")
    if w is not None:
        if ndim_of(w) != 1 or shape_of(w)[0] != n:
            raise ValueError(f"{fname}: weights w must have shape ({n},), got {shape_of(w)}")
        if np.any(primal_value(w) < 0):
            raise ValueError(f"{fname}: input weights w should be all non-negative")
    stacked = None
    if (name == "seuclidean" and V is None) or (name == "mahalanobis" and VI is None):
        stacked = XA if XB is None else np.concatenate([XA, XB], axis=0)
    if name == "seuclidean":
        if V is None:       # SciPy's default: the sample variance of the stacked points
            V = np.var(stacked, axis=0, ddof=1)
        if ndim_of(V) != 1 or shape_of(V)[0] != n:
            raise ValueError(f"{fname}: variance vector V must have shape ({n},), got "
                             f"{shape_of(V)}")
    if name == "mahalanobis":
        if VI is None:      # SciPy's default: the inverse of the stacked points' covariance
            m = shape_of(stacked)[0]
            if m <= n:
                raise ValueError(f"{fname}: the number of observations ({m}) is too small; "
                                 f"the covariance matrix is singular. For observations with "
                                 f"{n} dimensions, at least {n + 1} observations are required.")
            VI = np.linalg.inv(np.cov(np.transpose(stacked)))
        if shape_of(VI) != (n, n):
            raise ValueError(f"{fname}: VI must have shape ({n}, {n}), got {shape_of(VI)}")
    return p, w, V, VI


def cdist(XA, XB, metric="euclidean", *, out=None, **kwargs):
    """``scipy.spatial.distance.cdist``: the (mA, mB) matrix of distances between the rows
    of XA and XB, differentiable in XA, XB (and w, V, VI)."""
    name = _metric_name("cdist", metric)
    XA, XB = _points("cdist", "XA", XA), _points("cdist", "XB", XB)
    if shape_of(XA)[1] != shape_of(XB)[1]:
        raise ValueError(f"cdist: XA and XB must have the same number of columns (i.e. "
                         f"feature dimension), got shapes {shape_of(XA)} and {shape_of(XB)}")
    kwargs["out"] = out
    p, w, V, VI = _options("cdist", name, XA, XB, kwargs)
    if 0 in shape_of(XA)[:1] + shape_of(XB)[:1]:
        return np.zeros((shape_of(XA)[0], shape_of(XB)[0]))
    return _pair_metric(name, np.expand_dims(XA, 1), np.expand_dims(XB, 0), p, w, V, VI)


def pdist(X, metric="euclidean", *, out=None, **kwargs):
    """``scipy.spatial.distance.pdist``: the condensed distances d(X[i], X[j]) for i < j,
    in SciPy's order, differentiable in X (and w, V, VI)."""
    name = _metric_name("pdist", metric)
    X = _points("pdist", "X", X)
    kwargs["out"] = out
    p, w, V, VI = _options("pdist", name, X, None, kwargs)
    m = shape_of(X)[0]
    i, j = np.triu_indices(m, 1)
    if i.size == 0:
        return np.zeros(0)
    return _pair_metric(name, X[i], X[j], p, w, V, VI)


def _metric_fn(name):
    def metric(u, v, *args, **kwargs):
        for a in (u, v):
            if ndim_of(a) != 1:
                raise ValueError(f"{name}: input vector should be 1-D, got shape {shape_of(a)}")
        X = np.stack([u, v]) if isinstance(u, Box) or isinstance(v, Box) else \
            np.stack([np.asarray(u, float), np.asarray(v, float)])
        keys = {"minkowski": ("p", "w"), "seuclidean": ("V",), "mahalanobis": ("VI",)}.get(
            name, ("w",))
        kw = dict(zip(keys, args))
        kw.update(kwargs)
        if name == "seuclidean" and kw.get("V") is None:
            raise TypeError("seuclidean: missing required argument V")
        if name == "mahalanobis" and kw.get("VI") is None:
            raise TypeError("mahalanobis: missing required argument VI")
        return pdist(X, name, **kw)[0]
    metric.__name__ = metric.__qualname__ = name
    metric.__doc__ = f"``scipy.spatial.distance.{name}(u, v, ...)``, differentiable in u and v."
    return metric


euclidean = _metric_fn("euclidean")
sqeuclidean = _metric_fn("sqeuclidean")
cityblock = _metric_fn("cityblock")
chebyshev = _metric_fn("chebyshev")
minkowski = _metric_fn("minkowski")
cosine = _metric_fn("cosine")
correlation = _metric_fn("correlation")
seuclidean = _metric_fn("seuclidean")
mahalanobis = _metric_fn("mahalanobis")
braycurtis = _metric_fn("braycurtis")
canberra = _metric_fn("canberra")


def squareform(X, force="no", checks=True):
    """``scipy.spatial.distance.squareform``: condensed vector ↔ symmetric square matrix
    with a zero diagonal. Both directions are gathers, so differentiable (the matrix → vector
    direction reads the upper triangle only, as SciPy does)."""
    nd = ndim_of(X)
    if force.lower() == "tomatrix" and nd != 1:
        raise ValueError("squareform: forcing 'tomatrix' but input X is not a distance vector")
    if force.lower() == "tovector" and nd != 2:
        raise ValueError("squareform: forcing 'tovector' but input X is not a distance matrix")
    if not isinstance(X, Box):
        X = np.asarray(X)
    if nd == 1:
        s = shape_of(X)[0]
        if s == 0:
            return np.zeros((1, 1), dtype=np.result_type(primal_value(X)))
        d = int(np.ceil(np.sqrt(s * 2)))
        if d * (d - 1) != s * 2:
            raise ValueError(f"squareform: incompatible vector size {s}. It must be a binomial "
                             f"coefficient n choose 2 for some integer n >= 2.")
        pos = np.zeros((d, d), dtype=np.intp)      # 0 → the zero put in front of X
        i, j = np.triu_indices(d, 1)
        pos[i, j] = pos[j, i] = np.arange(1, s + 1)
        padded = np.concatenate([np.zeros(1, dtype=np.result_type(primal_value(X))), X])
        return padded[pos]
    if nd == 2:
        n0, n1 = shape_of(X)
        if n0 != n1:
            raise ValueError(f"squareform: the matrix argument must be square, got shape "
                             f"{shape_of(X)}")
        if checks:
            P = np.asarray(primal_value(X))
            if np.any(np.diag(P) != 0) or not np.allclose(P, P.T):
                raise ValueError("squareform: distance matrix X must be symmetric with a zero "
                                 "diagonal (pass checks=False to skip)")
        i, j = np.triu_indices(n0, 1)
        return X[i, j]
    raise ValueError(f"squareform: the first argument must be one or two dimensional, got "
                     f"shape {shape_of(X)}")
