"""dualad.GradientTape: TensorFlow's tf.GradientTape semantics, expected values by hand.

TensorFlow is not installed; each expected value is derived below from the maths (and, for
the nested-tape example, the value tf.GradientTape's documentation prints)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import dualad
from dualad import GradientTape


def test_tf_doc_example_second_derivative_with_nested_tapes():
    # tf.GradientTape docs: x = 3, y = x * x * x; dy_dx = 3 x^2 = 27, d2y_dx2 = 6 x = 18.
    x = np.array(3.0)
    with GradientTape() as t2:
        with GradientTape() as t1:
            xw = t1.watch(t2.watch(x))
            y = xw * xw * xw
        dy_dx = t1.gradient(y, x)
    d2y_dx2 = t2.gradient(dy_dx, x)
    assert isinstance(dy_dx, dualad.extend.Var)   # recorded by t2: a traced value of it
    assert float(dualad.extend.primal_value(dy_dx)) == 27.0
    assert float(d2y_dx2) == 18.0


def test_nested_tapes_each_watching_the_same_array_as_tensorflow_code_does():
    # TF habit: t2.watch(x) and t1.watch(x) on the same x; only the inner value is used.
    x = np.array([1.0, 2.0])
    with GradientTape() as t2:
        t2.watch(x)
        with GradientTape() as t1:
            xw = t1.watch(x)
            y = np.sum(xw ** 3)
        g = t1.gradient(y, x)              # 3 x^2
    h = t2.gradient(g, x)                  # d/dx sum(3 x^2) = 6 x
    np.testing.assert_allclose(np.asarray(dualad.extend.primal_value(g)), [3.0, 12.0])
    np.testing.assert_allclose(h, [6.0, 12.0])


def test_gradient_of_a_vector_function_and_the_name_it_is_asked_by():
    x = np.array([0.5, 1.0, 2.0])
    with GradientTape() as tape:
        xw = tape.watch(x)
        y = np.sum(np.sin(xw) * xw ** 2)
    g = tape.gradient(y, x)                # by the original array's identity
    np.testing.assert_allclose(g, np.cos(x) * x ** 2 + 2 * x * np.sin(x), rtol=1e-14)
    assert isinstance(g, np.ndarray) and g.dtype == np.float64


def test_gradient_by_the_returned_value_too():
    x = np.array([1.0, -2.0])
    with GradientTape(persistent=True) as tape:
        xw = tape.watch(x)
        y = np.sum(np.exp(xw))
    np.testing.assert_allclose(tape.gradient(y, xw), np.exp(x))
    np.testing.assert_allclose(tape.gradient(y, x), np.exp(x))


def test_non_scalar_target_is_the_gradient_of_its_sum():
    # TF: a non-scalar target's gradient is that of sum(target): d/dx sum(x^2) = 2x.
    x = np.array([1.0, 2.0, 3.0])
    with GradientTape() as tape:
        xw = tape.watch(x)
        y = xw ** 2
    np.testing.assert_allclose(tape.gradient(y, x), [2.0, 4.0, 6.0])


def test_a_list_target_sums_the_gradients():
    # d/dx [sum(x^2)] + d/dx [sum(3x)] = 2x + 3
    x = np.array([1.0, 2.0])
    with GradientTape() as tape:
        xw = tape.watch(x)
        targets = [np.sum(xw ** 2), 3.0 * xw]
    np.testing.assert_allclose(tape.gradient(targets, x), [5.0, 7.0])


def test_output_gradients_seed_each_target():
    # y = x^2 elementwise, seed v: vᵀ diag(2x) = 2 x v
    x = np.array([1.0, 2.0, 3.0])
    v = np.array([1.0, 0.5, -1.0])
    with GradientTape() as tape:
        xw = tape.watch(x)
        y = xw ** 2
    np.testing.assert_allclose(tape.gradient(y, x, output_gradients=v), [2.0, 2.0, -6.0])


def test_output_gradients_for_a_list_target():
    x = np.array([1.0, 2.0])
    with GradientTape() as tape:
        xw = tape.watch(x)
        a, b = xw ** 2, 3.0 * xw
    g = tape.gradient([a, b], x, output_gradients=[np.array([1.0, 0.0]),
                                                  np.array([0.0, 2.0])])
    np.testing.assert_allclose(g, [2.0, 6.0])   # [2·1·1 + 0, 0 + 3·2]


def test_sources_keep_their_nested_structure():
    x, w = np.array([1.0, 2.0]), np.array(3.0)
    with GradientTape(persistent=True) as tape:
        xw, ww = tape.watch([x, w])
        y = ww * np.sum(xw ** 2)           # dy/dx = 2 w x, dy/dw = sum(x^2) = 5
    got = tape.gradient(y, {"x": x, "pair": (w, [x])})
    assert set(got) == {"x", "pair"} and isinstance(got["pair"], tuple)
    assert isinstance(got["pair"][1], list)
    np.testing.assert_allclose(got["x"], [6.0, 12.0])
    assert float(got["pair"][0]) == 5.0
    np.testing.assert_allclose(got["pair"][1][0], [6.0, 12.0])
    assert tape.watched_variables() == (x, w)


def test_watch_returns_the_structure_it_was_given():
    params = {"w": np.ones((2, 2)), "b": np.zeros(2)}
    with GradientTape() as tape:
        p = tape.watch(params)
        y = np.sum(np.ones(2) @ p["w"] + p["b"])
    g = tape.gradient(y, params)
    np.testing.assert_allclose(g["w"], np.ones((2, 2)))
    np.testing.assert_allclose(g["b"], np.ones(2))


def test_gradient_with_respect_to_an_intermediate_value():
    # TF: any tensor recorded on the tape may be a source: d(u^2)/du = 2u at u = 2x.
    x = np.array([1.0, 3.0])
    with GradientTape() as tape:
        xw = tape.watch(x)
        u = 2.0 * xw
        y = np.sum(u ** 2)
        assert tape.watch(u) is u          # watching a recorded value: itself
    np.testing.assert_allclose(tape.gradient(y, u), [4.0, 12.0])
    assert tape.watched_variables() == (x, u)


def test_unconnected_sources_none_or_zero():
    x, z = np.array([1.0, 2.0]), np.array([5.0, 6.0, 7.0])
    with GradientTape(persistent=True) as tape:
        xw, zw = tape.watch(x), tape.watch(z)
        y = np.sum(xw ** 2)
    g = tape.gradient(y, [x, z])
    assert g[1] is None
    g = tape.gradient(y, [x, z], unconnected_gradients="zero")
    np.testing.assert_array_equal(g[1], np.zeros(3))
    with pytest.raises(ValueError, match="unconnected_gradients='nan'"):
        tape.gradient(y, x, unconnected_gradients="nan")


def test_a_never_watched_source_says_why_it_gets_none():
    x, other = np.array([1.0, 2.0]), np.array([1.0])
    with GradientTape(persistent=True) as tape:
        xw = tape.watch(x)
        y = np.sum(xw ** 2)
    with pytest.warns(UserWarning, match=r"sources \(leaf 1\) \(shape \(1,\)\) was never "
                                         r"watched.*x = tape.watch\(x\)"):
        g = tape.gradient(y, [x, other])
    assert g[1] is None
    with pytest.warns(UserWarning, match="never watched"):
        g = tape.gradient(y, other, unconnected_gradients="zero")
    np.testing.assert_array_equal(g, [0.0])


def test_forgetting_to_use_what_watch_returns_raises_and_says_what_to_write():
    # The TF habit `tape.watch(x); y = x * x` computes y from the plain array: not recorded.
    x = np.array([1.0, 2.0])
    with GradientTape() as tape:
        tape.watch(x)
        y = np.sum(x * x)
    with pytest.raises(ValueError, match=r"GradientTape.gradient: target \(shape \(\)\) was "
                                         r"not recorded.*x = tape.watch\(x\)"):
        tape.gradient(y, x)


def test_none_target_and_none_source_raise_naming_the_argument():
    x = np.array([1.0])
    with GradientTape(persistent=True) as tape:
        xw = tape.watch(x)
        y = np.sum(xw)
    with pytest.raises(TypeError, match="GradientTape.gradient: target is None"):
        tape.gradient(None, x)
    with pytest.raises(TypeError, match="GradientTape.gradient: sources is None"):
        tape.gradient(y, None)
    with pytest.raises(TypeError, match=r"sources \(leaf 1\) is None"):
        tape.gradient(y, [x, None])


@pytest.mark.parametrize("bad", [np.arange(3), np.array([True]), 3, None, "x"])
def test_watching_a_non_float_raises_naming_the_function(bad):
    with GradientTape() as tape:
        with pytest.raises(TypeError, match="GradientTape.watch: argument 0"):
            tape.watch(bad)


def test_watch_outside_the_block_raises():
    tape = GradientTape()
    with pytest.raises(RuntimeError, match="GradientTape.watch: the tape is not recording"):
        tape.watch(np.array([1.0]))
    with tape:
        pass
    with pytest.raises(RuntimeError, match="not recording"):
        tape.watch(np.array([1.0]))


def test_gradient_of_a_tape_never_entered_raises():
    with pytest.raises(RuntimeError, match="GradientTape.gradient: the tape recorded nothing"):
        GradientTape().gradient(np.array(1.0), np.array(1.0))


def test_non_persistent_tape_allows_one_gradient_persistent_many():
    x = np.array(2.0)
    with GradientTape() as tape:
        xw = tape.watch(x)
        y = xw ** 3
        z = xw ** 2
    assert float(tape.gradient(y, x)) == 12.0
    with pytest.raises(RuntimeError, match="non-persistent GradientTape can be used for one"):
        tape.gradient(z, x)
    with pytest.raises(RuntimeError, match="non-persistent"):
        tape.jacobian(z, x)
    with GradientTape(persistent=True) as tape:
        xw = tape.watch(x)
        y = xw ** 3
        z = xw ** 2
    assert float(tape.gradient(y, x)) == 12.0
    assert float(tape.gradient(z, x)) == 4.0
    assert float(tape.gradient(y, x)) == 12.0     # the graph was kept
    del tape


def test_watch_accessed_variables_false_watches_what_is_watched():
    x, z = np.array([1.0, 2.0]), np.array([3.0])
    with GradientTape(watch_accessed_variables=False) as tape:
        xw = tape.watch(x)
        y = np.sum(xw ** 2) * z            # z not watched: a constant
    np.testing.assert_allclose(tape.gradient(y, x), [6.0, 12.0])
    assert tape.watched_variables() == (x,)


def test_watching_twice_returns_the_same_recorded_value():
    x = np.array([1.0, 2.0])
    with GradientTape() as tape:
        a = tape.watch(x)
        b = tape.watch(x)
        assert a is b
        y = np.sum(a * b)                  # x^2: 2x
    np.testing.assert_allclose(tape.gradient(y, x), [2.0, 4.0])
    assert tape.watched_variables() == (x,)


def test_stop_recording_makes_what_is_computed_a_constant():
    # y = x^2 recorded; z = 2 y in stop_recording is a constant c = 2 x^2 = 18 at x = 3;
    # w = c x: dw/dx = c = 18 (not 6 x^2 = 54 as if z were recorded).
    x = np.array(3.0)
    with GradientTape(persistent=True) as tape:
        xw = tape.watch(x)
        y = xw * xw
        with tape.stop_recording():
            z = 2.0 * y
        w = z * xw
    assert isinstance(z, (np.ndarray, np.floating)) and float(z) == 18.0
    assert float(tape.gradient(w, x)) == 18.0
    with pytest.raises(ValueError, match="was not recorded"):
        tape.gradient(z, x)


def test_stop_recording_outside_the_block_raises():
    tape = GradientTape()
    with pytest.raises(RuntimeError, match="stop_recording: the tape is not recording"):
        with tape.stop_recording():
            pass


def test_operations_after_the_block_are_not_recorded():
    x = np.array(2.0)
    with GradientTape() as tape:
        xw = tape.watch(x)
        y = xw ** 2
    z = y * 3.0                            # after the block: a plain value
    assert not isinstance(z, dualad.extend.Var) and float(z) == 12.0
    with pytest.raises(ValueError, match="not recorded"):
        tape.gradient(z, x)


def test_reset_forgets_what_was_recorded_as_tensorflow_documents():
    # TF's reset example: loss_fn recorded, reset, other_loss_fn added: only the second is
    # differentiated. loss = x^2 (then a constant), loss += 3 x: d/dx = 3.
    x = np.array(2.0)
    with GradientTape() as tape:
        xw = tape.watch(x)
        loss = xw ** 2
        tape.reset()
        assert tape.watched_variables() == ()
        xw = tape.watch(x)
        loss = loss + 3.0 * xw
    assert float(tape.gradient(loss, x)) == 3.0


def test_reset_makes_a_used_tape_usable_again():
    x = np.array(2.0)
    with GradientTape() as tape:
        xw = tape.watch(x)
        y = xw ** 2
    tape.gradient(y, x)
    tape.reset()
    with tape:
        xw = tape.watch(x)
        y = xw ** 3
    assert float(tape.gradient(y, x)) == 12.0


def test_entering_a_tape_inside_its_own_block_raises():
    tape = GradientTape()
    with tape:
        with pytest.raises(RuntimeError, match="already recording"):
            with tape:
                pass


def test_an_exception_in_the_block_leaves_the_tape_consistent():
    from dualad.transforms.gradient_tape import recording
    x = np.array([1.0, 2.0])
    tape = GradientTape(persistent=True)
    with pytest.raises(ZeroDivisionError):
        with tape:
            xw = tape.watch(x)
            y = np.sum(xw ** 2)
            1 / 0
    with pytest.raises(RuntimeError, match="not recording"):
        tape.watch(x)                       # the block is over: the tape stopped recording
    assert tape not in recording.stack()
    np.testing.assert_allclose(tape.gradient(y, x), [2.0, 4.0])   # what was recorded
    # the engine is as before: a functional gradient and a new tape work
    np.testing.assert_allclose(dualad.grad(lambda v: np.sum(v ** 3))(x), [3.0, 12.0])
    with tape:                              # and the tape can record again
        xw = tape.watch(x)
        y2 = np.sum(xw ** 3)
    np.testing.assert_allclose(tape.gradient(y2, x), [3.0, 12.0])


def test_recording_from_another_thread_raises_and_sweeping_after_the_block_works():
    import threading
    x = np.array([1.0, 2.0])
    errors, results = [], []
    with GradientTape(persistent=True) as tape:
        xw = tape.watch(x)

        def record():
            try:
                xw * 2.0
            except RuntimeError as e:
                errors.append(str(e))

        def sweep():
            try:
                tape.gradient(y, x)
            except RuntimeError as e:
                errors.append(str(e))

        th = threading.Thread(target=record)
        th.start()
        th.join()
        y = np.sum(xw ** 2)
        th = threading.Thread(target=sweep)
        th.start()
        th.join()
    assert len(errors) == 2 and all("another thread" in e for e in errors)
    assert "primitive 'multiply'" in errors[0] and "GradientTape.gradient" in errors[1]
    th = threading.Thread(target=lambda: results.append(tape.gradient(y, x)))
    th.start()
    th.join()
    np.testing.assert_allclose(results[0], [2.0, 4.0])


def test_tapes_in_two_threads_are_independent():
    import threading
    out = {}

    def work(name, c):
        x = np.array([1.0, 2.0])
        with GradientTape() as tape:
            xw = tape.watch(x)
            y = np.sum(c * xw ** 2)
        out[name] = tape.gradient(y, x)

    threads = [threading.Thread(target=work, args=(n, c)) for n, c in (("a", 1.0), ("b", 5.0))]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    np.testing.assert_allclose(out["a"], [2.0, 4.0])
    np.testing.assert_allclose(out["b"], [10.0, 20.0])


def test_gradient_inside_the_block_is_a_constant_to_the_same_tape():
    x = np.array(2.0)
    with GradientTape(persistent=True) as tape:
        xw = tape.watch(x)
        y = xw ** 3
        g = tape.gradient(y, x)            # 3 x^2 = 12, not recorded here
        z = y + 1.0
    assert float(g) == 12.0 and not isinstance(g, dualad.extend.Var)
    assert float(tape.gradient(z, x)) == 12.0      # the tape kept recording after it
    with pytest.raises(ValueError, match="nest two tapes"):
        tape.gradient(g, x)


def test_float32_sources_get_float32_gradients():
    x = np.array([1.0, 2.0], dtype=np.float32)
    with GradientTape() as tape:
        xw = tape.watch(x)
        y = np.sum(xw * xw)
    g = tape.gradient(y, x)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, [2.0, 4.0])


def test_a_complex_target_needs_output_gradients():
    z = np.array([1.0 + 1.0j])
    with GradientTape(persistent=True) as tape:
        zw = tape.watch(z)
        y = zw * zw
    with pytest.raises(TypeError, match="target .leaf 0. is complex"):
        tape.gradient(y, z)
    # seed 1: the cotangent conj-free convention of the engine's vjp: 1 · 2z
    g = tape.gradient(y, z, output_gradients=np.array([1.0 + 0j]))
    np.testing.assert_allclose(g, dualad.vjp(lambda v: v * v, z)[1](np.array([1.0 + 0j]))[0])


def test_output_gradients_of_the_wrong_shape_or_structure_raise():
    x = np.array([1.0, 2.0])
    with GradientTape(persistent=True) as tape:
        xw = tape.watch(x)
        y = xw ** 2
    with pytest.raises(ValueError, match=r"output_gradients \(leaf 0\) has shape \(3,\) but "
                                         r"the target has shape \(2,\)"):
        tape.gradient(y, x, output_gradients=np.ones(3))
    with pytest.raises(ValueError, match="output_gradients"):
        tape.gradient([y, y], x, output_gradients=[np.ones(2)])
    with pytest.raises(TypeError, match="is complex"):
        tape.gradient(y, x, output_gradients=np.ones(2) * 1j)


def test_a_gradient_tape_inside_dualad_grad_is_differentiable():
    # f(x) = sum(d/dx sum(x^3)) = sum(3 x^2); grad f = 6 x
    def f(x):
        with GradientTape() as tape:
            xw = tape.watch(x)
            y = np.sum(xw ** 3)
        return np.sum(tape.gradient(y, xw))
    np.testing.assert_allclose(dualad.grad(f)(np.array([1.0, 2.0])), [6.0, 12.0])


def test_watching_a_value_of_a_later_transformation_raises():
    tape = GradientTape()
    with tape:
        def f(x):
            with pytest.raises(ValueError, match="entered after this tape"):
                tape.watch(x)
            return np.sum(x)
        dualad.grad(f)(np.array([1.0]))


def test_an_autograd_variable_is_differentiated_once_watched():
    from dualad.autograd import Variable
    w = Variable(np.array([1.0, 2.0]), requires_grad=True)
    with GradientTape() as tape:
        ww = tape.watch(w)
        loss = np.sum(ww ** 2)
    g = tape.gradient(loss, w)
    np.testing.assert_allclose(dualad.extend.primal_value(g), [2.0, 4.0])
    with GradientTape() as tape:
        loss = np.sum(w ** 2)              # not watched: read in the block, so followed
    np.testing.assert_allclose(tape.gradient(loss, w), [2.0, 4.0])
    with GradientTape() as tape:
        xw = tape.watch(np.array([1.0]))
        loss = np.sum(w ** 2)              # with an array source, the target must be on the tape
    with pytest.raises(ValueError, match="dualad.autograd.Variable"):
        tape.gradient(loss, [w, xw])


# --- jacobian and batch_jacobian ---------------------------------------------------------

def test_jacobian_of_a_vector_function():
    # y = [x0 x1, x1^2, sin x2]: J = [[x1, x0, 0], [0, 2 x1, 0], [0, 0, cos x2]]
    x = np.array([2.0, 3.0, 0.5])
    with GradientTape() as tape:
        xw = tape.watch(x)
        y = dualad.numpy.stack([xw[0] * xw[1], xw[1] ** 2, np.sin(xw[2])])
    J = tape.jacobian(y, x)
    np.testing.assert_allclose(J, [[3.0, 2.0, 0.0], [0.0, 6.0, 0.0],
                                   [0.0, 0.0, np.cos(0.5)]], rtol=1e-14)


def test_jacobian_shape_is_target_shape_plus_source_shape():
    # y = W @ v, W (2, 3): dy_i/dW_jk = delta_ij v_k; dy/dv = W
    W = np.arange(6.0).reshape(2, 3)
    v = np.array([1.0, -1.0, 2.0])
    with GradientTape() as tape:
        Ww, vw = tape.watch([W, v])
        y = Ww @ vw
    JW, Jv = tape.jacobian(y, [W, v])
    assert JW.shape == (2, 2, 3) and Jv.shape == (2, 3)
    want = np.zeros((2, 2, 3))
    want[0, 0], want[1, 1] = v, v
    np.testing.assert_array_equal(JW, want)
    np.testing.assert_array_equal(Jv, W)


def test_jacobian_of_a_scalar_and_an_unconnected_source():
    x, z = np.array([1.0, 2.0]), np.array([[1.0]])
    with GradientTape(persistent=True) as tape:
        xw, zw = tape.watch(x), tape.watch(z)
        y = np.sum(xw ** 2)
        v = 2.0 * xw
    np.testing.assert_allclose(tape.jacobian(y, x), [2.0, 4.0])
    assert tape.jacobian(y, z) is None
    np.testing.assert_array_equal(tape.jacobian(v, z, unconnected_gradients="zero"),
                                  np.zeros((2, 1, 1)))


def test_batch_jacobian_per_example():
    # y[b] = tanh(x[b] @ A): B[b] = diag(1 - y[b]^2) Aᵀ
    rng = np.random.default_rng(1)
    x, A = rng.normal(size=(4, 3)), rng.normal(size=(3, 2))
    with GradientTape() as tape:
        xw = tape.watch(x)
        y = np.tanh(xw @ A)
    B = tape.batch_jacobian(y, x)
    assert B.shape == (4, 2, 3)
    t = np.tanh(x @ A)
    want = (1 - t ** 2)[:, :, None] * A.T[None]
    np.testing.assert_allclose(B, want, rtol=1e-12)


def test_batch_jacobian_with_more_axes():
    # y[b, i, j] = x[b, i] * x[b, j]... here y[b] = outer(x[b], c): dy[b,i,j]/dx[b,k] = δ_ik c_j
    x, c = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), np.array([1.0, 10.0, 100.0])
    with GradientTape() as tape:
        xw = tape.watch(x)
        y = xw[:, :, None] * c
    B = tape.batch_jacobian(y, x)
    assert B.shape == (3, 2, 3, 2)
    want = np.einsum("ik,j->ijk", np.eye(2), c)
    np.testing.assert_array_equal(B, np.broadcast_to(want, (3, 2, 3, 2)))


def test_batch_jacobian_refuses_rows_that_depend_on_other_rows():
    x = np.array([[1.0, 2.0], [3.0, 5.0]])
    with GradientTape() as tape:
        xw = tape.watch(x)
        y = xw - np.mean(xw, axis=0)       # every row depends on every row
    with pytest.raises(ValueError, match="rows that depend on other rows"):
        tape.batch_jacobian(y, x)


def test_batch_jacobian_shape_errors():
    x = np.ones((3, 2))
    with GradientTape(persistent=True) as tape:
        xw = tape.watch(x)
        y = np.sum(xw)
        z = xw[:2] * 2.0
    with pytest.raises(ValueError, match=r"target has shape \(\) and source \(3, 2\)"):
        tape.batch_jacobian(y, x)
    with pytest.raises(ValueError, match="same leading batch dimension"):
        tape.batch_jacobian(z, x)


def test_jacobian_inside_nested_tapes_is_differentiable():
    # y = x^3 elementwise: J = diag(3 x^2); d/dx sum(J) = 6 x
    x = np.array([1.0, 2.0])
    with GradientTape() as outer:
        with GradientTape() as inner:
            xw = inner.watch(outer.watch(x))
            y = xw ** 3
        J = inner.jacobian(y, x)
        s = np.sum(J)
    np.testing.assert_allclose(dualad.extend.primal_value(J), np.diag([3.0, 12.0]))
    np.testing.assert_allclose(outer.gradient(s, x), [6.0, 12.0])


@settings(derandomize=True, max_examples=25, deadline=None)
@given(st.lists(st.floats(-3, 3), min_size=1, max_size=5), st.floats(-2, 2), st.floats(-2, 2))
def test_gradient_of_a_cubic_matches_its_derivative(xs, a, b):
    # y = sum(a x^3 + b x): dy/dx = 3 a x^2 + b
    x = np.array(xs)
    with GradientTape() as tape:
        xw = tape.watch(x)
        y = np.sum(a * xw ** 3 + b * xw)
    np.testing.assert_allclose(tape.gradient(y, x), 3 * a * x ** 2 + b, rtol=1e-12, atol=1e-12)


# --- composition with the other transformations, aliasing --------------------------------

def _tape_gradient(x):
    with GradientTape() as tape:
        xw = tape.watch(x)
        y = np.sum(np.sin(xw) * xw)
    return tape.gradient(y, xw)            # cos(x) x + sin(x)


def test_a_tape_inside_vmap_gives_each_example_its_gradient():
    # The seed is one example's shape (a scalar), not the batch's: a batch of seeds would
    # give every example the whole batch's rows.
    xs = np.array([[0.5, 1.0], [2.0, 3.0], [-1.0, 0.25]])
    got = dualad.vmap(_tape_gradient)(xs)
    assert got.shape == (3, 2)
    np.testing.assert_allclose(got, np.cos(xs) * xs + np.sin(xs), rtol=1e-14)


def test_a_tape_inside_jit_follows_new_inputs():
    f = dualad.jit(_tape_gradient)
    for x in (np.array([0.5, 1.0]), np.array([2.0, 3.0])):
        np.testing.assert_allclose(f(x), np.cos(x) * x + np.sin(x), rtol=1e-14)


def test_batch_jacobian_inside_vmap():
    # y[b] = x[b]^2 * c: B[b] = diag(2 x[b] c), for each of 2 vmapped problems
    c = np.array([1.0, 3.0])

    def per_problem(x):
        with GradientTape() as tape:
            xw = tape.watch(x)
            y = xw ** 2 * c
        return tape.batch_jacobian(y, xw)

    xs = np.arange(1.0, 9.0).reshape(2, 2, 2)
    got = dualad.vmap(per_problem)(xs)
    want = np.zeros((2, 2, 2, 2))
    for p in range(2):
        for b in range(2):
            want[p, b] = np.diag(2 * xs[p, b] * c)
    np.testing.assert_allclose(got, want)


def test_gradients_never_alias_the_seed_or_each_other():
    x = np.array([1.0, 2.0])
    v = np.array([3.0, 4.0])
    with GradientTape(persistent=True) as tape:
        xw = tape.watch(x)
        y = np.sum(xw ** 2)
    g = tape.gradient(xw, x, output_gradients=v)      # the identity: the seed itself
    np.testing.assert_array_equal(g, v)
    g += 1.0
    np.testing.assert_array_equal(v, [3.0, 4.0])       # the caller's seed is untouched
    a, b = tape.gradient(y, [x, x])
    a += 1.0
    np.testing.assert_array_equal(b, [2.0, 4.0])
    np.testing.assert_array_equal(tape.gradient(xw, x), [1.0, 1.0])   # d x / d x


def test_a_zero_derivative_target_says_so():
    x = np.array([1.5, 2.5])
    with GradientTape() as tape:
        xw = tape.watch(x)
        y = np.floor(xw)                   # derivative zero everywhere: a plain array
    with pytest.raises(ValueError, match="derivative is zero everywhere"):
        tape.gradient(y, x)


def test_reset_from_another_thread_while_recording_raises():
    import threading
    errors = []
    with GradientTape() as tape:
        tape.watch(np.array([1.0]))

        def reset():
            try:
                tape.reset()
            except RuntimeError as e:
                errors.append(str(e))

        th = threading.Thread(target=reset)
        th.start()
        th.join()
    assert errors and "GradientTape.reset" in errors[0] and "another thread" in errors[0]


# --- in-place changes, memory, x[i] -----------------------------------------------------

def test_an_element_first_read_in_stop_recording_is_recorded_afterwards():
    # x[i] is cached per recorded value; a read in stop_recording must not cache a constant
    x = np.array([2.0, 5.0])
    with GradientTape() as tape:
        xw = tape.watch(x)
        with tape.stop_recording():
            c = xw[0] * 1.0
        b = xw[0] * xw[1]                  # d/dx = [x1, x0]
    assert float(c) == 2.0
    np.testing.assert_array_equal(tape.gradient(b, x), [5.0, 2.0])


def test_a_constant_modified_in_place_before_gradient_raises():
    x, c = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    with GradientTape() as tape:
        xw = tape.watch(x)
        y = np.sum(np.sin(xw) * c)
    c[0] = 100.0                           # the sweep would read 100 where the block used 3
    with pytest.raises(RuntimeError, match=r"GradientTape.gradient: an array used in the "
                                           r"forward pass was modified in place"):
        tape.gradient(y, x)


def test_a_constant_modified_in_place_inside_the_block_raises_when_it_ends():
    x, c = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    with pytest.raises(RuntimeError, match="GradientTape: the `with` block modified an array "
                                           "in place"):
        with GradientTape() as tape:
            xw = tape.watch(x)
            y = np.sin(xw) * c
            c[0] = 100.0


def test_the_watched_array_modified_later_does_not_reach_the_tape():
    # watch takes the value at that moment (TensorFlow's tensors are immutable values)
    x = np.array([1.0, 2.0])
    with GradientTape() as tape:
        xw = tape.watch(x)
        y = np.sum(xw ** 3)
    x[:] = 10.0
    np.testing.assert_array_equal(tape.gradient(y, x), [3.0, 12.0])


def test_a_failed_call_does_not_use_up_a_non_persistent_tape():
    x = np.array([1.0, 2.0])
    with GradientTape() as tape:
        xw = tape.watch(x)
        y = xw ** 2
    with pytest.raises(ValueError, match="output_gradients"):
        tape.gradient(y, x, output_gradients=np.ones(5))
    np.testing.assert_array_equal(tape.gradient(y, x), [2.0, 4.0])


def test_jacobian_takes_one_target():
    x = np.array([1.0, 2.0])
    with GradientTape() as tape:
        xw = tape.watch(x)
        y = xw ** 2
    with pytest.raises(TypeError, match="GradientTape.jacobian: target is a list"):
        tape.jacobian([y, y], x)


def test_a_non_persistent_tape_frees_its_graph_in_its_gradient_call():
    import weakref
    z, x = np.ones(1000), np.ones(1000)
    with GradientTape() as tape:
        zw = tape.watch(z)
        k = np.sin(zw)                     # recorded before x's leaf: the sweep never gets there
        xw = tape.watch(x)
        y = np.sum(np.cos(xw) * xw)
    ref = weakref.ref(k)
    del k
    tape.gradient(y, x)
    assert ref() is None                   # by reference counting: no cycle is left


def test_deleting_a_persistent_tape_frees_its_graph():
    import weakref
    x = np.ones(1000)
    with GradientTape(persistent=True) as tape:
        xw = tape.watch(x)
        h = np.sin(xw)
        y = np.sum(h * h)
    tape.gradient(y, x)
    ref = weakref.ref(h)
    del h, y, tape
    assert ref() is None


def test_hessian_as_the_jacobian_of_an_inner_gradient():
    # TF's guide: outer.jacobian(inner.gradient(y, x), x). y = x0^2 x1 + x1^3:
    # H = [[2 x1, 2 x0], [2 x0, 6 x1]]
    x = np.array([1.5, -2.0])
    with GradientTape() as outer:
        with GradientTape() as inner:
            xw = inner.watch(outer.watch(x))
            y = xw[0] ** 2 * xw[1] + xw[1] ** 3
        g = inner.gradient(y, x)
    H = outer.jacobian(g, x)
    np.testing.assert_allclose(H, [[-4.0, 3.0], [3.0, -12.0]])


def test_tapes_of_interleaved_asyncio_tasks_do_not_nest():
    # Each task's tapes are its own (a context variable): task b watching the same array
    # must not wrap task a's value, which would make b's gradient a traced value of a's tape.
    import asyncio
    x = np.array([1.0, 2.0])
    results = {}

    async def first(a_watched, b_done):
        with GradientTape() as tape:
            xw = tape.watch(x)             # a watches x, then lets b run while recording
            a_watched.set()
            await b_done.wait()
            y = np.sum(xw ** 2)
        results["a"] = tape.gradient(y, x)

    async def second(a_watched, b_done):
        await a_watched.wait()
        with GradientTape() as tape:       # a higher level than a's tape, a still recording
            xw = tape.watch(x)
            y = np.sum(3.0 * xw ** 2)
        results["b"] = tape.gradient(y, x)
        b_done.set()

    async def main():
        a_watched, b_done = asyncio.Event(), asyncio.Event()
        await asyncio.gather(first(a_watched, b_done), second(a_watched, b_done))

    asyncio.run(main())
    assert type(results["a"]) is np.ndarray and type(results["b"]) is np.ndarray
    np.testing.assert_allclose(results["a"], [2.0, 4.0])
    np.testing.assert_allclose(results["b"], [6.0, 12.0])


def test_a_none_leaf_in_a_target_list_is_named():
    x = np.array([1.0])
    with GradientTape() as tape:
        xw = tape.watch(x)
        y = np.sum(xw)
    with pytest.raises(TypeError, match=r"target \(leaf 1\) is None"):
        tape.gradient([y, None], x)


def test_empty_arrays():
    e = np.zeros(0)
    with GradientTape(persistent=True) as tape:
        ew = tape.watch(e)
        y = np.sum(ew ** 2)                # 0.0, and its gradient has no entries
        v = ew * 2.0
    g = tape.gradient(y, e)
    assert g.shape == (0,) and g.dtype == np.float64
    assert tape.jacobian(v, e).shape == (0, 0)
    assert tape.gradient(y, []) == []


def test_complex_sources_follow_dualad_grad():
    # the tape is grad's engine: the same convention for a real loss of complex inputs
    z = np.array([1.0 + 2.0j, -0.5 + 0.25j])

    def loss(v):
        return np.sum(np.abs(v) ** 2 + np.real(v * v))

    with GradientTape() as tape:
        zw = tape.watch(z)
        y = loss(zw)
    np.testing.assert_allclose(tape.gradient(y, z), dualad.grad(loss)(z), rtol=1e-14)


@settings(derandomize=True, max_examples=20, deadline=None)
@given(st.integers(1, 4), st.integers(1, 4), st.integers(0, 2 ** 16))
def test_jacobian_and_batch_jacobian_of_tanh_of_a_linear_map(m, n, seed):
    # y = tanh(A x): J = diag(1 - y^2) A; per example y[b] = tanh(A x[b]) gives the same
    rng = np.random.default_rng(seed)
    A, x, xs = rng.normal(size=(m, n)), rng.normal(size=n), rng.normal(size=(3, n))
    with GradientTape(persistent=True) as tape:
        xw, xsw = tape.watch([x, xs])
        y = np.tanh(A @ xw)
        ys = np.tanh(xsw @ A.T)
    t = np.tanh(A @ x)
    np.testing.assert_allclose(tape.jacobian(y, x), (1 - t ** 2)[:, None] * A, rtol=1e-12,
                               atol=1e-14)
    ts = np.tanh(xs @ A.T)
    np.testing.assert_allclose(tape.batch_jacobian(ys, xs), (1 - ts ** 2)[:, :, None] * A,
                               rtol=1e-12, atol=1e-14)


def test_a_change_between_two_blocks_of_a_persistent_tape_is_caught():
    # block 1 saves c; c changes; block 2 records more: the gradient of block 1's value must
    # not read the new c as if the first block had used it
    x, c = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    tape = GradientTape(persistent=True)
    with tape:
        xw = tape.watch(x)
        y = np.sum(np.sin(xw) * c)
    c[0] = 100.0
    with tape:
        z = np.sum(xw ** 2)
    with pytest.raises(RuntimeError, match="modified in place"):
        tape.gradient(y, x)


@pytest.mark.parametrize("bad", ["x", object(), (v for v in [1.0])])
def test_a_source_that_is_not_an_array_raises_naming_it(bad):
    x = np.array([1.0])
    with GradientTape(persistent=True) as tape:
        xw = tape.watch(x)
        y = np.sum(xw)
    with pytest.raises(TypeError, match=r"GradientTape.gradient: sources (\(leaf 1\) )?is a"):
        tape.gradient(y, [x, bad])


def test_a_value_recorded_before_reset_is_not_a_target():
    x = np.array(2.0)
    with GradientTape() as tape:
        xw = tape.watch(x)
        y = xw ** 2
        tape.reset()
        tape.watch(x)
    with pytest.raises(ValueError, match=r"before its reset\(\)"):
        tape.gradient(y, x)


def test_none_entries_of_output_gradients_seed_ones_as_tensorflow():
    x = np.array([1.0, 2.0])
    with GradientTape() as tape:
        xw = tape.watch(x)
        a, b = xw ** 2, 3.0 * xw
    g = tape.gradient([a, b], x, output_gradients=[None, np.array([0.0, 1.0])])
    np.testing.assert_allclose(g, [2.0, 7.0])   # [2·1 + 0, 2·2 + 3]


def test_in_place_writes_into_recorded_values():
    # into an intermediate value: recorded. y = sum(z^2) with z = [5, x1] + 1: dy/dx = [0, 2(x1 + 1)]
    x = np.array([1.0, 2.0])
    with GradientTape() as tape:
        xw = tape.watch(x)
        z = xw * 1.0
        z[0] = 5.0
        z += 1.0
        y = np.sum(z ** 2)
    np.testing.assert_array_equal(tape.gradient(y, x), [0.0, 6.0])
    # into the watched value itself: refused (the sweep needs it), never silently dropped
    with GradientTape() as tape:
        xw = tape.watch(x)
        with pytest.raises(TypeError, match="in-place write cannot replace"):
            xw += 1.0


@pytest.mark.parametrize("persistent", [False, True])
def test_jacobians_swept_in_blocks_of_rows_match(monkeypatch, persistent):
    # A tiny seed budget makes every row its own block: the same Jacobians, and a
    # non-persistent tape is kept until the last block.
    from dualad.transforms.gradient_tape import sweeps
    x = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]])
    A = np.array([[1.0, 2.0], [0.0, 1.0], [-1.0, 3.0]])

    def jacobians():
        with GradientTape(persistent=True) as tape:
            xw = tape.watch(x)
            y = np.sin(xw @ A)               # (2, 2)
        full = tape.jacobian(y, x)
        with GradientTape(persistent=persistent) as tape:
            xw = tape.watch(x)
            y = np.sin(xw @ A)
        return full, tape.batch_jacobian(y, x)

    want_full, want_batch = jacobians()
    monkeypatch.setattr(sweeps, "SEED_BYTES", 1)
    full, batch = jacobians()
    np.testing.assert_array_equal(full, want_full)
    np.testing.assert_allclose(batch, want_batch, rtol=1e-15)
    c = np.cos(x @ A)
    np.testing.assert_allclose(batch, c[:, :, None] * A.T[None], rtol=1e-14)
    for b in range(2):
        np.testing.assert_allclose(full[b, :, b], batch[b], rtol=1e-14)


# --- trainable variables: dualad.autograd.Variable(requires_grad=True) -------------------

def test_trainable_variables_are_watched_when_read_as_tensorflow_does():
    # loss = (w·x)^2 + b: dloss/dw = 2 (w·x) x = 22 x, dloss/db = 1
    from dualad.autograd import Variable
    w = Variable(np.array([1.0, 2.0]), requires_grad=True)
    b = Variable(np.array(0.5), requires_grad=True)
    x = np.array([3.0, 4.0])
    with GradientTape() as tape:
        loss = np.sum(w * x) ** 2 + b
    gw, gb = tape.gradient(loss, [w, b])
    np.testing.assert_allclose(gw, [66.0, 88.0])
    assert float(gb) == 1.0
    assert w.grad is None                  # returned, not accumulated into .grad


def test_trainable_variables_and_watched_arrays_together():
    # loss = sum(w * x) with x watched: dloss/dw = x, dloss/dx = w
    from dualad.autograd import Variable
    w = Variable(np.array([1.0, 2.0]), requires_grad=True)
    x = np.array([3.0, 4.0])
    with GradientTape(persistent=True) as tape:
        xw = tape.watch(x)
        loss = np.sum(w * xw)
    g = tape.gradient(loss, {"w": w, "x": x})
    np.testing.assert_allclose(g["w"], [3.0, 4.0])
    np.testing.assert_allclose(dualad.extend.primal_value(g["x"]), [1.0, 2.0])


def test_trainable_variables_with_output_gradients_and_unconnected():
    from dualad.autograd import Variable
    w = Variable(np.array([1.0, 2.0]), requires_grad=True)
    v = Variable(np.array([5.0]), requires_grad=True)
    with GradientTape() as tape:
        y = w ** 2
    g = tape.gradient(y, [w, v], output_gradients=np.array([1.0, -1.0]),
                      unconnected_gradients="zero")
    np.testing.assert_allclose(g[0], [2.0, -4.0])
    np.testing.assert_array_equal(g[1], [0.0])


def test_a_variable_used_before_the_block_is_not_silently_differentiated():
    # TF: u = 2w computed before the block is a constant to the tape (gradient None);
    # the imperative tape recorded it, so the tape refuses rather than differ.
    from dualad.autograd import Variable
    w = Variable(np.array([1.0, 2.0]), requires_grad=True)
    u = w * 2.0
    with GradientTape() as tape:
        loss = np.sum(u ** 2)
    with pytest.raises(ValueError, match=r"through 'multiply' \(shape \(2,\)\), computed "
                                         r"while this tape was not recording"):
        tape.gradient(loss, w)
    with GradientTape() as tape:
        with tape.stop_recording():
            u = w * 2.0
        loss = np.sum(u ** 2)
    with pytest.raises(ValueError, match="not recording"):
        tape.gradient(loss, w)
    with GradientTape() as tape:
        h = w * 2.0
    loss = np.sum(h ** 2)                  # after the block
    with pytest.raises(ValueError, match="not recording"):
        tape.gradient(loss, w)


def test_watch_accessed_variables_false_leaves_variables_unwatched():
    from dualad.autograd import Variable
    w = Variable(np.array([1.0, 2.0]), requires_grad=True)
    x = np.array([1.0, 1.0])
    with GradientTape(watch_accessed_variables=False) as tape:
        xw = tape.watch(x)
        loss = np.sum(w * xw)
    with pytest.warns(UserWarning, match="never watched"):
        g = tape.gradient(loss, [w, x])
    assert g[0] is None
    np.testing.assert_allclose(dualad.extend.primal_value(g[1]), [1.0, 2.0])


def test_jacobian_with_respect_to_trainable_variables(monkeypatch):
    # y = W @ x + b with W (2, 3): dy_i/dW_jk = delta_ij x_k, dy/db = I; and y^2: 2 diag(y) ·
    from dualad.autograd import Variable
    from dualad.transforms.gradient_tape import sweeps
    W = Variable(np.arange(6.0).reshape(2, 3), requires_grad=True)
    b = Variable(np.array([1.0, -1.0]), requires_grad=True)
    x = np.array([1.0, 2.0, -1.0])

    def jacobians():
        with GradientTape(persistent=True) as tape:
            y = W @ x + b
            z = y ** 2
        return tape.jacobian(y, [W, b]), tape.jacobian(z, b)

    (JW, Jb), Jz = jacobians()
    want = np.zeros((2, 2, 3))
    want[0, 0], want[1, 1] = x, x
    np.testing.assert_array_equal(JW, want)
    np.testing.assert_array_equal(Jb, np.eye(2))
    y = W.numpy() @ x + b.numpy()
    np.testing.assert_allclose(Jz, np.diag(2 * y))
    monkeypatch.setattr(sweeps, "SEED_BYTES", 1)     # one row per sweep: the same
    (JW1, Jb1), Jz1 = jacobians()
    np.testing.assert_array_equal(JW1, JW)
    np.testing.assert_array_equal(Jb1, Jb)
    np.testing.assert_array_equal(Jz1, Jz)


def test_a_batch_jacobian_with_respect_to_an_unwatched_variable_is_refused():
    from dualad.autograd import Variable
    w = Variable(np.array([1.0, 2.0]), requires_grad=True)
    with GradientTape(persistent=True) as tape:
        y = w ** 2
    with pytest.raises(TypeError, match="GradientTape.batch_jacobian: the source .* is a "
                                        "trainable"):
        tape.batch_jacobian(y, w)


def test_a_failed_call_with_variables_does_not_use_up_the_tape():
    from dualad.autograd import Variable
    w = Variable(np.array([1.0, 2.0]), requires_grad=True)
    with GradientTape() as tape:
        y = w ** 2
    with pytest.raises(ValueError, match=r"output_gradients \(leaf 0\) has shape \(3,\)"):
        tape.gradient(y, w, output_gradients=np.ones(3))
    np.testing.assert_allclose(tape.gradient(y, w), [2.0, 4.0])


def test_a_variable_path_recorded_before_reset_is_refused():
    # TF's reset example with a trainable variable: loss_fn's part becomes a constant there
    # (gradient 3); the imperative tape kept it, so the tape refuses rather than give 2w + 3.
    from dualad.autograd import Variable
    w = Variable(np.array(2.0), requires_grad=True)
    with GradientTape() as tape:
        loss = w * w
        tape.reset()
        loss = loss + 3.0 * w
    with pytest.raises(ValueError, match=r"through 'multiply'.*not recording"):
        tape.gradient(loss, w)
    with GradientTape() as tape:           # recorded after the reset only: followed
        tape.reset()
        loss = 3.0 * w
    assert float(tape.gradient(loss, w)) == 3.0


@pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")
@pytest.mark.parametrize("make", [lambda: np.matrix([[1.0, 2.0]]),
                                  lambda: np.ma.masked_array([1.0, 2.0]),
                                  lambda: np.array([1.0, "a"], dtype=object)],
                         ids=["matrix", "masked", "object"])
def test_arrays_dualad_does_not_follow_are_refused_by_watch(make):
    with GradientTape() as tape:
        with pytest.raises(TypeError, match="GradientTape.watch"):
            tape.watch(make())
        assert tape.watched_variables() == ()
