import subprocess
import sys
import textwrap

from dualad.cli import main

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
    r = subprocess.run([sys.executable, "-m", "dualad.cli", "check", f"{path}:bad_softplus"],
                       capture_output=True, text=True, check=False)
    assert r.returncode == 1
