"""scipy.fft through its backend mechanism: ``scipy.fft.set_backend(dualad.scipy.fft.backend)``
sends traced arguments to dualad's transforms; derivatives against finite differences
(check_grads, both modes, order 2: the transforms are linear, their rules compose)."""
import numpy as np
import pytest
import scipy.fft as sfft

import dualad
import dualad.scipy.fft as dfft
from dualad.verification import check_grads

RNG = np.random.default_rng(3)
X = RNG.normal(size=(4, 6))
Z = X + 1j * RNG.normal(size=(4, 6))


def _re(z):
    return np.real(z) + 0.5 * np.imag(z)


CALLS = [
    ("fft", lambda x: _re(sfft.fft(x, n=7, axis=0, norm="ortho"))),
    ("ifft", lambda x: _re(sfft.ifft(x))),
    ("rfft", lambda x: _re(sfft.rfft(x, axis=0))),
    ("irfft", lambda x: sfft.irfft(x, n=8, norm="forward")),
    ("hfft", lambda x: sfft.hfft(x, n=6)),
    ("ihfft", lambda x: _re(sfft.ihfft(x))),
    ("fftn", lambda x: _re(sfft.fftn(x, s=(3, 5)))),
    ("ifftn", lambda x: _re(sfft.ifftn(x, axes=(0,)))),
    ("rfftn", lambda x: _re(sfft.rfftn(x))),
    ("irfftn", lambda x: sfft.irfftn(x, s=(4, 6))),
    ("fft2", lambda x: _re(sfft.fft2(x))),
    ("ifft2", lambda x: _re(sfft.ifft2(x, norm="forward"))),
    ("rfft2", lambda x: _re(sfft.rfft2(x))),
    ("irfft2", lambda x: sfft.irfft2(x)),
] + [(f"{kind} type {t} {norm}", (lambda x, kind=kind, t=t, norm=norm:
      getattr(sfft, kind)(x, type=t, norm=norm, axis=0)))
     for kind in ("dct", "dst", "idct", "idst") for t in (1, 2, 3, 4)
     for norm in (None, "ortho")] + [
    ("dct n", lambda x: sfft.dct(x, n=9)),
    ("dst forward", lambda x: sfft.dst(x, type=2, norm="forward")),
    ("dctn", lambda x: sfft.dctn(x, type=2, s=(3, 8))),
    ("idctn", lambda x: sfft.idctn(x, type=3, axes=(1,))),
    ("dstn", lambda x: sfft.dstn(x, type=4, norm="ortho")),
    ("idstn", lambda x: sfft.idstn(x)),
    ("dct orthogonalize", lambda x: sfft.dct(x, type=2, norm="ortho", orthogonalize=False)),
]


@pytest.mark.parametrize("name, call", CALLS, ids=[c[0] for c in CALLS])
def test_derivatives_under_the_backend(name, call):
    x0 = Z if name.startswith(("irfft", "hfft")) else X   # complex spectra in
    with sfft.set_backend(dfft.backend):
        assert check_grads(call, (x0,), order=2)


@pytest.mark.parametrize("name, call", CALLS[14:], ids=[c[0] for c in CALLS[14:]])
def test_real_transforms_match_scipy(name, call):
    """The values: the dct/dst family under the backend, traced, equals SciPy's own."""
    expected = call(X)
    with sfft.set_backend(dfft.backend):
        out, _ = dualad.vjp(call, X)
    np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-12)


def test_adjoint_is_the_transposed_transform():
    """⟨dct(u), v⟩ = ⟨u, x̄⟩ with x̄ the reverse-mode cotangent: the VJP is the adjoint."""
    u, v = RNG.normal(size=7), RNG.normal(size=7)
    with sfft.set_backend(dfft.backend):
        _, pullback = dualad.vjp(lambda x: sfft.dct(x, type=3), u)
    (ubar,) = pullback(v)
    np.testing.assert_allclose(np.dot(sfft.dct(u, type=3), v), np.dot(u, ubar), rtol=1e-12)


def test_plain_arrays_are_left_to_scipy_and_the_backend_is_scoped():
    assert dfft.backend.__ua_function__(sfft.fft, (X,), {}) is NotImplemented
    with sfft.set_backend(dfft.backend):
        np.testing.assert_allclose(sfft.dct(X), sfft.dct(X))
        assert isinstance(sfft.fft(X), np.ndarray)
    with pytest.raises(TypeError):   # outside the block SciPy's own backend meets x
        dualad.grad(lambda x: np.sum(sfft.dct(x)))(X[0])


def test_unsupported_arguments_raise_naming_the_function():
    with sfft.set_backend(dfft.backend):
        with pytest.raises(ValueError, match="type=5"):
            dualad.grad(lambda x: np.sum(sfft.dct(x, type=5)))(X[0])
        with pytest.raises(ValueError, match="norm='half'"):
            dualad.grad(lambda x: np.sum(sfft.dct(x, norm="half")))(X[0])
        with pytest.raises(TypeError, match="scipy.fft.hfftn has no dualad rule"):
            dualad.grad(lambda x: np.sum(sfft.hfftn(x)))(X)
        with pytest.raises(TypeError, match="plan"):
            dualad.grad(lambda x: np.sum(np.real(sfft.fft(x, plan=object()))))(X[0])


def test_float32_stays_float32():
    x32 = X.astype(np.float32)
    with sfft.set_backend(dfft.backend):
        out, pullback = dualad.vjp(lambda x: sfft.dct(x, norm="ortho"), x32)
    assert out.dtype == np.float32 and pullback(np.ones_like(out))[0].dtype == np.float32
