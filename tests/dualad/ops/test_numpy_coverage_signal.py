"""dualad.scipy.signal (issue 4): convolve, correlate, fftconvolve, convolve2d,
correlate2d, N-dimensional, all modes, against SciPy's values and central differences
in both modes, batched, to order 2."""
import numpy as np
import pytest
import scipy.signal as ss

import dualad
import dualad.scipy.signal as dss

from coverage_helpers import check

R = np.random.default_rng(4)
A1, V1 = R.normal(size=7), R.normal(size=4)
A2, V2 = R.normal(size=(4, 5)), R.normal(size=(2, 3))
A3, V3 = R.normal(size=(3, 4, 3)), R.normal(size=(2, 2, 2))
BIG, KBIG = R.normal(size=90), R.normal(size=70)


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("fn", ["convolve", "correlate"])
@pytest.mark.parametrize("shapes", ["1d", "1d_swapped", "2d", "2d_swapped", "3d"])
def test_convolve_correlate(fn, mode, shapes):
    a, v = {"1d": (A1, V1), "1d_swapped": (V1, A1), "2d": (A2, V2), "2d_swapped": (V2, A2),
            "3d": (A3, V3)}[shapes]
    ours, ref = getattr(dss, fn), getattr(ss, fn)
    check(lambda a, v: ours(a, v, mode), a, v, reference=lambda a, v: ref(a, v, mode),
          value_rtol=1e-12, order=2 if shapes in ("1d", "2d") else 1)


@pytest.mark.parametrize("method", ["direct", "fft"])
def test_methods(method):
    check(lambda a, v: dss.convolve(a, v, "same", method=method), A2, V2,
          reference=lambda a, v: ss.convolve(a, v, "same", method=method), value_rtol=1e-12)


def test_large_operands_use_ffts_for_batched_tangents():
    check(lambda a, v: dss.correlate(a, v, "same"), BIG, KBIG,
          reference=lambda a, v: ss.correlate(a, v, "same"), value_rtol=1e-12, order=1,
          rtol=1e-5)


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_fftconvolve_axes_broadcast(mode):
    a, v = R.normal(size=(3, 1, 6)), R.normal(size=(1, 2, 3))
    check(lambda a, v: dss.fftconvolve(a, v, mode, axes=-1), a, v,
          reference=lambda a, v: ss.fftconvolve(a, v, mode, axes=-1), value_rtol=1e-12)
    b = R.normal(size=(5, 2, 4))
    check(lambda a, v: dss.oaconvolve(a, v, mode, axes=(0, 2)), b, R.normal(size=(3, 2, 2)),
          reference=lambda a, v: ss.oaconvolve(a, v, mode, axes=(0, 2)), value_rtol=1e-12,
          order=1)


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("boundary", ["fill", "wrap", "symm"])
@pytest.mark.parametrize("fn", ["convolve2d", "correlate2d"])
def test_2d_boundaries(fn, boundary, mode):
    ours, ref = getattr(dss, fn), getattr(ss, fn)
    for a, v in ((A2, V2), (A2, R.normal(size=(2, 4)))):
        check(lambda a, v: ours(a, v, mode, boundary), a, v,
              reference=lambda a, v: ref(a, v, mode, boundary), value_rtol=1e-12, order=1)


def test_fillvalue_is_differentiable():
    check(lambda a, c: dss.convolve2d(a, V2, "same", fillvalue=c), A2, np.float64(0.4),
          reference=lambda a, c: ss.convolve2d(a, V2, "same", fillvalue=c), value_rtol=1e-12)


def test_errors():
    with pytest.raises(ValueError, match="same dimensionality"):
        dss.convolve(A1, V2)
    with pytest.raises(ValueError, match="at least as large"):
        dualad.grad(lambda a: np.sum(dss.convolve(a, R.normal(size=(3, 6)), "valid")))(A2)
    with pytest.raises(ValueError, match="method"):
        dss.convolve(A1, V1, method="bogus")
    with pytest.raises(ValueError, match="boundary"):
        dss.convolve2d(A2, V2, boundary="nope")
