"""The SymPy oracle: the registry interpreted on symbolic values.

``symbolic_outputs(f, shapes)`` runs a user's NumPy function on arrays of real
SymPy symbols; every primitive it meets is replaced by its SymPy translation
(``Primitive.sympy``), and a primitive without one raises an error naming it.

Derivatives are then had two ways:

(a) SymPy's own: ``sympy.diff`` / ``Matrix.jacobian`` / ``hessian`` of those
    expressions;
(b) as dualad computes them: forward mode and reverse mode run ON the symbolic
    values, so every JVP and VJP rule is applied to SymPy expressions and the
    result is the derivative exactly as the rules build it.

``compare`` checks (b) against (a): symbolically (``simplify`` of the
difference, or ``equals``) and, where SymPy is inconclusive, numerically at
several random points of the domain, and says which decided. Kinks: ``Abs``,
``sign``, ``Max`` differentiate to distributions (DiracDelta, Heaviside) in
SymPy; compare away from kinks (the numeric fallback samples generic points)
and check the documented kink conventions separately.
"""
from __future__ import annotations

__all__ = ["Sym", "SymbolicTrace", "symbols_like", "symbolic_outputs", "sympy_jacobian",
           "rules_jacobian", "compare", "compare_at", "numeric_jacobian_check",
           "sympy_hessian"]

import itertools

import numpy as np

import dualad
from dualad.extend import Box, PrimalBox, Trace, shape_of


def _sp():
    import sympy
    return sympy


class Sym(PrimalBox):
    """A symbolic value: an object array of SymPy expressions (its primal, ``expr``)."""

    __slots__ = ()
    expr = PrimalBox.primal   # the same slot, under the name the oracle's code reads

    @property
    def dtype(self):
        return np.dtype(np.float64)


class SymbolicTrace(Trace):
    """Interprets every primitive by its SymPy translation."""

    __slots__ = ()

    def process(self, prim, args, params):
        sp = _sp()
        translate = prim.sympy
        if translate is None and prim.linear:
            # Structural linear primitives (scatter, embed, ...) work on object arrays as is.
            translate = lambda sp, *xs, **kw: prim.impl(*xs, **kw)  # noqa: E731
        if translate is None:
            raise NotImplementedError(f"the SymPy oracle has no translation for primitive "
                                      f"'{prim.name}'")
        vals = [np.asarray(a.expr, dtype=object) if isinstance(a, Sym) and a._trace is self
                else (a if isinstance(a, Box) else _to_obj(a)) for a in args]
        if prim.elementwise:
            fn = np.frompyfunc(lambda *xs: translate(sp, *xs, **params), len(vals), 1)
            out = fn(*vals)
        else:
            out = translate(sp, *vals, **params)
        out = np.asarray(out, dtype=object)
        if out.shape == () and not isinstance(out.item(), sp.Basic):
            out = np.asarray(sp.sympify(out.item(), strict=True), dtype=object)
        return Sym(self, out)


def _to_obj(a):
    if isinstance(a, np.ndarray) and a.dtype == bool:
        return a
    if isinstance(a, (np.ndarray, np.generic, float, int)):
        sp = _sp()
        arr = np.asarray(a)
        if arr.dtype.kind in "fiu":
            return np.vectorize(lambda v: sp.Float(v) if arr.dtype.kind == "f" else sp.Integer(v),
                                otypes=[object])(arr) if arr.size else arr.astype(object)
    return a


def symbols_like(shape, name):
    """An object array of real symbols ``name_0, name_1, ...`` of the given shape."""
    sp = _sp()
    n = int(np.prod(shape, dtype=np.int64))
    syms = [sp.Symbol(f"{name}_{k}", real=True) for k in range(n)] if shape != () else \
        [sp.Symbol(name, real=True)]
    return np.array(syms, dtype=object).reshape(shape)


def _run(f, shapes):
    trace = SymbolicTrace()
    syms = [symbols_like(s, f"x{i}") for i, s in enumerate(shapes)]
    out = f(*[Sym(trace, s) for s in syms])
    expr = out.expr if isinstance(out, Sym) else np.asarray(out, dtype=object)
    return trace, syms, expr


def symbolic_outputs(f, shapes):
    """``(symbols per argument, output expressions)`` of ``f`` on real symbols."""
    _, syms, expr = _run(f, shapes)
    return syms, expr


def sympy_jacobian(f, shapes):
    """SymPy's Jacobian of the flattened output with respect to all flattened inputs."""
    sp = _sp()
    syms, expr = symbolic_outputs(f, shapes)
    flat_in = [s for a in syms for s in np.ravel(a)]
    return sp.Matrix(list(np.ravel(expr))).jacobian(flat_in), flat_in


def rules_jacobian(f, shapes, mode="forward"):
    """The Jacobian as dualad's own rules compute it, on symbolic values."""
    sp = _sp()
    trace = SymbolicTrace()
    syms = [symbols_like(s, f"x{i}") for i, s in enumerate(shapes)]
    boxes = tuple(Sym(trace, s) for s in syms)
    flat_in = [s for a in syms for s in np.ravel(a)]
    n = len(flat_in)
    out_expr = np.asarray(_unsym(f(*boxes)), dtype=object)
    m = out_expr.size
    J = sp.zeros(m, n)
    col = 0
    for i, s in enumerate(shapes):
        size = int(np.prod(s, dtype=np.int64))
        if mode == "forward":
            basis = np.eye(size).reshape((size,) + tuple(s))
            tangents = tuple(basis if j == i else np.zeros((size,) + tuple(shapes[j]))
                             for j in range(len(shapes)))
            _, t = dualad.jvp(f, boxes, tangents)
            t = np.asarray(_unsym(t), dtype=object).reshape(size, m)
            for k in range(size):
                for r in range(m):
                    J[r, col + k] = sp.sympify(t[k, r], strict=True)
        col += size
    if mode == "reverse":
        _, pullback = dualad.vjp(f, *boxes)
        cts = pullback(np.eye(m).reshape((m,) + out_expr.shape))
        col = 0
        for i, s in enumerate(shapes):
            size = int(np.prod(s, dtype=np.int64))
            c = np.asarray(_unsym(cts[i]), dtype=object).reshape(m, size)
            for r in range(m):
                for k in range(size):
                    J[r, col + k] = sp.sympify(c[r, k], strict=True)
            col += size
    return J, flat_in


def _unsym(v):
    while isinstance(v, Box):
        v = v._inner
    return v


def compare(f, shapes, domain=None, points=5, seed=0, mode="forward", simplify=True, at=None):
    """Compare the rules' symbolic Jacobian with SymPy's.

    Returns ``(ok, how)`` where ``how`` is ``"symbolic"`` when SymPy proved the
    two equal (or different), ``"numeric"`` when it fell back to agreement at
    ``points`` random points in ``domain`` (a ``(lo, hi)`` pair or a list per
    argument), or at ``at`` (one value per argument) and small perturbations of it.
    """
    sp = _sp()
    J_sym, xs = sympy_jacobian(f, shapes)
    J_ad, xs2 = rules_jacobian(f, shapes, mode=mode)
    names = {str(s): s for s in xs}
    J_ad = J_ad.xreplace({s: names[str(s)] for s in xs2})
    diff = J_ad - J_sym
    if simplify and diff.has(sp.Piecewise, sp.Heaviside, sp.DiracDelta):
        simplify = False  # kinks: SymPy's distributions; decide numerically away from them
    if simplify:
        try:
            # Large differences go straight to the numeric fallback: simplify can take
            # minutes on them without deciding.
            zero = all(sp.count_ops(e) <= 60 and sp.simplify(e) == 0 for e in diff)
        except Exception:  # noqa: BLE001 - SymPy may fail on special functions
            zero = False
        if zero:
            return True, "symbolic"
    rng = np.random.default_rng(seed)
    fn_a = sp.lambdify(xs, J_ad, modules="numpy")
    fn_b = sp.lambdify(xs, J_sym, modules="numpy")
    doms = _domains(domain, shapes)
    for k in range(points):
        if at is not None:
            base = np.concatenate([np.ravel(np.asarray(v, dtype=float)) for v in at])
            vals = list(base * (1.0 + 1e-3 * k * rng.standard_normal(base.shape)))
        else:
            vals = [rng.uniform(lo, hi) for (lo, hi), s in zip(doms, shapes)
                    for _ in range(int(np.prod(s, dtype=np.int64)))]
        with np.errstate(all="ignore"):
            a = np.asarray(fn_a(*vals), dtype=complex)
            b = np.asarray(fn_b(*vals), dtype=complex)
        if not np.allclose(a, b, rtol=1e-8, atol=1e-10):
            return False, "numeric"
    return True, "numeric"


def _domains(domain, shapes):
    if domain is None:
        return [(-1.5, 1.5)] * len(shapes)
    if isinstance(domain, tuple) and len(domain) == 2 and not isinstance(domain[0], tuple):
        return [domain] * len(shapes)
    return [(-1.5, 1.5) if d is None else (max(d[0], -3.0), min(d[1], d[0] + 3.0))
            for d in domain]


def _evaluate_at(sp, J_sym, xs, point):
    """``J_sym`` at ``point``: SymPy evaluates it with the point's floats substituted,
    else (something left unevaluated, complex or not finite) NumPy evaluates the
    lambdified expression. Substituting first avoids lambdify's code printing, which
    simplifies every ``Piecewise`` condition of a kinked function (``Max``: seconds)."""
    at = J_sym.xreplace({x: sp.Float(float(c)) for x, c in zip(xs, point)})
    try:
        J = np.array(at.evalf(), dtype=float)
    except (TypeError, ValueError):
        J = None
    if J is not None and np.all(np.isfinite(J)):
        return J
    return np.asarray(sp.lambdify(xs, J_sym, modules="numpy")(*point), dtype=float)


def compare_at(f, values, rtol=1e-9, atol=1e-11):
    """AD Jacobian (forward mode) against SymPy's Jacobian evaluated at ``values``."""
    sp = _sp()
    values = [np.asarray(v, dtype=float) for v in values]
    J_sym, xs = sympy_jacobian(f, [v.shape for v in values])
    J_num = _evaluate_at(sp, J_sym, xs, [c for v in values for c in v.ravel()])
    cols = []
    for i, v in enumerate(values):
        basis = np.eye(v.size).reshape((v.size,) + v.shape)
        tangents = tuple(basis if j == i else np.zeros((v.size,) + w.shape)
                         for j, w in enumerate(values))
        _, t = dualad.jvp(f, tuple(values), tangents)
        cols.append(np.asarray(t).reshape(v.size, -1).T)
    J_ad = np.concatenate(cols, axis=1)
    return bool(np.allclose(J_ad, J_num.reshape(J_ad.shape), rtol=rtol, atol=atol))


def numeric_jacobian_check(f, x, points=None):
    """AD Jacobian (forward and reverse) against SymPy's, evaluated at ``x`` (lambdify)."""
    sp = _sp()
    x = np.asarray(x, dtype=float)
    J_sym, xs = sympy_jacobian(f, [x.shape])
    J_num = np.asarray(sp.lambdify(xs, J_sym, modules="numpy")(*x.ravel()), dtype=float)
    size = x.size
    _, jf = dualad.jvp(f, (x,), (np.eye(size).reshape((size,) + x.shape),))
    J_fwd = np.moveaxis(np.asarray(jf), 0, -1).reshape(J_num.shape)
    return np.allclose(J_fwd, J_num, rtol=1e-10, atol=1e-12), J_fwd, J_num


def sympy_hessian(f, shape):
    sp = _sp()
    syms, expr = symbolic_outputs(f, [shape])
    xs = list(np.ravel(syms[0]))
    return sp.hessian(sp.sympify(np.ravel(expr)[0], strict=True), xs), xs


_ = itertools, shape_of
