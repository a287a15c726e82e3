"""``stop_gradient``: a value whose derivative is zero, in every transformation.

Mathematically ``stop_gradient`` is the identity on values and the zero map on
derivatives: for y = stop_gradient(x),

    value      y = x
    JVP        ẏ = 0                (whatever the tangent ẋ)
    VJP        x̄ = 0                (whatever the cotangent ȳ)

at every level of nesting: inside ``grad(grad(f))`` a value that passed through
``stop_gradient`` is a constant for the inner *and* the outer derivative (JAX's
``lax.stop_gradient``). So d/dx [x · stop_gradient(x)] = x (not 2x), and the
straight-through estimator ``x + stop_gradient(round(x) - x)`` has the value
``round(x)`` and the derivative 1.

It is one registry primitive, ``stop_gradient_p``, so every interpreter sees it:
forward and reverse mode (its rules), the sparsity detector (an empty pattern: the
output depends on no input), the SymPy oracle (the identity translation), the census
and ``vmap`` (an elementwise identity). Why it is *not* declared ``zero_derivative``
(as ``floor`` and comparisons are): a zero-derivative primitive returns a plain value
and logs it as a *decision* for the sparse Jacobians' pattern check
(:func:`dualad.core.tracer.note_decision`, ``jacobians/validity.py``). A stopped value is
a float that changes from point to point; logged, it would make every new point a
new decision and force a new sparsity detection at every evaluation. Returned plain
but not logged, a later branch on it (``if stop_gradient(x)[0] > 0``) would escape
the check. So the value stays on its trace with a zero derivative: the forward rule
gives an explicit zero tangent and the reverse rule ``None`` (no cotangent), and
what the function later decides from that value is logged as usual (a comparison of
a traced value). The rule checker knows the derivative is zero by declaration
(``stops_gradient``, read by ``verification/stopped.py``) instead of comparing it
with finite differences of the identity.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..core.primitive import Primitive, register, sample
from ..core.tracer import Box, primal_value, shape_of
from ..core.tree import flatten, leaves_with_path

if TYPE_CHECKING:
    from typing import TypeVar

    _T = TypeVar("_T")

__all__ = ["stop_gradient", "stop_gradient_p", "StopGradientPrimitive", "detach"]


class StopGradientPrimitive(Primitive):
    """A primitive whose derivative is zero by declaration, its value traced as usual.

    ``stops_gradient`` tells the rule checker not to compare the (zero) rules with
    finite differences of the value, which are those of the identity."""

    __slots__ = ()
    stops_gradient = True


def _zero_tangent(t, ans, x):
    """ẏ = 0, with the tangent's shape (batch axes included) and kind: an explicit zero,
    not ``None``, so that the output stays a traced value (see the module docstring)."""
    dtype = np.result_type(primal_value(t))
    return np.zeros(shape_of(t), dtype if dtype.kind in "fcO" else np.float64)


def _no_cotangent(ct, ans, x):
    """x̄ = 0: no cotangent reaches the argument."""
    return None


def _empty_pattern(prim, pats, primals, ans, params):
    """The sparsity pattern: no output element depends on any input."""
    (pat,) = pats
    return type(pat).empty(int(np.prod(shape_of(ans), dtype=np.int64)), pat.n)


stop_gradient_p = register(StopGradientPrimitive(
    "stop_gradient", lambda x: x, sympy=lambda sp, x: x, elementwise=True,
    sparsity=_empty_pattern,
    samples=[sample(()), sample((3,)), sample((2, 3))]))
stop_gradient_p.defjvp(_zero_tangent)
stop_gradient_p.defvjp(_no_cotangent)


def _leaf(x, path):
    if x is None or isinstance(x, (str, bytes)):
        what = "None" if x is None else f"a {type(x).__name__} ({x!r:.40})"
        raise TypeError(f"stop_gradient: {path or 'x'} is {what}, not an array or number; "
                        f"pass arrays, numbers or traced values (or a tuple/list/dict of them)")
    if isinstance(x, Box):
        return stop_gradient_p(x)
    arr = np.asarray(x) if not isinstance(x, np.ndarray) else x
    if arr.dtype.kind == "O":        # np.array([x, y]) of traced scalars: stacked by the call
        out = stop_gradient_p(arr)
        return x if out is arr else out   # nothing traced inside (a SciPy sparse matrix, say)
    if arr.dtype.kind not in "biufc":
        raise TypeError(f"stop_gradient: {path or 'x'} has dtype {arr.dtype} (shape "
                        f"{arr.shape}); pass numeric arrays")
    return x                         # a constant: the identity, the same object


def stop_gradient(x: _T) -> _T:
    r"""Return the value of ``x`` with a zero derivative in every transformation.

    :math:`y = \operatorname{stop\_gradient}(x)` has :math:`y = x`,
    :math:`\dot y = 0` (forward mode) and :math:`\bar x = 0` (reverse mode), at
    every level of nesting (as ``jax.lax.stop_gradient``): a value stopped inside
    ``grad(grad(f))`` is a constant for both derivatives. So
    :math:`\frac{d}{dx}\bigl[x \cdot \operatorname{stop\_gradient}(x)\bigr] = x`,
    and the straight-through estimator ``x + stop_gradient(round(x) - x)`` has the
    value ``round(x)`` and the derivative 1.

    Parameters
    ----------
    x : array_like or pytree
        An array, a number, a traced value, or a tuple/list/dict (a pytree) of
        them.

    Returns
    -------
    array_like or pytree
        The same values with the same structure; plain values are returned as
        they are (the same objects).

    Raises
    ------
    TypeError
        If a leaf is ``None``, a string or a non-numeric array.

    See Also
    --------
    dualad.lax.stop_gradient : The same function, under JAX's name.

    Notes
    -----
    Also spelled ``x.detach()`` on a traced value; ``Variable.detach()`` of the
    imperative tape (:mod:`dualad.autograd`) gives a constant Variable.

    Examples
    --------
    >>> print(float(dualad.grad(lambda x: x * dualad.stop_gradient(x))(3.0)))
    3.0

    The straight-through estimator: the value of ``round``, the derivative of the
    identity.

    >>> ste = lambda x: x + dualad.stop_gradient(np.round(x) - x)
    >>> print(ste(np.array([0.2, 1.7])))
    [0. 2.]
    >>> print(dualad.grad(lambda x: np.sum(ste(x)))(np.array([0.2, 1.7])))
    [1. 1.]
    """
    leaves, rebuild = flatten(x)
    if len(leaves) == 1 and leaves[0] is x:
        return _leaf(x, "")
    paths = _paths(x)
    return rebuild([_leaf(v, p) for v, p in zip(leaves, paths)])


def _paths(tree, path="x"):
    """The paths of ``tree``'s leaves, in :func:`flatten`'s order (for error messages)."""
    return [path + p for p, _ in leaves_with_path(tree)]


def detach(self):
    """Return the traced value with a zero derivative: ``stop_gradient(x)``.

    Returns
    -------
    object
        The same value, a constant for every transformation (see ``stop_gradient``).
    """
    return stop_gradient_p(self)
