"""JAX's spellings at the top level (dualad.jacfwd/jacrev/jacobian/hessian, with
has_aux= and holomorphic=) and user pytree nodes honoured by every transformation.

The three kinds of node (a class registered with dualad.tree.register, a registered
dataclass, a NamedTuple) go as argument, output and aux through grad, value_and_grad,
jvp, vjp, hvp, vmap, jit, scan, while_loop, checkpoint, custom_vjp/custom_jvp, the
planner and check_grads. Expected values are derived by hand: for
loss(p) = sum(sin(w) * b) + b**2, d/dw = cos(w) b, d/db = sum(sin(w)) + 2 b,
d2/dw2 = diag(-sin(w) b), d2/dwdb = cos(w), d2/db2 = 2.
"""
import dataclasses
import json
import re
import subprocess
import sys
from typing import NamedTuple

import numpy as np
import pytest

import dualad
from dualad import jacobians
from dualad.verification import check_grads
from dualad.verification.check_grads import GradCheckError


class Affine:
    def __init__(self, w, b, act="tanh"):
        self.w, self.b, self.act = w, b, act


dualad.tree.register(Affine, lambda a: ((a.w, a.b), a.act), lambda act, ch: Affine(*ch, act))


@dualad.tree.register_dataclass
@dataclasses.dataclass
class Dense:
    w: np.ndarray
    b: float
    act: str = dataclasses.field(default="tanh", metadata={"static": True})


class Tup(NamedTuple):
    w: np.ndarray
    b: float


KINDS = {"registered": Affine, "dataclass": Dense, "namedtuple": Tup}
W = np.array([0.5, -1.0])
B = 0.3


def loss(p):
    return np.sum(np.sin(p.w) * p.b) + p.b ** 2


def grad_w(w, b):
    return np.cos(w) * b


def grad_b(w, b):
    return np.sum(np.sin(w)) + 2 * b


@pytest.fixture(params=sorted(KINDS))
def cls(request):
    return KINDS[request.param]


# --- the top-level names --------------------------------------------------------------

def test_top_level_names_are_the_planners_functions():
    for name in ("jacobian", "jacfwd", "jacrev", "hessian"):
        assert getattr(dualad, name) is getattr(jacobians, name), name
        assert name in dualad.__all__ and name in dir(dualad)


def test_import_dualad_does_not_import_the_planner_until_a_name_is_used():
    code = ("import sys, json, dualad\n"
            "before = 'dualad.jacobians' in sys.modules\n"
            "f = dualad.jacfwd\n"
            "print(json.dumps([before, 'dualad.jacobians' in sys.modules,"
            " f is sys.modules['dualad.jacobians'].jacfwd]))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [False, True, True]


def test_jax_call_forms_curried_with_argnums():
    f = lambda x, y: x * y ** 2     # noqa: E731
    x, y = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    np.testing.assert_array_equal(dualad.jacfwd(f, argnums=1)(x, y), np.diag(2 * x * y))
    np.testing.assert_array_equal(dualad.jacrev(f, argnums=1)(x, y), np.diag(2 * x * y))
    jx, jy = dualad.jacobian(f, argnums=(0, 1))(x, y)
    np.testing.assert_array_equal(jx, np.diag(y ** 2))
    np.testing.assert_array_equal(jy, np.diag(2 * x * y))
    H = dualad.hessian(lambda x: np.sum(x ** 3))(x)
    np.testing.assert_array_equal(H, np.diag(6 * x))


@pytest.mark.parametrize("name", ["jacfwd", "jacrev", "jacobian"])
def test_has_aux_returns_the_jacobian_of_the_output_and_the_aux(name):
    def f(x):
        return np.sin(x), {"norm": np.sum(x ** 2)}
    x = np.array([0.0, np.pi])
    J, aux = getattr(dualad, name)(f, has_aux=True)(x)
    np.testing.assert_allclose(J, np.diag(np.cos(x)), atol=1e-15)
    assert aux == {"norm": pytest.approx(np.pi ** 2)}
    J2, aux2 = getattr(dualad, name)(f, x, has_aux=True)       # dualad's uncurried form
    np.testing.assert_array_equal(J2, J)


def test_hessian_has_aux_and_inside_grad():
    H, aux = dualad.hessian(lambda x: (np.sum(x ** 3), x[0]), has_aux=True)(np.array([1.0, 2.0]))
    np.testing.assert_array_equal(H, np.diag([6.0, 12.0]))
    assert aux == 1.0
    # d/dx sum(diag(J)) with J = diag(3 x^2): 6 x
    g = dualad.grad(lambda x: np.trace(dualad.jacrev(lambda z: (z ** 3, 0.0),
                                                     has_aux=True)(x)[0]))(np.array([1.0, 2.0]))
    np.testing.assert_allclose(g, [6.0, 12.0])


def test_has_aux_with_a_function_that_returns_no_pair_is_named():
    with pytest.raises(ValueError, match=r"jacobians.jacfwd\(sin, has_aux=True\): sin must "
                                         r"return a pair \(output, aux\), got a ndarray"):
        dualad.jacfwd(np.sin, has_aux=True)(np.ones(2))
    with pytest.raises(ValueError, match="got a tuple of 3 item"):
        dualad.jacrev(lambda x: (x, x, x), has_aux=True)(np.ones(2))


def test_holomorphic_gives_the_complex_derivative_and_checks_the_dtype():
    z = np.array([1j, 2.0 + 1.0j])
    J = dualad.jacfwd(lambda z: z ** 2, holomorphic=True)(z)
    np.testing.assert_allclose(J, np.diag(2 * z))
    np.testing.assert_allclose(dualad.jacrev(lambda z: z ** 2, holomorphic=True)(z), np.diag(2 * z))
    with pytest.raises(TypeError, match=r"jacobians.jacfwd\(<lambda>, holomorphic=True\): "
                                        r"argument 0 has dtype float64, not complex"):
        dualad.jacfwd(lambda z: z ** 2, holomorphic=True)(np.ones(2))


def test_allow_int_is_refused_with_what_to_write_instead():
    with pytest.raises(TypeError, match=r"jacobians.jacrev\(sin, allow_int=True\): integer "
                                        r"inputs have no derivative .*x.astype\(float\)"):
        dualad.jacrev(np.sin, allow_int=True)(np.ones(2))
    np.testing.assert_array_equal(dualad.jacrev(np.sin, allow_int=False)(np.zeros(2)), np.eye(2))
    with pytest.raises(TypeError, match="unexpected keyword argument 'reduce_axes'"):
        dualad.jacrev(np.sin, reduce_axes=(0,))(np.ones(2))


# --- user nodes through every transformation -------------------------------------------

def make(cls, w=W, b=B, act="tanh"):
    return cls(w, b) if cls is Tup else cls(w, b, act)


def test_grad_and_value_and_grad_with_aux(cls):
    p = make(cls)
    g = dualad.grad(loss)(p)
    assert type(g) is cls
    np.testing.assert_allclose(g.w, grad_w(W, B), rtol=1e-14)
    np.testing.assert_allclose(g.b, grad_b(W, B), rtol=1e-14)
    (v, aux), g2 = dualad.value_and_grad(lambda q: (loss(q), q), has_aux=True)(p)
    assert type(aux) is cls and v == pytest.approx(loss(p))
    np.testing.assert_allclose(g2.w, grad_w(W, B), rtol=1e-14)


def test_jvp_vjp_hvp(cls):
    p, t = make(cls), make(cls, np.array([1.0, 2.0]), 1.0)
    _, tan = dualad.jvp(loss, (p,), (t,))
    assert tan == pytest.approx(np.sum(grad_w(W, B) * t.w) + grad_b(W, B) * t.b, rel=1e-14)
    out, pullback = dualad.vjp(lambda q: make(cls, q.w * 2.0, q.b * 3.0), p)
    assert type(out) is cls
    (ct,) = pullback(make(cls, np.ones(2), 1.0))
    assert type(ct) is cls and ct.b == 3.0
    np.testing.assert_array_equal(ct.w, [2.0, 2.0])
    (hv,) = dualad.hvp(loss, (p,), (t,))     # one result per primal
    assert type(hv) is cls
    # H t: w-part -sin(w) b t_w + cos(w) t_b ; b-part cos(w).t_w + 2 t_b
    np.testing.assert_allclose(hv.w, -np.sin(W) * B * t.w + np.cos(W) * t.b, rtol=1e-14)
    assert hv.b == pytest.approx(np.cos(W) @ t.w + 2 * t.b, rel=1e-14)


def test_vmap_in_axes_and_out_axes_over_a_node(cls):
    batch = make(cls, np.arange(6.0).reshape(3, 2), np.array([0.0, 1.0, 2.0]))
    out = dualad.vmap(loss)(batch)
    want = [loss(make(cls, np.arange(6.0).reshape(3, 2)[i], float(i))) for i in range(3)]
    np.testing.assert_allclose(out, want, rtol=1e-14)
    shared_w = make(cls, W, np.array([0.0, 1.0, 2.0]))
    axes = (make(cls, None, 0),)
    out = dualad.vmap(loss, in_axes=axes)(shared_w)
    np.testing.assert_allclose(out, [loss(make(cls, W, float(b))) for b in range(3)], rtol=1e-14)
    res = dualad.vmap(lambda x: make(cls, x * 2.0, x[0]), out_axes=make(cls, 1, 0))(
        np.arange(6.0).reshape(3, 2))
    assert type(res) is cls and res.w.shape == (2, 3)
    np.testing.assert_array_equal(res.b, [0.0, 2.0, 4.0])


def test_vmap_in_axes_node_that_does_not_match_names_both():
    with pytest.raises(ValueError, match=r"in_axes\[0\] is a Affine \(registered pytree node\) "
                                         r"of 2 child\(ren\) but the value there is a tuple"):
        dualad.vmap(lambda q: q[0], in_axes=(Affine(0, None),))((np.ones((2, 2)), 1.0))


def test_jit_keys_on_the_aux_data_and_returns_nodes(cls):
    calls = []

    def f(q):
        calls.append(1)
        scale = 2.0 if getattr(q, "act", "tanh") == "relu" else 1.0
        return make(cls, q.w * scale, loss(q) * scale)
    jf = dualad.jit(f)
    p = make(cls)
    out = jf(p)
    assert type(out) is cls and out.b == pytest.approx(loss(p))
    jf(make(cls, W + 1.0, 0.7))
    assert len(calls) == 1                        # same structure: replayed
    if cls is not Tup:                            # a new aux: traced again, not reused
        out = jf(make(cls, act="relu"))
        assert len(calls) == 2 and out.b == pytest.approx(2 * loss(p))
        np.testing.assert_array_equal(out.w, 2 * W)
    g = dualad.grad(lambda q: dualad.jit(loss)(q))(p)
    np.testing.assert_allclose(g.w, grad_w(W, B), rtol=1e-14)


def test_jit_refuses_an_unhashable_aux_by_name():
    class Holder:
        def __init__(self, x, meta):
            self.x, self.meta = x, meta
    dualad.tree.register(Holder, lambda h: ((h.x,), h.meta), lambda m, ch: Holder(ch[0], m))
    with pytest.raises(TypeError, match=r"dualad.jit: .* registered pytree node whose "
                                        r"auxiliary data is not hashable"):
        dualad.jit(lambda h: h.x * 2)(Holder(np.ones(2), ["list", "meta"]))


def test_scan_and_while_loop_carries(cls):
    def body(c, x):
        return make(cls, c.w * x, c.b + x), c.b
    c, ys = dualad.scan(body, make(cls), np.array([1.0, 2.0]))
    assert type(c) is cls
    np.testing.assert_allclose(c.w, W * 2.0)
    np.testing.assert_allclose(ys, [B, B + 1.0])
    g = dualad.grad(lambda q: np.sum(dualad.scan(body, q, np.array([1.0, 2.0]))[0].w))(make(cls))
    np.testing.assert_allclose(g.w, [2.0, 2.0])
    out = dualad.while_loop(lambda c: c.b < 2.0, lambda c: make(cls, c.w * 2.0, c.b + 1.0),
                            make(cls))
    assert type(out) is cls and out.b == pytest.approx(B + 2.0)
    np.testing.assert_allclose(out.w, W * 4.0)


def test_scan_refuses_a_carry_whose_aux_changes():
    def body(c, x):
        return Affine(c.w, c.b, act="relu"), x
    with pytest.raises(TypeError, match="carry"):
        dualad.scan(body, Affine(W, B), np.array([1.0, 2.0]))


def test_checkpoint_and_custom_rules(cls):
    p = make(cls)
    g = dualad.grad(dualad.checkpoint(loss))(p)
    np.testing.assert_allclose(g.w, grad_w(W, B), rtol=1e-14)

    @dualad.custom_vjp
    def f(q):
        return loss(q)
    f.defvjp(lambda q: (loss(q), q),
             lambda q, ct: (make(cls, ct * grad_w(q.w, q.b), ct * grad_b(q.w, q.b)),))
    g = dualad.grad(f)(p)
    assert type(g) is cls
    np.testing.assert_allclose(g.b, grad_b(W, B), rtol=1e-14)

    @dualad.custom_jvp
    def h(q):
        return loss(q)

    @h.defjvp
    def h_jvp(primals, tangents):
        (q,), (t,) = primals, tangents
        return loss(q), np.sum(grad_w(q.w, q.b) * t.w) + grad_b(q.w, q.b) * t.b
    g = dualad.grad(h)(p)
    np.testing.assert_allclose(g.w, grad_w(W, B), rtol=1e-14)


def test_planner_results_nest_as_jax(cls):
    p = make(cls)
    for jac in (dualad.jacfwd, dualad.jacrev, dualad.jacobian):
        J = jac(loss)(p)
        assert type(J) is cls
        np.testing.assert_allclose(J.w, grad_w(W, B), rtol=1e-14)
    H = dualad.hessian(loss)(p)      # H.w.w, H.w.b, H.b.w, H.b.b as jax.hessian nests it
    assert type(H) is cls and type(H.w) is cls and type(H.b) is cls
    np.testing.assert_allclose(H.w.w, np.diag(-np.sin(W) * B), rtol=1e-14)
    np.testing.assert_allclose(H.w.b, np.cos(W), rtol=1e-14)
    assert H.b.b == pytest.approx(2.0)
    J = dualad.jacfwd(lambda x: make(cls, x * 2.0, np.sum(x)))(np.ones(2))
    assert type(J) is cls
    np.testing.assert_array_equal(J.w, 2 * np.eye(2))


def test_check_grads_passes_and_names_a_field_path_on_failure(cls):
    check_grads(loss, (make(cls),), order=2)

    @dualad.custom_vjp
    def wrong(q):
        return loss(q)
    wrong.defvjp(lambda q: (loss(q), q),
                 lambda q, ct: (make(cls, ct * grad_w(q.w, q.b) * 1.01, ct * grad_b(q.w, q.b)),))
    # fields by name where the class names them (dataclass, named tuple), else by position
    path = r"args\[0\]\[0\]" if cls is Affine else r"args\[0\]\.w"
    with pytest.raises(GradCheckError, match=path):
        check_grads(wrong, (make(cls),), order=1, modes=("rev",))


def test_stop_gradient_over_a_node(cls):
    g = dualad.grad(lambda q: loss(dualad.stop_gradient(q)) + np.sum(q.w))(make(cls))
    np.testing.assert_array_equal(g.w, [1.0, 1.0])
    assert g.b == 0.0


def test_closed_over_node_under_grad_and_jit(cls):
    p = make(cls)

    def outer(s):
        q = make(cls, p.w * s, p.b)
        return dualad.jit(lambda x: loss(q) * x)(1.0)
    # d/ds sum(sin(s w) b) = sum(w cos(s w) b) at s = 1
    assert dualad.grad(outer)(1.0) == pytest.approx(np.sum(W * np.cos(W) * B), rel=1e-14)


def test_help_lists_the_jax_names():
    import pydoc
    text = pydoc.render_doc(dualad, renderer=pydoc.plaintext)
    functions = text.split("FUNCTIONS", 1)[1]
    for name in ("jacfwd", "jacrev", "jacobian", "hessian"):
        assert f"\n    {name}(" in functions, name


def test_grad_names_the_field_of_a_refused_leaf(cls):
    w, b = (r"\[0\]", r"\[1\]") if cls is Affine else (r"\.w", r"\.b")   # by position
    with pytest.raises(TypeError, match=rf"grad: argument 0{w} has dtype int64"):
        dualad.grad(loss)(make(cls, np.arange(2), 1.0))
    with pytest.raises(TypeError, match=rf"grad: argument 1{b} is NoneType None"):
        dualad.grad(lambda x, q: x * np.sum(q.w), argnums=(0, 1))(1.0, make(cls, W, None))


def test_grad_of_a_node_output_says_it_is_not_a_scalar(cls):
    with pytest.raises(TypeError, match=rf"must return a scalar .* got a container "
                                        rf"\(a {cls.__name__}"):
        dualad.grad(lambda q: q)(make(cls))


def test_float32_leaves_stay_float32(cls):
    p = make(cls, W.astype(np.float32), np.float32(B))
    g = dualad.grad(loss)(p)
    assert g.w.dtype == np.float32
    np.testing.assert_allclose(g.w, grad_w(W, B), rtol=1e-6)


def test_differential_operators_refuse_a_node_output(cls):
    with pytest.raises(TypeError, match=rf"laplacian: <lambda> returned a {cls.__name__}; "
                                        rf"the operator needs one array"):
        dualad.laplacian(lambda x: make(cls, x ** 2, x[0]))(np.ones(2))


def test_jit_names_an_untraceable_leaf_by_its_path(cls):
    with pytest.raises(TypeError, match=r"<lambda>: argument 1\.b is 'set', which dualad.jit "
                                        r"can neither trace" if cls is not Affine else
                       r"<lambda>: argument 1\[1\] is 'set'"):
        dualad.jit(lambda s, q: q.w * s)(1.0, make(cls, W, {1, 2}))
    with pytest.raises(TypeError, match=r"argument 'q'\['x'\]\[1\] is 'set'"):
        dualad.jit(lambda s, q=None: s)(1.0, q={"x": [W, {3}]})


def test_jvp_and_vjp_note_where_a_refused_leaf_sits(cls):
    p = make(cls)
    where = r"\[1\]" if cls is Affine else r"\.b"
    with pytest.raises(TypeError, match="is complex") as info:
        dualad.jvp(loss, (p,), (make(cls, np.ones(2), 1j),))
    assert any(re.fullmatch(rf"\(leaf 1 is primals\[0\]{where}\)", n) for n in info.value.__notes__)
    _, pullback = dualad.vjp(lambda q: q, p)
    with pytest.raises(ValueError, match=r"cotangent 0 has shape \(3,\)") as info:
        pullback(make(cls, np.ones(3), 1.0))
    where = r"\[0\]" if cls is Affine else r"\.w"
    assert any(re.fullmatch(rf"\(cotangent 0 is the cotangent{where}\)", n)
               for n in info.value.__notes__)
