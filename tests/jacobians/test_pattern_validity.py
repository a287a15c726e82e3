"""Sparse Jacobians and Hessians prepared at x0 stay right at other points (issue 15).

A pattern detected at x0 is the structure of the path f took there; where f's
decisions (argmax, comparisons, masks, a Python ``if``) differ at a new point, the
prepared plan must detect the pattern again there, never reuse the old one."""
import numpy as np
import pytest

import dualad
from dualad import jacobians
from dualad.jacobians.optimize import hessian_fn, sparse_hessian_fn, sparse_jacobian_fn


def argmax_scale(v):
    return v * v[np.argmax(v)]


def mask_getitem(v):
    return np.sin(v[v > 0])          # the output's size changes with the mask


def mask_multiply(v):
    """A plain mask as a constant matrix operand: matmul's rule drops its zeros."""
    return np.diag((v > 0) * 1.0) @ np.sin(v) + v[0] * (v[1] > 0)


def python_if(v):
    if v[0] > 0:
        return v * v[1]
    return v * v[2]


def sorted_tail(v):
    s = np.sort(v)
    return v * s[-1] + s[0]


def mask_columns(v):
    keep = np.abs(v) > 1.0
    return np.stack([np.sum(v[keep]) * v[0], v[1] ** 2, np.max(v) * v[2]])


def truthy_if(v):
    while v[3]:                # bool() of a traced value, no comparison: the conversion itself
        return v * v[2]
    return v * v[1]


def method_argmax(v):
    return v * v[v.argmin()]   # the ndarray method


def digitize_index(v):
    return v * v[np.digitize(v[0], [0.0, 2.0])]   # an index function of the values


CASES = [argmax_scale, mask_getitem, mask_multiply, python_if, sorted_tail, mask_columns,
         truthy_if, method_argmax, digitize_index]
X0 = np.array([3.0, 1.5, 2.0, -0.5])
POINTS = [np.array([1.0, 3.0, 2.0, 0.5]), np.array([-1.0, 2.0, -3.0, 4.0]),
          np.array([0.5, -2.0, 1.2, -0.7]), np.array([2.5, 1.0, 3.0, 0.0]), X0.copy()]


def dense(f, x):
    return np.asarray(jacobians.jacobian(f, x, mode="forward")).reshape(-1, x.size)


@pytest.mark.parametrize("mode", ["auto", "sparse-forward", "sparse-reverse"])
@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_sparse_jacobian_fn_follows_the_decisions(f, mode):
    jac = sparse_jacobian_fn(f, X0, mode=mode)
    for x in POINTS:
        np.testing.assert_allclose(jac(x).toarray(), dense(f, x), atol=1e-12, err_msg=str(x))


@pytest.mark.parametrize("mode", ["sparse-forward", "sparse-reverse"])
@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_plan_sparse_follows_the_decisions(f, mode):
    p = jacobians.plan(f, X0, mode=mode, output="sparse")
    for x in POINTS:
        np.testing.assert_allclose(p(x).toarray(), dense(f, x), atol=1e-12, err_msg=str(x))


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_plan_counts_and_explains_the_redetections(f):
    # the eager check's counters (jit=False); under jit a new decision is a new trace
    p = jacobians.plan(f, X0, mode="sparse-forward", output="sparse", jit=False)
    for x in POINTS:
        p(x)
    if f is sorted_tail:     # sort's rule is the union over its slice: valid for every x
        assert p.redetections == 0
    else:
        assert p.redetections >= 1
        assert "detected again at" in p.explain()


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_plan_dense_output_of_a_sparse_mode(f):
    p = jacobians.plan(f, X0, mode="sparse-forward", output="dense")
    for x in POINTS:
        got = np.asarray(p(x)).reshape(-1, x.size)
        np.testing.assert_allclose(got, dense(f, x), atol=1e-12)


def loss_argmax(v):
    return np.sum(v ** 2) * v[np.argmax(v)]


def loss_if(v):
    if v[0] > 0:
        return v[1] * v[2] + np.sum(v ** 2)
    return v[1] * v[3] + np.sum(v ** 2)


def loss_mask(v):
    return np.sum(v[v > 0] ** 3) + v[0] * v[1] * (v[2] > 0)


def loss_sort(v):
    s = np.sort(v)
    return s[-1] * s[-2] + np.sum(v ** 2)


LOSSES = [loss_argmax, loss_if, loss_mask, loss_sort]


@pytest.mark.parametrize("f", LOSSES, ids=lambda f: f.__name__)
def test_sparse_hessian_fn_follows_the_decisions(f):
    hess = sparse_hessian_fn(f, X0)
    also = hessian_fn(f, sparse=True)
    for x in [X0] + POINTS:
        want = jacobians.hessian(f, x)
        np.testing.assert_allclose(hess(x).toarray(), want, atol=1e-10)
        np.testing.assert_allclose(also(x).toarray(), want, atol=1e-10)


@pytest.mark.parametrize("f", LOSSES, ids=lambda f: f.__name__)
def test_plan_of_a_gradient_follows_the_decisions(f):
    """The Hessian as the sparse Jacobian of the gradient, through the planner."""
    p = jacobians.plan(dualad.grad(f), X0, mode="sparse-forward", output="sparse")
    for x in POINTS:
        np.testing.assert_allclose(p(x).toarray(), jacobians.hessian(f, x), atol=1e-10)


def bratu(u):
    h = 1.0 / (u.size + 1)
    padded = np.concatenate([np.zeros(1), u, np.zeros(1)])
    return (padded[:-2] - 2 * u + padded[2:]) / h ** 2 + np.exp(u)


@pytest.mark.parametrize("mode", ["sparse-forward", "sparse-reverse"])
def test_value_independent_function_is_not_detected_again(mode):
    x0 = np.linspace(0.1, 0.9, 30)
    p = jacobians.plan(bratu, x0, mode=mode, output="sparse", jit=False)   # the eager check
    jac = sparse_jacobian_fn(bratu, x0, jit=False)
    for k in range(4):
        x = np.cos(np.arange(30.0) + k)
        np.testing.assert_allclose(p(x).toarray(), dense(bratu, x), rtol=1e-12)
        np.testing.assert_allclose(jac(x).toarray(), dense(bratu, x), rtol=1e-12)
    assert p.redetections == 0 and jac.plan.redetections == 0
    assert p.checked.checks == 4
    assert p.sparsity.nnz == 3 * 30 - 2


def test_where_with_a_changing_mask_keeps_its_pattern():
    """``where`` keeps both branches: a new mask is detected again once, the pattern does
    not grow, and a point with a mask seen before is not detected again."""
    def f(v):
        return np.where(v > 0, v ** 2, np.sin(v))
    x0 = np.array([1.0, -1.0, 2.0])
    p = jacobians.plan(f, x0, mode="sparse-forward", output="sparse", jit=False)  # eager check
    for x in [np.array([-1.0, 1.0, 2.0]), np.array([-2.0, 3.0, 1.0]), x0]:
        np.testing.assert_allclose(p(x).toarray(), dense(f, x), atol=1e-12)
    assert p.redetections == 1
    assert p.sparsity.nnz == 3 and p.column_coloring.ncolors == 1


def test_repeated_sparse_jacobian_calls_are_right():
    """sparse_jacobian detects at each point: no pattern is cached by function."""
    for x in [X0] + POINTS:
        for f in CASES:
            np.testing.assert_allclose(jacobians.sparse_jacobian(f, x).toarray(), dense(f, x),
                                       atol=1e-12)
