"""The oracles: is this derivative right?

- :mod:`dualad.verification.numeric`: central differences, Richardson extrapolation,
  complex step, the Taylor-remainder convergence test;
- :func:`check_grads`: a function's JVPs and VJPs against numeric oracles, to
  any order, with named failures;
- :func:`check_rule` / :func:`check_registry`: the rule checker for any
  primitive, custom ``@primitive`` or ``autograd.Function``;
- :mod:`dualad.verification.symbolic`: the SymPy oracle (the registry on symbols);
- :mod:`dualad.verification.taylor`: Taylor mode's coefficients against nested forward
  mode and SymPy (``check_taylor``; ``check_rule`` runs it too), and the coverage page;
- :mod:`dualad.verification.strategies`: hypothesis strategies for your own rule tests.
"""

# The repository's verification/ folder, imported from a checkout as a package of its own,
# would be a second copy of dualad.verification: refused.
if __name__ != "dualad.verification":
    raise ImportError(
        f"this is dualad's oracle package, installed as dualad.verification: "
        f"write `from dualad import verification` (or `import dualad.verification`), not `import verification` (imported here as {__name__!r})")

from .check_grads import GradCheckError, check_grads  # noqa: F401
from .numeric import (central_difference, complex_step, numerical_jacobian,  # noqa: F401
                      richardson, taylor_test)
from .rules import RegistryReport, RuleReport, check_registry, check_rule  # noqa: F401

__all__ = ["check_grads", "GradCheckError", "check_rule", "check_registry", "RuleReport",
           "RegistryReport", "central_difference", "richardson", "complex_step",
           "numerical_jacobian", "taylor_test"]
