r"""Differential operators from batched Taylor sweeps: Laplacian, Hessian diagonal,
:math:`\operatorname{tr}(\nabla^2 f\, M)`, the biharmonic, and their stochastic estimators.

Every operator here is a sum of directional derivatives. Along a line :math:`x + t v` the
order-:math:`k` Taylor coefficient of :math:`f` is :math:`c_k(v) = \frac{1}{k!}\,\partial^k
f(x)[v, \dots, v]` (:func:`dualad.taylor`), so

.. math:: v^\top \nabla^2 f(x)\, v = 2\, c_2(v), \qquad
          \partial^4 f(x)[v, v, v, v] = 24\, c_4(v).

A set of directions :math:`v_1, \dots, v_S` is one batched sweep, ``dualad.vmap`` over the
directions of ``dualad.taylor(f, k)(x, v)``: the primal is computed once, and each primitive
propagates all directions' coefficients together (one matrix product for a layer, where a
loop of Hessian-vector products runs a forward and a reverse sweep per direction).

* Laplacian, :math:`\Delta f = \sum_i \partial^2 f/\partial x_i^2 = \sum_i 2\, c_2(e_i)`:
  the :math:`n` coordinate directions (``method="exact"``); a random subset of them scaled
  by :math:`n/S` (``"stde"``, the sparse random jets of Shi et al., NeurIPS 2024, also
  known as SDGD); or :math:`\frac{1}{S}\sum_s v_s^\top \nabla^2 f\, v_s` with
  :math:`\mathbb{E}[v v^\top] = I` (``"hutchinson"``, Rademacher or Gaussian :math:`v`).
* The Hessian diagonal: the terms :math:`2\, c_2(e_i)` themselves.
* :math:`\operatorname{tr}(\nabla^2 f\, M) = \operatorname{tr}(\nabla^2 f\, S)` with
  :math:`S = (M + M^\top)/2 = \sum_k \lambda_k u_k u_k^\top` (the Hessian is symmetric):
  :math:`\sum_k \lambda_k\, 2\, c_2(u_k)`, one direction per nonzero eigenvalue.
* The biharmonic :math:`\Delta^2 f = \sum_{ij} \partial_i^2 \partial_j^2 f`: exactly by
  polarization of order-4 jets, :math:`\partial_i^2\partial_j^2 f = \frac{1}{12}\bigl(
  d_4(e_i + e_j) + d_4(e_i - e_j) - 2 d_4(e_i) - 2 d_4(e_j)\bigr)` with :math:`d_4(v) =
  \partial^4 f[v,v,v,v]`; stochastically by :math:`\Delta^2 f = \frac{1}{3}\,
  \mathbb{E}_{v \sim N(0, I)}\, d_4(v)` (Isserlis: :math:`\mathbb{E}[v_i v_j v_k v_l] =
  \delta_{ij}\delta_{kl} + \delta_{ik}\delta_{jl} + \delta_{il}\delta_{jk}`), the dense
  order-4 jets of the same paper.

Inputs and outputs: ``f`` takes ONE real floating array ``x`` of any shape (its entries are
the coordinates :math:`x_i`; the Laplacian sums over all of them) and returns one array
(any shape: the operator is applied to each output entry). Random directions are drawn
when the returned function runs; under ``dualad.jit`` of that function they are drawn once,
while tracing, and reused: jit ``f`` instead (``laplacian(jit(f), method="stde")``).
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .api import _fname, check_input
from .taylor import taylor
from ..core.tracer import shape_of, unguarded_value
from ..core.tree import is_leaf
from ..interpreters.batching.vmap import vmap
from ..interpreters.taylor.collapsed import NotCollapsible, second_order_sum

__all__ = ["laplacian", "hessian_diagonal", "hessian_trace", "biharmonic"]

METHODS = {"laplacian": ("exact", "stde", "hutchinson"), "biharmonic": ("exact", "stde")}


def _check_f(api, f):
    if not callable(f):
        raise TypeError(f"{api}: f must be a callable of one array, got "
                        f"{type(f).__name__} {f!r}")
    return _fname(f)


def _point(api, name, x):
    """``x`` as a real floating array (or the traced value of an outer transformation)."""
    x = check_input(f"{api}({name})", 0, x)
    dtype = np.result_type(unguarded_value(x))
    if dtype.kind == "c":
        raise TypeError(f"{api}({name}): argument 0 is complex ({dtype}, shape "
                        f"{shape_of(x)}); the operators here are for real inputs")
    return x, dtype


def _array_output(api, name, f):
    """``f`` with its output checked: one array (a pytree would need one operator each)."""
    def checked(x):
        out = f(x)
        if out is None or isinstance(out, (str, bytes)) or not is_leaf(out):
            raise TypeError(f"{api}: {name} returned a {type(out).__name__}; the operator "
                            f"needs one array (or scalar) output; apply it per output leaf")
        return out
    return checked


def coefficients(f: Callable[[Any], Any], x: Any, directions: np.ndarray,
                 order: int) -> Any:
    r"""The order-``order`` Taylor coefficients :math:`c_k(v_s)` of ``f`` at ``x`` along
    each row :math:`v_s` of ``directions`` (shape ``(S, *x.shape)``), in one batched sweep:
    an array of shape ``(S, *f(x).shape)``, :math:`c_k(v) = \partial^k f(x)[v^{\otimes
    k}]/k!`."""
    sweep = taylor(f, order)
    return vmap(lambda v: sweep(x, v)[order])(directions)


def _exact_laplacian(g, x, dtype):
    r""":math:`\sum_i \partial^2 g/\partial x_i^2`: one collapsed sweep (first derivatives
    along every :math:`e_i`, second derivatives summed as they go), or, when ``g`` calls a
    primitive that sweep has no rule for, the batched order-2 sweep of every :math:`e_i`."""
    basis = _basis(x, dtype)
    try:
        return second_order_sum(g, x, basis)
    except NotCollapsible:
        return np.sum(2.0 * coefficients(g, x, basis, 2), axis=0)


def _basis(x, dtype):
    """The coordinate directions :math:`e_i` of ``x``'s entries: ``(x.size, *x.shape)``."""
    shape = shape_of(x)
    n = math.prod(shape)
    return np.eye(n, dtype=dtype).reshape((n,) + tuple(shape))


def _check_samples(api, method, samples):
    if method == "exact":
        if samples is not None:
            raise ValueError(f"{api}: samples={samples!r} is for a stochastic method; "
                             f"method='exact' uses every direction")
        return None
    if isinstance(samples, bool) or not isinstance(samples, (int, np.integer)) \
            or samples < 1:
        raise ValueError(f"{api}: method={method!r} needs samples=, a positive number of "
                         f"random directions; got {samples!r}")
    return int(samples)


def _check_method(api, method):
    if method not in METHODS[api]:
        raise ValueError(f"{api}: method must be one of {METHODS[api]}, got {method!r}")


def _mean_and_error(values, population=None):
    r"""Mean over the leading axis and its standard error :math:`s/\sqrt{S}` (times the
    finite-population correction :math:`\sqrt{1 - S/N}` for ``S`` of ``N`` drawn without
    replacement)."""
    s = shape_of(values)[0]
    mean = np.mean(values, axis=0)
    if population is not None and s >= population:   # every direction: exact
        return mean, np.zeros(shape_of(mean))
    if s < 2:
        return mean, np.full(shape_of(mean), np.inf)
    # traced operations, not the values': under vmap or jit the standard error is then
    # per example and recomputed on every call
    variance = np.sum((values - mean) ** 2, axis=0) / (s * (s - 1.0))
    if population is not None:
        variance = variance * max(0.0, 1.0 - s / population)
    return mean, np.sqrt(variance)


def _laplacian_samples(method, f, x, dtype, samples, gen, distribution):
    """Per-direction unbiased samples of the Laplacian, shape ``(S, *out)``, and the
    population size for the standard error (None: independent draws)."""
    shape = tuple(shape_of(x))
    n = math.prod(shape)
    if method == "stde":   # sparse jets: S distinct coordinates, each scaled by n
        picked = gen.choice(n, size=min(samples, n), replace=False)
        directions = _basis(x, dtype)[np.sort(picked)]
        return 2.0 * n * coefficients(f, x, directions, 2), n
    if distribution == "gaussian":
        directions = gen.standard_normal((samples,) + shape).astype(dtype)
    else:   # "rademacher" (laplacian() refused any other name)
        directions = gen.choice(np.array([-1.0, 1.0], dtype=dtype), size=(samples,) + shape)
    return 2.0 * coefficients(f, x, directions, 2), None


def laplacian(f: Callable[[Any], Any], *, method: str = "exact", samples: int | None = None,
              rng: Any = None, distribution: str = "rademacher",
              with_stderr: bool = False) -> Callable[[Any], Any]:
    r"""Return the Laplacian :math:`\Delta f(x) = \sum_i \partial^2 f(x)/\partial x_i^2`.

    Exact: one collapsed Taylor sweep (first derivatives along every :math:`e_i`, second
    derivatives summed as they go; :mod:`dualad.interpreters.taylor.collapsed`), or, for a
    function that calls a primitive it has no rule for, one batched order-2 sweep
    (:func:`dualad.taylor` under :func:`dualad.vmap`): :math:`\Delta f = \sum_i 2\,
    c_2(e_i)`, with :math:`c_2(v) = \tfrac12 v^\top \nabla^2 f\,
    v`. ``x`` is one real array of any shape, and :math:`i` runs over all its entries; a
    vector (array) output gets one Laplacian per entry (the result has ``f(x)``'s shape).

    Parameters
    ----------
    f : callable
        ``f(x)``, an array (or scalar) of one array ``x``.
    method : {"exact", "stde", "hutchinson"}
        ``"exact"``: the :math:`n` coordinate directions. ``"stde"``: ``samples`` distinct
        coordinates :math:`J` drawn uniformly, :math:`\frac{n}{|J|}\sum_{j \in J}
        \partial_j^2 f` (sparse random jets, Shi et al. 2024; equals the exact value when
        ``samples >= n``). ``"hutchinson"``: :math:`\frac1S \sum_s v_s^\top \nabla^2 f\,
        v_s` for ``samples`` random :math:`v_s` with :math:`\mathbb{E}[v v^\top] = I`.
        Both estimators are unbiased.
    samples : int, optional
        The number of random directions (stochastic methods only; required there).
    rng : numpy.random.Generator or int or None
        The random source (a seed gives a fresh ``numpy.random.default_rng(seed)`` per call).
    distribution : {"rademacher", "gaussian"}
        Hutchinson's directions: entries :math:`\pm 1` (the smaller variance) or :math:`N(0,1)`.
    with_stderr : bool, default False
        Also return the standard error of the estimate (0 for ``"exact"``).

    Returns
    -------
    callable
        ``x -> Δf(x)``, or ``x -> (estimate, standard_error)`` with ``with_stderr``.

    Raises
    ------
    TypeError
        ``f`` not callable; ``x`` None, integer, boolean, complex; a non-array output.
    ValueError
        An unknown ``method`` or ``distribution``; ``samples`` missing, not a positive
        integer, or given with ``method="exact"``.

    See Also
    --------
    hessian_diagonal : The terms of the sum.
    hessian_trace : :math:`\operatorname{tr}(\nabla^2 f\, M)` for any matrix ``M``.
    biharmonic : :math:`\Delta^2 f`, from order-4 sweeps.

    Examples
    --------
    >>> lap = dualad.laplacian(lambda x: np.sum(x ** 3))
    >>> print(lap(np.array([1.0, 2.0])))
    18.0
    """
    api = "laplacian"
    name = _check_f(api, f)
    _check_method(api, method)
    samples = _check_samples(api, method, samples)
    if distribution not in ("rademacher", "gaussian"):
        raise ValueError(f"laplacian: distribution must be 'rademacher' or 'gaussian', "
                         f"got {distribution!r}")
    g = _array_output(api, name, f)

    def laplacian_f(x):
        x, dtype = _point(api, name, x)
        if method == "exact":
            value = _exact_laplacian(g, x, dtype)
            return (value, np.zeros(shape_of(value))) if with_stderr else value
        values, population = _laplacian_samples(method, g, x, dtype, samples,
                                                np.random.default_rng(rng), distribution)
        mean, err = _mean_and_error(values, population)
        return (mean, err) if with_stderr else mean

    laplacian_f.__name__ = f"laplacian_{name}"
    return laplacian_f


def hessian_diagonal(f: Callable[[Any], Any]) -> Callable[[Any], Any]:
    r"""Return the Hessian's diagonal :math:`x \mapsto (\partial^2 f/\partial x_i^2)_i`.

    One batched order-2 Taylor sweep along the coordinate directions, :math:`\partial_i^2 f =
    2\, c_2(e_i)`, without forming the Hessian. The result has ``x``'s shape for a scalar
    ``f``, and ``f(x).shape + x.shape`` for an array output (entry ``[k, i]`` is
    :math:`\partial^2 f_k/\partial x_i^2`).

    Parameters
    ----------
    f : callable
        ``f(x)``, an array (or scalar) of one real array ``x``.

    Returns
    -------
    callable
        ``x -> diag ∇²f(x)``, of shape ``x.shape`` (``f(x).shape + x.shape``).

    Raises
    ------
    TypeError
        ``f`` not callable; ``x`` None, integer, boolean, complex; a non-array output.

    See Also
    --------
    laplacian : The sum of this diagonal.
    dualad.jacobians.hessian : The whole Hessian.

    Examples
    --------
    >>> print(dualad.hessian_diagonal(lambda x: np.sum(x ** 3))(np.array([1.0, 2.0])))
    [ 6. 12.]
    """
    api = "hessian_diagonal"
    name = _check_f(api, f)
    g = _array_output(api, name, f)

    def diagonal(x):
        x, dtype = _point(api, name, x)
        xs = tuple(shape_of(x))
        d = 2.0 * coefficients(g, x, _basis(x, dtype), 2)      # (n, *out)
        out = tuple(shape_of(d))[1:]
        d = np.reshape(np.moveaxis(d, 0, -1), out + xs) if out else np.reshape(d, xs)
        return d

    diagonal.__name__ = f"hessian_diagonal_{name}"
    return diagonal


def _symmetric_directions(api, M, xs, dtype, rtol=1e-14):
    r"""The eigenpairs :math:`(\lambda_k, u_k)` of :math:`(M + M^\top)/2` with
    :math:`|\lambda_k| > \mathrm{rtol} \max|\lambda|`, the :math:`u_k` shaped like ``x``."""
    n = math.prod(xs)
    M = np.asarray(M)
    if M.dtype.kind not in "fiu" or M.shape not in ((n, n), tuple(xs) + tuple(xs)):
        raise ValueError(f"{api}: M has shape {M.shape} and dtype {M.dtype}, but x has shape "
                         f"{tuple(xs)} ({n} entries); M must be a real ({n}, {n}) matrix "
                         f"(or of shape x.shape + x.shape)")
    M = M.reshape(n, n).astype(dtype)
    lam, U = np.linalg.eigh(0.5 * (M + M.T))
    keep = np.abs(lam) > rtol * max(np.max(np.abs(lam), initial=0.0), np.finfo(dtype).tiny)
    return lam[keep], np.ascontiguousarray(U[:, keep].T).reshape((-1,) + tuple(xs))


def hessian_trace(f: Callable[[Any], Any], M: Any) -> Callable[[Any], Any]:
    r"""Return :math:`x \mapsto \operatorname{tr}(\nabla^2 f(x)\, M) = \sum_{ij} H_{ij} M_{ji}`.

    Since :math:`H` is symmetric, :math:`\operatorname{tr}(HM) = \operatorname{tr}(HS)`
    with :math:`S = (M + M^\top)/2 = \sum_k \lambda_k u_k u_k^\top`, so
    :math:`\operatorname{tr}(HM) = \sum_k \lambda_k\, u_k^\top H u_k = \sum_k \lambda_k\,
    2\, c_2(u_k)`: one batched order-2 sweep with one direction per nonzero eigenvalue
    (a rank-:math:`r` ``M`` costs :math:`r` directions). ``M = I`` is the Laplacian; a
    diffusion matrix :math:`M = \sigma\sigma^\top` gives the generator term
    :math:`\operatorname{tr}(\sigma\sigma^\top \nabla^2 f)` of Kolmogorov equations.

    Parameters
    ----------
    f : callable
        ``f(x)`` of one real array ``x``; an array output gets one trace per entry.
    M : array_like
        A constant real matrix of shape ``(n, n)`` with ``n = x.size`` (or ``x.shape +
        x.shape``), symmetric or not. It is decomposed once per shape of ``x``, on the
        first call.

    Returns
    -------
    callable
        ``x -> tr(∇²f(x) M)``, of ``f(x)``'s shape.

    Raises
    ------
    TypeError
        ``M`` is None, or (when called) ``x`` is not a real floating array.
    ValueError
        ``M`` of the wrong shape, or not real.

    See Also
    --------
    laplacian : ``M = I``.

    Examples
    --------
    >>> M = np.array([[1.0, 2.0], [0.0, 3.0]])
    >>> f = lambda x: x[0] ** 2 * x[1]           # H = [[2 x1, 2 x0], [2 x0, 0]]
    >>> print(dualad.hessian_trace(f, M)(np.array([1.0, 2.0])))   # 4*1 + 2*2 + 0*2
    8.0
    """
    api = "hessian_trace"
    name = _check_f(api, f)
    if M is None:
        raise TypeError(f"{api}: M is None; pass the (n, n) matrix of tr(H M)")
    g = _array_output(api, name, f)
    cache = {}

    def trace_f(x):
        x, dtype = _point(api, name, x)
        xs = tuple(shape_of(x))
        if (xs, dtype) not in cache:
            cache[(xs, dtype)] = _symmetric_directions(api, M, xs, dtype)
        lam, directions = cache[(xs, dtype)]
        if len(lam) == 0:
            return 0.0 * g(x)
        c = coefficients(g, x, directions, 2)
        weights = (2.0 * lam).reshape((-1,) + (1,) * (len(shape_of(c)) - 1))
        return np.sum(weights * c, axis=0)

    trace_f.__name__ = f"hessian_trace_{name}"
    return trace_f


def _pairs(x, dtype):
    r"""The directions :math:`e_i \pm e_j` (:math:`i < j`), shape ``(n(n-1), *x.shape)``."""
    basis = _basis(x, dtype)
    i, j = np.triu_indices(len(basis), k=1)
    return np.concatenate([basis[i] + basis[j], basis[i] - basis[j]])


def _biharmonic_exact(g, x, dtype):
    r""":math:`\Delta^2 f = (1 - \frac{n-1}{3}) \sum_i d_4(e_i) + \frac16 \sum_{i<j}
    \bigl(d_4(e_i + e_j) + d_4(e_i - e_j)\bigr)`, :math:`d_4 = 24\, c_4`: the polarization
    identity summed over all pairs."""
    basis = _basis(x, dtype)
    n = len(basis)
    diagonal = np.sum(24.0 * coefficients(g, x, basis, 4), axis=0)
    if n == 1:
        return diagonal
    mixed = np.sum(24.0 * coefficients(g, x, _pairs(x, dtype), 4), axis=0)
    return (1.0 - (n - 1) / 3.0) * diagonal + mixed / 6.0


def biharmonic(f: Callable[[Any], Any], *, method: str = "exact", samples: int | None = None,
               rng: Any = None, with_stderr: bool = False) -> Callable[[Any], Any]:
    r"""Return the biharmonic :math:`\Delta^2 f = \sum_{ij} \partial_i^2 \partial_j^2 f`.

    Order-4 Taylor sweeps, :math:`d_4(v) = \partial^4 f(x)[v,v,v,v] = 24\, c_4(v)`.
    ``method="exact"``: by polarization, :math:`\partial_i^2\partial_j^2 f = \frac{1}{12}
    \bigl(d_4(e_i+e_j) + d_4(e_i-e_j) - 2d_4(e_i) - 2d_4(e_j)\bigr)`, :math:`n^2`
    directions in one batched sweep. ``method="stde"``: the dense random 4-jets of Shi et
    al. (NeurIPS 2024), :math:`\Delta^2 f = \frac13\,\mathbb{E}_{v\sim N(0,I)}\, d_4(v)`
    (by Isserlis' theorem), averaged over ``samples`` Gaussian directions: unbiased, at
    ``samples`` directions whatever :math:`n`. ``x`` is one real array of any shape; an
    array output gets one biharmonic per entry.

    Parameters
    ----------
    f : callable
        ``f(x)``, an array (or scalar) of one array ``x``.
    method : {"exact", "stde"}
    samples : int, optional
        The number of Gaussian directions (``"stde"`` only; required there).
    rng : numpy.random.Generator or int or None
        The random source.
    with_stderr : bool, default False
        Also return the estimate's standard error (0 for ``"exact"``).

    Returns
    -------
    callable
        ``x -> Δ²f(x)`` (of ``f(x)``'s shape), or ``x -> (estimate, standard_error)``.

    Raises
    ------
    TypeError
        ``f`` not callable; ``x`` None, integer, boolean, complex; a non-array output.
    ValueError
        An unknown ``method``; ``samples`` missing, not a positive integer, or given with
        ``method="exact"``.

    See Also
    --------
    laplacian : The second-order operator, with the same methods.

    Examples
    --------
    >>> f = lambda x: np.sum(x ** 2) ** 2          # Δ²|x|⁴ = 8 n (n + 2)
    >>> print(dualad.biharmonic(f)(np.array([0.3, -1.0, 2.0])))
    120.0
    """
    api = "biharmonic"
    name = _check_f(api, f)
    _check_method(api, method)
    samples = _check_samples(api, method, samples)
    g = _array_output(api, name, f)

    def biharmonic_f(x):
        x, dtype = _point(api, name, x)
        if method == "exact":
            value = _biharmonic_exact(g, x, dtype)
            return (value, np.zeros(shape_of(value))) if with_stderr else value
        gen = np.random.default_rng(rng)
        v = gen.standard_normal((samples,) + tuple(shape_of(x))).astype(dtype)
        mean, err = _mean_and_error(8.0 * coefficients(g, x, v, 4))   # 24 c_4 / 3
        return (mean, err) if with_stderr else mean

    biharmonic_f.__name__ = f"biharmonic_{name}"
    return biharmonic_f
