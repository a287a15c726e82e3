"""The array API standard's ``fft`` extension over ``numpy.fft``, whose transforms
reach dualad's FFT primitives (:mod:`dualad.ops.fft`) for traced values.

The standard's signatures (``n``/``s``, ``axis``/``axes``, ``norm``) are NumPy's; the
frequency helpers take ``dtype`` and ``device``.
"""
from __future__ import annotations

import numpy as np

from ._dtypes import _check_device

__all__ = [
    "fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fftn", "ifftn", "rfftn", "irfftn",
    "fftfreq", "rfftfreq", "fftshift", "ifftshift"
]


def _one(name):
    np_fn = getattr(np.fft, name)

    def f(x, /, *, n=None, axis=-1, norm="backward"):
        return np_fn(x, n=n, axis=axis, norm=norm)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"The 1-D ``{name}`` along ``axis`` (``numpy.fft.{name}``)."
    return f


def _many(name):
    np_fn = getattr(np.fft, name)

    def f(x, /, *, s=None, axes=None, norm="backward"):
        return np_fn(x, s=s, axes=axes, norm=norm)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"The n-D ``{name}`` over ``axes`` (``numpy.fft.{name}``)."
    return f


fft, ifft, rfft, irfft, hfft, ihfft = (_one(n) for n in
                                       ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft"))
fftn, ifftn, rfftn, irfftn = (_many(n) for n in ("fftn", "ifftn", "rfftn", "irfftn"))


def fftfreq(n, /, *, d=1.0, dtype=None, device=None):
    _check_device(device)
    out = np.fft.fftfreq(n, d)
    return out if dtype is None else out.astype(dtype)


def rfftfreq(n, /, *, d=1.0, dtype=None, device=None):
    _check_device(device)
    out = np.fft.rfftfreq(n, d)
    return out if dtype is None else out.astype(dtype)


def fftshift(x, /, *, axes=None):
    return np.fft.fftshift(x, axes=axes)


def ifftshift(x, /, *, axes=None):
    return np.fft.ifftshift(x, axes=axes)
