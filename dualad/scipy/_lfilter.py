"""``lfilter``: SciPy's direct-form II transposed IIR/FIR filter, differentiable in the
signal ``x``, the coefficients ``b`` and ``a``, and the initial state ``zi``.

With a normalised so that a₀ = 1 (b ← b/a₀, a ← a/a₀, as SciPy does), the filter is

    y[n] + Σ_{k=1}^{K} a_k y[n−k] = Σ_{k=0}^{K} b_k x[n−k] + w[n],   w = zi then zeros,

K = max(len a, len b) − 1 (the state's length). So y = R_a(u): the FIR part
u = (b ∗ x)[:N] + w (a registry convolution, differentiable in b and x), then the
all-pole recursion R_a, the one new primitive, :data:`iir_p` ``(u, α)`` with α = a[1:]:

    JVP:  ẏ = R_a(u̇ − Σ_k α̇_k y[n−k])          (the recursion applied to a forcing)
    VJP:  ū = ⤺R_a(⤺ȳ)                          (the transposed, i.e. time-reversed, filter)
          ᾱ_k = −Σ_n ū[n] y[n−k]                 (the filtered signal against the output)

both written with the primitive itself and registry slices, so every order composes.
The final state (SciPy's ``zf``) is zf_i = (b∗x)[N+i] − (a∗y)[N+i] + w[N+i], i < K.
"""
from __future__ import annotations

import numpy as np

from ..core.batch_axes import batch_ndim
from ..ops.core.linear import unbroadcast
from ..ops.core.batch_ops import looping_when
from ..ops.core.reductions import sum as _sum
from ..ops.core.shape import concatenate, flip, moveaxis, reshape, stack
from ..ops.numpy.convolve import convolve_p
from ..core.primitive import Primitive, register, sample
from ..core.tracer import Box, ndim_of, primal_value, shape_of, unguarded_value
from ._arrays import real_floats

__all__ = ["iir_p", "lfilter"]


def _iir_impl(u, alpha):
    from scipy.signal import lfilter as _scipy_lfilter
    u, alpha = np.asarray(u), np.asarray(alpha)
    if u.dtype == object or alpha.dtype == object:          # symbolic values: the recursion
        y = np.array(u, dtype=object)
        for n in range(y.shape[-1]):
            for k in range(1, min(n, alpha.shape[0]) + 1):
                y[..., n] = y[..., n] - alpha[k - 1] * y[..., n - k]
        return y
    one = np.ones(1, dtype=np.result_type(alpha, np.float32))       # keeps float32 float32
    return _scipy_lfilter(one, np.concatenate([one, alpha]), u, axis=-1)


# sparsity "dense": y[n] depends on u[≤ n] and on every α (a recursion); declaring it dense
# is the conservative superset (the cumulative kind would miss α's columns)
iir_p = register(Primitive("iir_filter", _iir_impl, sparsity="dense",
                           sympy=lambda sp, u, alpha: _iir_impl(u, alpha)))


def _shifted(y, k):
    """y[..., n − k] (zeros for n < k) along the last axis."""
    n = shape_of(y)[-1]
    if k >= n:
        return y * 0.0
    zeros = np.zeros(shape_of(y)[:-1] + (k,), dtype=np.result_type(unguarded_value(y)))
    return concatenate([zeros, y[..., :n - k]], axis=-1)


def _jvp_u(t, ans, u, alpha):
    return iir_p(t, alpha)


def _jvp_alpha(t, ans, u, alpha):
    nb = batch_ndim(t, alpha)
    batch = shape_of(t)[:nb]
    forcing = 0.0
    for k in range(1, shape_of(alpha)[0] + 1):
        coeff = reshape(t[..., k - 1], batch + (1,) * ndim_of(ans))
        forcing = forcing - coeff * _shifted(ans, k)
    return iir_p(forcing, alpha)


def _vjp_u(ct, ans, u, alpha):
    nb = batch_ndim(ct, ans)
    return unbroadcast(flip(iir_p(flip(ct, -1), alpha), -1), shape_of(u), nb)


def _vjp_alpha(ct, ans, u, alpha):
    nb = batch_ndim(ct, ans)
    ubar = flip(iir_p(flip(ct, -1), alpha), -1)
    n = shape_of(ans)[-1]
    axes = tuple(range(nb, ndim_of(ubar)))
    parts = []
    for k in range(1, shape_of(alpha)[0] + 1):
        if k >= n:
            parts.append(_sum(ubar, axis=axes) * 0.0)
        else:
            parts.append(-_sum(ubar[..., k:] * ans[..., :n - k], axis=axes))
    return stack(parts, axis=-1)


iir_p.defjvp(_jvp_u, _jvp_alpha)
iir_p.defvjp(_vjp_u, _vjp_alpha)
# vmap: the recursion runs along the last axis of every leading axis, so a batched forcing
# is one more leading axis; batched coefficients are a different filter per example (SciPy's
# lfilter takes one), a loop
iir_p.defbatch(looping_when(iir_p, (1,), lambda args, batched: iir_p(*args)))
iir_p.samples = [sample((6,), np.array([-0.5, 0.2])), sample((2, 5), np.array([0.3])),
                 sample((3,), np.array([0.4, -0.1, 0.05, 0.2]))]


def _vector(name, arg, v):
    if not isinstance(v, Box):
        v = np.asarray(v)
    if ndim_of(v) != 1:
        raise ValueError(f"lfilter: {arg} must be a 1-D sequence of coefficients, got shape "
                         f"{shape_of(v)}")
    if shape_of(v)[0] == 0:
        raise ValueError(f"lfilter: {arg} must not be empty")
    return real_floats("lfilter", arg, v)


def _pad_to(v, n):
    k = shape_of(v)[-1]
    if k >= n:
        return v
    zeros = np.zeros(shape_of(v)[:-1] + (n - k,), dtype=np.result_type(unguarded_value(v)))
    return concatenate([v, zeros], axis=-1)


def lfilter(b, a, x, axis=-1, zi=None):
    """``scipy.signal.lfilter(b, a, x, axis=-1, zi=None)``: y, or (y, zf) when ``zi`` is
    given; differentiable in b, a, x and zi."""
    b, a = _vector("lfilter", "b", b), _vector("lfilter", "a", a)
    x = real_floats("lfilter", "x", x)
    if ndim_of(x) == 0:
        raise ValueError("lfilter: x must be at least 1-D")
    a0 = float(primal_value(a)[0])
    if a0 == 0.0:
        raise ValueError("lfilter: a[0] must not be 0 (the filter is normalised by it)")
    nd = ndim_of(x)
    axis = int(axis)
    if not -nd <= axis < nd:
        raise ValueError(f"lfilter: axis {axis} is out of bounds for x of shape {shape_of(x)}")
    axis %= nd
    x = moveaxis(x, axis, -1) if axis != nd - 1 else x
    n = shape_of(x)[-1]
    K = max(shape_of(a)[0], shape_of(b)[0]) - 1
    lead = a[0] if isinstance(a, Box) else a0
    bn, an = _pad_to(b / lead, K + 1), _pad_to(a / lead, K + 1)
    if n == 0:
        u = x * 0.0
    else:
        u = convolve_p(x, bn, mode="full", ndim=1, method="auto")[..., :n]
    w = None
    if zi is not None:
        if not isinstance(zi, Box):
            zi = np.asarray(zi, dtype=float)
        zi = moveaxis(zi, axis, -1) if ndim_of(zi) == nd and axis != nd - 1 else zi
        want = shape_of(x)[:-1] + (K,)
        try:
            zi = np.broadcast_to(zi, want)
        except ValueError:
            raise ValueError(f"lfilter: unexpected shape for zi: expected {want} (x's shape "
                             f"with axis {axis} replaced by max(len(a), len(b)) - 1 = {K}), "
                             f"got {shape_of(zi)}") from None
        w = _pad_to(zi, n + K)                       # w[n] = zi[n] for n < K, else 0
        if n:
            u = u + w[..., :n]
    y = iir_p(u, an[1:]) if shape_of(a)[0] > 1 and n else u     # len(a) = 1: FIR only
    if zi is None:
        return moveaxis(y, -1, axis) if axis != nd - 1 else y
    bx = convolve_p(x, bn, mode="full", ndim=1, method="auto") if n else \
        np.zeros(shape_of(x)[:-1] + (K + 1,))
    ay = convolve_p(y, an, mode="full", ndim=1, method="auto") if n else \
        np.zeros(shape_of(x)[:-1] + (K + 1,))
    bx, ay = _pad_to(bx, n + K), _pad_to(ay, n + K)
    zf = bx[..., n:n + K] - ay[..., n:n + K] + w[..., n:n + K]
    if axis != nd - 1:
        y, zf = moveaxis(y, -1, axis), moveaxis(zf, -1, axis)
    return y, zf
