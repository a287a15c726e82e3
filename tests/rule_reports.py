"""The rule checker's report on one registered primitive, computed once per test session.

The registry's sweep (tests/dualad/core/test_registry.py, and under jit
tests/verification/test_jit_registry.py) and the modules of the long primitives
(solve_ivp, odeint, quad) ask for the same checks: the first asker runs them, the others
read the same report (importable from every test module: pytest puts tests/ on the path,
as for markdown_blocks)."""
import functools

from dualad.core.primitive import REGISTRY
from dualad.verification import check_rule

# Schur–Padé logarithm and powers: every call is slow; the jit check takes their first sample
JIT_FIRST_SAMPLE_ONLY = {"fractional_matrix_power", "logm"}


@functools.cache
def rule_report(name):
    """``check_rule`` of a registered primitive without the jit check (what
    ``check_registry(jit=False)`` runs for it)."""
    return check_rule(REGISTRY[name], jit=False)


@functools.cache
def jit_report(name):
    """The jit check alone (``only_jit=True``) of a registered primitive."""
    prim = REGISTRY[name]
    return check_rule(prim, samples=prim.samples[:1] if name in JIT_FIRST_SAMPLE_ONLY else None,
                      only_jit=True)
