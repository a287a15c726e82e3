"""dualad.stop_gradient (also dualad.lax.stop_gradient, x.detach()): the value of x with a
zero derivative in every transformation, at every level of nesting (JAX's semantics).

Every derivative is compared with a closed form written by hand (the stopped factor a
constant c = its value), never with dualad itself.
"""
from collections import namedtuple

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import dualad
from dualad.extend import rule_table
from dualad import jacobians, stop_gradient as sg, vmap
from dualad.autograd import Variable
from dualad.transforms.stop import StopGradientPrimitive, stop_gradient_p
from dualad.core.tracer import Box
from dualad.verification import check_rule, check_registry

JVP = rule_table("jvp", per_argument=True)
VJP = rule_table("vjp", per_argument=True)

X = np.array([0.3, -1.2, 2.5, 0.8])


# --- value and first derivatives ---------------------------------------------------------

def test_value_is_x_and_plain_values_pass_through_unchanged():
    assert sg(X) is X                       # a constant: the identity, the same object
    assert sg(2.5) == 2.5
    assert dualad.lax.stop_gradient is sg
    out, _ = dualad.jvp(sg, (X,), (np.ones(4),))
    np.testing.assert_array_equal(out, X)


def test_reverse_and_forward_mode_treat_the_stopped_value_as_a_constant():
    # f(x) = Σ x² · c with c = stop_gradient(x): ∇f = 2 x c = 2x², not 3x²
    f = lambda x: np.sum(x ** 2 * sg(x))     # noqa: E731
    np.testing.assert_allclose(dualad.grad(f)(X), 2 * X * X, rtol=1e-14)
    v = np.array([1.0, -2.0, 0.5, 3.0])
    _, t = dualad.jvp(f, (X,), (v,))
    np.testing.assert_allclose(t, np.sum(2 * X * X * v), rtol=1e-14)
    _, pullback = dualad.vjp(sg, X)
    np.testing.assert_array_equal(pullback(np.ones(4))[0], np.zeros(4))
    _, T = dualad.jvp(sg, (X,), (np.eye(4),))            # vector mode: 4 directions
    np.testing.assert_array_equal(T, np.zeros((4, 4)))


def test_only_the_stopped_path_is_cut():
    # f(x) = x · stop_gradient(x) + x: f' = c + 1 = x + 1 (not 2x + 1)
    f = lambda x: x * sg(x) + x              # noqa: E731
    assert dualad.grad(f)(3.0) == 4.0
    assert dualad.jvp(f, (3.0,), (1.0,)) == (12.0, 4.0)
    assert dualad.grad(lambda x: x * sg(x).detach())(3.0) == 3.0


def test_straight_through_estimator():
    # x + stop_gradient(round(x) - x): the value round(x), the derivative 1
    ste = lambda x: x + sg(np.round(x) - x)  # noqa: E731
    x = np.array([0.2, 1.7, -0.6, 2.5])
    np.testing.assert_array_equal(ste(x), np.round(x))
    np.testing.assert_array_equal(dualad.grad(lambda x: np.sum(ste(x)))(x), np.ones(4))
    # a loss through the quantizer: ∇Σ(ste(x) - t)² = 2 (round(x) - t)
    t = np.array([0.5, 1.0, 0.0, 2.0])
    loss = lambda x: np.sum((ste(x) - t) ** 2)   # noqa: E731
    np.testing.assert_allclose(dualad.grad(loss)(x), 2 * (np.round(x) - t), rtol=1e-14)
    _, tan = dualad.jvp(loss, (x,), (np.ones(4),))
    np.testing.assert_allclose(tan, np.sum(2 * (np.round(x) - t)), rtol=1e-14)


@settings(derandomize=True, max_examples=30, deadline=None)
@given(st.lists(st.floats(-3, 3), min_size=1, max_size=6))
def test_product_rule_with_one_factor_stopped(xs):
    # ∇Σ sin(x)·stop(cos(x)) = cos(x)·cos(x): the stopped factor's derivative (-sin) is gone
    x = np.array(xs)
    f = lambda x: np.sum(np.sin(x) * sg(np.cos(x)))   # noqa: E731
    np.testing.assert_allclose(dualad.grad(f)(x), np.cos(x) ** 2, rtol=1e-12, atol=1e-15)
    _, t = dualad.jvp(f, (x,), (np.ones_like(x),))
    np.testing.assert_allclose(t, np.sum(np.cos(x) ** 2), rtol=1e-12, atol=1e-14)


# --- nesting: stopped at every level ------------------------------------------------------

def _h(x):
    """h(x) = d/dy [y · stop_gradient(x·y)] at y = 1 = stop_gradient(x·1): value x; the
    stopped value is a constant for the outer derivative too, so h'(x) = 0 (JAX gives 0.0
    for jax.grad of the same function; a stop at the inner level only would give 1)."""
    return dualad.grad(lambda y: y * sg(x * y))(1.0)


@pytest.mark.parametrize("outer", ["grad", "jvp"])
@pytest.mark.parametrize("inner", ["grad", "jvp"])
def test_stop_gradient_stops_every_level(outer, inner):
    def h(x):
        g = (lambda y: y * sg(x * y))
        if inner == "grad":
            return dualad.grad(g)(1.0)
        return dualad.jvp(g, (1.0,), (1.0,))[1]
    assert h(2.0) == 2.0
    d = dualad.grad(h)(2.0) if outer == "grad" else dualad.jvp(h, (2.0,), (1.0,))[1]
    assert d == 0.0


def test_nesting_keeps_the_outer_derivative_of_unstopped_paths():
    # h(x) = d/dy [y · stop(x) · x] = stop(x) · x: h' = stop(x) = x  (JAX: 2.0 at x = 2)
    h = lambda x: dualad.grad(lambda y: y * sg(x) * x)(1.0)   # noqa: E731
    assert h(2.0) == 4.0 and dualad.grad(h)(2.0) == 2.0
    # h2(x) = d/dy [stop(y) · y · x] = stop(y) · x at y = 1.5: h2' = 1.5  (JAX: 1.5)
    h2 = lambda x: dualad.grad(lambda y: sg(y) * y * x)(1.5)  # noqa: E731
    assert h2(2.0) == 3.0 and dualad.grad(h2)(2.0) == 1.5
    assert _h(2.0) == 2.0 and dualad.grad(_h)(2.0) == 0.0


def test_third_derivative_with_a_stopped_factor():
    # f(x) = x³ · c, c = stop(x) = 2: f' = 3x²c, f'' = 6xc, f''' = 6c
    f = lambda x: x ** 3 * sg(x)    # noqa: E731
    assert [dualad.derivative(f, k)(2.0) for k in (1, 2, 3)] == [24.0, 24.0, 12.0]
    g3 = dualad.grad(dualad.grad(dualad.grad(f)))
    assert g3(2.0) == 12.0


def test_hvp_and_hessian_with_a_stopped_factor():
    # f(x) = Σ x² · stop(x): H = diag(2c) = diag(2x)
    f = lambda x: np.sum(x ** 2 * sg(x))   # noqa: E731
    v = np.array([1.0, 2.0, -1.0, 0.5])
    (hv,) = dualad.hvp(f, (X,), (v,))
    np.testing.assert_allclose(hv, 2 * X * v, rtol=1e-14)
    np.testing.assert_allclose(jacobians.hessian(f, X), np.diag(2 * X), rtol=1e-14)


# --- the planner and the sparsity detector ------------------------------------------------

def _F(x):   # J = diag(roll(x, 1) + Σx): both stopped factors are constants
    return x * sg(np.roll(x, 1)) + sg(np.sum(x)) * x


@pytest.mark.parametrize("how", ["jacobian", "jacfwd", "jacrev", "sparse"])
def test_jacobians_planner(how):
    want = np.diag(np.roll(X, 1) + np.sum(X))
    if how == "sparse":
        got = jacobians.sparse_jacobian(_F, X).toarray()
    else:
        got = getattr(jacobians, how)(_F, X)
    np.testing.assert_allclose(got, want, rtol=1e-14)


def test_sparsity_pattern_has_no_dependency_through_the_stop():
    assert jacobians.jacobian_sparsity(lambda x: sg(x) + 1.0, X).nnz == 0
    np.testing.assert_array_equal(jacobians.jacobian_sparsity(_F, X).toarray(), np.eye(4))
    # Σ x² · stop(x): the Hessian's pattern is the diagonal (stop(x) is no second variable)
    H = jacobians.hessian_sparsity(lambda x: np.sum(x ** 2 * sg(np.roll(x, 1))), X)
    np.testing.assert_array_equal(H.toarray(), np.eye(4))
    S = jacobians.sparse_hessian(lambda x: np.sum(x ** 2 * sg(np.roll(x, 1))), X).toarray()
    np.testing.assert_allclose(S, np.diag(2 * np.roll(X, 1)), rtol=1e-14)


def _branchy(x):
    """The pattern depends on a branch taken on a stopped value."""
    if sg(x)[0] > 0:
        return np.roll(x, 1) ** 2
    return np.roll(x, -1) ** 2


@pytest.mark.parametrize("mode", ["sparse-forward", "sparse-reverse"])
def test_a_reused_sparse_plan_sees_branches_on_stopped_values(mode):
    """The stopped value stays traced, so a branch on it is a logged decision: the plan
    detects the pattern again where the branch changes (a plain stopped value would have
    slipped past the check: a wrong Jacobian at x2), and only there (its float value is
    not itself a decision, which would force a detection at every new point)."""
    x1 = np.arange(1.0, 7.0)
    p = jacobians.plan(_branchy, x1, mode=mode)
    for k, x in enumerate((x1, -x1, x1 + 0.5, -x1 - 0.5, x1 * 2.0)):
        got = p(x)
        got = got.toarray() if hasattr(got, "toarray") else got
        c = np.roll(x, 1) if x[0] > 0 else np.roll(x, -1)
        shift = 1 if x[0] > 0 else -1
        want = np.roll(np.diag(2 * c), -shift, axis=1)  # ∂(roll(x, s)_i²)/∂x_{i-s} = 2c_i
        np.testing.assert_allclose(got, want, rtol=1e-14, err_msg=f"point {k}")
    assert p.redetections == 1


# --- vmap -----------------------------------------------------------------------------------

def test_vmap_batches_it_as_an_elementwise_identity():
    from dualad.interpreters.batching.rules import is_looped
    assert not is_looped(stop_gradient_p)
    B = np.random.default_rng(0).standard_normal((5, 3))
    np.testing.assert_array_equal(vmap(sg)(B), B)
    w = np.array([0.5, -1.0, 2.0])
    # per-example ∇_w Σ w · stop(x w) = x w (the stopped factor's value)
    per_example = vmap(dualad.grad(lambda w, x: np.sum(w * sg(x * w))), in_axes=(None, 0))
    np.testing.assert_allclose(per_example(w, B), B * w, rtol=1e-14)
    # grad inside vmap, stop inside grad: ∇Σ x · stop(x)² = stop(x)² = x²
    inner = vmap(dualad.grad(lambda x: np.sum(x * sg(x) ** 2)))
    np.testing.assert_allclose(inner(B), B ** 2, rtol=1e-14)


# --- pytrees, dtypes, errors ----------------------------------------------------------------

def test_pytrees_keep_their_structure_and_every_leaf_is_stopped():
    Pair = namedtuple("Pair", "a b")

    def f(x):
        tree = sg({"u": (x, [2.0 * x]), "v": Pair(x ** 2, 3.0)})
        assert isinstance(tree["v"], Pair) and isinstance(tree["u"][1], list)
        assert tree["v"].b == 3.0
        return np.sum(x * (tree["u"][0] + tree["u"][1][0] + tree["v"].a))
    # ∇Σ x · (c + 2c + c²) = 3x + x²
    np.testing.assert_allclose(dualad.grad(f)(X), 3 * X + X ** 2, rtol=1e-14)
    assert sg(()) == () and sg({}) == {}


def test_float32_and_complex_keep_their_kind():
    x32 = X.astype(np.float32)
    g = dualad.grad(lambda x: np.sum(x * sg(x)))(x32)
    assert g.dtype == np.float32
    np.testing.assert_array_equal(g, x32)
    z = np.array([1.0 + 2.0j, -0.5j])
    out, t = dualad.jvp(lambda z: z * sg(z), (z,), (np.ones(2, complex),))
    np.testing.assert_array_equal(out, z * z)
    np.testing.assert_array_equal(t, z)          # d(z·c)/dz = c
    _, T = dualad.jvp(sg, (z,), (np.ones(2, complex),))
    assert T.dtype == complex and not T.any()


def test_empty_and_object_arrays():
    e = np.zeros(0)
    np.testing.assert_array_equal(dualad.grad(lambda x: np.sum(x * sg(x)))(e), e)

    def f(x):   # a list of traced scalars is stacked, as everywhere in dualad
        stacked = sg(np.array([x[0], x[1]], dtype=object))
        return np.sum(x[:2] * stacked)
    np.testing.assert_allclose(dualad.grad(f)(X), [X[0], X[1], 0.0, 0.0], rtol=1e-14)
    import scipy.sparse
    S = scipy.sparse.eye(3, format="csr")
    assert sg(S) is S and sg({"m": S})["m"] is S     # plain objects come back as they are


@pytest.mark.parametrize("bad, where", [(None, "x is None"), ("abc", "x is a str"),
                                        ((1.0, None), "x[1] is None"),
                                        ({"k": "s"}, "x['k'] is a str"),
                                        (np.array(["a"]), "dtype <U1")])
def test_errors_name_the_function_and_the_leaf(bad, where):
    with pytest.raises(TypeError, match="stop_gradient") as e:
        sg(bad)
    assert where in str(e.value)
    with pytest.raises(TypeError, match="stop_gradient"):
        dualad.grad(lambda x: np.sum(x) + 0.0 * len(sg([x, bad])))(X)


# --- detach ---------------------------------------------------------------------------------

def test_detach_on_traced_values_is_stop_gradient():
    seen = []

    def f(x):
        d = x.detach()
        seen.append(isinstance(d, Box))
        return np.sum(x * d)
    np.testing.assert_allclose(dualad.grad(f)(X), X, rtol=1e-14)      # ∇Σ x·c = c
    _, t = dualad.jvp(f, (X,), (np.ones(4),))
    np.testing.assert_allclose(t, np.sum(X), rtol=1e-14)
    assert seen == [True, True]     # still traced (a later branch on it is logged)


def test_variable_detach_has_pytorch_semantics():
    a = np.array([1.0, 2.0, 3.0])
    v = Variable(a, requires_grad=True)
    y = v * v
    d = y.detach()
    assert isinstance(d, Variable) and not d.requires_grad and d.is_leaf
    assert np.shares_memory(d.data, y.data) and np.shares_memory(v.detach().data, a)
    np.sum(y * d).backward()                 # ∇Σ x² · c = 2x c = 2x³
    np.testing.assert_allclose(v.grad, 2 * a ** 3, rtol=1e-14)
    with pytest.raises(RuntimeError, match="does not require grad"):
        np.sum(d).backward()
    s = sg(v)                                # stop_gradient of a Variable: its detach()
    assert isinstance(s, Variable) and not s.requires_grad
    np.testing.assert_array_equal(s.data, a)


# --- the rule checker -----------------------------------------------------------------------

def test_rule_checker_knows_the_derivative_is_zero_by_declaration():
    report = check_rule(stop_gradient_p)
    assert report.ok, str(report)
    checks = " | ".join(r.check for r in report.rows)
    for what in ("zero tangent (JVP)", "zero cotangent (VJP)", "stays traced",
                 "order 2 forward-over-reverse", "order 2 reverse-over-reverse",
                 "SymPy oracle (forward", "SymPy oracle (reverse"):
        assert what in checks, what
    assert "zero by declaration" in " ".join(report.notes)
    assert check_registry(["stop_gradient"], order=2).ok


def _broken(jvp=None, vjp=None):
    prim = StopGradientPrimitive("stop_gradient_broken", lambda x: x, sympy=lambda sp, x: x,
                                 elementwise=True, samples=stop_gradient_p.samples)
    prim.defjvp(jvp or JVP.get(stop_gradient_p)[0])
    prim.defvjp(vjp or VJP.get(stop_gradient_p)[0])
    return prim


@pytest.mark.parametrize("which", ["jvp", "vjp", "plain"])
def test_rule_checker_catches_a_stop_that_lets_derivatives_through(which):
    if which == "jvp":
        prim = _broken(jvp=lambda t, ans, x: t * 1e-3)
    elif which == "vjp":
        prim = _broken(vjp=lambda ct, ans, x: ct * 1e-3)
    else:   # a plain (unboxed) result: branches on it would escape the pattern check
        prim = _broken(jvp=lambda t, ans, x: None)
    report = check_rule(prim, order=2)
    assert not report.ok
