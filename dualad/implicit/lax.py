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

from ..scipy._closure import closure_convert
from ..tracer import primal_value
from ..tree import flatten, tree_map
from ._util import Flat, plain
from .custom_linear import custom_linear_solve
from .root import custom_root as _custom_root

__all__ = ["custom_root", "custom_linear_solve"]


def custom_root(f, initial_guess, solve, tangent_solve, has_aux=False):
    """JAX's ``lax.custom_root``: ``solve(f, initial_guess)`` returns x with f(x) = 0 (or
    ``(x, aux)`` with ``has_aux``); derivatives with respect to what ``f`` closes over by
    the implicit function theorem, the linear systems solved by ``tangent_solve(g, y)``
    (for Jᵀ too: ``g`` is then the transposed map)."""
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
