"""numpy.fft in both modes: values, derivatives against JAX and the numeric oracles,
every norm, padding and cropping, batched tangents and cotangents, second order.

Expected values marked JAX were computed once with jax (float64) and are encoded
here, so jax stays out of the test suite.
"""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import dualad
from dualad.core.primitive import REGISTRY
from dualad.verification import check_grads, check_rule

NORMS = ["backward", "ortho", "forward"]
A = np.array([0.3, -1.0, 2.0, 0.5, -0.7])
B = np.array([[0.2 + 0.1j, -1.0 + 0.5j, 0.4], [1.5 - 0.2j, 0.3 + 0.3j, -0.6 - 1j]])

JAX = {
    'fft_abs2_backward': [-5.782971010998239, -151.31966011250105, 242.05278640450004, 48.94427190999917, -122.89442719099995],
    'rfft_backward': [8.0, -2.767949192431123, 5.232050807568877, 0.0, 1.7679491924311228],
    'irfft_backward': [[(2.5+0j), (-1-1j), (-0.5+0j)], [(2.5+0j), (-1-1j), (-0.5+0j)]],
    'fft2_backward': [[(17.33409129066459-9.628187804748737j), (-51.31906628515954-34.48999403350793j), (8.554992123899297+16.817251380219638j)], [(72.4599549082264+3.3686069736355533j), (2.523391176151037-29.783795954652064j), (-37.249997820524534+58.32988146152501j)]],
    'fft_abs2_ortho': [-1.1565942021996456, -30.263932022500207, 48.41055728090001, 9.788854381999837, -24.578885438199983],
    'rfft_ortho': [3.265986323710904, -1.1300105259008362, 2.135975797810068, 2.220446049250313e-16, 0.7217622354369728],
    'irfft_ortho': [[(5+0j), (-2-2j), (-1+0j)], [(5+0j), (-2-2j), (-1+0j)]],
    'fft2_ortho': [[(1.1794355226930602-0.6551152019256147j), (-3.4918201798530104-2.3467468503814097j), (0.5820934849189501+1.144269021045952j)], [(4.9302754530620065+0.22920467303856026j), (0.17169502230587663-2.026530630335205j), (-2.5345413216686286+3.9688457316045618j)]],
    'fft_abs2_forward': [-0.23131884043992912, -6.052786404500043, 9.682111456180003, 1.9577708763999677, -4.915777087639998],
    'rfft_forward': [1.3333333333333333, -0.46132486540518713, 0.8720084679281461, -1.1102230246251565e-16, 0.2946581987385204],
    'irfft_forward': [[(10+0j), (-4-4j), (-2+0j)], [(10+0j), (-4-4j), (-2+0j)]],
    'fft2_forward': [[(0.08025042264196569-0.04457494354050342j), (-0.23758826983870152-0.15967589830327744j), (0.039606445018052286+0.07785764527879462j)], [(0.33546275420475175+0.015595402655720162j), (0.011682366556254806-0.13788794423450024j), (-0.17245369361353946+0.2700457475070602j)]],
    'rfftn_vjp': [[2.5, 5.5, -1.5], [-2.9820508075688776, 0.651923788646684, -2.7141016151377544]],
    'irfftn_vjp': [[(1.5+0j), (-1-1.3763819204711734j), (-1-0.3249196962329064j)], [(-2.5+0j), (-0-0j), (-0-0j)]],
    'hfft': [[(1.9999999999999987+0j), (-20-10j), (8.000000000000004-7.105427357601002e-16j)], [0j, 0j, 0j]],
    'ihfft': [0.3158297101099824, -0.6338033988749896, 0.9824721359549998, 0.13855728090000863, -0.363055728090001],
    'shift': [[(4+0j), (5+0j), (3+0j)], [(1+0j), (2+0j), 0j]],
    'ishift': [[(-0-2j), 0j, (-0-1j)], [(-0-5j), (-0-3j), (-0-4j)]],
}


def _both(f, x):
    """The gradient of a real scalar f in reverse mode and from forward-mode JVPs."""
    g_rev = dualad.grad(f)(x)
    n = x.size
    eye = np.eye(n).reshape((n,) + x.shape)
    dirs = np.concatenate([eye, 1j * eye]) if np.iscomplexobj(x) else eye
    _, t = dualad.jvp(f, (x,), (dirs,))
    t = np.asarray(t)
    g_fwd = (t[:n] - 1j * t[n:]).reshape(x.shape) if np.iscomplexobj(x) else t.reshape(x.shape)
    return g_rev, g_fwd


def _close(got, expected):
    np.testing.assert_allclose(got, np.array(expected), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("norm", NORMS)
def test_gradients_match_jax_for_every_norm(norm):
    cases = [
        (lambda a: np.sum(np.abs(np.fft.fft(a, norm=norm) * (1 + np.arange(5))) ** 2), A,
         f"fft_abs2_{norm}"),
        (lambda a: np.sum(np.real(np.fft.rfft(a, n=6, norm=norm) * np.array([1, 2j, 3, 4 - 1j]))),
         A, f"rfft_{norm}"),
        (lambda b: np.sum(np.fft.irfft(b, n=4, norm=norm) * np.arange(1.0, 5.0)), B,
         f"irfft_{norm}"),
        (lambda b: np.sum(np.abs(np.fft.fft2(b, norm=norm)) ** 3), B, f"fft2_{norm}"),
    ]
    for f, x, key in cases:
        g_rev, g_fwd = _both(f, x)
        _close(g_rev, JAX[key])
        _close(g_fwd, JAX[key])
        assert g_rev.dtype == x.dtype


def test_vjps_and_gradients_of_the_other_transforms_match_jax():
    u = np.array([[1, 2j, -1], [0.5, 1 + 1j, 2], [3j, 1, -2]])
    x = np.arange(6.0).reshape(2, 3)
    _close(dualad.vjp(lambda a: np.fft.rfftn(a, s=(3, 4), axes=(0, 1)), x)[1](u)[0],
           JAX["rfftn_vjp"])
    _close(dualad.vjp(lambda b: np.fft.irfftn(b, s=(2, 5), axes=(0, 1)), B)[1](
        np.arange(10.0).reshape(2, 5) - 3)[0], JAX["irfftn_vjp"])
    for f, x, key in [
            (lambda b: np.sum(np.fft.hfft(b[0], n=5) ** 2), B, "hfft"),
            (lambda a: np.sum(np.abs(np.fft.ihfft(a)) ** 2 * np.arange(1.0, 4.0)), A, "ihfft"),
            (lambda b: np.sum(np.real(np.fft.fftshift(b) * np.arange(6.0).reshape(2, 3))), B,
             "shift"),
            (lambda b: np.sum(np.imag(np.fft.ifftshift(b, axes=1) *
                                      np.arange(6.0).reshape(2, 3))), B, "ishift")]:
        for g in _both(f, x):
            _close(g, JAX[key])


# --- values: the traced call is NumPy's ------------------------------------------------------
X3 = np.random.default_rng(0).standard_normal((3, 4, 5))
Z3 = X3 + 1j * np.random.default_rng(1).standard_normal((3, 4, 5))
CALLS = [
    ("fft", Z3, {}), ("fft", Z3, dict(n=7, axis=1)), ("fft", X3, dict(n=3, axis=0)),
    ("ifft", Z3, dict(n=6, norm="ortho")), ("fft2", Z3, dict(s=(2, 6))),
    ("ifft2", Z3, dict(axes=(0, 2), norm="forward")), ("fftn", Z3, {}),
    ("fftn", Z3, dict(s=(5, 3), axes=(2, 0))), ("ifftn", Z3, dict(axes=(1,), norm="ortho")),
    ("rfft", X3, {}), ("rfft", X3, dict(n=8, axis=0, norm="forward")),
    ("rfft", X3, dict(n=3)), ("rfft2", X3, dict(s=(3, 7))), ("rfftn", X3, {}),
    ("rfftn", X3, dict(axes=(2, 0), norm="ortho")), ("irfft", Z3, {}),
    ("irfft", Z3, dict(n=9, axis=1)), ("irfft", Z3, dict(n=4, norm="forward")),
    ("irfft2", Z3, dict(s=(4, 5))), ("irfftn", Z3, {}), ("irfftn", Z3, dict(s=(3, -1), axes=(0, 1))),
    ("hfft", Z3, {}), ("hfft", Z3, dict(n=7, axis=0, norm="ortho")), ("ihfft", X3, {}),
    ("ihfft", X3, dict(n=6, axis=1, norm="forward")), ("fftshift", Z3, {}),
    ("fftshift", X3, dict(axes=1)), ("ifftshift", Z3, dict(axes=(0, 2))),
]


@pytest.mark.parametrize("name, x, kw", CALLS, ids=[f"{c[0]}-{i}" for i, c in enumerate(CALLS)])
def test_traced_values_equal_numpy(name, x, kw):
    f = getattr(np.fft, name)
    y, t = dualad.jvp(lambda x: f(x, **kw), (x,), (x,))
    expected = f(x, **kw)
    np.testing.assert_allclose(y, expected, rtol=1e-13, atol=1e-13)
    assert np.asarray(y).dtype == expected.dtype
    # every transform here is linear, so J·x = f(x)
    np.testing.assert_allclose(t, expected, rtol=1e-12, atol=1e-12)


# --- derivatives to order 2, both modes, against the numeric oracles ------------------------
SMALL_R = np.array([[0.3, -1.0, 2.0, 0.5], [1.2, 0.1, -0.4, 0.8]])
SMALL_C = SMALL_R + 1j * np.array([[0.5, 0.2, -1.1, 0.3], [-0.6, 0.9, 0.4, -0.2]])
SWEEP = [
    ("fft", SMALL_C, dict(axis=0)), ("fft", SMALL_R, dict(n=3)), ("ifft", SMALL_C, dict(n=6)),
    ("fft2", SMALL_C, dict(s=(3, 3))), ("ifftn", SMALL_C, {}),
    ("rfft", SMALL_R, {}), ("rfft", SMALL_R, dict(n=5)), ("rfft", SMALL_R, dict(n=3, axis=0)),
    ("rfft2", SMALL_R, {}), ("rfftn", SMALL_R, dict(s=(3, 5), axes=(0, 1))),
    ("irfft", SMALL_C, {}), ("irfft", SMALL_C, dict(n=5)), ("irfft", SMALL_C, dict(n=2, axis=0)),
    ("irfft2", SMALL_C, dict(s=(2, 3))), ("irfftn", SMALL_C, dict(s=(3, 4), axes=(0, 1))),
    ("hfft", SMALL_C, {}), ("hfft", SMALL_C, dict(n=5)), ("ihfft", SMALL_R, dict(n=5)),
    ("fftshift", SMALL_C, {}), ("ifftshift", SMALL_R, dict(axes=1)),
]


# every transform with every norm; the shifts have no norm
SWEEP_NORMS = [(name, x, kw if name.endswith("shift") else dict(kw, norm=norm))
               for name, x, kw in SWEEP for norm in NORMS
               if norm == "backward" or not name.endswith("shift")]


@pytest.mark.parametrize("name, x, kw", SWEEP_NORMS,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(SWEEP_NORMS)])
def test_second_order_both_modes(name, x, kw):
    """A nonlinear function of the transform, so that second derivatives are not zero."""
    f = getattr(np.fft, name)
    g = lambda x: np.abs(f(x, **kw) + 0.5) ** 2 + np.real(f(x, **kw)) * x.ravel()[0]  # noqa: E731
    assert check_grads(g, x, order=2) == 2 + 4 + 4   # order 2: JVP of (x, v), VJP of (x, u)


@given(st.integers(1, 7), st.integers(1, 6), st.sampled_from(NORMS))
def test_property_real_transforms_any_length(n, m, norm):
    """Odd and even n, cropping (n < m) and padding (n > m): the weights of the kept
    half-spectrum (1 at k = 0 and at k = n/2, 2 elsewhere) must be right for each."""
    rng = np.random.default_rng(n * 10 + m)
    x = rng.standard_normal(m)
    y = rng.standard_normal(m) + 1j * rng.standard_normal(m)
    for f, arg in ((lambda x: np.fft.rfft(x, n=n, norm=norm), x),
                   (lambda y: np.fft.irfft(y, n=n, norm=norm), y),
                   (lambda y: np.fft.hfft(y, n=n, norm=norm), y)):
        check_grads(lambda v: np.abs(f(v)) ** 2, arg, order=1)
        check_grads(f, arg, order=1)


def test_registry_primitives_pass_the_rule_checker():
    for name in ("fft", "rfft", "irfft"):
        report = check_rule(REGISTRY[name])
        assert report.ok, str(report)
        assert any("complex" in r.check for r in report.rows) or name == "rfft"


def test_fft_is_its_own_transpose_and_real_inputs_get_real_cotangents():
    u = SMALL_C
    (g,) = dualad.vjp(np.fft.fft, SMALL_C)[1](u)
    np.testing.assert_allclose(g, np.fft.fft(u), rtol=1e-13)   # transpose, not adjoint
    (g,) = dualad.vjp(np.fft.fft, SMALL_R)[1](u)
    np.testing.assert_allclose(g, np.real(np.fft.fft(u)), rtol=1e-13)
    assert g.dtype == np.float64


# --- batched tangents and cotangents: one sweep for many directions -------------------------
@pytest.mark.parametrize("name, x, kw", [("fft2", SMALL_C, dict(norm="ortho")),
                                         ("rfft", SMALL_R, dict(n=5, axis=0)),
                                         ("irfftn", SMALL_C, dict(s=(2, 5))),
                                         ("hfft", SMALL_C, {}), ("fftshift", SMALL_C, {})])
def test_batched_tangents_and_cotangents(name, x, kw):
    f = lambda x: np.fft.__dict__[name](x, **kw) * (1.0 + 0.5j)  # noqa: E731
    rng = np.random.default_rng(3)
    dirs = rng.standard_normal((4,) + x.shape)
    if np.iscomplexobj(x):
        dirs = dirs + 1j * rng.standard_normal(dirs.shape)
    y, T = dualad.jvp(f, (x,), (dirs,))
    for k in range(4):
        np.testing.assert_allclose(T[k], dualad.jvp(f, (x,), (dirs[k],))[1], rtol=1e-13,
                                   atol=1e-14)
    cots = rng.standard_normal((3,) + y.shape) + 1j * rng.standard_normal((3,) + y.shape)
    _, pullback = dualad.vjp(f, x)
    (C,) = pullback(cots)
    for k in range(3):
        np.testing.assert_allclose(C[k], pullback(cots[k])[0], rtol=1e-13, atol=1e-14)


def test_float32_stays_single_precision():
    x = SMALL_R.astype(np.float32)
    g = dualad.grad(lambda x: np.sum(np.abs(np.fft.rfft(x)) ** 2))(x)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, dualad.grad(lambda x: np.sum(np.abs(np.fft.rfft(x)) ** 2))(
        SMALL_R), rtol=1e-5, atol=1e-5)
    assert dualad.jvp(np.fft.fft, (x.astype(np.complex64),), (x.astype(np.complex64),))[
        1].dtype == np.complex64


def test_shifts_are_inverse_permutations():
    x = np.arange(15.0).reshape(3, 5)
    f = lambda x: np.fft.ifftshift(np.fft.fftshift(x) * np.arange(15.0).reshape(3, 5))  # noqa
    _, t = dualad.jvp(f, (x,), (np.ones_like(x),))
    np.testing.assert_array_equal(t, np.fft.ifftshift(np.arange(15.0).reshape(3, 5)))
    g = dualad.grad(lambda x: np.sum(np.fft.fftshift(x) * np.arange(15.0).reshape(3, 5)))(x)
    np.testing.assert_array_equal(g, np.fft.ifftshift(np.arange(15.0).reshape(3, 5)))


# --- errors name the function, the argument and the shape -------------------------------------
@pytest.mark.parametrize("call, exc, pattern", [
    (lambda x: np.fft.fft(x, norm="unitary"), ValueError, r"numpy.fft.fft: norm='unitary'"),
    (lambda x: np.fft.rfft(x.astype(complex)), TypeError,
     r"numpy.fft.rfft: the argument \(shape \(2, 4\)\) is complex"),
    (lambda x: np.fft.fft2(x, axes=(1, 1)), ValueError, r"fft2: repeated axes \(1, 1\)"),
    (lambda x: np.fft.fft(x, axis=2), ValueError, r"fft: axis 2 is out of bounds .*\(2, 4\)"),
    (lambda x: np.fft.irfft(x[:, :1]), ValueError, r"irfft: invalid number of data points \(0\)"),
    (lambda x: np.fft.fftn(x, s=(2, 3), axes=(0,)), ValueError, r"s=\(2, 3\) and axes=\(0,\)"),
    (lambda x: np.fft.fft(x, out=np.zeros((2, 4), complex)), TypeError, r"fft\(\.\.\., out=\.\.\.\)"),
])
def test_bad_arguments_raise_clear_errors(call, exc, pattern):
    with pytest.raises(exc, match=pattern):
        dualad.grad(lambda x: np.sum(np.abs(call(x))))(SMALL_R)
