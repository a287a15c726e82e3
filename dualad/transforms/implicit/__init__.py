"""Implicit differentiation: solutions of equations differentiated by the implicit
function theorem, never by differentiating the solver (docs/implicit.md).

- :func:`dualad.custom_linear_solve`: x = A⁻¹ b, A a matrix, a sparse matrix, a LinearOperator or
  a matvec closing over traced values (``linear_solve.py``, ``custom_linear.py``);
- :func:`dualad.custom_root`: x*(θ) with F(x*, θ) = 0 from a user's solver (``root.py``);
- :mod:`dualad.lax`: JAX's spellings, ``custom_root(f, initial_guess, solve, tangent_solve)``
  and ``custom_linear_solve(matvec, b, solve, transpose_solve, symmetric)``.
"""
from .custom_linear import custom_linear_solve  # noqa: F401
from .linear_solve import LinearSystem, linear_solve_p  # noqa: F401
from .root import custom_root  # noqa: F401
from . import _samples  # noqa: F401,E402  (the rule checker's samples)

# LinearSystem and linear_solve_p stay importable from here (the machinery under
# custom_linear_solve); the public names are the two solves.
__all__ = ["custom_linear_solve", "custom_root"]
