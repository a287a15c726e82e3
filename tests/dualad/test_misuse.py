"""The misuse catalogue: every wrong call is an exception naming what is wrong.

Each case asserts the exception type and that the message names the function
(or API), the argument and the shape involved, wherever those exist.
"""
import operator
import re

import numpy as np
import pytest

import dualad
from dualad import jacobians
from dualad.autograd import Variable, backward, grad as agrad

x3 = np.array([0.5, 1.0, 1.5])


class Exp(dualad.Function):
    @staticmethod
    def forward(ctx, x):
        y = np.exp(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y


class TwoGrads(dualad.Function):
    @staticmethod
    def forward(ctx, x):
        return 2.0 * x

    @staticmethod
    def backward(ctx, g):
        return g, g


class BadShape(dualad.Function):
    @staticmethod
    def forward(ctx, x):
        return 2.0 * x

    @staticmethod
    def backward(ctx, g):
        return np.ones(7)


@dualad.primitive
def raising(x):
    return x * 1.0


def _raising_rule(g, ans, x):
    raise ArithmeticError("my rule is broken")


raising.defvjp(_raising_rule)
raising.defjvp(lambda t, ans, x: (_ for _ in ()).throw(ArithmeticError("jvp broken")))


CASES = [
    # (id, callable, exception type, fragments that must all be in the message)
    ("grad of non-scalar", lambda: dualad.grad(np.sin)(x3), TypeError,
     ["grad", "scalar", "(3,)", "vjp", "jacobian"]),
    ("integer input", lambda: dualad.grad(np.sum)(np.arange(3)), TypeError,
     ["grad", "argument 0", "int", "(3,)"]),
    ("boolean input", lambda: dualad.grad(np.sum)(np.array([True, False])), TypeError,
     ["argument 0", "bool", "(2,)"]),
    ("string input", lambda: dualad.grad(np.sum)("abc"), TypeError, ["argument 0", "str"]),
    ("None input", lambda: dualad.grad(np.sum)(None), TypeError, ["argument 0", "None"]),
    ("object array input", lambda: dualad.grad(np.sum)(np.array([1.0, "a"], dtype=object)),
     TypeError, ["argument 0", "object", "(2,)"]),
    ("argnums out of range", lambda: dualad.grad(lambda a, b: a * b, argnums=2)(1.0, 2.0),
     ValueError, ["argnums", "2 positional"]),
    ("jvp tangent shape", lambda: dualad.jvp(np.sin, (x3,), (np.ones(4),)), ValueError,
     ["jvp", "tangent 0", "(4,)", "(3,)"]),
    ("jvp tangent count", lambda: dualad.jvp(np.sin, (x3,), (x3, x3)), ValueError,
     ["jvp", "1 primals", "2 tangents"]),
    ("jvp complex tangent for real primal",
     lambda: dualad.jvp(np.sin, (x3,), (x3 + 1j,)), TypeError, ["jvp", "tangent 0", "complex"]),
    ("jvp batched tangents disagree",
     lambda: dualad.jvp(lambda a, b: a * b, (x3, x3), (np.ones((2, 3)), np.ones((5, 3)))),
     ValueError, ["jvp", "tangent 1", "batch"]),
    ("vjp cotangent shape", lambda: dualad.vjp(np.sin, x3)[1](np.ones(2)), ValueError,
     ["vjp pullback", "cotangent 0", "(2,)", "(3,)"]),
    ("vjp batched cotangent trailing shape",
     lambda: dualad.vjp(np.sin, x3)[1](np.ones((4, 2))), ValueError,
     ["cotangent 0", "(4, 2)", "(B, 3)"]),
    ("second backward through freed graph", lambda: _backward_twice(), RuntimeError,
     ["second time", "retain_graph=True"]),
    ("backward on a value without grad", lambda: (Variable(x3) * 2.0).sum().backward(),
     RuntimeError, ["backward", "output 0", "does not require grad"]),
    ("backward on an output not requiring grad",
     lambda: backward([Variable(np.ones(()), requires_grad=False)]), RuntimeError,
     ["backward", "output 0", "does not require grad"]),
    ("implicit grad of non-scalar backward",
     lambda: (Variable(x3, requires_grad=True) * 2.0).backward(), RuntimeError,
     ["scalar outputs", "(3,)"]),
    ("in-place assignment", lambda: dualad.grad(_inplace)(x3), TypeError,
     ["in-place", "(3,)", "x.copy()", "at[idx].set"]),   # an input: write into a copy
    ("numpy function without a rule",
     lambda: dualad.grad(lambda x: np.sum(np.histogram(x)[0]))(x3),
     NotImplementedError, ["numpy.histogram", "(3,)"]),
    ("ufunc keyword out=", lambda: dualad.grad(lambda x: np.sum(np.sin(x, out=np.empty(3))))(x3),
     TypeError, ["sin", "out="]),
    ("escaped tracer", lambda: _escape(), dualad.EscapedTracerError, ["escaped", "(3,)"]),
    ("Function backward wrong count", lambda: dualad.grad(lambda x: np.sum(TwoGrads.apply(x)))(x3),
     TypeError, ["TwoGrads.backward", "2 gradient", "1 input"]),
    ("Function backward wrong shape",
     lambda: dualad.grad(lambda x: np.sum(BadShape.apply(x)))(x3), ValueError,
     ["BadShape.backward", "(7,)", "(3,)"]),
    ("Function without jvp in forward mode", lambda: dualad.jvp(Exp.apply, (x3,), (x3,)),
     NotImplementedError, ["Exp has no jvp", "forward mode"]),
    ("float() of a traced value", lambda: dualad.grad(lambda x: float(x))(1.0), TypeError,
     ["cannot convert", "derivative would be lost"]),
    # (np.asarray(x) without a dtype is an object array of traced scalars: test_lists.py)
    ("np.asarray of a traced value as floats",
     lambda: dualad.grad(lambda x: np.sum(np.asarray(x, dtype=float)))(x3),
     TypeError, ["(3,)", "dualad.numpy"]),
    ("item() of a traced value", lambda: dualad.grad(lambda x: x.item())(1.0), TypeError,
     ["cannot convert"]),
    # (astype(int) is a plain integer array, zero derivative: test_int_casts.py)
    ("astype(str) of a traced value",
     lambda: dualad.grad(lambda x: np.sum(x.astype(str)))(x3), TypeError,
     ["astype", "(3,)", "floating"]),
    ("traced value as an index", lambda: dualad.grad(lambda x: x[x])(x3), TypeError,
     ["index", "traced", "(3,)"]),
    ("negative derivative order", lambda: dualad.derivative(np.sin, -1), ValueError,
     ["derivative", "order"]),
    ("has_aux without a pair", lambda: dualad.grad(np.sum, has_aux=True)(x3), TypeError,
     ["has_aux", "pair"]),
    ("matmul shape mismatch", lambda: dualad.grad(lambda x: np.sum(x @ np.ones((4, 2))))(x3),
     ValueError, ["matmul", "(3,)", "(4, 2)"]),
    ("reshape to a wrong size", lambda: dualad.grad(lambda x: np.sum(x.reshape(2, 2)))(x3),
     ValueError, ["reshape", "size 3", "(2, 2)"]),
    ("is_grads_batched shape", lambda: _batched_wrong(), ValueError,
     ["is_grads_batched", "(B, 2)", "(3, 3)"]),
    ("grad_outputs count", lambda: _grad_outputs_count(), ValueError,
     ["1 outputs", "2 grad_outputs"]),
    ("grad w.r.t. an input without grad", lambda: agrad([Variable(x3, requires_grad=True) * 2.0],
                                                       [Variable(x3)]), RuntimeError,
     ["inputs[0]", "(3,)", "does not require grad"]),
    ("unused input", lambda: _unused(), RuntimeError, ["inputs[1]", "allow_unused=True"]),
    ("Variable of a traced value", lambda: dualad.grad(lambda x: Variable(x).sum())(x3),
     TypeError, ["Variable", "traced"]),
    ("trace mode", lambda: dualad.trace(np.sin, 1.0, mode="sideways"), ValueError, ["mode"]),
    ("custom VJP rule that raises", lambda: dualad.grad(lambda x: np.sum(raising(x)))(x3),
     ArithmeticError, ["my rule is broken", "VJP rule of primitive 'raising'", "(3,)"]),
    ("custom JVP rule that raises", lambda: dualad.jvp(raising, (x3,), (x3,)),
     ArithmeticError, ["jvp broken", "JVP rule of primitive 'raising'"]),
    ("grad of an integer output", lambda: dualad.grad(lambda x: np.argmax(x))(x3), TypeError,
     ["grad", "int"]),
    # NumPy's full/full_like are not dispatched on a traced fill value: they would fill a
    # plain array in place (np.copyto); the error names the call and dualad.numpy.full
    ("np.full_like(plain, traced)",
     lambda: dualad.grad(lambda v: np.sum(np.full_like(x3, v)))(0.5), TypeError,
     ["numpy.full_like", "argument fill_value", "shape ()", "(3,)",
      "dualad.numpy.full_like(a, fill_value)", "dualad.numpy.full"]),
    ("np.full_like(plain, traced) in forward mode",
     lambda: dualad.jvp(lambda v: np.full_like(x3, v, dtype=np.float32), (x3,), (x3,)),
     TypeError, ["numpy.full_like", "argument fill_value", "shape (3,)", "dualad.numpy.full"]),
    ("np.full(shape, traced, dtype)",
     lambda: dualad.grad(lambda v: np.sum(np.full((2, 3), v, dtype=float)))(0.5), TypeError,
     ["numpy.full:", "argument fill_value", "shape ()", "dualad.numpy.full(shape, fill_value)"]),
    ("np.copyto(plain, traced)",
     lambda: dualad.grad(lambda v: np.copyto(np.zeros(3), v))(x3), TypeError,
     ["numpy.copyto", "argument src", "(3,)", "dualad.numpy.where"]),
    # issue 15, the API boundary
    ("grad of a function returning None", lambda: dualad.grad(lambda v: None)(x3), TypeError,
     ["grad", "<lambda> returned None", "forget to `return`"]),
    ("jvp of a function returning None", lambda: dualad.jvp(_no_return, (x3,), (x3,)),
     TypeError, ["jvp", "_no_return returned None", "`return`"]),
    ("vjp of a function returning None", lambda: dualad.vjp(_no_return, x3), TypeError,
     ["vjp", "_no_return returned None"]),
    ("derivative of a function returning None",
     lambda: dualad.derivative(_no_return)(1.0), TypeError, ["_no_return returned None"]),
    ("hessian of a function returning None",
     lambda: jacobians.hessian(_no_return)(x3), TypeError,
     ["hessian", "_no_return returned None", "`return`"]),
    ("grad of a generator", lambda: dualad.grad(lambda v: (t for t in v))(x3), TypeError,
     ["grad", "returned a generator", "list(gen)"]),
    ("grad of a string", lambda: dualad.grad(lambda v: "loss")(x3), TypeError,
     ["grad", "returned a str"]),
    ("grad of a two-element output", lambda: dualad.grad(lambda v: v[:2])(x3), TypeError,
     ["grad", "scalar", "(2,)", "vjp"]),
    ("complex() of a traced value", lambda: dualad.grad(lambda v: complex(v).real)(1.0),
     TypeError, ["complex()", "shape ()", "derivative would be lost",
                 "complex(dualad.extend.primal_value(x))"]),
    ("operator.index of a traced value", lambda: dualad.grad(lambda v: operator.index(v))(1.0),
     TypeError, ["operator.index()", "shape ()", "primal_value"]),
    ("range() of a traced value", lambda: dualad.grad(lambda v: len(range(v)))(3.0),
     TypeError, ["operator.index()", "primal_value"]),
    ("operator.index says how to get an index",
     lambda: dualad.grad(lambda x: np.sum(x[operator.index(x[0])]))(x3), TypeError,
     ["operator.index()", "x.astype(int)", "int(dualad.extend.primal_value(x))"]),
    ("out[i] = traced slice into a plain array", lambda: dualad.grad(_assign_row)(x3),
     TypeError, ["(2,)", "out[i] = x", "dualad.numpy.stack", "np.zeros_like(x)",
                 ".at(out)[i].set(v)"]),
    ("jvp tangent with another structure",
     lambda: dualad.jvp(lambda v: v ** 2, ([1.0, 2.0, 3.0],), (x3,)), ValueError,
     ["jvp", "tangents[0]", "shape (3,)", "list of 3", "np.array([...])"]),
    ("jvp tangent None", lambda: dualad.jvp(np.sin, (x3,), (None,)), TypeError,
     ["jvp", "tangent 0 is None", "(3,)", "zeros_like"]),
    ("vjp cotangent with another structure",
     lambda: dualad.vjp(lambda v: (v, v), x3)[1]((x3,)), ValueError,
     ["vjp pullback", "tuple of 1", "<lambda>'s output is a tuple of 2"]),
    ("hvp of None", lambda: dualad.hvp(np.sum, None, x3), TypeError,
     ["hvp", "argument 0", "None"]),
    ("argnums not an int", lambda: dualad.grad(np.sum, argnums=0.5)(x3), TypeError,
     ["grad", "argnums", "0.5", "tuple of ints"]),
    ("mean where= mask of another shape",
     lambda: dualad.grad(lambda v: np.mean(v, where=np.ones(2, bool)))(x3), ValueError,
     ["numpy.mean", "where=", "(2,)", "(3,)"]),
    ("sum out= into an array",
     lambda: dualad.grad(lambda v: np.sum(v, out=np.empty(())))(x3), TypeError,
     ["numpy.sum", "out="]),
    ("maximum.reduce with where=",
     lambda: dualad.grad(lambda v: np.maximum.reduce(v, where=v > 0.7, initial=0.0))(x3),
     TypeError, ["numpy.maximum.reduce", "initial", "where", "(3,)", "dualad.numpy.where"]),
    ("where with x but without y", lambda: dualad.numpy.where(x3 > 1, x3), TypeError,
     ["where", "both x and y", "or neither"]),
    ("complex seed for a real output (backward)", lambda: _complex_backward(), TypeError,
     ["backward", "grad_outputs[0]", "complex", "(3,)", "real", "imaginary part"]),
    ("complex seed for a real output (autograd.grad)", lambda: _complex_agrad(), TypeError,
     ["grad", "grad_outputs[0]", "complex128", "float64", "imaginary part"]),
    # (jacobians.hessian inside jvp and jacobian of a closure over a traced value now
    # compose: tests/jacobians/test_nested.py)
    ("jacobians.plan inside vjp",
     lambda: dualad.vjp(lambda v: jacobians.plan(np.sin, v).n, x3), NotImplementedError,
     ["jacobians.plan", "argument 0", "(3,)", "plain values only", "outside the transformation"]),
    ("integer input to grad", lambda: dualad.grad(lambda v: np.sum(v))(np.arange(3)),
     TypeError, ["grad: argument 0", "int64", "(3,)", "integer and boolean inputs are not "
                 "differentiable", "x.astype(float)"]),
    ("text input to grad", lambda: dualad.grad(lambda v: np.sum(v))(np.array(["1.5"])),
     TypeError, ["grad: argument 0", "<U3", "(1,)", "only floating-point and complex inputs "
                 "are differentiable", "x.astype(float)"]),
    ("dualad.numpy.full_like with a non-floating dtype",
     lambda: dualad.grad(lambda v: np.sum(dualad.numpy.full_like(np.arange(3), v)))(0.5),
     TypeError, ["full_like", "int64", "fill_value", "shape ()"]),
]


def _no_return(x):
    np.sin(x)   # forgot `return`


def _cube(u):
    return np.sum(u ** 3)


def _assign_row(v):
    out = np.zeros((3, 2))
    out[0] = v[:2]
    return np.sum(out)


def _complex_backward():
    x = Variable(x3, requires_grad=True)
    (x * 2.0).backward(np.array([1 + 1j, 0, 0]))


def _complex_agrad():
    x = Variable(x3, requires_grad=True)
    return agrad(x * 2.0, x, grad_outputs=np.array([0, 1j, 0]))


# (the jacobians functions inside a dualad transformation now compose:
# tests/jacobians/test_nested.py)


def _backward_twice():
    x = Variable(x3, requires_grad=True)
    y = (x * x).sum()
    y.backward()
    y.backward()


def _inplace(x):
    x[0] = 1.0
    return np.sum(x)


def _escape():
    leaked = []
    dualad.grad(lambda x: leaked.append(x) or np.sum(x))(x3)
    return leaked[0] + 1.0


def _batched_wrong():
    x = Variable(np.ones((3, 3)), requires_grad=True)
    y = np.exp(x).sum(axis=1)[:2]
    return agrad(y, x, grad_outputs=np.ones((3, 3)), is_grads_batched=True)


def _grad_outputs_count():
    x = Variable(x3, requires_grad=True)
    return agrad([(x * 2.0).sum()], [x], grad_outputs=[None, None])


def _unused():
    x, z = Variable(x3, requires_grad=True), Variable(x3, requires_grad=True)
    return agrad([(x * 2.0).sum()], [x, z])


def _message(e):
    return " ".join([str(e), *getattr(e, "__notes__", [])])


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_misuse_raises_clear_error(case):
    _, call, exc, fragments = case
    with pytest.raises(exc) as info:
        call()
    msg = _message(info.value)
    for frag in fragments:
        assert frag in msg, f"{frag!r} not in: {msg}"


def test_catalogue_has_at_least_30_error_cases():
    assert len(CASES) >= 30


def test_full_with_a_traced_fill_value_works_through_dualad_numpy():
    # what the errors above point to: the same calls keep the derivative
    from dualad.verification import check_grads
    plain = np.zeros((2, 3), np.float32)
    for f in (lambda v: dualad.numpy.full((2, 3), v), lambda v: dualad.numpy.full_like(x3, v) * x3,
              lambda v: dualad.numpy.full_like(plain, v, dtype=float) ** 2):
        check_grads(f, (np.float64(0.5),), order=2)
    out, tan = dualad.jvp(lambda v: dualad.numpy.full_like(plain, v), (0.5,), (1.0,))
    assert out.dtype == tan.dtype == np.float32     # a's dtype, as np.full_like


def test_np_full_without_dtype_names_full():
    # np.full(shape, v) without a dtype first runs np.asarray(v): the traced value's
    # __array__ sees that np.full is the caller and names it.
    with pytest.raises(TypeError, match=r"numpy\.full: argument fill_value .* shape \(\).*"
                       r"dualad\.numpy\.full\(shape, fill_value\)"):
        dualad.grad(lambda v: np.sum(np.full((2, 2), v)))(0.5)
    with pytest.raises(TypeError, match="cannot convert a traced value"):   # any other call
        dualad.grad(lambda v: np.sum(np.asarray(v, dtype=float)))(0.5)   # (no dtype: works)


def test_assigning_a_traced_scalar_into_a_plain_array_says_what_to_write():
    # out[i] = x with a 0-d traced x: NumPy calls float(x), whose TypeError names the
    # assignment, then replaces it by its own "setting an array element with a sequence"
    # (a traced value has __getitem__). Every transformation raises the TypeError that
    # says what to write instead, NumPy's error chained as its cause.
    def f(v):
        out = np.zeros(3)
        for i in range(3):
            out[i] = v[i] ** 2
        return np.sum(out)
    # (api named in the message, call): a list, since jit(grad(f)) is named "grad" too
    calls = [("grad", lambda: dualad.grad(f)(x3)), ("jvp", lambda: dualad.jvp(f, (x3,), (x3,))),
             ("vjp", lambda: dualad.vjp(f, x3)),
             ("vmap(f)", lambda: dualad.vmap(f)(np.ones((2, 3)))),
             ("jacobians.jacobian", lambda: jacobians.jacobian(f, x3)),
             ("jacobians.hessian", lambda: jacobians.hessian(f, x3)),
             ("grad", lambda: dualad.jit(dualad.grad(f))(x3))]
    for api, call in calls:
        with pytest.raises(TypeError, match=rf"^{re.escape(api)}: f made NumPy convert a "
                                            r"traced value to a plain number") as info:
            call()
        message = str(info.value)
        for frag in ["float()", "out[i] = x", "dualad.numpy.stack", "out = np.zeros_like(x)",
                     ".at(out)[i].set(v)"]:
            assert frag in message, f"{api}: {frag!r} not in: {message}"
        assert "setting an array element" in str(info.value.__cause__)
        # vmap has no derivative to lose: it says what it does lose, and the assignment first
        lost = "each example's own value would be lost" if api == "vmap(f)" else \
            "its derivative would be lost"
        assert lost in message, f"{api}: {message}"
        if api == "vmap(f)":
            assert "derivative" not in message
            assert message.index("out[i] = x") < message.index("float()")
    # a complex array: NumPy passes complex()'s TypeError on unwrapped
    def h(v):
        out = np.zeros(3, dtype=complex)
        out[0] = v[0]
        return np.sum(out).real
    with pytest.raises(TypeError, match=r"with complex\(\)(.|\n)*\(out\[i\] = x\)"):
        dualad.grad(h)(x3)
    # an unrelated ValueError of f is left alone
    with pytest.raises(ValueError, match="could not be broadcast"):
        dualad.grad(lambda v: np.sum(np.zeros(3) + np.zeros(2) * v[0]))(x3)
    # what the message says to write instead gives the derivative
    g = dualad.grad(lambda v: np.sum(dualad.numpy.stack([v[i] ** 2 for i in range(3)])))(x3)
    np.testing.assert_allclose(g, 2 * x3)


@pytest.mark.parametrize("call,match", [
    (lambda: dualad.hvp(lambda x: np.sum(x ** 3), [1.0, 2.0], [1.0, 0.0]),
     r"hvp: primals is a list of 2 entries, read as 2 positional argument\(s\) of <lambda> "
     r".*takes 1\. For one array argument pass an array, np\.array\(\[\.\.\.\]\)"),
    (lambda: dualad.jvp(lambda a, b: a * b, (1.0,), (1.0,)),
     r"jvp: primals is a tuple of 1 entry.*takes 2: give primals and tangents one entry "
     r"per argument"),
])
def test_primals_that_do_not_fit_the_signature_say_how_they_were_read(call, match):
    with pytest.raises(TypeError, match=match):
        call()


def test_primals_that_fit_are_untouched():
    assert dualad.jvp(lambda *a: a[0] * a[1], (1.0, 2.0), (1.0, 0.0)) == (2.0, 2.0)
    assert dualad.hvp(lambda a, b=2.0: a * a * b, (1.0,), (1.0,)) == (4.0,)
    assert dualad.jvp(np.sin, [0.0], [1.0]) == (0.0, 1.0)       # a ufunc: no signature
    np.testing.assert_array_equal(dualad.hvp(lambda x: np.sum(x ** 3), np.array([1.0, 2.0]),
                                             np.array([1.0, 0.0])), [6.0, 0.0])
