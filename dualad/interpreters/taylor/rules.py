r"""Taylor mode's rule table: coefficient ``k`` of a primitive's output from its operands'.

A rule is ``rule(node, k)``: given the operands' coefficient lists ``node.x[i]`` (each
of length at least ``k + 1``; a constant's is ``[value]``, its higher coefficients zero)
and the output's coefficients below ``k`` (``node.y``), it returns :math:`y_k`. Four
kinds, in the order :func:`taylor_rule` chooses them:

- **recurrence** (:data:`RECURRENCES`): the classic ones (Griewank–Walther, *Evaluating
  Derivatives*, Table 13.2), each from an ODE the function satisfies. With
  :math:`\tilde v_j = j\,v_j`:

  ======================  ==============================================================
  :math:`y = uv`          :math:`y_k = \sum_{j=0}^k u_j v_{k-j}` (Cauchy product)
  :math:`y = u/v`         :math:`y_k = (u_k - \sum_{j=1}^k v_j y_{k-j}) / v_0`
  :math:`y = e^u`         :math:`y_k = \frac1k \sum_{j=1}^k \tilde u_j\, y_{k-j}` (:math:`y' = u' y`)
  :math:`y = \ln u`       :math:`y_k = (u_k - \frac1k\sum_{j=1}^{k-1} \tilde y_j\, u_{k-j}) / u_0`
  :math:`y = u^p`         :math:`y_k = \frac{1}{k u_0}\sum_{j=1}^{k} (p j - (k-j))\, u_j y_{k-j}`
  :math:`y = \sqrt u`     :math:`y_k = (u_k - \sum_{j=1}^{k-1} y_j y_{k-j}) / (2 y_0)`
  :math:`s, c = \sin u, \cos u`  :math:`s_k = \frac1k\sum \tilde u_j c_{k-j},\ c_k = -\frac1k\sum \tilde u_j s_{k-j}`
  ======================  ==============================================================

  and the others by the same two patterns: :math:`y' = u'\,w` (:func:`ode_product`:
  ``tan``, ``tanh``, ``erf``, ``expit``, ...) and :math:`y'\,w = u'` (:func:`ode_quotient`:
  ``arctan``, ``arcsin``, ``log1p``, ...), :math:`w` a series of its own;
- **linear**: a primitive linear (or affine) in its traced arguments: :math:`y_k` is its
  JVP applied to the coefficients :math:`x_k` (``reshape``, ``sum``, ``add``, ``getitem``,
  ``fft``, ``where``, ...);
- **multilinear**: ``matmul``, ``einsum``, ``convolve``: the primitive itself on every
  combination of coefficients whose orders add up to ``k``;
- **fallback**: every other primitive with a JVP rule, from that rule run on series
  (:mod:`.series`): exact, and polynomial in the order, but slower than a recurrence.

:func:`coverage` lists which primitive takes which.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from ...core.primitive import JVP, JVP_ALL, REGISTRY, missing_rule
from ...core.rules import rule_table
from ...core.tracer import primal_value, shape_of
from ..batched_rules import map_batch, map_batch_all
from .series import Series

__all__ = ["TAYLOR", "RECURRENCES", "MULTILINEAR", "LINEAR_ALSO", "taylor_rule", "coverage",
           "ode_product", "ode_quotient", "cauchy", "push_tangents", "quotient_step", "root_step",
           "use_fallback", "exp_series", "constant_power"]

TAYLOR = rule_table("taylor", owner=__package__, doc=(
    "rule(node, k) = y_k, the output's Taylor coefficient of order k, from the operands' "
    "coefficients node.x[i][0..k] and the output's node.y[0..k-1] (dualad.interpreters.taylor)"))

MULTILINEAR = frozenset({"matmul", "einsum", "convolve"})
# Primitives linear in their traced arguments that are not declared linear (a condition,
# a constant index or bound chooses where each entry comes from).
LINEAR_ALSO = frozenset({"where", "stop_gradient"})


def _prim(name):
    return REGISTRY[name]


def _zeros_like(v):
    dtype = np.result_type(primal_value(v))
    return np.zeros(shape_of(v), dtype if dtype.kind in "fc" else np.float64)


def _get(c, j):
    """Coefficient ``j`` of list ``c``, None for a constant's (zero) higher ones."""
    return c[j] if j < len(c) else None


def _acc(total, term):
    if term is None:
        return total
    return term if total is None else total + term


def cauchy(u, v, k, lo=0):
    r""":math:`\sum_{j=lo}^{k-lo} u_j v_{k-j}`, terms with a missing coefficient skipped
    (None when none is left)."""
    total = None
    for j in range(lo, k - lo + 1):
        a, b = _get(u, j), _get(v, k - j)
        if a is not None and b is not None:
            total = _acc(total, a * b)
    return total


def _weighted(u, v, k, stop):
    r""":math:`\sum_{j=1}^{stop} j\,u_j v_{k-j}` (None when no term exists)."""
    total = None
    for j in range(1, stop + 1):
        a, b = _get(u, j), _get(v, k - j)
        if a is not None and b is not None:
            total = _acc(total, (a * float(j)) * b)
    return total


def ode_product(u, w, k):
    r"""Coefficient ``k`` of the :math:`y` with :math:`y' = u' w`:
    :math:`y_k = \frac1k \sum_{j=1}^k j\,u_j w_{k-j}` (``w`` known to order ``k-1``)."""
    s = _weighted(u, w, k, k)
    return None if s is None else s / float(k)


def ode_quotient(u, w, y, k):
    r"""Coefficient ``k`` of the :math:`y` with :math:`y' w = u'`:
    :math:`y_k = (u_k - \frac1k\sum_{j=1}^{k-1} j\,y_j w_{k-j}) / w_0`."""
    s = _weighted(y, w, k, k - 1)
    uk = _get(u, k)
    if s is None:
        return uk / w[0]
    s = s / float(k)
    return (-s if uk is None else uk - s) / w[0]


def _series_state(node, name, first):
    """The companion series ``name`` kept on the node (started with ``first()``)."""
    lst = node.state.get(name)
    if lst is None:
        lst = node.state[name] = [first()]
    return lst


def _kinded(kind):
    def mark(fn):
        fn.kind = kind
        return fn
    return mark


# --- the recurrences ----------------------------------------------------------------
RECURRENCES = {}


def _recurrence(*names):
    def put(fn):
        fn.kind = "recurrence"
        for n in names:
            RECURRENCES[n] = fn
        return fn
    return put


def push_tangents(prim, tangents, ans, args, params, nb=0):
    r""":math:`\sum_i \partial_i f \cdot t_i`: ``prim``'s JVP of ``tangents`` (None where an
    argument has none) at ``args``, from its ``jvp_all`` rule or its per-argument rules
    (None when no rule contributes). ``nb`` leading batch axes on the tangents are mapped
    over for a primitive whose rules take none (:mod:`..batched_rules`)."""
    jvp_all = prim.rules.get(JVP_ALL)
    mapped = nb and not prim.batch_rules
    if jvp_all is not None:
        if mapped:
            return map_batch_all(jvp_all, tangents, nb, ans, args, params)
        return jvp_all(tangents, ans, *args, **params)
    out = None
    rules = prim.rules[JVP]
    for i, t in enumerate(tangents):
        if t is not None:
            rule = rules.get(i)
            if rule is None:
                raise missing_rule(prim, i, "jvp")
            out = _acc(out, map_batch(rule, t, nb, ans, *args, **params) if mapped
                       else rule(t, ans, *args, **params))
    return out


def quotient_step(u, v, y, k):
    r"""Coefficient ``k`` of :math:`y = u/v` (:math:`v y = u`):
    :math:`y_k = (u_k - \sum_{j=1}^k v_j y_{k-j}) / v_0` (None when no term exists)."""
    s = None
    for j in range(1, k + 1):
        vj = _get(v, j)
        if vj is not None:
            s = _acc(s, vj * y[k - j])
    uk = _get(u, k)
    num = uk if s is None else (-s if uk is None else uk - s)
    return None if num is None else num / v[0]


def root_step(u, y, k):
    r"""Coefficient ``k`` of :math:`y = \sqrt u` (:math:`y^2 = u`):
    :math:`y_k = (u_k - \sum_{j=1}^{k-1} y_j y_{k-j}) / (2 y_0)` (None when no term exists)."""
    s = cauchy(y, y, k, lo=1)
    uk = _get(u, k)
    num = uk if s is None else (-s if uk is None else uk - s)
    return None if num is None else num / (2.0 * y[0])


def use_fallback(node, k, bad):
    """At order 1 decide, with ``bad()`` (True: the recurrence does not apply somewhere,
    a division by zero or a convention), whether this node takes the JVP rule's fallback
    for every order."""
    if k == 1:
        node.state["fallback"] = bool(bad())
    return node.state["fallback"]


def exp_series(node, name, z, m):
    """The companion series :math:`e^z` to order ``m`` (``z`` known to order ``m``)."""
    return _grow(node, name, m, lambda: _prim("exp")(z[0]),
                 lambda j: ode_product(z, node.state[name], j))


def _nonzero(x, k):
    return _zeros_like(x) if k is None else k


@_recurrence("multiply")
def _multiply(node, k):
    a, b = node.x
    return _nonzero(node.y[0], cauchy(a, b, k))


@_recurrence("divide")
def _divide(node, k):
    u, v = node.x
    return _nonzero(node.y[0], quotient_step(u, v, node.y, k))


@_recurrence("square")
def _square(node, k):
    (u,) = node.x
    return cauchy(u, u, k)


@_recurrence("reciprocal")
def _reciprocal(node, k):
    return quotient_step([1.0], node.x[0], node.y, k)   # y u = 1


@_recurrence("exp")
def _exp(node, k):
    return ode_product(node.x[0], node.y, k)


@_recurrence("exp2")
def _exp2(node, k):
    return ode_product(node.x[0], node.y, k) * math.log(2.0)


@_recurrence("expm1")
def _expm1(node, k):
    y = node.y
    w = [y[0] + 1.0] + y[1:]
    return ode_product(node.x[0], w, k)


@_recurrence("log")
def _log(node, k):
    u = node.x[0]
    return ode_quotient(u, u, node.y, k)


@_recurrence("log2", "log10")
def _log_base(node, k):
    u = node.x[0]
    scale = math.log(2.0) if node.prim.name == "log2" else math.log(10.0)
    # y = ln(u)/c: y' c u = u', so (c y)_k from the log recurrence on c y
    z = [c * scale for c in node.y]
    return ode_quotient(u, u, z, k) / scale


@_recurrence("log1p")
def _log1p(node, k):
    u = node.x[0]
    w = [u[0] + 1.0] + u[1:]
    return ode_quotient(u, w, node.y, k)


def _power_rule(node, k, u, p):
    y = node.y
    total = None
    for j in range(1, k + 1):
        total = _acc(total, (p * float(j) - float(k - j)) * (u[j] * y[k - j]))
    return total / (float(k) * u[0])


@_recurrence("sqrt")
def _sqrt(node, k):
    return root_step(node.x[0], node.y, k)


@_recurrence("cbrt")
def _cbrt(node, k):
    u = node.x[0]
    if use_fallback(node, k, lambda: np.any(primal_value(u[0]) == 0)):
        return _fallback(node, k)
    return _power_rule(node, k, u, 1.0 / 3.0)


def constant_power(node, k):
    """:math:`u^p` with a constant exponent (``power``'s rule in :mod:`.special` calls it):
    the recurrence divides by :math:`u_0`, so a base with zeros takes the JVP rule."""
    u, p = node.x
    if use_fallback(node, k, lambda: np.any(primal_value(u[0]) == 0)):
        return _fallback(node, k)
    return _power_rule(node, k, u, p[0])


def _pair(node, k, sign):
    """sin/cos (sign −1) and sinh/cosh (sign +1): s' = u' c, c' = sign · u' s."""
    u = node.x[0]
    name = node.prim.name
    first, second = ("sin", "cos") if name in ("sin", "cos") else ("sinh", "cosh")
    s = node.y if name == first else _series_state(node, first, lambda: _prim(first)(u[0]))
    c = node.y if name == second else _series_state(node, second,
                                                    lambda: _prim(second)(u[0]))
    sk = ode_product(u, c, k)
    ck = ode_product(u, s, k)
    ck = -ck if sign < 0 else ck
    if name == first:
        c.append(ck)
        return sk
    s.append(sk)
    return ck


@_recurrence("sin", "cos")
def _sin_cos(node, k):
    return _pair(node, k, -1)


@_recurrence("sinh", "cosh")
def _sinh_cosh(node, k):
    return _pair(node, k, +1)


def _grow(node, name, k, first, nxt):
    """Extend the companion series ``name`` to order ``k`` (``nxt(m)`` its coefficient m)."""
    w = _series_state(node, name, first)
    while len(w) <= k:
        w.append(nxt(len(w)))
    return w


@_recurrence("tan", "tanh")
def _tan(node, k):
    # tan' = 1 + tan², tanh' = 1 − tanh²: y' = u' w with w = 1 ± y² (known to order k−1)
    y = node.y
    sign = 1.0 if node.prim.name == "tan" else -1.0
    w = _grow(node, "w", k - 1, lambda: 1.0 + sign * y[0] * y[0],
              lambda m: sign * cauchy(y, y, m))
    return ode_product(node.x[0], w, k)


@_recurrence("expit")
def _expit(node, k):
    y = node.y   # expit' = y (1 − y)
    w = _grow(node, "w", k - 1, lambda: y[0] - y[0] * y[0], lambda m: y[m] - cauchy(y, y, m))
    return ode_product(node.x[0], w, k)


def _square_of(node, k, name, offset, sign):
    """The series offset + sign·u² of the operand, to order k."""
    u = node.x[0]
    return _grow(node, name, k, lambda: offset + sign * u[0] * u[0],
                 lambda m: sign * cauchy(u, u, m))


def _sqrt_series(node, k, inner, first=None):
    """The series √(inner) (inner a companion series known to order k; ``first`` its
    coefficient 0 where the branch is not the principal root of inner's)."""
    w = _series_state(node, "root", first or (lambda: _prim("sqrt")(inner[0])))
    while len(w) <= k:
        w.append(root_step(inner, w, len(w)))
    return w


@_recurrence("arctan", "arctanh")
def _arctan(node, k):
    sign = 1.0 if node.prim.name == "arctan" else -1.0   # y' (1 ± u²) = u'
    w = _square_of(node, k, "w", 1.0, sign)
    return ode_quotient(node.x[0], w, node.y, k)


@_recurrence("arcsin", "arccos", "arcsinh", "arccosh")
def _arcsin(node, k):
    name = node.prim.name   # y' √(±1 ∓ u²) = ±u'
    offset, sign = {"arcsin": (1.0, -1.0), "arccos": (1.0, -1.0),
                    "arcsinh": (1.0, 1.0), "arccosh": (-1.0, 1.0)}[name]
    u0 = node.x[0][0]
    first = (lambda: _prim("sqrt")(u0 - 1.0) * _prim("sqrt")(u0 + 1.0)) \
        if name == "arccosh" else None   # NumPy's branch: √(z−1)·√(z+1), not √(z²−1)
    w = _sqrt_series(node, k, _square_of(node, k, "inner", offset, sign), first)
    if name == "arccos":   # arccos = π/2 − arcsin: the recurrence of −y
        z = [-c for c in node.y]
        return -ode_quotient(node.x[0], w, z, k)
    return ode_quotient(node.x[0], w, node.y, k)


@_recurrence("erf", "erfc")
def _erf(node, k):
    u = node.x[0]   # erf' = (2/√π) exp(−u²): e = exp(v), v = −u²
    v = _square_of(node, k, "v", 0.0, -1.0)
    out = ode_product(u, exp_series(node, "e", v, k - 1), k) * (2.0 / math.sqrt(math.pi))
    return -out if node.prim.name == "erfc" else out


# --- the generic kinds ----------------------------------------------------------------
@_kinded("linear")
def _linear(node, k):
    """A primitive linear in its traced arguments: its JVP applied to the coefficients."""
    ans = node.ans
    out = push_tangents(node.prim, [c[k] if t else None for c, t in zip(node.x, node.traced)],
                        ans, node.primals, node.params)
    if node.multi:
        return tuple(_zeros_like(a) if o is None else o for o, a in zip(out, ans)) \
            if out is not None else tuple(_zeros_like(a) for a in ans)
    return _zeros_like(ans) if out is None else out


@_kinded("multilinear")
def _multilinear(node, k):
    r""":math:`y_k = \sum_{j_1 + \dots + j_m = k} f(x^{(1)}_{j_1}, \dots, x^{(m)}_{j_m})`,
    constants at order 0 only."""
    traced = [i for i, t in enumerate(node.traced) if t]
    total = None
    for split in _compositions(k, len(traced)):
        args = [c[0] for c in node.x]
        for i, j in zip(traced, split):
            args[i] = node.x[i][j]
        total = _acc(total, node.prim(*args, **node.params))
    return total


def _compositions(k, m):
    """Every way of writing k as an ordered sum of m non-negative integers."""
    for cuts in itertools.combinations(range(k + m - 1), m - 1):
        prev, parts = -1, []
        for c in cuts + (k + m - 1,):
            parts.append(c - prev - 1)
            prev = c
        yield parts


class _Shift:
    r"""The derivative series of a traced operand: :math:`x'_m = (m+1)\,x_{m+1}` (its
    coefficient ``m`` computed when the sub-tape sweeps order ``m``)."""

    __slots__ = ("src", "y")

    def __init__(self, src):
        self.src = src
        self.y = [src[1]]

    def step(self, m):
        self.y.append(self.src[m + 1] * float(m + 1))


@_kinded("fallback")
def _fallback(node, k):
    r"""Coefficient ``k`` from the JVP rule run on series: :math:`y_k = (y')_{k-1}/k`,
    with :math:`y' = \mathrm{JVP}(x, y; x')` recorded once (order 1) on a sub-tape and
    swept one order further for each later ``k``."""
    st = node.state
    if "tape" not in st:
        trace = node.trace
        tape = st["tape"] = []
        with trace.recording(tape):
            st["R"] = _derivative_series(node, trace, tape)
    else:
        for n in st["tape"]:
            n.step(k - 1)
    R = st["R"]
    if node.multi:
        return tuple(_coef(r, k - 1, a) / float(k) for r, a in zip(R, node.ans))
    return _coef(R, k - 1, node.ans) / float(k)


def _coef(r, m, like):
    if r is None:
        return _zeros_like(like)
    if isinstance(r, list):   # a series' coefficient list
        return r[m]
    return r if m == 0 else _zeros_like(like)


def _derivative_series(node, trace, tape):
    prim, params = node.prim, node.params
    args, tangents = [], []
    for c, t in zip(node.x, node.traced):
        if t:
            args.append(Series(trace, c))
            shift = _Shift(c)
            tape.append(shift)
            tangents.append(Series(trace, shift.y))
        else:
            args.append(c[0])
            tangents.append(None)
    ans = tuple(Series(trace, c) for c in node.y) if node.multi else Series(trace, node.y)
    out = push_tangents(prim, tangents, ans, args, params)
    if node.multi:
        return [None] * len(node.y) if out is None else [_as_list(o, trace) for o in out]
    return _as_list(out, trace)


def _as_list(r, trace):
    """A rule's result: a series of this trace as its coefficient list, else as is."""
    if isinstance(r, Series) and r._trace is trace:
        return r.coefs
    return r


def _missing(prim):
    @_kinded("missing")
    def rule(node, k):
        raise missing_rule(prim, 0, "jvp")
    return rule


def taylor_rule(prim):
    """``prim``'s rule in the ``"taylor"`` table, chosen (and filed) on first use."""
    rule = prim.rules.get(TAYLOR)
    if rule is None:
        rule = prim.rules[TAYLOR] = _choose(prim)
    return rule


def _choose(prim):
    name = prim.name
    if name in RECURRENCES and prim is REGISTRY.get(name):
        return RECURRENCES[name]
    derivs = prim.derivs
    affine = derivs is not None and all(d is None or d.const is not None for d in derivs)
    if prim.linear or affine or (name in LINEAR_ALSO and prim is REGISTRY.get(name)):
        return _linear
    if name in MULTILINEAR and prim is REGISTRY.get(name):
        return _multilinear
    if prim.rules.get(JVP_ALL) is not None or prim.rules.get(JVP):
        return _fallback
    return _missing(prim)


def coverage():
    """Each registry primitive's kind of Taylor rule.

    The kind :func:`taylor_rule` chooses (and files) for it: a recurrence of its own
    (:data:`RECURRENCES`, with :mod:`.special`'s), linear, multilinear, or the fallback
    through its JVP rule; ``dualad.verification.taylor`` tabulates it in
    docs/taylor_rules.md.

    Returns
    -------
    dict
        ``{name: kind}``, kind one of ``"recurrence"``, ``"linear"``, ``"multilinear"``,
        ``"fallback"``, ``"zero"`` (a zero-derivative primitive: constant series) or
        ``"missing"`` (no JVP rule either).
    """
    return {name: "zero" if p.zero_derivative else taylor_rule(p).kind
            for name, p in sorted(REGISTRY.items())}
