import subprocess
import sys
import textwrap

from dualad.teaching.cli import main

RULES = textwrap.dedent('''
    import numpy as np
    import dualad

    @dualad.primitive
    def softplus(x):
        return np.logaddexp(0.0, x)
    softplus.defderiv(lambda ans, x: 1.0 / (1.0 + np.exp(-x)))

    @dualad.primitive
    def bad_softplus(x):
        return np.logaddexp(0.0, x)
    bad_softplus.defderiv(lambda ans, x: 1.001 / (1.0 + np.exp(-x)))

    class Square(dualad.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2.0 * g * x

        @staticmethod
        def jvp(ctx, t):
            (x,) = ctx.saved_tensors
            return 2.0 * t * x
    Square.samples = [dualad.sample((3,))]
''')


def test_check_command(tmp_path, capsys):
    path = tmp_path / "myrules.py"
    path.write_text(RULES)
    assert main(["check", f"{path}:softplus"]) == 0
    assert "1 of 1 rules pass" in capsys.readouterr().out
    assert main(["check", f"{path}:bad_softplus"]) == 1
    out = capsys.readouterr().out
    assert "FAILED" in out and "tangent (JVP) of argument 0" in out
    assert main(["check", str(path)]) == 1
    assert "2 of 3 rules pass" in capsys.readouterr().out


def test_check_command_bad_targets(tmp_path, capsys):
    assert main(["check", str(tmp_path / "missing.py")]) == 2
    assert "no such file" in capsys.readouterr().err
    path = tmp_path / "m.py"
    path.write_text("x = 1\n")
    assert main(["check", f"{path}:nothing"]) == 2
    assert main(["check", f"{path}:x"]) == 2
    assert "not a dualad primitive" in capsys.readouterr().err


def test_console_script_exit_status(tmp_path):
    path = tmp_path / "myrules.py"
    path.write_text(RULES)
    r = subprocess.run([sys.executable, "-m", "dualad.teaching.cli", "check", f"{path}:bad_softplus"],
                       capture_output=True, text=True, check=False)
    assert r.returncode == 1


README_EXP = textwrap.dedent('''
    import numpy as np
    import dualad

    class Exp(dualad.Function):                                   # PyTorch-style
        @staticmethod
        def forward(ctx, x):
            y = np.exp(x); ctx.save_for_backward(y); return y
        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors; return g * y

    class WrongExp(dualad.Function):
        @staticmethod
        def forward(ctx, x):
            y = np.exp(x); ctx.save_for_backward(y); return y
        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors; return g * y * 1.001

    @dualad.primitive
    def log(x):
        return np.log(x)
    log.defvjp(lambda g, ans, x: g / x)

    @dualad.primitive
    def wrong_log(x):
        return np.log(x)
    wrong_log.defvjp(lambda g, ans, x: g / (x + 1e-3))
''')


def test_check_command_on_backward_only_rules(tmp_path, capsys):
    """The README's Exp and a defvjp-only primitive: no samples, no jvp declared."""
    path = tmp_path / "exp_rules.py"
    path.write_text(README_EXP)
    for name, status in (("Exp", 0), ("WrongExp", 1), ("log", 0), ("wrong_log", 1)):
        assert main(["check", f"{path}:{name}"]) == status, name
        out = capsys.readouterr().out
        assert "0 checks" not in out and "reverse mode only" in out
        if status == 0:
            assert "ok  sample 2 [(2, 3)]: cotangent (VJP) of argument 0" in out
            assert "VJP of VJP" in out
        else:
            assert "FAILED sample 0 [()]: cotangent (VJP) of argument 0" in out


def test_check_help_says_the_target_runs(capsys):
    import pytest
    with pytest.raises(SystemExit):
        main(["check", "--help"])
    assert "top-level code" in " ".join(capsys.readouterr().out.split())
