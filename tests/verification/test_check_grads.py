import numpy as np
import pytest

import dualad
from dualad.verification import GradCheckError, check_grads


def test_passes_on_correct_functions_to_third_order():
    f = lambda x, y: np.sin(x) * y + np.exp(x * y)  # noqa: E731
    n = check_grads(f, (np.array([0.3, 0.5]), np.array([1.2, -0.4])), order=3)
    # Level 1: 2 arguments x 2 modes. Each derivative map is then a function of the point
    # and of its direction (JVP: x, y, v_x, v_y; VJP: x, y, u), and so on down.
    assert n == 4 + (8 + 6) + (16 + 10 + 12 + 8)


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
    p.defvjp(lambda g, ans, x: g * 3.0 * dualad.extend.primal_value(x) ** 2)
    with pytest.raises(GradCheckError, match="of VJP, argument 0"):
        check_grads(p, np.array([0.7, 1.1]), order=2)


def test_bad_modes():
    with pytest.raises(ValueError, match="modes"):
        check_grads(np.sin, np.ones(2), modes=("sideways",))


def test_no_false_alarm_where_the_first_step_crosses_a_tie():
    # two entries 1e-4 apart: a step of 1e-2 swaps them, so its difference quotient is
    # not the derivative sort has at this point (a permutation matrix)
    x = np.array([-0.2342, -0.2341, 1.5792])
    assert check_grads(np.sort, (x,), order=1) == 2
    assert check_grads(np.sort, (x,), order=2) > 2
    assert check_grads(lambda v: np.abs(v) * v[0], (np.array([2e-4, -3e-5, 1.0]),), order=2)


@pytest.mark.parametrize("args", [(np.zeros(0),), (np.zeros((0, 3)), np.array(2.0)),
                                  (np.ones(3), np.zeros((2, 0)))])
def test_empty_arguments_pass_with_their_shapes_checked(args):
    f = lambda *xs: sum(np.sum(np.sin(x)) for x in xs) * np.sin(xs[0])  # noqa: E731
    assert check_grads(f, args, order=2) > 0


def test_wrong_vjp_without_jvp_reports_the_reverse_jacobian():
    p = dualad.primitive(lambda x: np.sin(x))
    p.defvjp(lambda g, ans, x: g * np.cos(x) * 1.01)      # no JVP rule at all
    with pytest.raises(GradCheckError) as e:
        check_grads(p, np.array([0.3, 0.5]), order=1, modes=("rev",))
    msg = str(e.value)
    assert msg.startswith("VJP, argument 0")
    assert "numerical Jacobian" in msg and "analytical Jacobian (reverse mode)" in msg
    assert "0.964" in msg       # 1.01·cos(0.3), read from the reverse sweep


def _with_helper(scale):
    """sin, whose VJP calls a helper primitive h(g, x) = g·cos(x) whose own VJP with
    respect to g is off by ``scale``: only differentiating the VJP in g shows it."""
    h = dualad.primitive(lambda g, x: g * np.cos(x), name="helper")
    h.defjvp(lambda t, a, g, x: t * np.cos(x), lambda t, a, g, x: -t * g * np.sin(x))
    h.defvjp(lambda c, a, g, x: c * np.cos(x) * scale, lambda c, a, g, x: -c * g * np.sin(x))
    p = dualad.primitive(lambda x: np.sin(x), name="sin_via_helper")
    p.defjvp(lambda t, a, x: t * np.cos(x))
    p.defvjp(lambda g, a, x: h(g, x))
    return p


def test_second_order_catches_a_helper_vjp_off_by_a_tenth_of_a_percent():
    x = np.array([0.3, 0.4])
    assert check_grads(_with_helper(1.0), x, order=2) > 0
    with pytest.raises(GradCheckError, match="of VJP, argument 1"):   # argument 1: u
        check_grads(_with_helper(1.001), x, order=2)


def test_containers_are_pytrees_each_leaf_checked_and_named():
    """A list/dict argument is a pytree, as grad takes it (not np.asarray of it)."""
    f = lambda xs: xs[0] * np.sin(xs[1])  # noqa: E731
    assert check_grads(f, ([1.0, 2.0],), order=2) == check_grads(
        lambda a, b: a * np.sin(b), (np.array(1.0), np.array(2.0)), order=2)
    ragged = lambda p, x: np.sum(p["w"] * np.tanh(x)) + p["b"][0] ** 2  # noqa: E731
    assert check_grads(ragged, ({"w": np.ones(3), "b": [np.array(0.5)]}, np.arange(3.0))) > 0

    @dualad.primitive(name="sine_jvp_off")
    def sine(x):
        return np.sin(x)
    sine.defjvp(lambda g, ans, x: g * np.cos(x) * 1.01)
    sine.defvjp(lambda g, ans, x: g * np.cos(x))
    with pytest.raises(GradCheckError, match=r"JVP, argument 1(.|\n)*argument 1 is "
                                             r"args\[0\]\['b'\]"):
        check_grads(lambda d: d["a"] + sine(d["b"]), ({"a": np.ones(2), "b": np.ones(2)},),
                    order=1)
    with pytest.raises(ValueError, match="hold no arrays"):
        check_grads(lambda d: 1.0, ({},))
    # a list where f expects an array: f's own TypeError, with a note saying what to pass
    with pytest.raises(TypeError) as info:
        check_grads(lambda x: x * x, ([1.0, 2.0],))
    assert any("args[0] is a list" in n and "pass np.array(...)" in n
               for n in info.value.__notes__)


NOT_NUMBERS = r"; differentiable inputs are floating-point arrays or Python floats"
INTEGERS = r"; integer and boolean inputs are not differentiable\. Cast it to a floating dtype " \
    r"first, e\.g\. x\.astype\(float\)"
TEXT = r"; only floating-point and complex inputs are differentiable\. Cast it to a floating " \
    r"dtype first, e\.g\. x\.astype\(float\)"


@pytest.mark.parametrize("args, named", [
    (None, r"argument 0 is NoneType None" + NOT_NUMBERS),
    (np.array([1, 2]), r"argument 0 has dtype int64 and shape \(2,\)" + INTEGERS),
    (np.array([True]), r"argument 0 has dtype bool and shape \(1,\)" + INTEGERS),
    (np.array(["a"]), r"argument 0 has dtype <U1 and shape \(1,\)" + TEXT),
    ((np.ones(2), None), r"argument 1 is NoneType None" + NOT_NUMBERS),
    ((np.ones(2), 3), r"argument 1 has dtype int64 and shape \(\)" + INTEGERS),
    (([np.ones(2), None],), r"argument 0\[1\] is NoneType None" + NOT_NUMBERS),
    ((np.ones(2), {"w": [np.ones(1), 2]}),
     r"argument 1\['w'\]\[1\] has dtype int64 and shape \(\)" + INTEGERS),
])
def test_none_integer_and_text_arguments_are_refused_by_name(args, named):
    """There is no derivative to check: grad's own input check (dualad.extend.check_input)
    refuses the argument, named by check_grads, f and its position (its path in a
    container), and says what to pass, before f is ever called."""
    calls = []

    def loss(x, y=None):
        calls.append(1)
        return np.sin(x)
    with pytest.raises(TypeError, match=r"^check_grads\(loss, \.\.\.\): " + named + "$"):
        check_grads(loss, args, order=1)
    assert calls == []


@pytest.mark.parametrize("args", [np.ones(2), [np.ones(2)], {"w": np.ones(2)}])
def test_a_function_that_forgets_to_return_is_named(args):
    def loss(x):
        np.sin(x["w"] if isinstance(x, dict) else x)
    with pytest.raises(TypeError, match=r"check_grads\(loss, \.\.\.\): the function returned "
                                        r"None.*forget to `return`") as e:
        check_grads(loss, args, order=1)
    assert not getattr(e.value, "__notes__", None)    # no note blaming a container
