import numpy as np
import pytest
import sympy as sp

import dualad
from dualad.verification.symbolic import (compare, compare_at, rules_jacobian, symbolic_outputs,
                                   sympy_hessian, sympy_jacobian)


def f(x):
    return np.sin(x) * np.exp(x[::-1]) + np.sum(x ** 2)


def test_symbols_are_real_and_outputs_are_expressions():
    syms, expr = symbolic_outputs(f, [(2,)])
    assert all(s.is_real for s in syms[0])
    x0, x1 = syms[0]
    assert sp.simplify(expr[0] - (sp.sin(x0) * sp.exp(x1) + x0 ** 2 + x1 ** 2)) == 0


@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_rules_on_symbols_equal_sympy_diff(mode):
    assert compare(f, [(2,)], mode=mode) == (True, "symbolic")
    J_rules, xs = rules_jacobian(f, [(2,)], mode=mode)
    J_sympy, _ = sympy_jacobian(f, [(2,)])
    assert J_rules.shape == J_sympy.shape == (2, 2)


def test_a_wrong_rule_is_caught_symbolically():
    p = dualad.primitive(lambda x: np.tanh(x))
    p.sympy = lambda sp_, x: sp_.tanh(x)
    p.derivs = None
    p.elementwise = True
    p.defjvp(lambda t, a, x: t * (1.0 - a * a) * 1.01)
    assert compare(lambda x: p(x), [()])[0] is False


def test_matrix_functions_and_hessian():
    g = lambda A, b: np.sum(np.tanh(A @ b))  # noqa: E731
    assert compare(g, [(2, 2), (2,)], mode="reverse")[0]
    H, xs = sympy_hessian(lambda x: np.sum(x ** 3) * x[0], (2,))
    x = np.array([0.4, -0.7])
    H_ad = dualad.jvp(dualad.grad(lambda x: np.sum(x ** 3) * x[0]), (x,), (np.eye(2),))[1]
    H_num = np.array(sp.lambdify(xs, H)(*x), dtype=float)
    assert np.allclose(H_ad, H_num, rtol=1e-12)


def test_numeric_comparison_at_a_point_for_kinked_functions():
    x = np.array([0.2, 1.5, -0.3])
    assert compare_at(lambda x: np.max(x) * x, [x])


def test_compare_at_evaluates_a_kink_without_printing_code(monkeypatch):
    """SymPy evaluates the Jacobian at the point (lambdify's printer simplified each
    Piecewise condition of Max's derivative: ~4 s for this 3-vector); the numbers are
    lambdify's, and a wrong rule at a kink is still caught."""
    from dualad.verification import symbolic
    x = np.array([0.2, 1.5, -0.3])
    J_sym, xs = sympy_jacobian(lambda x: np.max(x) * x, [(3,)])
    want = np.zeros((3, 3)) + np.diag([1.5, 1.5, 1.5])
    want[:, 1] += x
    with monkeypatch.context() as m:
        m.setattr(sp, "lambdify", lambda *a, **k: pytest.fail("lambdify called"))
        assert compare_at(lambda x: np.max(x) * x, [x])
        np.testing.assert_array_equal(symbolic._evaluate_at(sp, J_sym, xs, x), want)
        p = dualad.primitive(lambda x: np.maximum(x, 0.0) ** 2, name="relu_sq_wrong")
        p.sympy = lambda sp_, x: sp_.Max(x, 0) ** 2
        p.elementwise = True
        p.defjvp(lambda t, a, x: t * 2.02 * np.maximum(x, 0.0))
        assert not compare_at(lambda x: p(x), [x])
    # SymPy's 1/0 is zoo, not a float: NumPy evaluates the lambdified expression, as before
    with np.errstate(divide="ignore"):
        J = symbolic._evaluate_at(sp, sp.Matrix([[1 / xs[0]]]), xs[:1], [np.float64(0.0)])
    assert J.shape == (1, 1) and J[0, 0] == np.inf


def test_missing_translation_is_named():
    p = dualad.primitive(lambda x: x * 2.0, name="no_sympy_here")
    p.defderiv(lambda a, x: 2.0)
    with pytest.raises(NotImplementedError, match="no_sympy_here"):
        symbolic_outputs(lambda x: p(x), [()])


def test_the_oracle_never_turns_text_into_code(tmp_path):
    """SymPy's sympify evaluates a string as Python: the oracle converts values with
    strict=True, so text that reaches a translation (a string in an object array) is
    refused, never run (issue 30)."""
    import sympy as sp
    from dualad.ops.core.scatter import scatter_set

    marker = tmp_path / "ran"
    text = f"__import__('pathlib').Path({str(marker)!r}).touch()"
    x = np.array([sp.Symbol("a"), sp.Symbol("b")], dtype=object)
    with pytest.raises(sp.SympifyError):
        scatter_set.sympy(sp, x, np.array(text, dtype=object), (0,))
    assert not marker.exists()
    y = scatter_set.sympy(sp, x, np.array(2.5, dtype=object), (0,))   # numbers still convert
    assert y[0] == sp.Float(2.5) and y[1] == sp.Symbol("b")
