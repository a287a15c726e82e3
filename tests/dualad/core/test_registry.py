"""Every registered primitive passes the rule checker; kinks follow the documented conventions.

``check_registry()`` runs each primitive in both modes (vector forward mode and
batched reverse sweeps, plus single directions), to order 2, over broadcasting
shapes (), (3,), (2, 3), (1, 3) for elementwise primitives, against central
differences, and against the SymPy oracle where the primitive has a
translation. A new primitive is verified by registering it with samples or a
domain; one with neither fails here.
"""
import numpy as np
import pytest

import dualad
import dualad.scipy  # noqa: F401  (registers quad, odeint, ...: check_registry checks them too)
import dualad.scipy.signal  # noqa: F401  (registers iir_filter)
from dualad.core.primitive import REGISTRY
from rule_reports import rule_report as report

# One test per primitive (pytest's progress shows the sweep advance, ``--durations`` names
# the slow ones, a failure names its primitive): what ``check_registry(jit=False)`` runs,
# primitive by primitive (each check_rule seeds its own generator, so the checks are the
# same; rule_reports computes each once per session).
# The jit check: tests/verification/test_jit_registry.py.
NAMES = sorted(REGISTRY)


def test_every_registered_primitive_is_checked():
    """The parameter list, taken when the tests were collected, still names every
    registered primitive (one registered later would escape the checker)."""
    assert len(NAMES) > 100
    assert sorted(REGISTRY) == NAMES


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_primitive_passes_the_rule_checker(name):
    r = report(name)
    assert r.ok, str(r)
    assert r.rows, f"{name}: no checks ran"
    if not REGISTRY[name].zero_derivative:
        checks = " ".join(row.check for row in r.rows)
        assert "tangent (JVP)" in checks and "cotangent (VJP)" in checks, name
        assert "order 2" in checks, name
        # Taylor mode against nested forward mode and SymPy (dualad.verification.taylor);
        # stop_gradient: a constant series
        assert "Taylor coefficients 1..3 vs nested forward mode" in checks or \
            "Taylor mode gives the value and zero coefficients" in checks, name


@pytest.mark.slow
def test_elementwise_primitives_swept_over_broadcasting_shapes():
    for name in ("add", "multiply", "arctan2", "logaddexp", "maximum"):
        checks = " ".join(row.check for row in report(name).rows)
        assert "[(2, 3), (3,)]" in checks and "[(1, 3), (2, 3)]" in checks and "[(), ()]" in checks


@pytest.mark.slow
def test_sympy_oracle_ran_where_sympy_has_the_function():
    for name in ("sin", "exp", "log", "tanh", "arctan2", "power", "sum", "matmul"):
        assert any("SymPy oracle" in row.check for row in report(name).rows), name


# --- kinks: the documented conventions, checked in both modes ---------------------------
def _both_modes(f, x):
    g_rev = dualad.grad(lambda x: np.sum(f(x)))(x)
    _, g_fwd = dualad.jvp(lambda x: np.sum(f(x)), (x,), (np.eye(x.size),))
    return g_rev, g_fwd


def test_abs_at_zero_is_zero():
    for g in _both_modes(np.abs, np.array([0.0, -2.0, 3.0])):
        assert np.array_equal(g, [0.0, -1.0, 1.0])


def test_maximum_minimum_ties_split_evenly():
    y = np.array([1.0, 0.0, 2.0])
    x = np.array([1.0, 1.0, 1.0])
    for g in _both_modes(lambda x: np.maximum(x, y), x):
        assert np.array_equal(g, [0.5, 1.0, 0.0])
    for g in _both_modes(lambda x: np.minimum(x, y), x):
        assert np.array_equal(g, [0.5, 0.0, 1.0])
    gx, gy = dualad.grad(lambda a, b: np.maximum(a, b), argnums=(0, 1))(1.0, 1.0)
    assert gx == gy == 0.5


def test_max_reduction_ties_share_the_cotangent():
    for g in _both_modes(np.max, np.array([3.0, 1.0, 3.0, 3.0])):
        assert np.allclose(g, [1 / 3, 0.0, 1 / 3, 1 / 3])


def test_clip_at_a_bound_is_half():
    for g in _both_modes(lambda x: np.clip(x, 0.0, 1.0), np.array([0.0, 0.5, 1.0, 2.0])):
        assert np.array_equal(g, [0.5, 1.0, 0.5, 0.0])


def test_where_gives_the_unselected_branch_zero_even_if_nan():
    x = np.array([0.0, 4.0])
    with np.errstate(all="ignore"):
        g = dualad.grad(lambda x: np.sum(np.where(x > 0, np.sqrt(x), 0.0)))(x)
    # sqrt'(0) = inf sits in the unselected branch: its cotangent is 0, but the chain
    # rule multiplies 0 * inf in sqrt's own rule. The safe pattern feeds a safe value:
    safe = dualad.grad(lambda x: np.sum(np.where(x > 0, np.sqrt(np.where(x > 0, x, 1.0)),
                                                 0.0)))(x)
    assert np.array_equal(safe, [0.0, 0.25])
    assert g[1] == 0.25


def test_zero_derivative_functions_pass_through():
    x = np.array([0.4, -1.6, 2.5])
    for f in (np.sign, np.floor, np.ceil, np.round if False else np.rint, np.isnan):
        assert np.array_equal(dualad.grad(lambda x: np.sum(x) + np.sum(f(x) * 0.0))(x),
                              np.ones(3))
        assert np.array_equal(dualad.grad(lambda x: np.sum(x * f(x)))(x),
                              np.asarray(f(x), dtype=float))


def test_power_conventions():
    assert dualad.grad(lambda x: x ** 0.0)(0.0) == 0.0
    assert dualad.grad(lambda y: 0.0 ** y, argnums=0)(2.0) == 0.0
