"""The oracles: is this derivative right?

- :mod:`verification.numeric`: central differences, Richardson extrapolation,
  complex step, the Taylor-remainder convergence test;
- :func:`check_grads`: a function's JVPs and VJPs against numeric oracles, to
  any order, with named failures;
- :func:`check_rule` / :func:`check_registry`: the rule checker for any
  primitive, custom ``@primitive`` or ``autograd.Function``;
- :mod:`verification.symbolic`: the SymPy oracle (the registry on symbols);
- :mod:`verification.strategies`: hypothesis strategies for your own rule tests.
"""
from .check_grads import GradCheckError, check_grads  # noqa: F401
from .numeric import (central_difference, complex_step, numerical_jacobian,  # noqa: F401
                      richardson, taylor_test)
from .rules import RegistryReport, RuleReport, check_registry, check_rule  # noqa: F401
