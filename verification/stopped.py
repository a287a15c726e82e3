"""The rule checker's branch for primitives whose derivative is zero *by declaration*.

``stop_gradient`` (a primitive with ``stops_gradient = True``) has a value with a
nonzero derivative (the identity's) and rules that say zero: finite differences of
its value are not its derivative, so the numeric comparisons of
:func:`dualad.verification.check_rule` do not apply. What is checked instead, per
differentiable argument x of a sample call y = f(x):

- value: the traced value (forward and reverse mode) equals the plain call;
- forward: the JVP of every basis direction, in one vector-mode sweep, is exactly 0,
  with the tangent's shape (directions + y's shape);
- reverse: the VJP of a random cotangent is exactly 0 (with x's shape);
- traced: inside a transformation y is still a traced value, so what ``f``'s caller
  decides from it is logged (the sparse pattern check, ``jacobians/validity.py``);
- order 2, against closed forms: with h(x) = Σ f(x)·x, ∇h(x) = f(x) (f(x) a constant
  for the derivative), and the derivative of ∇h is 0 (stopped at every level), in
  forward-over-reverse, reverse-over-reverse and forward-over-forward;
- SymPy (small samples): the translation's value equals the plain value, and the
  rules run on symbols give the zero Jacobian, in both modes.
"""
from __future__ import annotations

__all__ = ["check_stopped"]

import numpy as np

import dualad
from dualad.extend import Box, primal_value


def _exact(report, check, got, want):
    got, want = np.asarray(primal_value(got)), np.asarray(want)
    ok = got.shape == want.shape and np.array_equal(got, want)
    err = float(np.max(np.abs(got - want), initial=0.0)) if got.shape == want.shape else np.inf
    report.add(check, ok, err, err,
               "" if ok else f"got shape {got.shape}, expected {want.shape}")


def check_stopped(report, prim, call, vals, diff, kw, tag):
    """Add the checks of the module docstring for one sample to ``report``."""
    report.notes.append(f"{prim.name}: derivative zero by declaration (stops_gradient): "
                        f"checked as zero at every order, not against finite differences")
    plain = np.asarray(call(*vals, **kw))
    for i in diff:
        x = np.asarray(vals[i])

        def f(v, i=i):
            args = list(vals)
            args[i] = v
            return call(*args, **kw)
        n = x.size
        out, T = dualad.jvp(f, (x,), (np.eye(n).reshape((n,) + x.shape),))
        _exact(report, f"{tag}: traced value (forward) of argument {i}", out, plain)
        _exact(report, f"{tag}: zero tangent (JVP) of argument {i}", T,
               np.zeros((n,) + plain.shape))
        out, pullback = dualad.vjp(f, x)
        _exact(report, f"{tag}: traced value (reverse) of argument {i}", out, plain)
        u = np.random.default_rng(0).standard_normal(plain.shape)
        _exact(report, f"{tag}: zero cotangent (VJP) of argument {i}", pullback(u)[0],
               np.zeros(x.shape))
        seen = []
        probe = lambda v: (seen.append(isinstance(f(v), Box)), np.sum(v))[1]  # noqa: E731
        dualad.grad(probe)(x)
        dualad.jvp(probe, (x,), (x,))
        report.add(f"{tag}: output of argument {i} stays traced in reverse and forward mode "
                   f"(decisions on it are logged)", seen == [True, True], detail=str(seen))
        if plain.shape == x.shape:
            _order2(report, f, x, plain, i, tag)
        if n <= 6:
            _sympy(report, f, x, plain, i, tag)


def _order2(report, f, x, plain, i, tag):
    h = lambda v: np.sum(f(v) * v)   # noqa: E731  ∇h = f(x) (a constant), ∇²h = 0
    grad_h = dualad.grad(h)
    _exact(report, f"{tag}: ∇Σf(x)·x = f(x) of argument {i}", grad_h(x), plain)
    v = np.random.default_rng(1).standard_normal(x.shape)
    zero = np.zeros(x.shape)
    _exact(report, f"{tag}: order 2 forward-over-reverse of argument {i}",
           dualad.jvp(grad_h, (x,), (v,))[1], zero)
    _exact(report, f"{tag}: order 2 reverse-over-reverse of argument {i}",
           dualad.grad(lambda w: np.sum(grad_h(w) * v))(x), zero)
    jvp_h = lambda w: dualad.jvp(h, (w,), (v,))[1]   # noqa: E731  ⟨∇h, v⟩ = ⟨f(x), v⟩
    _exact(report, f"{tag}: order 2 forward-over-forward of argument {i}",
           dualad.jvp(jvp_h, (x,), (v,))[1], 0.0)


def _sympy(report, f, x, plain, i, tag):
    import sympy as sp

    from .symbolic import rules_jacobian, symbolic_outputs
    syms, expr = symbolic_outputs(f, [x.shape])
    subs = dict(zip(np.ravel(syms[0]), np.ravel(x)))
    value = np.array([float(sp.sympify(e, strict=True).subs(subs)) for e in np.ravel(expr)])
    _exact(report, f"{tag}: SymPy translation's value of argument {i}", value.reshape(
        plain.shape), plain)
    for mode in ("forward", "reverse"):
        J, _ = rules_jacobian(f, [x.shape], mode=mode)
        report.add(f"{tag}: SymPy oracle ({mode} rules on symbols give the zero Jacobian)",
                   J.is_zero_matrix is True)
