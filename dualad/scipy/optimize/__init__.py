"""``dualad.scipy.optimize``: SciPy's solvers with differentiable solutions, and the
Rosenbrock test functions.

``root``, ``fsolve``, ``fixed_point``, ``root_scalar``, ``brentq``, ``brenth``, ``bisect``,
``ridder``, ``toms748``, ``newton``, ``minimize`` and ``least_squares`` have SciPy's
signatures and results. SciPy runs the solve on plain values (it is never
differentiated through); the solution is a differentiable function of the traced
values the problem depends on (traced ``args``, values the function closes over, traced
bounds) by the implicit function theorem on its optimality condition, through
:func:`dualad.custom_root`: in forward and reverse mode, to any order, for the cost of
linear solves with the optimality condition's Jacobian at the solution
(docs/scipy.md, "optimize: implicit differentiation").

``rosen``, ``rosen_der``, ``rosen_hess``, ``rosen_hess_prod``: the Rosenbrock function
and its derivatives in closed form, as NumPy operations (:mod:`._rosen`).
"""
from ._common import ConvergenceError, DegenerateSolutionWarning  # noqa: F401
from ._least_squares import least_squares  # noqa: F401
from ._minimize import minimize  # noqa: F401
from ._roots import fixed_point, fsolve, root  # noqa: F401
from ._rosen import rosen, rosen_der, rosen_hess, rosen_hess_prod  # noqa: F401
from ._scalar import bisect, brenth, brentq, newton, ridder, root_scalar, toms748  # noqa: F401
from ._vmap import refuse_vmap

# under dualad.vmap each solver raises, naming the loop to write (see _vmap)
(root, fsolve, fixed_point, root_scalar, brentq, brenth, bisect, ridder, toms748, newton,
 minimize, least_squares) = map(refuse_vmap, (
    root, fsolve, fixed_point, root_scalar, brentq, brenth, bisect, ridder, toms748, newton,
    minimize, least_squares))

__all__ = ["root", "fsolve", "fixed_point", "root_scalar", "brentq", "brenth", "bisect",
           "ridder", "toms748", "newton", "minimize", "least_squares", "ConvergenceError",
           "DegenerateSolutionWarning", "rosen", "rosen_der", "rosen_hess", "rosen_hess_prod"]
