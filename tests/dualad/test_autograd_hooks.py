"""register_hook and retain_grad on dualad.autograd.Variable, against PyTorch's documented
semantics (torch.Tensor.register_hook, torch.Tensor.retain_grad, the autograd notes on
backward hooks); the expected values are derived by hand in each test."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dualad.autograd import RemovableHandle, Variable, backward, grad


def _leaf(v):
    return Variable(np.array(v, dtype=float), requires_grad=True)


# ---------------------------------------------------------------- hooks on leaves

def test_the_pytorch_doc_example_doubles_the_gradient():
    v = _leaf([0.0, 0.0, 0.0])
    h = v.register_hook(lambda grad: grad * 2)
    assert isinstance(h, RemovableHandle)
    v.backward(np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(v.grad, [2.0, 4.0, 6.0])
    h.remove()
    v.backward(np.array([1.0, 2.0, 3.0]))      # removed: plain accumulation 2,4,6 + 1,2,3
    np.testing.assert_array_equal(v.grad, [3.0, 6.0, 9.0])
    h.remove()                                  # a second remove does nothing


def test_a_hook_returning_none_observes_and_changes_nothing():
    x = _leaf([1.0, 2.0])
    seen = []
    x.register_hook(lambda g: seen.append(np.array(g)))
    np.sum(x ** 3).backward()                  # d/dx sum x^3 = 3x^2
    np.testing.assert_array_equal(x.grad, [3.0, 12.0])
    assert len(seen) == 1
    np.testing.assert_array_equal(seen[0], [3.0, 12.0])


def test_a_leaf_hook_sees_the_total_over_all_uses_once():
    x = _leaf(3.0)
    calls = []
    x.register_hook(lambda g: calls.append(float(g)))
    (x * x + x).backward()                     # x used three times: 2x + 1 = 7
    assert calls == [7.0]
    assert float(x.grad) == 7.0


def test_hooks_run_in_registration_order_each_given_the_previous_result():
    x = _leaf(3.0)
    order = []
    x.register_hook(lambda g: order.append(("first", float(g))) or g + 1)
    x.register_hook(lambda g: order.append(("second", float(g))) or g * 10)
    (x * x).backward()                         # 2x = 6 -> 7 -> 70
    assert order == [("first", 6.0), ("second", 7.0)]
    assert float(x.grad) == 70.0


def test_a_leaf_hook_runs_before_accumulation_into_grad():
    x = _leaf([1.0, 2.0])
    np.sum(x * x).backward()                   # 2x = [2, 4]
    seen = []
    x.register_hook(lambda g: seen.append(np.array(g)) or g * 3)
    np.sum(x * x).backward()                   # the hook sees [2, 4] (not the sum [4, 8])
    np.testing.assert_array_equal(seen[0], [2.0, 4.0])
    np.testing.assert_array_equal(x.grad, [2.0 + 6.0, 4.0 + 12.0])


# ---------------------------------------------------------------- hooks on computed Variables

def test_a_hook_on_an_intermediate_changes_what_flows_to_the_inputs():
    x = _leaf([1.0, 2.0])
    y = x * x
    y.register_hook(lambda g: g * 2)
    np.sum(3.0 * y).backward()                 # ybar = 3 -> 6; xbar = 6 * 2x = [12, 24]
    np.testing.assert_array_equal(x.grad, [12.0, 24.0])


def test_hooks_on_two_intermediates_compose_along_the_chain():
    x = _leaf(2.0)
    u = x * x                                  # 4
    v = np.sin(u)
    v.register_hook(lambda g: g * 5)
    u.register_hook(lambda g: g + 1)
    v.backward()                               # vbar = 1 -> 5; ubar = 5 cos 4 -> +1; xbar = ubar 2x
    want = (5 * np.cos(4.0) + 1) * 4.0
    assert float(x.grad) == pytest.approx(want, rel=1e-15)


def test_a_hook_may_remove_itself_while_running():
    x = _leaf(1.0)
    calls = []

    def once(g):
        calls.append(float(g))
        handle.remove()
    handle = x.register_hook(once)
    (x * 4.0).backward()
    (x * 4.0).backward()
    assert calls == [4.0]


# ---------------------------------------------------------------- under autograd.grad

def test_a_hook_under_grad_changes_the_returned_gradient_and_leaves_grad_alone():
    x = _leaf(2.0)
    y = x * x
    y.register_hook(lambda g: g * 2)
    (g,) = grad(5.0 * y, x)                    # ybar = 5 -> 10; xbar = 10 * 2x = 40
    assert float(g) == 40.0
    assert x.grad is None


def test_under_grad_hooks_fire_on_the_inputs_only_among_the_leaves():
    x, w = _leaf(2.0), _leaf(3.0)
    fired = []
    x.register_hook(lambda g: fired.append(("x", float(g))))
    w.register_hook(lambda g: fired.append(("w", float(g))))
    (gx,) = grad(x * w, x)
    assert float(gx) == 3.0
    assert fired == [("x", 3.0)]               # w's gradient is not computed: no hook


def test_under_grad_a_hook_off_the_path_to_the_inputs_does_not_fire():
    x, w = _leaf(2.0), _leaf(3.0)
    u = w * w                                  # depends on w only
    fired = []
    u.register_hook(lambda g: fired.append("u"))
    (gx,) = grad(x * 3.0 + u, x)
    assert float(gx) == 3.0 and fired == []
    u = w * w                                  # (the sweep above freed the first u)
    u.register_hook(lambda g: fired.append("u"))
    (gw,) = grad(x * 3.0 + u, w)              # on the path to w: fires, ubar = 1
    assert float(gw) == 6.0 and fired == ["u"]


def test_a_hook_under_create_graph_is_differentiated_through():
    x = _leaf(2.0)
    y = x * x
    kinds = []

    def times_x(g):                             # ybar -> ybar * x, recorded on the tape
        kinds.append(type(g))
        return g * x
    y.register_hook(times_x)
    # z = y x: ybar = x -> x^2 by the hook; xbar = x^2 * 2x + y = 2x^3 + x^2 = 20 at 2
    (g,) = grad(y * x, x, create_graph=True)
    assert kinds == [Variable]                 # ybar = x depends on x: a Variable
    assert float(g.numpy()) == 20.0
    # g = 2 H x + y with H = x·x the hook's product; the hook is still registered, so the
    # second sweep scales y's cotangent 1 by x too (as PyTorch's would):
    # d(2Hx)/dx = 6x^2 = 24, plus (1·x)·dy/dx = x·2x = 8.
    (h,) = grad(g, x)
    assert len(kinds) == 2
    assert type(h) is np.float64 and float(h) == 32.0   # no create_graph: a plain value


def test_a_hook_under_batched_grad_sees_the_batch_axis():
    x = _leaf([1.0, 2.0])
    y = x * x
    shapes = []
    y.register_hook(lambda g: shapes.append(np.shape(g)))
    (jac,) = grad(y, x, grad_outputs=np.eye(2), is_grads_batched=True)
    assert shapes == [(2, 2)]
    np.testing.assert_array_equal(jac, np.diag([2.0, 4.0]))


def test_a_hook_returning_a_list_or_other_dtype_is_cast():
    x = Variable(np.array([1.0, 2.0], dtype=np.float32), requires_grad=True)
    x.register_hook(lambda g: [10.0, 20.0])
    np.sum(x * x).backward()
    np.testing.assert_array_equal(x.grad, [10.0, 20.0])
    assert x.grad.dtype == np.float32


# ---------------------------------------------------------------- misuse

def test_a_hook_returning_the_wrong_shape_names_the_hook_the_variable_and_the_shapes():
    x = _leaf([1.0, 2.0])
    y = x * 2.0

    def widen(g):
        return np.zeros(3)
    y.register_hook(widen)
    with pytest.raises(ValueError) as err:
        np.sum(y).backward()
    msg = str(err.value)
    assert "register_hook" in msg and "'widen'" in msg and "'multiply'" in msg
    assert "(3,)" in msg and "(2,)" in msg and "None" in msg


def test_a_hook_returning_complex_for_a_real_gradient_raises():
    x = _leaf([1.0, 2.0])
    x.register_hook(lambda g: g * 1j)
    with pytest.raises(TypeError, match="complex128 gradient for a float64"):
        np.sum(x * x).backward()


def test_a_hook_returning_text_raises():
    x = _leaf(1.0)
    x.register_hook(lambda g: "twice")
    with pytest.raises(TypeError, match="leaf Variable of shape"):
        (x * 2.0).backward()


def test_a_hook_that_raises_propagates_its_error():
    x = _leaf(1.0)

    def broken(g):
        raise KeyError("inside the hook")
    x.register_hook(broken)
    with pytest.raises(KeyError, match="inside the hook"):
        (x * 2.0).backward()


def test_register_hook_refuses_a_constant_and_a_non_callable():
    c = Variable(np.ones(2))
    with pytest.raises(RuntimeError, match="does not require grad.*requires_grad_"):
        c.register_hook(lambda g: g)
    with pytest.raises(TypeError, match="must be callable, got int"):
        _leaf(1.0).register_hook(3)


# ---------------------------------------------------------------- retain_grad

def test_without_retain_grad_a_computed_variable_has_no_grad_and_reading_it_warns():
    x = _leaf([1.0, 2.0])
    y = x * x
    np.sum(y).backward()
    with pytest.warns(UserWarning, match=r"retain_grad\(\)"):
        assert y.grad is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert x.grad is not None             # a leaf's: no warning


def test_retain_grad_keeps_and_accumulates_an_intermediate_gradient():
    x = _leaf([1.0, 2.0])
    y = x * x
    y.retain_grad()
    assert y.retains_grad and not x.retains_grad
    z = np.sum(3.0 * y)
    z.backward(retain_graph=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(y.grad, [3.0, 3.0])
        z.backward()                           # accumulates, as a leaf's does
        np.testing.assert_array_equal(y.grad, [6.0, 6.0])
    np.testing.assert_array_equal(x.grad, [12.0, 24.0])   # 2 * 3 * 2x


def test_the_retained_gradient_is_stored_after_all_hooks():
    x = _leaf(1.0)
    y = x * 2.0
    y.retain_grad()                            # registered first, still runs last
    y.register_hook(lambda g: g * 7)
    (y * 1.0).backward()
    assert float(y.grad) == 7.0
    assert float(x.grad) == 14.0


def test_retain_grad_on_a_leaf_does_nothing_and_grad_never_writes_grad():
    x = _leaf(2.0)
    x.retain_grad()
    assert not x.retains_grad
    y = x * x
    y.retain_grad()
    (g,) = grad(y * 3.0, x)
    assert float(g) == 12.0
    assert y.grad is None and x.grad is None


def test_retain_grad_under_create_graph_keeps_a_differentiable_variable():
    x = _leaf(3.0)
    y = x * x
    y.retain_grad()
    (y * x).backward(create_graph=True)        # ybar = x
    assert isinstance(y.grad, Variable)
    assert float(y.grad.numpy()) == 3.0
    assert float(x.grad.numpy()) == 27.0       # d(x^3)/dx = 3x^2


def test_retain_grad_refuses_a_constant():
    with pytest.raises(RuntimeError, match="does not require grad"):
        Variable(np.ones(2)).retain_grad()


def test_backward_of_a_batched_free_graph_with_retain_grad_in_float32():
    x = Variable(np.array([1.0, 2.0], dtype=np.float32), requires_grad=True)
    y = x * np.float32(3.0)
    y.retain_grad()
    backward([np.sum(y)])
    assert y.grad.dtype == np.float32
    np.testing.assert_array_equal(y.grad, [1.0, 1.0])


@settings(derandomize=True, max_examples=25, deadline=None)
@given(st.floats(-4, 4, allow_nan=False), st.floats(-3, 3, allow_nan=False))
def test_a_scaling_hook_scales_the_gradient(a, x0):
    """A hook ybar -> a·ybar on y = sin(x) scales dL/dx = cos(x) · ybar by a exactly."""
    x = _leaf(x0)
    y = np.sin(x)
    y.register_hook(lambda g: g * a)
    (y * 2.0).backward()
    assert float(x.grad) == pytest.approx(a * 2.0 * np.cos(x0), rel=1e-14, abs=1e-300)


# ---------------------------------------------------------------- indexing, outputs, inputs

def test_a_leaf_hook_gets_the_dense_gradient_of_an_indexed_leaf():
    x = _leaf([1.0, 2.0, 3.0])
    seen = []
    x.register_hook(lambda g: seen.append(np.array(g)))
    (x[0] * 2.0 + x[2]).backward()
    np.testing.assert_array_equal(seen[0], [2.0, 0.0, 1.0])
    np.testing.assert_array_equal(x.grad, [2.0, 0.0, 1.0])


def test_a_hook_on_an_indexed_intermediate_sees_every_entry_and_its_result_flows_on():
    x = _leaf([1.0, 2.0, 3.0])
    y = x * 2.0
    seen = []
    y.register_hook(lambda g: seen.append(np.array(g)) or g + 1.0)   # fills the zeros too
    y[0].backward()
    np.testing.assert_array_equal(seen[0], [1.0, 0.0, 0.0])
    np.testing.assert_array_equal(x.grad, [4.0, 2.0, 2.0])            # 2 * [2, 1, 1]


def test_retain_grad_of_an_indexed_intermediate_is_dense():
    x = _leaf([1.0, 2.0, 3.0])
    y = x * 1.0
    y.retain_grad()
    (y[0] + y[1]).backward()
    np.testing.assert_array_equal(y.grad, [1.0, 1.0, 0.0])


def test_a_hook_on_the_output_itself_gets_the_seed():
    x = _leaf([1.0, 2.0])
    y = x * x
    y.register_hook(lambda g: g * 3)
    y.backward(np.array([1.0, -1.0]))
    np.testing.assert_array_equal(x.grad, [6.0, -12.0])              # 3 * seed * 2x


def test_grad_with_respect_to_an_intermediate_returns_its_hooked_gradient():
    x = _leaf(2.0)
    y = x * x
    y.register_hook(lambda g: g * 10)
    gy, gx = grad(y * 3.0, [y, x])           # ybar = 3 -> 30 by the hook; xbar = 30 * 2x
    assert float(gy) == 30.0 and float(gx) == 120.0


def test_a_hook_registered_in_one_thread_fires_in_the_thread_that_sweeps():
    import threading
    x = _leaf(1.0)
    where = []
    x.register_hook(lambda g: where.append(threading.current_thread().name))
    t = threading.Thread(target=lambda: (x * 5.0).backward(), name="sweeper")
    t.start()
    t.join(30)
    assert where == ["sweeper"] and float(x.grad) == 5.0


def test_a_dropped_variable_leaves_the_watched_set():
    import gc

    from dualad.interpreters.reverse import hooks
    x = _leaf(1.0)
    y = x * 2.0
    y.register_hook(lambda g: g * y)           # a cycle y -> hooks -> lambda -> y
    key = id(y)
    assert hooks.WATCHED[key]() is y and key in hooks.HOOKS
    del y
    gc.collect()
    assert key not in hooks.WATCHED and key not in hooks.HOOKS


def test_a_removed_hook_and_no_retain_leave_the_watched_set():
    from dualad.interpreters.reverse import hooks
    y = _leaf(1.0) * 2.0
    h = y.register_hook(lambda g: None)
    y.retain_grad()
    h.remove()
    assert id(y) in hooks.WATCHED               # still retains its gradient
    assert not hooks.HOOKS.get(id(y))


def test_hooks_on_an_empty_variable_see_an_empty_gradient_and_keep_its_shape():
    x = Variable(np.zeros(0), requires_grad=True)
    seen = []
    x.register_hook(lambda g: seen.append(np.shape(g)))
    np.sum(x * 2.0).backward()
    assert seen == [(0,)] and x.grad.shape == (0,)
    x.register_hook(lambda g: np.zeros(1))
    with pytest.raises(ValueError, match=r"shape \(1,\).*shape \(0,\)"):
        np.sum(x * 2.0).backward()


def test_register_hook_none_says_callable():
    with pytest.raises(TypeError, match="Variable.register_hook: hook must be callable, "
                                        "got NoneType.*shape \\(2,\\)"):
        _leaf([1.0, 2.0]).register_hook(None)


def test_a_complex_leaf_keeps_a_complex_hooked_gradient():
    z = Variable(np.array([1.0 + 2.0j]), requires_grad=True)
    z.register_hook(lambda g: g * 1j)
    # L = |z|^2: dualad's gradient is JAX's, dL/dx - i dL/dy = 2 conj(z) = 2 - 4i
    # (docs/complex.md; PyTorch's is its conjugate, 2z); the hook multiplies it by i.
    np.sum(np.abs(z) ** 2).backward()
    np.testing.assert_allclose(z.grad, [1j * (2.0 - 4.0j)], rtol=1e-15)
