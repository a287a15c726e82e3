"""``dualad.scipy.signal``: convolution and correlation, differentiable in both inputs.

SciPy's own functions do not dispatch on traced values; call these instead. All
are N-dimensional and rest on one primitive, :data:`dualad.ops.numpy.convolve.convolve_p`
(its rules: the JVP is ``conv(ȧ, v) + conv(a, v̇)``, the VJP a convolution of the
cotangent with the other operand flipped):

    convolve(in1, in2, mode, method)       modes full, same, valid; method auto/direct/fft
    correlate(in1, in2, mode, method)      = convolve(in1, in2 flipped on every axis)
    fftconvolve / oaconvolve(in1, in2, mode, axes)   over ``axes``, the others broadcast
    convolve2d / correlate2d(in1, in2, mode, boundary, fillvalue)
                                           boundary fill (fillvalue differentiable), wrap, symm

Conventions are SciPy's: ``same`` has the shape of in1, centred on ``full``
(correlate2d centres one sample later for even kernels, as SciPy does); ``valid``
needs one input at least as large as the other on every axis and swaps them if
need be. The value for inputs without batch axes is SciPy's own (``method`` is
passed on); batched tangents use a direct sum or FFTs. Complex inputs are not
supported here (they raise).
"""
from __future__ import annotations

import numpy as np

from ..ops.numpy.arrays import pad
from ..ops.numpy.convolve import centred, conv, convolve_p
from ..ops.core.indexing import getitem
from ..ops.core.shape import flip, moveaxis
from ..core.tracer import Box, ndim_of, shape_of, unguarded_value

__all__ = [
    "convolve", "correlate", "fftconvolve", "oaconvolve", "convolve2d", "correlate2d",
    "filtfilt", "lfilter", "lfilter_zi", "sosfilt", "sosfilt_zi", "sosfiltfilt"
]

_METHODS = ("auto", "direct", "fft")


def _checked(name, in1, in2, method="auto"):
    if ndim_of(in1) != ndim_of(in2):
        raise ValueError(f"{name}: in1 and in2 should have the same dimensionality (shapes "
                         f"{shape_of(in1)} and {shape_of(in2)})")
    if method not in _METHODS:
        raise ValueError(f"{name}: acceptable method flags are 'auto', 'direct', or 'fft', "
                         f"got {method!r}")
    for x in (in1, in2):
        if np.iscomplexobj(unguarded_value(x)):
            raise NotImplementedError(f"{name}: complex inputs are not supported here")
    return ndim_of(in1)


def convolve(in1, in2, mode="full", method="auto"):
    nd = _checked("convolve", in1, in2, method)
    if nd == 0:
        return in1 * in2
    return conv(in1, in2, mode, nd, method, name="convolve")


def correlate(in1, in2, mode="full", method="auto"):
    nd = _checked("correlate", in1, in2, method)
    if nd == 0:
        return in1 * in2
    return conv(in1, flip(in2), mode, nd, method, name="correlate")


def fftconvolve(in1, in2, mode="full", axes=None):
    nd = _checked("fftconvolve", in1, in2)
    if nd == 0:
        return in1 * in2
    if axes is None:
        return conv(in1, in2, mode, nd, "fft", name="fftconvolve")
    axes = sorted({int(a) % nd for a in np.atleast_1d(axes)})
    k = len(axes)
    last = list(range(nd - k, nd))
    out = moveaxis(conv(moveaxis(in1, axes, last), moveaxis(in2, axes, last), mode, k, "fft",
                        name="fftconvolve"), last, axes)
    if mode == "same" and shape_of(out) != shape_of(in1):
        # SciPy centres 'same' on in1's shape on every axis, broadcast ones included
        out = getitem(out, idx=tuple(slice((n - m) // 2, (n - m) // 2 + m) for n, m in
                                     zip(shape_of(out), shape_of(in1))))
    return out


def oaconvolve(in1, in2, mode="full", axes=None):
    """Overlap-add in SciPy; the same values (up to rounding) as :func:`fftconvolve`."""
    return fftconvolve(in1, in2, mode, axes)


def _conv2d(name, in1, in2, mode, boundary, fillvalue, flipped):
    if ndim_of(in1) != 2 or ndim_of(in2) != 2:
        raise ValueError(f"{name}: in1 and in2 should both be 2-D arrays, got shapes "
                         f"{shape_of(in1)} and {shape_of(in2)}")
    _checked(name, in1, in2)
    kernel = flip(in2) if flipped else in2
    if mode == "valid":
        return conv(in1, kernel, "valid", 2, "direct", name=name)
    if mode not in ("full", "same"):
        raise ValueError(f"{name}: acceptable mode flags are 'valid', 'same', or 'full', "
                         f"got {mode!r}")
    (n1, n2), (m1, m2) = shape_of(in1), shape_of(in2)
    if boundary == "fill" and not isinstance(fillvalue, Box) and np.all(
            np.asarray(fillvalue) == 0):
        full = convolve_p(in1, kernel, mode="full", ndim=2, method="direct")
    else:
        widths = ((m1 - 1, m1 - 1), (m2 - 1, m2 - 1))
        if boundary == "fill":
            padded = pad(in1, widths, constant_values=fillvalue)
        elif boundary in ("wrap", "circular"):
            padded = pad(in1, widths, mode="wrap")
        elif boundary in ("symm", "symmetric"):
            padded = pad(in1, widths, mode="symmetric")
        else:
            raise ValueError(f"{name}: acceptable boundary flags are 'fill', 'wrap' and "
                             f"'symm', got {boundary!r}")
        full = convolve_p(padded, kernel, mode="valid", ndim=2, method="direct")
    if mode == "full":
        return full
    offset = (lambda n, m: m // 2) if flipped else (lambda n, m: (m - 1) // 2)
    return centred(full, (n1, n2), (m1, m2), 2, offset)


def convolve2d(in1, in2, mode="full", boundary="fill", fillvalue=0):
    return _conv2d("convolve2d", in1, in2, mode, boundary, fillvalue, flipped=False)


def correlate2d(in1, in2, mode="full", boundary="fill", fillvalue=0):
    return _conv2d("correlate2d", in1, in2, mode, boundary, fillvalue, flipped=True)
from ._filtfilt import filtfilt, lfilter, lfilter_zi, sosfilt, sosfilt_zi, sosfiltfilt  # noqa
