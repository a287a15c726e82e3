"""Bessel functions of scipy.special, differentiable in x (the order v is a parameter).

The derivatives are the recurrences (DLMF 10.6.1, 10.29.1), with
``C`` = J (jv), Y (yv, yn), I (iv), K (kv):

    J'ᵥ(x) = (Jᵥ₋₁(x) - Jᵥ₊₁(x)) / 2        Y'ᵥ(x) = (Yᵥ₋₁(x) - Yᵥ₊₁(x)) / 2
    I'ᵥ(x) = (Iᵥ₋₁(x) + Iᵥ₊₁(x)) / 2        K'ᵥ(x) = -(Kᵥ₋₁(x) + Kᵥ₊₁(x)) / 2
    j0' = -j1,  y0' = -y1,  i0' = i1,  k0' = -k1    (order 0: J₋₁ = -J₁, ...)

and for the exponentially scaled ones, with s = sign(x):

    ive(v, x) = Iᵥ(x) e^(-|x|)     ive'  = (iveᵥ₋₁ + iveᵥ₊₁)/2 - s·ive
    kve(v, x) = Kᵥ(x) eˣ           kve'  = kve - (kveᵥ₋₁ + kveᵥ₊₁)/2
    i0e, i1e, k0e, k1e: the same with v = 0, 1.

Each right-hand side calls these primitives again, so every order works.
The order v (n for ``yn``, an integer) is not differentiable: the
derivative in it has no closed form; a traced order raises. Domains and
conventions: Y, K are singular at x = 0 (value and derivative infinite) and,
as Jᵥ and Iᵥ of non-integer order, nan for x < 0. ``i0e``, ``i1e``, ``ive``
have a kink at x = 0 through e^(-|x|); the derivative there uses sign(0) = 0,
the mean of the two one-sided derivatives (as ``abs'(0) = 0``).
"""
from __future__ import annotations

import numpy as np
import scipy.special as sc

from ...core.primitive import sample, implements
from ...core.tracer import Box
from ..core.complex_numbers import sign
from .common import declare

__all__ = [
    "jv", "j0", "j1", "yv", "yn", "y0", "y1", "iv", "i0", "i1", "ive", "i0e", "i1e", "kv",
    "k0", "k1", "kve", "k0e", "k1e"
]

_X = [(0.2, 4.0)]
_ORDER = {0: ("v", "the order; the derivative in it has no closed form")}
_PV = [None, (0.2, 4.0)]


def _order_samples(orders, scalar):
    return [sample(scalar, (), domain=_PV), sample(np.asarray(orders), (2, 4), domain=_PV),
            sample(np.asarray(orders)[:2].reshape(2, 1), (1, 7), domain=_PV)]


_REAL_ORDERS = _order_samples([0.0, 1.0, 2.5, -0.7], 1.3)
_INT_ORDERS = _order_samples([0, 1, 2, 3], 2)


def _bessel(name, impl, deriv, sympy, orders=_REAL_ORDERS):
    return declare(name, impl, None, deriv, sympy=sympy, domain=_PV, orders=_ORDER,
                   samples=orders)


# --- of the first kind: J, and order 0 and 1 ------------------------------------------------
jv = _bessel("jv", sc.jv, lambda a, v, x: 0.5 * (jv(v - 1.0, x) - jv(v + 1.0, x)),
             lambda sp, v, x: sp.besselj(v, x))
j0 = declare("j0", sc.j0, lambda a, x: -j1(x), sympy=lambda sp, x: sp.besselj(0, x), domain=_X)
j1 = declare("j1", sc.j1, lambda a, x: 0.5 * (j0(x) - jv(2, x)),
             sympy=lambda sp, x: sp.besselj(1, x), domain=_X)

# --- of the second kind: Y -------------------------------------------------------------------
yv = _bessel("yv", sc.yv, lambda a, v, x: 0.5 * (yv(v - 1.0, x) - yv(v + 1.0, x)),
             lambda sp, v, x: sp.bessely(v, x))
def _shifted(n, k):
    """The order n + k (a traced order, vmap's batched one say, stays traced)."""
    return n + k if isinstance(n, Box) else np.asarray(n) + k


def _yn_impl(n, x):
    n_arr = np.asarray(n)
    if n_arr.dtype.kind not in "iuf" or np.any(n_arr != np.round(n_arr)):
        raise ValueError(f"yn: the order n must be an integer, got {n!r} (shape {n_arr.shape})")
    return sc.yn(n_arr.astype(int), x)


yn = _bessel("yn", _yn_impl,
             lambda a, n, x: 0.5 * (yn(_shifted(n, -1), x) - yn(_shifted(n, 1), x)),
             lambda sp, n, x: sp.bessely(n, x), orders=_INT_ORDERS)
y0 = declare("y0", sc.y0, lambda a, x: -y1(x), sympy=lambda sp, x: sp.bessely(0, x), domain=_X)
y1 = declare("y1", sc.y1, lambda a, x: 0.5 * (y0(x) - yv(2, x)),
             sympy=lambda sp, x: sp.bessely(1, x), domain=_X)

# --- modified, of the first kind: I, and exponentially scaled ------------------------------
iv = _bessel("iv", sc.iv, lambda a, v, x: 0.5 * (iv(v - 1.0, x) + iv(v + 1.0, x)),
             lambda sp, v, x: sp.besseli(v, x))
i0 = declare("i0", sc.i0, lambda a, x: i1(x), sympy=lambda sp, x: sp.besseli(0, x), domain=_X)
i1 = declare("i1", sc.i1, lambda a, x: 0.5 * (i0(x) + iv(2, x)),
             sympy=lambda sp, x: sp.besseli(1, x), domain=_X)
ive = _bessel("ive", sc.ive,
              lambda a, v, x: 0.5 * (ive(v - 1.0, x) + ive(v + 1.0, x)) - sign(x) * a,
              lambda sp, v, x: sp.besseli(v, x) * sp.exp(-sp.Abs(x)))
i0e = declare("i0e", sc.i0e, lambda a, x: i1e(x) - sign(x) * a,
              sympy=lambda sp, x: sp.besseli(0, x) * sp.exp(-sp.Abs(x)), domain=_X)
i1e = declare("i1e", sc.i1e, lambda a, x: 0.5 * (i0e(x) + ive(2, x)) - sign(x) * a,
              sympy=lambda sp, x: sp.besseli(1, x) * sp.exp(-sp.Abs(x)), domain=_X)

# --- modified, of the second kind: K, and exponentially scaled -----------------------------
kv = _bessel("kv", sc.kv, lambda a, v, x: -0.5 * (kv(v - 1.0, x) + kv(v + 1.0, x)),
             lambda sp, v, x: sp.besselk(v, x))
k0 = declare("k0", sc.k0, lambda a, x: -k1(x), sympy=lambda sp, x: sp.besselk(0, x), domain=_X)
k1 = declare("k1", sc.k1, lambda a, x: -0.5 * (k0(x) + kv(2, x)),
             sympy=lambda sp, x: sp.besselk(1, x), domain=_X)
kve = _bessel("kve", sc.kve, lambda a, v, x: a - 0.5 * (kve(v - 1.0, x) + kve(v + 1.0, x)),
              lambda sp, v, x: sp.besselk(v, x) * sp.exp(x))
k0e = declare("k0e", sc.k0e, lambda a, x: a - k1e(x),
              sympy=lambda sp, x: sp.besselk(0, x) * sp.exp(x), domain=_X)
k1e = declare("k1e", sc.k1e, lambda a, x: a - 0.5 * (k0e(x) + kve(2, x)),
              sympy=lambda sp, x: sp.besselk(1, x) * sp.exp(x), domain=_X)

implements(sc.jv)(jv)
implements(sc.j0)(j0)
implements(sc.j1)(j1)
implements(sc.yv)(yv)
implements(sc.yn)(yn)
implements(sc.y0)(y0)
implements(sc.y1)(y1)
implements(sc.iv)(iv)
implements(sc.i0)(i0)
implements(sc.i1)(i1)
implements(sc.ive)(ive)
implements(sc.i0e)(i0e)
implements(sc.i1e)(i1e)
implements(sc.kv)(kv)
implements(sc.k0)(k0)
implements(sc.k1)(k1)
implements(sc.kve)(kve)
implements(sc.k0e)(k0e)
implements(sc.k1e)(k1e)
