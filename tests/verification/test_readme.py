"""The README's code blocks run as written."""
import pathlib
import re

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"


def _blocks():
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_verifying_a_hand_written_rule_example_catches_the_wrong_rule(capsys):
    block = next(b for b in _blocks() if "check_rule(softplus_typo)" in b)
    exec(compile(block, "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert "softplus: ok" in out and "softplus_typo: FAILED" in out


def test_usage_example_runs():
    block = _blocks()[0]
    exec(compile(block, "README.md", "exec"), {})
