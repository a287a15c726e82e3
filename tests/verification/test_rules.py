"""The rule checker passes right rules and catches each kind of wrong one."""
import numpy as np
import pytest
from hypothesis import given, settings

import dualad
from dualad.ops.core.linear import unbroadcast
from dualad.verification import check_rule
from dualad.verification.strategies import arrays_in


def _mul(scale0=1.0, scale1=1.0, unbroadcast_vjp=True, vjp_scale=1.0):
    p = dualad.primitive(lambda x, y: x * y, name="mul")
    p.defjvp(lambda t, a, x, y: t * y * scale0, lambda t, a, x, y: t * x * scale1)

    def vjp(i, other):
        def rule(g, a, x, y):
            out = g * (y if i == 0 else x) * vjp_scale * (scale0 if i == 0 else scale1)
            if not unbroadcast_vjp:
                return out
            nb = np.ndim(g) - np.ndim(a)
            return unbroadcast(out, np.shape(x if i == 0 else y), nb)
        return rule
    p.defvjp(vjp(0, "y"), vjp(1, "x"))
    p.samples = [dualad.sample((3,), (3,)), dualad.sample((2, 3), (3,)), dualad.sample((), (2,))]
    return p


def test_right_rule_passes():
    report = check_rule(_mul())
    assert report.ok, str(report)
    checks = " ".join(r.check for r in report.rows)
    for kind in ("tangent (JVP)", "cotangent (VJP)", "consistency", "single-direction",
                 "single-cotangent", "order 2"):
        assert kind in checks


def test_catches_rule_off_by_a_tenth_of_a_percent():
    report = check_rule(_mul(scale0=1.001, scale1=1.001))
    assert not report.ok
    assert any("tangent (JVP) of argument 0" in r.check for r in report.failures)


def test_catches_wrong_sign_in_one_argument():
    report = check_rule(_mul(scale1=-1.0))
    failing = {r.check for r in report.failures}
    assert any("argument 1" in c for c in failing)
    assert not any("(JVP) of argument 0" in c for c in failing)


def test_catches_vjp_that_forgets_to_unbroadcast():
    report = check_rule(_mul(unbroadcast_vjp=False))
    assert not report.ok
    assert any("[(2, 3), (3,)]" in r.check or "[(), (2,)]" in r.check for r in report.failures)


def test_catches_jvp_and_vjp_that_disagree():
    report = check_rule(_mul(vjp_scale=1.5))
    assert any("consistency" in r.check for r in report.failures)


class Cube(dualad.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3.0 * x ** 2

    @staticmethod
    def jvp(ctx, t):
        (x,) = ctx.saved_tensors
        return t * 3.0 * x ** 2


class CubeTwoGrads(Cube):
    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3.0 * x ** 2, g


def test_function_checked_including_second_order():
    report = check_rule(Cube, args=(np.array([0.5, -1.2, 2.0]),))
    assert report.ok, str(report)


def test_catches_function_returning_wrong_number_of_gradients():
    report = check_rule(CubeTwoGrads, args=(np.array([0.5, -1.2]),))
    assert not report.ok
    assert any("2 gradient(s)" in r.detail for r in report.failures)


def test_reference_value_check():
    p = dualad.primitive(lambda x: np.sin(x) + 1e-6)
    p.defderiv(lambda a, x: np.cos(x))
    report = check_rule(p, args=(np.array([0.3]),), reference=lambda x: np.sin(x))
    assert any("value vs reference" in r.check for r in report.failures)


def test_no_samples_is_a_failure_not_a_skip():
    p = dualad.primitive(lambda x: x[::-1].copy())
    report = check_rule(p)
    assert not report.ok and "no checks could be run" in str(report)


@settings(max_examples=10)
@given(arrays_in((0.1, 4.0), shape=(3,)))
def test_user_style_property_test_with_exported_strategies(x):
    p = dualad.primitive(lambda x: np.log(x))
    p.defderiv(lambda a, x: 1.0 / x)
    assert check_rule(p, args=(x,), order=1, sympy=False).ok


def test_bad_target():
    with pytest.raises(TypeError, match="expected a dualad primitive"):
        check_rule(np.sin)


# --- rules as users write them: one direction, no samples declared ---------------------------

class Exp(dualad.Function):          # the README's example: forward and backward only
    @staticmethod
    def forward(ctx, x):
        y = np.exp(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y


class ExpOff(Exp):
    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y * 1.001


def _checks(report):
    return " | ".join(r.check for r in report.rows)


def test_backward_only_function_checked_in_reverse_mode_from_its_signature():
    report = check_rule(Exp)
    assert report.ok, str(report)
    checks = _checks(report)
    for shape in ("[()]", "[(3,)]", "[(2, 3)]"):           # drawn from the signature
        assert f"{shape}: cotangent (VJP) of argument 0" in checks
    assert "VJP of VJP" in checks and "(JVP)" not in checks
    assert "reverse mode only" in str(report)
    bad = check_rule(ExpOff)
    assert not bad.ok and any("cotangent (VJP)" in r.check for r in bad.failures)


def test_defvjp_only_and_defjvp_only_primitives():
    log = dualad.primitive(lambda x: np.log(x), name="log_vjp")
    log.defvjp(lambda g, a, x: g / x)            # needs x > 0: redrawn inside the domain
    assert check_rule(log).ok, str(check_rule(log))
    off = dualad.primitive(lambda x: np.log(x), name="log_off")
    off.defvjp(lambda g, a, x: g / (x + 1e-3))
    assert not check_rule(off).ok
    f = dualad.primitive(lambda x, y: x * np.sin(y), name="fwd_only")
    f.defjvp(lambda t, a, x, y: t * np.sin(y), lambda t, a, x, y: t * x * np.cos(y))
    report = check_rule(f)
    assert report.ok and "forward mode only" in str(report)
    assert "(VJP)" not in _checks(report) and "[(2, 3), (3,)]" in _checks(report)
    f.defjvp(lambda t, a, x, y: t * x * np.cos(y) * 1.001, argnums=(1,))
    assert any("tangent (JVP) of argument 1" in r.check for r in check_rule(f).failures)


def test_signature_samples_skip_shapes_the_forward_refuses():
    # a matrix-vector product: only some of the broadcasting shapes are valid
    mv = dualad.primitive(lambda a, x: a @ x, name="matvec")
    mv.defvjp(lambda g, ans, a, x: np.outer(g, x) if np.ndim(a) == 2 else g * x,
              lambda g, ans, a, x: g * a if np.ndim(a) == 1 else g @ a)
    report = check_rule(mv, order=1)
    assert report.ok, str(report)
    assert "shapes skipped" in str(report) and "[(2, 3), (3,)]" in _checks(report)


def test_explicit_samples_are_respected():
    report = check_rule(Exp, samples=[dualad.sample((4,))])
    assert "[(4,)]" in _checks(report) and "[(3,)]" not in _checks(report)
