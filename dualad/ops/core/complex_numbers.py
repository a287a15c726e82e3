"""Complex numbers: the parts of z = x + iy, and the convention every rule follows.

The convention is JAX's (docs/complex.md has the derivation and worked examples).
A function of complex arguments is differentiated as a function on R², so
functions that are not holomorphic (``abs``, ``real``, ``conj``, ``angle``) have
derivatives too:

- tangents push forward through the R-linear derivative,
  ż ↦ ∂f/∂z · ż + ∂f/∂z̄ · conj(ż);
- a cotangent pairs with a tangent by ⟨u, v⟩ = Re Σ u·v (a transpose, not a
  conjugate transpose), and the VJP is the transpose of the JVP for that
  pairing. So a holomorphic f pulls ū back to ū·f'(z), and a real-valued f
  pulls ū back to ū·(∂f/∂x − i ∂f/∂y) = 2ū ∂f/∂z: ``grad`` of |z|² is 2·conj(z).

The primitives of this module (r = |z|):

    real:        ż ↦ Re ż                    ū ↦ Re ū + 0i
    imag:        ż ↦ Im ż                    ū ↦ −i Re ū
    conj:        ż ↦ conj(ż)                 ū ↦ conj(ū)
    complex_abs: ż ↦ Re(conj(z) ż) / r       ū ↦ Re ū · conj(z) / r
    angle:       ż ↦ Im(conj(z) ż) / r²      ū ↦ −i Re ū · conj(z) / r²
    to_complex:  ẋ ↦ ẋ + 0i  (R into C)       ū ↦ Re ū

``abs`` and ``angle`` take the derivative 0 at z = 0, as ``abs`` does on the
real line. ``sign(z) = z/|z|`` is composed from them (derivative 0 at 0).

Real values and complex cotangents. When a real value x meets a complex
one (``x * (1+2j)``) its cotangent is the real part of what the rule returns
(JAX transposes the real-to-complex embedding to Re). The reverse sweep does
not check dtypes at every node (real programs would pay for it): an
imaginary part that is not x's own may ride along on the cotangents of real
intermediates. Rules with real primals are real-linear maps with real
coefficients, so they keep real and imaginary parts apart and the real part
stays exact; the complex-to-real primitives here (and ``irfft``) take Re of
their cotangent before it can mix into a complex one, and the sweep returns
Re of the cotangent of every real input.
"""
from __future__ import annotations

import numpy as np

from ...core.values import is_batched, is_staged, map_value, nondiff_value, staged_value
from ...core.tracer import primal_value, shape_of, unguarded_value
from ...core.primitive import Primitive, implements, register, sample
from .elementwise import absolute_p, is_complex, multiply, sign_p, where

__all__ = [
    "is_complex", "complex_dtype", "to_complex_p", "real_p", "imag_p", "conj_p",
    "complex_abs_p", "angle_p", "real", "imag", "conj", "conjugate", "complex_abs",
    "complex_sign", "absolute", "sign", "angle", "real_if_close", "to_complex"
]


def complex_dtype(x):
    """The complex dtype matching ``x``'s precision (complex64 for float32)."""
    return np.result_type(unguarded_value(x), np.complex64)


def _re(v):
    """Re v for a tangent or cotangent that may already be real."""
    return real_p(v) if is_complex(v) else v


def _im(v):
    return imag_p(v) if is_complex(v) else np.zeros(shape_of(v), np.result_type(
        unguarded_value(v)))


def _embed(v, like):
    """v (real) as a complex value of ``like``'s complex dtype."""
    return to_complex_p(v, dtype=complex_dtype(like))


def _nonzero_ratio(num, den):
    """num / den, with 0 where den == 0 (the convention at z = 0)."""
    if is_staged(den):   # dualad.jit records the mask, right for every value
        zero = staged_value(den) == 0
        return where(zero, 0.0, num / where(zero, 1.0, den))
    zero = primal_value(den) == 0
    if not np.any(zero):
        return num / den
    if is_batched(den):
        zero = nondiff_value(den) == 0    # under vmap: one mask per example
    return where(zero, 0.0, num / where(zero, 1.0, den))


def _sp(fname):
    return lambda sp, *args: getattr(sp, fname)(*args)


def _elementwise(name, impl, sympy, linear=False):
    prim = register(Primitive(name, impl, sympy=sympy, linear=linear))
    prim.elementwise = True
    prim.domain = None
    return prim


# --- the embedding R -> C -----------------------------------------------------------
def _to_complex_impl(x, dtype):
    return np.asarray(x).astype(dtype)[()] if np.ndim(x) == 0 else np.asarray(x, dtype=dtype)


to_complex_p = _elementwise("to_complex", _to_complex_impl, lambda sp, x, dtype: x,
                            linear=True)
to_complex_p.defjvp(lambda t, ans, x, dtype: to_complex_p(t, dtype=dtype) if not is_complex(t)
                    else t)
to_complex_p.defvjp(lambda ct, ans, x, dtype: _re(ct))


# --- parts ----------------------------------------------------------------------------
real_p = _elementwise("real", np.real, _sp("re"), linear=True)
real_p.defjvp(lambda t, ans, z: _re(t))
real_p.defvjp(lambda ct, ans, z: _embed(_re(ct), z))

imag_p = _elementwise("imag", np.imag, _sp("im"), linear=True)
imag_p.defjvp(lambda t, ans, z: _im(t))
imag_p.defvjp(lambda ct, ans, z: multiply(_embed(_re(ct), z), -1j))

conj_p = _elementwise("conj", np.conjugate, _sp("conjugate"), linear=True)
conj_p.defjvp(lambda t, ans, z: conj_p(t) if is_complex(t) else t)
conj_p.defvjp(lambda ct, ans, z: conj_p(ct) if is_complex(ct) else _embed(ct, z))


def _abs_slope(ans, z):
    """conj(z)/|z| (0 at z = 0): d|z| = Re(conj(z)/|z| · dz)."""
    return _nonzero_ratio(conj_p(z), ans)


complex_abs_p = _elementwise("complex_abs", np.abs, _sp("Abs"))
complex_abs_p.defjvp(lambda t, ans, z: _re(t * _abs_slope(ans, z)))
complex_abs_p.defvjp(lambda ct, ans, z: _embed(_re(ct), z) * _abs_slope(ans, z))


def _angle_slope(ans, z):
    """−i conj(z)/|z|² (0 at z = 0): d angle(z) = Re(−i conj(z)/|z|² · dz)."""
    r = complex_abs_p(z)
    return _nonzero_ratio(conj_p(z) * -1j, r * r)


angle_p = _elementwise("angle", np.angle, _sp("arg"))
angle_p.defjvp(lambda t, ans, z: _re(t * _angle_slope(ans, z)))
angle_p.defvjp(lambda ct, ans, z: _embed(_re(ct), z) * _angle_slope(ans, z))


# --- the public functions -----------------------------------------------------------
@implements(np.real)
def real(x):
    """``np.real``: Re x (a real ``x`` is returned as it is, as NumPy does)."""
    return real_p(x) if is_complex(x) else x


@implements(np.imag)
def imag(x):
    """``np.imag``: Im x (zeros, a constant, for a real ``x``)."""
    if is_complex(x):
        return imag_p(x)
    return np.zeros(shape_of(x), dtype=np.result_type(primal_value(x)))


@implements(np.conjugate)
def conj(x):
    """``np.conj`` / ``np.conjugate``: conj(x) (a real ``x`` unchanged)."""
    return conj_p(x) if is_complex(x) else x


conjugate = conj


def complex_abs(z):
    """|z| of a complex ``z``; :func:`absolute` sends complex arguments here."""
    return complex_abs_p(z)


def complex_sign(z):
    """``np.sign`` of complex ``z``: z/|z|, and 0 at 0 (NumPy 2's definition).

    Its derivative is d(z/|z|) = i·Im(conj(s)·dz)·s/|z| with s = z/|z|, which
    moves along the unit circle; it is 0 at z = 0. (JAX gives sign a zero
    derivative for complex z too; that is not the derivative of z/|z|.)
    """
    return _nonzero_ratio(z, complex_abs_p(z))


# --- abs and sign: real arguments go to the elementwise primitives, complex ones here --
@implements(np.absolute, np.fabs)
def absolute(x):
    """|x|; a complex ``x`` goes to :func:`complex_abs` (not holomorphic)."""
    if is_complex(x):
        return complex_abs(x)
    return absolute_p(x)



@implements(np.sign)
def sign(x):
    """``np.sign``: zero derivative for real ``x``; z/|z| for complex ``z``, whose
    derivative is not zero (see :func:`complex_sign`)."""
    if is_complex(x):
        return complex_sign(x)
    return sign_p(x)


@implements(np.angle)
def angle(z, deg=False):
    """``np.angle``: the argument of ``z`` in (−π, π] (degrees with ``deg``).

    Real arguments give 0 or π, constants with no derivative.
    """
    if not is_complex(z):
        return map_value(z, lambda v: np.angle(v, deg=deg))   # per example under vmap
    a = angle_p(z)
    return a * (180.0 / np.pi) if deg else a


@implements(np.real_if_close)
def real_if_close(a, tol=100):
    """``np.real_if_close``: Re a when every imaginary part is within ``tol``
    machine epsilons of 0 (decided on the value, as NumPy does), else ``a``.

    The result is then the real part, with Re's derivative: the imaginary part
    of a tangent is dropped, even though the value's imaginary part was ~0.
    """
    if not is_complex(a):
        return a
    v = primal_value(a)
    if tol > 1:
        tol = np.finfo(np.result_type(v)).eps * tol
    return real_p(a) if np.all(np.abs(np.imag(v)) < tol) else a


def to_complex(x, dtype=np.complex128):
    """A real ``x`` as a complex value (``x.astype(complex)``); its cotangent is Re ū."""
    return x if is_complex(x) else to_complex_p(x, dtype=np.dtype(dtype))


def _value_only(fn):
    return lambda *args, **kwargs: fn(*[primal_value(a) for a in args], **kwargs)


def _c(*shape, lo=-1.5, hi=1.5, seed=0):
    """Complex sample points spread over [lo, hi]² (a fixed low-discrepancy sequence, not
    numpy.random: importing it would cost every ``import dualad`` ~50 ms)."""
    return _spread(shape, lo, hi, 40 + seed) + 1j * _spread(shape, lo, hi, 80 + seed)


def _spread(shape, lo, hi, seed):
    u = (np.arange(1, int(np.prod(shape)) + 1) * 0.6180339887498949 + seed * 0.7548776662) % 1.0
    return (lo + (hi - lo) * u).reshape(shape)


real_p.samples = [sample(_c(3)), sample(_c(2, 3, seed=1))]
imag_p.samples = [sample(_c(3, seed=2)), sample(_c(2, 3, seed=3))]
conj_p.samples = [sample(_c(3, seed=4)), sample(_c(2, 3, seed=5))]
# Samples away from 0 (the kink of |z|, the branch point of angle) and, for angle, away
# from the negative real axis where it jumps from π to −π.
complex_abs_p.samples = [sample(_c(3, lo=0.3, hi=1.5, seed=6)), sample(_c(2, 3, seed=7) + 2.0)]
angle_p.samples = [sample(_c(3, lo=0.3, hi=1.5, seed=8)), sample(_c(2, 3, seed=9) + 2.0)]
to_complex_p.samples = [sample((3,), dtype=np.dtype(np.complex128)),
                        sample((2, 3), dtype=np.dtype(np.complex128))]

implements(np.iscomplexobj)(_value_only(np.iscomplexobj))
implements(np.isrealobj)(_value_only(np.isrealobj))
implements(np.iscomplex)(_value_only(np.iscomplex))
implements(np.isreal)(_value_only(np.isreal))
