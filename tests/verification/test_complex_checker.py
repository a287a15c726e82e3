"""The checkers treat C as R²: right complex rules pass, and each kind of wrong one is caught.

Wrong in the ways complex rules go wrong in practice: a conjugate too many or
too few (PyTorch's convention where JAX's is meant), the brief's ū·z/|z| for
the VJP of |z|, a complex tangent on a real output, a rule marked holomorphic
that is not, a real-transform VJP without the half-spectrum weights.
"""
import numpy as np
import pytest

import dualad
from dualad.ops.core.linear import unbroadcast
from dualad.verification import GradCheckError, check_grads, check_rule
from dualad.verification.numeric import (central_difference, holomorphic_defect, real_directions,
                                  real_jacobian, realify)

Z = np.array([1 + 2j, -0.5 + 0.3j, 2 - 1j])


def _rows(report, text):
    return [r for r in report.rows if text in r.check]


# --- numeric oracles ---------------------------------------------------------------------------
def test_real_jacobian_of_the_parts():
    z = np.array([1 + 2j, 3 - 1j])
    np.testing.assert_allclose(real_jacobian(np.conj, z), np.diag([1, 1, -1, -1]), atol=1e-9)
    np.testing.assert_allclose(real_jacobian(np.real, z), np.hstack([np.eye(2), 0 * np.eye(2)]),
                               atol=1e-9)
    r = np.abs(z)
    np.testing.assert_allclose(real_jacobian(np.abs, z),
                               np.hstack([np.diag(z.real / r), np.diag(z.imag / r)]), atol=1e-9)
    # a holomorphic map: the Cauchy–Riemann block structure [[a, -b], [b, a]]
    J = real_jacobian(np.exp, np.array([0.3 + 0.4j]))
    d = np.exp(0.3 + 0.4j)
    np.testing.assert_allclose(J, [[d.real, -d.imag], [d.imag, d.real]], rtol=1e-8)
    assert realify(np.array([1 + 2j, 3 - 1j])).tolist() == [1, 3, 2, -1]
    assert real_directions(np.zeros(2, complex)).shape == (4, 2)


def test_holomorphic_defect_tells_holomorphic_from_not():
    v = np.array([0.3 - 0.2j, 1.0 + 0.5j, -0.7 + 0.1j])
    assert holomorphic_defect(np.sin, Z, v) < 1e-8
    assert holomorphic_defect(lambda z: z ** 3 / (1 + z), Z, v) < 1e-8
    for f in (np.conj, np.abs, np.real, lambda z: z * np.conj(z)):
        assert holomorphic_defect(f, Z, v) > 0.1
    # the complex difference along a complex direction is the R-linear derivative
    np.testing.assert_allclose(central_difference(np.conj, Z, v), np.conj(v), rtol=1e-9)


# --- check_grads on complex functions ----------------------------------------------------------
def test_check_grads_passes_non_holomorphic_functions_to_order_two():
    for f in (np.abs, np.conj, np.real, np.imag, np.angle, np.sign,
              lambda z: np.abs(z) ** 2 * np.exp(1j * np.angle(z)), lambda z: z * np.conj(z)):
        # order 2: the JVP as a function of (z, v) and the VJP of (z, u), 2 modes each
        assert check_grads(f, Z, order=2) == 2 + 4 + 4


def _conj_rule(vjp_conj=True, jvp_conj=True):
    p = dualad.primitive(lambda z: np.conj(z), name="my_conj")
    p.defjvp(lambda t, ans, z: np.conj(t) if jvp_conj else t)
    p.defvjp(lambda g, ans, z: np.conj(g) if vjp_conj else g)
    return p


def test_check_grads_catches_a_missing_conjugate():
    assert check_grads(_conj_rule(), Z, order=1) == 2
    with pytest.raises(GradCheckError, match=r"^VJP, argument 0: dot-product test"):
        check_grads(_conj_rule(vjp_conj=False), Z, order=1, modes=("rev",))
    with pytest.raises(GradCheckError, match=r"^JVP, argument 0") as e:
        check_grads(_conj_rule(jvp_conj=False), Z, order=1, modes=("fwd",))
    # the failure shows both Jacobians, complex numbers as [Re, Im] coordinates
    assert "[Re, Im] coordinates" in str(e.value) and "analytical Jacobian" in str(e.value)


# --- check_rule on complex primitives ----------------------------------------------------------
def _abs_rule(vjp):
    """|z| with a right JVP and the given VJP slope."""
    p = dualad.primitive(lambda z: np.abs(z), name="my_abs")
    p.defjvp(lambda t, ans, z: np.real(t * np.conj(z)) / ans)
    p.defvjp(lambda g, ans, z: np.real(g) * vjp(z) / ans)
    p.samples = [dualad.sample(Z)]
    return p


def test_rule_checker_passes_the_right_abs_and_catches_z_over_abs():
    assert check_rule(_abs_rule(np.conj)).ok
    report = check_rule(_abs_rule(lambda z: z))  # ū·z/|z|: PyTorch-style, not JAX's
    failing = " ".join(r.check for r in report.failures)
    assert "cotangent (VJP) of argument 0" in failing and "consistency" in failing
    assert "tangent (JVP) of argument 0" not in failing.replace("cotangent (VJP)", "")


def test_rule_checker_catches_a_complex_tangent_on_a_real_output():
    p = dualad.primitive(lambda z: np.abs(z), name="leaky_abs")
    p.defjvp(lambda t, ans, z: t * np.conj(z) / ans)      # forgot Re: a complex tangent
    p.defvjp(lambda g, ans, z: np.real(g) * np.conj(z) / ans)
    p.samples = [dualad.sample(Z)]
    report = check_rule(p)
    assert _rows(report, "real/complex kind") and not all(
        r.ok for r in _rows(report, "real/complex kind"))


def test_rule_checker_checks_holomorphic_claims():
    right = dualad.primitive(lambda z: z ** 3, name="cube")
    right.defjvp(lambda t, ans, z: t * 3 * z ** 2)
    right.defvjp(lambda g, ans, z: g * 3 * z ** 2)
    right.holomorphic = True
    right.samples = [dualad.sample(Z), dualad.sample(np.array([0.5, -1.0]))]
    report = check_rule(right)
    assert report.ok, str(report)
    assert _rows(report, "complex-linear JVP") and _rows(report, "vs complex step")
    # z·conj(z) with its right (R-linear) rules, wrongly marked holomorphic
    wrong = dualad.primitive(lambda z: z * np.conj(z), name="modulus_squared")
    wrong.defjvp(lambda t, ans, z: t * np.conj(z) + z * np.conj(t))
    wrong.defvjp(lambda g, ans, z: g * np.conj(z) + np.conj(g * z))
    wrong.holomorphic = True
    wrong.samples = [dualad.sample(Z)]
    report = check_rule(wrong)
    failing = " ".join(r.check for r in report.failures)
    assert "complex-linear JVP" in failing and "difference along i·v" in failing
    assert "cotangent (VJP)" not in failing  # its rules are right: only the claim is wrong
    wrong.holomorphic = False
    assert check_rule(wrong).ok


def test_rule_checker_catches_a_real_fft_vjp_without_the_half_spectrum_weights():
    from dualad.ops import fft as F
    bad = dualad.primitive(lambda x: np.fft.rfft(x), name="rfft_unweighted")
    bad.defjvp(lambda t, ans, x: F.rfft(t))
    # right up to the weights w (½ on the frequencies that stand for two): not right
    bad.defvjp(lambda g, ans, x: F.irfft(np.conj(g), n=np.shape(x)[-1], norm="forward"))
    bad.samples = [dualad.sample((4,)), dualad.sample((5,))]
    assert not check_rule(bad).ok
    good = dualad.primitive(lambda x: np.fft.rfft(x), name="rfft_registry")
    good.defjvp(lambda t, ans, x: F.rfft(t))
    good.defvjp(lambda g, ans, x: dualad.vjp(np.fft.rfft, x)[1](g)[0])
    good.samples = bad.samples
    assert check_rule(good, order=1).ok


def test_rule_checker_catches_an_fft_vjp_that_is_the_adjoint_not_the_transpose():
    bad = dualad.primitive(lambda z: np.fft.fft(z), name="fft_adjoint")
    bad.defjvp(lambda t, ans, z: np.fft.fft(t))
    bad.defvjp(lambda g, ans, z: np.conj(np.fft.fft(np.conj(g))))  # Wᴴ ū: wrong convention
    bad.samples = [dualad.sample(Z)]
    report = check_rule(bad)
    assert any("cotangent (VJP)" in r.check for r in report.failures)


def test_elementwise_registry_primitives_are_swept_over_complex_arguments():
    report = check_rule(dualad.REGISTRY["log"])
    assert report.ok, str(report)
    complex_rows = [r.check for r in report.rows if "complex" in r.check]
    assert any("[() complex]" in c for c in complex_rows)
    assert any("[(2, 3) complex]" in c for c in complex_rows)
    assert any("difference along i·v" in c for c in complex_rows)
    assert any("vs complex step" in r.check for r in report.rows)
    # SymPy (real symbols) runs on the real samples only
    assert not any("SymPy" in r.check and "complex" in r.check for r in report.rows)
    assert any("SymPy" in r.check for r in report.rows)


def test_rule_checker_mixed_real_and_complex_arguments():
    p = dualad.primitive(lambda x, z: x * z, name="scale")
    p.defjvp(lambda t, ans, x, z: t * z, lambda t, ans, x, z: t * x)

    def vjp_x(g, ans, x, z):  # a real input: Re of ū·z (forgetting Re is caught below)
        return unbroadcast(np.real(g * z), np.shape(x), np.ndim(g) - np.ndim(ans))
    p.defvjp(vjp_x, lambda g, ans, x, z: unbroadcast(g * x, np.shape(z), np.ndim(g) - np.ndim(ans)))
    p.samples = [dualad.sample(np.array([0.5, -1.0, 2.0]), Z)]
    assert check_rule(p).ok, str(check_rule(p))
