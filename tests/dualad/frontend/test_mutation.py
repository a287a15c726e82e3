"""Arrays modified in place between a forward pass and its pullback (dualad.interpreters.reverse.versions):
the right derivative, or a RuntimeError that says what to do; never a stale mix."""
import numpy as np
import pytest

import dualad
from dualad.autograd import Variable, backward
from dualad.autograd import grad as ag_grad

COPY_HINT = r"modified in place before the pullback; copy it before modifying \(x = x.copy\(\)\)"


# --- vjp: the tape owns its inputs and outputs -----------------------------------------
def test_vjp_input_modified_after_forward():
    xi = np.array([1.0, 2.0])
    _, pb = dualad.vjp(np.sin, xi)
    xi[0] = 3.0
    np.testing.assert_allclose(pb(np.ones(2))[0], np.cos([1.0, 2.0]))


def test_vjp_output_modified_in_place():
    x = np.array([0.5, 1.0])
    y, pb = dualad.vjp(np.exp, x)
    y *= 2
    np.testing.assert_allclose(pb(np.ones(2))[0], np.exp(x))
    np.testing.assert_allclose(y, 2 * np.exp(x))     # the caller's array is the caller's


def test_vjp_input_in_a_container():
    p = {"w": np.array([1.0, 2.0]), "b": np.array([0.5])}
    _, pb = dualad.vjp(lambda q: np.sum(q["w"] ** 2) * q["b"], p)
    p["w"][1] = 10.0
    g = pb(np.ones(1))[0]
    np.testing.assert_allclose(g["w"], [1.0, 2.0])
    np.testing.assert_allclose(g["b"], [5.0])


# --- vjp: arrays the tape does not own raise -----------------------------------------
def test_vjp_closed_over_constant_modified_raises():
    c = np.array([1.0, 2.0])
    _, pb = dualad.vjp(lambda x: np.sin(x * c), np.array([0.3, 0.4]))
    c[0] = 5.0
    with pytest.raises(RuntimeError, match=COPY_HINT) as e:
        pb(np.ones(2))
    assert "vjp pullback" in str(e.value) and "(2,)" in str(e.value) and "'multiply'" in \
        str(e.value)
    c[0] = 1.0    # restored: the pullback is right again
    np.testing.assert_allclose(pb(np.ones(2))[0], np.cos([0.3, 0.8]) * [1.0, 2.0])


def test_vjp_non_contiguous_constant_modified_raises():
    base = np.arange(12.0).reshape(3, 4)
    c = base[:, 1]                       # a strided view
    _, pb = dualad.vjp(lambda x: x * c, np.ones(3))
    base[2, 1] = -1.0
    with pytest.raises(RuntimeError, match=COPY_HINT):
        pb(np.ones(3))


def test_vjp_index_array_modified_raises():
    idx = np.array([0, 2])
    _, pb = dualad.vjp(lambda x: x[idx] ** 2, np.array([1.0, 2.0, 3.0]))
    idx[1] = 1
    with pytest.raises(RuntimeError, match=COPY_HINT):
        pb(np.ones(2))


def test_vjp_unmodified_pullback_repeats():
    c = np.array([1.0, 2.0])
    x = np.array([0.3, 0.4])
    y, pb = dualad.vjp(lambda x: np.exp(x) * c, x)
    for _ in range(3):
        np.testing.assert_allclose(pb(np.ones(2))[0], np.exp(x) * c)
    np.testing.assert_allclose(pb(np.ones((4, 2)))[0], np.tile(np.exp(x) * c, (4, 1)))


def test_grad_unaffected():
    c = np.array([1.0, 2.0])
    x = np.array([0.3, 0.4])
    np.testing.assert_allclose(dualad.grad(lambda v: np.sum(v * c))(x), c)
    np.testing.assert_allclose(x, [0.3, 0.4])


# --- the imperative API ---------------------------------------------------------------
def test_variable_source_array_modified_before_backward_raises():
    w = np.array([1.0, 2.0])
    x = Variable(w, requires_grad=True)
    y = np.sin(x).sum()
    w[0] = 3.0                      # the Variable shares this storage
    with pytest.raises(RuntimeError, match=COPY_HINT) as e:
        y.backward()
    assert "backward" in str(e.value) and "'sin'" in str(e.value)
    assert x.grad is None


def test_variable_data_modified_before_grad_raises():
    x = Variable(np.array([1.0, 2.0]), requires_grad=True)
    y = (x * x).sum()
    x.data[1] = 7.0
    with pytest.raises(RuntimeError, match=COPY_HINT):
        ag_grad(y, x)


def test_constant_modified_before_backward_raises():
    c = np.array([1.0, 2.0])
    x = Variable(np.array([0.5, 0.5]), requires_grad=True)
    y = (np.exp(x) * c).sum()
    c[:] = 0.0
    with pytest.raises(RuntimeError, match=COPY_HINT):
        backward([y])


def test_result_data_is_read_only():
    x = Variable(np.array([1.0, 2.0]), requires_grad=True)
    y = np.exp(x)
    with pytest.raises(ValueError):
        y.data[0] = 5.0
    y.sum().backward()
    np.testing.assert_allclose(x.grad, np.exp([1.0, 2.0]))


def test_update_after_backward_is_fine():
    # the optimizer step of a training loop: modify the leaf after its backward, then record
    # a new graph on the new values
    w = np.array([1.0, 2.0])
    W = Variable(w, requires_grad=True)
    for _ in range(3):
        loss = (W * W).sum()
        loss.backward()
        W.data[...] -= 0.25 * W.grad
        W.grad = None
    np.testing.assert_allclose(w, [0.125, 0.25])


def test_retain_graph_backward_repeats():
    x = Variable(np.array([1.0, 2.0]), requires_grad=True)
    y = (np.sin(x) * 2.0).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad, 4 * np.cos([1.0, 2.0]))
