"""Helpers shared by :mod:`dualad.scipy.integrate` (odeint) and :mod:`._quadrature`
(quad): binding traced arguments into a user function, batch axes, plain results."""
from __future__ import annotations

import math

import numpy as np

from ..numpy import array as _array
from ..ops import reshape
from ..core.batch_axes import batch_shape
from ..core.tracer import Box, shape_of
from ..core.tree import flatten
from ._closure import closure_convert

__all__ = [
    "_SCIPY_RTOL", "_SWEEP_OPTIONS", "_SWEEP_TOL", "_batch", "_bind", "_lift", "_plain",
    "_with"
]

_SCIPY_RTOL = 1.49012e-8
_SWEEP_TOL = 1e-10
_SWEEP_OPTIONS = ("tcrit", "hmax", "hmin", "mxordn", "mxords")


def _plain(fname, out):
    """``func``'s output on plain inputs; a traced output means a closed-over traced value."""
    if isinstance(out, Box):
        raise TypeError(
            f"{fname}: func returned a traced value (shape {shape_of(out)}) when called on plain "
            f"arrays: it reads a value being differentiated that dualad could not find in its "
            f"closure (a global variable, or an object attribute reached indirectly). Pass "
            f"that value through args=(...) instead, so that its derivative can be computed")
    return np.asarray(out, dtype=float)


def _bind(fn, args, nlead, swap=False):
    """``fn`` as ``g(*lead, *traced)`` (``nlead`` leading arguments, the first two swapped
    for ``tfirst``) and the traced values it uses: the traced leaves of ``args`` (nested
    containers allowed) and then the traced values ``fn`` closes over (found by
    :func:`._closure.closure_convert`). Those become differentiable arguments of the
    primitive; the other leaves are constants. A list or tuple returned by ``fn`` (SciPy
    style) becomes one array."""
    fn, closed = closure_convert(fn)
    leaves, rebuild = flatten(args)
    pos = [i for i, a in enumerate(leaves) if isinstance(a, Box)]
    const = [None if i in pos else a for i, a in enumerate(leaves)]
    k = len(pos)

    def bound(*a):
        lead, rest = a[:nlead], a[nlead:]
        out = fn(*(lead[::-1] if swap else lead), *rebuild(_with(const, pos, rest[:k])),
                 *rest[k:])
        return _array(out) if isinstance(out, (list, tuple)) else out
    bound.__name__ = getattr(fn, "__name__", "func")
    return bound, tuple(leaves[i] for i in pos) + closed


def _batch(tangent, primal):
    """A tangent's batch axes beyond its primal, and them flattened to () or (B,)."""
    batch = batch_shape(tangent, primal)
    return batch, ((math.prod(batch),) if batch else ())


def _lift(v, k):
    """``v`` (batch shape) with ``k`` unit axes appended, to broadcast against a state."""
    return reshape(v, shape_of(v) + (1,) * k) if k else v


def _with(args, pos, traced):
    full = list(args)
    for i, a in zip(pos, traced):
        full[i] = a
    return full


