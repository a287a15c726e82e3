"""dualad.custom_jvp and dualad.custom_vjp: JAX's decorators for closures.

Values against hand derivatives and against dualad differentiating the body without the
rule; every transformation (grad, value_and_grad, jvp, vjp, jacobians, vmap, jit both
ways, checkpoint, second order); pytrees, nondiff_argnums and keywords; closures; the
misuse messages; the rule checker; two threads at once.
"""
import threading

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import dualad
import dualad.jacobians as J
from dualad.verification import check_rule


# -- the brief's examples -----------------------------------------------------------------

@dualad.custom_jvp
def f(x, y):
    return np.sin(x) * y


@f.defjvp
def f_jvp(primals, tangents):
    x, y = primals
    x_dot, y_dot = tangents
    out = f(x, y)
    return out, np.cos(x) * x_dot * y + np.sin(x) * y_dot


@dualad.custom_vjp
def g(x):
    return np.log1p(np.exp(x))


def g_fwd(x):
    return g(x), np.exp(x)


def g_bwd(res, ct):
    return (ct * res / (1 + res),)


g.defvjp(g_fwd, g_bwd)

X = np.array([0.3, -1.2, 2.0])
Y = np.array([2.0, 0.5, -1.5])


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def f_loss(x, y):
    return np.sum(f(x, y) ** 2)


def f_loss_plain(x, y):
    return np.sum((np.sin(x) * y) ** 2)


def g_loss(x):
    return np.sum(g(x) * np.cos(x))


def g_loss_plain(x):
    return np.sum(np.log1p(np.exp(x)) * np.cos(x))


# -- a rule that is visibly used: half the true derivative ------------------------------

@dualad.custom_jvp
def halfsin(x):
    return np.sin(x)


@halfsin.defjvp
def halfsin_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return halfsin(x), 0.5 * np.cos(x) * t


@dualad.custom_vjp
def halfexp(x):
    return np.exp(x)


halfexp.defvjp(lambda x: (halfexp(x), np.exp(x)), lambda e, ct: (0.5 * e * ct,))


def test_plain_calls_run_the_function():
    np.testing.assert_allclose(f(X, Y), np.sin(X) * Y)
    np.testing.assert_allclose(g(X), np.log1p(np.exp(X)))
    assert f.__name__ == "f" and g.__wrapped__ is g.fun


def test_the_rule_is_used_not_the_body():
    assert dualad.grad(halfsin)(0.0) == pytest.approx(0.5)
    assert dualad.jvp(halfsin, (0.0,), (1.0,))[1] == pytest.approx(0.5)
    assert dualad.grad(halfexp)(0.0) == pytest.approx(0.5)
    np.testing.assert_allclose(J.jacrev(halfsin)(X), np.diag(0.5 * np.cos(X)))
    np.testing.assert_allclose(J.jacfwd(halfsin)(X), np.diag(0.5 * np.cos(X)))


# -- every transformation, against hand derivatives and the body -----------------------

def test_grad_and_value_and_grad():
    gx, gy = dualad.grad(f_loss, argnums=(0, 1))(X, Y)
    np.testing.assert_allclose(gx, 2 * np.sin(X) * Y * np.cos(X) * Y)
    np.testing.assert_allclose(gy, 2 * np.sin(X) * Y * np.sin(X))
    v, gg = dualad.value_and_grad(g_loss)(X)
    assert v == pytest.approx(g_loss_plain(X))
    np.testing.assert_allclose(gg, dualad.grad(g_loss_plain)(X))
    np.testing.assert_allclose(gg, sigmoid(X) * np.cos(X) - np.log1p(np.exp(X)) * np.sin(X))


def test_jvp_and_vjp():
    tx, ty = np.array([1.0, 0.5, -2.0]), np.array([0.1, 0.2, 0.3])
    out, t = dualad.jvp(f, (X, Y), (tx, ty))
    np.testing.assert_allclose(out, np.sin(X) * Y)
    np.testing.assert_allclose(t, np.cos(X) * tx * Y + np.sin(X) * ty)
    out, pullback = dualad.vjp(f, X, Y)
    u = np.array([1.0, -1.0, 2.0])
    cx, cy = pullback(u)
    np.testing.assert_allclose(cx, u * np.cos(X) * Y)
    np.testing.assert_allclose(cy, u * np.sin(X))
    out, pullback = dualad.vjp(g, X)
    np.testing.assert_allclose(pullback(u)[0], u * sigmoid(X))


def test_jacobians():
    fx = lambda x: f(x, Y)  # noqa: E731
    want = np.diag(np.cos(X) * Y)
    for jac in (J.jacfwd, J.jacrev, J.jacobian):
        np.testing.assert_allclose(jac(fx)(X), want)
    np.testing.assert_allclose(J.jacrev(g)(X), np.diag(sigmoid(X)))
    np.testing.assert_allclose(J.jacobian(g, mode="rev")(X), np.diag(sigmoid(X)))
    p = J.plan(fx, X)
    np.testing.assert_allclose(np.asarray(p(X)), want)


def test_second_order_of_custom_jvp():
    H = J.hessian(f_loss)(X, Y)
    np.testing.assert_allclose(H, J.hessian(f_loss_plain)(X, Y), atol=1e-12)
    # reverse over reverse: the transposed rule differentiated again
    np.testing.assert_allclose(J.jacrev(dualad.grad(f_loss))(X, Y), H, atol=1e-12)
    np.testing.assert_allclose(J.jacfwd(J.jacfwd(lambda x: np.sum(f(x, Y))))(X),
                               np.diag(-np.sin(X) * Y), atol=1e-12)
    assert dualad.derivative(halfsin, 2)(0.3) == pytest.approx(-0.5 * np.sin(0.3))
    assert dualad.derivative(halfsin, 3)(0.3) == pytest.approx(-0.5 * np.cos(0.3))


def test_second_order_of_custom_vjp():
    H = J.jacrev(dualad.grad(g_loss))(X)
    np.testing.assert_allclose(H, J.hessian(g_loss_plain)(X), atol=1e-12)
    np.testing.assert_allclose(J.hessian(g_loss, mode="reverse-over-reverse")(X), H, atol=1e-12)
    for x in (X, X + 0.5):
        np.testing.assert_allclose(J.jacrev(dualad.grad(dualad.jit(g_loss)))(x),
                                   J.hessian(g_loss_plain)(x), atol=1e-12)
        np.testing.assert_allclose(dualad.jit(J.jacrev(dualad.grad(g_loss)))(x),
                                   J.hessian(g_loss_plain)(x), atol=1e-12)
    # the rule, not the body: d/dx (0.5 e^x) = 0.5 e^x
    assert dualad.grad(dualad.grad(halfexp))(0.7) == pytest.approx(0.5 * np.exp(0.7))


def test_custom_vjp_refuses_forward_mode():
    for run in (lambda: dualad.jvp(g, (X,), (X,)), lambda: J.jacfwd(g)(X),
                lambda: J.hessian(g_loss)(X)):
        with pytest.raises(TypeError, match=r"'g', a custom_vjp function.*reverse-over-"
                                            r"reverse.*custom_jvp"):
            run()
    # forward-over-reverse works where no tangent of g's output is needed (a lazy sweep)
    np.testing.assert_allclose(J.hessian(lambda x: np.sum(g(x)))(X),
                               np.diag(sigmoid(X) * (1 - sigmoid(X))), atol=1e-12)


def test_vmap():
    xs = np.stack([X, 2 * X])
    np.testing.assert_allclose(dualad.vmap(f)(xs, np.stack([Y, Y])), np.sin(xs) * Y)
    np.testing.assert_allclose(dualad.vmap(g)(xs), np.log1p(np.exp(xs)))
    np.testing.assert_allclose(dualad.vmap(dualad.grad(g_loss))(xs),
                               dualad.vmap(dualad.grad(g_loss_plain))(xs))
    np.testing.assert_allclose(dualad.grad(lambda xs: np.sum(dualad.vmap(halfsin)(xs)))(xs),
                               0.5 * np.cos(xs))
    np.testing.assert_allclose(dualad.vmap(dualad.grad(halfsin))(X), 0.5 * np.cos(X))


def test_jit_traced_and_replayed():
    jf = dualad.jit(lambda x: f_loss(x, Y))
    jgf = dualad.jit(dualad.grad(lambda x: f_loss(x, Y)))
    gjf = dualad.grad(dualad.jit(lambda x: f_loss(x, Y)))
    jgg = dualad.jit(dualad.grad(g_loss))
    ggj = dualad.grad(dualad.jit(g_loss))
    for x in (X, X + 1.0, 0.5 * X):       # the first traces, the others replay
        want = dualad.grad(f_loss_plain)(x, Y)
        assert jf(x) == pytest.approx(f_loss_plain(x, Y))
        np.testing.assert_allclose(jgf(x), want)
        np.testing.assert_allclose(gjf(x), want)
        np.testing.assert_allclose(jgg(x), dualad.grad(g_loss_plain)(x))
        np.testing.assert_allclose(ggj(x), dualad.grad(g_loss_plain)(x))
    jh = dualad.jit(dualad.grad(halfsin))
    for x in (0.1, 0.9):
        assert jh(x) == pytest.approx(0.5 * np.cos(x))


def test_checkpoint():
    np.testing.assert_allclose(dualad.grad(dualad.checkpoint(g_loss))(X),
                               dualad.grad(g_loss_plain)(X))
    np.testing.assert_allclose(dualad.grad(dualad.checkpoint(lambda x: f_loss(x, Y)))(X),
                               dualad.grad(f_loss_plain)(X, Y))


def test_custom_vjp_runs_fwd_once_at_first_order():
    calls = []

    @dualad.custom_vjp
    def h(x):
        return x ** 3

    def h_fwd(x):
        calls.append(1)
        return x ** 3, x

    h.defvjp(h_fwd, lambda x, ct: (3 * x ** 2 * ct,))
    np.testing.assert_allclose(dualad.grad(lambda x: np.sum(h(x)))(X), 3 * X ** 2)
    assert len(calls) == 1


# -- pytrees, nondiff_argnums, keywords --------------------------------------------------

@dualad.custom_jvp
def poly(n, params, label):
    a, b = params["a"], params["b"]
    return {"s": a ** n * b, "t": (np.sum(a), b)}


poly = dualad.custom_jvp(poly.fun, nondiff_argnums=(0, 2))


@poly.defjvp
def poly_jvp(n, label, primals, tangents):
    assert isinstance(n, int) and label == "lbl"
    (p,), (t,) = primals, tangents
    a, b = p["a"], p["b"]
    da, db = t["a"], t["b"]
    return poly(n, p, label), {"s": n * a ** (n - 1) * da * b + a ** n * db,
                               "t": (np.sum(da), db)}


def poly_loss(p, fn):
    out = fn(3, p, "lbl")
    return np.sum(out["s"]) + out["t"][0] * out["t"][1] ** 2


P = {"a": np.array([1.0, 2.0, 3.0]), "b": 2.0}


def test_pytrees_and_nondiff_argnums():
    got = dualad.grad(lambda p: poly_loss(p, poly))(P)
    want = dualad.grad(lambda p: poly_loss(p, poly.fun))(P)
    np.testing.assert_allclose(got["a"], want["a"])
    assert got["b"] == pytest.approx(want["b"])
    H = J.hessian(lambda a: poly_loss({"a": a, "b": 2.0}, poly))(P["a"])
    np.testing.assert_allclose(H, J.hessian(lambda a: poly_loss({"a": a, "b": 2.0},
                                                                 poly.fun))(P["a"]))
    tan = {"a": np.array([1.0, 0.0, 0.0]), "b": 1.0}
    _, t = dualad.jvp(lambda p: poly(3, p, "lbl"), (P,), (tan,))
    _, t0 = dualad.jvp(lambda p: poly.fun(3, p, "lbl"), (P,), (tan,))
    np.testing.assert_allclose(t["s"], t0["s"])
    assert t["t"][1] == pytest.approx(t0["t"][1])


@dualad.custom_vjp
def apply_fn(fn, x, scale):
    return fn(x) * scale


apply_fn = dualad.custom_vjp(apply_fn.fun, nondiff_argnums=(0,))


def apply_fwd(fn, x, scale):
    return fn(x) * scale, (x, scale)


def apply_bwd(fn, res, ct):
    x, scale = res
    d = dualad.grad(lambda x: np.sum(fn(x)))(x)   # elementwise fn: its derivative
    return ct * d * scale, np.sum(ct * fn(x))


apply_fn.defvjp(apply_fwd, apply_bwd)


def test_custom_vjp_with_a_callable_nondiff_argument():
    gx, gs = dualad.grad(lambda x, s: np.sum(apply_fn(np.tanh, x, s)), argnums=(0, 1))(X, 2.0)
    np.testing.assert_allclose(gx, 2.0 * (1 - np.tanh(X) ** 2))
    assert gs == pytest.approx(np.sum(np.tanh(X)))


def test_pytree_output_of_custom_vjp():
    @dualad.custom_vjp
    def pair(x, w):
        return {"u": x * w, "v": np.sum(x) ** 2}

    pair.defvjp(lambda x, w: (pair(x, w), (x, w)),
                lambda r, ct: (ct["u"] * r[1] + 2 * np.sum(r[0]) * ct["v"],
                               np.sum(ct["u"] * r[0])))

    def loss(fn, x, w):
        out = fn(x, w)
        return np.sum(out["u"] ** 2) + 3.0 * out["v"]
    got = dualad.grad(lambda x, w: loss(pair, x, w), argnums=(0, 1))(X, 1.5)
    want = dualad.grad(lambda x, w: loss(pair.fun, x, w), argnums=(0, 1))(X, 1.5)
    np.testing.assert_allclose(got[0], want[0])
    assert got[1] == pytest.approx(want[1])
    np.testing.assert_allclose(J.jacrev(dualad.grad(lambda x: loss(pair, x, 1.5)))(X),
                               J.hessian(lambda x: loss(pair.fun, x, 1.5))(X), atol=1e-12)


def test_keyword_arguments_bound_to_positions():
    @dualad.custom_jvp
    def scaled(x, scale=2.0):
        return x * scale

    @scaled.defjvp
    def scaled_jvp(primals, tangents):
        (x, s), (tx, ts) = primals, tangents
        return scaled(x, s), tx * s + x * ts
    assert dualad.grad(lambda x: scaled(x, scale=3.0))(1.0) == pytest.approx(3.0)
    assert dualad.grad(lambda x: scaled(x))(1.0) == pytest.approx(2.0)
    assert dualad.grad(lambda s: scaled(2.0, scale=s))(1.0) == pytest.approx(2.0)

    @dualad.custom_jvp
    def kwonly(x, *, scale):
        return x * scale
    kwonly.defjvp(lambda p, t: (p[0], t[0]))
    with pytest.raises(TypeError, match="'kwonly': keyword-only arguments.*positional"):
        dualad.grad(lambda x: kwonly(x, scale=2.0))(1.0)


def test_float32_stays_float32():
    x = np.array([0.5, 1.0], dtype=np.float32)
    assert dualad.grad(lambda x: np.sum(f(x, np.float32(2.0))))(x).dtype == np.float32
    assert dualad.grad(lambda x: np.sum(g(x)))(x).dtype == np.float32


def test_integer_leaf_gets_no_derivative():
    @dualad.custom_vjp
    def shift(x, k):
        return np.roll(x, k)
    shift.defvjp(lambda x, k: (np.roll(x, k), k), lambda k, ct: (np.roll(ct, -k), None))
    u = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(dualad.grad(lambda x: np.sum(shift(x, 1) * u))(X),
                               np.roll(u, -1))


# -- closures ------------------------------------------------------------------------------

def test_closure_over_a_constant_array():
    w = np.array([1.0, 2.0, 3.0])

    @dualad.custom_jvp
    def weighted(x):
        return np.sin(x) * w

    @weighted.defjvp
    def weighted_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return weighted(x), np.cos(x) * w * t
    np.testing.assert_allclose(dualad.grad(lambda x: np.sum(weighted(x)))(X), np.cos(X) * w)
    np.testing.assert_allclose(J.hessian(lambda x: np.sum(weighted(x)))(X),
                               np.diag(-np.sin(X) * w))


def test_closed_over_traced_value_passed_as_argument_is_right():
    def outer(c):
        @dualad.custom_jvp
        def k(x, c):
            return x * c

        @k.defjvp
        def k_jvp(primals, tangents):
            (x, c), (tx, tc) = primals, tangents
            return k(x, c), tx * c + x * tc
        return np.sum(k(np.array([1.0, 2.0]), c) ** 2)
    assert dualad.grad(outer)(3.0) == pytest.approx(2 * 3.0 * 5.0)
    assert dualad.derivative(outer, 2)(3.0) == pytest.approx(10.0)


def test_closure_over_a_traced_value_raises():
    def outer(c, traced_arg):
        @dualad.custom_jvp
        def k(x):
            return x * c

        @k.defjvp
        def k_jvp(primals, tangents):
            return k(*primals), tangents[0] * c
        return np.sum(k(c * np.ones(2) if traced_arg else np.ones(2)))
    for traced_arg in (True, False):
        with pytest.raises(TypeError, match=r"custom_jvp function 'k' closes over 'c', a "
                                            r"value traced.*Pass it to 'k' as an argument"):
            dualad.grad(outer)(3.0, traced_arg)

    def outer_vjp(c):
        @dualad.custom_vjp
        def k(x):
            return x * c
        k.defvjp(lambda x: (x * c, None), lambda r, ct: (ct * c,))
        return np.sum(k(np.ones(2)))
    with pytest.raises(TypeError, match="custom_vjp function 'k' closes over 'c'"):
        dualad.grad(outer_vjp)(3.0)


# -- misuse --------------------------------------------------------------------------------

def test_no_rule_yet():
    @dualad.custom_jvp
    def early(x):
        return np.sin(x)
    assert early(0.0) == 0.0          # a plain call runs the function
    with pytest.raises(TypeError, match=r"'early' was called under a transformation before "
                                        r"its rule.*@early.defjvp"):
        dualad.grad(early)(0.0)

    @dualad.custom_vjp
    def early_v(x):
        return np.sin(x)
    with pytest.raises(TypeError, match=r"'early_v'.*early_v.defvjp\(fwd, bwd\)"):
        dualad.grad(early_v)(0.0)


def _jvp_fn(rule):
    @dualad.custom_jvp
    def h(x):
        return np.sin(x)
    h.defjvp(rule)
    return h


@pytest.mark.parametrize("rule, error, pattern", [
    (lambda p, t: (np.sin(p[0]), np.cos(p[0][:2]) * t[0][:2]), ValueError,
     r"'h': tangent output leaf 0 has shape \(2,\).*shape \(3,\)"),
    (lambda p, t: np.cos(p[0]) * t[0], TypeError, r"'h': its JVP rule must return a pair"),
    (lambda p, t: None, TypeError, r"'h': its JVP rule returned None \(a missing return"),
    (lambda p, t: (np.sin(p[0]), (np.cos(p[0]) * t[0] > 0)), TypeError,
     r"'h': tangent output leaf 0 has dtype bool"),
    (lambda p, t: (np.sin(p[0]), 1j * np.cos(p[0]) * t[0]), TypeError,
     r"'h': tangent output leaf 0 is complex"),
    (lambda p, t: (np.sin(p[0]), (t[0], t[0])), TypeError,
     r"'h': tangent output leaf 0 is a tuple of 2 item\(s\).*same structure"),
])
def test_bad_jvp_rules(rule, error, pattern):
    h = _jvp_fn(rule)
    with pytest.raises(error, match=pattern):
        dualad.jvp(h, (X,), (np.ones(3),))
    with pytest.raises(error, match=pattern):
        dualad.grad(lambda x: np.sum(h(x)))(X)


def _vjp_fn(fwd, bwd):
    @dualad.custom_vjp
    def h(x, y):
        return x * y
    h.defvjp(fwd, bwd)
    return h


@pytest.mark.parametrize("fwd, bwd, error, pattern", [
    (lambda x, y: (x * y, (x, y)), lambda r, ct: (ct * r[1],), TypeError,
     r"'h': its bwd returned 1 cotangent\(s\), but 'h' has 2 differentiable"),
    (lambda x, y: (x * y, (x, y)), lambda r, ct: (np.sum(ct * r[1]), ct * r[0]), ValueError,
     r"'h': cotangent leaf 0 has shape \(\), but the argument leaf 0 has shape \(3,\)"),
    (lambda x, y: (x * y, (x, y)), lambda r, ct: None, TypeError,
     r"'h': its bwd returned None \(a missing return"),
    (lambda x, y: x * y, lambda r, ct: (ct, ct), TypeError,
     r"'h': its fwd must return a pair \(primal_out, residuals\)"),
    (lambda x, y: None, lambda r, ct: (ct, ct), TypeError, r"'h': its fwd returned None"),
])
def test_bad_vjp_rules(fwd, bwd, error, pattern):
    h = _vjp_fn(fwd, bwd)
    with pytest.raises(error, match=pattern):
        dualad.grad(lambda x: np.sum(h(x, Y)))(X)


def test_nondiff_argnums_out_of_range():
    with pytest.raises(ValueError, match=r"'two': nondiff_argnums \[2\] out of range.*0\.\.1"):
        dualad.custom_jvp(_two, nondiff_argnums=(2,))
    var = dualad.custom_vjp(lambda *xs: xs[0], nondiff_argnums=(3,))
    var.defvjp(lambda *xs: (xs[0], None), lambda r, ct: (ct,))
    with pytest.raises(ValueError, match=r"nondiff_argnums contains 3, out of range"):
        dualad.grad(lambda x: var(x, 1.0))(1.0)
    with pytest.raises(TypeError, match="argument 0 is in nondiff_argnums but holds a traced"):
        nd = dualad.custom_jvp(_two, nondiff_argnums=(0,))
        nd.defjvp(lambda x, p, t: (p[0], t[0]))
        dualad.grad(lambda x: nd(x, 1.0))(1.0)


def _two(x, y):
    return x * y


_two.__name__ = "two"


def test_function_returning_none():
    @dualad.custom_jvp
    def nothing(x):
        np.sin(x)
    nothing.defjvp(lambda p, t: (p[0], t[0]))
    with pytest.raises(TypeError, match="'nothing': the function returned None"):
        dualad.grad(nothing)(1.0)


# -- the rule checker ----------------------------------------------------------------------

def test_check_rule_accepts_right_rules():
    check_rule(f, args=(X, Y)).raise_if_failed()
    check_rule(g, args=(X,)).raise_if_failed()
    report = check_rule(g)                 # samples drawn from the signature
    assert report.ok and any("reverse mode only" in n for n in report.notes)


def test_check_rule_catches_wrong_rules():
    report = check_rule(halfsin, args=(X,))
    assert not report.ok
    assert any("tangent (JVP) of argument 0" in r.check for r in report.failures)
    report = check_rule(halfexp, args=(X,))
    assert any("cotangent (VJP) of argument 0" in r.check for r in report.failures)

    @dualad.custom_vjp
    def off(x):
        return np.sin(x)
    off.defvjp(lambda x: (np.sin(x) + 1e-3, x), lambda x, ct: (np.cos(x) * ct,))
    report = check_rule(off, args=(X,))
    assert any("fwd's primal output equals the function's value" in r.check
               for r in report.failures)


# -- threads and properties ----------------------------------------------------------------

def test_two_threads_grad_the_same_function():
    results, errors = {}, []

    def work(k):
        try:
            x = X * (k + 1)
            for _ in range(20):
                gf = dualad.grad(lambda x: f_loss(x, Y))(x)
                gg = dualad.grad(g_loss)(x)
            results[k] = (x, gf, gg)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)
    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for x, gf, gg in results.values():
        np.testing.assert_allclose(gf, dualad.grad(f_loss_plain)(x, Y))
        np.testing.assert_allclose(gg, dualad.grad(g_loss_plain)(x))


@settings(derandomize=True, max_examples=25, deadline=None)
@given(st.lists(st.floats(-3, 3), min_size=1, max_size=4),
       st.floats(-2, 2))
def test_property_matches_the_body(xs, y):
    x = np.array(xs)
    np.testing.assert_allclose(dualad.grad(lambda x: f_loss(x, y))(x),
                               dualad.grad(f_loss_plain)(x, y), atol=1e-12)
    np.testing.assert_allclose(dualad.grad(g_loss)(x), dualad.grad(g_loss_plain)(x),
                               atol=1e-12)
    np.testing.assert_allclose(J.hessian(lambda x: f_loss(x, y))(x),
                               J.hessian(f_loss_plain)(x, y), atol=1e-10)


def test_defjvps_one_rule_per_argument():
    @dualad.custom_jvp
    def sin_times(x, y):
        return np.sin(x) * y

    sin_times.defjvps(lambda x_dot, out, x, y: np.cos(x) * x_dot * y,
                      lambda y_dot, out, x, y: np.sin(x) * y_dot)
    gx, gy = dualad.grad(lambda x, y: np.sum(sin_times(x, y)), argnums=(0, 1))(X, Y)
    np.testing.assert_allclose(gx, np.cos(X) * Y)
    np.testing.assert_allclose(gy, np.sin(X))
    _, t = dualad.jvp(sin_times, (X, Y), (np.ones(3), np.zeros(3)))
    np.testing.assert_allclose(t, np.cos(X) * Y)

    @dualad.custom_jvp
    def only_x(x, y):
        return np.sin(x) * y
    only_x.defjvps(lambda x_dot, out, x, y: np.cos(x) * x_dot * y, None)   # y: no tangent
    assert dualad.grad(only_x, argnums=1)(0.3, 2.0) == 0.0
    with pytest.raises(TypeError, match="'two': defjvps cannot be used with nondiff_argnums"):
        dualad.custom_jvp(_two, nondiff_argnums=(1,)).defjvps(None)


def test_scalar_outputs_stay_numpy_scalars():
    v, gr = dualad.value_and_grad(lambda x: np.sum(g(x)))(X)
    assert np.ndim(v) == 0 and np.ndim(gr) == 1
    assert isinstance(dualad.grad(halfsin)(0.2), (float, np.floating))


def test_callable_nondiff_argument_closing_over_a_traced_value_raises():
    def outer(c):
        return np.sum(apply_fn(lambda x: np.sin(x) * c, X, 2.0))
    with pytest.raises(TypeError, match=r"'apply_fn' closes over 'c' \(through argument 0, a "
                                        r"function in nondiff_argnums\)"):
        dualad.grad(outer)(1.0)
    # the same callable over a constant is fine
    np.testing.assert_allclose(
        dualad.grad(lambda x: np.sum(apply_fn(lambda x: np.sin(x) * 3.0, x, 2.0)))(X),
        6.0 * np.cos(X))


def test_non_array_leaves_in_a_pytree_argument_pass_through():
    @dualad.custom_vjp
    def tagged(p):
        assert p["tag"] == "w" and p["none"] is None
        return p["x"] ** 2

    def tagged_fwd(p):
        return tagged(p), p["x"]

    def tagged_bwd(x, ct):
        return ({"x": 2 * x * ct, "tag": None, "none": None},)
    tagged.defvjp(tagged_fwd, tagged_bwd)
    got = dualad.grad(lambda x: np.sum(tagged({"x": x, "tag": "w", "none": None})))(X)
    np.testing.assert_allclose(got, 2 * X)
