"""Lists and tuples of traced values given to plain NumPy (dualad.frontend.objects).

``np.array([x, y])`` and friends run NumPy's C code on the list; a traced value answers
``__array__`` with an object array of traced scalars, restacked into one traced array
wherever it meets dualad. Every derivative is checked against finite differences
(dualad.verification.check_grads: forward and reverse mode, order 2) or a closed form.
"""
import numpy as np
import pytest

import dualad
from dualad.frontend import objects
from dualad.interpreters.reverse.tape import VJPTrace
from dualad.verification import check_grads

X3 = np.array([0.3, -1.2, 0.7])
M = np.array([[1.0, 2.0], [0.5, -1.0], [3.0, 0.2]])


@pytest.mark.parametrize("f, x", [
    (lambda x: np.array([x, x ** 2, np.sin(x)]), 0.7),
    (lambda x: np.array([[x, x * 1.0, x + 2.5], [x ** 2, x, x / 2.0]]), 3.0),
    (lambda x: np.array((x, 2.0, x ** 3)), 1.3),                      # a tuple, a constant
    (lambda x: np.asarray([x, 3 * x]) * 2.0, -0.4),
    (lambda x: np.array([X3 * x, np.cos(X3) * x]), 0.8),               # plain arrays inside
    (lambda x: np.array([x, x]), M),                                    # arrays of a shape
    (lambda x: np.array([[2 * x, x + 1], [x, x]]), M),
    (lambda x: np.array(x), 3.0),
    (lambda x: np.array([x[0] * x[1], x[2]]) ** 2, X3),
    (lambda x: (lambda A: A + A)(np.array([x, x * 1.0, x + 2.5])), 3.0),   # object-loop add
    (lambda x: np.sin(np.array([x, 2 * x])), 0.4),          # an object loop calls x.sin()
    (lambda x: np.exp(np.array([x[0], x[1]])) @ np.array([1.0, 2.0]), X3),
    (lambda x: np.arctan2(np.array([x, 2 * x]), np.array([x ** 2, x])), 0.6),
    (lambda x: np.sin(np.stack([x, 1.0])), 0.6),      # what to write when constants mix in
])
def test_array_of_traced_values(f, x):
    check_grads(f, (np.asarray(x, dtype=float),), order=2)


def test_shape_of_stacked_vectors_is_numpys():
    def f(x, y):
        A = np.array([x, y])
        assert A.shape == (2, 3)            # never (2,) holding vectors
        assert np.array([[x], [y]]).shape == (2, 1, 3)
        return np.sum(A * np.arange(6.0).reshape(2, 3))
    gx, gy = dualad.grad(f, argnums=(0, 1))(X3, X3 + 1)
    np.testing.assert_allclose(gx, [0.0, 1.0, 2.0])
    np.testing.assert_allclose(gy, [3.0, 4.0, 5.0])


@pytest.mark.parametrize("fn, closed", [
    (lambda x: np.sum([x, 3 * x, x ** 2]), lambda x: 4 + 2 * x),
    (lambda x: np.mean([x, x + 2]), lambda x: 1.0),
    (lambda x: np.mean((x, x ** 2)), lambda x: (1 + 2 * x) / 2),
    (lambda x: np.std([x, x + 2]), lambda x: 0.0),
    (lambda x: np.var([x, 3 * x]), lambda x: 2 * x),           # var = x², exactly
    (lambda x: np.std([x, 3 * x], ddof=1), lambda x: np.sqrt(2.0) * np.sign(x)),
    (lambda x: np.linalg.norm([x, 2.0]), lambda x: x / np.hypot(x, 2.0)),
    (lambda x: np.polyval([x, 2.0, x ** 2], 3.0), lambda x: 9.0 + 2 * x),
    (lambda x: np.polyval([1.0, x, 2.0], x), lambda x: 4 * x),   # dispatched on x
    (lambda x: np.max(np.array([x, x])), lambda x: 1.0),         # a tie of equal entries
    (lambda x: np.min(np.array([x, 0.5 * x, 2.0])), lambda x: 0.5 if x > 0 else 1.0),
    (lambda x: np.prod(np.array([x, x, 2.0])), lambda x: 4 * x),
    (lambda x: np.dot(np.array([x, 1.0]), np.array([2.0, x])), lambda x: 3.0),
])
@pytest.mark.parametrize("x", [0.7, -1.3])
def test_numpy_reductions_of_lists(fn, closed, x):
    np.testing.assert_allclose(dualad.grad(fn)(x), closed(x), atol=1e-12)
    _, t = dualad.jvp(fn, (x,), (1.0,))
    np.testing.assert_allclose(t, closed(x), atol=1e-12)
    check_grads(fn, (np.float64(x),), order=2)


def test_mean_of_lists_along_an_axis_stays_traced():
    f = lambda x: np.mean([[x, 2 * x], [x ** 2, 1.0]], axis=0)   # object array, restacked
    check_grads(f, (np.float64(0.9),), order=2)
    np.testing.assert_allclose(dualad.jvp(f, (0.9,), (1.0,))[1], [(1 + 1.8) / 2, 1.0])


@pytest.mark.parametrize("f, x", [
    (lambda x: np.r_[x, x], X3),
    (lambda x: np.r_[x], M),
    (lambda x: np.r_[x, M], M),
    (lambda x: np.r_[x[0], 1.0, x[1:]], X3),
    (lambda x: np.r_[x, np.ones(3), 1:4], X3),                      # a slice: arange
    (lambda x: np.r_[x, 0:1:3j], X3),
    (lambda x: np.c_[x, M, x], M),
    (lambda x: np.c_[x, X3], X3),
    (lambda x: np.append([x[0], 2.0], x), X3),
    (lambda x: np.append([[x[0], x[1]]], [[1.0, x[2]]], axis=0), X3),
    (lambda x: np.concatenate([x, np.ones(2)]), X3),
    (lambda x: np.concatenate([np.array([x[0], 1.0]), x]), X3),     # object array + traced
    (lambda x: np.concatenate((np.array([x[0], x[1]]), np.ones(2))), X3),   # no box visible
    (lambda x: np.vstack([x, np.ones(3), np.array([x[2], 0.0, x[0]])]), X3),
    (lambda x: np.hstack([np.array([x[1], 2.0]), x, [3.0]]), X3),
    (lambda x: np.stack([x, np.array([1.0, x[0], x[1]])]), X3),
])
def test_joining_lists(f, x):
    check_grads(f, (x,), order=2)


def test_row_stack_with_an_object_array():
    if not hasattr(np, "row_stack"):
        pytest.skip("numpy.row_stack was removed in this NumPy")
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        check_grads(lambda x: np.row_stack([np.array([x[0], x[1], 1.0]), x]), (X3,), order=2)


def test_an_object_array_times_a_traced_value_in_every_order():
    # ``x * A`` goes through Var's operator fast path, ``A * x`` through __array_ufunc__:
    # both restack A (without it, the tape would hold an object array as a constant and
    # the product's derivative would be wrong).
    for f in (lambda x: x * np.array([x, 2.0]), lambda x: np.array([x, 2.0]) * x,
              lambda x: x + np.array([x ** 2, x]), lambda x: np.array([x ** 2, x]) - x,
              lambda x: x / np.array([x + 2.0, 3.0]),
              lambda x: (x * np.ones(2)) @ np.array([x, 1.0]),
              lambda x: np.array([x, 2.0]) ** x):
        x0 = np.float64(0.6)
        check_grads(f, (x0,), order=2)


def test_vectors_in_a_list_times_a_traced_vector():
    f = lambda x: np.sum(x * np.array([x[0], x[1], x[2] ** 2]))
    np.testing.assert_allclose(dualad.grad(f)(X3), [2 * X3[0], 2 * X3[1], 3 * X3[2] ** 2])


def test_second_order_and_nesting():
    def f(x):
        g = dualad.grad(lambda y: y[0] * y[1])(np.array([x, x]) if False else (x, x))
        return np.sum(np.sin(np.array(g)))
    check_grads(f, (np.float64(0.5),), order=2)
    h = dualad.derivative(lambda x: np.sum(np.array([x ** 3, x])), 2)(1.5)
    np.testing.assert_allclose(h, 6 * 1.5)


def test_float32_entries_keep_float32():
    out, tan = dualad.jvp(lambda x: np.array([x, 2 * x]), (np.float32(1.5),),
                          (np.float32(1.0),))
    assert out.dtype == np.float32 and tan.dtype == np.float32


def test_restack_returns_one_traced_array_of_the_objects_shape():
    def f(x):
        A = np.array([[x, 1.0], [2 * x, 3]])
        T = objects.to_traced(A)
        assert isinstance(T, dualad.Var) and T.shape == (2, 2) and T.dtype == np.float64
        return T
    out, pullback = dualad.vjp(f, 2.0)
    np.testing.assert_array_equal(out, [[2.0, 1.0], [4.0, 3.0]])
    assert pullback(np.ones((2, 2)))[0] == 3.0
    plain = np.array([1, "a"], dtype=object)
    assert objects.to_traced(plain) is plain               # no traced value: untouched


def test_object_arrays_that_no_array_can_be_raise():
    def holding_vectors(x):
        A = np.empty(2, dtype=object)
        A[0], A[1] = x, x
        return A * 1.0 + x                                     # meets dualad: restacked
    with pytest.raises(ValueError, match=r"shape \(2,\) holds a traced value of shape \(3,\)"
                                         r".*dualad.numpy.stack"):
        dualad.grad(lambda x: np.sum(holding_vectors(x)))(X3)
    with pytest.raises(TypeError, match="holds str 'a'"):
        dualad.grad(lambda x: np.sum(x + np.array([x[0], "a", 1.0], dtype=object)))(X3)


def test_math_ufunc_of_mixed_object_array_fails_loudly_in_numpy():
    # NumPy's object loop calls 1.0.sin(): its own error, never a silent result
    with pytest.raises((TypeError, AttributeError), match="sin"):
        dualad.grad(lambda x: np.sum(np.sin(np.array([x, 1.0]))))(0.5)


def test_compiled_code_given_an_object_array_fails_loudly():
    # np.linalg refuses object arrays; a float() of an entry raises our error
    with pytest.raises(TypeError):
        dualad.grad(lambda x: np.sum(np.linalg.inv(np.array([[x, 1.0], [0.0, x]]))))(2.0)
    with pytest.raises((TypeError, ValueError)) as info:   # NumPy's error, caused by ours
        dualad.grad(lambda x: np.sum(np.array([x, 1.0]).astype(float)))(2.0)
    assert "float()" in str(info.value) + str(info.value.__cause__)
    with pytest.raises((TypeError, ValueError)) as info:
        dualad.grad(lambda x: np.array([x, 1.0], dtype=float).sum())(2.0)
    assert "cannot convert a traced value of shape ()" in str(info.value) + str(
        info.value.__cause__)
    with pytest.raises(TypeError, match="cannot convert a traced value"):
        dualad.grad(lambda x: np.float64(x))(2.0)


def test_assignment_into_a_plain_array_still_raises():
    def f(x):
        out = np.zeros((2, 3))
        out[0] = x                        # __array__(dtype=float64): would lose the derivative
        return np.sum(out)
    with pytest.raises(TypeError, match=r"shape \(3,\).*out\[i\] = x"):
        dualad.grad(f)(X3)


def test_the_entries_and_the_restack_are_linear_in_the_size():
    # cost: one recorded ``index`` per entry turned into an object array, one ``reshape``
    # per entry restacked, plus one ``concatenate``
    for n in (5, 50):
        trace = VJPTrace(tape=True)
        x = trace.new_leaf(np.arange(float(n)))
        start = len(trace.tape)
        A = np.asarray(x)
        assert A.shape == (n,) and A.dtype == object
        made = len(trace.tape) - start
        T = objects.to_traced(A)
        assert made == n and len(trace.tape) - start == 2 * n + 1
        np.testing.assert_array_equal(T.value, np.arange(float(n)))
        trace.stop()


def test_dispatch_is_used_where_it_sees_the_traced_values():
    # np.concatenate/np.stack of a list holding a traced array is dispatched: no entries
    trace = VJPTrace(tape=True)
    x = trace.new_leaf(np.arange(4.0))
    start = len(trace.tape)
    np.concatenate([x, np.ones(2)])
    assert len(trace.tape) - start == 1
    trace.stop()


def test_scipy_sparse_gets_the_value_itself():
    # The contract with dualad.scipy.sparse: called from scipy.sparse's _matmul_dispatch
    # (A @ x, and spmatrix's A * x), np.asanyarray(x) is a 0-d object array holding x, so
    # the sparse operator returns NotImplemented and Python calls x's reflected operator.
    code = compile("def _matmul_dispatch(x):\n    return np.asanyarray(x)\n",
                   "<scipy.sparse frame>", "exec")
    seen = {}

    def f(x):
        scope = {"__name__": "scipy.sparse._fake_base", "np": np}
        exec(code, scope)
        seen["result"] = scope["_matmul_dispatch"](x)
        return np.sum(x)
    dualad.grad(f)(X3)
    r = seen["result"]
    assert r.shape == () and r.dtype == object and isinstance(r[()], dualad.Var)
    assert r[()].shape == (3,)


def test_jacobians_of_functions_that_build_arrays_from_lists():
    from dualad import jacobians
    x = np.array([0.5, 2.0])
    f = lambda x: np.array([x[0], x[1] ** 2, x[0] * x[1]])
    closed = np.array([[1.0, 0.0], [0.0, 2 * x[1]], [x[1], x[0]]])
    for mode in ("fwd", "rev", "auto"):
        np.testing.assert_allclose(jacobians.jacobian(f, mode=mode)(x), closed)
    # the sparsity detector restacks too (an object-array output once read as all-zero)
    np.testing.assert_allclose(jacobians.sparse_jacobian(f)(x).toarray(), closed)
    h = jacobians.sparse_hessian(lambda x: np.sum(np.array([x[0] ** 3, x[0] * x[1]])))(x)
    np.testing.assert_allclose(h.toarray(), [[6 * x[0], 1.0], [1.0, 0.0]])


@pytest.mark.parametrize("shape", [(), (1,), (1, 1), (1, 1, 1)])
def test_grad_accepts_any_one_element_output(shape):
    f = lambda x: np.reshape(np.sum(x ** 2) * x[0], shape)
    x = np.array([0.5, 2.0])
    closed = np.array([x @ x + 2 * x[0] ** 2, 2 * x[0] * x[1]])
    np.testing.assert_allclose(dualad.grad(f)(x), closed)
    value, g = dualad.value_and_grad(f)(x)
    assert np.shape(value) == shape
    np.testing.assert_allclose(g, closed)
    # built from a list: an object array of one traced scalar
    np.testing.assert_allclose(dualad.grad(lambda x: np.array([[x[0] * x[1]]]))(x),
                               [x[1], x[0]])
    with pytest.raises(TypeError, match=r"scalar.*\(2,\).*vjp"):
        dualad.grad(lambda x: np.array([x[0], x[1]]))(x)


def test_large_traced_arrays_are_not_turned_into_object_arrays(monkeypatch):
    monkeypatch.setattr(objects, "MAX_ENTRIES", 4)
    with pytest.raises(TypeError, match=r"shape \(5,\).*5 traced scalars.*np.concatenate"):
        dualad.grad(lambda x: np.sum(np.r_[x, 1.0]))(np.arange(5.0))
    np.testing.assert_allclose(                                   # the dispatched spelling
        dualad.grad(lambda x: np.sum(np.concatenate([x, [1.0]]) ** 2))(np.arange(5.0)),
        2 * np.arange(5.0))


def test_complex_entries_and_python_ints():
    z0 = 1.0 + 1.0j
    out, tan = dualad.jvp(lambda z: np.array([z, z ** 2, 1j]), (z0,), (1.0 + 0j,))
    np.testing.assert_allclose(out, [z0, z0 ** 2, 1j])
    np.testing.assert_allclose(tan, [1.0, 2 * z0, 0.0])
    # the same gradient as the dispatched spelling (the complex convention is dualad's)
    np.testing.assert_allclose(dualad.grad(lambda z: np.abs(np.sum(np.array([z, z ** 2]))))(z0),
                               dualad.grad(lambda z: np.abs(z + z ** 2))(z0))
    out, tan = dualad.jvp(lambda x: np.array([x, 1]), (2.0,), (1.0,))   # an int entry
    assert out.dtype == np.float64
    np.testing.assert_array_equal(tan, [1.0, 0.0])


def test_an_object_array_as_the_input_of_a_nested_grad():
    # the inner grad's input is np.array([x, 2x]) of the outer trace's value
    def outer(x):
        g = dualad.grad(lambda v: v[0] * v[1] ** 2)(np.array([x, 2 * x]))
        return g[0] + g[1]          # (2x)² + 2·x·2x = 8x²
    np.testing.assert_allclose(dualad.grad(outer)(1.5), 16 * 1.5)
    check_grads(outer, (np.float64(1.5),), order=2)


def test_dualad_numpy_array_takes_numpy_s_keywords():
    """dualad.numpy.array of traced values: dtype= casts (a complex result carries the
    derivative), copy= gives an independent array (a write into it leaves x alone),
    ndmin= adds leading axes; each against finite differences."""
    import dualad.numpy as dnp
    x = np.array([0.3, 0.7])
    check_grads(lambda x: np.real(dnp.array([x[0], x[1] * x[0]], dtype=np.complex128) * 1j
                                  + 2).sum() + np.imag(dnp.array([x[0]], dtype=complex)
                                                       * (1 + 1j)).sum(), (x,))

    def written(x):
        y = dnp.array(x)
        y[0] = 5.0
        return np.sum(x) + np.sum(y ** 2)
    check_grads(written, (x,))
    np.testing.assert_allclose(dualad.grad(written)(x), [1.0, 1.0 + 2 * x[1]])
    assert dualad.grad(lambda x: np.sum(dnp.array(x, ndmin=3) ** 2))(x).shape == (2,)
    assert dualad.jvp(lambda x: dnp.array(x, ndmin=3), (x,), (x,))[0].shape == (1, 1, 2)
