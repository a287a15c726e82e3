"""dualad.vmap: the batching interpreter against Python loops, its axes, its composition
with grad/jvp/vjp/hvp/checkpoint and itself, per-example gradients, and its errors.

Oracles: a Python loop of plain NumPy over the examples (values), closed-form gradients
(logistic regression, a hand-written backward pass of a 2-layer MLP), and
dualad.verification.check_grads (finite differences) where vmap is differentiated.
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sc
from hypothesis import given, settings, strategies as st

import dualad
from vmap_helpers import LoopSpy
from dualad import grad, hvp, jvp, vjp, vmap
from dualad.interpreters.batching.vmap import BatchTrace, batching_rule, is_looped
from dualad.verification import check_grads

RNG = np.random.default_rng(1818)


def _loop(fn, *arrays):
    """The reference: ``fn`` on each example, stacked (plain NumPy)."""
    outs = [fn(*[a[i] for a in arrays]) for i in range(len(arrays[0]))]
    if isinstance(outs[0], tuple):
        return tuple(np.stack([o[j] for o in outs]) for j in range(len(outs[0])))
    return np.stack(outs)




# --- values against a loop -------------------------------------------------------------

def test_elementwise_and_reductions_match_a_loop():
    X = RNG.normal(size=(5, 3, 4))

    def f(x):
        return np.sin(x) * np.exp(-x ** 2) + np.sum(x, axis=0) - np.mean(x) * np.tanh(x)
    np.testing.assert_allclose(vmap(f)(X), _loop(f, X), rtol=1e-13)


@pytest.mark.parametrize("sa,sb,ia,ib", [
    ((3, 4), (4,), 0, 0), ((3, 4), (4,), 0, None), ((3, 4), (4,), None, 0),
    ((3, 4), (4, 2), 0, 0), ((3, 4), (4, 2), None, 0), ((3, 4), (4, 2), 0, None),
    ((2, 3, 4), (4, 2), 0, None), ((3, 4), (2, 4, 5), 0, None), ((4,), (4,), 0, 0),
    ((4,), (4, 3), 0, None), ((4,), (2, 4, 3), None, 0)])
def test_matmul_every_rank_and_side(sa, sb, ia, ib):
    B = 3
    a = RNG.normal(size=((B,) + sa) if ia == 0 else sa)
    b = RNG.normal(size=((B,) + sb) if ib == 0 else sb)
    got = vmap(lambda x, y: x @ y, in_axes=(ia, ib))(a, b)
    want = np.stack([(a[k] if ia == 0 else a) @ (b[k] if ib == 0 else b) for k in range(B)])
    np.testing.assert_allclose(got, want, rtol=1e-13)


def test_shape_ops_match_a_loop():
    X = RNG.normal(size=(4, 2, 3))

    def f(x):
        return np.broadcast_to(x.T.reshape(6, 1), (2, 6, 5)).sum(axis=(0, 2)) + x.ravel()
    np.testing.assert_allclose(vmap(f)(X), _loop(f, X), rtol=1e-13)


@settings(derandomize=True, max_examples=40, deadline=None)
@given(st.sampled_from([(), (3,), (2, 3), (1, 3)]), st.sampled_from([(), (3,), (2, 1)]),
       st.sampled_from([(0, 0), (0, None), (None, 0), (-1, 0), (0, -1)]),
       st.integers(1, 4))
def test_binary_broadcasting_property(sx, sy, axes, B):
    rng = np.random.default_rng(len(sx) * 10 + len(sy))

    def batched_shape(s, ax):
        if ax is None:
            return s
        ax = ax % (len(s) + 1)
        return s[:ax] + (B,) + s[ax:]
    ax, ay = axes
    if (ax is not None and ax < 0 and not sx) or (ay is not None and ay < 0 and not sy):
        return
    x = rng.normal(size=batched_shape(sx, ax))
    y = rng.normal(size=batched_shape(sy, ay))
    got = vmap(lambda u, v: np.arctan2(u, v) * u - v, in_axes=(ax, ay))(x, y)
    xs = [np.take(x, k, axis=ax) if ax is not None else x for k in range(B)]
    ys = [np.take(y, k, axis=ay) if ay is not None else y for k in range(B)]
    want = np.stack([np.arctan2(u, v) * u - v for u, v in zip(xs, ys)])
    np.testing.assert_allclose(got, want, rtol=1e-13)


def test_float32_stays_float32():
    X = RNG.normal(size=(3, 4)).astype(np.float32)
    out = vmap(lambda x: np.tanh(x) * 2)(X)
    assert out.dtype == np.float32
    g = vmap(grad(lambda x: np.sum(np.tanh(x))))(X)
    assert g.dtype == np.float32


def test_empty_batch_elementwise():
    out = vmap(np.sin)(np.zeros((0, 3)))
    assert out.shape == (0, 3)


# --- in_axes / out_axes ----------------------------------------------------------------

def test_in_axes_negative_and_none():
    X = RNG.normal(size=(3, 5))      # batch along the last axis
    w = RNG.normal(size=3)
    got = vmap(lambda x, w: x * w, in_axes=(-1, None))(X, w)
    np.testing.assert_allclose(got, X.T * w)
    got = vmap(lambda x, w: x * w, in_axes=[1, None])(X, w)   # a list too
    np.testing.assert_allclose(got, X.T * w)


def test_in_axes_prefix_trees_and_dicts():
    params = {"w": RNG.normal(size=3), "b": RNG.normal(size=(4,))}
    X = RNG.normal(size=(4, 3))

    def f(p, x):
        return np.dot(p["w"], x) + p["b"]
    got = vmap(f, in_axes=({"w": None, "b": 0}, 0))(params, X)
    want = np.array([params["w"] @ X[k] + params["b"][k] for k in range(4)])
    np.testing.assert_allclose(got, want)
    pair = (RNG.normal(size=(4, 2)), RNG.normal(size=2))
    got = vmap(lambda t: t[0] * t[1], in_axes=((0, None),))(pair)
    np.testing.assert_allclose(got, pair[0] * pair[1])


def test_out_axes_variants():
    X = RNG.normal(size=(4, 3))
    np.testing.assert_allclose(vmap(lambda x: x * 2, out_axes=1)(X), (X * 2).T)
    np.testing.assert_allclose(vmap(lambda x: x * 2, out_axes=-1)(X), (X * 2).T)
    a, b = vmap(lambda x: (x, np.sum(x)), out_axes=(1, 0))(X)
    np.testing.assert_allclose(a, X.T)
    np.testing.assert_allclose(b, X.sum(1))
    c = np.arange(3.0)
    out = vmap(lambda x: {"y": np.cos(x), "c": c}, out_axes={"y": 0, "c": None})(X)
    np.testing.assert_allclose(out["y"], np.cos(X))
    assert out["c"] is c                      # not mapped: returned as it is
    shared = vmap(lambda x: c)(X)              # not mapped, out_axes 0: broadcast
    np.testing.assert_allclose(shared, np.broadcast_to(c, (4, 3)))


def test_axis_size_and_keyword_arguments():
    w = RNG.normal(size=3)
    out = vmap(lambda w: w * 2, in_axes=None, axis_size=4)(w)
    np.testing.assert_allclose(out, np.broadcast_to(w * 2, (4, 3)))
    X = RNG.normal(size=(4, 3))
    out = vmap(lambda w, x: w * x, in_axes=(None,))(w, x=X)   # keywords map along axis 0
    np.testing.assert_allclose(out, w * X)


def test_len_and_shape_are_per_example():
    X = RNG.normal(size=(5, 3, 2))
    seen = {}

    def f(x):
        seen.update(shape=x.shape, ndim=x.ndim, size=x.size, len=len(x), nps=np.shape(x))
        return x
    vmap(f)(X)
    assert seen == {"shape": (3, 2), "ndim": 2, "size": 6, "len": 3, "nps": (3, 2)}


# --- nesting ---------------------------------------------------------------------------

def _f(x):
    return np.sum(np.sin(x) * x ** 2) + np.tanh(np.sum(x)) ** 2


def _fv(x):
    return np.sin(x) * np.cos(np.sum(x))


def _grad_f(x):   # closed form of grad(_f)
    t = np.tanh(np.sum(x))
    return np.cos(x) * x ** 2 + 2 * x * np.sin(x) + 2 * t * (1 - t ** 2)


def test_vmap_of_grad_and_grad_of_vmap_closed_form():
    X = RNG.normal(size=(4, 3))
    np.testing.assert_allclose(vmap(grad(_f))(X), _loop(_grad_f, X), rtol=1e-12)
    g = grad(lambda Z: np.sum(vmap(_f)(Z)))(X)
    np.testing.assert_allclose(g, _loop(_grad_f, X), rtol=1e-12)
    w = RNG.normal(size=3)
    total = grad(lambda w: np.sum(vmap(lambda w, x: _f(w * x), (None, 0))(w, X)))(w)
    np.testing.assert_allclose(total, sum(_grad_f(w * x) * x for x in X), rtol=1e-12)


def test_vmap_of_vmap():
    M = RNG.normal(size=(3, 4, 2))
    np.testing.assert_allclose(vmap(vmap(_fv))(M), np.stack([_loop(_fv, m) for m in M]))
    # the inner vmap over the other axis
    got = vmap(vmap(_fv, in_axes=1), in_axes=0)(M.transpose(0, 2, 1).copy())
    np.testing.assert_allclose(got, np.stack([_loop(_fv, m) for m in M]))
    np.testing.assert_allclose(vmap(vmap(grad(_f)))(M),
                               np.stack([_loop(_grad_f, m) for m in M]), rtol=1e-12)


def test_jvp_vjp_over_and_under_vmap():
    X, V = RNG.normal(size=(4, 3)), RNG.normal(size=(4, 3))

    def jvp_ref(x, v):    # d/dε _fv(x + εv): closed form
        s = np.sum(x)
        return np.cos(x) * v * np.cos(s) - np.sin(x) * np.sin(s) * np.sum(v)

    def vjp_ref(x, u):    # uᵀ J
        s = np.sum(x)
        return u * np.cos(x) * np.cos(s) - np.sum(u * np.sin(x)) * np.sin(s)
    want = _loop(jvp_ref, X, V)
    under = vmap(lambda x, v: jvp(_fv, (x,), (v,))[1])(X, V)
    over = jvp(vmap(_fv), (X,), (V,))[1]
    np.testing.assert_allclose(under, want, rtol=1e-12)
    np.testing.assert_allclose(over, want, rtol=1e-12)
    want = _loop(vjp_ref, X, V)
    under = vmap(lambda x, u: vjp(_fv, x)[1](u)[0])(X, V)
    over = vjp(vmap(_fv), X)[1](V)[0]
    np.testing.assert_allclose(under, want, rtol=1e-12)
    np.testing.assert_allclose(over, want, rtol=1e-12)


def test_hvp_over_and_under_vmap():
    X, V = RNG.normal(size=(4, 3)), RNG.normal(size=(4, 3))

    def hvp_ref(x, v):    # ∇²(Σ sin(x)) v = −sin(x)·v
        return -np.sin(x) * v

    def f(x):
        return np.sum(np.sin(x))
    want = _loop(hvp_ref, X, V)
    np.testing.assert_allclose(vmap(lambda x, v: hvp(f, x, v))(X, V), want, rtol=1e-12)
    np.testing.assert_allclose(hvp(lambda Z: np.sum(vmap(f)(Z)), X, V), want, rtol=1e-12)


def test_grad_of_vmap_is_right_by_finite_differences():
    X = RNG.normal(size=(3, 4))
    W = RNG.normal(size=(4, 2))
    check_grads(lambda W: np.sum(vmap(lambda x, W: np.tanh(x @ W), (0, None))(X, W) ** 2),
                (W,), order=2)


def test_vmap_with_checkpoint():
    X = RNG.normal(size=(4, 3))
    inside = grad(dualad.checkpoint(lambda Z: np.sum(vmap(_f)(Z))))(X)
    np.testing.assert_allclose(inside, _loop(_grad_f, X), rtol=1e-12)
    outside = vmap(grad(dualad.checkpoint(_f)))(X)
    np.testing.assert_allclose(outside, _loop(_grad_f, X), rtol=1e-12)


def test_zero_gradient_of_an_unused_argument_is_broadcast():
    X = RNG.normal(size=(4, 3))
    g = vmap(grad(lambda w, x: np.sum(x ** 2), argnums=0), in_axes=(None, 0))(np.ones(2), X)
    np.testing.assert_array_equal(g, np.zeros((4, 2)))


# --- per-example gradients: the headline -----------------------------------------------

def _logreg_loss(w, x, y):
    return np.logaddexp(0.0, -y * (x @ w))


def _mlp_loss(p, x, y):
    W1, b1, W2, b2 = p
    h = np.tanh(x @ W1 + b1)
    return (h @ W2 + b2 - y) ** 2


def _mlp_grad_by_hand(p, x, y):
    W1, b1, W2, b2 = p
    h = np.tanh(x @ W1 + b1)
    r = h @ W2 + b2 - y
    dout = 2 * r
    dh = dout * W2 * (1 - h ** 2)
    return np.outer(x, dh), dh, dout * h, dout


def test_per_example_gradients_logistic_regression(monkeypatch):
    d, B = 5, 16
    w, X = RNG.normal(size=d), RNG.normal(size=(B, d))
    y = np.sign(RNG.normal(size=B))
    spy = LoopSpy(monkeypatch)
    g = vmap(grad(_logreg_loss), in_axes=(None, 0, 0))(w, X, y)
    want = (-y * sc.expit(-y * (X @ w)))[:, None] * X
    np.testing.assert_allclose(g, want, rtol=1e-12)
    assert spy.looped and not any(spy.looped.values()), spy.looped


def test_per_example_gradients_mlp_in_one_batched_pass(monkeypatch):
    d, h, B = 6, 8, 32
    p = (RNG.normal(size=(d, h)) / 2, RNG.normal(size=h), RNG.normal(size=h) / 2, 0.3)
    X, y = RNG.normal(size=(B, d)), RNG.normal(size=B)
    spy = LoopSpy(monkeypatch)
    g = vmap(grad(_mlp_loss), in_axes=(None, 0, 0))(p, X, y)
    # no loop fallback anywhere on the path: one batched pass
    assert {"matmul", "tanh", "add", "transpose"} <= set(spy.looped), spy.looped
    assert not any(spy.looped.values()), spy.looped
    want = [np.stack(parts) for parts in zip(*[_mlp_grad_by_hand(p, X[k], y[k])
                                               for k in range(B)])]
    for got, ref in zip(g, want):
        np.testing.assert_allclose(got, ref, rtol=1e-11, atol=1e-13)
    # and a batch-mean loss's gradient is the mean of the per-example ones
    mean_grad = grad(lambda p: np.mean(vmap(_mlp_loss, (None, 0, 0))(p, X, y)))(p)
    for got, ref in zip(mean_grad, want):
        np.testing.assert_allclose(got, ref.mean(0), rtol=1e-11, atol=1e-13)


# --- the rules -------------------------------------------------------------------------

def test_derived_rules_and_is_looped():
    reg = dualad.REGISTRY
    assert not is_looped(reg["sin"]) and not is_looped(reg["less"])       # elementwise
    assert not is_looped(reg["sum"]) and not is_looped(reg["reshape"])    # def_linear batched=
    assert not is_looped(reg["matmul"]) and not is_looped(reg["broadcast_to"])  # declared
    rule = batching_rule(reg["sum"])
    x = RNG.normal(size=(3, 4, 5))
    np.testing.assert_allclose(rule([x], (True,), axis=(1,), keepdims=False), x.sum(2))


def test_user_primitive_loops_until_it_declares_a_rule():
    calls = []

    @dualad.primitive
    def cube_sum(x):
        calls.append(np.shape(x))
        return np.sum(x ** 3)
    cube_sum.defvjp(lambda g, ans, x: g * 3 * x ** 2)
    assert is_looped(cube_sum)
    X = RNG.normal(size=(4, 3))
    np.testing.assert_allclose(vmap(cube_sum)(X), (X ** 3).sum(1))
    assert calls == [(3,)] * 4                                   # one call per example
    np.testing.assert_allclose(vmap(grad(cube_sum))(X), 3 * X ** 2)
    cube_sum.defbatch(lambda args, batched: np.sum(args[0] ** 3, axis=-1))
    assert not is_looped(cube_sum)
    calls.clear()
    np.testing.assert_allclose(vmap(cube_sum)(X), (X ** 3).sum(1))
    assert calls == []                                           # the rule, not the loop


def test_comparisons_and_where_are_batched():
    X = RNG.normal(size=(4, 5))

    def leaky(x):
        return np.where(x > 0, x, 0.1 * x)
    np.testing.assert_allclose(vmap(leaky)(X), leaky(X))
    np.testing.assert_allclose(vmap(grad(lambda x: np.sum(leaky(x))))(X),
                               np.where(X > 0, 1.0, 0.1))


def test_value_dependent_results_are_per_example():
    X = RNG.normal(size=(4, 5))
    np.testing.assert_array_equal(vmap(np.argmax)(X), X.argmax(1))
    np.testing.assert_allclose(vmap(grad(np.max))(X),
                               (X == X.max(1, keepdims=True)).astype(float))
    got = vmap(lambda x: (3 * x).astype(int) * 1.0)(X)
    np.testing.assert_allclose(got, (3 * X).astype(int))
    np.testing.assert_allclose(vmap(lambda x: np.mean(x, where=x > 0))(X),
                               [np.mean(x, where=x > 0) for x in X])


# --- errors ----------------------------------------------------------------------------

def test_error_mismatched_batch_sizes_names_both_arguments():
    with pytest.raises(ValueError, match=r"vmap\(f\): argument 1 has size 5 along axis 0 "
                                         r"but argument 0 has 3"):
        def f(a, b):
            return a + b
        vmap(f)(np.ones(3), np.ones(5))


def test_error_axis_out_of_range_and_scalar_argument():
    with pytest.raises(ValueError, match=r"in_axes 2 is out of range for argument 0 of "
                                         r"shape \(3, 4\)"):
        vmap(np.sin, in_axes=2)(np.ones((3, 4)))
    with pytest.raises(ValueError, match="argument 1 is 0-d"):
        vmap(lambda a, b: a * b)(np.ones(3), 2.0)
    with pytest.raises(ValueError, match=r"out_axes 3 is out of range for output 0"):
        vmap(np.sin, out_axes=3)(np.ones((3, 4)))


def test_error_no_mapped_argument_needs_axis_size():
    with pytest.raises(ValueError, match="axis_size"):
        vmap(np.sin, in_axes=None)(np.ones(3))


def test_error_in_axes_structure():
    with pytest.raises(ValueError, match="in_axes has 1 entries but .* 2 positional"):
        vmap(lambda a, b: a, in_axes=(0,))(np.ones(3), np.ones(3))
    with pytest.raises(TypeError, match="ints or None"):
        vmap(np.sin, in_axes=(0.5,))
    with pytest.raises(ValueError, match=r"in_axes\[0\] is a dict"):
        vmap(lambda p: p["w"], in_axes=({"w": 0, "v": 0},))({"w": np.ones(3)})


def test_error_out_axes_none_for_a_batched_output():
    with pytest.raises(ValueError, match="out_axes is None for output 0, but it depends on"):
        vmap(np.sin, out_axes=None)(np.ones(3))


@pytest.mark.parametrize("branch", [
    lambda x: x if x > 0 else -x, lambda x: float(x), lambda x: int(x),
    lambda x: x.item(), lambda x: [1, 2][x > 0]])
def test_error_python_control_flow_names_vmap_and_np_where(branch):
    with pytest.raises(TypeError, match=r"vmap: .* batched value .* np\.where"):
        vmap(branch)(np.array([1.0, -2.0]))


def test_error_escaped_batch_tracer():
    kept = []
    vmap(lambda x: kept.append(x) or x)(np.ones(3))
    with pytest.raises(dualad.EscapedTracerError, match="escaped the vmap call"):
        np.sin(kept[0])


def test_loop_fallback_on_an_empty_batch():
    @dualad.primitive
    def opaque(x):
        return np.sum(x) * np.ones(2)
    out = vmap(opaque)(np.zeros((0, 3)))
    assert out.shape == (0, 2)

    @dualad.primitive
    def fussy(x):
        raise RuntimeError("needs real data")
    with pytest.raises(ValueError, match="computed by a loop over the examples here and the batch is empty"):
        vmap(fussy)(np.zeros((0, 3)))


def test_batch_trace_is_exported_for_interpreters():
    from dualad import extend
    assert extend.BatchTrace is BatchTrace and extend.is_looped is is_looped
    assert dualad.interpreters.batching.vmap.batching_rule is batching_rule



def test_jacobian_by_vmap_over_directions():
    """vmap over the tangents of one jvp, and over the cotangents of one pullback: the
    Jacobian of f(x) = tanh(Wx)·x₀ + Σ x₁..² against its closed form."""
    x, W = RNG.normal(size=3), RNG.normal(size=(3, 3))

    def f(x):
        return np.tanh(W @ x) * x[0] + np.sum(x[1:] ** 2)
    t = np.tanh(W @ x)
    J = (1 - t ** 2)[:, None] * W * x[0]
    J[:, 0] += t
    J[:, 1:] += 2 * x[1:]
    np.testing.assert_allclose(vmap(lambda v: jvp(f, (x,), (v,))[1], out_axes=1)(np.eye(3)),
                               J, rtol=1e-12)
    _, pullback = vjp(f, x)
    np.testing.assert_allclose(vmap(lambda u: pullback(u)[0])(np.eye(3)), J, rtol=1e-12)


def test_indexing_an_unmapped_parameter_under_vmap_of_grad():
    w, X = RNG.normal(size=3), RNG.normal(size=(4, 3))
    g = vmap(grad(lambda w, x: np.sum(w[0] * x) + np.sum(w[1:] ** 2) * x[0]),
             in_axes=(None, 0))(w, X)
    want = np.stack([np.concatenate([[np.sum(x)], 2 * w[1:] * x[0]]) for x in X])
    np.testing.assert_allclose(g, want, rtol=1e-12)


def test_nested_vmap_closing_over_the_outer_value():
    A, B = RNG.normal(size=(2, 3)), RNG.normal(size=5)
    np.testing.assert_allclose(vmap(lambda a: vmap(lambda b: a * b)(B))(A),
                               A[:, None, :] * B[None, :, None])
    np.testing.assert_allclose(vmap(lambda a: vmap(lambda b: a)(B))(A),
                               np.broadcast_to(A[:, None, :], (2, 5, 3)))


def test_function_subclass_under_vmap_of_grad():
    class Cube(dualad.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x ** 2
    X = RNG.normal(size=(4, 3))
    np.testing.assert_allclose(vmap(grad(lambda x: np.sum(Cube.apply(x))))(X), 3 * X ** 2)


def test_checkpoint_under_vmap_maps_its_function_once():
    calls = []

    def f(x):
        calls.append(np.shape(x))
        return np.sum(np.sin(x) * x ** 2) + np.tanh(np.sum(x)) ** 2
    X = RNG.normal(size=(4, 3))
    g = vmap(grad(dualad.checkpoint(f)))(X)
    np.testing.assert_allclose(g, _loop(_grad_f, X), rtol=1e-12)
    assert not is_looped(dualad.checkpoint(f).primitive)
    assert len(calls) <= 2 and all(s == (3,) for s in calls)   # forward + recompute
