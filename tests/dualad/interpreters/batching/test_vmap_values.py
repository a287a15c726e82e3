"""dualad.vmap where code reads VALUES: masks, counts, pivots, permutations and index arrays
computed from a batched value must be one per example (``primal_value`` would hand on
the whole batch as one array: silently wrong), and index arrays batched by vmap gather
per example (dualad.ops.core.gather). Oracles: NumPy/SciPy per example, closed forms and
finite differences.
"""
from __future__ import annotations


import numpy as np
import pytest

import dualad
from vmap_helpers import LoopSpy
from dualad import grad, hvp, jvp, vjp, vmap

RNG = np.random.default_rng(1819)



@pytest.mark.parametrize("fn", [
    np.nansum, np.nanmean, np.nanmax, np.nanvar,
    lambda x: np.nansum(x, where=x < 1),
    lambda x: np.select([x > 0.5, x < -0.5], [x, -x], default=0.0),
    lambda x: np.round(x, 1), lambda x: np.linalg.norm(x, 0), lambda x: np.frexp(x)[0],
    lambda x: np.isclose(x, X_NAN[0, 0]) * 1.0, lambda x: np.argsort(x) * 1.0],
    ids=["nansum", "nanmean", "nanmax", "nanvar", "nansum-where", "select", "round",
         "norm0", "frexp", "isclose", "argsort"])
def test_value_dependent_masks_are_per_example(fn):
    """Functions that compute a mask, count or index from the values (not a derivative):
    under vmap each example gets its own (a whole-batch mask would be silently wrong)."""
    want = np.stack([fn(x) for x in X_NAN])
    got = vmap(fn)(X_NAN)
    assert np.shape(got) == np.shape(want)
    np.testing.assert_allclose(got, want, equal_nan=True)


X_NAN = RNG.normal(size=(4, 3))
X_NAN[1, 2] = np.nan
X_NAN[2, 0] = 0.0


def test_gradient_of_nan_reductions_per_example():
    g = vmap(grad(np.nansum))(X_NAN)
    np.testing.assert_array_equal(g, np.where(np.isnan(X_NAN), 0.0, 1.0))


def test_boolean_operators_on_batched_masks():
    X = RNG.normal(size=(4, 5))
    got = vmap(lambda x: np.where(~(x > 0) | (x > 1) & (x < 2) ^ (x < -1), x, 0.0))(X)
    np.testing.assert_allclose(got, np.where(~(X > 0) | (X > 1) & (X < 2) ^ (X < -1), X, 0.0))
    with pytest.raises(TypeError, match="boolean batched"):
        vmap(lambda x: ~x)(X)


@pytest.mark.parametrize("fn", [
    lambda x: np.sum(np.sort(x) * np.arange(4.0)), np.median,
    lambda x: np.quantile(x, 0.3)], ids=["sort", "median", "quantile"])
def test_rules_that_read_values_run_per_example_under_vmap_of_grad(fn):
    """sort's rules plan a permutation from x's values (per_example_rule): under
    vmap(grad) each example gets its own permutation. Oracle: finite differences."""
    X = RNG.normal(size=(3, 4))
    g = vmap(grad(fn))(X)
    eps = 1e-6
    for k in range(3):
        fd = [(fn(X[k] + eps * e) - fn(X[k] - eps * e)) / (2 * eps) for e in np.eye(4)]
        np.testing.assert_allclose(g[k], fd, rtol=1e-6, atol=1e-8)

def test_pivots_and_ranks_are_per_example():
    """LU's permutation and lstsq's rank are computed from the values: one per example.
    Oracle: SciPy/NumPy on each example; gradients by finite differences."""
    import scipy.linalg
    import dualad.scipy.linalg as dsl
    A = RNG.normal(size=(3, 3, 3)) + 2 * np.eye(3)
    b = RNG.normal(size=3)

    def solve(a):
        return dsl.lu_solve(dsl.lu_factor(a), b)
    np.testing.assert_allclose(vmap(solve)(A),
                               [scipy.linalg.lu_solve(scipy.linalg.lu_factor(a), b)
                                for a in A], rtol=1e-12)
    np.testing.assert_allclose(vmap(lambda a: dsl.lu(a)[0])(A),
                               [scipy.linalg.lu(a)[0] for a in A])
    for k, g in enumerate(vmap(grad(lambda a: np.sum(np.sin(solve(a)))))(A)):
        check = np.zeros_like(g)
        for idx in np.ndindex(3, 3):
            e = np.zeros((3, 3))
            e[idx] = 1e-6
            check[idx] = (np.sum(np.sin(np.linalg.solve(A[k] + e, b)))
                          - np.sum(np.sin(np.linalg.solve(A[k] - e, b)))) / 2e-6
        np.testing.assert_allclose(g, check, rtol=1e-5, atol=1e-7)
    R = RNG.normal(size=(3, 4, 4))
    R[1, 3] = R[1, 0]      # rank 3
    np.testing.assert_array_equal(vmap(np.linalg.matrix_rank)(R), np.linalg.matrix_rank(R))
    tall = RNG.normal(size=(3, 5, 2))
    x = vmap(lambda a: np.linalg.lstsq(a, np.ones(5), rcond=None)[0])(tall)
    np.testing.assert_allclose(x, [np.linalg.lstsq(a, np.ones(5), rcond=None)[0]
                                   for a in tall], rtol=1e-10)


def test_unwrap_and_eigenvector_phases_per_example():
    P = np.cumsum(RNG.normal(size=(3, 6)) * 2, axis=1)
    np.testing.assert_allclose(vmap(np.unwrap)(P), np.unwrap(P, axis=1))
    np.testing.assert_allclose(vmap(grad(lambda p: np.sum(np.unwrap(p) ** 2)))(P),
                               2 * np.unwrap(P, axis=1))
    A = RNG.normal(size=(3, 3, 3))

    def f(a):   # depends on LAPACK's phase convention of the eigenvectors
        v = np.linalg.eig(a)[1]
        return np.sum(np.real(v * np.conj(v[0])))
    np.testing.assert_allclose(vmap(f)(A), [f(a) for a in A], rtol=1e-12)
    for k, g in enumerate(vmap(grad(f))(A)):
        fd = np.zeros((3, 3))
        for idx in np.ndindex(3, 3):
            e = np.zeros((3, 3))
            e[idx] = 1e-6
            fd[idx] = (f(A[k] + e) - f(A[k] - e)) / 2e-6
        np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-7)


def test_batched_indices_gather_per_example():
    X = RNG.normal(size=(3, 4))
    idx = np.array([[0, 1], [2, 3], [1, 1]])
    want = np.take_along_axis(X, idx, axis=1)
    np.testing.assert_array_equal(vmap(lambda x, i: np.take(x, i))(X, idx), want)
    np.testing.assert_array_equal(vmap(lambda x, i: x[i])(X, idx), want)
    np.testing.assert_array_equal(vmap(lambda x, i: np.take_along_axis(x, i, 0))(X, idx), want)
    np.testing.assert_array_equal(vmap(lambda x: x[np.argmax(x)])(X), X.max(1))
    # differentiated from outside vmap: the tape is below the batch
    g = grad(lambda X: np.sum(vmap(lambda x: x[np.argmax(x)])(X)))(X)
    np.testing.assert_array_equal(g, (X == X.max(1, keepdims=True)) * 1.0)
    # from inside (grad under vmap): the index is an argument of gather (dualad.ops.core.gather)
    np.testing.assert_array_equal(vmap(grad(lambda x: x[np.argmax(x)] * 2))(X),
                                  2.0 * (X == X.max(1, keepdims=True)))
    with pytest.raises(IndexError, match="boolean mask index batched by vmap"):
        vmap(lambda x: x[x > 0])(X)


def test_per_example_gradients_of_an_embedding_lookup():
    """E[token] with a batch of tokens, E shared: the per-example gradient scatters into
    the looked-up rows only. Closed form: ∂Σ tanh(E[t])² / ∂E[r] = Σ_{t_i = r} 2 tanh·sech²."""
    E = RNG.normal(size=(5, 3))
    tokens = np.array([[0, 4], [1, 1], [3, 0]])

    def loss(E, t):
        return np.sum(np.tanh(E[t]) ** 2)
    g = vmap(grad(loss), in_axes=(None, 0))(E, tokens)
    for b, t in enumerate(tokens):
        want = np.zeros_like(E)
        for r in t:
            th = np.tanh(E[r])
            want[r] += 2 * th * (1 - th ** 2)
        np.testing.assert_allclose(g[b], want, rtol=1e-12)


def test_batched_non_adjacent_indices_in_vector_mode():
    """m[j, :, k] (advanced indices apart: NumPy puts their axes first) with a batch of
    index pairs, pushed forward with two tangent directions at once. Oracle: the same
    linear map on plain arrays, m ↦ m[j, :, k]."""
    M = RNG.normal(size=(3, 4, 5, 6))
    j = np.array([[0, 1], [2, 2], [3, 0]])
    k = np.array([[5, 1], [0, 2], [3, 3]])
    T = RNG.normal(size=(3, 2, 4, 5, 6))
    got = vmap(lambda m, j, k, t: jvp(lambda mm: mm[j, :, k], (m,), (t,))[1])(M, j, k, T)
    want = np.stack([np.stack([T[b, d][j[b], :, k[b]] for d in range(2)]) for b in range(3)])
    np.testing.assert_allclose(got, want)
    u = RNG.normal(size=(3, 2, 5))    # cotangents of m[j, :, k], pulled back
    got = vmap(lambda m, j, k, u: vjp(lambda mm: mm[j, :, k], m)[1](u)[0])(M, j, k, u)
    for b in range(3):
        want = np.zeros((4, 5, 6))
        np.add.at(want, (j[b], slice(None), k[b]), u[b])
        np.testing.assert_allclose(got[b], want)
    U = RNG.normal(size=(3, 2, 2, 5))  # two cotangents per example, swept at once
    got = vmap(lambda m, j, k, u: vjp(lambda mm: mm[j, :, k], m)[1](u)[0])(M, j, k, U)
    for b in range(3):
        for d in range(2):
            want = np.zeros((4, 5, 6))
            np.add.at(want, (j[b], slice(None), k[b]), U[b, d])
            np.testing.assert_allclose(got[b, d], want)


def test_value_planned_rules_in_second_derivatives_under_vmap():
    """sort's rules permute by x's values (sort_permute, a primitive of x): vmap(hvp) runs
    them with each example's own permutation, and so does the outside form."""
    X, V = RNG.normal(size=(3, 4)), RNG.normal(size=(3, 4))

    def f(x):
        return np.sum(np.sort(x) ** 3 * np.arange(4.0))
    # ∇²f v = 6·w·s ⊙ (Pv) permuted back, s the sorted x and w the weights
    want = []
    for x, v in zip(X, V):
        p = np.argsort(x)
        h = np.zeros(4)
        h[p] = 6 * np.arange(4.0) * x[p] * v[p]
        want.append(h)
    np.testing.assert_allclose(hvp(lambda Z: np.sum(vmap(f)(Z)), X, V), want, rtol=1e-12)
    np.testing.assert_allclose(vmap(lambda x, v: hvp(f, x, v))(X, V), want, rtol=1e-12)


@pytest.mark.parametrize("index", [
    lambda x, i, j: x[i], lambda x, i, j: x[:, i], lambda x, i, j: x[i, 2],
    lambda x, i, j: x[None, i], lambda x, i, j: x[i, :, j], lambda x, i, j: x[1:, i],
    lambda x, i, j: x[i, j], lambda x, i, j: x[..., j], lambda x, i, j: x[i][:, j]],
    ids=["x[i]", "x[:,i]", "x[i,2]", "x[None,i]", "x[i,:,j]", "x[1:,i]", "x[i,j]",
         "x[...,j]", "x[i][:,j]"])
@pytest.mark.parametrize("x_axis", [0, None])
def test_batched_index_forms_one_gather(index, x_axis, monkeypatch):
    """Each form of x[i] with a batch of index arrays, x batched or shared, against NumPy
    per example; values and the gradient (scatter) both, without the loop where the
    index block leads (or x is shared)."""
    X = RNG.normal(size=(3, 4, 4, 4))
    I = RNG.integers(0, 4, size=(3, 2))
    J = RNG.integers(0, 4, size=(3, 2))
    xs = X if x_axis == 0 else X[0]
    if x_axis == 0:   # (a plain NumPy x indexed by a batched i is NumPy's own __getitem__)
        got = vmap(index, in_axes=(x_axis, 0, 0))(xs, I, J)
        want = np.stack([index(X[b], I[b], J[b]) for b in range(3)])
        np.testing.assert_array_equal(got, want)
    g = vmap(grad(lambda x, i, j: np.sum(np.sin(index(x, i, j)))), in_axes=(x_axis, 0, 0))(
        xs, I, J)
    for b in range(3):
        x = X[b] if x_axis == 0 else X[0]
        want = np.zeros_like(x)
        idx = np.arange(x.size).reshape(x.shape)
        np.add.at(want.reshape(-1), index(idx, I[b], J[b]).ravel(),
                  np.cos(index(x, I[b], J[b])).ravel())
        np.testing.assert_allclose(g[b], want, rtol=1e-12)


def test_plain_array_indexed_by_a_batched_index_says_what_to_write():
    E = RNG.normal(size=(6, 3))
    import dualad.numpy as dnp
    with pytest.raises(TypeError, match=r"dualad\.numpy\.take\(x, i, axis=\.\.\.\)"):
        vmap(lambda t: E[t])(np.array([[0, 1], [2, 3]]))
    got = vmap(lambda t: dnp.take(E, t, axis=0))(np.array([[0, 1], [2, 3]]))
    np.testing.assert_array_equal(got, E[np.array([[0, 1], [2, 3]])])
    got = vmap(lambda E, t: E[t], in_axes=(0, 0))(np.stack([E, E]), np.array([[0, 1], [2, 3]]))
    np.testing.assert_array_equal(got, E[np.array([[0, 1], [2, 3]])])


def test_embedding_gradients_do_not_loop(monkeypatch):
    E = RNG.normal(size=(6, 3))
    tokens = RNG.integers(0, 6, size=(8, 2))
    spy = LoopSpy(monkeypatch)
    vmap(grad(lambda E, t: np.sum(np.tanh(E[t]) ** 2)), in_axes=(None, 0))(E, tokens)
    assert {"gather", "scatter"} <= set(spy.looped), spy.looped
    assert not any(spy.looped.values()), spy.looped


@pytest.mark.parametrize("template", ["adjacent", "apart"])
def test_gather_and_scatter_pass_the_rule_checker(template):
    """The rule checker (both modes, order 2) on gather/scatter, whose rules are each
    other; the index arrays are their non-differentiable arguments."""
    from dualad.verification.rules import check_rule
    from dualad.ops.core.gather import Slot, gather_p, scatter_p
    j, k = np.array([0, 2, 2]), np.array([1, 0, 3])
    tpl = (slice(None), Slot(0), Slot(1)) if template == "adjacent" else \
        (Slot(0), slice(None), Slot(1))
    x = RNG.normal(size=(3, 3, 4))
    check_rule(gather_p, args=(x, j, k), params={"template": tpl},
               sympy=False).raise_if_failed()
    u = np.asarray(gather_p(x, j, k, template=tpl))
    check_rule(scatter_p, args=(RNG.normal(size=u.shape), j, k),
               params={"template": tpl, "shape": x.shape}, sympy=False).raise_if_failed()
