"""A fuzzer: random expression graphs from the registry, four derivatives that must agree.

Hypothesis builds a program (a list of instructions over earlier values) from
smooth primitives; for each program and input the gradient from reverse mode,
the same gradient from forward vector mode, central differences, and a
Hessian-vector product from forward-over-reverse against a difference of
gradients must agree.

CI runs it derandomized with a bounded number of examples (tests/conftest.py).
For a long run:

    HYPOTHESIS_PROFILE=long python -m pytest tests/dualad/test_fuzz.py
"""
import numpy as np
from hypothesis import given, settings

import dualad

from fuzz_programs import N, build, central_gradient, points, programs


@settings(max_examples=20)
@given(programs, points)
def test_modes_agree_on_random_programs(program, x):
    f = build(program)
    g_rev = dualad.grad(f)(x)
    _, g_fwd = dualad.jvp(f, (x,), (np.eye(N),))          # forward vector mode: one sweep
    np.testing.assert_allclose(g_fwd, g_rev, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(g_rev, central_gradient(f, x), rtol=1e-5, atol=1e-6)
    v = np.linspace(-1.0, 1.0, N)
    hv = dualad.hvp(f, x, v)                               # forward-over-reverse
    g = dualad.grad(f)
    h = 1e-5
    hv_fd = (g(x + h * v) - g(x - h * v)) / (2 * h)
    np.testing.assert_allclose(hv, hv_fd, rtol=1e-5, atol=1e-5)
    H = dualad.jvp(g, (x,), (np.eye(N),))[1]              # all of H in one sweep
    np.testing.assert_allclose(H, H.T, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(H @ v, hv, rtol=1e-9, atol=1e-10)
