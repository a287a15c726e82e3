"""Fewer NumPy calls in the programs dualad.jit generates (issue 32): the rewrites of
dualad/interpreters/staging/tighten.py and the buffer reuse of dualad/interpreters/staging/buffers.py.

Each rewrite is checked on the generated source (the calls it removes are gone) and on
the numbers: the jitted derivative bitwise equal to the eager one on GradBench's ode,
lse, gmm and kmeans programs (bench/gradbench/gb_programs.py), and the structural-zero
masks kept wherever a partial could be inf or NaN.
"""
from __future__ import annotations

import os
import pathlib
import re
import sys
import warnings

import numpy as np
import pytest

import dualad
from dualad.interpreters.staging.codegen import compile_program

ROOT = pathlib.Path(__file__).resolve().parents[4]   # the repository
GB = os.path.join(str(ROOT), "bench", "gradbench")
sys.path.insert(0, os.path.abspath(GB))
sys.path.insert(1, os.path.abspath(os.path.join(GB, "..")))
import gb_inputs as I  # noqa: E402
import gb_programs as P  # noqa: E402


def _bitwise(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def _check(f, args, argnums=0):
    """jit(grad(f)): (source, result), the result asserted bitwise the eager gradient's
    (twice: the second call is the compiled replay, which must not change the first's)."""
    eager = dualad.grad(f, argnums)(*args)
    g = dualad.jit(dualad.grad(f, argnums))
    first = g(*args)
    kept = [np.array(r, copy=True) for r in (first if isinstance(first, tuple) else (first,))]
    second = g(*args)
    eager = eager if isinstance(eager, tuple) else (eager,)
    for name, res in (("first", first), ("second", second)):
        res = res if isinstance(res, tuple) else (res,)
        assert len(res) == len(eager)
        for r, e in zip(res, eager):
            assert _bitwise(r, e), (name, r, e)
    for k, r in zip(kept, first if isinstance(first, tuple) else (first,)):
        assert _bitwise(k, r), "a later replay wrote into an earlier result"
    return g.source(*args), second


def _code(source):
    """The source without comments."""
    return "\n".join(ln.split("#", 1)[0] for ln in source.splitlines())


def _ode(n, s):
    x = np.random.default_rng(0).random(n)
    return P.ode_objective(np, s), (x,)


# --- structural-zero masks ----------------------------------------------------------------
def test_ode_masks_dropped_and_bitwise():
    """The ode's backward pass: every ``where(touched, ct * h, 0.0)`` has ct from an
    untake and a positive constant step h, so it selects nothing (was: 30 np.where)."""
    f, args = _ode(200, 10)
    src, _ = _check(f, args)
    assert "np.where" not in _code(src)   # the steps rolled into a loop (dualad.interpreters.staging.loops)
    g = dualad.jit(dualad.grad(f))
    g(*args)
    _, unrolled = compile_program(g.program(*args))
    assert "np.where" not in _code(unrolled)
    assert unrolled.count("is +0.0 wherever the mask is False") == 30


def test_mask_kept_where_the_partial_is_infinite():
    """sqrt's partial at 0 is inf: the mask keeps the untouched entry exactly 0 (not nan)."""
    def f(x):
        return np.sum(np.sqrt(x)[1:])
    x = np.array([0.0, 1.0, 4.0])
    src, g = _check(f, (x,))
    assert g[0] == 0.0 and not np.signbit(g[0])
    assert "np.where" in _code(src) or "where=" in _code(src)


@pytest.mark.parametrize("c", [-0.5, np.inf, np.nan, -0.0])
def test_mask_kept_for_a_constant_that_is_not_finite_positive(c):
    """0 * c for c < 0 is -0.0, for c = inf or nan is nan: the mask stays and gives +0.0."""
    def f(x):
        y = x[1:]
        return np.sum(c * np.sin(y))
    x = np.array([1.0, 2.0, 3.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        src, g = _check(f, (x,))
    assert g[0] == 0.0 and not np.signbit(g[0])


# --- lse: one reduction, no broadcast copy, negation after the sum ------------------------
def test_lse_one_max_no_broadcast_bitwise():
    x = I.lse(2500)["x"]
    src, _ = _check(P.lse_objective(np), (np.asarray(x, dtype=np.float64),))
    code = _code(src)
    assert len(re.findall(r"\b(?:max|maximum_reduce)\(", code)) == 1, src       # was 2: keepdims and not
    assert "broadcast_to" not in code, src                    # was 2 materialized copies
    assert "sum(-x) is -sum(x)" in src
    assert len(re.findall(r" = -v\d+\s*$", code, re.M)) == 1   # only the (1,) sum negated


def test_negation_of_an_empty_sum_not_moved():
    """sum(-x) over an empty axis is +0.0, -sum(x) would be -0.0: not rewritten."""
    def f(x):
        return np.sum(-x, axis=1)
    x = np.zeros((3, 0))
    j = dualad.jit(f)
    j(x)
    r = j(x)
    assert _bitwise(r, f(x)) and not np.signbit(r).any()


# --- buffers --------------------------------------------------------------------------------
def test_buffers_reused_for_large_arrays_bitwise():
    """lse of 10^5 entries: exp writes into x - m, the product into exp's array; the input
    is never written and results of earlier calls stay as they were."""
    x = np.random.default_rng(1).random(100_000)
    x0 = x.copy()
    src, _ = _check(P.lse_objective(np), (x,))
    assert _bitwise(x, x0)
    code = _code(src)
    assert "out=v0" not in code
    assert len(re.findall(r"out=v\d+[,)]", code)) >= 3, src


def test_no_buffer_reuse_through_a_live_view():
    """y = e[1:] keeps e's array alive past e's last direct use: e is not written into."""
    def f(x):
        e = np.exp(x)
        y = e[1:]
        z = e * 2.0
        return z[:-1] + y
    x = np.linspace(0.0, 1.0, 20_000)
    j = dualad.jit(f)
    j(x)
    r = j(x)
    assert _bitwise(r, f(x))   # z written into e's array would change y


def test_no_buffer_reuse_into_an_output():
    def f(x):
        e = np.exp(x)
        return e, e * 2.0
    x = np.linspace(0.0, 1.0, 20_000)
    j = dualad.jit(f)
    j(x)
    e, d = j(x)
    assert _bitwise(e, np.exp(x)) and _bitwise(d, np.exp(x) * 2.0)


# --- direct calls ---------------------------------------------------------------------------
def test_ode_untake_and_reductions_inlined():
    f, args = _ode(100, 4)
    src, _ = _check(f, args)
    code = _code(src)
    assert "untake(" not in code
    assert "np.zeros(" in code


# --- GradBench programs bitwise ---------------------------------------------------------------
def test_gmm_bitwise():
    inp = I.gmm(2, 5)
    d, k = int(inp["d"]), int(inp["k"])
    f = P.gmm_objective(np, np.asarray(inp["x"], float).reshape(-1, d), int(inp["m"]),
                        float(inp["gamma"]))
    args = (np.asarray(inp["alpha"], float), np.asarray(inp["mu"], float).reshape(k, d),
            np.asarray(inp["q"], float).reshape(k, d),
            np.asarray(inp["l"], float).reshape(k, d * (d - 1) // 2))
    src, _ = _check(f, args, (0, 1, 2, 3))
    assert "broadcast_to" not in _code(src)


def test_kmeans_bitwise():
    inp = I.kmeans(10, 1000, 8)
    pts = np.asarray(inp["points"], float)
    C = np.asarray(inp["centroids"], float)
    _check(P.kmeans_objective(np, pts), (C,))


def test_ode_gradbench_size_bitwise():
    inp = I.ode(1000, 10)
    f = P.ode_objective(np, int(inp["s"]))
    _check(f, (np.asarray(inp["x"], float),))


def test_integer_count_cast_once_bitwise():
    """kmeans's gradient divides the (1000, 10) nearest-centroid mask by its row counts
    (an int64 (1000, 1)): that share is taken once per row, ``1.0 / count``, not over the
    mask (dualad.interpreters.staging.selected); a ``bool / int`` that remains casts its count to float64
    once (was: inside the ufunc's buffered loop, chunk by chunk), the same bits."""
    inp = I.kmeans(10, 1000, 8)
    pts = np.asarray(inp["points"], float)
    C = np.asarray(inp["centroids"], float)
    src, _ = _check(P.kmeans_objective(np, pts), (C,))
    code = _code(src)
    assert re.search(r"= 1\.0 / v\d+\s*$", code, re.M), src
    assert not re.search(r"= v\d+ / v\d+", code), src

    def g(m, k):   # a mask divided by a count, no where after it: cast once
        return (m > 0.5) / (np.sum(m > 0.5, axis=1, keepdims=True) + 1) * k
    m = np.random.default_rng(1).random((1000, 10))
    j = dualad.jit(g)
    j(m, 2.0)
    assert _bitwise(j(m, 2.0), g(m, 2.0)) and ".astype(np.float64)" in _code(j.source(m, 2.0))

    def f(x):   # an int64 operand as large as the result: not cast
        return x * np.arange(x.size)
    x = np.linspace(0.0, 1.0, 7)
    j = dualad.jit(f)
    j(x)
    assert _bitwise(j(x), f(x)) and ".astype" not in _code(j.source(x))


def test_max_rule_mask_kept_for_an_infinite_cotangent():
    """log(max(x)) at max 0: the cotangent of max is inf; the entries that are not the
    maximum stay exactly 0 (the where of max's rule is not dropped: its partial is traced)."""
    def f(x):
        return np.log(np.max(x)) * 1.0
    x = np.array([0.0, 0.0, -1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        src, g = _check(f, (x,))
    assert g[2] == 0.0 and not np.signbit(g[2]) and np.isinf(g[0])
