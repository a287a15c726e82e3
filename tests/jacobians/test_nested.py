"""The planner on traced values (jacobians.nested): every planner function inside dualad's
transformations and inside each other, to order 3, against finite differences
(dualad.verification), closed forms and the SymPy oracle; argnums, containers, closed-over
traced values, curried forms, and the caches (a traced call never reuses a plain one's
outputs)."""
import numpy as np
import pytest

import dualad
import dualad.scipy.sparse as dsp
from dualad import jacobians as J
from dualad.verification import check_grads, numerical_jacobian

X = np.array([0.3, -0.7, 1.1])
V = np.array([0.5, 1.5, -1.0])
A = np.array([0.4, -1.2, 0.7])
M = np.array([[1.0, -0.5, 0.25], [0.3, 0.8, -1.1]])


def vec(x):
    """R^3 -> R^3, a dense Jacobian with a structural zero pattern of its own."""
    return np.sin(x * x[::-1]) + x ** 3 / 3 + np.tanh(M.T @ (M @ x))


def scal(x):
    """f(x) = Σ sin(x_i) + (a·x)³:  H = diag(-sin x) + 6 (a·x) a aᵀ,
    T_ijk = -cos(x_i) δ_ijk + 6 a_i a_j a_k."""
    return np.sum(np.sin(x)) + np.dot(A, x) ** 3


def scal_hessian(x):
    return np.diag(-np.sin(x)) + 6 * np.dot(A, x) * np.outer(A, A)


def scal_third(x):
    t = 6 * np.einsum("i,j,k->ijk", A, A, A)
    t[np.arange(3), np.arange(3), np.arange(3)] -= np.cos(x)
    return t


def chain(x):
    """A banded scalar: a sparse (tridiagonal) Hessian."""
    return np.sum(np.sin(x[1:] * x[:-1])) + np.sum(x ** 4) / 4


# name -> x ↦ a dense array, each planner function (and mode) at least once
PLANNERS = {
    "jacobian": lambda x: J.jacobian(vec, x),
    "jacfwd": lambda x: J.jacfwd(vec, x),
    "jacrev": lambda x: J.jacrev(vec, x),
    "jacobian-chunked": lambda x: J.jacobian(vec, x, mode="reverse", chunk_size=2),
    "hessian": lambda x: J.hessian(scal, x),
    "hessian-rev-rev": lambda x: J.hessian(chain, x, mode="reverse-over-reverse"),
    "hessian-rev-fwd": lambda x: J.hessian(chain, x, mode="reverse-over-forward"),
    "hessian-fwd-fwd": lambda x: J.hessian(chain, x, mode="forward-over-forward",
                                           chunk_size=2),
    "hvp": lambda x: J.hvp(chain, x, V),
    "sparse_jacobian-fwd": lambda x: J.sparse_jacobian(vec, x, mode="forward").toarray(),
    "sparse_jacobian-rev": lambda x: J.sparse_jacobian(vec, x, mode="reverse").toarray(),
    "sparse_hessian": lambda x: J.sparse_hessian(chain, x).toarray(),
}


def _numeric_grad(f, x):
    return numerical_jacobian(lambda z: np.asarray(f(z), float), x)


# --- inside jvp and vjp, to order 3 (check_grads: order 2 of a first derivative) -----------
@pytest.mark.parametrize("name", sorted(PLANNERS))
def test_inside_jvp_and_vjp_to_third_order(name):
    assert check_grads(PLANNERS[name], X, order=2, modes=("fwd", "rev")) > 0


@pytest.mark.parametrize("name", sorted(PLANNERS))
def test_inside_grad_and_hvp(name):
    fn = PLANNERS[name]
    loss = lambda x: np.sum(np.cos(fn(x)) * np.arange(1, 1 + np.size(fn(X))).reshape(
        np.shape(fn(X))))
    g = dualad.grad(loss)(X)
    np.testing.assert_allclose(g, _numeric_grad(loss, X), rtol=1e-6, atol=1e-8)
    hv = dualad.hvp(loss, X, V)
    fd = numerical_jacobian(lambda z: dualad.grad(loss)(z), X) @ V
    np.testing.assert_allclose(hv, fd, rtol=1e-5, atol=1e-7)


def test_inside_derivative():
    """dualad.derivative (nested forward sweeps) of a Hessian entry along a line."""
    g = lambda t: J.hessian(scal, X + t * V)[0, 1]
    d1, d2 = dualad.derivative(g, 1)(0.2), dualad.derivative(g, 2)(0.2)
    # closed form: H_01(x) = 6 (a·x) a0 a1, linear in t: d1 = 6 (a·v) a0 a1, d2 = 0
    assert np.isclose(d1, 6 * np.dot(A, V) * A[0] * A[1], rtol=1e-12)
    assert np.isclose(d2, 0.0, atol=1e-12)


# --- inside each other -----------------------------------------------------------------------
OUTER = {"jacfwd": J.jacfwd, "jacrev": J.jacrev, "jacobian": J.jacobian}


@pytest.mark.parametrize("outer", sorted(OUTER))
@pytest.mark.parametrize("inner", sorted(OUTER))
def test_jacobian_of_jacobian_is_the_hessian(outer, inner):
    h = OUTER[outer](OUTER[inner](scal))(X)
    np.testing.assert_allclose(h, scal_hessian(X), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(h, J.hessian(scal)(X), rtol=1e-12, atol=1e-12)


def test_jacfwd_of_jacrev_equals_hessian():
    np.testing.assert_allclose(J.jacfwd(J.jacrev(chain))(X), J.hessian(chain)(X),
                               rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("make", [
    lambda: J.jacfwd(J.hessian(scal)),
    lambda: J.jacrev(J.hessian(scal)),
    lambda: J.jacobian(J.jacobian(J.jacobian(scal))),
    lambda: J.jacfwd(J.jacrev(J.jacrev(scal))),
    lambda: J.jacrev(lambda x: J.sparse_hessian(scal, x).toarray()),
    lambda: J.hessian(lambda x: J.jacobian(scal, x)[0], argnums=0),
], ids=["jacfwd(hessian)", "jacrev(hessian)", "jacobian^3", "jacfwd(jacrev(jacrev))",
        "jacrev(sparse_hessian)", "hessian(jacobian[0])"])
def test_third_derivative_tensor(make):
    t = make()(X)
    want = scal_third(X)
    if t.shape == (3, 3):                       # hessian of ∂f/∂x_0: T[0]
        want = want[0]
    np.testing.assert_allclose(t, want, rtol=1e-12, atol=1e-12)


def test_third_derivative_against_sympy():
    sympy = pytest.importorskip("sympy")
    from dualad.verification.symbolic import symbolic_outputs
    f = lambda x: np.sin(x[0] * x[1]) * np.exp(x[2]) + x[0] ** 2 * x[2] ** 3
    syms, expr = symbolic_outputs(f, [(3,)])
    xs = list(np.ravel(syms[0]))
    e = sympy.sympify(np.ravel(expr)[0])
    at = dict(zip(xs, X))
    want = np.array([[[float(sympy.diff(e, a, b, c).subs(at)) for c in xs] for b in xs]
                     for a in xs])
    np.testing.assert_allclose(J.jacfwd(J.hessian(f))(X), want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(J.hessian(lambda x: J.jacrev(f, x) @ V)(X),
                               np.einsum("ijk,i->jk", want, V), rtol=1e-12, atol=1e-12)


def test_sparse_inside_sparse():
    """sparse_jacobian of the gradient (traced inside) and sparse_hessian inside jacfwd."""
    hess = J.sparse_jacobian(lambda x: J.jacrev(chain, x), X).toarray()
    np.testing.assert_allclose(hess, J.hessian(chain, X), rtol=1e-13, atol=1e-13)
    third = J.jacfwd(lambda x: J.sparse_hessian(chain, x).toarray())(X)
    np.testing.assert_allclose(third, numerical_jacobian(lambda z: J.hessian(chain, z), X),
                               rtol=1e-6, atol=1e-8)


# --- argnums, containers ----------------------------------------------------------------------
def two(x, y):
    return np.sin(x)[:, None] * np.exp(y)[None, :] + np.outer(x, y) ** 2


def test_argnums_tuple_inside_grad():
    loss = lambda x, y: sum(np.sum(j ** 2) for j in J.jacobian(two, x, y, argnums=(0, 1)))
    gx, gy = dualad.grad(loss, argnums=(0, 1))(X, V[:2])
    np.testing.assert_allclose(gx, _numeric_grad(lambda z: loss(z, V[:2]), X), rtol=1e-6)
    np.testing.assert_allclose(gy, _numeric_grad(lambda z: loss(X, z), V[:2]), rtol=1e-6)


@pytest.mark.parametrize("api", ["hessian", "sparse_hessian"])
def test_hessian_of_two_arguments_inside_jvp_and_vjp(api):
    """argnums=(0, 1): blocks [[H_xx, H_xy], [H_yx, H_yy]] (dense) or one flat (5 x 5) CSR."""
    f = lambda x, y: np.sum(np.sin(x)) * np.sum(y ** 2) + np.dot(x[:2], y) ** 3

    def fn(x):
        h = getattr(J, api)(f, x, V[:2], argnums=(0, 1))
        if api == "sparse_hessian":
            return h.toarray()
        return np.concatenate([np.ravel(h[i][j]) for i in (0, 1) for j in (0, 1)])
    assert check_grads(fn, X, order=1, modes=("fwd", "rev")) > 0


def test_curried_argnums_inside_jvp():
    jy = J.jacfwd(two, argnums=1)
    out, tan = dualad.jvp(lambda x: jy(x, V[:2]), (X,), (V,))
    np.testing.assert_allclose(out, J.jacfwd(two, X, V[:2], argnums=1), rtol=1e-14)
    fd = numerical_jacobian(lambda z: J.jacfwd(two, z, V[:2], argnums=1), X)
    np.testing.assert_allclose(tan, fd @ V, rtol=1e-6, atol=1e-8)


def test_container_inputs_inside_vjp():
    """A dict input, Hessian blocks nested like the input, pulled back through vjp."""
    def f(p):
        return np.sum(np.sin(p["a"]) * p["b"][0]) + p["b"][1] ** 2 * np.sum(p["a"] ** 2)

    def blocks(a):
        h = J.hessian(f, {"a": a, "b": np.array([0.7, -0.3])})
        return h["a"]["a"], h["a"]["b"]

    out, pullback = dualad.vjp(blocks, X)
    (ga,) = pullback((np.ones((3, 3)), np.ones((3, 2))))
    flat = lambda a: np.concatenate([np.ravel(b) for b in blocks(a)])
    np.testing.assert_allclose(ga, np.ones(15) @ numerical_jacobian(flat, X), rtol=1e-6)


# --- closed-over traced values ------------------------------------------------------------------
@pytest.mark.parametrize("name", ["jacobian", "jacfwd", "jacrev", "hessian", "hvp",
                                  "sparse_jacobian", "sparse_hessian"])
def test_function_closing_over_a_traced_value(name):
    """x plain, f closes over w traced by grad: the planner sees a plain argument, the plain
    path meets a traced output and hands the call to the traced path."""
    call = {"jacobian": lambda g, s: J.jacobian(g, X), "jacfwd": lambda g, s: J.jacfwd(g, X),
            "jacrev": lambda g, s: J.jacrev(g, X), "hessian": lambda g, s: J.hessian(s, X),
            "hvp": lambda g, s: J.hvp(s, X, V),
            "sparse_jacobian": lambda g, s: J.sparse_jacobian(g, X).toarray(),
            "sparse_hessian": lambda g, s: J.sparse_hessian(s, X).toarray()}[name]

    def loss(w):
        g = lambda x: np.sin(w * x) * x[0]
        s = lambda x: np.sum(np.sin(w * x) * x[0])
        return np.sum(call(g, s) ** 2)
    np.testing.assert_allclose(dualad.grad(loss)(A), _numeric_grad(loss, A), rtol=1e-6,
                               atol=1e-9)


# --- the caches ---------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["jacobian", "hessian", "sparse_jacobian", "sparse_hessian"])
def test_plain_traced_plain_share_no_outputs(name):
    """One function object: plain (fills its caches), traced (must not reuse them), plain
    again (must not reuse the traced call's): equal values, right derivatives."""
    fn = {"jacobian": lambda x: J.jacobian(vec, x),
          "hessian": lambda x: J.hessian(scal, x),
          "sparse_jacobian": lambda x: J.sparse_jacobian(vec, x).toarray(),
          "sparse_hessian": lambda x: J.sparse_hessian(chain, x).toarray()}[name]
    first = fn(X)
    out, tan = dualad.jvp(fn, (X + 0.25,), (V,))
    np.testing.assert_allclose(out, fn(X + 0.25), rtol=1e-14)
    np.testing.assert_allclose(tan, numerical_jacobian(fn, X + 0.25) @ V, rtol=1e-6,
                               atol=1e-8)
    np.testing.assert_array_equal(fn(X), first)


def test_closed_over_value_plain_then_traced_then_plain():
    """The SAME function object reads w from a dict: plain w, then w traced by grad, then
    plain again; the census cached for the plain w must not be taken for the traced one,
    nor a traced output cached for the plain one."""
    state = {"w": A}
    g = lambda x: np.sin(state["w"] * x) * x[0]

    def loss(w):
        state["w"] = w
        try:
            return np.sum(J.jacobian(g, X) ** 2)
        finally:
            state["w"] = A
    plain = J.jacobian(g, X)
    np.testing.assert_allclose(dualad.grad(loss)(A + 0.1), _numeric_grad(loss, A + 0.1),
                               rtol=1e-6, atol=1e-9)
    np.testing.assert_array_equal(J.jacobian(g, X), plain)
    assert not isinstance(J.jacobian(g, X), dualad.extend.Box)


def test_fresh_lambda_each_call():
    for k in range(3):
        w = A + 0.1 * k
        loss = lambda w: np.trace(J.hessian(lambda x: np.sum(np.sin(w * x) ** 2), X))
        np.testing.assert_allclose(dualad.grad(loss)(w), _numeric_grad(loss, w), rtol=1e-6,
                                   atol=1e-9)


# --- sparse results -----------------------------------------------------------------------------
def test_traced_sparse_result_keeps_the_pattern():
    seen = {}

    def loss(x):
        h = J.sparse_hessian(chain, x)
        seen["h"] = h
        return np.sum(h.data ** 2) + np.sum(h @ V)
    g = dualad.grad(loss)(X)
    h = seen["h"]
    assert isinstance(h, dsp.TracedSparse) and h.shape == (3, 3)
    plain = J.sparse_hessian(chain, X)
    assert h.nnz == plain.nnz == 7                          # tridiagonal
    np.testing.assert_array_equal(h.primal().toarray(), plain.toarray())
    np.testing.assert_allclose(g, _numeric_grad(loss, X), rtol=1e-6, atol=1e-9)


def test_sparse_with_given_sparsity_inside_jvp():
    pattern = np.abs(J.jacobian(vec, X)) > 0
    fn = lambda x: J.sparse_jacobian(vec, x, sparsity=pattern).toarray()
    out, tan = dualad.jvp(fn, (X,), (V,))
    np.testing.assert_allclose(out, J.jacobian(vec, X), rtol=1e-14)
    np.testing.assert_allclose(tan, numerical_jacobian(fn, X) @ V, rtol=1e-6, atol=1e-8)


# --- curried forms -------------------------------------------------------------------------------
def test_curried_forms():
    assert J.jacobian(vec).__name__ == "jacobian(vec)"
    assert J.hessian(scal).__name__ == "hessian(scal)"
    assert J.hvp(scal).__name__ == "hvp(scal)"
    np.testing.assert_allclose(J.jacobian(vec)(X), J.jacobian(vec, X), rtol=1e-15)
    np.testing.assert_allclose(J.hvp(scal)(X, V), scal_hessian(X) @ V, rtol=1e-12)
    np.testing.assert_allclose(J.jacrev(two, argnums=1)(X, V[:2]),
                               J.jacfwd(two, X, V[:2], argnums=1), rtol=1e-14)
    tr = lambda x: np.trace(J.hessian(scal)(x))                # grad of a scalar of hessian
    np.testing.assert_allclose(dualad.grad(tr)(X), np.einsum("iik->k", scal_third(X)),
                               rtol=1e-12, atol=1e-12)


# --- errors on the traced path ---------------------------------------------------------------------
def test_traced_errors_name_the_function():
    with pytest.raises(TypeError, match=r"hessian: vec must return a scalar.*\(3,\)"):
        dualad.grad(lambda x: np.sum(J.hessian(vec, x)))(X)
    with pytest.raises(ValueError, match=r"jacfwd\(vec\): chunk_size must be a positive"):
        dualad.grad(lambda x: np.sum(J.jacfwd(vec, x, chunk_size=0)))(X)
    with pytest.raises(ValueError, match=r"hvp\(scal\): v has shape \(2,\), but x has shape"):
        dualad.grad(lambda x: np.sum(J.hvp(scal, x, np.ones(2))))(X)
    with pytest.raises(ValueError, match=r"jacobian: mode='sideways'"):
        dualad.grad(lambda x: np.sum(J.jacobian(vec, x, mode="sideways")))(X)


# --- inside vmap, and vmap inside -----------------------------------------------------------------
XS = np.array([[0.3, 2.0, -1.0], [3.0, -0.1, 0.2], [0.1, 0.2, 5.0], [-0.4, 0.6, 0.8]])


def kinked(x):
    """np.where: a value-dependent selection, per example under vmap."""
    return np.where(x > 0, x ** 2, np.sin(x)) * x[::-1]


VMAPPED = {
    "jacobian": lambda x: J.jacobian(kinked, x),
    "jacfwd(jacrev)": lambda x: J.jacfwd(J.jacrev(lambda z: np.sum(kinked(z))))(x),
    "hessian": lambda x: J.hessian(lambda z: np.sum(kinked(z) ** 2), x),
    "hvp": lambda x: J.hvp(chain, x, V),
    "sparse_jacobian": lambda x: J.sparse_jacobian(kinked, x).toarray(),
    "sparse_hessian": lambda x: J.sparse_hessian(lambda z: np.sum(kinked(z)), x).toarray(),
    # the batched value only closed over: x plain
    "closure jacobian": lambda w: J.jacobian(lambda z: kinked(z) * w, X),
    "closure sparse_hessian": lambda w: J.sparse_hessian(lambda z: np.sum(kinked(z) * w), X
                                                         ).toarray(),
    "grad of hessian": lambda w: dualad.grad(
        lambda v: np.sum(J.hessian(lambda z: np.sum(kinked(z) * v ** 2), X) ** 2))(w),
}


@pytest.mark.parametrize("name", sorted(VMAPPED))
def test_inside_vmap_equals_the_loop(name):
    fn = VMAPPED[name]
    loop = np.stack([fn(x) for x in XS])
    np.testing.assert_allclose(dualad.vmap(fn)(XS), loop, rtol=1e-13, atol=1e-13)


def test_vmap_inside_jacobian():
    g = lambda x: dualad.vmap(lambda r: np.sum(np.sin(r * x)))(XS)
    want = np.stack([r * np.cos(r * X) for r in XS])     # ∂/∂x Σ_j sin(r_j x_j) = r cos(r x)
    np.testing.assert_allclose(J.jacobian(g, X), want, rtol=1e-13)
    np.testing.assert_allclose(J.jacrev(g)(X), want, rtol=1e-13)


def test_plain_only_functions_say_so():
    """plan and jacobian_sparsity take plain values: the error names them and the
    functions that follow transformations."""
    with pytest.raises(NotImplementedError, match=r"jacobians\.plan: argument 0 of scal is "
                       r"a traced value \(shape \(3,\)\).*plain values only.*jacfwd"):
        dualad.grad(lambda x: J.plan(scal, x)(x))(X)
    with pytest.raises(NotImplementedError, match=r"jacobians\.jacobian_sparsity: .*call "
                       r"it outside the transformation"):
        dualad.grad(lambda x: np.sum(J.jacobian_sparsity(vec, x).toarray()))(X)


def test_traced_hvp_of_a_vector_function_names_hvp():
    with pytest.raises(TypeError, match=r"hvp: vec must return a scalar \(shape \(\)\), got "
                                        r"shape \(3,\)"):
        dualad.grad(lambda x: np.sum(J.hvp(vec, x, V)))(X)


@pytest.mark.parametrize("api", ["jacobian", "jacfwd", "jacrev", "sparse_jacobian", "hessian",
                                 "sparse_hessian"])
def test_np_sum_of_a_curried_result_inside_grad(api):
    """np.sum of the result, as a loss: for the sparse results np.sum calls M.sum()."""
    fn = np.sin if "jac" in api else scal
    loss = lambda v: np.sum(getattr(J, api)(fn)(v))
    np.testing.assert_allclose(dualad.grad(loss)(X), _numeric_grad(loss, X), rtol=1e-6,
                               atol=1e-9)


def test_traced_sparse_sums_match_scipy():
    """TracedSparse.sum: the total, and (a *_array) column and row sums, against SciPy."""
    seen = {}

    def sums(x):
        h = J.sparse_jacobian(vec, x)
        seen["plain"] = h.primal()
        arr = dsp.csr_array((h.data, seen["plain"].indices, seen["plain"].indptr),
                            shape=h.shape)
        return h.sum(), arr.sum(axis=0), arr.sum(axis=1)

    total, cols, rows = dualad.jvp(sums, (X,), (V,))[0]
    plain = seen["plain"]
    assert np.isclose(total, plain.sum())
    np.testing.assert_allclose(cols, np.asarray(plain.sum(axis=0)).ravel(), rtol=1e-14)
    np.testing.assert_allclose(rows, np.asarray(plain.sum(axis=1)).ravel(), rtol=1e-14)
    with pytest.raises(TypeError, match=r"csr_matrix.sum\(axis=0\): SciPy returns an "
                                        r"np.matrix.*M.toarray\(\).sum\(axis=0\)"):
        dualad.grad(lambda x: np.sum(J.sparse_jacobian(vec, x).sum(axis=0)))(X)
