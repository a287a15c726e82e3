r"""More Taylor recurrences: special functions and two-argument elementwise primitives.

Each from an ODE the function satisfies, by the two patterns of :mod:`.rules`
(:math:`y' = u' w`: :func:`~.rules.ode_product`; :math:`y' w = u'`:
:func:`~.rules.ode_quotient`), :math:`w` a companion series kept on the node:

=========================  =====================================================================
``logit``                  :math:`y'\,u(1-u) = u'`
``log_expit``              :math:`y' = u'\,q`, :math:`q = \mathrm{expit}(-u)`, :math:`q' = -u' q(1-q)`
``logaddexp(a, b)``        :math:`y' = b' + d' s`, :math:`d = a - b`, :math:`s = \mathrm{expit}(d)`
``logaddexp2(a, b)``       the same with :math:`d = (a - b)\ln 2`, divided by :math:`\ln 2`
``erfcx``                  :math:`y' = u'\,(2 u y - 2/\sqrt\pi)`
``erfi``                   :math:`y' = u'\,\tfrac{2}{\sqrt\pi} e^{u^2}`
``dawsn``                  :math:`y' = u'\,(1 - 2 u y)`
``ndtr``                   :math:`y' = u'\,e^{-u^2/2}/\sqrt{2\pi}`
``log_ndtr``               :math:`y' = u'\,r`, :math:`r = e^{-u^2/2 - y}/\sqrt{2\pi}` (:math:`r = e^z`)
``erfinv``, ``erfcinv``    :math:`y' = \pm u'\,\tfrac{\sqrt\pi}{2} e^{y^2}`
``ndtri``                  :math:`y' = u'\,\sqrt{2\pi}\, e^{y^2/2}`
``xlogy``, ``xlog1py``     :math:`y = x\,L`, :math:`L = \ln y` (or :math:`\ln(1+y)`): a Cauchy product
``entr``                   :math:`y = -u\,\ln u`
``sinc``                   :math:`y\,\pi u = \sin \pi u` (a quotient of the sine series)
``hypot(a, b)``            :math:`y^2 = a^2 + b^2` (the square-root recurrence)
``arctan2(a, b)``          :math:`y' (a^2 + b^2) = b a' - a b'`
``power(u, p)``            :math:`y = e^{p \ln u}` (a traced exponent)
``absolute``               :math:`y_k = \mathrm{sign}(u_0)\, u_k` (real :math:`u`)
``maximum``, ``minimum``   :math:`y_k` the selected argument's :math:`x_k` (ties: the mean);
                           ``fmax``, ``fmin`` too (a nan: the fallback)
``std_sqrt``               the square-root recurrence (at 0: the fallback, derivative 0)
=========================  =====================================================================

Where a recurrence divides by zero or meets a convention (``xlogy(0, 0)``, ``sinc(0)``,
``hypot(0, 0)``, a nan or an infinity in ``logaddexp``, ``maximum``'s nan, ``std_sqrt`` at 0, a base
:math:`\le 0` of a traced exponent, a complex ``absolute``), the node takes the JVP rule's
fallback for all its orders instead, decided at order 1: exact, with the rule's
conventions.
"""
from __future__ import annotations

import math

import numpy as np

from ...core.tracer import primal_value, shape_of
from .rules import _sqrt as _base_sqrt
from .rules import (_acc, _fallback, _get, _grow, _prim, _recurrence, _series_state,
                    _square_of, _weighted, _zeros_like, cauchy, constant_power, exp_series,
                    ode_product, ode_quotient, quotient_step, root_step, use_fallback)

__all__: list[str] = []

_SQRT_PI = math.sqrt(math.pi)
_SQRT_2PI = math.sqrt(2.0 * math.pi)
_LN2 = math.log(2.0)


def _full(v, like):
    """``v`` (None: zero) at the shape of ``like``, the output's coefficient 0."""
    if v is None:
        return _zeros_like(like)
    return v if shape_of(v) == shape_of(like) else v + _zeros_like(like)


def _values(node, i):
    return np.asarray(primal_value(node.x[i][0]))


def _expit_series(node, d, m):
    r"""The companion :math:`s = \mathrm{expit}(d)` to order ``m``, from :math:`s' = d' g`,
    :math:`g = s - s^2` (``d`` known to order ``m``)."""
    s = _series_state(node, "s", lambda: _prim("expit")(d[0]))
    g = _series_state(node, "g", lambda: s[0] - s[0] * s[0])
    while len(s) <= m:
        j = len(s)
        s.append(ode_product(d, g, j))
        g.append(s[j] - cauchy(s, s, j))
    return s


# --- one argument ---------------------------------------------------------------------
@_recurrence("logit")
def _logit(node, k):
    u, y = node.x[0], node.y
    w = _grow(node, "w", k - 1, lambda: u[0] - u[0] * u[0], lambda m: u[m] - cauchy(u, u, m))
    return ode_quotient(u, w, y, k)


@_recurrence("log_expit")
def _log_expit(node, k):
    u = node.x[0]
    q = _expit_series(node, [-c for c in u], k - 1)   # expit(−u)
    return ode_product(u, q, k)


@_recurrence("erfcx", "dawsn")
def _erfcx(node, k):
    u, y = node.x[0], node.y
    if node.prim.name == "erfcx":   # w = 2uy − 2/√π
        first, scale = lambda: 2.0 * u[0] * y[0] - 2.0 / _SQRT_PI, 2.0
    else:                           # w = 1 − 2uy
        first, scale = lambda: 1.0 - 2.0 * u[0] * y[0], -2.0
    w = _grow(node, "w", k - 1, first, lambda m: scale * cauchy(u, y, m))
    return ode_product(u, w, k)


@_recurrence("erfi", "ndtr")
def _erfi(node, k):
    u = node.x[0]
    erfi = node.prim.name == "erfi"   # e^{u²}·2/√π, or e^{−u²/2}/√(2π)
    v = _square_of(node, k, "v", 0.0, 1.0 if erfi else -0.5)
    e = exp_series(node, "e", v, k - 1)
    return ode_product(u, e, k) * (2.0 / _SQRT_PI if erfi else 1.0 / _SQRT_2PI)


@_recurrence("log_ndtr")
def _log_ndtr(node, k):
    u, y = node.x[0], node.y   # z = −u²/2 − y − ln√(2π), r = e^z, y' = u' r
    z = _grow(node, "z", k - 1, lambda: -0.5 * (u[0] * u[0]) - y[0] - math.log(_SQRT_2PI),
              lambda m: -0.5 * cauchy(u, u, m) - y[m])
    return ode_product(u, exp_series(node, "r", z, k - 1), k)


@_recurrence("erfinv", "erfcinv", "ndtri")
def _erfinv(node, k):
    u, y = node.x[0], node.y
    name = node.prim.name   # y' = c u' e^{a y²}
    a, c = {"erfinv": (1.0, _SQRT_PI / 2.0), "erfcinv": (1.0, -_SQRT_PI / 2.0),
            "ndtri": (0.5, _SQRT_2PI)}[name]
    v = _grow(node, "v", k - 1, lambda: a * (y[0] * y[0]), lambda m: a * cauchy(y, y, m))
    return ode_product(u, exp_series(node, "e", v, k - 1), k) * c


@_recurrence("entr")
def _entr(node, k):
    if use_fallback(node, k, lambda: np.any(_values(node, 0) <= 0)):
        return _fallback(node, k)
    u = node.x[0]
    L = _log_series(node, u, k, log1p=False)
    return -cauchy(u, L, k)


@_recurrence("sinc")
def _sinc(node, k):
    if use_fallback(node, k, lambda: np.any(_values(node, 0) == 0)):
        return _fallback(node, k)
    u, y = node.x[0], node.y
    w = [c * math.pi for c in u]   # y·w = sin w, w = πu
    s = _series_state(node, "s", lambda: _prim("sin")(w[0]))
    c = _series_state(node, "c", lambda: _prim("cos")(w[0]))
    while len(s) <= k:
        m = len(s)
        s.append(ode_product(w, c, m))
        c.append(-ode_product(w, s, m))
    return quotient_step(s, w, y, k)   # y = sin(w)/w


@_recurrence("absolute")
def _absolute(node, k):
    if use_fallback(node, k, lambda: np.iscomplexobj(_values(node, 0))):
        return _fallback(node, k)
    u = node.x[0]
    sign = _series_state(node, "sign", lambda: _prim("sign")(u[0]))[0]
    return sign * u[k]


# --- two arguments --------------------------------------------------------------------
def _log_series(node, c, k, log1p):
    """The companion :math:`L = \\ln c` (or :math:`\\ln(1 + c)`) of the coefficient list
    ``c`` to order ``k`` (a constant's: ``[L_0]``)."""
    L = _series_state(node, "L", lambda: _prim("log1p" if log1p else "log")(c[0]))
    if len(c) == 1:
        return L
    w = [c[0] + 1.0] + c[1:] if log1p else c
    while len(L) <= k:
        L.append(ode_quotient(c, w, L, len(L)))
    return L


@_recurrence("xlogy", "xlog1py")
def _xlogy(node, k):
    log1p = node.prim.name == "xlog1py"
    at = -1.0 if log1p else 0.0   # the convention x·log(y) = 0 at x = 0 lives where log is −∞
    if use_fallback(node, k, lambda: np.any(_values(node, 1) == at)):
        return _fallback(node, k)
    x, y = node.x
    return _full(cauchy(x, _log_series(node, y, k, log1p), k), node.y[0])


def _difference(a, b, scale=1.0):
    """The coefficient list of :math:`(a - b)\\,\\mathrm{scale}` (None where both are
    constant)."""
    out = []
    for j in range(max(len(a), len(b))):
        aj, bj = _get(a, j), _get(b, j)
        d = aj if bj is None else (-bj if aj is None else aj - bj)
        out.append(None if d is None else (d * scale if scale != 1.0 else d))
    return out


@_recurrence("logaddexp", "logaddexp2")
def _logaddexp(node, k):
    if use_fallback(node, k, lambda: not (np.all(np.isfinite(_values(node, 0))) and
                                           np.all(np.isfinite(_values(node, 1))))):
        return _fallback(node, k)
    a, b = node.x
    scale = 1.0 if node.prim.name == "logaddexp" else _LN2
    d = _difference(a, b, scale)
    s = _expit_series(node, d, k - 1)
    out = ode_product(d, s, k)
    out = None if out is None else (out / scale if scale != 1.0 else out)
    return _full(_acc(_get(b, k), out), node.y[0])


def _sum_of_squares(node, k):
    """The companion :math:`q = a^2 + b^2` to order ``k``."""
    a, b = node.x
    return _grow(node, "q", k, lambda: a[0] * a[0] + b[0] * b[0],
                 lambda m: _acc(cauchy(a, a, m), cauchy(b, b, m)))


@_recurrence("hypot")
def _hypot(node, k):
    if use_fallback(node, k, lambda: np.any(np.asarray(primal_value(node.y[0])) == 0)):
        return _fallback(node, k)
    y = node.y
    return _full(root_step(_sum_of_squares(node, k), y, k), y[0])


@_recurrence("arctan2")
def _arctan2(node, k):
    a, b = node.x   # y' q = b a' − a b': u_k = (1/k) Σ j (a_j b_{k−j} − b_j a_{k−j})
    q = _sum_of_squares(node, k - 1)
    if use_fallback(node, k, lambda: np.any(np.asarray(primal_value(q[0])) == 0)):
        return _fallback(node, k)
    ba = ode_product(b, a, k)
    uk = _acc(ode_product(a, b, k), None if ba is None else -ba)
    s = _weighted(node.y, q, k, k - 1)
    num = uk if s is None else (-s / float(k) if uk is None else uk - s / float(k))
    return _full(None if num is None else num / q[0], node.y[0])


def _traced_power(node, k):
    r""":math:`y = e^{z}`, :math:`z = p \ln u` (a Cauchy product), :math:`y' = z' y`."""
    u, p = node.x
    L = _log_series(node, u, k, log1p=False)
    z = _grow(node, "z", k, lambda: None, lambda m: cauchy(p, L, m))
    return _full(ode_product(z, node.y, k), node.y[0])


def _bad_base(node):
    u = _values(node, 0)
    return np.any(u == 0) if np.iscomplexobj(u) else np.any(~(u > 0))


def _selection(node, k, larger):
    r""":math:`y_k = a_k` where :math:`a_0` wins, :math:`b_k` where :math:`b_0` does,
    :math:`(a_k + b_k)/2` at ties (the JVP rule's convention)."""
    a, b = node.x
    if use_fallback(node, k, lambda: np.any(np.isnan(_values(node, 0))) or
                     np.any(np.isnan(_values(node, 1)))):
        return _fallback(node, k)
    like = node.y[0]
    st = node.state
    if "win" not in st:   # traced comparisons: under vmap or jit each example decides
        st["win"] = _prim("greater" if larger else "less")(a[0], b[0])
        st["tie"] = _prim("equal")(a[0], b[0])
    ak, bk = _full(_get(a, k), like), _full(_get(b, k), like)
    where = _prim("where")
    return where(st["win"], ak, where(st["tie"], 0.5 * (ak + bk), bk))


@_recurrence("maximum", "fmax")
def _maximum(node, k):
    return _selection(node, k, True)


@_recurrence("minimum", "fmin")
def _minimum(node, k):
    return _selection(node, k, False)


@_recurrence("std_sqrt")
def _std_sqrt(node, k):
    """√ with the derivative 0 at 0 (std's convention): the square-root recurrence away
    from 0, the fallback (the rule's convention) where an entry is 0."""
    if use_fallback(node, k, lambda: np.any(_values(node, 0) == 0)):
        return _fallback(node, k)
    return _base_sqrt(node, k)


@_recurrence("power")
def _power(node, k):
    """A constant exponent: the power recurrence of :mod:`.rules`; a traced one:
    :math:`e^{p \\ln u}` where every base is positive (or a nonzero complex); else the
    fallback."""
    if k == 1:
        node.state["mode"] = "base" if not node.traced[1] else \
            "fallback" if _bad_base(node) else "traced"
    mode = node.state["mode"]
    if mode == "base":
        return constant_power(node, k)
    return _traced_power(node, k) if mode == "traced" else _fallback(node, k)
