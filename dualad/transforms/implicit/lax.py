"""JAX's spellings (``jax.lax.custom_root``, ``jax.lax.custom_linear_solve``), exported by
``dualad.lax``.

- ``custom_linear_solve(matvec, b, solve, transpose_solve=None, symmetric=False)`` is
  :func:`dualad.custom_linear_solve` itself (its third positional argument is JAX's
  ``solve(matvec, b) -> x``).
- ``custom_root(f, initial_guess, solve, tangent_solve, has_aux=False)``: the root of
  ``f(x) = 0`` found by ``solve(f, initial_guess)``, differentiable in the traced values
  ``f`` closes over; ``tangent_solve(g, y)`` solves the linear ``g(x) = y`` (g: x ↦ ∂f/∂x
  · x, on plain values). Built on :func:`dualad.custom_root`.
"""
from __future__ import annotations

from ...scipy._closure import closure_convert
from ...core.tracer import primal_value
from ...core.tree import flatten, tree_map
from ._util import Flat, plain
from .custom_linear import custom_linear_solve
from .root import custom_root as _custom_root

__all__ = ["custom_root", "custom_linear_solve"]


def custom_root(f, initial_guess, solve, tangent_solve, has_aux=False):
    r"""Find a root of ``f`` with your solver, differentiated by the implicit function theorem.

    JAX's ``lax.custom_root``: ``solve(f, initial_guess)`` returns :math:`x^*`
    with :math:`f(x^*) = 0`. The derivatives with respect to the traced values
    ``f`` closes over (:math:`\theta`) come from
    :math:`\dot x = -(\partial_x f)^{-1}\,\partial_\theta f\,\dot\theta` (and its
    transpose in reverse mode), never from differentiating ``solve``; the linear
    systems are solved by ``tangent_solve``. Built on :func:`dualad.custom_root`.

    Parameters
    ----------
    f : callable
        ``f(x) -> residual`` with the structure of ``x``, written with NumPy
        operations; it may close over traced values.
    initial_guess : array_like or pytree
        The starting point handed to ``solve``.
    solve : callable
        ``solve(f, initial_guess) -> x`` (or ``(x, aux)`` with ``has_aux``), run on
        plain values.
    tangent_solve : callable
        ``tangent_solve(g, y) -> x`` solving the linear system :math:`g(x) = y`,
        where ``g`` is :math:`x \mapsto \partial f/\partial x \cdot x` (or its
        transpose for reverse mode), on plain values. For a scalar ``x``:
        ``lambda g, y: y / g(1.0)``.
    has_aux : bool, default False
        ``solve`` returns ``(x, aux)``; the result is then ``(x, aux)``, ``aux``
        not differentiated.

    Returns
    -------
    array_like or pytree
        The root (``(x, aux)`` with ``has_aux=True``).

    Raises
    ------
    TypeError
        If ``f``, ``solve`` or ``tangent_solve`` is not callable.
    RuntimeError
        When differentiating, if ``solve``'s result is not a root of ``f``.

    See Also
    --------
    dualad.custom_root : dualad's spelling, ``custom_root(solve, optimality)``.

    Examples
    --------
    >>> def newton(f, x):
    ...     for _ in range(30):
    ...         x = x - f(x) / (2 * x)   # f'(x) = 2x for f = x**2 - a
    ...     return x
    >>> def sqrt(a):
    ...     return dualad.lax.custom_root(lambda x: x ** 2 - a, 1.0, newton,
    ...                                   lambda g, y: y / g(1.0))
    >>> print(float(sqrt(4.0)), float(dualad.grad(sqrt)(4.0)))
    2.0 0.25
    """
    for name, fn in (("f", f), ("solve", solve), ("tangent_solve", tangent_solve)):
        if not callable(fn):
            raise TypeError(f"custom_root: {name} must be a callable, got {type(fn).__name__}")
    conv, closed = closure_convert(f)
    guess_leaves, guess_rebuild = flatten(initial_guess)
    guess = guess_rebuild([primal_value(x) for x in guess_leaves])
    structure = Flat(guess)

    def plain_solve(*values):
        return solve(lambda x: conv(x, *values), guess)

    def optimality(x, *values):
        return conv(x, *values)

    def linear(matvec, b):   # tangent_solve on the solution's own structure
        def g(v):
            return tree_map(plain, structure.unravel(matvec(plain(structure.ravel(v)))))
        x = tangent_solve(g, tree_map(plain, structure.unravel(b)))
        return plain(structure.ravel(x, "custom_root", "tangent_solve(g, y)"))

    root = _custom_root(plain_solve, optimality, linear_solve=linear, has_aux=has_aux)
    return root(*closed)
