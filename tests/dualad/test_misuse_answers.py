"""The misuse catalogue, second half: calls at the API boundary that used to end silently
wrong or in an unclear error and now give the right derivative (issue 15).

Each test compares with an analytic derivative, NumPy's own value or finite differences.
"""
import copy
import threading
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import dualad
import dualad.numpy as dnp
from dualad import jacobians
from dualad.autograd import Variable
from dualad.verification import check_grads

x3 = np.array([0.5, 1.0, 1.5])


# --- copies of traced values ------------------------------------------------------------
def _sq_deep(v):
    return np.sum(copy.deepcopy(v) ** 2)


def _sq_shallow(v):
    return np.sum(copy.copy(v) ** 2)


def _params_loss(p):
    q = copy.deepcopy(p)           # as a training loop copies its params dict
    return np.sum(np.sin(q["w"]) * q["b"])


@pytest.mark.parametrize("loss", [_sq_deep, _sq_shallow])
def test_copy_of_a_traced_value_keeps_the_derivative(loss):
    np.testing.assert_allclose(dualad.grad(loss)(x3), 2 * x3)
    np.testing.assert_allclose(dualad.jvp(loss, (x3,), (np.ones(3),))[1], 2 * x3.sum())
    np.testing.assert_allclose(dualad.vjp(loss, x3)[1](1.0)[0], 2 * x3)
    np.testing.assert_allclose(dualad.hvp(loss, x3, np.ones(3)), 2 * np.ones(3))
    np.testing.assert_allclose(jacobians.hessian(loss)(x3), 2 * np.eye(3))
    # nested: the copy inside the inner transformation, both levels traced
    np.testing.assert_allclose(dualad.grad(lambda v: np.sum(dualad.grad(loss)(v) ** 2))(x3),
                               8 * x3)
    np.testing.assert_allclose(dualad.derivative(lambda t: loss(t * x3), 2)(1.0),
                               2 * np.sum(x3 ** 2))


def test_deepcopy_of_a_params_dict_inside_grad():
    p = {"w": x3, "b": np.array([2.0, -1.0, 0.5])}
    g = dualad.grad(_params_loss)(p)
    np.testing.assert_allclose(g["w"], np.cos(x3) * p["b"])
    np.testing.assert_allclose(g["b"], np.sin(x3))
    tan = dualad.jvp(_params_loss, (p,), ({"w": np.ones(3), "b": np.zeros(3)},))[1]
    np.testing.assert_allclose(tan, np.sum(np.cos(x3) * p["b"]))


def test_copy_of_a_variable():
    leaf = Variable(x3, requires_grad=True)
    twin = copy.deepcopy(leaf)     # a leaf copies into an independent leaf, as in PyTorch
    (twin * twin).sum().backward()
    assert leaf.grad is None and twin is not leaf
    np.testing.assert_allclose(twin.grad, 2 * x3)
    z = leaf * 2.0
    (copy.deepcopy(z) ** 2).sum().backward()   # a computed value: the copy keeps the graph
    np.testing.assert_allclose(leaf.grad, 8 * x3)


# --- outputs --------------------------------------------------------------------------
def test_constant_output_still_has_a_zero_derivative():
    np.testing.assert_array_equal(dualad.grad(lambda v: 3.0)(x3), np.zeros(3))
    np.testing.assert_array_equal(dualad.jvp(lambda v: 3.0, (x3,), (x3,))[1], 0.0)


@pytest.mark.parametrize("shape", [(1,), (1, 1), (1, 1, 1)])
def test_grad_accepts_a_one_element_output(shape):
    f = lambda v: np.reshape(np.sum(np.sin(v)), shape)    # noqa: E731
    np.testing.assert_allclose(dualad.grad(f)(x3), np.cos(x3))
    value, g = dualad.value_and_grad(f)(x3)
    assert np.shape(value) == shape
    np.testing.assert_allclose(g, np.cos(x3))
    np.testing.assert_allclose(dualad.grad(dualad.grad(lambda t: f(t * x3)))(1.0),
                               -np.sum(np.sin(x3) * x3 ** 2))


def test_has_aux_returns_plain_values():
    g, aux = dualad.grad(lambda v: (np.sum(v ** 2), {"double": 2 * v, "n": 3}),
                         has_aux=True)(x3)
    assert type(aux["double"]) is np.ndarray and aux["n"] == 3
    np.testing.assert_allclose(aux["double"], 2 * x3)
    (value, aux), g = dualad.value_and_grad(lambda v: (np.sum(v ** 2), [v[0], v]),
                                            has_aux=True)(x3)
    assert not any(isinstance(a, dualad.core.tracer.Box) for a in aux)
    aux[1] + 1.0   # usable afterwards: no escaped-tracer error
    # inside an outer transformation the aux keeps the outer level's derivative
    tan = dualad.jvp(lambda v: dualad.grad(lambda u: (np.sum(u * v), v ** 2), has_aux=True)(x3)[1],
                     (x3,), (np.ones(3),))[1]
    np.testing.assert_allclose(tan, 2 * x3)


# --- directions given as lists --------------------------------------------------------
def test_jvp_tangent_and_vjp_cotangent_as_lists():
    out, tan = dualad.jvp(lambda v: v ** 2, (x3,), ([1.0, 0, 0],))
    np.testing.assert_allclose(tan, [1.0, 0, 0])
    assert tan.dtype == np.float64
    np.testing.assert_allclose(dualad.vjp(np.sin, x3)[1]([0, 1, 0])[0], [0, np.cos(1.0), 0])
    # containers still match leaf by leaf; a list primal is a container of scalars
    _, tan = dualad.jvp(lambda p: p[0] * p[1], ([2.0, 3.0],), ([1.0, 0.0],))
    assert tan == 3.0


# --- reductions with where= -----------------------------------------------------------
MASKS = [np.array([True, False, True]), np.array([[True], [False]])]


@pytest.mark.parametrize("reduction", ["sum", "mean"])
@pytest.mark.parametrize("kw", [{}, {"axis": 0}, {"axis": 1, "keepdims": True}])
def test_sum_and_mean_with_where(reduction, kw):
    x = np.arange(1.0, 7.0).reshape(2, 3)
    for mask in MASKS:
        f = lambda v: getattr(np, reduction)(v, where=mask, **kw)    # noqa: E731
        with np.errstate(invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)   # an empty slice's mean
            expected = getattr(np, reduction)(x, where=mask, **kw)
        if np.isnan(expected).any():    # nothing selected in a slice: NaN, no derivative
            continue
        np.testing.assert_allclose(dualad.jvp(f, (x,), (x,))[0], expected)
        check_grads(f, (x,), order=2)
        method = lambda v: getattr(v, reduction)(where=mask, **kw)    # noqa: E731
        np.testing.assert_allclose(dualad.jvp(method, (x,), (x,))[0], expected)
        np.testing.assert_allclose(getattr(dnp, reduction)(x, where=mask, **kw), expected)


def test_mean_with_where_gradient_divides_by_the_count():
    mask = x3 > 0.7
    np.testing.assert_allclose(dualad.grad(lambda v: np.mean(v, where=mask))(x3), [0, .5, .5])
    np.testing.assert_allclose(dualad.grad(lambda v: np.sum(v ** 2, where=mask))(x3),
                               2 * x3 * mask)
    # the ufunc form kept the keywords out before (a gradient of ones, a value without 5)
    np.testing.assert_allclose(dualad.grad(lambda v: np.add.reduce(v, where=mask))(x3), mask)
    out, tan = dualad.jvp(lambda v: np.add.reduce(v, initial=5.0), (x3,), (x3,))
    assert out == np.add.reduce(x3, initial=5.0) and tan == x3.sum()


@settings(derandomize=True, max_examples=15, deadline=None)
@given(st.lists(st.booleans(), min_size=4, max_size=4).filter(any))
def test_masked_mean_matches_numpy(bits):
    x = np.array([0.3, -1.2, 2.0, 0.7])
    mask = np.array(bits)
    assert np.isclose(dualad.jvp(lambda v: np.mean(v, where=mask), (x,), (x,))[0],
                      np.mean(x, where=mask))
    np.testing.assert_allclose(dualad.grad(lambda v: np.mean(np.sin(v), where=mask))(x),
                               np.cos(x) * mask / mask.sum())


# --- dualad.numpy ---------------------------------------------------------------------
def test_dualad_numpy_array_of_empty_lists():
    assert dnp.array([]).shape == (0,)
    assert dnp.array([[]]).shape == (1, 0)
    assert dnp.asarray([[], []]).shape == (2, 0)


def test_where_with_one_argument_gives_indices():
    idx = dnp.where(x3 > 0.7)
    np.testing.assert_array_equal(idx[0], [1, 2])
    # on a traced condition too (the indices carry no derivative), used to gather
    g = dualad.grad(lambda v: np.sum(v[np.where(np.sin(v) > 0.6)] ** 2))(x3)
    np.testing.assert_allclose(g, [0, 2.0, 3.0])
    g = dualad.grad(lambda v: np.sum(dnp.where(x3 > 0.7, v, 2 * v)))(x3)   # plain condition
    np.testing.assert_allclose(g, [2.0, 1.0, 1.0])


# --- jacobians inside dualad: what still composes ----------------------------------------
def test_jacobians_hvp_nests_inside_dualad():
    cube = lambda u: np.sum(u ** 3)    # noqa: E731  H = diag(6u)
    np.testing.assert_allclose(dualad.grad(lambda v: np.sum(jacobians.hvp(cube, v, x3)))(x3),
                               6 * x3)
    np.testing.assert_allclose(dualad.grad(lambda v: np.sum(jacobians.hvp(cube, x3, v)))(x3),
                               6 * x3)


# --- edges of the input -----------------------------------------------------------------
def test_empty_inputs_give_empty_derivatives():
    f = lambda v: np.sum(v ** 2)    # noqa: E731
    e = np.zeros(0)
    assert dualad.grad(f)(e).shape == (0,)
    assert dualad.jvp(f, (e,), (e,))[1] == 0.0
    assert dualad.jvp(lambda v: v ** 2, (e,), (e,))[1].shape == (0,)
    assert dualad.hvp(f, e, e).shape == (0,)
    assert dualad.vjp(np.sin, e)[1](e)[0].shape == (0,)
    assert dualad.derivative(np.sin, 2)(e).shape == (0,)


def test_float32_stays_float32_everywhere():
    f = lambda v: np.sum(np.sin(v) ** 2)    # noqa: E731
    x = x3.astype(np.float32)
    assert dualad.grad(f)(x).dtype == np.float32
    assert dualad.jvp(f, (x,), (np.ones(3),))[1].dtype == np.float32
    assert dualad.vjp(f, x)[1](1.0)[0].dtype == np.float32
    assert dualad.hvp(f, x, np.ones(3, np.float32)).dtype == np.float32
    assert dualad.derivative(np.sin, 2)(np.float32(1.0)).dtype == np.float32


def test_transformations_in_several_threads_match_the_serial_answers():
    f = lambda v: np.sum(np.tanh(v) * np.sin(v) ** 2)    # noqa: E731
    xs = [np.linspace(0.0, 1.0, 20) + k for k in range(6)]
    serial = [(dualad.grad(f)(v), dualad.jvp(f, (v,), (np.ones(20),))[1],
               dualad.hvp(f, v, np.ones(20))) for v in xs]
    results, errors = {}, []

    def work(k):
        try:
            for rep in range(5):
                for i, v in enumerate(xs):
                    results[k, rep, i] = (dualad.grad(f)(v), dualad.jvp(f, (v,), (np.ones(20),))[1],
                                          dualad.hvp(f, v, np.ones(20)))
        except Exception as e:     # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(results) == 4 * 5 * len(xs)
    for (k, rep, i), got in results.items():
        for a, b in zip(got, serial[i]):
            np.testing.assert_allclose(a, b, rtol=1e-12)
