import numpy as np
import pytest

import dualad
from verification import GradCheckError, check_grads


def test_passes_on_correct_functions_to_third_order():
    f = lambda x, y: np.sin(x) * y + np.exp(x * y)  # noqa: E731
    n = check_grads(f, (np.array([0.3, 0.5]), np.array([1.2, -0.4])), order=3)
    assert n == 4 + 8 + 16  # 2 arguments x 2 modes, at each of 3 levels of nesting


def test_float32_table():
    x = np.array([0.3, 0.5], dtype=np.float32)
    assert check_grads(lambda x: np.tanh(x) * x, x, order=2) > 0


def _broken(scale_jvp=1.0, scale_vjp=1.0):
    p = dualad.primitive(lambda x: np.sin(x))
    p.defjvp(lambda t, ans, x: t * np.cos(x) * scale_jvp)
    p.defvjp(lambda g, ans, x: g * np.cos(x) * scale_vjp)
    return p


@pytest.mark.parametrize("modes, scale, name", [
    (("fwd",), dict(scale_jvp=1.001), "JVP, argument 0"),
    (("rev",), dict(scale_vjp=1.001), "VJP, argument 0"),
])
def test_names_the_failing_check(modes, scale, name):
    with pytest.raises(GradCheckError) as e:
        check_grads(_broken(**scale), np.array([0.3, 0.5]), order=1, modes=modes)
    msg = str(e.value)
    assert msg.startswith(name)
    assert "numerical Jacobian" in msg and "analytical Jacobian" in msg


def test_second_order_failure_is_named():
    p = dualad.primitive(lambda x: x ** 3)
    # first derivative right, written with a plain number so its own derivative is wrong
    p.defjvp(lambda t, ans, x: t * 3.0 * x * x)
    p.defvjp(lambda g, ans, x: g * 3.0 * dualad.tracer.primal_value(x) ** 2)
    with pytest.raises(GradCheckError, match="of VJP, argument 0"):
        check_grads(p, np.array([0.7, 1.1]), order=2)


def test_bad_modes():
    with pytest.raises(ValueError, match="modes"):
        check_grads(np.sin, np.ones(2), modes=("sideways",))
