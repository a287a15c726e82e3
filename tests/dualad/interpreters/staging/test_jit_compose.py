"""dualad.jit composed with every transformation, in both orders, each checked against an
independent oracle: a closed form, or finite differences (dualad.verification.check_grads).
The last test is a property test: random expression graphs (tests/dualad/test_fuzz.py's
generator), jit(grad(f)) traced once and replayed at several points against grad(f) and
central differences."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import dualad
from dualad import checkpoint, grad, jacobians, jit, jvp, value_and_grad, vjp, vmap
from dualad.verification import check_grads
from fuzz_programs import N, build, central_gradient, programs


def traces(jitted):
    return sum(jitted.cache_info().values())


def f(x):
    return np.sum(np.sin(x) * x)


def df(x):                      # d/dx sum(sin(x) x)
    return np.cos(x) * x + np.sin(x)


def d2f(x):                     # its Hessian (diagonal)
    return np.diag(2 * np.cos(x) - np.sin(x) * x)


X = np.array([0.3, -1.2, 2.0])
X2 = np.array([1.1, 0.4, -0.7])


def test_jit_of_grad_replays_the_adjoint_program():
    j = jit(grad(f))
    for x in (X, X2, X * 3):
        np.testing.assert_allclose(j(x), df(x), rtol=1e-14)
    assert traces(j) == 1


def test_grad_of_jit():
    j = jit(f)
    g = grad(j)
    for x in (X, X2):
        np.testing.assert_allclose(g(x), df(x), rtol=1e-14)
    assert traces(j) == 1
    check_grads(j, (X,), order=2)


def test_jit_of_jvp_and_jvp_of_jit():
    v = np.array([1.0, -2.0, 0.5])
    push = jit(lambda x, v: jvp(f, (x,), (v,)))
    for x in (X, X2):
        y, t = push(x, v)
        assert y == pytest.approx(np.sum(np.sin(x) * x)) and t == pytest.approx(df(x) @ v)
        y, t = jvp(jit(f), (x,), (v,))
        assert t == pytest.approx(df(x) @ v)


def test_jit_of_vjp_pullback_and_vjp_of_jit():
    def cotangent(x, u):
        _, pullback = vjp(lambda x: np.sin(x) * x, x)
        return pullback(u)[0]
    j = jit(cotangent)
    u = np.array([1.0, 2.0, -1.0])
    for x in (X, X2):
        np.testing.assert_allclose(j(x, u), u * df(x), rtol=1e-14)
    assert traces(j) == 1
    y, pullback = vjp(jit(lambda x: np.sin(x) * x), X)
    np.testing.assert_allclose(pullback(u)[0], u * df(X), rtol=1e-14)


@pytest.mark.parametrize("mode", ["auto", "forward-over-reverse", "reverse-over-reverse",
                                  "reverse-over-forward", "forward-over-forward"])
def test_jit_of_hessian(mode):
    j = jit(lambda x: jacobians.hessian(f, x, mode=mode))
    for x in (X, X2):
        np.testing.assert_allclose(j(x), d2f(x), rtol=1e-13, atol=1e-14)


def test_jit_of_jacobian_and_of_grad_of_grad():
    j = jit(lambda x: jacobians.jacobian(lambda x: np.sin(x) * x[0], x))
    x = X
    want = np.diag(np.cos(x) * x[0])
    want[:, 0] += np.sin(x)
    np.testing.assert_allclose(j(x), want, rtol=1e-14)
    h = jit(grad(grad(lambda t: np.sin(t) * t)))
    for t in (0.7, -0.2):
        assert h(t) == pytest.approx(2 * np.cos(t) - np.sin(t) * t, rel=1e-14)


def test_jit_of_hvp():
    v = np.array([1.0, 0.0, 2.0])
    j = jit(lambda x, v: dualad.hvp(f, (x,), (v,)))
    np.testing.assert_allclose(j(X, v)[0], d2f(X) @ v, rtol=1e-14)
    np.testing.assert_allclose(j(X2, v)[0], d2f(X2) @ v, rtol=1e-14)


def test_jit_of_vmap_and_vmap_of_jit():
    rows = np.arange(6.0).reshape(2, 3) - 2.0
    want = np.sum(rows ** 3, axis=1)
    np.testing.assert_allclose(jit(vmap(lambda r: np.sum(r ** 3)))(rows), want)
    np.testing.assert_allclose(vmap(jit(lambda r: np.sum(r ** 3)))(rows), want)
    per_example = jit(vmap(grad(lambda r: np.sum(r ** 3))))
    np.testing.assert_allclose(per_example(rows), 3 * rows ** 2)
    np.testing.assert_allclose(per_example(rows + 1.0), 3 * (rows + 1.0) ** 2)


def test_vmap_of_jit_with_a_branch_says_to_select():
    j = jit(lambda r: np.sum(r) if np.sum(r) > 0 else -np.sum(r))
    with pytest.raises(TypeError, match=r"vmap: bool\(\).*np\.where"):
        vmap(j)(np.arange(6.0).reshape(2, 3) - 3.0)


def test_jit_of_checkpoint():
    g = jit(grad(lambda x: np.sum(checkpoint(lambda y: np.sin(y) * y)(x))))
    for x in (X, X2):
        np.testing.assert_allclose(g(x), df(x), rtol=1e-14)


def test_jit_of_value_and_grad_with_aux():
    def loss(x):
        y = np.sin(x)
        return np.sum(y * x), {"sin": y}
    j = jit(value_and_grad(loss, has_aux=True))
    for x in (X, X2):
        (value, aux), g = j(x)
        assert value == pytest.approx(np.sum(np.sin(x) * x))
        np.testing.assert_allclose(aux["sin"], np.sin(x))
        np.testing.assert_allclose(g, df(x), rtol=1e-14)
    assert traces(j) == 1


def test_jit_inside_grad_closing_over_a_traced_value_falls_back():
    def outer(y):
        return jit(lambda x: np.sin(x * y))(2.0)     # closes over grad's traced y
    for y in (0.3, 1.7):
        assert grad(outer)(y) == pytest.approx(2.0 * np.cos(2.0 * y), rel=1e-14)
    check_grads(lambda y: jit(lambda x: np.exp(x * y))(np.ones(2)), (np.array(0.4),))


def branchy(x):
    if x > 0:
        return x ** 3
    return np.sin(x) * 2.0


def test_grad_of_jit_with_a_branch_takes_each_branch():
    j = jit(branchy)
    g = grad(j)
    assert g(2.0) == pytest.approx(12.0)
    assert g(-1.0) == pytest.approx(2 * np.cos(-1.0))
    assert g(3.0) == pytest.approx(27.0)
    assert g(-0.5) == pytest.approx(2 * np.cos(-0.5))
    assert traces(j) == 2
    jg = jit(grad(branchy))
    assert [jg(t) for t in (2.0, -1.0, 3.0)] == pytest.approx([12.0, 2 * np.cos(-1.0), 27.0])
    assert traces(jg) == 2


def test_check_grads_of_jit_with_loops_and_pytrees():
    def model(w, x):
        h = x
        for _ in range(3):
            h = np.tanh(w @ h)
        return h
    rng = np.random.default_rng(0)
    w = rng.standard_normal((3, 3)) * 0.5
    j = jit(model)
    check_grads(j, (w, X), order=2)
    np.testing.assert_allclose(j(w, X2), np.tanh(w @ np.tanh(w @ np.tanh(w @ X2))))


def test_grad_of_jit_of_float32_and_complex():
    j = jit(lambda x: np.sum(np.sin(x) ** 2))
    x32 = X.astype(np.float32)
    g = grad(j)(x32)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, np.sin(2 * x32), rtol=1e-5)
    c = jit(lambda z: np.sum(np.abs(z) ** 2))
    z = np.array([1 + 2j, -0.5j])
    # docs/complex.md: grad of a real loss is the conjugate of dL/dx + i dL/dy = 2 z
    np.testing.assert_allclose(grad(c)(z), 2 * np.conj(z))


def test_integer_inputs_are_not_differentiated():
    j = jit(lambda x, i: np.sum(x[i] ** 2))
    g = grad(j)(X, np.array([0, 0, 2]))
    np.testing.assert_allclose(g, [4 * X[0], 0.0, 2 * X[2]])
    g = jit(grad(lambda x, i: np.sum(x[i] ** 2)))(X, np.array([1]))
    np.testing.assert_allclose(g, [0.0, 2 * X[1], 0.0])


points = st.lists(st.lists(st.floats(-1.5, 1.5), min_size=N, max_size=N), min_size=3,
                  max_size=3).map(np.array)


# Rules that decide something from the values (a guard on the whole value, so a new point
# traces again): np.prod's VJP looks for zeros, logaddexp's for equal infinities. Their
# gradients stay right; only the one-trace property is not asked of them (main 0d0986c).
VALUE_DECISIONS = {"prod_tanh", "logaddexp"}


@settings(derandomize=True, max_examples=15, deadline=None)
@given(programs, points)
def test_jit_of_grad_on_random_programs_traces_once(program, xs):
    fun = build(program)
    jg = jit(grad(fun))
    for x in xs:
        got = jg(x)
        np.testing.assert_allclose(got, grad(fun)(x), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(got, central_gradient(fun, x), rtol=1e-5, atol=1e-6)
    if not VALUE_DECISIONS & {name for name, _, _ in program}:
        assert traces(jg) == 1, str(jg.program(xs[0]))
