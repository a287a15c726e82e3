"""Filters built on :func:`._lfilter.lfilter`: ``lfilter_zi``, ``filtfilt``, ``sosfilt``,
``sosfilt_zi``, ``sosfiltfilt``, each SciPy's algorithm written with registry operations,
so differentiable in the signal and the (traced) coefficients, both modes, any order.

    lfilter_zi(b, a)     zi with zi = A zi + B (the step response's steady state):
                         (I − companion(a)ᵀ) zi = b[1:] − a[1:] b₀, a normalised (a solve)
    filtfilt(b, a, x)    extend x at both ends (odd/even/constant, ``padlen``), filter
                         forwards from zi·x₀, backwards from zi·y₀, cut the extension
    sosfilt(sos, x, zi)  the second-order sections one after another (lfilter each)
    sosfilt_zi(sos)      each section's lfilter_zi scaled by the DC gains before it
    sosfiltfilt(sos, x)  filtfilt with sections
"""
from __future__ import annotations

import numpy as np

from ..ops.core.shape import concatenate, flip, moveaxis, stack
from ..core.tracer import Box, ndim_of, primal_value, shape_of, unguarded_value
from ._lfilter import _vector, lfilter

__all__ = ["lfilter", "lfilter_zi", "filtfilt", "sosfilt", "sosfilt_zi", "sosfiltfilt"]


def lfilter_zi(b, a):
    """``scipy.signal.lfilter_zi``: the initial state of ``lfilter`` for a unit step's
    steady state; differentiable in b and a."""
    b, a = _vector("lfilter_zi", "b", b), _vector("lfilter_zi", "a", a)
    ap = np.asarray(primal_value(a))
    lead = int(np.argmax(ap != 0)) if np.any(ap != 0) else ap.size
    if lead == ap.size:
        raise ValueError("lfilter_zi: there must be at least one nonzero `a` coefficient")
    a = a[lead:]
    b, a = b / a[0], a / a[0]
    n = max(shape_of(a)[0], shape_of(b)[0])
    pad = lambda v: v if shape_of(v)[0] == n else concatenate(  # noqa: E731
        [v, np.zeros(n - shape_of(v)[0])])
    a, b = pad(a), pad(b)
    if n == 1:
        return np.zeros(0)
    # I − companion(a)ᵀ: the identity, −1 on the superdiagonal, + a[1:] down column 0
    fixed = np.eye(n - 1) - np.eye(n - 1, k=1)
    e0 = np.zeros(n - 1)
    e0[0] = 1.0
    matrix = fixed + np.reshape(a[1:], (n - 1, 1)) * e0
    return np.linalg.solve(matrix, b[1:] - a[1:] * b[0])


def _along(x, axis, start=None, stop=None, step=None):
    idx = [slice(None)] * ndim_of(x)
    idx[axis] = slice(start, stop, step)
    return x[tuple(idx)]


def _extend(fname, x, axis, padtype, padlen, ntaps):
    if padtype not in ("even", "odd", "constant", None):
        raise ValueError(f"{fname}: unknown value {padtype!r} given to padtype; padtype must "
                         f"be 'even', 'odd', 'constant', or None")
    edge = 0 if padtype is None else (ntaps * 3 if padlen is None else int(padlen))
    if shape_of(x)[axis] <= edge:
        raise ValueError(f"{fname}: the length of the input vector x must be greater than "
                         f"padlen, which is {edge}")
    if padtype is None or edge == 0:
        return edge, x
    first, last = _along(x, axis, 0, 1), _along(x, axis, -1, None)
    left, right = _along(x, axis, edge, 0, -1), _along(x, axis, -2, -(edge + 2), -1)
    if padtype == "odd":
        left, right = 2 * first - left, 2 * last - right
    elif padtype == "constant":
        shape = list(shape_of(x))
        shape[axis] = edge
        left, right = np.broadcast_to(first, shape), np.broadcast_to(last, shape)
    return edge, concatenate([left, x, right], axis=axis)


def _zi_shape(zi, nd, axis):
    shape = [1] * nd
    shape[axis] = shape_of(zi)[0]
    return np.reshape(zi, shape)


def _array(fname, x):
    if not isinstance(x, Box):
        x = np.asarray(x)
    if np.result_type(unguarded_value(x)).kind not in "biuf":
        raise TypeError(f"{fname}: x must be a real numeric array, got dtype "
                        f"{np.result_type(unguarded_value(x))}")
    return x.astype(np.float64) if np.result_type(unguarded_value(x)).kind in "biu" else x


def filtfilt(b, a, x, axis=-1, padtype="odd", padlen=None, method="pad", irlen=None):
    """``scipy.signal.filtfilt`` (method 'pad'): zero-phase forward-backward filtering."""
    if method != "pad":
        raise NotImplementedError(f"filtfilt: method={method!r} is not supported on traced "
                                  f"values; use method='pad'")
    b, a = _vector("filtfilt", "b", b), _vector("filtfilt", "a", a)
    x = _array("filtfilt", x)
    axis = int(axis) % ndim_of(x)
    edge, ext = _extend("filtfilt", x, axis, padtype, padlen,
                        max(shape_of(a)[0], shape_of(b)[0]))
    zi = _zi_shape(lfilter_zi(b, a), ndim_of(x), axis)
    y, _ = lfilter(b, a, ext, axis=axis, zi=zi * _along(ext, axis, 0, 1))
    y, _ = lfilter(b, a, flip(y, axis), axis=axis, zi=zi * _along(y, axis, -1, None))
    y = flip(y, axis)
    return _along(y, axis, edge, -edge) if edge > 0 else y


def _sections(fname, sos, unit_a0=True):
    if not isinstance(sos, Box):
        sos = np.asarray(sos, dtype=float)
    if ndim_of(sos) != 2 or shape_of(sos)[1] != 6:
        raise ValueError(f"{fname}: sos array must be shape (n_sections, 6), got "
                         f"{shape_of(sos)}")
    if unit_a0 and not np.all(np.asarray(primal_value(sos))[:, 3] == 1):
        raise ValueError(f"{fname}: sos[:, 3] should be all ones (SciPy's convention: each "
                         f"section's a0 = 1; divide the section by it)")
    return sos


def sosfilt(sos, x, axis=-1, zi=None):
    """``scipy.signal.sosfilt``: the sections in cascade; with ``zi`` (shape (n_sections,
    ..., 2, ...)) returns (y, zf)."""
    sos = _sections("sosfilt", sos)
    y = _array("sosfilt", x)
    axis = int(axis) % ndim_of(y)
    finals = []
    for s in range(shape_of(sos)[0]):
        b, a = sos[s, :3], sos[s, 3:]
        if zi is None:
            y = lfilter(b, a, y, axis=axis)
        else:
            y, zf = lfilter(b, a, y, axis=axis, zi=zi[s])
            finals.append(zf)
    return y if zi is None else (y, stack(finals, axis=0))


def sosfilt_zi(sos):
    """``scipy.signal.sosfilt_zi``: each section's lfilter_zi times the DC gain of the
    sections before it; shape (n_sections, 2)."""
    sos = _sections("sosfilt_zi", sos, unit_a0=False)
    rows, scale = [], 1.0
    for s in range(shape_of(sos)[0]):
        b, a = sos[s, :3], sos[s, 3:]
        rows.append(scale * lfilter_zi(b, a))
        scale = scale * np.sum(b) / np.sum(a)
    return stack(rows, axis=0)


def sosfiltfilt(sos, x, axis=-1, padtype="odd", padlen=None):
    """``scipy.signal.sosfiltfilt``: forward-backward filtering with sections."""
    sos = _sections("sosfiltfilt", sos)
    x = _array("sosfiltfilt", x)
    nd = ndim_of(x)
    axis = int(axis) % nd
    sp = np.asarray(primal_value(sos))
    ntaps = 2 * sp.shape[0] + 1 - min(int((sp[:, 2] == 0).sum()), int((sp[:, 5] == 0).sum()))
    edge, ext = _extend("sosfiltfilt", x, axis, padtype, padlen, ntaps)
    zi = sosfilt_zi(sos)                                   # (n_sections, 2)
    shape = [shape_of(zi)[0]] + [1] * nd
    shape[axis + 1] = 2
    zi = np.reshape(zi, shape)
    x0 = np.expand_dims(_along(ext, axis, 0, 1), 0)
    y, _ = sosfilt(sos, ext, axis=axis, zi=zi * x0)
    y0 = np.expand_dims(_along(y, axis, -1, None), 0)
    y, _ = sosfilt(sos, flip(y, axis), axis=axis, zi=zi * y0)
    y = flip(y, axis)
    return _along(y, axis, edge, -edge) if edge > 0 else y
