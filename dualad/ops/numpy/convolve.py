"""Convolution (a primitive, N-dimensional), correlate, and the polynomial helpers.

``convolve_p(a, v, mode, ndim, method)`` convolves the trailing ``ndim`` axes of
a and v and broadcasts the leading ones (so batched tangents ride along):

    full:   y[i] = Σ_j a[i − j] v[j]            (len A + V − 1)
    valid:  y[i] = Σ_j a[i + V − 1 − j] v[j]    (len A − V + 1, A ≥ V on every axis)

It is bilinear, so its JVP is ``conv(ȧ, v) + conv(a, v̇)`` and its VJP is again a
convolution, with the other operand flipped (⤺ = reversed along the convolved axes):

    full:   ā = valid(ū, ⤺v),   v̄ = valid(ū, ⤺a)
    valid:  ā = full(ū, ⤺v),    v̄ = ⤺valid(a, ⤺ū)

``same`` is a centred slice of ``full``; ``correlate(a, v) = convolve(a, ⤺v)``. The
value is NumPy's ``np.convolve`` (``method="numpy"``) or SciPy's ``convolve`` with the
method asked for; the rules' own convolutions let SciPy choose direct or FFT (they
meet sizes the user did not choose: ū against a whole signal), and batched tangents
use a direct sum over the smaller operand, or FFTs when both operands are large.

Polynomials: ``polyval`` is Horner's scheme (differentiable in the coefficients and
in x); polyder, polyint, polyadd, polysub, polymul are linear compositions.
"""
from __future__ import annotations

import math

import numpy as np

from ...core.tracer import Box, ndim_of, primal_value, shape_of, unguarded_value
from ...core.primitive import Primitive, implements, register, sample
from ...core.batch_axes import batch_ndim
from ..core.batch_ops import align_stacks
from ..core.linear import lift, unbroadcast
from ..core.indexing import getitem, index
from ..core.shape import concatenate, flip, reshape

__all__ = [
    "convolve_p", "conv", "centred", "convolve", "correlate", "polyval", "polyder",
    "polyint", "polyadd", "polysub", "polymul"
]


def _direct(a, v, mode, k):
    """Direct convolution over the trailing k axes, leading axes broadcast (object-safe)."""
    A, V = a.shape[a.ndim - k:], v.shape[v.ndim - k:]
    lead = np.broadcast_shapes(a.shape[:a.ndim - k], v.shape[:v.ndim - k])
    if mode == "full" and math.prod(V) > math.prod(A):
        a, v, A, V = v, a, V, A          # convolution commutes: loop over the smaller one
    out_conv = tuple(x + y - 1 for x, y in zip(A, V)) if mode == "full" else \
        tuple(x - y + 1 for x, y in zip(A, V))
    out = np.zeros(lead + out_conv, dtype=np.result_type(a, v))
    unit = (None,) * k
    for j in np.ndindex(*V):
        w = v[(Ellipsis,) + j][(Ellipsis,) + unit]
        if mode == "full":
            out[(Ellipsis,) + tuple(slice(i, i + n) for i, n in zip(j, A))] += a * w
        else:
            out += a[(Ellipsis,) + tuple(slice(m - 1 - i, m - 1 - i + n)
                                         for i, m, n in zip(j, V, out_conv))] * w
    return out


def _fft(a, v, mode, k):
    from scipy.signal import fftconvolve
    nd = max(a.ndim, v.ndim)
    a = a.reshape((1,) * (nd - a.ndim) + a.shape)
    v = v.reshape((1,) * (nd - v.ndim) + v.shape)
    return fftconvolve(a, v, mode=mode, axes=tuple(range(nd - k, nd)))


def _conv_impl(a, v, mode, ndim, method):
    a, v = np.asarray(a), np.asarray(v)
    if a.dtype == object or v.dtype == object:
        return _direct(a, v, mode, ndim)
    if a.ndim == v.ndim == ndim:        # no batch axes: the library's own routine
        if method == "numpy":
            return np.convolve(a, v, mode)
        from scipy.signal import convolve
        return convolve(a, v, mode=mode, method=method)
    small = min(math.prod(a.shape[a.ndim - ndim:]), math.prod(v.shape[v.ndim - ndim:]))
    if method == "fft" or (method == "auto" and small > 64):
        return _fft(a, v, mode, ndim)
    return _direct(a, v, mode, ndim)


convolve_p = register(Primitive(
    "convolve", _conv_impl,
    sympy=lambda sp, a, v, mode, ndim, method: _direct(np.asarray(a, dtype=object),
                                                       np.asarray(v, dtype=object), mode, ndim)))


def _flip(x, k):
    nd = ndim_of(x)
    return flip(x, tuple(range(nd - k, nd)))


def _rule_method(method):
    """Rules convolve with sizes the user did not choose (ū with a whole signal, say):
    they let SciPy pick direct or FFT unless FFTs were asked for."""
    return "fft" if method == "fft" else "auto"


def _jvp(which):
    def rule(t, ans, a, v, mode, ndim, method):
        method = _rule_method(method)
        nb = batch_ndim(t, a if which == 0 else v)
        t = lift(t, nb, ndim_of(ans))
        return convolve_p(t, v, mode=mode, ndim=ndim, method=method) if which == 0 else \
            convolve_p(a, t, mode=mode, ndim=ndim, method=method)
    return rule


def _vjp_a(ct, ans, a, v, mode, ndim, method):
    method = _rule_method(method)
    nb = batch_ndim(ct, ans)
    g = convolve_p(ct, _flip(v, ndim), mode="valid" if mode == "full" else "full", ndim=ndim,
                   method=method)
    return unbroadcast(g, shape_of(a), nb)


def _vjp_v(ct, ans, a, v, mode, ndim, method):
    method = _rule_method(method)
    nb = batch_ndim(ct, ans)
    if mode == "full":
        g = convolve_p(ct, _flip(a, ndim), mode="valid", ndim=ndim, method=method)
    else:
        g = _flip(convolve_p(a, _flip(ct, ndim), mode="valid", ndim=ndim, method=method), ndim)
    return unbroadcast(g, shape_of(v), nb)


convolve_p.defjvp(_jvp(0), _jvp(1))
convolve_p.defvjp(_vjp_a, _vjp_v)
# vmap: the ``ndim`` trailing axes are the convolution's, the leading ones broadcast; the
# batch axis is one more leading axis, lined up in front of both operands'
convolve_p.defbatch(lambda args, batched, mode, ndim, method: convolve_p(
    *align_stacks(args, batched, (ndim, ndim)), mode=mode, ndim=ndim, method=method))
convolve_p.samples = [
    sample((2,), (2,), mode="full", ndim=1, method="direct"),
    sample((5,), (3,), mode="valid", ndim=1, method="numpy"),
    sample((2, 4), (3,), mode="full", ndim=1, method="auto"),
    sample((3, 3), (2, 2), mode="valid", ndim=2, method="direct"),
    sample((3, 2), (2, 3), mode="full", ndim=2, method="fft"),
]


def conv(a, v, mode, ndim, method="auto", name="convolve"):
    """``mode`` full, same or valid over the trailing ``ndim`` axes (SciPy's conventions:
    same is centred on the full result with the size of ``a``; valid needs one operand
    at least as large as the other on every axis, and swaps them if need be)."""
    A, V = shape_of(a)[ndim_of(a) - ndim:], shape_of(v)[ndim_of(v) - ndim:]
    if 0 in A or 0 in V:
        raise ValueError(f"{name}: inputs must not be empty (shapes {shape_of(a)} and "
                         f"{shape_of(v)})")
    if mode == "valid":
        if all(x >= y for x, y in zip(A, V)):
            return convolve_p(a, v, mode="valid", ndim=ndim, method=method)
        if all(y >= x for x, y in zip(A, V)):
            return convolve_p(v, a, mode="valid", ndim=ndim, method=method)
        raise ValueError(f"{name}: for 'valid' mode, one input must be at least as large as "
                         f"the other in every dimension (shapes {shape_of(a)} and "
                         f"{shape_of(v)})")
    full = convolve_p(a, v, mode="full", ndim=ndim, method=method)
    if mode == "full":
        return full
    if mode != "same":
        raise ValueError(f"{name}: acceptable mode flags are 'valid', 'same', or 'full', "
                         f"got {mode!r}")
    return centred(full, A, V, ndim, offset=lambda n, m: (m - 1) // 2)


def centred(full, A, V, ndim, offset):
    nd = ndim_of(full)
    idx = (slice(None),) * (nd - ndim) + tuple(slice(offset(n, m), offset(n, m) + n)
                                               for n, m in zip(A, V))
    return getitem(full, idx=idx)


def _check_1d(name, a, v):
    if ndim_of(a) != 1 or ndim_of(v) != 1:
        raise ValueError(f"{name}: both inputs must be 1-d, got shapes {shape_of(a)} and "
                         f"{shape_of(v)}")
    if shape_of(a)[0] == 0:
        raise ValueError(f"{name}: a cannot be empty")
    if shape_of(v)[0] == 0:
        raise ValueError(f"{name}: v cannot be empty")
    for x in (a, v):
        if np.iscomplexobj(unguarded_value(x)):
            raise NotImplementedError(f"{name}: complex inputs are not supported here")


@implements(np.convolve)
def convolve(a, v, mode="full"):
    """``np.convolve``: same has length max(A, V), centred on full."""
    _check_1d("convolve", a, v)
    if mode == "same":
        n, m = shape_of(a)[0], shape_of(v)[0]
        full = convolve_p(a, v, mode="full", ndim=1, method="numpy")
        start = (min(n, m) - 1) // 2
        return getitem(full, idx=(slice(start, start + max(n, m)),))
    return conv(a, v, mode, 1, "numpy")


@implements(np.correlate)
def correlate(a, v, mode="valid"):
    """``np.correlate``: c[k] = Σ_n a[n + k] v[n], i.e. ``convolve(a, v[::-1])``."""
    _check_1d("correlate", a, v)
    return convolve(a, flip(v), mode)


# --- polynomials ----------------------------------------------------------------------------
def _coeffs(p, name):
    if isinstance(p, np.poly1d):
        p = p.coeffs
    if ndim_of(p) != 1:
        raise ValueError(f"{name}: coefficients must be a 1-d sequence, got shape {shape_of(p)}")
    return p


@implements(np.polyval)
def polyval(p, x):
    """Horner's scheme ``y = (…(p₀ x + p₁) x + …) + p_n``, as NumPy evaluates it."""
    p = _coeffs(p, "polyval")
    y = 0.0 * x if isinstance(x, Box) else np.zeros_like(np.asarray(x, dtype=float))
    for i in range(shape_of(p)[0]):
        y = y * x + index(p, (i,))
    return y


@implements(np.polyder)
def polyder(p, m=1):
    p = _coeffs(p, "polyder")
    if m < 0:
        raise ValueError("polyder: order of derivative must be positive (see polyint)")
    for _ in range(m):
        n = shape_of(p)[0] - 1
        p = index(p, (slice(None, -1),)) * np.arange(n, 0, -1, dtype=float) if n > 0 else \
            np.zeros(1)
    return p


@implements(np.polyint)
def polyint(p, m=1, k=None):
    p = _coeffs(p, "polyint")
    if m < 0:
        raise ValueError("polyint: order of integral must be positive (see polyder)")
    k = k if k is None or isinstance(k, Box) else np.asarray(k, dtype=float)
    if k is None:
        ks = [0.0] * m
    elif ndim_of(k) == 0:
        ks = [k] * m
    else:
        n = shape_of(k)[0]
        if n < m and not (n == 1 and m > 1):
            raise ValueError("polyint: k must be a scalar or a rank-1 array of length 1 or >m")
        ks = [index(k, (0 if n == 1 else i,)) for i in range(m)]
    for c in ks:
        p = concatenate([p / np.arange(shape_of(p)[0], 0, -1, dtype=float), reshape(c, (1,))])
    return p


def _pad_front(p, n):
    d = n - shape_of(p)[0]
    return concatenate([np.zeros(d), p]) if d > 0 else p


@implements(np.polyadd)
def polyadd(a1, a2):
    a1, a2 = _coeffs(a1, "polyadd"), _coeffs(a2, "polyadd")
    n = max(shape_of(a1)[0], shape_of(a2)[0])
    return _pad_front(a1, n) + _pad_front(a2, n)


@implements(np.polysub)
def polysub(a1, a2):
    a1, a2 = _coeffs(a1, "polysub"), _coeffs(a2, "polysub")
    n = max(shape_of(a1)[0], shape_of(a2)[0])
    return _pad_front(a1, n) - _pad_front(a2, n)


@implements(np.polymul)
def polymul(a1, a2):
    return convolve(_coeffs(a1, "polymul"), _coeffs(a2, "polymul"))


