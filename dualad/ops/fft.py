"""numpy.fft in both modes: three linear primitives, everything else composed.

    fft    (c2c, over ``axes``, forward or inverse):  ṫ ↦ fft(ṫ)     ū ↦ fft(ū)
    rfft   (r2c, the last axis of ``axes`` halved):    ṫ ↦ rfft(ṫ)    ū ↦ irfft(conj(ū)·w)
    irfft  (c2r, output sizes ``s``):                  ṫ ↦ irfft(ṫ)   ū ↦ conj(rfft(ū)) / w

The DFT matrix W_jk = exp(−2πi jk/N) is symmetric, so a complex FFT is its
own transpose (cotangents are transposed, not conjugate-transposed: JAX's
convention, see :mod:`dualad.ops.core.complex_numbers`). The real transforms keep half the
spectrum, k = 0 … N//2: a real signal's spectrum is Hermitian and the other
half is its mirror. Their transposes therefore weigh each kept frequency by
its multiplicity in the full spectrum, m_k = 1 for k = 0 and (N even) k = N/2,
2 otherwise, w = 1/m; ``irfft`` ignores the imaginary parts at k = 0 and
k = N/2, and so does its derivative. A norm scales a transform by c and its
transpose by the same c, which is the swapped norm of the other transform:
"backward" ↔ "forward", "ortho" ↔ "ortho".

``n``/``s`` (zero-padding or cropping the input) are ``untake``/``getitem``
before the transform; ``hfft``/``ihfft`` are ``irfft``/``rfft`` of a
conjugate with swapped norms, as NumPy defines them; ``fftshift`` and
``ifftshift`` are rotations (two slices concatenated). Every function takes
NumPy's arguments (``n``, ``axis``, ``s``, ``axes``, ``norm``); tangents and
cotangents may carry leading batch axes, which shift the transform axes.
A real input to ``fft`` gets a real cotangent (the real part).
"""
from __future__ import annotations

import numpy as np

from ..core.tracer import ndim_of, shape_of, unguarded_value
from ..core.primitive import Primitive, implements, register, sample
from ._batch import axes_in_batch
from ..core.batch_axes import batch_ndim, batched_axis, shift_axes
from .core.complex_numbers import conj, is_complex, real

__all__ = [
    "fft_p", "rfft_p", "irfft_p", "fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft",
    "rfft2", "rfftn", "irfft", "irfft2", "irfftn", "hfft", "ihfft", "fftshift", "ifftshift"
]

_NORMS = ("backward", "ortho", "forward")
_SWAP = {"backward": "forward", "ortho": "ortho", "forward": "backward"}


def _real_for(g, x):
    """The cotangent of a real input is the real part."""
    return real(g) if not is_complex(x) and is_complex(g) else g


# --- complex-to-complex ---------------------------------------------------------------
def _fft_impl(x, axes, norm, inverse):
    return (np.fft.ifftn if inverse else np.fft.fftn)(x, axes=axes, norm=norm)


fft_p = register(Primitive("fft", _fft_impl, linear=True, sparsity="axes"))
fft_p.holomorphic = True  # complex-linear; rfft and irfft are not (real input / output)
fft_p.defjvp(lambda t, ans, x, axes, norm, inverse:
             fft_p(t, axes=batched_axis(axes, t, x), norm=norm, inverse=inverse))
fft_p.defvjp(lambda ct, ans, x, axes, norm, inverse: _real_for(
    fft_p(ct, axes=batched_axis(axes, ct, ans), norm=norm, inverse=inverse), x))


# --- real-to-complex and complex-to-real ------------------------------------------------
def _multiplicity(n, axis, ndim, dtype):
    """m_k along ``axis`` (size n//2 + 1) of an n-point real transform, shaped to broadcast."""
    m = np.full(n // 2 + 1, 2.0)
    m[0] = 1.0
    if n % 2 == 0:
        m[-1] = 1.0
    shape = [1] * ndim
    shape[axis] = m.size
    return m.reshape(shape).astype(np.finfo(dtype).dtype)  # float32 for complex64


def _rfft_impl(x, axes, norm):
    return np.fft.rfftn(x, axes=axes, norm=norm)


def _irfft_impl(y, axes, norm, s):
    return np.fft.irfftn(y, s=s, axes=axes, norm=norm)


rfft_p = register(Primitive("rfft", _rfft_impl, linear=True, sparsity="axes"))
irfft_p = register(Primitive("irfft", _irfft_impl, linear=True, sparsity="axes"))


def _rfft_vjp(ct, ans, x, axes, norm):
    nb = batch_ndim(ct, ans)
    s = tuple(shape_of(x)[a] for a in axes)
    w = 1.0 / _multiplicity(s[-1], axes[-1] + nb, ndim_of(ct), unguarded_value(x).dtype)
    return irfft_p(conj(ct) * w, axes=shift_axes(axes, nb), norm=_SWAP[norm], s=s)


def _irfft_vjp(ct, ans, y, axes, norm, s):
    ct = real(ct)  # a real output: drop an imaginary part that is not its own
    nb = batch_ndim(ct, ans)
    m = _multiplicity(s[-1], axes[-1] + nb, ndim_of(ct), unguarded_value(ans).dtype)
    g = conj(rfft_p(ct, axes=shift_axes(axes, nb), norm=_SWAP[norm])) * m
    return _real_for(g, y)


rfft_p.defjvp(lambda t, ans, x, axes, norm:
              rfft_p(t, axes=batched_axis(axes, t, x), norm=norm))
rfft_p.defvjp(_rfft_vjp)
irfft_p.defjvp(lambda t, ans, y, axes, norm, s:
               irfft_p(t, axes=batched_axis(axes, t, y), norm=norm, s=s))
irfft_p.defvjp(_irfft_vjp)


def _fft_batch(prim):
    """vmap: the transform over the example's ``axes`` (in their order) is the transform over
    those axes + 1 of the batch; ``norm``, ``inverse`` and the sizes ``s`` are unchanged."""
    def rule(args, batched, axes, **params):
        return prim(args[0], axes=axes_in_batch(axes, ndim_of(args[0]) - 1), **params)
    rule.__name__ = rule.__qualname__ = f"{prim.name}_batch"
    return rule


for _prim in (fft_p, rfft_p, irfft_p):
    _prim.defbatch(_fft_batch(_prim))


# --- argument handling, as NumPy does it ------------------------------------------------
def _check_out(fname, out):
    if out is not None:
        raise TypeError(f"numpy.fft.{fname}(..., out=...) writes in place into an array, which "
                        f"cannot be traced; use the returned value instead")


def _norm(fname, norm):
    norm = "backward" if norm is None else norm
    if norm not in _NORMS:
        raise ValueError(f"numpy.fft.{fname}: norm={norm!r} is not one of 'backward', 'ortho', "
                         f"'forward' (or None)")
    return norm


def _axes(fname, a, axes, s):
    nd = ndim_of(a)
    if axes is None:
        axes = range(nd) if s is None else range(nd - len(s), nd)
    axes = tuple(int(ax) for ax in axes)
    for ax in axes:
        if not -nd <= ax < nd:
            raise ValueError(f"numpy.fft.{fname}: axis {ax} is out of bounds for the argument "
                             f"of shape {shape_of(a)}")
    axes = tuple(ax % nd for ax in axes)
    if len(set(axes)) != len(axes):
        raise ValueError(f"numpy.fft.{fname}: repeated axes {axes} (argument of shape "
                         f"{shape_of(a)}) are not supported; transform twice instead")
    if not axes:
        raise ValueError(f"numpy.fft.{fname}: no axes to transform (argument of shape "
                         f"{shape_of(a)})")
    return axes


def _sizes(fname, a, s, axes, inverse_real=False):
    """Output sizes along ``axes`` (NumPy's rules: -1 is the input's length, None the
    1-D transform's default n)."""
    shape = shape_of(a)
    if s is None:
        s = [shape[ax] for ax in axes]
        if inverse_real:
            s[-1] = 2 * (shape[axes[-1]] - 1)
    else:
        s = list(s)
        if len(s) != len(axes):
            raise ValueError(f"numpy.fft.{fname}: s={tuple(s)} and axes={axes} have different "
                             f"lengths")
        for i, (n, ax) in enumerate(zip(s, axes)):
            if n == -1:  # NumPy: the input's length (even for irfft's last axis)
                s[i] = shape[ax]
            elif n is None:  # NumPy (deprecated): the 1-D transform's default n
                s[i] = 2 * (shape[ax] - 1) if inverse_real and i == len(s) - 1 else shape[ax]
    s = [int(n) for n in s]
    for n, ax in zip(s, axes):
        if n < 1:
            raise ValueError(f"numpy.fft.{fname}: invalid number of data points ({n}) along "
                             f"axis {ax} of the argument of shape {shape}")
    return tuple(s)


def _resize(x, axis, n):
    """Crop or zero-pad ``x`` to length ``n`` along ``axis`` (NumPy's ``n``/``s``)."""
    from .core.indexing import getitem, untake
    shape = shape_of(x)
    size = shape[axis]
    if n == size:
        return x
    idx = (slice(None),) * axis + (slice(0, min(n, size)),)
    if n < size:
        return getitem(x, idx=idx)
    return untake(x, idx=idx, shape=shape[:axis] + (n,) + shape[axis + 1:])


def _fitted(x, axes, sizes):
    for ax, n in zip(axes, sizes):
        x = _resize(x, ax, n)
    return x


def _real_input(fname, a):
    if is_complex(a):
        raise TypeError(f"numpy.fft.{fname}: the argument (shape {shape_of(a)}) is complex; the "
                        f"real transforms take real input (use fft/fftn for complex input)")


# --- the public functions ---------------------------------------------------------------
def _c2c(fname, a, s, axes, norm, out, inverse):
    _check_out(fname, out)
    norm = _norm(fname, norm)
    axes = _axes(fname, a, axes, s)
    sizes = _sizes(fname, a, s, axes)
    return fft_p(_fitted(a, axes, sizes), axes=axes, norm=norm, inverse=inverse)


def _r2c(fname, a, s, axes, norm, out):
    _check_out(fname, out)
    _real_input(fname, a)
    norm = _norm(fname, norm)
    axes = _axes(fname, a, axes, s)
    sizes = _sizes(fname, a, s, axes)
    return rfft_p(_fitted(a, axes, sizes), axes=axes, norm=norm)


def _c2r(fname, a, s, axes, norm, out):
    _check_out(fname, out)
    norm = _norm(fname, norm)
    axes = _axes(fname, a, axes, s)
    sizes = _sizes(fname, a, s, axes, inverse_real=True)
    fitted = _fitted(a, axes, sizes[:-1] + (sizes[-1] // 2 + 1,))
    return irfft_p(fitted, axes=axes, norm=norm, s=sizes)


def _one(n):
    return None if n is None else (n,)


@implements(np.fft.fft)
def fft(a, n=None, axis=-1, norm=None, out=None):
    return _c2c("fft", a, _one(n), (axis,), norm, out, False)


@implements(np.fft.ifft)
def ifft(a, n=None, axis=-1, norm=None, out=None):
    return _c2c("ifft", a, _one(n), (axis,), norm, out, True)


@implements(np.fft.fft2)
def fft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    return _c2c("fft2", a, s, axes, norm, out, False)


@implements(np.fft.ifft2)
def ifft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    return _c2c("ifft2", a, s, axes, norm, out, True)


@implements(np.fft.fftn)
def fftn(a, s=None, axes=None, norm=None, out=None):
    return _c2c("fftn", a, s, axes, norm, out, False)


@implements(np.fft.ifftn)
def ifftn(a, s=None, axes=None, norm=None, out=None):
    return _c2c("ifftn", a, s, axes, norm, out, True)


@implements(np.fft.rfft)
def rfft(a, n=None, axis=-1, norm=None, out=None):
    return _r2c("rfft", a, _one(n), (axis,), norm, out)


@implements(np.fft.rfft2)
def rfft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    return _r2c("rfft2", a, s, axes, norm, out)


@implements(np.fft.rfftn)
def rfftn(a, s=None, axes=None, norm=None, out=None):
    return _r2c("rfftn", a, s, axes, norm, out)


@implements(np.fft.irfft)
def irfft(a, n=None, axis=-1, norm=None, out=None):
    return _c2r("irfft", a, _one(n), (axis,), norm, out)


@implements(np.fft.irfft2)
def irfft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    return _c2r("irfft2", a, s, axes, norm, out)


@implements(np.fft.irfftn)
def irfftn(a, s=None, axes=None, norm=None, out=None):
    return _c2r("irfftn", a, s, axes, norm, out)


@implements(np.fft.hfft)
def hfft(a, n=None, axis=-1, norm=None, out=None):
    """The FFT of a signal with Hermitian symmetry: ``irfft(conj(a), n, norm=swapped)``."""
    _check_out("hfft", out)
    return _c2r("hfft", conj(a), _one(n), (axis,), _SWAP[_norm("hfft", norm)], None)


@implements(np.fft.ihfft)
def ihfft(a, n=None, axis=-1, norm=None, out=None):
    """The inverse of :func:`hfft`: ``conj(rfft(a, n, norm=swapped))``."""
    _check_out("ihfft", out)
    return conj(_r2c("ihfft", a, _one(n), (axis,), _SWAP[_norm("ihfft", norm)], None))


def _roll(x, shift, axis):
    """``np.roll`` along one axis: out[i] = x[(i − shift) mod n], two slices concatenated."""
    from .core.indexing import getitem
    from .core.shape import concatenate
    n = shape_of(x)[axis]
    k = shift % n if n else 0
    if k == 0:
        return x
    lead = (slice(None),) * axis
    return concatenate([getitem(x, idx=lead + (slice(n - k, n),)),
                        getitem(x, idx=lead + (slice(0, n - k),))], axis=axis)


def _shifted(fname, x, axes, sign):
    nd = ndim_of(x)
    if axes is None:
        axes = tuple(range(nd))
    elif isinstance(axes, (int, np.integer)):
        axes = (int(axes),)
    for ax in axes:
        if not -nd <= ax < max(nd, 1):
            raise ValueError(f"numpy.fft.{fname}: axis {ax} is out of bounds for the argument "
                             f"of shape {shape_of(x)}")
        ax = ax % nd
        x = _roll(x, sign * (shape_of(x)[ax] // 2), ax)
    return x


@implements(np.fft.fftshift)
def fftshift(x, axes=None):
    """The zero frequency moved to the centre: a rotation by n//2 along each axis."""
    return _shifted("fftshift", x, axes, 1)


@implements(np.fft.ifftshift)
def ifftshift(x, axes=None):
    """The inverse of :func:`fftshift`: a rotation by −(n//2)."""
    return _shifted("ifftshift", x, axes, -1)


def _c(*shape, seed=0):
    """Complex sample points in [-2, 2]² (a fixed low-discrepancy sequence, not numpy.random:
    importing it would cost every ``import dualad`` ~50 ms)."""
    return _spread(shape, 60 + seed) + 1j * _spread(shape, 90 + seed)


def _spread(shape, seed):
    u = (np.arange(1, int(np.prod(shape)) + 1) * 0.6180339887498949 + seed * 0.7548776662) % 1.0
    return (4.0 * u - 2.0).reshape(shape)


fft_p.samples = [sample(_c(4), axes=(0,), norm="backward", inverse=False),
                 sample(_c(2, 3, seed=1), axes=(0, 1), norm="ortho", inverse=True),
                 sample((2, 3), axes=(1,), norm="forward", inverse=False)]
rfft_p.samples = [sample((4,), axes=(0,), norm="backward"),
                  sample((2, 5), axes=(0, 1), norm="ortho"),
                  sample((3, 2), axes=(0,), norm="forward")]
irfft_p.samples = [sample(_c(3, seed=2), axes=(0,), norm="backward", s=(4,)),
                   sample(_c(2, 3, seed=3), axes=(0, 1), norm="ortho", s=(2, 5)),
                   sample(_c(2, 2, seed=4), axes=(0,), norm="forward", s=(3,))]

