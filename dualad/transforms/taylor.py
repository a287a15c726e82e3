r"""Taylor mode for users: :func:`jet`, :func:`taylor` and :func:`derivative`.

All three push a truncated Taylor series :math:`x(t) = \sum_{k=0}^d x_k t^k` through the
function with the Taylor interpreter (:mod:`dualad.interpreters.taylor`) and read the
output's series :math:`f(x(t)) = \sum_k y_k t^k + O(t^{d+1})`. Along a line
:math:`x(t) = x + t v` the coefficients are the directional derivatives over factorials,
:math:`y_k = \frac{1}{k!}\,\partial^k f(x)[v, \dots, v]`: every order up to ``d`` costs
:math:`O(d^2)` work per primitive, where nesting ``d`` forward sweeps costs
:math:`O(2^d)`.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .api import _check_arity, _fname, _zeros, check_input, check_output, jvp
from ..core.tracer import shape_of, unguarded_value
from ..core.tree import flatten, flatten_like
from ..frontend.objects import traced_outputs
from ..interpreters.taylor.rules import taylor_rule
from ..interpreters.taylor.series import Series, TaylorTrace
from ..ops.core.shape import stack

__all__ = ["jet", "taylor", "derivative"]


def _order(api, order):
    if isinstance(order, bool) or int(order) != order or order < 0:
        raise ValueError(f"{api}: order must be a non-negative integer, got {order!r}")
    return int(order)


def propagate(api: str, f: Callable[..., Any], args: Sequence[Any],
              coefficient_lists: Sequence[list], order: int) -> tuple[list, Callable]:
    """Run ``f`` on series and return the output leaves' coefficient lists and rebuild.

    ``args`` is ``(given, rebuild)``: the primals as the caller gave them (for the arity
    message when ``f`` is called wrongly) and the function that builds ``f``'s positional
    arguments from the input leaves' series; ``coefficient_lists`` holds each input
    leaf's ``[x_0, ..., x_d]``. Each output leaf's list has ``order + 1`` entries (an
    output that does not depend on the inputs: its value, then zeros).
    """
    leaves, rebuild = args
    trace = TaylorTrace(order, taylor_rule)
    try:
        boxed = [Series(trace, list(c)) for c in coefficient_lists]
        try:
            out = traced_outputs(f(*rebuild(boxed)))
        except TypeError as e:
            _check_arity(api, f, leaves, e)
            raise
    finally:
        trace.stop()
    check_output(api, f, out)
    o_leaves, o_rebuild = flatten(out)
    coefs = []
    for o in o_leaves:
        if isinstance(o, Series) and o._trace is trace:
            coefs.append(o.coefs)
        else:
            coefs.append([o] + [_zeros(shape_of(o), o) for _ in range(order)])
    return coefs, o_rebuild


def _along_line(api, f, x, v, order):
    """The output leaves' coefficient lists along :math:`x + t v` (and their rebuild)."""
    zero = np.zeros(shape_of(x), dtype=np.result_type(unguarded_value(x)))
    lists = [[x, v] + [zero] * (order - 1)] if order else [[x]]
    return propagate(api, f, ((x,), lambda b: (b[0],)), lists, order)


def _input(api, i, x, fname, where=""):
    return check_input(api, i, x, where=where, fname=fname)


def _term(api, i, k, term, like):
    if term is None or isinstance(term, (str, bytes)):
        raise TypeError(f"{api}: series term {k} of input leaf {i} is {term!r}; give an array "
                        f"of its primal's shape {shape_of(like)} (np.zeros_like(x) for a term "
                        f"that is zero)")
    arr = np.asarray(term) if not hasattr(term, "shape") else term
    if isinstance(arr, np.ndarray) and arr.dtype.kind not in "fciub":
        raise TypeError(f"{api}: series term {k} of input leaf {i} has dtype {arr.dtype}; "
                        f"terms are numeric arrays of their primal's shape {shape_of(like)}")
    if shape_of(arr) != shape_of(like):
        raise ValueError(f"{api}: series term {k} of input leaf {i} has shape "
                         f"{shape_of(arr)}, but its primal has shape {shape_of(like)}; every "
                         f"term has its primal's shape (batch directions with dualad.vmap)")
    if isinstance(arr, np.ndarray):
        dtype = np.result_type(unguarded_value(like))
        if arr.dtype.kind == "c" and dtype.kind != "c":
            raise TypeError(f"{api}: series term {k} of input leaf {i} is complex but its "
                            f"primal is real; casting would drop the imaginary part")
        arr = arr.astype(dtype, copy=False)
    return arr


def jet(f: Callable[..., Any], primals: Sequence[Any], series: Sequence[Any], *,
        factorial_scaled: bool = True) -> tuple[Any, Any]:
    r"""Push a Taylor polynomial through ``f``: JAX's ``jet``.

    Given the input curve's terms :math:`h_0, (h_1, \dots, h_d)` with
    :math:`h(t) = \sum_k h_k t^k / k!` (so :math:`h_k = \partial^k h(0)`, the
    *factorial-scaled* convention, JAX's default), return :math:`f_0, (f_1, \dots,
    f_d)` with :math:`f(h(t)) = \sum_k f_k t^k/k! + O(t^{d+1})`. For the line
    :math:`h(t) = x + t v` (``series = ((v, 0, ..., 0),)``) :math:`f_k =
    \partial^k f(x)[v, \dots, v]`, the ``k``-th directional derivative.

    Parameters
    ----------
    f : callable
        Called as ``f(*primals)``; arrays, numbers or pytrees of them in and out.
    primals : tuple
        One entry per positional argument of ``f`` (:math:`h_0`).
    series : tuple
        One entry per primal, with the primal's structure, each leaf replaced by a
        sequence of ``d`` terms :math:`h_1, \dots, h_d` of the leaf's shape. Every
        leaf has the same ``d``.
    factorial_scaled : bool, default True
        Terms are derivatives (:math:`h_k = k!\,x_k`); False: they are the normalized
        Taylor coefficients :math:`x_k` themselves, in and out.

    Returns
    -------
    primals_out : object
        ``f(*primals)``.
    series_out : object
        ``f``'s output structure, each leaf replaced by the list of its ``d`` terms.

    Raises
    ------
    ValueError
        If the series' structure or a term's shape does not match its primal, or the
        leaves' series differ in length.

    See Also
    --------
    taylor : Every coefficient of a one-argument function along a line.
    derivative : The ``n``-th derivative, from the same sweep.

    Examples
    --------
    >>> y0, (y1, y2, y3) = dualad.jet(np.sin, (0.5,), ((1.0, 0.0, 0.0),))
    >>> bool(np.allclose([y1, y2, y3], [np.cos(0.5), -np.sin(0.5), -np.cos(0.5)]))
    True
    """
    name = _fname(f)
    if not isinstance(primals, (tuple, list)) or not isinstance(series, (tuple, list)):
        raise TypeError(f"jet: primals and series are tuples with one entry per argument of "
                        f"{name} (JAX's convention): jet(f, (x,), ((v, 0.0),)) for one "
                        f"argument; got {type(primals).__name__} and {type(series).__name__}")
    if len(series) != len(primals):
        raise ValueError(f"jet: {len(primals)} primals but {len(series)} series; give one "
                         f"series (a sequence of terms) per primal")
    p_leaves, p_rebuild = flatten(tuple(primals))
    s_leaves = flatten_like(tuple(primals), tuple(series), "jet", "series",
                            leaf=lambda s: s)
    orders = {len(s) if isinstance(s, (list, tuple)) else -1 for s in s_leaves}
    if -1 in orders or len(orders) > 1:
        raise ValueError(f"jet: each primal leaf's series is a sequence of terms of one "
                         f"length d (the order), one per leaf; got lengths "
                         f"{sorted(len(s) if isinstance(s, (list, tuple)) else 'not a sequence' for s in s_leaves)}")
    order = orders.pop() if orders else 0
    lists = []
    for i, (p, s) in enumerate(zip(p_leaves, s_leaves)):
        p = _input("jet", i, p, name)
        coefs = [p]
        for k, term in enumerate(s, start=1):
            term = _term("jet", i, k, term, p)
            coefs.append(term / float(math.factorial(k)) if factorial_scaled and k > 1 else term)
        lists.append(coefs)
    out, rebuild = propagate("jet", f, (primals, p_rebuild), lists, order)
    scale = [float(math.factorial(k)) if factorial_scaled else 1 for k in range(order + 1)]
    series_out = [[c[k] * scale[k] if scale[k] != 1 else c[k] for k in range(1, order + 1)]
                  for c in out]
    return rebuild([c[0] for c in out]), rebuild(series_out)


def taylor(f: Callable[[Any], Any], order: int) -> Callable[..., Any]:
    r"""Return a function giving every Taylor coefficient of ``f`` up to ``order``.

    ``taylor(f, d)(x, v)`` is the array of the normalized coefficients of
    :math:`t \mapsto f(x + t v)` at 0,

    .. math:: \Bigl[f(x),\ \partial f(x)[v],\ \tfrac{1}{2!}\partial^2 f(x)[v, v],\ \dots,
              \ \tfrac{1}{d!}\partial^d f(x)[v, \dots, v]\Bigr],

    stacked on a new leading axis (shape ``(d + 1, *f(x).shape)``; a pytree output gets
    one such array per leaf). Without ``v`` the direction is all ones, so for a scalar
    or elementwise ``f`` entry ``k`` is :math:`f^{(k)}(x)/k!`: multiply by
    :math:`k!` for the derivatives (:func:`derivative` does). One sweep of Taylor mode:
    :math:`O(d^2)` per primitive.

    Parameters
    ----------
    f : callable
        A function of one argument (an array or a float).
    order : int
        The truncation order :math:`d \ge 0`.

    Returns
    -------
    callable
        ``(x, v=None) -> coefficients``.

    Raises
    ------
    ValueError
        If ``order`` is not a non-negative integer, or ``v`` has another shape than ``x``.

    See Also
    --------
    jet : Any input series, several arguments, JAX's convention.
    derivative : One derivative :math:`f^{(n)}(x)`.

    Examples
    --------
    >>> c = dualad.taylor(np.exp, 4)(0.0)
    >>> print(np.round(c, 6))
    [1.       1.       0.5      0.166667 0.041667]
    """
    d = _order("taylor", order)
    name = _fname(f)

    def coefficients(x, v=None):
        x = _input("taylor", 0, x, name)
        if v is None:
            v = np.ones(shape_of(x), dtype=np.result_type(unguarded_value(x)))
        else:
            v = _term("taylor", 0, 1, v, x)
        out, rebuild = _along_line("taylor", f, x, v, d)
        return rebuild([stack(c) for c in out])

    coefficients.__name__ = f"taylor_{name}"
    coefficients.__doc__ = f"Taylor coefficients of {name} to order {d} (dualad.taylor)."
    return coefficients


def derivative(f: Callable[[Any], Any], order: int = 1) -> Callable[[Any], Any]:
    r"""Return the ``order``-th derivative of a scalar (or elementwise) function.

    ``derivative(f, n)(x)`` is :math:`f^{(n)}(x) = n!\,y_n`, with :math:`y_n` the
    coefficient of :math:`t^n` in :math:`f(x + t)`, from one Taylor-mode sweep
    (:func:`taylor`): :math:`O(n^2)` work per primitive, where nesting ``n`` forward
    sweeps costs :math:`O(2^n)` (order 1 is :func:`dualad.jvp`'s one forward sweep). No
    finite differences and no symbolic expressions are
    involved. For an elementwise ``f`` on an array the result is the elementwise
    derivative (the direction of all ones).

    Parameters
    ----------
    f : callable
        A function of one argument, scalar or elementwise.
    order : int, default 1
        The order :math:`n \ge 0`; 0 returns ``f`` itself.

    Returns
    -------
    callable
        The function ``x -> f^(n)(x)``.

    Raises
    ------
    ValueError
        If ``order`` is negative or not an integer.
    TypeError
        When the returned function is called with an integer or boolean input.

    See Also
    --------
    taylor : Every coefficient up to ``n`` at once.
    dualad.jvp : One forward sweep.
    dualad.grad : The gradient of a scalar function of several variables.

    Examples
    --------
    >>> d3 = dualad.derivative(np.sin, 3)
    >>> print(np.isclose(d3(1.0), -np.cos(1.0)))
    True
    >>> print(dualad.derivative(lambda x: x ** 3, 2)(np.array([1.0, 2.0])))
    [ 6. 12.]
    """
    n = _order("derivative", order)
    if n == 0:
        return f
    name = _fname(f)

    def dn(x):
        x = _input("derivative", 0, x, name)
        one = np.ones(shape_of(x), dtype=np.result_type(unguarded_value(x)))
        if n == 1:   # order 1 of Taylor mode is one forward sweep: jvp's, with its rules
            return jvp(f, (x,), (one,))[1]
        out, rebuild = _along_line("derivative", f, x, one, n)
        scale = float(math.factorial(n))
        return rebuild([c[n] * scale for c in out])

    dn.__name__ = f"d{n}_{name}"
    dn.__doc__ = f"Derivative of order {n} of {name} (dualad.derivative, Taylor mode)."
    return dn
