"""``dualad.trace(..., mode="taylor")`` and ``dualad trace --mode taylor``: the Taylor table
(one row of coefficients v_i,0 .. v_i,d per intermediate, Griewank–Walther ch. 13)."""
from __future__ import annotations

import math

import numpy as np
import pytest

import dualad
from dualad.teaching.cli import main


def bump(x):
    return np.sin(x) * np.exp(-x ** 2) / (1 + x ** 2)


def _run(capsys, *argv):
    try:
        rc = main(["trace", *argv])
    except SystemExit as e:
        rc = e.code
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.mark.parametrize("order", [0, 1, 4, 9])
def test_last_row_is_dualad_taylor(order):
    et = dualad.trace(bump, 0.7, mode="taylor", order=order)
    want = dualad.taylor(bump, order)(0.7)
    np.testing.assert_allclose(et.rows[-1].value, want, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(et.derivative, want, rtol=1e-13, atol=1e-15)
    assert et.derivative.shape == (order + 1,) and et.order == order


def test_every_row_is_its_own_intermediates_series():
    """Row v_i holds v_i(x + t)'s coefficients: check sin's row and the quotient's row
    against closed forms (sin^(k) and the Maclaurin coefficients of 1/(1 + x^2))."""
    et = dualad.trace(lambda x: np.sin(x) + 1 / (1 + x * x), 0.0, mode="taylor", order=6)
    rows = {r.formula: r.value for r in et.rows}
    sin_row = rows["sin v_0"]
    want = [math.sin(math.pi / 2 * k) / math.factorial(k) for k in range(7)]
    np.testing.assert_allclose(sin_row, want, atol=1e-15)
    np.testing.assert_allclose(et.derivative, np.array(want) + [1, 0, -1, 0, 1, 0, -1],
                               atol=1e-14)


def test_two_inputs_along_a_seed_and_the_input_rows():
    f = lambda x1, x2: np.log(x1) + x1 * x2 - np.sin(x2)  # noqa: E731
    et = dualad.trace(f, 2.0, 5.0, mode="taylor", order=3, seed=(1.0, -0.5),
                      names=["x1", "x2"])
    want = dualad.taylor(lambda z: f(z[0], z[1]), 3)(np.array([2.0, 5.0]),
                                                     np.array([1.0, -0.5]))
    np.testing.assert_allclose(et.derivative, want, rtol=1e-13)
    np.testing.assert_array_equal(et.rows[0].value, [2.0, 1.0, 0.0, 0.0])
    np.testing.assert_array_equal(et.rows[1].value, [5.0, -0.5, 0.0, 0.0])
    assert et.rows[0].formula == "x1 + t·ẋ1"


def test_default_seed_is_the_first_unit_direction():
    f = lambda x1, x2: x1 * x1 * x2  # noqa: E731
    et = dualad.trace(f, 2.0, 3.0, mode="taylor", order=2)
    np.testing.assert_allclose(et.derivative, [12.0, 12.0, 3.0])


def test_array_inputs():
    x = np.array([0.3, 1.1])
    et = dualad.trace(lambda x: np.sum(np.tanh(x) * x), x, mode="taylor", order=5,
                      seed=(np.array([1.0, 2.0]),))
    want = dualad.taylor(lambda x: np.sum(np.tanh(x) * x), 5)(x, np.array([1.0, 2.0]))
    np.testing.assert_allclose(et.derivative, want, rtol=1e-12)


def test_operation_counts_grow_quadratically_with_the_order():
    """A product's coefficient k costs k + 1 multiplications: the sweep is O(d^2)."""
    counts = [dualad.trace(lambda x: x * x * x, 1.5, mode="taylor", order=d)
              .op_counts["coefficient operations"] for d in (4, 8, 16)]
    assert counts[0] < counts[1] < counts[2]
    assert 3.0 < counts[2] / counts[1] < 4.5, counts


def test_renderings_show_one_column_per_order():
    et = dualad.trace(bump, 0.7, mode="taylor", order=2)
    text = et.to_text(digits=4)
    lines = text.splitlines()
    assert [c.strip() for c in lines[1].split("|")] == ["v_i", "operation", "v_i,0", "v_i,1",
                                                        "v_i,2"]
    assert "v_8 | v_5 / v_7" in text and "0.2649" in text
    assert "coefficient operations" in lines[-1] and "k!·y_k" in lines[-1]
    md = et.to_markdown()
    assert md.splitlines()[0] == "| v_i | operation | v_i,0 | v_i,1 | v_i,2 |"
    assert r"v_{i,2}" in et.to_latex() and r"\begin{tabular}{llrrr}" in et.to_latex()
    assert "v_8,0..d = [0.265, -0.305, -0.469]" in et.to_dot()
    with pytest.raises(ValueError, match="to_text"):
        et.to_html()
    assert et._repr_html_() is None


def test_bad_orders_and_seeds():
    with pytest.raises(ValueError, match="order must be an integer"):
        dualad.trace(bump, 0.7, mode="taylor", order=-1)
    with pytest.raises(ValueError, match="order must be an integer"):
        dualad.trace(bump, 0.7, mode="taylor", order=2.5)
    with pytest.raises(ValueError, match="mode 'taylor' only"):
        dualad.trace(bump, 0.7, mode="forward", order=2)
    with pytest.raises(ValueError, match="one direction per input"):
        dualad.trace(lambda a, b: a * b, 1.0, 2.0, mode="taylor", seed=(1.0,))
    with pytest.raises(ValueError, match="'forward', 'reverse' or 'taylor'"):
        dualad.trace(bump, 0.7, mode="jet")


def test_other_modes_unchanged_by_the_order_field():
    et = dualad.trace(lambda x1, x2: x1 * x2, 2.0, 5.0)
    assert et.order is None and et.to_text().splitlines()[0].startswith("-- primal")


def test_cli_prints_the_table(capsys):
    rc, out, err = _run(capsys, "x1*x2 + sin(x1)", "--at", "x1=0", "x2=2", "--mode",
                        "taylor", "--order", "3", "--seed", "1,1")
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("-- taylor coefficients along x + t·ẋ, order 3 ")
    assert lines[1].split() == ["v_i", "|", "operation", "|", "v_i,0", "|", "v_i,1", "|",
                                "v_i,2", "|", "v_i,3"]
    # (t)(2 + t) + sin(t) = 3 t + t^2 - t^3/6
    assert lines[-2].split("|")[2:] == [" 0.000 ", " 3.000 ", " 1.000 ", " -0.167"]
    assert "derivatives y^(k) = k!·y_k = [0.000, 3.000, 2.000, -1.000]" in lines[-1]


def test_cli_default_order_and_errors(capsys):
    rc, out, _ = _run(capsys, "exp(x)", "--at", "x=0", "--mode", "taylor")
    assert rc == 0 and "y_k = [1.000, 1.000, 0.500, 0.167]" in out
    for argv, says in [(("--order", "2"), "--order applies to --mode taylor"),
                       (("--mode", "taylor", "--order", "31"), "from 0 to 30"),
                       (("--mode", "taylor", "--html", "p.html"), "--html"),
                       (("--mode", "taylor", "--seed", "1,2"), "1 comma-separated")]:
        rc, out, err = _run(capsys, "exp(x)", "--at", "x=0", *argv)
        assert rc == 2 and says in err and err.count("\n") == 1, (argv, err)


def test_fallback_primitives_match_dualad_taylor():
    """Primitives whose Taylor rule is the JVP rule run on series (logaddexp, gammaln),
    next to recurrences (arcsinh): the table's last row is still dualad.taylor's."""
    import scipy.special as sc
    f = lambda x: np.logaddexp(x, 2 * x) * np.arcsinh(x) + sc.gammaln(x + 1.5)  # noqa: E731
    et = dualad.trace(f, 0.3, mode="taylor", order=5)
    np.testing.assert_allclose(et.derivative, dualad.taylor(f, 5)(0.3), rtol=1e-12)
    assert et.uncounted == set() and et.op_counts["coefficient operations"] > 0
