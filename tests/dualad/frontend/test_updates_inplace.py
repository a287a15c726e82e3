"""In-place updates of traced arrays: ``y[i] = v``, ``y += v``, ufunc ``out=``, ``np.add.at``.

The oracle for values is NumPy itself: each function below is plain NumPy code, run on
plain arrays; derivatives are checked with finite differences (check_grads: forward and
reverse mode, order 2) and against the same function written functionally."""
import copy

import numpy as np
import pytest

import dualad
from dualad import jacobians
from dualad.autograd import Variable
from dualad.frontend.inplace import at
from dualad.verification import check_grads

Y = np.array([0.9, 1.4, -0.6, 0.3, 1.1])


def _same_as_numpy(f, x=Y):
    """``f``'s value traced (both modes) equals NumPy's, and its derivatives pass."""
    expected = f(np.array(x, copy=True))
    np.testing.assert_allclose(dualad.jvp(f, (x,), (np.ones_like(x),))[0], expected)
    np.testing.assert_allclose(dualad.vjp(f, x)[0], expected)
    check_grads(f, (x,), order=2)


# --- ODE right-hand side and finite-volume residual --------------------------------------------
def lorenz96(y, forcing=8.0):
    """dy_i/dt = (y_{i+1} - y_{i-2}) y_{i-1} - y_i + F, boundaries written entry by entry."""
    n = len(y)
    d = np.zeros_like(y)
    for i in range(n):
        d[i] = (y[(i + 1) % n] - y[i - 2]) * y[i - 1] - y[i]
    d += forcing
    return d


def lorenz96_functional(y, forcing=8.0):
    n = len(y)
    return dualad.numpy.stack([(y[(i + 1) % n] - y[i - 2]) * y[i - 1] - y[i] + forcing
                               for i in range(n)])


def burgers_residual(u, dx=0.1):
    """Finite volumes for u_t + (u²/2)_x = ν u_xx: each face's flux leaves one cell and
    enters the next (np.add.at / np.subtract.at over the face list), fixed boundaries."""
    flux = 0.25 * (u[:-1] ** 2 + u[1:] ** 2) - 0.05 * (u[1:] - u[:-1]) / dx
    res = np.zeros_like(u)
    left = np.arange(len(u) - 1)
    np.subtract.at(res, left, flux)
    np.add.at(res, left + 1, flux)
    res[0] = u[0] - 1.0
    res[-1] -= u[-1]
    res /= dx
    return res


def burgers_functional(u, dx=0.1):
    flux = 0.25 * (u[:-1] ** 2 + u[1:] ** 2) - 0.05 * (u[1:] - u[:-1]) / dx
    res = at(np.zeros(len(u)))[:-1].subtract(flux)
    res = at(res)[1:].add(flux)
    res = at(res)[0].set(u[0] - 1.0)
    res = at(res)[-1].subtract(u[-1])
    return res / dx


@pytest.mark.parametrize("f, g", [(lorenz96, lorenz96_functional),
                                  (burgers_residual, burgers_functional)])
def test_in_place_code_against_numpy_finite_differences_and_functional(f, g):
    _same_as_numpy(f)
    J = jacobians.jacfwd(g)(Y)
    np.testing.assert_allclose(jacobians.jacfwd(f)(Y), J, atol=1e-12)
    np.testing.assert_allclose(jacobians.jacrev(f)(Y), J, atol=1e-12)
    S = jacobians.sparse_jacobian(f)(Y)
    np.testing.assert_allclose(S.toarray(), J, atol=1e-12)
    assert S.nnz == np.count_nonzero(jacobians.sparse_jacobian(g)(Y).toarray())
    loss = lambda y: np.sum(f(y) ** 2)   # noqa: E731
    np.testing.assert_allclose(jacobians.hessian(loss)(Y),
                               jacobians.hessian(lambda y: np.sum(g(y) ** 2))(Y), atol=1e-10)
    np.testing.assert_allclose(dualad.grad(lambda y: np.sum(dualad.grad(loss)(y) ** 2))(Y),
                               dualad.grad(lambda y: np.sum(dualad.grad(
                                   lambda z: np.sum(g(z) ** 2))(y) ** 2))(Y), rtol=1e-10)


def test_a_recurrence_written_into_an_array():
    def f(x):
        y = np.zeros_like(x)
        y[0] = x[0]
        for i in range(1, len(x)):
            y[i] = 0.5 * y[i - 1] ** 2 + x[i]
        return y
    _same_as_numpy(f)


# --- semantics: what a value captured before an update holds ----------------------------------
def test_values_captured_before_an_update_keep_their_value():
    def f(x):
        y = x * 1.0
        before = y * 2.0          # a consumer recorded before the update
        first = y[0]              # a 0-d entry: a NumPy scalar, a copy
        y[0] = x[1] ** 3
        y[1:3] *= x[3]
        return np.stack([np.sum(before), first, np.sum(y * x)])
    _same_as_numpy(f)


def test_scalars_rebind_as_numpy_scalars_do():
    def f(x):
        s = np.sum(x)
        t = s
        s += 1.0                  # NumPy scalars are immutable: t keeps the old value
        s *= x[0]
        return np.stack([s, t])
    _same_as_numpy(f)


def test_an_alias_sees_the_update():
    def f(x):
        y = x * 1.0
        alias = y
        y += x ** 2
        y[2] -= 1.0
        return alias * 3.0
    _same_as_numpy(f)


# --- views -----------------------------------------------------------------------------------
def test_a_view_sees_updates_of_its_base_and_writes_it():
    def f(x):
        y = x * 1.0
        z = y[1:]                 # a view
        w = z[::2]                # a view of a view: y[1], y[3]
        y[2] = x[0] ** 3          # z[1] changes
        z[0] = np.sin(x[3])       # y[1] and w[0] change
        w[1] += x[4]              # y[3] and z[2] change
        return np.concatenate([y, z, w])
    _same_as_numpy(f)


def test_rows_of_a_matrix_are_views():
    def f(x):
        m = np.outer(x[:3], x[2:])
        row = m[1]
        m[1, 2] = x[0]            # row[2] changes
        row[0] = x[1] ** 2        # m[1, 0] changes
        col = m[:, 1]
        col *= 2.0
        return np.concatenate([m.ravel(), row, col])
    _same_as_numpy(f, Y[:5])


def test_advanced_indices_and_copies_are_not_views():
    def f(x):
        y = x * 1.0
        a = y[[0, 1]]             # advanced index: a copy
        b = y[1:].copy()
        c = np.copy(y)
        d = copy.copy(y)
        e = copy.deepcopy(y)
        y[:] = 0.0
        a[0] = 5.0                # y unchanged
        return np.concatenate([y, a, b, c, d, e])
    _same_as_numpy(f)


# --- indices -------------------------------------------------------------------------------------
def test_masks_repeated_and_empty_indices():
    def f(x):
        y = x * x
        y[x > 1.0] = 0.0          # a mask computed from the values (a decision)
        y[[0, 0, 2]] = x[1:4]     # repeated: the last write wins
        y[[]] = 7.0
        y[np.zeros(5, bool)] = 7.0
        y[...] += x[4]
        return y
    _same_as_numpy(f)


def test_float32_stays_float32():
    x32 = Y.astype(np.float32)

    def f(x):
        y = np.zeros_like(x)
        y[1:] = x[:-1] * 2.0      # a float64 product cast into float32, as NumPy casts
        y += x
        return y
    val, tan = dualad.jvp(f, (x32,), (np.ones(5, np.float32),))
    assert val.dtype == np.float32 and tan.dtype == np.float32
    np.testing.assert_allclose(val, f(x32.copy()), rtol=1e-6)
    check_grads(f, (x32,), order=2)


# --- ufuncs: out= and .at ------------------------------------------------------------------------
def test_ufunc_out_and_at_on_traced_arrays():
    def f(x):
        y = np.zeros_like(x)
        r = np.multiply(x, x, out=y)
        assert r is y             # NumPy returns out
        np.add(y, x[0], out=y)
        np.add.at(y, [0, 0, 4], x[:3])
        np.maximum.at(y, [1, 1], x[2:4] * 10.0)
        np.minimum.at(y, np.array([3]), -x[4])
        np.multiply.at(y, [2, 2], x[:2])
        np.subtract.at(y, slice(0, 2), x[3])
        np.divide.at(y, [4], x[1])
        np.power.at(y, [2], 2.0)
        return y
    _same_as_numpy(f)


# --- what raises -----------------------------------------------------------------------------------
def _raises(f, match, exc=TypeError):
    for run in (lambda: dualad.grad(lambda x: np.sum(f(x)))(Y),
                lambda: dualad.jvp(f, (Y,), (Y,))):
        with pytest.raises(exc, match=match):
            run()


def test_plain_targets_show_the_two_ways():
    def iadd(x):
        acc = np.zeros(5)
        acc += x
        return acc

    def add_at(x):
        a = np.zeros(5)
        np.add.at(a, [0, 1], x[:2])
        return a

    def out(x):
        return np.sin(x, out=np.empty(5))
    for f in (iadd, add_at, out):
        _raises(f, r"plain array of shape \(5,\).*np.zeros_like\(x\).*dualad.lax.at")
    _raises(iadd, r"numpy.add\(\.\.\., out=\.\.\.\) \(as a \+= x runs it\)")


def test_writing_into_an_input_in_reverse_mode_raises():
    def f(x):
        x[0] = 1.0
        return x
    with pytest.raises(TypeError, match=r"input of the function.*x.copy\(\)"):
        dualad.grad(lambda x: np.sum(f(x)))(Y)
    np.testing.assert_allclose(dualad.jvp(f, (Y,), (np.ones(5),))[1], [0, 1, 1, 1, 1])


def test_imperative_tape_lazy_jvp_and_inner_values_raise():
    v = Variable(Y, requires_grad=True)
    y = v * 2.0
    with pytest.raises(TypeError, match="imperative API.*at\\[idx\\].set"):
        y[0] = 1.0

    def f(x):
        y = x * 1.0
        y[0] = 2.0
        return y
    with pytest.raises(TypeError, match="lazy=True"):
        dualad.jvp(f, (Y,), (Y,), lazy=True)

    def outer(x):
        y = x * 1.0

        def inner(s):
            y[0] = s              # an inner traced value into an outer array
            return s
        dualad.grad(inner)(1.0)
        return y
    with pytest.raises(TypeError, match="different \\(inner\\) transformation"):
        dualad.grad(lambda x: np.sum(outer(x)))(Y)


def test_shape_and_dtype_errors():
    def grow(x):
        y = x[:1] * 1.0
        y += x                    # (1,) += (5,): NumPy's non-broadcastable output
        return y
    _raises(grow, r"non-broadcastable output operand with shape \(1,\)", ValueError)

    def to_int(x):
        y = np.zeros(5, dtype=int)
        return at(y)[0].set(x[0])
    _raises(to_int, "dtype int64")


# --- the other interpreters -----------------------------------------------------------------------
def _assembled(x):
    y = np.zeros_like(x)
    y[0] = x[0] * x[1]
    y[1:] += np.sin(x[:-1])
    z = y[1:]
    z[0] *= 2.0
    np.add.at(y, [2, 2], x[1:3])
    return y


def test_sympy_values_pattern_and_census_interpreters():
    from dualad.verification import symbolic
    assert symbolic.compare(_assembled, [(4,)], mode="forward") == (True, "symbolic")
    assert symbolic.compare(_assembled, [(4,)], mode="reverse") == (True, "symbolic")
    x = np.array([0.3, 0.5, 0.7, 0.9])
    plan = jacobians.plan(_assembled, x)
    assert "6 structural nonzeros of 4 x 4" in plan.explain()
    np.testing.assert_allclose(plan(x).toarray() if hasattr(plan(x), "toarray") else plan(x),
                               jacobians.jacfwd(_assembled)(x))


def test_a_counting_trace_raises():
    from dualad.teaching.opcount import count_ops
    with pytest.raises(TypeError, match="counting trace"):
        count_ops(_assembled, np.ones(4))


def test_methods_and_the_other_operators():
    def f(x):
        y = x * 3.0
        y.sort()
        z = x * 1.0
        z //= 0.5                 # zero derivative, NumPy's value
        w = x * 1.0
        w %= 0.7
        u = x * 1.0
        u.fill(x[0])
        m = np.outer(x[:2], x[:2])
        m @= np.array([[1.0, 2.0], [0.5, -1.0]])
        return np.concatenate([y, z, w, u, m.ravel()])
    _same_as_numpy(f, np.array([0.33, -1.2, 0.81, 0.52]))
    with pytest.raises(NotImplementedError, match="numpy.negative.at"):
        dualad.grad(lambda x: np.sum(np.negative.at(x * 1.0, [0]) or x))(Y)


def test_hvp_and_third_derivative_of_in_place_code():
    """Forward-over-reverse (the lazy forward sweep under the tape) and nested forward
    mode: the in-place residual against its functional twin."""
    v = np.linspace(-1.0, 1.0, 5)
    loss = lambda y: np.sum(burgers_residual(y) ** 3)             # noqa: E731
    twin = lambda y: np.sum(burgers_functional(y) ** 3)           # noqa: E731
    np.testing.assert_allclose(dualad.hvp(loss, Y, v), jacobians.hessian(twin)(Y) @ v,
                               rtol=1e-10)
    np.testing.assert_allclose(dualad.derivative(lambda t: loss(Y + t * v), 3)(0.0),
                               dualad.derivative(lambda t: twin(Y + t * v), 3)(0.0), rtol=1e-10)


def test_ufunc_where_with_a_traced_out_is_numpys_masked_write():
    """np.divide(1, x, out=o, where=mask): o keeps its entries where the mask is False
    (NumPy's meaning), in both modes against finite differences; no inf from the
    unselected 1/0 reaches the derivative."""
    def f(x):
        o = x * 2.0                     # traced: the unselected entries keep 2x
        np.divide(1.0, x, out=o, where=np.abs(x) > 0.5)
        return np.sum(o ** 2)
    check_grads(f, (np.array([0.0, 0.9, -1.3]),))
