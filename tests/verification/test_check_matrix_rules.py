"""``dualad check`` on rules whose argument must be a square matrix, and the figures of a
failure line (issue 30): a correct logabsdet passes (square samples drawn where the
broadcasting shapes are refused; symmetric positive definite ones where a general matrix
is refused), a rule no sample can be drawn for exits 2 ("could not check", never 1), and
a FAILED line shows the failing check's own error, never "abs 0.00e+00"."""
import re
import textwrap

import numpy as np

import dualad
from dualad.teaching.cli import main
from dualad.verification import check_rule

RULES = textwrap.dedent('''
    import numpy as np
    import dualad

    @dualad.primitive
    def logabsdet(a):
        return np.linalg.slogdet(a)[1]
    logabsdet.defvjp(lambda g, ans, a: g * np.linalg.inv(a).T)

    @dualad.primitive
    def spd_logdet(a):
        np.linalg.cholesky(a)          # refuses a matrix that is not positive definite
        return np.linalg.slogdet(a)[1]
    spd_logdet.defvjp(lambda g, ans, a: g * np.linalg.inv(a).T)

    @dualad.primitive
    def wrong_logabsdet(a):
        return np.linalg.slogdet(a)[1]
    wrong_logabsdet.defvjp(lambda g, ans, a: g * np.linalg.inv(a))      # inv, not inv.T

    @dualad.primitive
    def needs_4d(a):
        if np.ndim(a) != 4:
            raise ValueError("a must be 4-d")
        return np.sum(a)
    needs_4d.defvjp(lambda g, ans, a: g * np.ones_like(a))
''')


def _check(tmp_path, capsys, name):
    path = tmp_path / "matrix_rules.py"
    path.write_text(RULES)
    rc = main(["check", f"{path}:{name}"])
    return rc, capsys.readouterr().out


def test_a_correct_logabsdet_passes(tmp_path, capsys):
    rc, out = _check(tmp_path, capsys, "logabsdet")
    assert rc == 0, out
    assert "[(3, 3)]: cotangent (VJP) of argument 0" in out and "1 of 1 rules pass" in out


def test_a_rule_needing_a_positive_definite_matrix_passes(tmp_path, capsys):
    rc, out = _check(tmp_path, capsys, "spd_logdet")
    assert rc == 0, out


def test_a_wrong_matrix_rule_still_fails(tmp_path, capsys):
    rc, out = _check(tmp_path, capsys, "wrong_logabsdet")
    assert rc == 1, out
    assert "FAILED sample" in out and "cotangent (VJP) of argument 0: abs" in out


def test_no_sample_is_could_not_check_exit_2(tmp_path, capsys):
    rc, out = _check(tmp_path, capsys, "needs_4d")
    assert rc == 2, out
    assert "COULD NOT CHECK" in out and "no sample could be drawn" in out
    assert "FAILED" not in out and "could not be checked" in out
    p4 = dualad.primitive(lambda a: np.sum(a) if np.ndim(a) == 4 else np.linalg.det(a[0]),
                          name="p4")
    p4.defvjp(lambda g, ans, a: g * np.ones_like(a))
    report = check_rule(p4)
    assert not report.ok and not report.failures and report.unchecked


def test_the_whole_module_wrong_beats_unchecked(tmp_path, capsys):
    path = tmp_path / "matrix_rules.py"
    path.write_text(RULES)
    assert main(["check", str(path)]) == 1
    assert "2 of 4 rules pass, 1 wrong, 1 could not be checked" in capsys.readouterr().out


def test_failure_lines_show_their_own_figures():
    @dualad.primitive
    def softplus_typo(x):          # the README's example
        return np.logaddexp(0.0, x)
    softplus_typo.defderiv(lambda ans, x: 1.0 / (1.0 + np.exp(-1.001 * x)))
    text = str(check_rule(softplus_typo))
    assert "abs 0.00e+00" not in text, text
    order2 = [ln for ln in text.splitlines() if "order 2" in ln]
    assert order2, text
    for line in order2:
        assert float(re.search(r"abs ([0-9.e+-]+)", line).group(1)) > 1e-6, line
