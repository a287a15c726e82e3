"""The functional updates ``y.at[idx].op(v)`` and their primitive ``scatter_set``.

Values are compared with NumPy's own ``y[idx] = v`` and ``np.<ufunc>.at`` on plain
arrays; derivatives with finite differences (check_grads, both modes, order 2)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import dualad
from dualad import jacobians
from dualad.frontend.inplace import at
from dualad.ops.core.scatter import copy_p, scatter_set, update
from dualad.verification import check_grads
from dualad.verification.rules import check_rule

X = np.array([0.7, 1.3, -0.4, 2.1, 0.9, -1.6])
UFUNC = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply,
         "divide": np.divide, "power": np.power, "min": np.minimum, "max": np.maximum}
INDICES = {
    "int": (2,),
    "negative int": (-1,),
    "slice": (slice(1, 5, 2),),
    "repeated": (np.array([0, 3, 3, 5, 3]),),
    "list": ([4, 1],),
    "mask": (X > 0.8,),
    "empty": (np.array([], dtype=int),),
    "empty mask": (np.zeros(6, bool),),
}


def _numpy_update(x, idx, v, op):
    y = np.array(x, copy=True)
    if op == "set":
        y[idx] = v
    else:
        UFUNC[op].at(y, idx, v)
    return y


def _value_for(idx):
    shape = np.empty(6)[idx].shape
    return np.linspace(0.6, 1.4, int(np.prod(shape))).reshape(shape)


@pytest.mark.parametrize("op", ["set", *UFUNC])
@pytest.mark.parametrize("name", list(INDICES))
def test_at_matches_numpy_and_finite_differences(op, name):
    idx = INDICES[name]
    v = _value_for(idx)
    x = np.abs(X) + 0.5 if op == "power" else X     # power: positive bases
    expected = _numpy_update(x, idx, v, op)
    f = lambda a, b: getattr(at(a)[idx], op)(b)  # noqa: E731
    np.testing.assert_allclose(dualad.jvp(lambda a: f(a, v), (x,), (np.ones(6),))[0], expected)
    np.testing.assert_allclose(update(x, idx, v, op), expected)
    if v.size:
        check_grads(f, (x, v), order=2)
    else:
        check_grads(lambda a: f(a, v), (x,), order=2)
    np.testing.assert_allclose(dualad.jvp(lambda a: getattr(a.at[idx], op)(v), (x,),
                                          (np.ones(6),))[0], expected)   # the method


def test_repeated_indices_follow_numpy():
    """set: the last write wins; add and multiply accumulate every occurrence in order."""
    idx = np.array([1, 1, 1])
    v = np.array([2.0, 3.0, 5.0])
    assert dualad.grad(lambda a: a.at[idx].set(v)[1])(X)[1] == 0.0
    g = dualad.grad(lambda b: at(np.zeros(3))[idx].set(b)[1])(v)
    np.testing.assert_array_equal(g, [0.0, 0.0, 1.0])                 # only the winner
    g = dualad.grad(lambda b: at(np.ones(3))[idx].multiply(b)[1])(v)
    np.testing.assert_allclose(g, [15.0, 10.0, 6.0])                  # product rule
    g = dualad.grad(lambda b: at(np.zeros(3))[idx].add(b)[1])(v)
    np.testing.assert_array_equal(g, [1.0, 1.0, 1.0])


def test_two_dimensional_indices():
    x = np.arange(12.0).reshape(3, 4) / 7.0 + 0.3
    cases = [(slice(None), np.array([3, 0, 3])), (np.array([2, 0]), slice(1, 3)),
             (1, Ellipsis), (np.array([[0, 1], [2, 2]]), np.array([[1, 1], [0, 3]])),
             (x > 1.0,), (slice(None), None, 2)]
    for idx in cases:
        shape = x[idx].shape
        v = np.linspace(-1.0, 1.0, int(np.prod(shape))).reshape(shape)
        for op in ("set", "add", "max"):
            np.testing.assert_allclose(update(x, idx, v, op), _numpy_update(x, idx, v, op))
            check_grads(lambda a, b: update(a, idx, b, op), (x, v), order=2)
    check_grads(lambda a, b: update(a, (slice(None), 1), b, "multiply"), (x, np.ones(1) * 1.5))


def test_broadcast_value_and_plain_target():
    g = dualad.grad(lambda s: np.sum(at(np.zeros(5))[1:4].set(s) ** 2))(1.5)
    assert g == pytest.approx(3 * 2 * 1.5)
    check_grads(lambda a, s: at(a)[np.array([0, 2, 2])].add(s), (X, np.array(0.8)), order=2)
    check_grads(lambda s: at(np.ones((2, 3)))[:, 1].multiply(s), (np.array([1.5, -2.0]),))
    with pytest.raises(ValueError, match=r"shape \(4,\).*x\[idx\] of shape \(3,\)"):
        dualad.grad(lambda a: np.sum(a.at[1:4].set(a[:4])))(X)


def test_get_and_unsupported_modes():
    np.testing.assert_allclose(dualad.grad(lambda a: np.sum(a.at[1:3].get() ** 2))(X),
                               [0, 2.6, -0.8, 0, 0, 0])
    with pytest.raises(NotImplementedError, match="mode='clip'"):
        dualad.grad(lambda a: np.sum(a.at[1].set(2.0, mode="clip")))(X)
    with pytest.raises(NotImplementedError, match="fill_value"):
        dualad.grad(lambda a: np.sum(a.at[1].get(fill_value=0.0)))(X)


def test_dtypes():
    x32 = X.astype(np.float32)
    y = dualad.jvp(lambda a: a.at[1].set(a[0] * 2), (x32,), (np.ones(6, np.float32),))
    assert y[0].dtype == np.float32 and y[1].dtype == np.float32
    g = dualad.grad(lambda a: np.sum(at(np.zeros(3, np.float32))[1].set(a[0]) ** 2))(X)
    np.testing.assert_allclose(g, [2 * np.float32(X[0]), 0, 0, 0, 0, 0], rtol=1e-6)
    check_grads(lambda a: at(a)[np.array([1, 1])].add(a[2:4] ** 2), (x32,), order=2)
    with pytest.raises(TypeError, match="dtype int64.*floating"):
        dualad.grad(lambda a: np.sum(at(np.zeros(3, np.int64))[1].set(a[0])))(X)
    with pytest.raises(TypeError, match="complex.*imaginary"):
        dualad.grad(lambda a: np.real(np.sum(at(np.zeros(3))[1].set(a[0] * 1j))))(X)
    z = dualad.grad(lambda a: np.sum(np.abs(at(np.zeros(3, complex))[1].set(a[0])) ** 2))(X)
    np.testing.assert_allclose(z[0], 2 * X[0])
    with pytest.raises(ValueError, match="unknown update"):
        update(X, 1, 1.0, "divmod")


def test_traced_index_raises():
    with pytest.raises(TypeError, match="index may not be a traced value"):
        dualad.grad(lambda a: np.sum(a.at[a].set(1.0)))(X)


def test_primitives_pass_the_rule_checker():
    check_rule(scatter_set, order=2).raise_if_failed()
    check_rule(copy_p, order=2).raise_if_failed()
    from dualad.verification import coverage       # the SymPy oracle on the rules
    assert coverage.sympy_status("scatter_set").startswith("oracle")
    assert coverage.sympy_status("copy").startswith("oracle")


def test_jacobians_and_sparsity_of_updates():
    def f(a):
        y = np.zeros_like(a)
        y = at(y)[np.array([0, 0, 2])].add(a[:3] ** 2)    # at(y): y is plain in a plain call
        y = at(y)[3:].set(a[3:] * a[:3])
        return at(y)[1].max(a[4])
    J = jacobians.jacfwd(f)(X)
    np.testing.assert_allclose(jacobians.jacrev(f)(X), J)
    S = jacobians.sparse_jacobian(f)(X)
    np.testing.assert_allclose(S.toarray(), J)
    expected = np.zeros((6, 6), bool)
    expected[0, [0, 1]] = expected[2, 2] = expected[1, 4] = True
    for k in range(3):
        expected[3 + k, [3 + k, k]] = True
    np.testing.assert_array_equal(S.toarray() != 0, expected)
    H = jacobians.hessian(lambda a: np.sum(f(a) ** 2))(X)
    np.testing.assert_allclose(H, H.T, atol=1e-12)
    check_grads(lambda a: np.sum(f(a) ** 2), (X,), order=2)


@settings(derandomize=True, max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 5), min_size=0, max_size=8),
       st.sampled_from(["set", "add", "subtract", "multiply", "min", "max"]))
def test_random_repeated_indices(positions, op):
    idx = (np.array(positions, dtype=int),)
    v = np.linspace(0.5, 1.5, len(positions))
    np.testing.assert_allclose(update(X, idx, v, op), _numpy_update(X, idx, v, op))
    if positions:
        check_grads(lambda a, b: update(a, idx, b, op), (X, v), order=1)
