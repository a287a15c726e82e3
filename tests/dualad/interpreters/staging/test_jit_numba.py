"""dualad.jit(f, backend="numba") (issue 32): groups of elementwise float64 operations run
as one Numba kernel; the values are the NumPy backend's (to a few ulps where an elementary
function is LLVM's rather than NumPy's SIMD loop), anything else stays NumPy, and without
Numba the backend is refused with the install command."""
from __future__ import annotations

import os
import pathlib
import sys
import warnings

import re

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import dualad
from dualad.interpreters.staging import fuse
from dualad.interpreters.staging.numba_backend import INSTALL, kernel_cache_info

ROOT = pathlib.Path(__file__).resolve().parents[4]   # the repository
GB = os.path.join(str(ROOT),
                  "bench", "gradbench")
if GB not in sys.path:
    sys.path.insert(0, GB)
import gb_programs as P  # noqa: E402


def _both(f, *args, **kw):
    """``(numba result, numpy result, the numba program's source)``."""
    jn = dualad.jit(f, backend="numba", compile="now", **kw)
    jp = dualad.jit(f, **kw)
    with np.errstate(all="ignore"):
        first = jn(*args)
        a, b = jn(*args), jp(*args)
    _same(first, a)   # the first call returns the trace's (NumPy) values
    return a, b, jn.source(*args)


def _same(a, b, ulps=4):
    if isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y, ulps)
        return
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, a.dtype, b.shape, b.dtype)
    if a.dtype.kind != "f":
        np.testing.assert_array_equal(a, b)
        return
    np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
    ok = ~np.isnan(a)
    np.testing.assert_array_equal(np.isinf(a[ok]), np.isinf(b[ok]))
    fin = ok & np.isfinite(a)
    if ulps == 0:
        np.testing.assert_array_equal(a[fin], b[fin])
    elif fin.any():
        # a few ulps of the values' scale (a sum of terms that cancel keeps the terms' error)
        eps = ulps * np.finfo(np.float64).eps
        np.testing.assert_allclose(a[fin], b[fin], rtol=eps, atol=eps * np.max(np.abs(b[fin])))
    np.testing.assert_array_equal(a[~fin & ok], b[~fin & ok])


def test_elementwise_graph_with_broadcasting_is_one_kernel():
    def f(x, y, s):
        return np.exp(x * y - 1.0) / (1.0 + x * x) + np.where(x > y, x, -y) * s + 2
    x = np.linspace(-1.5, 1.5, 7)
    y = np.linspace(0.0, 2.0, 5)[:, None]
    a, b, src = _both(f, x, y, np.float64(3.0))
    _same(a, b)
    assert src.count("fused") == 1, src
    # the exact operations (no elementary function) are bit for bit NumPy's
    g = lambda x, y: (x * y - 1.0) / (1.0 + y * y) * (x - y)  # noqa: E731
    a, b, src = _both(g, x, y)
    _same(a, b, ulps=0)
    assert "fused" in src


def test_ranks_scalars_zero_d_and_constant_arrays():
    c = np.arange(4.0) - 1.5          # a closed-over array: an operand of the kernel

    def f(x, r, z):
        return np.sin(x * r + c) * np.cos(x - z) + np.tanh(x * z)
    x = np.linspace(-2, 2, 12).reshape(3, 4)
    a, b, src = _both(f, x, 0.75, np.array(1.25))
    _same(a, b)
    assert "fused" in src
    x3 = np.linspace(-2, 2, 24).reshape(2, 3, 4)
    a, b, _ = _both(f, x3, 0.5, np.array(0.25))
    _same(a, b)


def test_several_outputs_and_a_reduction_after():
    def f(x):
        u = np.exp(x) * 2.0 + x
        v = u * u - x
        return np.sum(v * x + 1.0), u, np.max(v)
    x = np.linspace(-3, 3, 50)
    a, b, src = _both(f, x)
    _same(a, b)
    assert "fused" in src


def test_nan_inf_and_division_by_zero_as_numpy():
    def f(x, y):
        return (x / y + np.log(x) * y) - np.sqrt(x) * np.exp(y)
    x = np.array([0.0, -1.0, np.inf, -np.inf, np.nan, 1.0, 0.0, 2.0])
    y = np.array([0.0, 0.0, 1.0, np.inf, 1.0, -0.0, np.nan, 800.0])
    a, b, src = _both(f, x, y)
    assert "fused" in src
    _same(a, b)
    assert np.isnan(a).sum() >= 4 and np.isinf(a).any()


def test_signed_zero_and_comparisons():
    def f(x, y):
        return np.where(x <= y, -x * 0.5, y * 1.0) - 0.0 + np.abs(x) * -1.0
    x = np.array([-0.0, 0.0, 1.0, np.nan, -2.0])
    y = np.array([0.0, -0.0, np.nan, 1.0, -3.0])
    a, b, _ = _both(f, x, y)
    _same(a, b, ulps=0)
    np.testing.assert_array_equal(np.signbit(a), np.signbit(b))


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.complex128, np.bool_])
def test_other_dtypes_are_left_to_numpy(dtype):
    def f(x):
        return (x * x + x) * x * x
    x = (np.arange(6) % 3).astype(dtype)
    a, b, src = _both(f, x)
    assert "fused" not in src, src
    _same(a, b, ulps=0)


def test_float32_array_times_float_scalar_stays_numpy():
    def f(x, s):
        return (x * s + 1.0) * (x - s) * s
    x = np.linspace(0, 1, 5, dtype=np.float32)
    a, b, src = _both(f, x, 2.5)
    assert a.dtype == np.float32 and "fused" not in src
    _same(a, b, ulps=0)


def test_program_without_a_fusible_group():
    def f(A, x):
        y = A @ x
        return np.sum(y[1:] * 2.0) + np.linalg.norm(np.cumsum(y))
    A = np.arange(12.0).reshape(3, 4) / 7
    x = np.linspace(-1, 1, 4)
    a, b, src = _both(f, A, x)
    assert "fused" not in src
    _same(a, b, ulps=0)


def test_short_chains_get_no_kernel():
    def f(x):
        return np.exp(x) * 2.0
    a, b, src = _both(f, np.linspace(0, 1, 9))
    assert "fused" not in src
    _same(a, b, ulps=0)


def test_kernel_compiled_once_per_structure():
    # the kernels path (the whole-program mode writes its groups as loops in its function)
    from dualad.interpreters.staging.numba_backend import fuse_program

    def f(x, y):
        return (x - y) * (x + y) * 0.5
    def g(p, q):   # another function, the same structure, other shapes and constant
        return (p - q) * (p + q) * 4.0
    fuse_program(dualad.jit(f).program(np.ones(3), np.ones(3)))
    before = kernel_cache_info()
    fuse_program(dualad.jit(g).program(np.ones((5,)), np.full(5, 2.0)))
    after = kernel_cache_info()
    assert after["compiled"] == before["compiled"] and after["reused"] > before["reused"]


def _versions():
    from dualad.interpreters.staging.numba_backend import _KERNELS
    return sum(len(k.signatures) for k, _ in _KERNELS.values())


def test_first_call_compiles_for_the_layouts_later_calls_see():
    def f(C, P):   # transposes and strided slices as kernel operands
        D = (P.T[:, :3] - C[None, :, 0]) * P[::2].T[:, :3] + C.T[0] * 0.5
        return np.sum(D * D - np.abs(D), axis=1)
    C = np.random.default_rng(2).normal(size=(3, 4))
    P = np.random.default_rng(3).normal(size=(6, 5))
    j = dualad.jit(f, backend="numba", compile="now")
    j(C, P)
    before = _versions()
    _same(j(C, P), f(C, P))      # the second call compiles nothing
    assert _versions() == before
    assert "fused" in j.source(C, P)
    g = dualad.grad(lambda C, P: np.sum(f(C, P) ** 2))
    jg = dualad.jit(g, backend="numba", compile="now")
    jg(C, P)
    before = _versions()
    _same(jg(C, P), g(C, P))
    assert _versions() == before


def test_guard_and_grad_compose():
    def f(x):
        y = np.sin(x) * x + x * x
        if np.sum(y) > 0:
            return np.sum(y * y - x)
        return np.sum(y)
    jn = dualad.jit(f, backend="numba", compile="now")
    for x in (np.linspace(0.1, 1, 6), -np.linspace(0.1, 1, 6) * 0.1):
        _same(jn(x), f(x))
        _same(dualad.grad(jn)(x), dualad.grad(f)(x), ulps=0)
    jg = dualad.jit(dualad.grad(f), backend="numba", compile="now")
    x = np.linspace(0.1, 1, 6)
    jg(x)
    _same(jg(x), dualad.jit(dualad.grad(f))(x))
    assert "fused" in jg.source(x)


def test_gradbench_lse_and_ode_gradients():
    lse = P.lse_objective(np)
    x = np.random.default_rng(0).normal(size=2500)
    a, b, src = _both(dualad.grad(lse), x)
    _same(a, b)
    # the where of max's rule and the addition to the softmax: one loop
    assert re.search(r"= x_\d+ if x_\d+ else 0\.0\n\s+e_\d+ = x_\d+ \+ e_\d+", src), src
    state = P.ode_state(np, 10)
    x = np.random.default_rng(1).uniform(size=100)
    a, b, src = _both(dualad.grad(lambda v: state(v)[-1]), x)
    _same(a, b)
    a, b, src = _both(lambda v: np.sum(state(v) ** 2) + dualad.grad(lambda w: state(w)[-1])(v), x)
    _same(a, b)
    assert "fused" in src
    assert np.any(a != 0)


_OPS = ["add", "subtract", "multiply", "divide", "exp", "log1p", "sin", "negative", "square",
        "where"]


@settings(derandomize=True, max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_OPS), st.integers(0, 10), st.integers(0, 10)),
                min_size=3, max_size=8),
       st.sampled_from([((4,), (4,)), ((3, 4), (4,)), ((3, 1), (1, 4)), ((2, 3), ())]))
def test_random_elementwise_graphs(ops, shapes):
    def f(x, y):
        vals = [x, y, 0.5]
        for name, i, j in ops:
            p, q = vals[i % len(vals)], vals[j % len(vals)]
            if name == "where":
                vals.append(np.where(p > q, p, q * 0.5))
            elif name in ("exp", "log1p", "sin", "negative", "square"):
                vals.append(getattr(np, name)(np.abs(p) * 0.1 if name != "negative" else p))
            else:
                vals.append(getattr(np, name)(p, q))
        return vals[-1] + 0.0 * x
    rng = np.random.default_rng(len(ops))
    x = rng.uniform(-2, 2, shapes[0])
    y = rng.uniform(0.5, 2, shapes[1]) if shapes[1] else 1.5
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        a, b, _ = _both(f, x, y)
    _same(a, b, ulps=8)


def test_fusible_groups_are_sealed_by_outside_uses():
    def f(x):
        u = x * 2.0 + 1.0
        w = np.cumsum(u)        # an outside use: u's group ends before it
        return (u * w - x) * 3.0
    prog = dualad.jit(f).program(np.ones(4))
    found = fuse.groups(prog, min_members=1)
    ends = [g.members[-1].out for g in found]
    cumsum = next(e.out for e in prog.eqns if e.prim.name == "cumsum")
    assert any(v < cumsum for v in ends) and any(v > cumsum for v in ends)
    a, b, _ = _both(f, np.linspace(0, 1, 4))
    _same(a, b, ulps=0)


def test_without_numba_the_error_names_the_function_and_the_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "numba", None)   # ``import numba`` raises ImportError

    def energy(x):
        return np.sum(x * x)
    with pytest.raises(ImportError) as info:
        dualad.jit(energy, backend="numba")
    msg = str(info.value)
    assert "energy" in msg and INSTALL in msg and 'pip install "dualad[numba]"' in msg
    assert dualad.jit(energy)(np.ones(3)) == 3.0     # the default backend needs nothing


def test_unknown_backend_is_refused():
    with pytest.raises(ValueError, match="backend='jax'.*'numpy'.*'numba'"):
        dualad.jit(np.sin, backend="jax")
    assert dualad.jit(np.sin, backend="numpy")(0.0) == 0.0
