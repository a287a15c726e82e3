"""numpy.linalg and scipy.linalg rules: values, JVP and VJP against central finite
differences, batched tangents/cotangents against a loop, and second order
(forward-over-reverse and reverse-over-reverse) against differences of gradients."""
import numpy as np
import pytest
import scipy.linalg as sl
from hypothesis import given, strategies as st

import dualad
import dualad.scipy.linalg as dsl
from dualad.core.primitive import REGISTRY

pytestmark = pytest.mark.slow   # per-primitive rule checks: in the full suite, not the quick subset

RNG = np.random.default_rng(0)


def _leaves(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _flat(out):
    return np.concatenate([np.ravel(np.asarray(x, dtype=float)) for x in _leaves(out)])


def _like(x, batch=()):
    return RNG.standard_normal(batch + np.shape(x))


def _struct(out, leaves):
    return tuple(leaves) if isinstance(out, (tuple, list)) else leaves[0]


def check(f, *args, order=2, batch=True, rtol=1e-5, atol=1e-6, h=1e-6):
    """JVP and VJP of ``f`` against central differences (and each other), batched
    against a loop, and (order 2) Hessian-vector products of ⟨ū, f⟩ in three modes."""
    args = tuple(np.asarray(a, dtype=float) for a in args)
    out = f(*args)
    ts = tuple(_like(a) for a in args)
    fd = (_flat(f(*[a + h * t for a, t in zip(args, ts)]))
          - _flat(f(*[a - h * t for a, t in zip(args, ts)]))) / (2 * h)
    val, jt = dualad.jvp(f, args, ts)
    np.testing.assert_allclose(_flat(val), _flat(out), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(_flat(jt), fd, rtol=rtol, atol=atol, err_msg="JVP vs FD")
    cts = _struct(out, [_like(o) for o in _leaves(out)])
    val, pullback = dualad.vjp(f, *args)
    gs = pullback(cts)
    lhs = np.dot(_flat(cts), _flat(jt))
    rhs = sum(np.sum(g * t) for g, t in zip(gs, ts))
    np.testing.assert_allclose(rhs, lhs, rtol=rtol, atol=atol, err_msg="VJP vs JVP")
    if batch:
        tb = tuple(_like(a, (3,)) for a in args)
        _, jb = dualad.jvp(f, args, tb)
        for k in range(3):
            _, jk = dualad.jvp(f, args, tuple(t[k] for t in tb))
            np.testing.assert_allclose(_flat(jb_k := _struct(out, [x[k] for x in _leaves(jb)])),
                                       _flat(jk), rtol=1e-9, atol=1e-10,
                                       err_msg="batched JVP vs loop")
            assert jb_k is not None
        cb = _struct(out, [_like(o, (2,)) for o in _leaves(out)])
        gb = pullback(cb)
        for k in range(2):
            gk = pullback(_struct(out, [c[k] for c in _leaves(cb)]))
            for x, y in zip(gb, gk):
                np.testing.assert_allclose(x[k], y, rtol=1e-9, atol=1e-10,
                                           err_msg="batched VJP vs loop")
    if order >= 2:
        def scalar(*xs):
            return sum(np.sum(c * o) for c, o in zip(_leaves(cts), _leaves(f(*xs))))

        nums = tuple(range(len(args)))
        grad = dualad.grad(scalar, argnums=nums)
        h2 = 1e-5
        fd2 = (_flat(grad(*[a + h2 * t for a, t in zip(args, ts)]))
               - _flat(grad(*[a - h2 * t for a, t in zip(args, ts)]))) / (2 * h2)
        fwd_rev = dualad.jvp(grad, args, ts)[1]
        np.testing.assert_allclose(_flat(fwd_rev), fd2, rtol=1e-4, atol=1e-5,
                                   err_msg="forward-over-reverse vs FD of gradient")
        rev_rev = dualad.grad(lambda *xs: sum(np.sum(g * t) for g, t in zip(grad(*xs), ts)),
                              argnums=nums)(*args)
        np.testing.assert_allclose(_flat(rev_rev), fd2, rtol=1e-4, atol=1e-5,
                                   err_msg="reverse-over-reverse vs FD of gradient")


def well(n, *batch, seed=None):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(batch + (n, n)) * 0.3 + 2 * np.eye(n)


def spd(n, *batch, seed=None):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(batch + (n, n))
    return x @ np.swapaxes(x, -1, -2) + n * np.eye(n)


def sym(n, *batch, seed=None):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(batch + (n, n))
    return x + np.swapaxes(x, -1, -2) + np.diag(np.arange(n) * 2.0)


def fix_sign(v):
    """Normalize column signs (a zero-derivative factor): the first row positive."""
    return v * np.sign(v[..., :1, :])


# --- inverse, solve, determinants ---------------------------------------------------------
@pytest.mark.parametrize("shape", [(3,), (2, 3)])
def test_inv(shape):
    a = well(shape[-1], *shape[:-1], seed=1)
    np.testing.assert_allclose(dualad.jvp(np.linalg.inv, (a,), (a,))[0], np.linalg.inv(a))
    check(np.linalg.inv, a)


@pytest.mark.parametrize("ashape,bshape", [((3, 3), (3,)), ((3, 3), (3, 2)),
                                           ((2, 3, 3), (3, 1)), ((3, 3), (2, 3, 2))])
def test_solve(ashape, bshape):
    a = well(3, *ashape[:-2], seed=2)
    b = RNG.standard_normal(bshape)
    np.testing.assert_allclose(dualad.jvp(np.linalg.solve, (a, b), (a, b))[0],
                               np.linalg.solve(a, b))
    check(np.linalg.solve, a, b)


@pytest.mark.parametrize("batch", [(), (2,)])
def test_det_slogdet(batch):
    a = well(3, *batch, seed=3)
    check(np.linalg.det, a)
    check(lambda x: np.linalg.slogdet(x)[1], -a)
    sign, logdet = dualad.jvp(lambda x: np.linalg.slogdet(x), (-a,), (a,))[0]
    np.testing.assert_allclose(sign, np.linalg.slogdet(-a)[0])
    np.testing.assert_allclose(logdet, np.linalg.slogdet(-a)[1])
    # Jacobi's formula through grad: ∇ det = det · A⁻ᵀ
    g = dualad.grad(lambda x: np.sum(np.linalg.det(x)))(a)
    np.testing.assert_allclose(g, np.linalg.det(a)[..., None, None]
                               * np.swapaxes(np.linalg.inv(a), -1, -2))


def test_inv_errors_name_function_and_shape():
    with pytest.raises(ValueError, match=r"inv: argument a .* shape \(2, 3\)"):
        dualad.grad(lambda x: np.sum(np.linalg.inv(x)))(np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"solve: argument b of shape \(2,\)"):
        dualad.grad(lambda x: np.sum(np.linalg.solve(x, np.ones(2))))(np.eye(3))


# --- Cholesky and triangular solves ---------------------------------------------------
@pytest.mark.parametrize("batch", [(), (2,)])
def test_cholesky(batch):
    a = spd(3, *batch, seed=4)
    np.testing.assert_allclose(dualad.jvp(np.linalg.cholesky, (a,), (a,))[0],
                               np.linalg.cholesky(a))
    # FD of LAPACK's function, which reads only the lower triangle: upper entries of a
    # random tangent have zero effect.
    check(np.linalg.cholesky, a)
    check(lambda x: np.linalg.cholesky(x, upper=True), a, order=1)


@pytest.mark.parametrize("trans", [0, 1, "T"])
@pytest.mark.parametrize("lower", [True, False])
def test_solve_triangular(trans, lower):
    a = well(3, seed=5)
    b = RNG.standard_normal((3, 2))
    f = lambda x, y: dsl.solve_triangular(x, y, trans=trans, lower=lower)  # noqa: E731
    np.testing.assert_allclose(dualad.jvp(f, (a, b), (a, b))[0],
                               sl.solve_triangular(a, b, trans=trans, lower=lower))
    check(f, a, b, order=2 if trans == 0 else 1)


def test_solve_triangular_unit_vector_and_batch():
    a = well(3, 2, seed=6)
    b = RNG.standard_normal((3,))
    f = lambda x, y: dsl.solve_triangular(x, y, lower=True, unit_diagonal=True)  # noqa: E731
    check(lambda x: dsl.solve_triangular(x, b, lower=True, unit_diagonal=True), a[0])
    check(f, a, RNG.standard_normal((3, 1)), order=1)


@pytest.mark.parametrize("lower", [True, False])
def test_scipy_cholesky_reads_the_triangle_it_returns(lower):
    a, t, h = spd(3, seed=23), RNG.standard_normal((3, 3)), 1e-6
    fd = (sl.cholesky(a + h * t, lower=lower) - sl.cholesky(a - h * t, lower=lower)) / (2 * h)
    got = dualad.jvp(lambda x: dsl.cholesky(x, lower=lower), (a,), (t,))[1]
    np.testing.assert_allclose(got, fd, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("assume_a,lower,transposed", [
    (None, False, False), ("gen", False, True), ("sym", False, False), ("pos", True, False),
    ("her", True, True), ("lower triangular", False, False), ("upper triangular", False, True),
    ("diagonal", False, False), ("tridiagonal", False, True), ("banded", False, False)])
def test_scipy_solve_assume_a(assume_a, lower, transposed):
    a, b, h = spd(4, seed=24), RNG.standard_normal((4, 2)), 1e-6
    ta, tb = RNG.standard_normal((4, 4)), RNG.standard_normal((4, 2))
    kw = dict(assume_a=assume_a, lower=lower, transposed=transposed)
    if assume_a == "tridiagonal":
        a = np.where(np.abs(np.subtract.outer(range(4), range(4))) <= 1, a, 0.0)
    ref = lambda x, y: sl.solve(x, y, **kw)  # noqa: E731
    fd = (ref(a + h * ta, b + h * tb) - ref(a - h * ta, b - h * tb)) / (2 * h)
    val, got = dualad.jvp(lambda x, y: dsl.solve(x, y, **kw), (a, b), (ta, tb))
    np.testing.assert_allclose(val, ref(a, b))
    if assume_a != "banded":  # SciPy detects the band from a: outside it, no derivative
        np.testing.assert_allclose(got, fd, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("lower", [True, False])
def test_cho_solve(lower):
    a = spd(3, seed=7)
    b = RNG.standard_normal((3, 2))
    c, low = dsl.cho_factor(a, lower=lower)
    np.testing.assert_allclose(dsl.cho_solve((c, low), b), sl.cho_solve(sl.cho_factor(a), b))
    check(lambda x, y: dsl.cho_solve(dsl.cho_factor(x, lower=lower), y), a, b)
    check(lambda x, y: dsl.cho_solve((x, lower), y), np.linalg.cholesky(a).T if not lower
          else np.linalg.cholesky(a), b, order=1)


# --- eigen, singular value and QR decompositions --------------------------------------------
@pytest.mark.parametrize("batch,uplo", [((), "L"), ((2,), "L"), ((), "U")])
def test_eigh(batch, uplo):
    a = sym(3, *batch, seed=8) + 0.3 * np.tril(RNG.standard_normal((3, 3)))  # not symmetric
    w, v = np.linalg.eigh(a, UPLO=uplo)
    (w2, v2), _ = dualad.jvp(lambda x: tuple(np.linalg.eigh(x, UPLO=uplo)), (a,), (a,))
    np.testing.assert_allclose(w2, w)
    np.testing.assert_allclose(v2, v)
    check(lambda x: (np.linalg.eigh(x, UPLO=uplo)[0], fix_sign(np.linalg.eigh(x, UPLO=uplo)[1])), a)
    check(lambda x: np.linalg.eigvalsh(x, UPLO=uplo), a)


def test_eigh_degenerate_convention():
    # Exactly repeated eigenvalues: eigenvalue derivatives stay finite (F's zeros).
    g = dualad.grad(lambda x: np.sum(np.linalg.eigh(x)[0] ** 2))(np.eye(3))
    np.testing.assert_allclose(g, 2 * np.eye(3))
    assert np.all(np.isfinite(dualad.grad(lambda x: np.sum(np.linalg.eigvalsh(x)))(np.eye(3))))


@pytest.mark.parametrize("batch", [(), (2,)])
def test_eig_real_spectrum(batch):
    a = sym(3, *batch, seed=9) + 0.4 * RNG.standard_normal((3, 3))
    w = np.linalg.eigvals(a)
    assert not np.any(np.imag(w))   # a real spectrum (NumPy >= 2.5 still gives it complex)
    w2 = dualad.jvp(np.linalg.eigvals, (a,), (a,))[0]
    assert w2.dtype == w.dtype      # the dtype of the plain call on every NumPy
    np.testing.assert_allclose(w2, w)
    check(lambda x: (np.real(np.linalg.eig(x)[0]), fix_sign(np.real(np.linalg.eig(x)[1]))), a)


@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (3, 3), (2, 4, 3)])
def test_svd(shape):
    a = RNG.standard_normal(shape)
    u, s, vh = dualad.jvp(lambda x: tuple(np.linalg.svd(x, full_matrices=False)), (a,), (a,))[0]
    np.testing.assert_allclose(u * s[..., None, :] @ vh, a, atol=1e-12)
    np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False))

    def f(x):
        u, s, vh = np.linalg.svd(x, full_matrices=False)
        sgn = np.sign(u[..., :1, :])
        return u * sgn, s, vh * np.swapaxes(sgn, -1, -2)
    check(f, a)
    check(lambda x: np.linalg.svd(x, compute_uv=False), a)


def test_svd_full_matrices_of_nonsquare_raises():
    with pytest.raises(NotImplementedError, match=r"svd: full_matrices=True .*\(3, 2\)"):
        dualad.grad(lambda x: np.sum(np.linalg.svd(x)[1]))(np.ones((3, 2)))


@pytest.mark.parametrize("shape", [(4, 3), (3, 3), (2, 4, 2), (2, 4), (2, 2, 3)])
def test_qr(shape):
    a = RNG.standard_normal(shape)
    q, r = dualad.jvp(lambda x: tuple(np.linalg.qr(x)), (a,), (a,))[0]
    np.testing.assert_allclose(q @ r, a, atol=1e-12)
    np.testing.assert_allclose(r, np.linalg.qr(a)[1], atol=1e-12)
    check(lambda x: tuple(np.linalg.qr(x)), a)
    check(lambda x: np.linalg.qr(x, mode="r"), a, order=1)


@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (3, 3)])
def test_pinv(shape):
    a = RNG.standard_normal(shape)
    np.testing.assert_allclose(dualad.jvp(np.linalg.pinv, (a,), (a,))[0], np.linalg.pinv(a))
    check(np.linalg.pinv, a)


# hermitian=True: NumPy's path is eigh of the lower triangle; the points below are not
# symmetric (the upper triangle is ignored), an SPD, an indefinite and a stacked one.
_HERM_POINTS = {
    "spd": spd(3, seed=31) + np.triu(RNG.standard_normal((3, 3)), 1),
    "indefinite": sym(3, seed=32) - 2.0 * np.eye(3) + np.triu(RNG.standard_normal((3, 3)), 1),
    "stacked": np.stack([sym(3, seed=33) - 2.5 * np.eye(3), -spd(3, seed=34)])
    + np.triu(RNG.standard_normal((2, 3, 3)), 1),
}


def _herm_svd(x):
    u, s, vh = np.linalg.svd(x, hermitian=True)
    sgn = np.sign(u[..., :1, :])      # singular vectors up to sign: a zero-derivative factor
    return u * sgn, s, vh * np.swapaxes(sgn, -1, -2)


@pytest.mark.parametrize("point", sorted(_HERM_POINTS))
def test_hermitian_svd_and_pinv_read_the_lower_triangle(point):
    from dualad.verification import check_grads
    a = _HERM_POINTS[point]
    a_eff = np.tril(a) + np.swapaxes(np.tril(a, -1), -1, -2)
    w = np.linalg.eigvalsh(a_eff)
    if point != "spd":
        assert np.any(w < 0) and np.all(np.abs(w) > 0.1)     # indefinite, nonsingular
    s = dualad.jvp(lambda x: np.linalg.svd(x, hermitian=True, compute_uv=False), (a,), (a,))[0]
    np.testing.assert_array_equal(s, np.linalg.svd(a, hermitian=True, compute_uv=False))
    np.testing.assert_allclose(s, -np.sort(-np.abs(w)), rtol=1e-12)   # |λ|, descending
    u, s2, vh = dualad.jvp(lambda x: tuple(np.linalg.svd(x, hermitian=True)), (a,), (a,))[0]
    np.testing.assert_array_equal(s2, np.linalg.svd(a, hermitian=True)[1])   # eigh's values
    np.testing.assert_allclose(u * s[..., None, :] @ vh, a_eff, atol=1e-12)
    p = dualad.vjp(lambda x: np.linalg.pinv(x, hermitian=True), a)[0]
    np.testing.assert_array_equal(p, np.linalg.pinv(a, hermitian=True))
    # Any direction, not only symmetric ones: one entry above the diagonal has derivative 0.
    e = np.zeros(a.shape)
    e[..., 0, 2] = 1.0
    for f in (lambda x: np.linalg.svd(x, hermitian=True, compute_uv=False),
              lambda x: np.linalg.pinv(x, hermitian=True), lambda x: _herm_svd(x)[0]):
        assert not np.any(dualad.jvp(f, (a,), (e,))[1])
        out = f(a)
        assert not np.any(dualad.vjp(f, a)[1](np.ones_like(out))[0][..., 0, 2])
    for f in (lambda x: np.linalg.svd(x, hermitian=True, compute_uv=False),
              lambda x: np.linalg.pinv(x, hermitian=True), _herm_svd):
        check_grads(f, (a,), order=2, modes=("fwd", "rev"))
        check(f, a)


def test_hermitian_svd_at_the_reported_point():
    s, e = np.array([[2.0, 0.5], [0.5, 1.0]]), np.array([[0.0, 1.0], [0.0, 0.0]])
    for f in (lambda m: np.linalg.svd(m, hermitian=True, compute_uv=False),
              lambda m: np.linalg.pinv(m, hermitian=True)):
        assert not np.any(dualad.jvp(f, (s,), (e,))[1])
        assert not np.any(dualad.grad(lambda m: np.sum(f(m) * (1.0 + np.arange(f(s).size)
                                                              .reshape(f(s).shape))))(s)[0, 1])


def test_hermitian_svd_of_a_nonsquare_matrix_raises():
    with pytest.raises(Exception, match=r"svd.*\(3, 2\)"):
        dualad.grad(lambda x: np.sum(np.linalg.svd(x, hermitian=True)[1]))(np.ones((3, 2)))


@pytest.mark.parametrize("bshape", [(5,), (5, 2)])
def test_lstsq(bshape):
    a = RNG.standard_normal((5, 3))
    b = RNG.standard_normal(bshape)
    x, res, rank, s = np.linalg.lstsq(a, b)
    (x2, res2, s2), _ = dualad.jvp(lambda p, q: (np.linalg.lstsq(p, q)[0], np.linalg.lstsq(p, q)[1],
                                                 np.linalg.lstsq(p, q)[3]), (a, b), (a, b))
    np.testing.assert_allclose(x2, x)
    np.testing.assert_allclose(res2, res)
    np.testing.assert_allclose(s2, s)
    check(lambda p, q: np.linalg.lstsq(p, q)[0], a, b)
    check(lambda p, q: np.linalg.lstsq(p, q)[1], a, b, order=1)


# --- norms -----------------------------------------------------------------------------------
VECTOR_ORDS = [None, 1, 2, np.inf, -np.inf, 3, 0.5]
MATRIX_ORDS = [None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf]


@pytest.mark.parametrize("ord", VECTOR_ORDS)
def test_vector_norm(ord):
    x = RNG.standard_normal(5) + 0.1
    np.testing.assert_allclose(dualad.jvp(lambda v: np.linalg.norm(v, ord), (x,), (x,))[0],
                               np.linalg.norm(x, ord))
    check(lambda v: np.linalg.norm(v, ord), x, order=1 if ord in (np.inf, -np.inf) else 2)
    y = RNG.standard_normal((3, 4))
    for axis, keep in [(0, False), (-1, True)]:
        f = lambda v: np.linalg.norm(v, ord, axis=axis, keepdims=keep)  # noqa: E731
        np.testing.assert_allclose(dualad.jvp(f, (y,), (y,))[0], np.linalg.norm(y, ord, axis,
                                                                                 keep))
        check(f, y, order=1)


@pytest.mark.parametrize("ord", MATRIX_ORDS)
def test_matrix_norm(ord):
    x = RNG.standard_normal((3, 4))
    np.testing.assert_allclose(dualad.jvp(lambda v: np.linalg.norm(v, ord), (x,), (x,))[0],
                               np.linalg.norm(x, ord))
    check(lambda v: np.linalg.norm(v, ord), x, order=1 if ord in (1, -1) else 2)
    y = RNG.standard_normal((3, 2, 4))
    f = lambda v: np.linalg.norm(v, ord, axis=(2, 0), keepdims=True)  # noqa: E731
    np.testing.assert_allclose(dualad.jvp(f, (y,), (y,))[0], np.linalg.norm(y, ord, (2, 0), True))
    check(f, y, order=1)


def test_norm_conventions_at_zero():
    z = np.zeros(3)
    for ord in (None, 1, 2, 3, np.inf):
        assert np.all(dualad.grad(lambda v: np.linalg.norm(v, ord))(z) == 0)
    assert np.all(dualad.grad(lambda m: np.linalg.norm(m))(np.zeros((2, 2))) == 0)
    x = np.array([0.0, 2.0, -1.0])
    np.testing.assert_allclose(dualad.grad(lambda v: np.linalg.norm(v, 0))(x), 0)
    np.testing.assert_allclose(dualad.grad(lambda v: np.linalg.norm(v, 1))(x), [0, 1, -1])


def test_numpy2_norm_functions():
    x = RNG.standard_normal((2, 3, 3))
    np.testing.assert_allclose(dualad.jvp(np.linalg.matrix_norm, (x,), (x,))[0],
                               np.linalg.matrix_norm(x))
    check(np.linalg.matrix_norm, x, order=1)
    check(lambda v: np.linalg.vector_norm(v, axis=-1, ord=3), x, order=1)
    check(np.linalg.svdvals, x, order=1)


# --- powers and products -----------------------------------------------------------------
@pytest.mark.parametrize("n", [0, 1, 2, 5, -1, -3])
def test_matrix_power(n):
    a = well(3, 2, seed=10) * 0.6
    np.testing.assert_allclose(dualad.jvp(lambda x: np.linalg.matrix_power(x, n), (a,), (a,))[0],
                               np.linalg.matrix_power(a, n))
    if n:
        check(lambda x: np.linalg.matrix_power(x, n), a, order=2 if abs(n) <= 2 else 1)


def test_multi_dot():
    a, b, c = RNG.standard_normal(3), RNG.standard_normal((3, 4)), RNG.standard_normal((4, 2))
    np.testing.assert_allclose(dualad.jvp(lambda *x: np.linalg.multi_dot(x), (a, b, c),
                                          (a, b, c))[0], np.linalg.multi_dot([a, b, c]))
    check(lambda *x: np.linalg.multi_dot(x), a, b, c, order=1)


# --- scipy.linalg: expm, sqrtm, solve_sylvester ---------------------------------------------
@pytest.mark.parametrize("batch", [(), (2,)])
def test_expm(batch):
    a = RNG.standard_normal(batch + (3, 3)) * 0.5
    np.testing.assert_allclose(dualad.jvp(dsl.expm, (a,), (a,))[0], sl.expm(a))
    check(dsl.expm, a)
    # The JVP is scipy's own Fréchet derivative.
    e = RNG.standard_normal((3, 3))
    a0 = a.reshape(-1, 3, 3)[0]
    np.testing.assert_allclose(dualad.jvp(dsl.expm, (a0,), (e,))[1],
                               sl.expm_frechet(a0, e, compute_expm=False), rtol=1e-10)


@pytest.mark.parametrize("batch", [(), (2,)])
def test_sqrtm(batch):
    a = spd(3, *batch, seed=11)
    x = dualad.jvp(dsl.sqrtm, (a,), (a,))[0]
    np.testing.assert_allclose(x @ x, a, rtol=1e-10)
    check(dsl.sqrtm, a)
    check(dsl.sqrtm, well(2, seed=12), order=1)  # non-symmetric, positive spectrum


@pytest.mark.parametrize("batch", [(), (2,)])
def test_logm(batch):
    a = spd(3, *batch, seed=21) / 3
    x = dualad.jvp(dsl.logm, (a,), (a,))[0]
    np.testing.assert_allclose(x, sl.logm(a), atol=1e-12)
    check(dsl.logm, a, order=1 if batch else 2, batch=not batch)  # SciPy's logm is slow
    if not batch:
        check(dsl.logm, well(2, seed=22), order=1)  # non-symmetric, positive spectrum
    # logm inverts expm, so their derivatives compose to the identity.
    b = RNG.standard_normal((3, 3)) * 0.3
    t = RNG.standard_normal((3, 3))
    np.testing.assert_allclose(dualad.jvp(lambda y: dsl.logm(dsl.expm(y)), (b,), (t,))[1], t,
                               rtol=1e-8, atol=1e-10)


def test_expm_frechet_scipy_signature():
    a, e = RNG.standard_normal((3, 3)) * 0.5, RNG.standard_normal((3, 3))
    ex, fr = dualad.jvp(lambda x, y: dsl.expm_frechet(x, y), (a, e), (a, e))[0]
    ref = sl.expm_frechet(a, e)
    np.testing.assert_allclose(ex, ref[0])
    np.testing.assert_allclose(fr, ref[1])
    check(lambda x, y: dsl.expm_frechet(x, y, compute_expm=False), a, e, order=1)


def test_solve_sylvester():
    a, b = well(2, seed=13), well(3, seed=14)
    q = RNG.standard_normal((2, 3))
    np.testing.assert_allclose(dualad.jvp(dsl.solve_sylvester, (a, b, q), (a, b, q))[0],
                               sl.solve_sylvester(a, b, q))
    check(dsl.solve_sylvester, a, b, q)
    with pytest.raises(ValueError, match=r"solve_sylvester: argument q has shape \(3, 3\)"):
        dualad.grad(lambda x: np.sum(dsl.solve_sylvester(x, b, np.ones((3, 3)))))(a)


@pytest.mark.parametrize("lower", [True, False])
def test_scipy_generalized_eigh(lower):
    a = sym(3, seed=25) + 0.2 * np.triu(RNG.standard_normal((3, 3)))
    b = spd(3, seed=26) + 0.2 * np.tril(RNG.standard_normal((3, 3)))
    w, v = sl.eigh(a, b, lower=lower)
    (w2, v2), _ = dualad.jvp(lambda x, y: dsl.eigh(x, y, lower=lower), (a, b), (a, b))
    np.testing.assert_allclose(w2, w)
    np.testing.assert_allclose(fix_sign(v2), fix_sign(v), atol=1e-12)
    ref = lambda x, y: (sl.eigh(x, y, lower=lower)[0],  # noqa: E731
                        fix_sign(sl.eigh(x, y, lower=lower)[1]))
    ta, tb, h = RNG.standard_normal((3, 3)), RNG.standard_normal((3, 3)), 1e-6
    fd = [(p - m) / (2 * h) for p, m in zip(ref(a + h * ta, b + h * tb),
                                            ref(a - h * ta, b - h * tb))]
    _, (dw, dv) = dualad.jvp(lambda x, y: (dsl.eigh(x, y, lower=lower)[0],
                                           fix_sign(dsl.eigh(x, y, lower=lower)[1])),
                             (a, b), (ta, tb))
    np.testing.assert_allclose(dw, fd[0], rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(dv, fd[1], rtol=1e-6, atol=1e-8)
    check(lambda x, y: dsl.eigh(x, y, lower=lower, eigvals_only=True), a, b)


def test_scipy_namespace_values():
    a = spd(3, seed=15)
    b = RNG.standard_normal(3)
    for name, args in [("inv", (a,)), ("det", (a,)), ("solve", (a, b)), ("pinv", (a,)),
                       ("norm", (a,)), ("expm", (a * 0.1,))]:
        got = dualad.jvp(getattr(dsl, name), args, args)[0]
        np.testing.assert_allclose(got, getattr(sl, name)(*args), err_msg=name)
    np.testing.assert_allclose(dualad.jvp(lambda x: dsl.cholesky(x), (a,), (a,))[0],
                               sl.cholesky(a))
    np.testing.assert_allclose(dualad.jvp(lambda x: dsl.cholesky(x, lower=True), (a,), (a,))[0],
                               sl.cholesky(a, lower=True))
    w, v = dualad.jvp(lambda x: tuple(dsl.eigh(x)), (a,), (a,))[0]
    np.testing.assert_allclose(w, sl.eigh(a)[0])


# --- registry: every primitive here carries samples; SymPy agrees where given ------------
MATRIX_PRIMS = ["inv", "solve", "det", "logabsdet", "cholesky", "solve_triangular",
                "solve_sylvester", "expm", "logm", "sqrtm", "eigh", "eigvalsh", "eig", "svd",
                "svdvals", "qr", "pinv", "lu_packed"]


def _sample_args(s):
    rng = np.random.default_rng(0)
    dom = s["domain"] or [None] * len(s["args"])
    return [rng.uniform(*(d or (-1, 1)), a) if isinstance(a, tuple) else a
            for a, d in zip(s["args"], dom)]


@pytest.mark.parametrize("name", MATRIX_PRIMS)
def test_samples_differentiate(name):
    prim = REGISTRY[name]
    assert prim.samples
    for s in prim.samples:
        args = _sample_args(s)
        f = lambda *xs: prim(*xs, **s["params"])  # noqa: E731
        if any(np.iscomplexobj(a) for a in args) or np.iscomplexobj(f(*args)):
            continue    # this check is real-only; complex samples: test_complex_linalg.py
        check(f, *args, order=1, batch=False, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("name", ["inv", "solve", "det", "logabsdet", "cholesky",
                                  "solve_triangular", "solve_sylvester"])
def test_sympy_translation(name):
    import sympy
    prim = REGISTRY[name]
    s = prim.samples[0]
    args = _sample_args(s)
    syms = [np.array(sympy.symbols(f"x{i}_0:{np.size(a)}"), dtype=object).reshape(np.shape(a))
            for i, a in enumerate(args)]
    expr = np.asarray(prim.sympy(sympy, *syms, **s["params"]), dtype=object)
    subs = {sym: val for S, a in zip(syms, args) for sym, val in zip(S.ravel(), np.ravel(a))}
    value = np.array([float(e.subs(subs)) for e in expr.ravel()]).reshape(expr.shape)
    np.testing.assert_allclose(value, prim.impl(*args, **s["params"]), rtol=1e-10)


@pytest.mark.parametrize("name", ["inv", "det", "logabsdet", "cholesky", "solve_triangular"])
def test_sympy_second_derivative_matches_ad(name):
    # ∂²f/∂x_i∂x_j of the SymPy translation against forward-over-forward and
    # forward-over-reverse AD, at the first sample, in the first argument.
    import sympy
    prim = REGISTRY[name]
    s = prim.samples[0]
    args = _sample_args(s)
    a = args[0]
    syms = np.array(sympy.symbols(f"a0:{a.size}"), dtype=object).reshape(a.shape)
    expr = np.asarray(prim.sympy(sympy, syms, *args[1:], **s["params"]), dtype=object)
    i, j = 0, a.size - 1
    subs = dict(zip(syms.ravel(), a.ravel()))
    d2 = np.array([float(sympy.diff(e, syms.flat[i], syms.flat[j]).subs(subs))
                   for e in expr.ravel()]).reshape(expr.shape)
    ei, ej = np.zeros(a.shape), np.zeros(a.shape)
    ei.flat[i], ej.flat[j] = 1.0, 1.0
    f = lambda x: prim(x, *args[1:], **s["params"])  # noqa: E731
    ff = dualad.jvp(lambda x: dualad.jvp(f, (x,), (ei,))[1], (a,), (ej,))[1]
    np.testing.assert_allclose(ff, d2, rtol=1e-9, atol=1e-12)
    w = RNG.standard_normal(expr.shape)
    fr = dualad.jvp(dualad.grad(lambda x: np.sum(w * f(x))), (a,), (ej,))[1]
    np.testing.assert_allclose(fr.flat[i], np.sum(w * d2), rtol=1e-9, atol=1e-12)


# --- property test: inv/det/solve on random well-conditioned matrices --------------------
@given(st.integers(1, 4), st.integers(0, 2**31 - 1))
def test_property_inv_det_grad(n, seed):
    a = well(n, seed=seed)
    g = dualad.grad(lambda x: np.linalg.slogdet(x)[1])(a)
    np.testing.assert_allclose(g, np.linalg.inv(a).T, rtol=1e-9, atol=1e-12)
    t = np.random.default_rng(seed).standard_normal((n, n))
    np.testing.assert_allclose(dualad.jvp(np.linalg.inv, (a,), (t,))[1],
                               -np.linalg.inv(a) @ t @ np.linalg.inv(a), rtol=1e-9, atol=1e-12)


# --- complex (holomorphic) inputs: JAX's convention, cotangents are not conjugated ------
@pytest.mark.parametrize("name", ["inv", "det", "expm", "solve", "power", "sqrtm", "tri", "logm"])
def test_complex_holomorphic(name):
    rng = np.random.default_rng(16)
    cplx = lambda *s: rng.standard_normal(s) + 1j * rng.standard_normal(s)  # noqa: E731
    a = 0.3 * cplx(3, 3) + 2 * np.eye(3)
    b = cplx(3, 2)
    f = {"inv": np.linalg.inv, "det": np.linalg.det, "expm": dsl.expm,
         "solve": lambda x: np.linalg.solve(x, b),
         "power": lambda x: np.linalg.matrix_power(x, -2), "sqrtm": dsl.sqrtm, "logm": dsl.logm,
         "tri": lambda x: dsl.solve_triangular(x, b, lower=True, trans=1)}[name]
    ref = {"expm": sl.expm, "sqrtm": sl.sqrtm, "logm": sl.logm,
           "tri": lambda x: sl.solve_triangular(x, b, lower=True, trans=1)}.get(name, f)
    t, h = cplx(3, 3), 1e-6
    y, ty = dualad.jvp(f, (a,), (t,))
    np.testing.assert_allclose(y, ref(a))
    np.testing.assert_allclose(ty, (ref(a + h * t) - ref(a - h * t)) / (2 * h), rtol=1e-6)
    _, pullback = dualad.vjp(f, a)
    u = cplx(*np.shape(y))
    (g,) = pullback(u)
    np.testing.assert_allclose(np.sum(g * t), np.sum(u * ty), rtol=1e-9)


# --- imperative API: create_graph runs the rules on the tape itself ------------------------
@pytest.mark.parametrize("fn", [np.linalg.inv, np.linalg.det, lambda x: np.linalg.eigh(x)[0],
                                lambda x: np.linalg.svd(x, compute_uv=False),
                                lambda x: np.linalg.qr(x)[1], np.linalg.cholesky, dsl.expm])
def test_create_graph_second_order(fn):
    from dualad.autograd import Variable, grad
    a0 = spd(3, seed=17)
    v = RNG.standard_normal((3, 3))
    x = Variable(a0, requires_grad=True)
    (g,) = grad(np.sum(fn(x) ** 2), x, create_graph=True)
    (hv,) = grad(np.sum(g * v), x)
    g_of = dualad.grad(lambda y: np.sum(fn(y) ** 2))
    h = 1e-5
    np.testing.assert_allclose(np.asarray(hv.data if hasattr(hv, "data") else hv),
                               dualad.jvp(g_of, (a0,), (v,))[1], rtol=1e-8, atol=1e-10)
    fd = (g_of(a0 + h * v) - g_of(a0 - h * v)) / (2 * h)
    np.testing.assert_allclose(dualad.jvp(g_of, (a0,), (v,))[1], fd, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("call,pattern", [
    (lambda x: np.linalg.det(x[:, :2]), r"det: argument a .* shape \(3, 2\)"),
    (lambda x: np.linalg.cholesky(x[:2]), r"cholesky: argument a .* shape \(2, 3\)"),
    (lambda x: np.linalg.eigh(x[0])[0], r"eigh: argument a .* shape \(3,\)"),
    (lambda x: np.linalg.qr(x[:, :2], "complete")[0], r"qr: mode='complete' .*\(3, 2\)"),
    (lambda x: np.linalg.lstsq(x, np.ones(2))[0], r"lstsq: argument b of shape \(2,\)"),
    (lambda x: dsl.expm(x[:, :1]), r"expm: argument A .* shape \(3, 1\)"),
    (lambda x: np.linalg.norm(x, "fro", axis=0), r"norm: invalid norm order 'fro' for vectors"),
    (lambda x: dsl.solve_triangular(x, np.ones(2)), r"solve_triangular: argument b of shape"),
])
def test_errors_name_function_argument_shape(call, pattern):
    with pytest.raises((ValueError, NotImplementedError), match=pattern):
        dualad.grad(lambda x: np.sum(call(x)))(np.eye(3))


@given(st.integers(2, 4), st.integers(1, 3), st.integers(0, 2**31 - 1))
def test_property_svd_reconstructs_gradient_of_frobenius(m, n, seed):
    # Σ s_i² = ‖A‖_F², so its gradient through the SVD is 2A whatever the vectors do.
    a = np.random.default_rng(seed).standard_normal((m, n))
    g = dualad.grad(lambda x: np.sum(np.linalg.svd(x, full_matrices=False)[1] ** 2))(a)
    np.testing.assert_allclose(g, 2 * a, rtol=1e-8, atol=1e-10)
    g = dualad.grad(lambda x: np.sum(np.linalg.eigvalsh(x.T @ x)))(a)
    np.testing.assert_allclose(g, 2 * a, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("p", [None, 2, -2, "fro", 1, np.inf])
def test_cond(p):
    a = well(3, 2, seed=18)
    np.testing.assert_allclose(dualad.jvp(lambda x: np.linalg.cond(x, p), (a,), (a,))[0],
                               np.linalg.cond(a, p))
    check(lambda x: np.linalg.cond(x, p), a, order=2 if p in (None, "fro") else 1)


def test_tensorinv_tensorsolve():
    a = well(6, seed=19).reshape(2, 3, 6)
    np.testing.assert_allclose(dualad.jvp(np.linalg.tensorinv, (a,), (a,))[0],
                               np.linalg.tensorinv(a))
    check(np.linalg.tensorinv, a, order=1)
    a4 = well(6, seed=20).reshape(2, 3, 2, 3)
    b = RNG.standard_normal((2, 3))
    for axes in (None, (0, 1)):
        f = lambda x, y: np.linalg.tensorsolve(x, y, axes)  # noqa: E731
        np.testing.assert_allclose(dualad.jvp(f, (a4, b), (a4, b))[0],
                                   np.linalg.tensorsolve(a4, b, axes))
        check(f, a4, b, order=1)


def test_array_api_names():
    x, y = RNG.standard_normal((2, 3, 3)), RNG.standard_normal((2, 3, 3))
    v, w = RNG.standard_normal(3), RNG.standard_normal(4)
    for name, args in [("matrix_transpose", (x,)), ("diagonal", (x,)), ("trace", (x,)),
                       ("vecdot", (x, y)), ("outer", (v, w)), ("matmul", (x, y)),
                       ("tensordot", (x, np.moveaxis(y, 0, -1)))]:
        fn = getattr(np.linalg, name)
        np.testing.assert_allclose(dualad.jvp(fn, args, args)[0], fn(*args), err_msg=name)
        check(fn, *args, order=1, batch=False)


@pytest.mark.parametrize("batch", [(), (2,)])
def test_lu(batch):
    a = RNG.standard_normal(batch + (3, 3))
    p, low, up = dualad.jvp(lambda x: dsl.lu(x), (a,), (a,))[0]
    for x, y in zip((p, low, up), sl.lu(a)):
        np.testing.assert_allclose(x, y, atol=1e-14)
    check(lambda x: dsl.lu(x)[1:], a)
    check(lambda x: dsl.lu_factor(x)[0], a)
    check(lambda x: dsl.lu(x, permute_l=True), a, order=1)


@pytest.mark.parametrize("trans", [0, 1])
@pytest.mark.parametrize("bshape", [(3,), (3, 2)])
def test_lu_solve(trans, bshape):
    a, b = well(3, seed=27)[::-1].copy(), RNG.standard_normal(bshape)
    f = lambda x, y: dsl.lu_solve(dsl.lu_factor(x), y, trans=trans)  # noqa: E731
    np.testing.assert_allclose(dualad.jvp(f, (a, b), (a, b))[0],
                               sl.lu_solve(sl.lu_factor(a), b, trans=trans))
    check(f, a, b, order=2 if trans == 0 else 1)


# eigh/eigvalsh, eig, svd and norm take complex input: tests/dualad/ops/test_complex_linalg.py
@pytest.mark.parametrize("fn", [np.linalg.cholesky, np.linalg.qr, np.linalg.pinv,
                                lambda x: np.linalg.slogdet(x)[1], dsl.lu])
def test_complex_non_holomorphic_refused(fn):
    a = (spd(2, seed=28) + 0.1j * np.eye(2)).astype(complex)
    with pytest.raises(NotImplementedError, match="is complex; .* not holomorphic"):
        dualad.jvp(fn, (a,), (a,))
