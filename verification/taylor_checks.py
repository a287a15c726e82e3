"""The Taylor checks at one sample call, for :func:`~dualad.verification.rules.check_rule`
and :func:`~dualad.verification.taylor.check_taylor` (see :mod:`dualad.verification.taylor`
for what is compared and the tolerance)."""
from __future__ import annotations

__all__ = ["check_taylor_sample", "check_constant_series", "taylor_coefficients",
           "sympy_coefficients", "nested_coefficients", "ELEMENTWISE_ORDER", "OTHER_ORDER"]

import math

import numpy as np

import dualad
from dualad.extend import flatten, primal_value

from .sampling import fill_arguments

ELEMENTWISE_ORDER = 6   # SymPy's order for elementwise primitives
OTHER_ORDER = 3         # and for the others (their expressions grow fast)
NESTED_ORDER = 3        # nested forward mode: 2^k work, orders 1..3
FLOOR = 1e-3            # a coefficient is compared relative to itself + FLOOR * the scale
SYMPY_SIZE = 6          # SymPy only where the differentiated arguments have <= this many entries
# Primitives whose SymPy translation is too slow to differentiate to the default order
# (beta: 13 s to order 6 in two arguments, 2.7 s to order 4): the order SymPy checks them to.
SYMPY_ORDER = {"beta": 4}



def _leaves(out):
    return [np.asarray(primal_value(o)) for o in flatten(out)[0]]


def taylor_coefficients(call, vals, diff, kw, vs, order):
    """Taylor mode's coefficients :math:`y_0..y_d` of :math:`t \\mapsto f(x + t v)`: one
    list of ``order + 1`` arrays per output leaf (:func:`dualad.jet`, normalized)."""
    f = lambda *xs: call(*fill_arguments(vals, diff, xs), **kw)  # noqa: E731
    primals = tuple(vals[i] for i in diff)
    series = tuple([v] + [np.zeros_like(v)] * (order - 1) for v in vs)
    y0, ys = dualad.jet(f, primals, series, factorial_scaled=False)
    heads = _leaves(y0)
    terms = _leaves(ys)   # leaf by leaf, d terms each
    return [[h] + terms[j * order:(j + 1) * order] for j, h in enumerate(heads)]


def _line(call, vals, diff, kw, vs):
    """:math:`h(t) = f(x + t v)`."""
    return lambda t: call(*fill_arguments(vals, diff, [vals[i] + t * v for i, v in zip(diff, vs)]),
                          **kw)


def nested_coefficients(call, vals, diff, kw, vs, order=NESTED_ORDER):
    """:math:`h^{(k)}(0)/k!` for ``k = 1..order`` from ``k`` nested forward sweeps in
    :math:`t` (one list of arrays per output leaf)."""
    g = _line(call, vals, diff, kw, vs)
    out = []
    for k in range(1, order + 1):
        g = (lambda h: lambda t: dualad.jvp(h, (t,), (1.0,))[1])(g)
        out.append([leaf / math.factorial(k) for leaf in _leaves(g(0.0))])
    return [list(c) for c in zip(*out)]


def sympy_coefficients(prim, call, vals, diff, kw, vs, order):
    """SymPy's coefficients :math:`y_0..y_d`: the translation on :math:`x + t v`,
    differentiated in :math:`t` and evaluated at 0 (30 digits), as complex arrays per
    output leaf."""
    import sympy as sp
    from .symbolic import Sym, SymbolicTrace
    t = sp.Symbol("t", real=True)
    trace = SymbolicTrace()
    syms = []
    for i, v in zip(diff, vs):
        x = np.asarray(vals[i])
        expr = np.empty(x.shape, dtype=object)
        for idx in np.ndindex(x.shape):
            expr[idx] = _number(sp, x[idx]) + t * _number(sp, np.asarray(v)[idx])
        syms.append(Sym(trace, expr))
    out = call(*fill_arguments(vals, diff, syms), **kw)
    outs = out if isinstance(out, (tuple, list)) else (out,)
    result = []
    for o in outs:
        e = np.asarray(o.expr if isinstance(o, Sym) else o, dtype=object)
        coefs = np.empty((order + 1,) + e.shape, dtype=complex)
        for idx in np.ndindex(e.shape):
            coefs[(slice(None),) + idx] = _series(sp, sp.sympify(e[idx]), t, order)
        result.append(list(coefs))
    return result


def _number(sp, a):
    a = complex(a) if np.iscomplexobj(a) else float(a)
    if isinstance(a, complex):
        return sp.Float(a.real, 30) + sp.I * sp.Float(a.imag, 30)
    return sp.Float(a, 30)


def _series(sp, e, t, order):
    """Taylor coefficients 0..order of the expression ``e`` in ``t`` at 0."""
    out = []
    for k in range(order + 1):
        val = e.subs(t, 0)
        if val.has(sp.nan, sp.zoo, sp.oo, -sp.oo):
            val = sp.limit(e, t, 0)
        out.append(complex(val.evalf(30)) / math.factorial(k))
        if k < order:
            e = sp.diff(e, t)
    return out


def _compare(report, what, got, want, lo, rtol):
    """Add one row: every output leaf's coefficients ``lo..`` of ``got`` against ``want``
    (relative to the coefficient scale)."""
    worst_a = worst_r = 0.0
    where = ""
    for leaf, (g, w) in enumerate(zip(got, want)):
        w = [np.asarray(c) for c in w]
        scale = max(float(np.max(np.abs(c), initial=0.0)) for c in w)
        for k, (gk, wk) in enumerate(zip(g[lo:], w), start=lo):
            err = np.abs(np.asarray(gk) - wk)
            r = float(np.max(err / (np.abs(wk) + FLOOR * scale + 1e-300), initial=0.0))
            if not np.all(np.isfinite(np.asarray(gk))) and np.all(np.isfinite(wk)):
                r = np.inf
            if r > worst_r:
                worst_a, worst_r, where = float(np.max(err, initial=0.0)), r, \
                    f"output {leaf}, order {k}"
    shapes = [(leaf, k, np.shape(c)) for leaf, g in enumerate(got) for k, c in enumerate(g)
              if np.shape(c) != np.shape(g[0])]
    if shapes:
        return report.add(what, False, detail="coefficient shapes differ from the value's "
                          f"{np.shape(got[shapes[0][0]][0])}: (output, order, shape) {shapes[:3]}")
    ok = worst_r <= rtol
    return report.add(what, ok, worst_a, worst_r, detail="" if ok else f"worst at {where}")


def check_constant_series(report, call, vals, diff, kw, tag, rng):
    """A zero-derivative primitive (or ``stop_gradient``): Taylor mode gives its value and
    zero coefficients."""
    vs = [_direction(vals[i], rng) for i in diff]
    try:
        got = taylor_coefficients(call, vals, diff, kw, vs, 3)
    except Exception as e:  # noqa: BLE001
        report.add(f"{tag}: Taylor mode ran", False, detail=f"{type(e).__name__}: {e}")
        return
    plain = _leaves(call(*vals, **kw))
    ok = all(np.array_equal(g[0], p, equal_nan=True) and not any(np.any(c) for c in g[1:])
             for g, p in zip(got, plain))
    report.add(f"{tag}: Taylor mode gives the value and zero coefficients", ok)


def _direction(x, rng):
    x = np.asarray(x)
    v = rng.standard_normal(x.shape)
    if np.iscomplexobj(x):
        v = v + 1j * rng.standard_normal(x.shape)
    return v.astype(x.dtype) if x.shape else x.dtype.type(v)


def check_taylor_sample(report, prim, call, vals, diff, kw, tag, rng, order=None,
                        sympy=True, rtol=1e-9):
    """The Taylor checks at one sample, rows added to ``report``: Taylor mode against nested
    forward mode (orders 1..3), against SymPy (when ``sympy`` and the primitive has a
    translation and few entries; returns whether SymPy ran) and, for an elementwise
    primitive on real arguments, float32 in, float32 coefficients out."""
    vs = [_direction(vals[i], rng) for i in diff]
    elementwise = prim.derivs is not None
    d = order if order is not None else (ELEMENTWISE_ORDER if elementwise else OTHER_ORDER)
    d = max(d, NESTED_ORDER)
    try:
        got = taylor_coefficients(call, vals, diff, kw, vs, d)
    except Exception as e:  # noqa: BLE001 - a crash is a failed check
        report.add(f"{tag}: Taylor mode to order {d} ran", False,
                   detail=f"{type(e).__name__}: {e}")
        return False
    _compare(report, f"{tag}: Taylor coefficients 1..{NESTED_ORDER} vs nested forward mode",
             got, nested_coefficients(call, vals, diff, kw, vs), 1, rtol)
    if elementwise and not any(np.iscomplexobj(vals[i]) for i in diff):
        _check_float32(report, call, vals, diff, kw, tag, vs)
    if not (sympy and prim.sympy is not None) or \
            sum(int(np.size(vals[i])) for i in diff) > SYMPY_SIZE:
        return False
    ds = min(d, SYMPY_ORDER.get(prim.name, d))
    try:
        want = sympy_coefficients(prim, call, vals, diff, kw, vs, ds)
    except Exception as e:  # noqa: BLE001 - a translation SymPy cannot expand: noted
        report.notes.append(f"Taylor vs SymPy not run: {type(e).__name__}: {e}"[:200])
        return False
    _compare(report, f"{tag}: Taylor coefficients 0..{ds} vs SymPy", got, want, 0, rtol)
    return True


def _check_float32(report, call, vals, diff, kw, tag, vs):
    v32 = [np.asarray(v, dtype=np.float32) for v in vs]
    x32 = list(vals)
    for i in diff:
        x32[i] = np.asarray(vals[i], dtype=np.float32)
    plain = [np.asarray(o) for o in flatten(call(*x32, **kw))[0]]
    if any(p.dtype != np.float32 for p in plain):
        return
    try:
        coefs = taylor_coefficients(call, x32, diff, kw, v32, 3)
    except Exception as e:  # noqa: BLE001
        report.add(f"{tag}: float32 Taylor mode ran", False, detail=f"{type(e).__name__}: {e}")
        return
    kinds = {str(np.asarray(c).dtype) for leaf in coefs for c in leaf}
    report.add(f"{tag}: float32 arguments keep float32 Taylor coefficients",
               kinds == {"float32"}, detail=f"coefficient dtypes {sorted(kinds)}")


