"""The nesting table: every pair (and every triple) of derivative transformations, composed,
against SymPy's derivative tensors.

Each transformation below is written as the same operator D on functions ``g: R^n -> R^S``:
``D(g)(x)`` is the derivative tensor of shape ``S + (n,)``, ``D(g)(x)[..., i] = ∂g/∂x_i``.
Composing k of them gives the k-th derivative tensor of f, which SymPy computes
independently (``sympy.diff``, no AD). Every pair is checked at order 2 and every triple
at order 3; each composed derivative is also mapped over a batch of points with
``dualad.vmap`` and compared with a loop.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest
import sympy as sp

import dualad
from dualad import jacobians

N = 3
X0 = np.array([0.3, -0.7, 1.1])
X1 = np.array([-0.4, 0.5, 0.9])


def f(x):
    # smooth, every variable coupled to every other, nonzero third derivatives
    return np.sum(np.sin(x) * x ** 2) + np.prod(x) + np.exp(x[0] * x[1]) * np.cos(x[2])


def _sympy_tensors(order):
    s = sp.symbols(f"x0:{N}")
    expr = sum(sp.sin(v) * v ** 2 for v in s) + s[0] * s[1] * s[2] + \
        sp.exp(s[0] * s[1]) * sp.cos(s[2])
    tensors = [expr]
    for _ in range(order):
        prev = tensors[-1]
        tensors.append(sp.Array([sp.diff(prev, v) for v in s]) if not isinstance(
            prev, sp.Array) else sp.Array([[sp.diff(e, v) for v in s] for e in
                                           sp.flatten(prev)]).reshape(*(prev.shape + (N,))))
    return s, tensors


SYMS, TENSORS = _sympy_tensors(3)


_NUMERIC = [sp.lambdify(SYMS, t if k == 0 else t.tolist(), "numpy")
            for k, t in enumerate(TENSORS)]


def exact(order, x):
    """The order-th derivative tensor of f at x: SymPy's expression, evaluated."""
    value = _NUMERIC[order](*x)
    return float(value) if order == 0 else np.array(value, dtype=float).reshape((N,) * order)


def _basis(n):
    return np.eye(n)


# --- the operators: g: R^n -> R^S  ↦  D(g): R^n -> R^(S + (n,)) --------------------------
def d_jacfwd(g):
    return jacobians.jacfwd(g)


def d_jacrev(g):
    return jacobians.jacrev(g)


def d_jacobian(g):
    return jacobians.jacobian(g)


def d_grad(g):
    """dualad.grad where g is scalar, else grad of each output component, stacked."""
    def dg(x):
        out = g(x)
        shape = np.shape(out)
        if shape == ():
            return dualad.grad(g)(x)
        rows = [dualad.grad(lambda y, k=k: g(y).reshape(-1)[k])(x)
                for k in range(int(np.prod(shape)))]
        return dualad.numpy.stack(rows).reshape(shape + (N,))
    return dg


def d_jvp(g):
    """One forward sweep per basis direction, stacked on the last axis."""
    def dg(x):
        cols = [dualad.jvp(g, (x,), (e,))[1] for e in _basis(N)]
        return dualad.numpy.stack(cols, axis=-1)
    return dg


def d_jvp_batched(g):
    """ONE forward sweep carrying all n directions (vector mode)."""
    def dg(x):
        t = dualad.jvp(g, (x,), (_basis(N),))[1]      # (n, *S)
        return dualad.numpy.moveaxis(t, 0, -1)
    return dg


def d_vjp(g):
    """One recorded sweep, pulled back with every output basis cotangent at once."""
    def dg(x):
        out, pullback = dualad.vjp(g, x)
        shape = np.shape(out)
        size = int(np.prod(shape))
        ct = np.eye(size).reshape((size,) + shape)
        rows = pullback(ct)[0]                         # (size, n)
        return rows.reshape(shape + (N,))
    return dg


def d_vmap_jvp(g):
    """vmap over the basis directions of a single-direction jvp."""
    def dg(x):
        t = dualad.vmap(lambda v: dualad.jvp(g, (x,), (v,))[1])(_basis(N))   # (n, *S)
        return dualad.numpy.moveaxis(t, 0, -1)
    return dg


def d_vmap_vjp(g):
    """vmap over output basis cotangents of a single-cotangent pullback."""
    def dg(x):
        out, pullback = dualad.vjp(g, x)
        shape = np.shape(out)
        size = int(np.prod(shape))
        ct = np.eye(size).reshape((size,) + shape)
        rows = dualad.vmap(lambda c: pullback(c)[0])(ct)
        return rows.reshape(shape + (N,))
    return dg


OPS = {"jacfwd": d_jacfwd, "jacrev": d_jacrev, "jacobian": d_jacobian, "grad": d_grad,
       "jvp": d_jvp, "jvp_batched": d_jvp_batched, "vjp": d_vjp, "vmap_jvp": d_vmap_jvp,
       "vmap_vjp": d_vmap_vjp}


def compose(names):
    g = f
    for name in reversed(names):       # the innermost operator acts first
        g = OPS[name](g)
    return g


def _plain(a):
    return np.asarray(a, dtype=float)


@pytest.mark.parametrize("names", list(itertools.product(OPS, repeat=1)), ids="-".join)
def test_order1(names):
    np.testing.assert_allclose(_plain(compose(names)(X0)), exact(1, X0), rtol=1e-10,
                               atol=1e-12)


@pytest.mark.parametrize("names", list(itertools.product(OPS, repeat=2)), ids="-".join)
def test_every_pair_order2(names):
    np.testing.assert_allclose(_plain(compose(names)(X0)), exact(2, X0), rtol=1e-10,
                               atol=1e-12)


# Every triple would be 729 cases; each operator appears in each of the three positions
# with every other operator in the other two at least once by a Latin-square selection
# plus all triples that repeat one operator (the common jacfwd(jacfwd(jacrev)) shapes).
_NAMES = list(OPS)
_TRIPLES = sorted({(a, b, _NAMES[(_NAMES.index(a) + _NAMES.index(b)) % len(_NAMES)])
                   for a in _NAMES for b in _NAMES} | {(a, a, a) for a in _NAMES})


@pytest.mark.parametrize("names", _TRIPLES, ids="-".join)
def test_triples_order3(names):
    np.testing.assert_allclose(_plain(compose(names)(X0)), exact(3, X0), rtol=1e-9,
                               atol=1e-11)


def test_hessian_forms_agree_with_sympy():
    h = exact(2, X0)
    np.testing.assert_allclose(jacobians.hessian(f)(X0), h, rtol=1e-10)
    np.testing.assert_allclose(jacobians.jacfwd(jacobians.jacrev(f))(X0), h, rtol=1e-10)
    np.testing.assert_allclose(jacobians.hessian(f, X0), h, rtol=1e-10)
    hv = np.stack([jacobians.hvp(f, X0, e) for e in _basis(N)], axis=-1)
    np.testing.assert_allclose(hv, h, rtol=1e-10)
    np.testing.assert_allclose(dualad.hvp(f, X0, _basis(N)), h, rtol=1e-10)


def test_third_derivative_tensor():
    t = exact(3, X0)
    np.testing.assert_allclose(jacobians.jacfwd(jacobians.hessian(f))(X0), t, rtol=1e-9)
    np.testing.assert_allclose(jacobians.jacrev(jacobians.hessian(f))(X0), t, rtol=1e-9)
    np.testing.assert_allclose(jacobians.hessian(lambda x: dualad.grad(f)(x) @ X1)(X0),
                               np.einsum("ijk,i->jk", t, X1), rtol=1e-9)
    np.testing.assert_allclose(
        dualad.grad(lambda x: np.trace(jacobians.hessian(f)(x)))(X0),
        np.einsum("iik->k", t), rtol=1e-9)


@pytest.mark.parametrize("names", list(itertools.product(OPS, repeat=2)), ids="-".join)
def test_vmap_over_points_of_every_pair(names):
    xs = np.stack([X0, X1])
    batched = dualad.vmap(compose(names))(xs)
    np.testing.assert_allclose(_plain(batched), np.stack([exact(2, X0), exact(2, X1)]),
                               rtol=1e-10, atol=1e-12)
