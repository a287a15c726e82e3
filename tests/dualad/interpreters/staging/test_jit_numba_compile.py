"""The whole-program Numba mode as ONE function of loops over flat buffers (issue 32:
compile time): a program compiles as one njit function (no helper, kernel or NumPy
overload per operation), every value a static view of an arena; reductions keep NumPy's
order where the module promises it; views (slices, transposes, broadcasts, reshapes),
gathers and scatters, concatenation, products and rolled loops (carries that swap,
per-block values) give the NumPy backend's numbers, with every index bounds-checked here."""
from __future__ import annotations

import importlib

import numpy as np
import pytest

numba = pytest.importorskip("numba")

import dualad  # noqa: E402

try:
    FW = importlib.import_module("dualad.interpreters.staging.numba_flatwrite")
except ImportError:      # (the code before it: these tests then show what it lacked)
    FW = None
WHOLE = "# numba: the whole program"


@pytest.fixture(autouse=True)
def _boundscheck(monkeypatch):
    """Every index checked: a wrong view is an IndexError (then a fallback: the tests
    check the mode), never a read outside a buffer."""
    if FW is not None:
        monkeypatch.setattr(FW, "BOUNDSCHECK", True)


class _Compiles:
    def __init__(self):
        self.names = []


@pytest.fixture
def compiles(monkeypatch):
    """The functions Numba compiles (each a separate LLVM module)."""
    import numba.core.compiler as compiler
    got = _Compiles()
    real = compiler.compile_extra

    def counted(typingctx, targetctx, func, *a, **k):
        got.names.append(getattr(func, "__name__", "?"))
        return real(typingctx, targetctx, func, *a, **k)

    monkeypatch.setattr(compiler, "compile_extra", counted)
    return got


def _whole(f, *args, exact=False, ulps=4):
    """Run ``jit(f, backend="numba", compile="now")`` twice; it must be the whole-program mode and agree
    with the NumPy backend (bitwise when ``exact``). Returns the numba jitted."""
    jn, jp = dualad.jit(f, backend="numba", compile="now"), dualad.jit(f)
    with np.errstate(all="ignore"):
        jn(*args)
        got, want = jn(*args), jp(*args)
    src = jn.source(*args)
    assert src.startswith(WHOLE), src[:400]
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert type(g) is type(w), (type(g), type(w))
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, g.dtype, w.shape, w.dtype)
        if exact or w.dtype.kind != "f":
            np.testing.assert_array_equal(g, w)
            if w.dtype.kind == "f":   # signs of zeros too
                np.testing.assert_array_equal(np.signbit(g), np.signbit(w))
        else:
            np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
            fin = np.isfinite(w)
            np.testing.assert_array_equal(g[~fin & ~np.isnan(w)], w[~fin & ~np.isnan(w)])
            if fin.any():
                eps = ulps * np.finfo(np.float64).eps
                np.testing.assert_allclose(g[fin], w[fin], rtol=eps,
                                           atol=eps * float(np.max(np.abs(w[fin]))))
    return jn


def _gmm_like(alpha, mu, q):
    """Broadcasting, slices, reductions over several axes, max-subtracted exps."""
    d = q.shape[1]
    diff = mu[None, :, :] - np.linspace(0.0, 1.0, 4 * d).reshape(4, 1, d)
    z = np.exp(q)[None] * diff + diff[:, :, ::-1] * 0.5
    s = np.sum(z * z, axis=2)
    a = alpha[None, :] - 0.5 * s
    m = np.max(a, axis=1, keepdims=True)
    lse = np.log(np.sum(np.exp(a - m), axis=1)) + m[:, 0]
    return np.sum(lse) - 4 * np.log(np.sum(np.exp(alpha - np.max(alpha)))) + np.sum(q[:, :1])


def test_a_gradient_compiles_as_one_function(compiles):
    rng = np.random.default_rng(0)
    args = rng.standard_normal(3), rng.standard_normal((3, 2)), rng.standard_normal((3, 2))
    _whole(lambda x: x * 2.0 + 1.0, np.ones(3))      # Numba's own first-use compilations
    compiles.names.clear()
    jn = _whole(dualad.grad(_gmm_like, argnums=(0, 1, 2)), *args)
    generated = [n for n in compiles.names if n.startswith("whole_")]
    assert len(generated) == 1, compiles.names
    # besides it only NumPy's allocation, once per dtype (the old code: 30-80 functions)
    assert len(compiles.names) <= 5, compiles.names
    assert jn.source(*args).count("def ") == 2


@pytest.mark.parametrize("n", [1, 2, 7, 8, 9, 127, 128, 129, 1000, 4099])
def test_full_and_row_sums_are_numpys_pairwise_sums_bit_for_bit(n):
    rng = np.random.default_rng(n)
    x = rng.standard_normal(n)
    _whole(lambda x: np.sum(x * 1.5), x, exact=True)
    m = rng.standard_normal((3, n))
    _whole(lambda m: np.sum(np.exp(m), axis=1), m, ulps=4)
    _whole(lambda m: np.sum(m * m, axis=-1, keepdims=True), m, exact=True)
    _whole(lambda m: np.sum(m * 2.0, axis=0), m, exact=True)     # rows added in order


def test_reductions_of_nan_inf_one_entry_and_signed_zeros():
    x = np.array([[1.0, np.nan, -np.inf], [np.inf, 2.0, -0.0], [-0.0, -0.0, -0.0]])
    for f in (lambda x: np.max(x, axis=1), lambda x: np.min(x, axis=0),
              lambda x: np.max(x), lambda x: np.sum(x, axis=1), lambda x: np.sum(x * 1.0),
              lambda x: np.sum(x > 0.5), lambda x: np.maximum(x, 0.5) - np.minimum(x, 0.5)):
        _whole(f, x, exact=True)
    one = np.array([-0.0])
    _whole(lambda x: (np.sum(x), np.max(x), np.sum(x * 3.0, axis=0)), one, exact=True)


def test_views_of_arguments_non_contiguous_arguments_and_0d_results():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 6))

    def f(x):
        a = x[1:, ::-2] * x[:3, 1::2]           # negative and positive steps
        b = x.T[2] + x[..., 3] * x[-1, None].sum()
        c = np.broadcast_to(x[0], (2, 6)).reshape(3, 4).T
        return a, b[1:], c * 2.0, x[2, 3] * 2.0, np.sum(x[1])

    _whole(f, x, exact=True)
    _whole(f, np.asfortranarray(x), exact=True)       # a Fortran-ordered argument
    _whole(f, rng.standard_normal((8, 12))[::2, ::2], exact=True)   # a strided one


def test_gathers_scatters_concatenate_products():
    rng = np.random.default_rng(2)
    A, x = rng.standard_normal((5, 4)), rng.standard_normal(4)
    idx = np.array([0, 2, 0, 3, 3])

    def f(A, x):
        g = A[:, idx] * x[idx]                # gathers (the gradient: scatter-adds)
        c = np.concatenate([A[:2], A[3:] * 2.0, A[1:2]], axis=0)
        p = np.tanh(A @ x) @ A + np.einsum("ij,ij->j", A, A)
        return np.sum(g * g) + np.sum(c * c) + np.sum(p * p) + x @ x

    _whole(f, A, x, ulps=16)
    _whole(dualad.grad(f, argnums=(0, 1)), A, x, ulps=64)


def test_rolled_loop_with_swapping_carries_per_block_values_and_lasts():
    w = np.linspace(0.5, 1.5, 6)

    def f(w):
        a, b = w * 0.1, w[::-1] * 0.2
        total = 0.0
        for _ in range(30):          # rolled: the carries swap every step
            a, b = b, np.tanh(a * w + b)
            total = total + np.sum(a * b)
        return total + np.sum(b)

    jn = _whole(f, w, ulps=16)
    assert "for k in range(" in jn.source(w)
    jg = _whole(dualad.grad(f), w, ulps=64)
    assert "for k in range(" in jg.source(w)


def test_elementwise_chains_are_one_loop_each_and_write_no_temporaries():
    x = np.linspace(-2.0, 2.0, 50)
    jn = _whole(lambda x: np.exp(x * 2.0 - 1.0) / (1.0 + x * x) + np.sin(x), x, ulps=4)
    src = jn.source(x)
    body = src[src.index("def whole_"):]
    assert body.count(" for ") == 1       # the group's loop, writing the output in place


def _det3(a):
    """A cofactor expansion: straight-line scalar code (many numbers live across parts)."""
    return (a[0, 0] * (a[1, 1] * a[2, 2] - a[1, 2] * a[2, 1])
            - a[0, 1] * (a[1, 0] * a[2, 2] - a[1, 2] * a[2, 0])
            + a[0, 2] * (a[1, 0] * a[2, 1] - a[1, 1] * a[2, 0]))


def test_a_long_program_is_cut_into_parts_with_the_same_numbers(monkeypatch):
    monkeypatch.setattr(FW, "PART_LINES", 12)
    rng = np.random.default_rng(3)
    a = rng.standard_normal((3, 3))
    jn = _whole(dualad.grad(lambda a: _det3(a) * _det3(a.T * 2.0) + np.sum(a * a)), a,
                exact=True)
    assert jn.source(a).count("_part") >= 4
    args = rng.standard_normal(3), rng.standard_normal((3, 2)), rng.standard_normal((3, 2))
    _whole(dualad.grad(_gmm_like, argnums=(0, 1, 2)), *args)
    w = np.linspace(0.5, 1.5, 6)

    def f(w):
        a, b = w * 0.1, np.sum(w) * 0.2
        for _ in range(40):
            a, b = np.tanh(a * b * 0.3 + w * 0.2), b * 0.5 + np.sum(a) * 0.1
        return np.sum(a) * b

    jn = _whole(dualad.grad(f), w, ulps=64)
    assert "for k in range(" in jn.source(w) and "_part" in jn.source(w)


def test_einsum_loop_orders_give_the_same_bits(monkeypatch):
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((40, 3, 4)), rng.standard_normal((40, 4))

    def f(a, b):
        return np.einsum("nij,nj->ij", a, b), np.einsum("nij,nj->ni", a, b)

    small = dualad.jit(f, backend="numba", compile="now")
    small(a, b)
    got = small(a, b)
    FP = importlib.import_module("dualad.interpreters.staging.numba_flatprims")
    monkeypatch.setattr(FP, "_CACHED", 0)        # every output loop outside
    jn = _whole(f, a, b, ulps=8)
    for x, y in zip(got, jn(a, b)):
        np.testing.assert_array_equal(x, y)
