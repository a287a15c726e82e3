"""``dualad trace`` on hostile and odd expressions (issue 30): each ends quickly in a
result or in one clear line on stderr (exit 2), and no text is ever run as Python."""
from __future__ import annotations

import time

import pytest

from dualad.teaching.cli import main


def _run(capsys, *argv):
    try:
        rc = main(["trace", *argv])
    except SystemExit as e:
        rc = e.code
    out, err = capsys.readouterr()
    return rc, out, err


def _rejected(capsys, expression, *says, at="x=1"):
    t0 = time.perf_counter()
    rc, out, err = _run(capsys, expression, "--at", at)
    assert time.perf_counter() - t0 < 10, expression
    assert rc == 2, (rc, out, err)
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert "(34," not in err and "Numerical result" not in err, err
    for word in says:
        assert word in err, err
    return err


@pytest.mark.parametrize("expression, says", [
    ("x + 9**9**9", ("'9 ** 9 ** 9' overflows", "largest float", "smaller constant")),
    ("x + 10**10**10", ("'10 ** 10 ** 10' overflows",)),      # a float power: no runaway int
    ("x**9**9**9", ("overflows",)),
    ("x + 10**400", ("'10 ** 400' overflows",)),
    ("x + " + "1" * 400, ("400 digits", "largest float")),
    ("1/0 + x", ("'1 / 0' is a division by 0",)),
    ("0**-1 + x", ("0 to a negative power",)),
    ("(-8)**(1/3) + x", ("not a real number", "-(8**(1/3))")),
])
def test_constants_that_have_no_float_value_are_named(capsys, expression, says):
    _rejected(capsys, expression, *says)


@pytest.mark.parametrize("expression, at, y", [
    ("x/0", "x=1", "inf"),            # a variable's operation follows NumPy
    ("x**-1", "x=0", "inf"),
    ("1e308*10 + x", "x=1", "inf"),
    ("x*2 + 3", "x=1", "5.000"),
])
def test_a_variable_over_zero_gives_a_result(capsys, expression, at, y):
    rc, out, err = _run(capsys, expression, "--at", at)
    assert rc == 0, err
    assert out.splitlines()[-1].startswith(f"y = {y};"), out


@pytest.mark.parametrize("expression, says", [
    ("", ("cannot parse",)),
    ("   ", ("cannot parse",)),
    ("x + ٣", ("invalid character",)),
    ("x + \u00e9", ("é",)),
    ("x+__import__('os').system('echo pwned')", ("unknown function",)),
    ("x.__class__", ("unsupported syntax",)),
    ("(lambda: 1)() + x", ("unknown function",)),
    ("x + 1j", ("unsupported syntax",)),
    ("x" + "+x" * 30000, ("too long",)),
    ("sin(" * 3000 + "x" + ")" * 3000, ("nested",)),
])
def test_odd_text_is_one_clear_line(capsys, expression, says):
    _rejected(capsys, expression, *says)


def test_nothing_is_executed(capsys, tmp_path):
    target = tmp_path / "pwned"
    _rejected(capsys, f"x + __import__('pathlib').Path({str(target)!r}).touch()")
    assert not target.exists()
