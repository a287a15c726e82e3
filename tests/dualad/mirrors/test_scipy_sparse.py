"""A constant scipy.sparse matrix times a traced array, as written (``A @ x``, ``x @ A``,
``A.dot(x)``, ``np.dot``), and sparse matrices with traced stored values.

Oracles: the dense matrix (the Jacobian of ``A @ x`` is A, of ``x @ A`` is Aᵀ) and
finite differences (``check_grads``, both modes, order 2); never dualad itself.
"""
import re

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import dualad
import dualad.scipy.sparse as dsp
from dualad import jacobians
from dualad.verification import check_grads, check_rule

FORMATS = ["csr", "csc", "coo", "bsr", "dia", "lil"]
RNG = np.random.default_rng(0)
A0 = sp.random(5, 4, density=0.5, format="csr", random_state=3).toarray()
A0[0, 0] = 1.5   # a nonzero in every format


def _mat(fmt, kind, a=A0):
    cls = getattr(sp, f"{fmt}_{kind}")
    return cls(a)


@pytest.mark.parametrize("kind", ["matrix", "array"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_and_side_has_the_dense_jacobian(fmt, kind):
    A = _mat(fmt, kind)
    x4, x5 = RNG.normal(size=4), RNG.normal(size=5)
    cases = [(lambda x: A @ x, x4, A0), (lambda x: np.dot(A, x), x4, A0),
             (lambda x: x @ A, x5, A0.T),
             (lambda x: A.T @ x, x5, A0.T), (lambda x: x.dot(A), x5, A0.T)]
    if fmt == "coo":   # coo's n-D dot refuses what it cannot read as an array: say A @ x
        with pytest.raises(TypeError, match="A @ x"):
            dualad.grad(lambda x: A.dot(x).sum())(x4)
    else:
        cases.append((lambda x: A.dot(x), x4, A0))
    for f, x, J in cases:
        for mode in ("forward", "reverse"):      # forward: all directions in one batch
            np.testing.assert_allclose(jacobians.jacobian(f, mode=mode)(x), J, atol=1e-14)


@pytest.mark.parametrize("kind", ["matrix", "array"])
def test_matrices_and_stacks_both_sides_to_second_order(kind):
    A = _mat("csr", kind)
    X = RNG.normal(size=(4, 3))
    check_grads(lambda X: A @ X, (X,))
    check_grads(lambda X: (A @ X) ** 2, (X,))
    check_grads(lambda Y: Y @ A, (RNG.normal(size=(2, 5)),))
    # a stack (which SciPy refuses on plain arrays): each matrix of it, as np.matmul does
    X3, C3 = RNG.normal(size=(2, 4, 3)), RNG.normal(size=(2, 5, 3))
    y, pullback = dualad.vjp(lambda X: A @ X, X3)
    np.testing.assert_allclose(y, A0 @ X3, rtol=1e-12)
    np.testing.assert_allclose(pullback(C3)[0], A0.T @ C3, rtol=1e-12)
    X2 = RNG.normal(size=(4, 3))
    np.testing.assert_allclose(
        dualad.grad(lambda X: ((A @ X) ** 2).sum())(X2), 2 * A0.T @ (A0 @ X2), rtol=1e-12)


def test_nonlinear_pde_residual_gradient_closed_form():
    """r(u) = A u + u³ − f, loss ½|r|²: ∇ = (A + diag(3u²))ᵀ r."""
    n = 7
    A = sp.diags([np.ones(n - 1), -2 * np.ones(n), np.ones(n - 1)], [-1, 0, 1], format="csr")
    f, u = np.linspace(0, 1, n), RNG.normal(size=n)
    r = A @ u + u ** 3 - f
    g = dualad.grad(lambda u: 0.5 * ((A @ u + u ** 3 - f) ** 2).sum())(u)
    np.testing.assert_allclose(g, (A.toarray() + np.diag(3 * u ** 2)).T @ r, rtol=1e-12)
    check_grads(lambda u: A @ u + u ** 3 - f, (u,))


def test_the_primitive_passes_the_rule_checker():
    report = check_rule(dualad.REGISTRY["sparse_matmul"])
    assert report.ok, str(report)


def test_complex_float32_integer_and_empty_matrices():
    Ac = sp.csr_array(A0 * (1 + 2j))
    z = RNG.normal(size=4) + 1j * RNG.normal(size=4)
    np.testing.assert_allclose(jacobians.jacobian(lambda z: Ac @ z, mode="forward")(z),
                               A0 * (1 + 2j), atol=1e-14)
    x32 = RNG.normal(size=4).astype(np.float32)
    A32 = sp.csr_array(A0.astype(np.float32))
    y = dualad.jvp(lambda x: A32 @ x, (x32,), (np.ones(4, np.float32),))[1]
    assert y.dtype == np.float32
    Ai = sp.csr_array(np.array([[1, 0], [2, 3]]))
    np.testing.assert_array_equal(dualad.grad(lambda x: (Ai @ x).sum())(np.ones(2)), [3.0, 3.0])
    E = sp.csr_array((3, 4))      # no stored values: a zero derivative, the right shape
    np.testing.assert_array_equal(dualad.grad(lambda x: (E @ x).sum())(np.ones(4)), np.zeros(4))


def test_a_matrix_changed_after_the_forward_pass_keeps_the_derivative():
    A = sp.csr_array(A0.copy())
    x = RNG.normal(size=4)
    _, pullback = dualad.vjp(lambda x: A @ x, x)
    A.data[:] = 0.0                          # mutated before the backward sweep
    np.testing.assert_allclose(pullback(np.ones(5))[0], A0.sum(axis=0), rtol=1e-12)


def test_misuse_gives_errors_naming_the_shapes():
    A = sp.csr_array(A0)
    with pytest.raises(ValueError, match=r"\(5, 4\).*\(5,\).*not aligned"):
        dualad.grad(lambda x: (A @ x).sum())(np.ones(5))
    with pytest.raises(ValueError, match="not aligned"):
        dualad.grad(lambda x: (x @ A).sum())(np.ones(4))
    # spmatrix's * is the matrix product: computed as such (see the operator tests below)
    np.testing.assert_allclose(
        dualad.grad(lambda x: (sp.csr_matrix(A0) * x).sum())(np.ones(4)), A0.sum(axis=0))
    with pytest.raises(TypeError, match="A @ x"):   # sparray's * is elementwise
        dualad.grad(lambda x: (A * x).sum())(np.ones(4))
    with pytest.raises(TypeError, match=r"dualad.scipy.sparse.multiply\(A, x\)"):
        dualad.grad(lambda x: A.multiply(x).sum())(np.ones(4))
    with pytest.raises(TypeError, match=r"dualad.scipy.sparse.multiply\(A, x\)"):
        dualad.grad(lambda x: A.multiply(x).sum())(np.ones(4))


# --- sparse matrices with traced stored values ------------------------------------------------
S = sp.random(6, 5, density=0.4, format="csr", random_state=5)
S.sum_duplicates()
S.sort_indices()


def _traced(fmt, kind):
    def build(d):
        if fmt == "coo":
            c = S.tocoo()
            return getattr(dsp, f"coo_{kind}")((d, (c.row, c.col)), shape=S.shape)
        if fmt == "csc":     # the csc form of Sᵀ is S's csr arrays
            return getattr(dsp, f"csc_{kind}")((d, S.indices, S.indptr), shape=S.shape[::-1]).T
        return getattr(dsp, f"csr_{kind}")((d, S.indices, S.indptr), shape=S.shape)
    return build


@pytest.mark.parametrize("kind", ["matrix", "array"])
@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_traced_values_times_constant_and_traced_operands(fmt, kind):
    build = _traced(fmt, kind)
    d = S.tocoo().data.copy() if fmt == "coo" else S.data.copy()
    v, V, w = RNG.normal(size=5), RNG.normal(size=(5, 2)), RNG.normal(size=6)
    plain = build(d)                         # plain data: SciPy's own matrix
    assert sp.issparse(plain)
    np.testing.assert_allclose(plain @ v, S @ v)
    check_grads(lambda d, v: build(d) @ v, (d, v))
    dot = (lambda M, V: M @ V) if fmt == "coo" else (lambda M, V: M.dot(V))  # coo: see above
    check_grads(lambda d, V: dot(build(d), V), (d, V))
    check_grads(lambda d, w: w @ build(d) + build(d).T @ w, (d, w))
    check_grads(lambda d: build(d).toarray() * 2.0, (d,))
    # the cotangent of the stored values: d̄_k = ȳ[row_k] v[col_k], at stored positions only
    c = S.tocoo() if fmt == "coo" else sp.coo_array(S)
    g = dualad.grad(lambda d: (build(d) @ v) @ w)(d)
    np.testing.assert_allclose(g, w[c.row] * v[c.col], rtol=1e-12)


def test_traced_matrix_misuse():
    d = S.data.copy()
    with pytest.raises(ValueError, match=r"data must be a 1-D array of the \d+ stored"):
        dualad.grad(lambda d: (dsp.csr_array((d[:-1], S.indices, S.indptr),
                                             shape=S.shape) @ np.ones(5)).sum())(d)
    with pytest.raises(TypeError, match="stored values"):
        dualad.grad(lambda x: dsp.csr_array(x).sum())(np.ones((2, 2)))
    with pytest.raises(ValueError, match="not aligned"):
        dualad.grad(lambda d: (dsp.csr_array((d, S.indices, S.indptr),
                                             shape=S.shape) @ np.ones(6)).sum())(d)
    with pytest.raises(TypeError, match="toarray"):
        dualad.grad(lambda d: np.asarray(dsp.csr_array((d, S.indices, S.indptr),
                                                       shape=S.shape)).sum())(d)


@settings(derandomize=True, max_examples=15, deadline=None)
@given(n=st.integers(1, 6), m=st.integers(1, 6), density=st.floats(0.0, 1.0),
       seed=st.integers(0, 1000), k=st.integers(0, 3))
def test_property_products_match_the_dense_matrix(n, m, density, seed, k):
    A = sp.random(n, m, density=density, format="csr", random_state=seed)
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(m,) if k == 0 else (m, k))
    ct = rng.normal(size=(n,) if k == 0 else (n, k))
    y, pullback = dualad.vjp(lambda x: A @ x, x)
    np.testing.assert_allclose(y, A.toarray() @ x, atol=1e-13)
    np.testing.assert_allclose(pullback(ct)[0], A.toarray().T @ ct, atol=1e-13)


def test_elementwise_product_keeps_the_pattern():
    """multiply(A, x) = A ∘ x (sparray's *): stored values data_k · x[row_k, col_k]."""
    A = sp.csr_array(A0)
    coo = sp.coo_array(A0)
    # x, and the gradient of Σ A ∘ x: A summed over the axes x broadcasts along
    cases = [(RNG.normal(size=(5, 4)), A0), (RNG.normal(size=4), A0.sum(axis=0)),
             (RNG.normal(size=(5, 1)), A0.sum(axis=1, keepdims=True)),
             (np.array(1.7), A0.sum())]
    for x, grad_sum in cases:
        M = dsp.multiply(A, x)                              # plain: SciPy's own
        np.testing.assert_allclose(M.toarray(), A0 * np.broadcast_to(x, (5, 4)))
        check_grads(lambda x: dsp.multiply(A, x).toarray(), (x,))
        check_grads(lambda x: dsp.multiply(A, x) @ np.ones(4), (x,))
        g = dualad.grad(lambda x: dsp.multiply(A, x).toarray().sum())(x)
        np.testing.assert_allclose(g, grad_sum, rtol=1e-12)
    d = coo.data.copy()
    x = RNG.normal(size=(5, 4))
    check_grads(lambda d, x: dsp.multiply(dsp.coo_array((d, (coo.row, coo.col)),
                                                        shape=(5, 4)), x).toarray(), (d, x))
    with pytest.raises(ValueError, match="does not broadcast"):
        dualad.grad(lambda x: dsp.multiply(A, x).toarray().sum())(np.ones(3))


@pytest.mark.parametrize("f, want", [
    (lambda x, A, B: (x * A).sum(), "spmatrix x * A is x @ A"),
    (lambda x, A, B: ((A * x) ** 2).sum(), "spmatrix A * x is A @ x"),
    (lambda x, A, B: ((x * B).toarray() ** 2).sum(), "sparray x * B is elementwise"),
    (lambda x, A, B: np.sum((x - B) ** 2), "sparray x - B is dense"),
    (lambda x, A, B: np.sum((B + x) ** 3), "sparray B + x is dense"),
])
def test_operators_with_a_sparse_operand_mean_what_scipy_means(f, want):
    """Python's operators between a traced value and a SciPy sparse matrix follow SciPy's
    meaning (spmatrix's * is the matrix product): checked against finite differences of
    the same code on plain arrays, where SciPy's operators run."""
    import scipy.sparse as sp
    dense = np.array([[1.0, 2.0], [0.0, 3.0]])
    A, B = sp.csr_matrix(dense), sp.csr_array(dense)
    check_grads(lambda x: f(x, A, B), (np.array([0.3, 0.8]),))


@pytest.mark.parametrize("f, words", [
    (lambda x, A, B: x + A, "np.matrix"),
    (lambda x, A, B: x / A, "A.toarray()"),
    (lambda x, A, B: x < B, "A.toarray()"),
])
def test_operators_scipy_does_not_define_for_a_traced_value_raise(f, words):
    import scipy.sparse as sp
    dense = np.array([[1.0, 2.0], [0.0, 3.0]])
    A, B = sp.csr_matrix(dense), sp.csr_array(dense)
    with pytest.raises(TypeError, match=re.escape(words)):
        dualad.grad(lambda x: np.sum(f(x, A, B)))(np.ones(2))


def test_a_traced_scalar_times_a_constant_sparse_matrix_scales_it():
    """θ * A (either class, either side for spmatrix): a sparse matrix with traced values
    θ·data, as SciPy's scalar multiplication; used in a solve, d/dθ matches differences."""
    import dualad.scipy.sparse.linalg as dspl
    M = sp.csr_matrix(np.array([[4.0, 1.0], [1.0, 3.0]]))
    b = np.array([1.0, 2.0])
    for f in (lambda t: dspl.spsolve(t[0] * M, b).sum(),
              lambda t: dspl.spsolve(M * t[0], b).sum(),
              lambda t: dspl.spsolve(t[0] * sp.csr_array(M), b).sum()):
        check_grads(f, (np.array([1.3]),))


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_a_traced_matrix_built_from_its_layout_has_the_coo_coordinates(fmt):
    """A traced CSR/CSC built from (data, indices, indptr) keeps its layout and computes its
    coordinates only when asked: they are SciPy's COO coordinates, the product and the
    transpose are right, and the index arrays passed in may be edited afterwards."""
    from dualad.scipy.sparse._traced import TracedSparse
    A = sp.random(7, 5, density=0.4, format=fmt, random_state=np.random.default_rng(2))
    indices, indptr = A.indices.copy(), A.indptr.copy()
    v = np.arange(1.0, 6.0)
    seen = {}

    def f(data):
        M = getattr(dsp, f"{fmt}_matrix")((data, indices, indptr), shape=A.shape)
        assert isinstance(M, TracedSparse)
        seen["struct"] = M.struct
        return M @ v + (M.T @ np.ones(7)).sum()
    J = jacobians.jacobian(f, A.data, mode="reverse")
    struct = seen["struct"]
    assert struct.nnz == A.nnz
    coo = A.tocoo()
    assert np.array_equal(struct.row, coo.row) and np.array_equal(struct.col, coo.col)
    indices[:] = 0      # the caller's arrays: the traced matrix took its own
    eye = np.eye(A.nnz)
    want = np.stack([getattr(sp, f"{fmt}_matrix")((e, A.indices, A.indptr), shape=A.shape)
                     @ v + (getattr(sp, f"{fmt}_matrix")((e, A.indices, A.indptr),
                                                          shape=A.shape).T @ np.ones(7)).sum()
                     for e in eye], axis=1)
    np.testing.assert_allclose(J, want, rtol=1e-14)
