"""Complex numbers in both modes, with JAX's convention (docs/complex.md).

Expected values marked "JAX" were computed once with jax 0.x in float64
(``jax.grad``, ``jax.vjp``, ``jax.jvp``, ``holomorphic=True``) and are
encoded here so that jax stays out of the test suite; the rest are closed
forms. Every gradient is computed in reverse mode and again from forward-mode
JVPs, so both modes agree with JAX.
"""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import dualad
from dualad.core.primitive import REGISTRY, sample
from dualad.verification import check_grads, check_rule
from dualad.verification.strategies import complex_arrays_in

Z = np.array([1 + 2j, -0.5 + 0.3j, 2 - 1j])
X = np.array([0.3, -1.2, 2.0])
W = np.array([0.7 - 0.2j, 1.1 + 0.4j, -0.3 + 0.9j])

GRAD_REAL = {
    'abs2': [(2-4j), (-1-0.6j), (4+2j)],
    'real_sin_times_imag': [(4.065446014039331-9.269574111519768j), (0.27521125538156427+0.5449604218704881j), (0.6421481247155201-2.471726672004819j)],
    'abs_exp_conj': [(7.293915540524218-2.4313051801747396j), (-0.1664306399780306-0.31205744995880735j), (23.131404417475682+3.3044863453536677j)],
    'angle_plus_abs': [(-0.39929523216205254-1.437477513175685j), (-2.7449833329521396-0.4807996208022237j), (0.03251456696753968-1.1017767052661251j)],
    'log_conj': [(0.20471895621705016-1.9071487177940905j), (-0.06881659539184731-1.7188202121427385j), (1.4047189562170501+1.2636476090008062j)],
    'norm': [(0.3109852067855614-0.6219704135711228j), (-0.1554926033927807-0.09329556203566843j), (0.6219704135711228+0.3109852067855614j)],
    'imag_square_over': [(0.4444444444444444+0.1111111111111111j), (0.28068612163065265+0.6460236132768991j), (0.1111111111111111-0.4444444444444444j)],
    'mixed_w': [(2.10810302089208-0.13799840176403916j), (-1.2374081943642696-1.3466254556792188j), (-0.11137391990048888+0.5686627761644518j)],
}

GRAD_HOLO = {
    'sin': ((0.8259215712470895-0.4567073249470405j), (0.8268497574897538+0.26461391335619233j)),
    'exp_z2': ((0.738886740028416+6.330000968834849j), (-0.5358133904597033-0.09714350078033679j)),
    'recip': ((-0.28+0.96j), (-0.7810650887573964-1.3254437869822489j)),
    'sqrt': ((0.4743416490252569-0.15811388300841897j), (0.1429266721823676-0.5381995938793481j)),
    'log': ((0.8-0.5999999999999999j), (-1.0769230769230769-0.6153846153846154j)),
    'cube': ((0.8400000000000003+2.88j), (0.9899999999999998-1.6799999999999997j)),
    'arctan': ((0.5-0.375j), (0.638655462184874+0.26890756302521013j)),
    'pow_w': ((0.4584537245328464+0.2292268622664232j), (0.1710435786015862-0.12563512963659879j)),
    'arccosh': ((0.40824829046386313-0.816496580927726j), (0.36503982251089573+1.0059535757722373j)),
    'tan': ((0.5968830400163487+0.9508599399354442j), (1.080263196014142-0.7703197632672698j)),
}

JAX = {
    'embed': [3.8472254180523664, -11.69001457000737, 19.55639432554605],
    'hvp': [(3.833288682097064+3.989433858012018j), (1.8403579735475057-1.531111473408764j), (-52.484151977754806-22.328634029126906j)],
    'vjp_nonholo': [(-3.880677030815275-4.525206950854473j), (-0.43374687290091163-0.5471075447579012j), (3.570873282550647-15.251882000453978j)],
    'jvp_nonholo': [(0.2419045091977144+1.325417904927588j), (0.5669676215389247-0.3401477204725596j), (-12.53961687470263+19.349011703268825j)],
}


# The functions whose derivatives JAX computed (jnp replaced by np: the same code runs
# on traced values through NumPy's dispatch).
REAL_FNS = {
    "abs2": lambda z: np.sum(np.abs(z) ** 2),
    "real_sin_times_imag": lambda z: np.sum(np.real(np.sin(z)) * np.imag(z)),
    "abs_exp_conj": lambda z: np.sum(np.abs(np.exp(z) * np.conj(z))),
    "angle_plus_abs": lambda z: np.sum(np.angle(z) * np.abs(z)),
    "log_conj": lambda z: np.sum(np.real(np.log(z) * np.conj(z))),
    "norm": lambda z: np.sqrt(np.sum(np.abs(z) ** 2)),
    "imag_square_over": lambda z: np.sum(np.imag(z ** 2 / (1 + z * np.conj(z)))),
    "mixed_w": lambda z: np.sum(np.real(z * W) ** 2 + np.imag(np.tanh(z))),
}
HOLO_FNS = {
    "sin": np.sin, "exp_z2": lambda z: np.exp(z) * z ** 2, "recip": lambda z: 1.0 / z,
    "sqrt": np.sqrt, "log": np.log, "cube": lambda z: z ** 3, "arctan": np.arctan,
    "pow_w": lambda z: z ** (0.5 + 0.5j), "arccosh": np.arccosh, "tan": np.tan,
}
Z0, Z1 = 0.8 + 0.6j, -0.7 + 0.4j


def grad_forward(f, z):
    """JAX's gradient of a real f from forward mode: ∂f/∂x − i ∂f/∂y, all 2n
    directions (e_k, then i·e_k) in one vector-mode sweep."""
    n = z.size
    eye = np.eye(n).reshape((n,) + z.shape)
    _, t = dualad.jvp(f, (z,), (np.concatenate([eye, 1j * eye]),))
    t = np.asarray(t)
    assert not np.iscomplexobj(t), "a real output must get real tangents"
    return (t[:n] - 1j * t[n:]).reshape(z.shape)


# --- real-valued functions of complex inputs: grad is ∂f/∂x − i ∂f/∂y (JAX) ----------------
@pytest.mark.parametrize("name", sorted(REAL_FNS))
def test_grad_of_real_function_matches_jax_in_both_modes(name):
    expected = np.array(GRAD_REAL[name])
    g = dualad.grad(REAL_FNS[name])(Z)
    assert g.dtype == np.complex128
    np.testing.assert_allclose(g, expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(grad_forward(REAL_FNS[name], Z), expected, rtol=1e-12,
                               atol=1e-12)


def test_grad_closed_forms():
    r = np.abs(Z)
    cases = [(lambda z: np.sum(np.abs(z) ** 2), 2 * np.conj(Z)),
             (lambda z: np.sum(np.real(z)), np.ones(3) + 0j),
             (lambda z: np.sum(np.imag(z)), -1j * np.ones(3)),
             (lambda z: np.sum(np.abs(z)), np.conj(Z) / r),
             (lambda z: np.sum(np.angle(z)), -1j * np.conj(Z) / r ** 2),
             (lambda z: np.sum(np.real(np.conj(z) * W)), np.conj(W)),  # Re(W·z̄) = a·x + b·y
             (lambda z: np.sum(np.real(z * np.conj(z))), 2 * np.conj(Z))]
    for f, expected in cases:
        np.testing.assert_allclose(dualad.grad(f)(Z), expected, rtol=1e-13)
        np.testing.assert_allclose(grad_forward(f, Z), expected, rtol=1e-13)
    # JAX: grad(|z|²)(1+2j) = 2-4j, grad(abs)(3+4j) = 0.6-0.8j, grad(angle)(1+2j) = -0.4-0.2j
    assert dualad.grad(lambda z: np.abs(z) ** 2)(1 + 2j) == 2 - 4j
    np.testing.assert_allclose(dualad.grad(np.abs)(3 + 4j), 0.6 - 0.8j, rtol=1e-15)
    np.testing.assert_allclose(dualad.grad(np.angle)(1 + 2j), -0.4 - 0.2j, rtol=1e-15)
    assert dualad.grad(np.imag)(1 + 2j) == -1j


def test_vjps_of_the_parts_match_jax():
    z = 3 + 4j
    assert dualad.vjp(np.conj, 1 + 2j)[1](1 + 1j)[0] == 1 - 1j
    assert dualad.vjp(np.real, 1 + 2j)[1](2.0)[0] == 2 + 0j
    assert dualad.vjp(np.imag, 1 + 2j)[1](2.0)[0] == -2j
    # ū·conj(z)/|z| (not ū·z/|z|): JAX gives 1.2-1.6j
    np.testing.assert_allclose(dualad.vjp(np.abs, z)[1](2.0)[0], 1.2 - 1.6j, rtol=1e-15)
    np.testing.assert_allclose(dualad.jvp(np.abs, (z,), (1 + 1j,))[1], 1.4, rtol=1e-15)
    np.testing.assert_allclose(dualad.jvp(np.angle, (1 + 2j,), (1 + 1j,))[1], -0.2, rtol=1e-15)


def test_vjp_and_jvp_of_a_non_holomorphic_function_match_jax():
    g = lambda z: np.conj(z) * np.abs(z) + np.real(z) * np.exp(z)  # noqa: E731
    u = np.array([0.4 + 1j, -0.2 + 0.5j, 1 - 0.7j])
    v = np.array([0.2 - 0.1j, 0.5 + 0.5j, -1 + 0.3j])
    np.testing.assert_allclose(dualad.vjp(g, Z)[1](u)[0], JAX["vjp_nonholo"], rtol=1e-12)
    np.testing.assert_allclose(dualad.jvp(g, (Z,), (v,))[1], JAX["jvp_nonholo"], rtol=1e-12)
    # batched: both directions in one sweep, both cotangents in one sweep
    np.testing.assert_allclose(dualad.jvp(g, (Z,), (np.stack([v, 2 * v]),))[1][1],
                               2 * np.array(JAX["jvp_nonholo"]), rtol=1e-12)
    np.testing.assert_allclose(dualad.vjp(g, Z)[1](np.stack([u, 1j * u]))[0][0],
                               JAX["vjp_nonholo"], rtol=1e-12)


def test_hvp_of_real_function_of_complex_input_matches_jax():
    f = lambda z: np.sum(np.abs(z) ** 4 + np.real(np.sin(z) * np.conj(z)))  # noqa: E731
    v = np.array([0.2 - 0.1j, 0.5 + 0.5j, -1 + 0.3j])
    np.testing.assert_allclose(dualad.hvp(f, Z, v), JAX["hvp"], rtol=1e-12)


# --- holomorphic functions: grad(holomorphic=True) is f'(z) ------------------------------------
@pytest.mark.parametrize("name", sorted(HOLO_FNS))
def test_holomorphic_grad_matches_jax_in_both_modes(name):
    f = HOLO_FNS[name]
    for z, expected in zip((Z0, Z1), GRAD_HOLO[name]):
        if name == "arccosh" and z.real < 0:
            expected = -expected  # JAX's sign is wrong there: see the next test
        np.testing.assert_allclose(dualad.grad(f, holomorphic=True)(z), expected, rtol=1e-12)
        np.testing.assert_allclose(dualad.derivative(f)(z), expected, rtol=1e-12)
        np.testing.assert_allclose(dualad.vjp(f, z)[1](1 + 0j)[0], expected, rtol=1e-12)


def test_arccosh_left_half_plane_uses_the_principal_branch():
    """arccosh'(z) = 1/(√(z−1)·√(z+1)); 1/√(z²−1) has the opposite sign where Re z < 0.
    JAX returns the latter there (its value disagrees with its own difference quotient);
    dualad follows the difference quotient of NumPy's (and JAX's) arccosh."""
    z, h = -0.7 + 0.4j, 1e-6
    fd = (np.arccosh(z + h) - np.arccosh(z - h)) / (2 * h)
    np.testing.assert_allclose(dualad.derivative(np.arccosh)(z), fd, rtol=1e-8)
    np.testing.assert_allclose(dualad.grad(np.arccosh, holomorphic=True)(z), fd, rtol=1e-8)
    np.testing.assert_allclose(GRAD_HOLO["arccosh"][1], -fd, rtol=1e-8)  # JAX's sign


def test_holomorphic_higher_derivatives():
    z = np.array([0.3 + 0.2j, -1.1 + 0.7j])
    np.testing.assert_allclose(dualad.derivative(np.sin, 3)(z), -np.cos(z), rtol=1e-13)
    d2 = dualad.grad(dualad.grad(lambda z: z ** 4, holomorphic=True), holomorphic=True)
    np.testing.assert_allclose(d2(0.5 + 1j), 12 * (0.5 + 1j) ** 2, rtol=1e-14)
    np.testing.assert_allclose(dualad.derivative(np.exp, 2)(z), np.exp(z), rtol=1e-14)


# --- real values meeting complex ones: a real input's cotangent is real ------------------------
def test_real_input_through_complex_intermediates_matches_jax():
    f = lambda x: np.sum(np.abs(x * (1 + 2j)) ** 2 + np.real(np.exp(x * W)))  # noqa: E731
    g = dualad.grad(f)(X)
    assert g.dtype == np.float64
    np.testing.assert_allclose(g, JAX["embed"], rtol=1e-12)
    _, t = dualad.jvp(f, (X,), (np.eye(3),))
    np.testing.assert_allclose(t, JAX["embed"], rtol=1e-12)
    # the real-to-complex embedding transposes to Re: JAX gives -1.0 (a float)
    (c,) = dualad.vjp(lambda x: x * (1 + 2j), 1.0)[1](1 + 1j)
    assert c == -1.0 and not np.iscomplexobj(c)


def test_astype_complex_embeds_and_its_cotangent_is_the_real_part():
    f = lambda x: np.real(np.sum(x.astype(complex) * (1 + 2j) + 1j * x))  # noqa: E731
    g = dualad.grad(f)(X)
    np.testing.assert_array_equal(g, np.ones(3))
    assert g.dtype == np.float64
    assert dualad.jvp(lambda x: x.astype(np.complex64), (X.astype(np.float32),),
                      (X.astype(np.float32),))[1].dtype == np.complex64


A = np.array([[4.0, 1, 0.5], [1, 3, 0.2], [0.5, 0.2, 2]])
REAL_PRIMITIVE_CALLS = {
    "tanh": np.tanh, "max": np.max, "prod": np.prod, "cumsum": np.cumsum,
    "loop": lambda x: dualad.numpy.array([x[i] * x[(i + 1) % 3] for i in range(3)]),
    "fancy index": lambda x: x[np.array([0, 2, 2])], "concatenate":
    lambda x: np.concatenate([x, x ** 2]), "matmul": lambda x: A @ x,
    "solve": lambda x: np.linalg.solve(A + np.diag(x), x),
    "cholesky": lambda x: np.linalg.cholesky(A + np.outer(x, x)),
    "eigh": lambda x: np.linalg.eigh(A + np.diag(x))[1], "where": lambda x: np.where(x > 0, x, 2 * x),
    "abs": np.abs, "clip": lambda x: np.clip(x, -1, 1),
    "irfft of rfft": lambda x: np.fft.irfft(np.fft.rfft(x) * (1 + 0.5j), n=3),
}


@pytest.mark.parametrize("name", sorted(REAL_PRIMITIVE_CALLS))
def test_stray_imaginary_parts_on_real_cotangents_never_leak(name):
    """Re(c·g(x)) has gradient Re(c)·∇Σg for real g; the sweep carries c's imaginary part
    through g's real rules and returns only the real part (docs/complex.md)."""
    g = REAL_PRIMITIVE_CALLS[name]
    c = 1.0 + 2.0j
    expected = dualad.grad(lambda x: np.real(np.sum(g(x) * (1.0 + 0j))))(X)
    got = dualad.grad(lambda x: np.real(np.sum(g(x) * c)))(X)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, c.real * expected, rtol=1e-12, atol=1e-12)
    # and through a complex-to-real primitive after it: |c·g(x)| uses only its own cotangent
    h = lambda x: np.sum(np.abs(np.sum(g(x)) * c) ** 2)  # noqa: E731
    expected = dualad.grad(lambda x: 5.0 * np.sum(g(x)) ** 2)(X)
    np.testing.assert_allclose(dualad.grad(h)(X), expected, rtol=1e-11, atol=1e-12)


# --- the rule checker on complex arguments of structural and linear-algebra primitives ----------
def _c(*shape, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


COMPLEX_SAMPLES = {
    "sum": [sample(_c(2, 3), axis=(1,), keepdims=False)],
    "prod": [sample(_c(2, 3), axis=(1,), keepdims=True)],
    "cumsum": [sample(_c(2, 3), axis=1)],
    "reshape": [sample(_c(2, 3), shape=(3, 2))],
    "transpose": [sample(_c(2, 3), axes=(1, 0))],
    "broadcast_to": [sample(_c(1, 3), shape=(2, 3))],
    "concatenate": [sample(_c(2), _c(3, seed=1), axis=0), sample(_c(2), np.arange(3.0), axis=0)],
    "getitem": [sample(_c(3, 4), idx=(slice(0, 2), np.array([0, 3, 3])))],
    "untake": [sample(_c(3), idx=(np.array([0, 2, 0]),), shape=(4,))],
    "matmul": [sample(_c(2, 3), _c(3, 2, seed=1)), sample(_c(2, 3), np.ones((3, 1)))],
    "einsum": [sample(_c(2, 3), _c(3, 2, seed=1), subs=("ij", "jk"), out="ik")],
    "inv": [sample(_c(2, 2) + 3 * np.eye(2))],
    "det": [sample(_c(2, 2) + 3 * np.eye(2))],
    "where": [sample(np.array([True, False]), _c(2), np.arange(2.0))],
}


@pytest.mark.parametrize("name", sorted(COMPLEX_SAMPLES))
def test_rule_checker_passes_primitives_on_complex_arguments(name):
    report = check_rule(REGISTRY[name], samples=COMPLEX_SAMPLES[name])
    assert report.ok, str(report)
    assert any("complex" in r.check for r in report.rows)


def test_check_grads_to_order_two_on_complex_functions():
    f = lambda z, w: np.sum(np.abs(np.sin(z) * w) + np.real(z ** 2) * np.imag(w))  # noqa: E731
    # order 2 checks the JVP as a function of (z, w, v_z, v_w) and the VJP of (z, w, u)
    assert check_grads(f, (Z, W), order=2) == 4 + 8 + 6
    g = lambda z, x: np.exp(z) * x + np.conj(z) / (2 + x)  # noqa: E731
    assert check_grads(g, (Z, X), order=2) == 4 + 8 + 6


@given(st.sampled_from(sorted(n for n, p in REGISTRY.items()
                              if p.complex_domain and len(p.derivs) == 1)),
       st.data())
def test_property_grad_of_squared_modulus_is_two_conj_f_times_f_prime(name, data):
    """For holomorphic f, ∂|f|²/∂x − i∂|f|²/∂y = 2·conj(f(z))·f'(z)."""
    prim = REGISTRY[name]
    z = data.draw(complex_arrays_in(prim.complex_domain[0], shape=(3,), margin=0.05))
    f_prime = dualad.derivative(prim)(z)
    expected = 2 * np.conj(prim(z)) * f_prime
    np.testing.assert_allclose(dualad.grad(lambda z: np.sum(np.abs(prim(z)) ** 2))(z),
                               expected, rtol=1e-9, atol=1e-12)
    h = 1e-6  # f'(z) itself against a difference along the imaginary direction
    np.testing.assert_allclose(f_prime, (prim(z + 1j * h) - prim(z - 1j * h)) / (2j * h),
                               rtol=1e-6, atol=1e-8)


# --- conventions at kinks and branch cuts ------------------------------------------------------
def test_abs_angle_and_sign_at_zero_have_derivative_zero():
    z = np.array([0j, 3 + 4j])
    for f in (np.abs, np.angle, lambda z: np.real(np.sign(z)), lambda z: np.imag(np.sign(z))):
        g = dualad.grad(lambda z: np.sum(f(z)))(z)
        assert g[0] == 0 and np.isfinite(g).all()
        assert grad_forward(lambda z: np.sum(f(z)), z)[0] == 0


def test_complex_sign_is_z_over_abs_with_its_derivative():
    z = np.array([3 + 4j, -1 + 0.5j])
    s = z / np.abs(z)
    np.testing.assert_allclose(dualad.jvp(np.sign, (z,), (z,))[0], s)
    v = np.array([0.3 - 1j, 2 + 0.1j])
    # d(z/|z|) = i·Im(conj(s)·dz)·s/|z|: moves along the unit circle (JAX gives 0 here)
    expected = 1j * np.imag(np.conj(s) * v) * s / np.abs(z)
    np.testing.assert_allclose(dualad.jvp(np.sign, (z,), (v,))[1], expected, rtol=1e-14)
    assert check_grads(np.sign, z, order=2) > 0
    # real arguments keep the zero derivative
    assert dualad.grad(lambda x: np.sum(np.sign(x) * x))(X).tolist() == np.sign(X).tolist()


def test_sqrt_on_its_branch_cut_follows_the_side_numpy_chose():
    above, below = complex(-4.0, 0.0), complex(-4.0, -0.0)
    assert np.sqrt(above) == 2j and np.sqrt(below) == -2j
    for z, expected in ((above, -0.25j), (below, 0.25j)):
        assert dualad.grad(np.sqrt, holomorphic=True)(z) == expected
        assert dualad.derivative(np.sqrt)(z) == expected
    # the one-sided difference from that side agrees
    h = 1e-7
    np.testing.assert_allclose((np.sqrt(complex(-4, h)) - np.sqrt(above)) / (1j * h),
                               -0.25j, rtol=1e-6)


# --- errors name the function, the argument and the shape --------------------------------------
def test_grad_of_complex_output_needs_holomorphic():
    with pytest.raises(TypeError, match=r"grad: .* complex value \(dtype complex128\).*"
                                        r"holomorphic=True"):
        dualad.grad(np.sin)(1 + 2j)
    with pytest.raises(TypeError, match=r"holomorphic=True\): argument 0 .* float64 .*shape \(\)"):
        dualad.grad(np.sin, holomorphic=True)(1.0)
    with pytest.raises(TypeError, match=r"holomorphic=True\): .* returned dtype float64"):
        dualad.grad(np.abs, holomorphic=True)(1 + 2j)
    with pytest.raises(TypeError, match="holomorphic"):
        dualad.value_and_grad(lambda z: z * 2)(Z[0])


@pytest.mark.parametrize("fn", [np.maximum, np.minimum, np.fmax, np.fmin])
def test_ordering_functions_refuse_complex(fn):
    with pytest.raises(TypeError, match=rf"{fn.__name__}: argument 0 \(shape \(3,\)\) is complex"):
        dualad.grad(lambda z: np.sum(np.abs(fn(z, 1.0))))(Z)
    with pytest.raises(TypeError, match=r"argument 1 \(shape \(3,\)\) is complex"):
        dualad.jvp(lambda x: fn(x, Z), (X,), (X,))


def test_casting_complex_to_real_is_refused():
    with pytest.raises(TypeError, match=r"astype\(float64\) of a complex traced value of shape "
                                        r"\(3,\) would discard its imaginary part"):
        dualad.grad(lambda z: np.sum(z.astype(float)))(Z)


def test_imperative_api_follows_the_same_convention():
    from dualad.autograd import Variable, grad
    z = Variable(Z.copy(), requires_grad=True)
    np.sum(np.abs(z) ** 2).backward()
    np.testing.assert_allclose(z.grad, 2 * np.conj(Z))      # PyTorch's .grad would be 2·z
    with pytest.raises(RuntimeError, match="only for real scalar outputs; output 0 is complex"):
        np.sum(np.sin(z)).backward()
    (g,) = grad(np.sum(np.sin(z)), z, grad_outputs=np.array(1 + 0j))
    np.testing.assert_allclose(g, np.cos(Z), rtol=1e-14)
    z1 = Variable(np.array([1 + 2j]), requires_grad=True)  # second order (JAX's numbers)
    (g,) = grad(np.sum(np.abs(z1) ** 4), z1, create_graph=True)
    (h,) = grad(np.real(np.sum(g)), z1)
    np.testing.assert_allclose(g.data, [20 - 40j])
    np.testing.assert_allclose(h, [28 - 16j])


# --- the NumPy surface on traced complex values ----------------------------------------------
def test_attributes_methods_and_functions_on_traced_values():
    cases = [(lambda z: z.real, np.real), (lambda z: z.imag, np.imag),
             (lambda z: z.conj(), np.conj), (lambda z: z.conjugate(), np.conjugate),
             (lambda z: np.angle(z, deg=True), lambda z: np.angle(z, deg=True)),
             (lambda z: abs(z), np.abs), (np.real_if_close, np.real_if_close)]
    for traced, plain in cases:
        assert check_grads(traced, Z, order=1) == 2
        np.testing.assert_array_equal(dualad.jvp(traced, (Z,), (Z,))[0], plain(Z))
    assert dualad.jvp(np.real_if_close, (Z.real + 1e-17j,), (Z,))[0].dtype == np.float64
    seen = []
    dualad.grad(lambda z: seen.append((np.iscomplexobj(z), np.isrealobj(z))) or
                np.sum(np.abs(z)))(Z)
    assert seen == [(True, False)]


def test_parts_of_real_values_are_what_numpy_gives():
    g = dualad.grad(lambda x: np.sum(x.real * 2 + x.imag + np.conj(x) + np.angle(x)))(X)
    np.testing.assert_array_equal(g, 3 * np.ones(3))
    assert dualad.jvp(lambda x: np.imag(x), (X,), (X,))[1].tolist() == [0, 0, 0]


def test_complex_variance_std_and_vdot_match_numpy():
    for f in (np.var, np.std, lambda z: np.var(z, ddof=1),
              lambda z: np.vdot(z, W), lambda z: np.vdot(W, z)):
        np.testing.assert_allclose(dualad.jvp(f, (Z,), (Z,))[0], f(Z), rtol=1e-14)
        assert check_grads(f, Z, order=2) > 0
    assert not np.iscomplexobj(dualad.jvp(np.var, (Z,), (Z,))[1])


def test_complex64_stays_complex64():
    z = Z.astype(np.complex64)
    assert dualad.grad(lambda z: np.sum(np.abs(np.exp(z)) ** 2))(z).dtype == np.complex64
    assert dualad.jvp(np.sin, (z,), (z,))[1].dtype == np.complex64


def test_jacobians_of_holomorphic_maps_are_the_complex_jacobian():
    from dualad import jacobians
    f = lambda z: np.sin(z) * z[0]  # noqa: E731
    expected = np.diag(np.cos(Z) * Z[0]) + np.outer(np.sin(Z), [1, 0, 0])
    for mode in ("forward", "reverse"):
        np.testing.assert_allclose(jacobians.jacobian(f, Z, mode=mode), expected, rtol=1e-13)
