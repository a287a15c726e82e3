"""Rearranging and building arrays (issue 4): take, pad, roll, splits, stacking,
insert/delete, select/choose, kron, cross, linspace, meshgrid, interp, convolve,
polyval, ..., traced against NumPy in both modes, batched, to order 2."""
import warnings

import numpy as np
import pytest

import dualad
import dualad.numpy as dnp

from coverage_helpers import both_modes_grad, check

R = np.random.default_rng(3)
X23 = R.normal(size=(2, 3))
X34 = R.normal(size=(3, 4))
X5 = R.normal(size=5)
X4 = R.normal(size=4)
X3 = R.normal(size=3)
X234 = R.normal(size=(2, 3, 4))
V3 = R.normal(size=(4, 3))


def _cat(*xs):
    return np.concatenate([np.ravel(x) for x in xs])


ARRAYS = {
    "take": (lambda x: np.take(x, [[0, 2], [3, 3]], axis=1), (X34,)),
    "take_flat_modes": (lambda x: _cat(np.take(x, [1, 11, 0]), np.take(x, [-1, 13], mode="wrap"),
                                       np.take(x, [-3, 20], mode="clip"), np.take(x, 4)), (X34,)),
    "take_along_axis": (lambda x: np.take_along_axis(x, np.argsort(x * 0 + X34, axis=0)[:2],
                                                     axis=0), (X34,)),
    "take_along_axis_none": (lambda x: np.take_along_axis(x, np.array([3, 0, 0]), axis=None),
                             (X23,)),
    "repeat": (lambda x: np.repeat(x, [1, 0, 3], axis=1), (X23,)),
    "repeat_flat": (lambda x: np.repeat(x, 2), (X23,)),
    "tile": (lambda x: np.tile(x, (2, 1, 2)), (X23,)),
    "tile_scalar_reps": (lambda x: np.tile(x, 3), (X3,)),
    "resize": (lambda x: np.resize(x, (4, 5)), (X23,)),
    "pad_constant": (lambda x: np.pad(x, ((1, 2), (0, 3)),
                                      constant_values=((1.5, 2.0), (3.0, 4.0))), (X23,)),
    "pad_traced_value": (lambda x, c: np.pad(x, 2, constant_values=c), (X23, np.float64(0.7))),
    "pad_traced_pairs": (lambda x, c: np.pad(x, ((1, 1), (2, 0)), constant_values=c),
                         (X23, R.normal(size=(2, 2)))),
    "pad_edge": (lambda x: np.pad(x, ((2, 1), (1, 3)), mode="edge"), (X23,)),
    "pad_reflect": (lambda x: np.pad(x, ((1, 1), (2, 5)), mode="reflect"), (X23,)),
    "pad_symmetric": (lambda x: np.pad(x, 4, mode="symmetric"), (X23,)),
    "pad_wrap": (lambda x: np.pad(x, ((3, 2), (1, 4)), mode="wrap"), (X23,)),
    "roll": (lambda x: np.roll(x, 2), (X34,)),
    "roll_axes": (lambda x: np.roll(x, (1, -5), axis=(0, 1)), (X34,)),
    "rot90": (lambda x: _cat(np.rot90(x), np.rot90(x, 2), np.rot90(x, -1, axes=(1, 2))), (X234,)),
    "flips": (lambda x: _cat(np.fliplr(x), np.flipud(x)), (X34,)),
    "rollaxis": (lambda x: _cat(np.rollaxis(x, 2), np.rollaxis(x, 0, 3), np.rollaxis(x, 1, -1)),
                 (X234,)),
    "split": (lambda x: _cat(*np.split(x, 2, axis=1)) * np.arange(12), (X34,)),
    "array_split": (lambda x: _cat(*[s * (i + 1) for i, s in enumerate(np.array_split(x, 3))]),
                    (X5,)),
    "split_indices": (lambda x: _cat(*[s * (i + 1) for i, s in enumerate(np.split(x, [1, 3],
                                                                              axis=1))]), (X34,)),
    "hvdsplit": (lambda x: _cat(np.hsplit(x, 3)[1], np.vsplit(x, [1])[1], np.dsplit(x, 2)[0]),
                 (X234,)),
    "unstack": (lambda x: np.unstack(x, axis=1)[2] * 2.0, (X34,)),
    "atleast": (lambda x: _cat(np.atleast_3d(x), *np.atleast_3d(x[0], x[0, 0]),
                               *np.atleast_1d(x, x[0, 0]), np.atleast_2d(x[0])), (X23,)),
    "dstack": (lambda x, y: np.dstack([x, y[:2, :3], 2.0 * x]), (X23, X34)),
    "column_stack": (lambda x, y: np.column_stack([x[0], y[:3, :2], x[1]]), (X23, X34)),
    "append": (lambda x, y: np.append(x, y), (X23, X3)),
    "append_axis": (lambda x, y: np.append(x, y[None], axis=0), (X23, X3)),
    "insert": (lambda x, v: np.insert(x, 1, v, axis=1), (X23, np.array([5.0, 6.0]))),
    "insert_many": (lambda x, v: np.insert(x, [0, 2, 2], v), (X23, X3)),
    "insert_scalar": (lambda x: np.insert(x, slice(0, 3), 9.0, axis=1), (X34,)),
    "delete": (lambda x: np.delete(x, [0, 2], axis=1), (X34,)),
    "delete_flat": (lambda x: np.delete(x, slice(1, 8, 3)), (X34,)),
    "block": (lambda x, y: np.block([[x, x[:, :1]], [y[:1, :3], y[:1, :1]]]), (X23, X34)),
    "block_1d": (lambda x: np.block([x, x[:2], 3.0 * x]), (X3,)),
    "broadcast_arrays": (lambda x, y: _cat(*np.broadcast_arrays(x, y)), (X3, X23[:, :1])),
    "extract_compress": (lambda x: _cat(np.extract(X34 > 0, x), np.compress([0, 1, 1], x, axis=0),
                                        np.compress([1, 0, 1, 1], x)), (X34,)),
    "trim_zeros": (lambda x: np.trim_zeros(x * np.array([0, 1, 1, 0, 0.0]), "f"), (X5,)),
    "matrix_transpose": (lambda x: np.matrix_transpose(x) + np.permute_dims(x, (0, 2, 1)),
                         (X234,)),
    "copy_concat": (lambda x: np.concat([np.copy(x), x]), (X23,)),
    "joining_dtype": (lambda x, y: _cat(np.vstack([x, y], dtype=np.float64, casting="no"),
                                        np.hstack([x, y], dtype=float, casting="safe"),
                                        np.stack([x, y], axis=1, dtype=np.float64),
                                        np.concatenate([x, y], dtype=None, casting="equiv")),
                      (X3, X3[::-1])),
}
if hasattr(np, "row_stack"):   # deprecated in NumPy 2.0, gone in 2.5
    # dtype=/casting= of the joining family (NumPy 2's row_stack passes both to vstack)
    ARRAYS["row_stack"] = (lambda x, y: np.row_stack([x, y[:3], 2.0 * x]), (X3, X4))

BUILD = {
    "select": (lambda x, y: np.select([x > 0.5, y > 0], [x, y * 2.0], default=-x), (X23, X3)),
    "choose": (lambda x, y: np.choose(np.array([[0, 1, 2], [2, 1, 0]]), [x, y, x * y]), (X23, X3)),
    "choose_modes": (lambda x: _cat(np.choose(np.array([0, 3, -1]), x, mode="wrap"),
                                    np.choose(np.array([0, 7, -1]), x, mode="clip")), (X23,)),
    "kron": (lambda a, b: np.kron(a, b), (X23, X34)),
    "kron_mixed_ndim": (lambda a, b: np.kron(a, b), (X3, X23)),
    "cross": (lambda a, b: np.cross(a, b), (V3, R.normal(size=(4, 3)))),
    "cross_axes": (lambda a, b: np.cross(a, b, axisa=0, axisb=1, axisc=0), (V3.T, V3)),
    "vecdot_matvec": (lambda a, b: _cat(np.vecdot(a, b), np.matvec(X34, a[:, :1].T[0]),
                                        np.vecmat(a[:, 0], b)), (V3, R.normal(size=(4, 3)))),
    "linspace": (lambda a, b: np.linspace(a, b, 7), (np.float64(0.3), np.float64(2.0))),
    "linspace_arrays": (lambda a, b: np.linspace(a, b, 4, endpoint=False, axis=1), (X3, X23)),
    "linspace_retstep": (lambda a, b: _cat(*np.linspace(a, b, 5, retstep=True)), (X3, X3 + 1)),
    "logspace": (lambda a, b, base: np.logspace(a, b, 5, base=base), (X3, X3 + 1, np.float64(2.5))),
    "geomspace": (lambda a, b: np.geomspace(a, b, 6), (np.array([0.5, -2.0]),
                                                       np.array([8.0, -0.1]))),
    "geomspace_no_endpoint": (lambda a, b: np.geomspace(a, b, 4, endpoint=False),
                              (np.float64(1.5), np.float64(30.0))),
    "meshgrid": (lambda x, y: _cat(*np.meshgrid(x, y)), (X3, X4)),
    "meshgrid_ij_sparse": (lambda x, y, z: _cat(*np.meshgrid(x, y, z, indexing="ij", sparse=True),
                                                *np.meshgrid(x, y, z)), (X3, X4, X5[:2])),
    "interp": (lambda x, xp, fp: np.interp(x, xp, fp),
               (np.array([-0.5, 0.1, 0.75, 1.3, 2.2, 3.5]), np.array([0.0, 0.5, 1.0, 2.0, 3.0]),
                X5)),
    "interp_left_right": (lambda x, fp, l, r: np.interp(x, np.array([0.0, 1.0, 3.0]), fp, l, r),
                          (np.array([-1.0, 0.4, 2.5, 4.0]), X3, np.float64(-3.0),
                           np.float64(7.0))),
    "interp_period": (lambda x, fp: np.interp(x, np.array([-170.0, -60.0, 10.0, 100.0]), fp,
                                              period=360.0),
                      (np.array([-200.0, -100.0, 0.5, 150.0, 400.0]), X4)),
    "bincount": (lambda w: np.bincount(np.array([0, 3, 3, 1]), weights=w, minlength=6), (X4,)),
    "vander": (lambda x: np.vander(x) + np.vander(x, 2, increasing=True).sum(), (X3,)),
    "cov": (lambda x: np.cov(x), (X34,)),
    "cov_weights": (lambda x, y, w: np.cov(x, y, rowvar=False, aweights=w, fweights=[1, 2, 1]),
                    (X34[:, :2], X3, R.uniform(0.5, 2, 3))),
    "corrcoef": (lambda x: np.corrcoef(x), (X34,)),
    "convolve": (lambda a, v: _cat(np.convolve(a, v), np.convolve(v, a, "same"),
                                   np.convolve(a, v, "valid"), np.convolve(v, a, "valid")),
                 (X5, X3)),
    "correlate": (lambda a, v: _cat(np.correlate(a, v), np.correlate(v, a, "same"),
                                    np.correlate(a, v, "full")), (X5, X3)),
    "polyval": (lambda p, x: np.polyval(p, x), (X4, X23)),
    "polyval_scalar": (lambda p, x: np.polyval(p, x), (X3, np.float64(0.7))),
    "poly_helpers": (lambda p, q: _cat(np.polyder(p, 2), np.polyint(p, 2, k=[1.0, 2.0]),
                                       np.polyadd(p, q), np.polysub(q, p), np.polymul(p, q)),
                     (X4, X3)),
}


@pytest.mark.parametrize("name", sorted(ARRAYS))
def test_arrays(name):
    f, args = ARRAYS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        check(f, *args)


@pytest.mark.parametrize("name", sorted(BUILD))
def test_build(name):
    f, args = BUILD[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        check(f, *args, value_rtol=1e-12)


def _numpy_crosses_2_vectors():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            np.cross([1.0, 0.0], [0.0, 1.0])
        except ValueError:   # NumPy >= 2.5
            return False
    return True


def test_cross_of_2_vectors():
    # 2-vectors: deprecated in NumPy 2.0, an error from 2.5 on; traced calls do the same
    if _numpy_crosses_2_vectors():
        with pytest.warns(DeprecationWarning):
            check(lambda a, b: np.cross(a, b), X34[:, :2], X34[:, 2:])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            check(lambda a, b: _cat(np.cross(a[:, :2], b), np.cross(b, a[:, :2])),
                  V3, R.normal(size=(4, 3)), value_rtol=1e-12)
        return
    for a, b in ((X34[:, :2], X34[:, 2:]), (V3[:, :2], R.normal(size=(4, 3)))):
        with pytest.raises(ValueError, match=r"cross: .*length 2 and [23] \(shapes \([34], 2\)"):
            dualad.grad(lambda a: np.sum(np.cross(a, b)))(a)


def test_full_and_empty_like():
    g = dualad.grad(lambda v: np.sum(dnp.full((2, 2), v) * X23[:, :2]))(0.5)
    assert np.isclose(g, X23[:, :2].sum())
    out = dualad.jvp(lambda x: np.empty_like(x).shape, (X23,), (X23,))[0]
    assert out == (2, 3)


def test_row_stack_and_the_joining_dtype_casting_arguments():
    from dualad.verification import check_grads
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        if hasattr(np, "row_stack"):   # gone in NumPy 2.5: only the joining functions below
            check_grads(lambda x, y: np.row_stack([x, y]), (X3, X3 + 1.0), order=2)
            v = dualad.jvp(lambda x, y: np.row_stack((x, y)), (X3, X4[:3]), (X3, X3))[0]
            np.testing.assert_array_equal(v, np.row_stack((X3, X4[:3])))
    for fn in (np.concatenate, np.stack, np.vstack, np.hstack):
        check_grads(lambda x, y: fn([x, y], dtype=np.float64, casting="same_kind"), (X3, X4[:3]),
                    order=2)
        # a floating dtype casts: float32 values and tangents, float64 cotangents of float64
        f = lambda x, y: fn([x, 2.0 * y], dtype=np.float32)  # noqa: E731
        val, tan = dualad.jvp(f, (X3, X4[:3]), (X3, X3))
        assert val.dtype == tan.dtype == np.float32
        np.testing.assert_array_equal(val, fn([X3, 2.0 * X4[:3]], dtype=np.float32))
        np.testing.assert_allclose(tan, fn([X3, 2.0 * X3]).astype(np.float32), rtol=1e-6)
        g = dualad.grad(lambda x, y: np.sum(f(x, y)), argnums=(0, 1))(X3, X4[:3])
        assert g[0].dtype == np.float64
        np.testing.assert_allclose(g[0], np.ones(3))
        np.testing.assert_allclose(g[1], 2.0 * np.ones(3))
        check_grads(lambda x: fn([x, X3], dtype=np.float64), (X4[:3].astype(np.float32),),
                    order=2)      # float32 in, float64 out
        # casting rules as NumPy's, errors naming the function, the argument and the shape
        with pytest.raises(TypeError, match=fn.__name__ + r": cannot cast array 0 \(shape "
                           r"\(3,\)\) from dtype\('float64'\) to dtype\('float32'\) .*'safe'"):
            dualad.grad(lambda x: np.sum(fn([x, x], dtype=np.float32, casting="safe")))(X3)
        with pytest.raises(TypeError):   # and NumPy raises too
            fn([X3, X3], dtype=np.float32, casting="safe")
        with pytest.raises(TypeError, match=fn.__name__ + r": dtype=int64 would drop the "
                           r"derivative of the traced array 1 \(shape \(3,\)\)"):
            dualad.grad(lambda x: np.sum(fn([X3, x], dtype=np.int64, casting="unsafe")))(X3)
        with pytest.raises(TypeError, match=fn.__name__ + ".*'float64'.*'int64'.*'same_kind'"):
            dualad.grad(lambda x: np.sum(fn([x, x], dtype=np.int64)))(X3)
        with pytest.raises(ValueError, match="casting must be one of"):
            dualad.grad(lambda x: np.sum(fn([x, x], casting="bogus", dtype=float)))(X3)
    # a complex cotangent reaching the float32 cast (an imaginary part riding along)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f = lambda x: np.sum(np.real(np.concatenate([x, x * x], dtype=np.float32)  # noqa: E731
                                     * (1 + 2j)))
        np.testing.assert_allclose(dualad.grad(f)(X3), 1 + 2 * X3, rtol=1e-6)
    with pytest.raises(TypeError, match=r"concatenate: out= writes in place"):
        dualad.grad(lambda x: np.sum(np.concatenate([x, x], out=np.zeros(6))))(X3)
    mixed = dualad.jvp(lambda x: np.concatenate([x, np.arange(2)], casting="safe"), (X3,),
                       (X3,))
    np.testing.assert_array_equal(mixed[1], np.concatenate([X3, [0.0, 0.0]]))
    with pytest.raises(TypeError, match=r"concatenate: cannot cast array 1 \(shape \(2,\)\) "
                       r"from dtype\('int64'\) to dtype\('float64'\) .*'no'"):
        dualad.grad(lambda x: np.sum(np.concatenate([x, np.arange(2)], casting="no")))(X3)


def test_interp_kinks_use_the_slope_to_the_right():
    xp, fp = np.array([0.0, 1.0, 3.0]), np.array([0.0, 2.0, 3.0])
    for g in both_modes_grad(lambda x: np.interp(x, xp, fp), np.array([0.0, 1.0, 3.0, -1.0, 5.0])):
        np.testing.assert_array_equal(g, [2.0, 0.5, 0.0, 0.0, 0.0])
    y = dualad.jvp(lambda x: np.interp(x, xp, fp), (xp,), (np.ones(3),))[0]
    np.testing.assert_array_equal(y, fp)    # exact values at the knots, as NumPy


def test_pad_modes_not_supported_raise():
    with pytest.raises(NotImplementedError, match="pad: mode 'mean'"):
        dualad.grad(lambda x: np.sum(np.pad(x, 1, mode="mean")))(X23)
    with pytest.raises(NotImplementedError, match="odd"):
        dualad.grad(lambda x: np.sum(np.pad(x, 1, mode="reflect", reflect_type="odd")))(X23)


def test_take_and_split_errors():
    with pytest.raises(IndexError, match="take: index out of bounds"):
        dualad.grad(lambda x: np.sum(np.take(x, [12])))(X34)
    with pytest.raises(ValueError, match="equal division"):
        dualad.grad(lambda x: np.sum(np.split(x, 3, axis=1)[0]))(X34)
    with pytest.raises(ValueError, match="convolve: a cannot be empty"):
        dualad.grad(lambda x: np.sum(np.convolve(x[:0], x)))(X5)
    with pytest.raises(ValueError, match="select"):
        dualad.grad(lambda x: np.sum(np.select([x > 0], [x, x])))(X5)


FUNCTIONAL = {
    "piecewise": (lambda x: np.piecewise(x, [x < -0.5, x > 0.5], [lambda v: v ** 2, np.sin,
                                                                  lambda v: 3.0 * v]), (X34,)),
    "piecewise_constants": (lambda x: np.piecewise(x, [X34 < 0, X34 > 1], [-1.0, lambda v: v]),
                            (X34,)),
    "piecewise_scalar": (lambda x: np.piecewise(x, x > 0, [lambda v: v ** 3, lambda v: -v]),
                         (np.float64(0.7),)),
    "apply_along_axis": (lambda x: np.apply_along_axis(lambda v: np.stack([v.sum(), v @ v]), 1,
                                                       x), (X234,)),
    "apply_along_axis_scalar": (lambda x: np.apply_along_axis(np.max, 0, x), (X34,)),
    "apply_over_axes": (lambda x: np.apply_over_axes(np.sum, x, [0, 2]), (X234,)),
    "unwrap": (lambda p: np.unwrap(p), (np.array([0.0, 2.0, 4.5, 6.0, 1.0, -2.5]),)),
    "diagflat": (lambda v: np.diagflat(v, 1), (X23,)),
    "row_stack_astype": (lambda x, y: np.astype(np.vstack([x, y]), np.float64), (X23, X3)),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONAL))
def test_functional(name):
    f, args = FUNCTIONAL[name]
    check(f, *args)


def test_piecewise_evaluates_each_function_only_on_its_entries():
    x = np.array([-4.0, 1.0, 9.0])
    with np.errstate(invalid="raise"):   # sqrt of a negative entry would raise
        g = dualad.grad(lambda x: np.sum(np.piecewise(x, [x >= 0], [np.sqrt, lambda v: -v])))(x)
    np.testing.assert_allclose(g, [-1.0, 0.5, 1 / 6])


def test_einsum_path_passes_through():
    path = dualad.jvp(lambda a: np.einsum_path("ij,jk->ik", a, X34)[0], (X23[:, :3],),
                      (np.ones((2, 3)),))[0]
    assert path == np.einsum_path("ij,jk->ik", X23[:, :3], X34)[0]


def test_full_like_keeps_the_derivative_of_a_traced_fill_value():
    g = dualad.grad(lambda x, v: np.sum(np.full_like(x, v) * X23), argnums=(0, 1))(X23, 0.5)
    np.testing.assert_array_equal(g[0], np.zeros((2, 3)))
    assert np.isclose(g[1], X23.sum())
    out = dualad.jvp(lambda x: np.full_like(x, 3.0), (X23,), (X23,))[0]
    np.testing.assert_array_equal(out, np.full((2, 3), 3.0))
