"""``dualad.scipy.special``: scipy.special with derivative rules, both modes, any order.

scipy.special's ufuncs (gammaln, erf, iv, xlogy, ...) already work on traced
values called through SciPy itself (``scipy.special.gammaln(x)``); this
namespace has the same primitives under the same names, plus SciPy's Python
functions (those marked * wrap a ufunc and dispatch too; the others do not):

    logsumexp(a, axis, b, keepdims, return_sign)   log Σ b·eᵃ, differentiable in a and b
    softmax(x, axis)       = exp(x - logsumexp(x, axis, keepdims=True))
    log_softmax(x, axis)   = x - logsumexp(x, axis, keepdims=True)
    polygamma(n, x)        ψ⁽ⁿ⁾(x), differentiable in x (n an integer order)
    zeta(x, q)           * Hurwitz ζ(x, q), differentiable in x and q; zeta(x): Riemann's
    lambertw(z, k, tol)  * W_k(z), complex, holomorphic (k, tol parameters)
    multigammaln(a, d)     log Γ_d(a) = d(d-1)/4 log π + Σⱼ log Γ(a - j/2)

``logsumexp`` shifts by the maximum (taken as a constant: the result does not
depend on the shift) and, like SciPy, ignores terms whose weight is 0 even if
their exponent is +inf. A negative weighted sum gives nan unless
``return_sign=True``, which returns ``(log|s|, sign s)`` with the sign having
zero derivative. Formulas, domains and conventions of the ufuncs: the
docstrings of :mod:`dualad.ops.special.gamma`, :mod:`~dualad.ops.special.erf`,
:mod:`~dualad.ops.special.log`, :mod:`~dualad.ops.special.bessel`,
:mod:`~dualad.ops.special.student` (stdtr, stdtrit), :mod:`~dualad.ops.special.boxcox`,
:mod:`~dualad.ops.special.extra` (owens_t, spence, lambertw),
:mod:`~dualad.ops.special.zeta`, and ``docs/special.md``.
"""
from __future__ import annotations

import numpy as np

from ..ops.core.elementwise import exp as _exp, log as _log, where as _where
from ..ops.core.complex_numbers import absolute as _abs
from ..ops.core.elementwise import cbrt, exp2, expm1, log1p  # noqa: F401  (scipy.special too)
from ..ops._util import normalize_axes
from ..ops.core.reductions import sum as _sum
from ..ops.core.shape import expand_dims as _expand_dims, squeeze as _squeeze
from ..ops.special import _exp10
from ..ops.special.bessel import (i0, i0e, i1, i1e, iv, ive, j0, j1, jv, k0, k0e, k1, k1e, kv,
                                  kve, y0, y1, yn, yv)
from ..ops.special.common import NotDifferentiableError, plain_param  # noqa: F401
from ..ops.special.erf import (dawsn, erf, erfc, erfcinv, erfcx, erfi, erfinv, log_ndtr, ndtr,
                               ndtri, ndtri_exp)
from ..ops.special.gamma import (beta, betainc, betaincc, betaincinv, betaln, digamma, gamma,
                                 gammainc, gammaincc, gammainccinv, gammaincinv, gammaln,
                                 gammasgn, loggamma, rgamma)
from ..ops.special.gamma import polygamma as _polygamma
from ..ops.special.boxcox import boxcox, boxcox1p, inv_boxcox, inv_boxcox1p  # noqa: F401
from ..ops.special.extra import lambertw as _lambertw, owens_t, spence  # noqa: F401
from ..ops.special.zeta import riemann_zeta as _riemann, zeta as _hurwitz
from ..ops.special.log import entr, expit, kl_div, log_expit, logit, rel_entr, xlog1py, xlogy
from ..ops.special.student import stdtr, stdtrit  # noqa: F401
from ..core.values import is_staged, staged_value
from ..core.tracer import primal_value, shape_of, unguarded_value

__all__ = [
    "beta", "betainc", "betaincc", "betaincinv", "betaln", "boxcox", "boxcox1p", "cbrt",
    "dawsn", "digamma", "entr", "erf", "erfc", "erfcinv", "erfcx", "erfi", "erfinv",
    "exp10", "exp2", "expit", "expm1", "gamma", "gammainc", "gammaincc", "gammainccinv",
    "gammaincinv", "gammaln", "gammasgn", "i0", "i0e", "i1", "i1e", "inv_boxcox",
    "inv_boxcox1p", "iv", "ive", "j0", "j1", "jn", "jv", "k0", "k0e", "k1", "k1e", "kl_div",
    "kv", "kve", "lambertw", "log1p", "log_expit", "log_ndtr", "log_softmax", "loggamma",
    "logit", "logsumexp", "multigammaln", "ndtr", "ndtri", "ndtri_exp",
    "NotDifferentiableError", "owens_t", "polygamma", "psi", "rel_entr", "rgamma",
    "softmax", "spence", "stdtr", "stdtrit", "xlog1py", "xlogy", "y0", "y1", "yn", "yv",
    "zeta"
]

psi = digamma
jn = jv
exp10 = _exp10


def polygamma(n, x):
    """ψ⁽ⁿ⁾(x), the n-th derivative of the digamma function; ∂x = ψ⁽ⁿ⁺¹⁾(x)."""
    return _polygamma(plain_param("polygamma", "n (the order)", n, "an integer order"), x)


def zeta(x, q=None, out=None):
    """Hurwitz ζ(x, q) = Σₖ (k + q)⁻ˣ, differentiable in x (∂x = Σₖ -log(k+q)(k+q)⁻ˣ, by
    Euler–Maclaurin summation) and q (∂q = -x ζ(x+1, q)); ``q=None`` is Riemann's ζ(x),
    differentiable in x (for x < ½ through the functional equation)."""
    if out is not None:
        raise TypeError("zeta: out= writes in place and cannot be traced; use the returned value")
    return _riemann(x) if q is None else _hurwitz(x, q)


def lambertw(z, k=0, tol=1e-8):
    """W_k(z), the branch k of the inverse of w·eʷ (SciPy's complex result); holomorphic,
    W' = e^(-W)/(1 + W). The branch k (an integer) and tol are parameters."""
    k = plain_param("lambertw", "k (the branch)", k, "an integer branch index")
    tol = plain_param("lambertw", "tol", tol, "the solver's tolerance")
    return _lambertw(z, np.asarray(k, dtype=np.dtype("long")), tol)


def multigammaln(a, d):
    """log Γ_d(a) = d(d-1)/4 · log π + Σ_{j=0}^{d-1} log Γ(a - j/2), for a > (d-1)/2."""
    d_plain = np.asarray(plain_param("multigammaln", "d (the dimension)", d, "an integer"))[()]
    if not np.isscalar(d_plain) or np.floor(d_plain) != d_plain or d_plain < 1:
        raise ValueError(f"multigammaln: d must be a positive integer (the dimension), got {d!r}")
    d_int = int(d_plain)
    a_plain = np.asarray(primal_value(a))
    if np.any(a_plain <= 0.5 * (d_int - 1)):
        raise ValueError(f"multigammaln: the condition a > (d-1)/2 = {0.5 * (d_int - 1)} is not "
                         f"met by a (shape {a_plain.shape}, min {np.min(a_plain)})")
    offsets = 0.5 * np.arange(d_int)
    terms = gammaln(_expand_dims(a, -1) - offsets)
    return _sum(terms, axis=-1) + d_int * (d_int - 1) * 0.25 * np.log(np.pi)


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    """log Σ b·eᵃ over ``axis``: ∂a = b·e^(a - out) (the softmax when b = 1),
    ∂b = e^(a - out), both times sign(s) with ``return_sign``."""
    a_plain = np.asarray(unguarded_value(a))   # its dtype and shape (values: below)
    if a_plain.dtype.kind == "c" or (b is not None and np.iscomplexobj(unguarded_value(b))):
        raise TypeError(f"logsumexp: complex arguments (a of shape {a_plain.shape}) are not "
                        f"supported")
    if a_plain.dtype.kind not in "fc":
        a_plain = a_plain.astype(float)
    shape = a_plain.shape if b is None else np.broadcast_shapes(a_plain.shape, shape_of(b))
    axes = normalize_axes(axis, len(shape))
    if b is None and is_staged(a) and a_plain.size:
        # dualad.jit: the shift computed in the program (from a, without its derivative)
        m = np.max(staged_value(a), axis=axes, keepdims=True)
        return _logsumexp_tail(a, b, np.where(np.isfinite(m), m, 0.0), axes, keepdims,
                               return_sign)
    a_plain = np.asarray(primal_value(a))
    if a_plain.dtype.kind not in "fc":
        a_plain = a_plain.astype(float)
    shifted_from = np.broadcast_to(a_plain, shape)
    if b is not None:
        b_plain = np.broadcast_to(np.asarray(primal_value(b)), shape)
        # SciPy ignores terms of weight 0 even where a = +inf (0·e^inf would be nan).
        drop = (b_plain == 0) & (shifted_from == np.inf)
        if np.any(drop):
            a = _where(drop, -np.inf, a)
        shifted_from = np.where(b_plain == 0, -np.inf, shifted_from)
    with np.errstate(invalid="ignore"):
        m = np.max(shifted_from, axis=axes, keepdims=True) if shifted_from.size else \
            np.zeros(tuple(1 if i in axes else s for i, s in enumerate(shape)))
    m = np.where(np.isfinite(m), m, 0.0)           # a constant shift: no derivative
    return _logsumexp_tail(a, b, m, axes, keepdims, return_sign)


def _logsumexp_tail(a, b, m, axes, keepdims, return_sign):
    """log Σ b·e^(a − m) + m for the shift ``m``."""
    terms = _exp(a - m)
    if b is not None:
        terms = b * terms
    s = _sum(terms, axis=axes, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = (_log(_abs(s)) if return_sign else _log(s)) + m
    if not keepdims:
        out = _squeeze(out, axis=axes) if axes else out
    if not return_sign:
        return out
    sgn = np.sign(np.asarray(primal_value(s)))
    return out, (sgn if keepdims else np.squeeze(sgn, axis=axes))


def softmax(x, axis=None):
    """eˣ / Σ eˣ over ``axis``: ∂ = diag(σ) - σσᵀ along it."""
    return _exp(x - logsumexp(x, axis=axis, keepdims=True))


def log_softmax(x, axis=None):
    """x - logsumexp(x): ∂ = I - 1σᵀ along ``axis``."""
    return x - logsumexp(x, axis=axis, keepdims=True)
