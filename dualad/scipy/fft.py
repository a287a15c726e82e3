"""``scipy.fft`` on traced values, through SciPy's own backend mechanism (uarray).

Usage (the backend is never installed for you; it applies inside the block)::

    import scipy.fft
    import dualad.scipy.fft

    with scipy.fft.set_backend(dualad.scipy.fft.backend):
        g = dualad.grad(lambda x: np.sum(np.abs(scipy.fft.rfft(x)) ** 2))(x0)

Inside the block every ``scipy.fft`` call first asks :data:`backend`. With a
traced argument it computes the transform with dualad's FFT primitives
(:mod:`dualad.ops.fft`: ``fft``/``rfft``/``irfft``, both modes, any order); with
none it answers ``NotImplemented`` and SciPy's own backend runs unchanged.

The discrete cosine and sine transforms (``dct``/``dst``/``idct``/``idst`` of types
1-4 and their n-D forms) are linear maps ``y = M x`` along an axis, ``M`` being
SciPy's own transform of the identity (so every ``type``, ``n``, ``norm`` and
``orthogonalize`` means what SciPy means). Their derivatives are the same map of
the tangent, ``ẏ = M ẋ``, and the transposed map of the cotangent, ``x̄ = Mᵀ ȳ``
(the adjoint transform): ``tensordot``'s rules, which compose to any order. The
matrix costs O(n²) per transformed axis, which suits differentiation at the sizes
where a Jacobian is wanted.
"""
from __future__ import annotations

import functools

import numpy as np
import scipy.fft as _sfft

from ..core.tracer import Box

__all__ = [
    "dct", "idct", "dst", "idst", "dctn", "idctn", "dstn", "idstn", "IMPLEMENTATIONS",
    "fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fftn", "ifftn", "rfftn", "irfftn",
    "fft2", "ifft2", "rfft2", "irfft2", "backend"
]

_NORMS = (None, "backward", "ortho", "forward")


def _has_box(obj):
    if isinstance(obj, Box):
        return True
    if isinstance(obj, (list, tuple)):
        return any(_has_box(o) for o in obj)
    if isinstance(obj, dict):
        return any(_has_box(o) for o in obj.values())
    return False


def _check_common(name, norm, plan=None):
    if norm not in _NORMS:
        raise ValueError(f"scipy.fft.{name}: norm={norm!r}; expected one of {_NORMS}")
    if plan is not None:
        raise TypeError(f"scipy.fft.{name}(plan=...) on a traced value: plans are "
                        f"pocketfft's; pass plan=None")


def _numpy_fft(name):
    """``scipy.fft.<name>`` as ``numpy.fft.<name>`` (dualad's rules), with SciPy's
    signature: ``overwrite_x`` and ``workers`` do not change the value."""
    np_fn = getattr(np.fft, name)
    if name.endswith("n") or name.endswith("2"):
        default_axes = (-2, -1) if name.endswith("2") else None

        def transform(x, s=None, axes=default_axes, norm=None, overwrite_x=False,
                      workers=None, *, plan=None):
            _check_common(name, norm, plan)
            return np_fn(x, s=s, axes=axes, norm=norm or "backward")
    else:
        def transform(x, n=None, axis=-1, norm=None, overwrite_x=False, workers=None, *,
                      plan=None):
            _check_common(name, norm, plan)
            return np_fn(x, n=n, axis=axis, norm=norm or "backward")
    transform.__name__ = name
    transform.__doc__ = f"``scipy.fft.{name}`` of a traced value: ``numpy.fft.{name}``."
    return transform


@functools.lru_cache(maxsize=256)
def _matrix(kind, type, n_in, n, norm, orthogonalize):
    """SciPy's ``kind`` (dct/dst/idct/idst) of the identity: column j is the
    transform of the unit vector e_j, so the transform of x is ``M @ x``."""
    fn = getattr(_sfft, kind)
    with _sfft.set_backend("scipy", only=True):   # SciPy's own transform, not ours
        m = fn(np.eye(n_in), type=type, n=n, axis=0, norm=norm,
               orthogonalize=orthogonalize)
    m.setflags(write=False)
    return m


def _real_transform_1d(kind, x, type, n, axis, norm, orthogonalize):
    if type not in (1, 2, 3, 4):
        raise ValueError(f"scipy.fft.{kind}: type={type!r}; expected 1, 2, 3 or 4")
    _check_common(kind, norm)
    shape = np.shape(x) if not isinstance(x, Box) else x.shape
    if not shape:
        raise ValueError(f"scipy.fft.{kind} of a 0-d value: transform an array")
    axis = axis % len(shape)
    m = _matrix(kind, type, shape[axis], n, norm, orthogonalize)
    if isinstance(x, Box) and x.dtype == np.float32:
        m = m.astype(np.float32)
    y = np.tensordot(m, x, axes=([1], [axis]))   # the transformed axis comes first
    return np.moveaxis(y, 0, axis)


def _real_transform(kind):
    def transform(x, type=2, n=None, axis=-1, norm=None, overwrite_x=False, workers=None,
                  orthogonalize=None):
        return _real_transform_1d(kind, x, type, n, axis, norm, orthogonalize)
    transform.__name__ = kind
    transform.__doc__ = (f"``scipy.fft.{kind}`` along ``axis``: ``y = M x`` with M "
                         f"SciPy's {kind} of the identity; ``x̄ = Mᵀ ȳ``.")
    return transform


def _real_transform_n(kind):
    def transform(x, type=2, s=None, axes=None, norm=None, overwrite_x=False,
                  workers=None, *, orthogonalize=None):
        ndim = x.ndim if isinstance(x, Box) else np.ndim(x)
        if axes is None:
            axes = tuple(range(ndim)) if s is None else tuple(range(ndim - len(s), ndim))
        axes = (axes,) if isinstance(axes, int) else tuple(axes)
        sizes = (None,) * len(axes) if s is None else (
            (s,) if isinstance(s, int) else tuple(s))
        if len(sizes) != len(axes):
            raise ValueError(f"scipy.fft.{kind}n: s={s!r} and axes={axes!r} differ in "
                             f"length")
        for ax, n in zip(axes, sizes):   # separable: one axis after another
            x = _real_transform_1d(kind, x, type, n, ax, norm, orthogonalize)
        return x
    transform.__name__ = kind + "n"
    return transform


dct, idct, dst, idst = (_real_transform(k) for k in ("dct", "idct", "dst", "idst"))
dctn, idctn, dstn, idstn = (_real_transform_n(k) for k in ("dct", "idct", "dst", "idst"))

_FFTS = ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fftn", "ifftn", "rfftn",
         "irfftn", "fft2", "ifft2", "rfft2", "irfft2")
IMPLEMENTATIONS = {name: _numpy_fft(name) for name in _FFTS}
IMPLEMENTATIONS.update(dct=dct, idct=idct, dst=dst, idst=idst, dctn=dctn, idctn=idctn,
                       dstn=dstn, idstn=idstn)
globals().update({k: v for k, v in IMPLEMENTATIONS.items() if k in _FFTS})


class _Backend:
    """The uarray backend for ``scipy.fft`` (domain ``numpy.scipy.fft``): traced
    arguments get dualad's transforms; anything else is left to SciPy
    (``NotImplemented``). A transform without a rule raises, naming it."""

    __ua_domain__ = "numpy.scipy.fft"

    @staticmethod
    def __ua_function__(method, args, kwargs):
        if not (_has_box(args) or _has_box(kwargs)):
            return NotImplemented
        name = method.__name__
        impl = IMPLEMENTATIONS.get(name)
        if impl is None:
            raise TypeError(f"scipy.fft.{name} has no dualad rule for traced values "
                            f"(dualad.scipy.fft.backend covers {sorted(IMPLEMENTATIONS)})")
        return impl(*args, **kwargs)

    def __repr__(self):
        return "dualad.scipy.fft.backend"


backend = _Backend()
