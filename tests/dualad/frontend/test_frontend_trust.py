"""Issue 30, the front end: arrays whose arithmetic dualad does not follow (np.matrix,
masked arrays), the dtype of a gradient, SciPy's errors, and PyTorch's keyword spellings
on dualad.autograd's Variable."""
import subprocess
import sys

import numpy as np
import pytest
import scipy.optimize
import scipy.special

import dualad
from dualad import jacobians
from dualad.autograd import Variable
from dualad.autograd import grad as autograd_grad

pytestmark = pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")   # np.matrix

X3 = np.array([0.5, 1.0, 1.5])
M = np.array([[1.0, 2.0], [3.0, 4.0]])


def loss(x):
    return np.sum(x * x)


# --- np.matrix and masked arrays ------------------------------------------------------------
@pytest.mark.parametrize("api, call", [
    ("grad", lambda x: dualad.grad(loss)(x)),
    ("jvp", lambda x: dualad.jvp(loss, (x,), (x,))),
    ("vjp", lambda x: dualad.vjp(loss, x)),
    ("hvp", lambda x: dualad.hvp(loss, x, x)),
    ("derivative", lambda x: dualad.derivative(loss)(x)),
    ("value_and_grad", lambda x: dualad.value_and_grad(loss)(x)),
])
def test_a_matrix_input_is_refused_naming_api_function_type_and_what_to_write(api, call):
    # x * x of an np.matrix is a matrix product: the elementwise gradient was silently wrong
    with pytest.raises(TypeError) as info:
        call(np.matrix(M))
    msg = str(info.value)
    head = "grad" if api == "value_and_grad" else api
    assert msg.startswith(f"{head}: argument 0 of loss is a numpy.matrix of shape (2, 2)")
    assert "np.asarray(x)" in msg and "with @" in msg


def test_a_masked_input_is_refused():
    x = np.ma.array(X3, mask=[0, 1, 0])
    with pytest.raises(TypeError) as info:
        dualad.grad(loss)(x)
    msg = str(info.value)
    assert msg.startswith("grad: argument 0 of loss is a numpy.ma.MaskedArray of shape (3,) "
                          "with 1 masked entry")
    assert "np.ma.getdata(x)" in msg and "np.ma.getmaskarray(x)" in msg


def test_planner_and_variable_refuse_them_too():
    with pytest.raises(TypeError, match=r"^jacobian\(loss\): argument 0 is a numpy\.matrix"):
        jacobians.jacobian(loss, np.matrix(M))
    with pytest.raises(TypeError, match=r"^Variable: argument 0 is a numpy\.ma\.MaskedArray"):
        Variable(np.ma.array(X3, mask=[1, 0, 0]), requires_grad=True)
    with pytest.raises(TypeError, match=r"^Variable: argument 0 is a numpy\.matrix"):
        Variable(np.matrix(M), requires_grad=True)
    assert type(Variable(0.5, requires_grad=True).value) is np.float64   # unchanged


@pytest.mark.parametrize("f", [
    lambda x, C: np.sum(x * C),
    lambda x, C: np.sum(C * x),                 # NumPy: a matrix product
    lambda x, C: np.sum(np.multiply(x, C)),
    lambda x, C: np.sum(x + C),
    lambda x, C: np.sum(x @ C),
])
def test_a_matrix_constant_meeting_a_traced_value_is_refused(f):
    C = np.matrix(M)
    for run in (lambda: dualad.grad(lambda x: f(x, C))(np.ones((2, 2))),
                lambda: dualad.jvp(lambda x: f(x, C), (np.ones((2, 2)),), (np.ones((2, 2)),))):
        with pytest.raises(TypeError) as info:
            run()
        msg = str(info.value)
        assert "a traced value met a constant numpy.matrix of shape (2, 2)" in msg
        assert "np.asarray(M)" in msg and "x @ M" in msg


def test_a_masked_constant_on_the_right_is_refused():
    m = np.ma.array(X3, mask=[0, 1, 0])
    with pytest.raises(TypeError, match=r"^numpy\.multiply: a traced value met a constant "
                                        r"numpy\.ma\.MaskedArray of shape \(3,\) with 1 masked"):
        dualad.grad(lambda x: np.sum(x * m))(np.ones(3))    # was [0.5, 1, 1.5]: wrong


def test_a_masked_constant_on_the_left_follows_numpy():
    # m * x runs numpy.ma's own code on traced scalars: the masked entry is skipped
    m = np.ma.array(X3, mask=[0, 1, 0])
    np.testing.assert_allclose(dualad.grad(lambda x: np.sum(m * x))(np.ones(3)), [0.5, 0, 1.5])
    np.testing.assert_allclose(dualad.grad(lambda x: np.mean(m * x))(np.ones(3)),
                               [0.25, 0, 0.75])


def test_other_subclasses_and_plain_constants_still_work():
    class Sub(np.ndarray):
        pass
    x = np.ones(3).view(Sub)
    np.testing.assert_allclose(dualad.grad(loss)(x), 2 * np.ones(3))
    np.testing.assert_allclose(dualad.grad(lambda x: np.sum(x * M))(np.ones((2, 2))), M)
    np.testing.assert_allclose(dualad.grad(lambda x: np.sum(x * np.asarray(np.matrix(M))))(
        np.ones((2, 2))), M)


# --- the dtype of a gradient ----------------------------------------------------------------
@pytest.mark.parametrize("param, data", [(np.float16, np.float32), (np.float32, np.float64),
                                         (np.float32, np.complex128)])
def test_a_gradient_has_its_parameters_dtype(param, data):
    w = np.array([0.5, -1.0, 2.0], dtype=param)
    c = np.array([1.5, 2.0, -0.5]).astype(data)
    f = (lambda w: np.real(np.sum(w * c * (1 + 1j)))) if np.dtype(data).kind == "c" else \
        (lambda w: np.sum(np.sin(w) * c))
    g = dualad.grad(f)(w)
    assert g.dtype == param
    expected = dualad.grad(f)(w.astype(np.float64))      # the same value, rounded
    np.testing.assert_allclose(g, expected.astype(param), rtol=1e-3)
    (gv,) = dualad.vjp(f, w)[1](np.ones(()))
    assert gv.dtype == param
    v = Variable(w, requires_grad=True)
    f(v).backward()
    assert v.grad.dtype == param
    v = Variable(w, requires_grad=True)
    assert autograd_grad(f(v), v)[0].dtype == param


def test_argnums_and_containers_each_keep_their_own_dtype():
    a, b = np.ones(2, np.float32), np.ones(2, np.float64)
    ga, gb = dualad.grad(lambda a, b: np.sum(a * b * 2.0), argnums=(0, 1))(a, b)
    assert (ga.dtype, gb.dtype) == (np.float32, np.float64)
    g = dualad.grad(lambda p: np.sum(p["w"] * np.ones(2)) + p["s"] * 3.0)(
        {"w": np.ones(2, np.float16), "s": np.float32(1.0)})
    assert g["w"].dtype == np.float16 and np.result_type(g["s"]) == np.float32


def test_create_graph_gradients_keep_the_dtype_and_differentiate():
    x = Variable(np.array([1.0, 2.0], np.float32), requires_grad=True)
    (g,) = autograd_grad(np.sum(x ** 3 * np.ones(2)), x, create_graph=True)
    assert g.numpy().dtype == np.float32
    (h,) = autograd_grad(np.sum(g), x)
    np.testing.assert_allclose(h, [6.0, 12.0])
    assert h.dtype == np.float32


def test_jvp_output_tangent_has_the_outputs_dtype():
    # JAX's rule: a tangent has its primal's dtype (the output's, not the input's)
    y, t = dualad.jvp(lambda w: w * X3, (np.ones(3, np.float32),), (np.ones(3, np.float32),))
    assert y.dtype == t.dtype == np.float64
    y, t = dualad.jvp(lambda w: w.astype(np.float32), (X3,), (X3,))
    assert y.dtype == t.dtype == np.float32


def test_hessian_vector_product_keeps_the_parameters_dtype():
    x = np.array([1.0, 2.0], np.float32)
    h = dualad.hvp(lambda x: np.sum(x ** 3 * np.ones(2)), x, np.ones(2, np.float32))
    assert h.dtype == np.float32
    np.testing.assert_allclose(h, [6.0, 12.0])


def test_bfloat16_is_refused_by_name():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    x = np.ones(3, ml_dtypes.bfloat16)
    for run in (lambda: dualad.grad(loss)(x), lambda: dualad.jvp(loss, (x,), (x,)),
                lambda: Variable(x, requires_grad=True)):
        with pytest.raises(TypeError) as info:
            run()
        msg = str(info.value)
        assert "has dtype bfloat16 and shape (3,); bfloat16" in msg
        assert "not supported" in msg and "x.astype(np.float32)" in msg
    with pytest.raises(TypeError, match="float8_e4m3fn .*not supported"):
        dualad.grad(loss)(np.ones(2, ml_dtypes.float8_e4m3fn))
    with pytest.raises(TypeError, match="only floating-point and complex"):
        dualad.grad(loss)(np.ones(2, "V8"))     # a raw void dtype: the general message


def test_the_refusal_does_not_import_ml_dtypes():
    code = ("import sys, numpy as np, dualad\n"
            "try:\n    dualad.grad(lambda x: x)(np.array(['a']))\nexcept TypeError:\n    pass\n"
            "assert 'ml_dtypes' not in sys.modules, 'ml_dtypes imported'\n")
    subprocess.run([sys.executable, "-c", code], check=True)


# --- SciPy's errors -------------------------------------------------------------------------
def test_minimize_on_traced_values_names_dualads_minimize():
    def fit(a):
        return scipy.optimize.minimize(lambda z: np.sum((z - a) ** 2), np.zeros(3)).fun
    for api, run in (("grad", lambda: dualad.grad(fit)(X3)),
                     ("jvp", lambda: dualad.jvp(fit, (X3,), (X3,)))):
        with pytest.raises(TypeError) as info:
            run()
        msg = str(info.value)
        assert msg.startswith(f"{api}: fit: scipy.optimize.minimize met a traced value")
        assert "Call dualad.scipy.optimize.minimize instead" in msg
        assert "must return a scalar value" in msg     # what SciPy said, for the search
        assert isinstance(info.value.__cause__, ValueError)


def test_a_scipy_ufunc_without_a_rule_is_named_in_its_module_with_implements():
    if scipy.special.wrightomega in dualad.extend.NUMPY_UFUNCS:
        pytest.skip("scipy.special.wrightomega has a rule now")
    with pytest.raises(NotImplementedError) as info:
        dualad.grad(lambda x: np.sum(scipy.special.wrightomega(x)))(X3)
    msg = str(info.value)
    assert msg.startswith("no derivative rule for scipy.special.wrightomega (called on traced "
                          "values of shape (3,))")
    assert "numpy.wrightomega" not in msg
    assert "@dualad.extend.implements(scipy.special.wrightomega)" in msg
    # ... and what it says works
    @dualad.primitive
    def wrightomega(x):
        return scipy.special.wrightomega(x)
    wrightomega.defderiv(lambda ans, x: ans / (1.0 + ans))
    try:
        dualad.extend.implements(scipy.special.wrightomega)(wrightomega)
        w = scipy.special.wrightomega(X3)
        np.testing.assert_allclose(
            dualad.grad(lambda x: np.sum(scipy.special.wrightomega(x)))(X3), w / (1 + w))
    finally:
        dualad.extend.NUMPY_UFUNCS.pop(scipy.special.wrightomega, None)


def test_numpy_names_are_unchanged():
    from dualad.frontend.dispatch import _name
    assert _name(np.bitwise_and) == "numpy.bitwise_and"
    assert _name(np.linalg.matrix_rank) == "numpy.linalg.matrix_rank"
    assert _name(scipy.special.erfcx) == "scipy.special.erfcx"


# --- dualad.autograd: PyTorch's dim= and keepdim= -------------------------------------------
def _x():
    return Variable(np.arange(6.0).reshape(2, 3) / 6, requires_grad=True)


def test_oneflows_example_runs():
    x = _x()
    y = x.exp().sum(dim=1)
    np.testing.assert_allclose(y.numpy(), np.exp(x.numpy()).sum(axis=1))
    np.sum(y).backward()
    np.testing.assert_allclose(x.grad, np.exp(x.numpy()))


@pytest.mark.parametrize("name, numpy_kwargs, torch_kwargs", [
    ("sum", {"axis": 1}, {"dim": 1}),
    ("sum", {"axis": (0, 1), "keepdims": True}, {"dim": [0, 1], "keepdim": True}),
    ("mean", {"axis": 0, "keepdims": True}, {"dim": 0, "keepdim": True}),
    ("prod", {"axis": 1}, {"dim": 1}),
    ("cumsum", {"axis": 1}, {"dim": 1}),
    ("cumprod", {"axis": 0}, {"dim": 0}),
    ("max", {"keepdims": True}, {"keepdim": True}),
    ("std", {"axis": 1, "ddof": 1}, {"dim": 1, "correction": 1}),
    ("var", {"axis": 0, "ddof": 0}, {"dim": 0, "unbiased": False}),
    ("argmax", {"axis": 1}, {"dim": 1}),
    ("any", {"axis": 1, "keepdims": True}, {"dim": 1, "keepdim": True}),
])
def test_dim_and_keepdim_are_axis_and_keepdims(name, numpy_kwargs, torch_kwargs):
    x = _x()
    a = getattr(x, name)(**numpy_kwargs)
    b = getattr(x, name)(**torch_kwargs)
    val = getattr(x.numpy(), name)(**numpy_kwargs)
    np.testing.assert_allclose(np.asarray(getattr(b, "data", b)), val)
    np.testing.assert_allclose(np.asarray(getattr(a, "data", a)), val)


def test_max_and_min_with_dim_return_values_and_indices_as_pytorch():
    x = _x()
    values, indices = x.max(dim=1)
    np.testing.assert_allclose(values.numpy(), [2 / 6, 5 / 6])
    np.testing.assert_array_equal(indices, [2, 2])
    out = x.min(dim=0, keepdim=True)
    assert out.values.shape == (1, 3) and out.indices.shape == (1, 3)
    (g,) = autograd_grad(np.sum(x.max(dim=1).values), x)
    np.testing.assert_allclose(g, [[0, 0, 1], [0, 0, 1]])
    assert x.max(axis=1).shape == (2,)           # NumPy's spelling keeps NumPy's result


@pytest.mark.parametrize("call, fragments", [
    (lambda x: x.sum(axis=1, dim=0), ("Variable.sum: both axis=1 and dim=0",)),
    (lambda x: x.mean(1, dim=1), ("Variable.mean: both a positional axis 1 and dim=1",)),
    (lambda x: x.sum(keepdims=True, keepdim=True),
     ("both keepdims=True and keepdim=True",)),
    (lambda x: x.std(dim=1), ("PyTorch's std divides by n - 1", "correction=1", "ddof=0")),
    (lambda x: x.var(keepdim=True), ("PyTorch's var divides by n - 1",)),
    (lambda x: x.var(dim=1, unbiased=True, ddof=1), ("both ddof= and unbiased=",)),
])
def test_ambiguous_spellings_raise_naming_both(call, fragments):
    with pytest.raises(TypeError) as info:
        call(_x())
    for fragment in fragments:
        assert fragment in str(info.value)


def test_the_functional_face_keeps_numpys_keywords():
    # inside dualad.grad, x stands for a NumPy array, which has no dim=
    with pytest.raises(TypeError, match="dim="):
        dualad.grad(lambda x: np.sum(x.sum(dim=0)))(np.ones((2, 3)))
