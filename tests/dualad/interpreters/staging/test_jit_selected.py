"""The reverse rule of max/min in generated NumPy programs (dualad.interpreters.staging.selected): the share
computed once per reduced slice, and the addition made at the selected entries only, both
bit for bit what the recorded program computes (signed zeros and NaN included)."""
from __future__ import annotations

import importlib
import re
import warnings

import numpy as np
import pytest

import dualad
from dualad.core.primitive import REGISTRY

codegen = importlib.import_module("dualad.interpreters.staging.codegen")
program = importlib.import_module("dualad.interpreters.staging.program")
selected = importlib.import_module("dualad.interpreters.staging.selected")

BIG = 200_000   # entries: above the code generator's buffer-reuse size (64 KiB)


def _bitwise(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def _code(source):
    return "\n".join(ln.split("#", 1)[0] for ln in source.splitlines())


def _check(f, x):
    """jit(grad(f))(x) bitwise eager grad(f)(x), first call and replay; returns the source."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        eager = dualad.grad(f)(x)
        g = dualad.jit(dualad.grad(f))
        first = g(x)
        kept = np.array(first, copy=True)
        second = g(x)
    assert _bitwise(first, eager) and _bitwise(second, eager), (first, second, eager)
    assert _bitwise(kept, first), "a replay wrote into an earlier result"
    return g.source(x)


def lse(x):
    m = np.max(x)
    return np.log(np.sum(np.exp(x - m))) + m


def lse_rows(x):
    m = np.max(x, axis=1, keepdims=True)
    return np.sum(np.log(np.sum(np.exp(x - m), axis=1)) + m[:, 0])


def neg_lse_min(x):
    m = np.min(x, axis=0)
    return np.sum(np.log(np.sum(np.exp(m - x), axis=0)) - m)


@pytest.mark.parametrize("n", [7, BIG])
def test_lse_gradient_adds_at_the_selected_entries_only(n):
    x = np.random.default_rng(n).standard_normal(n)
    x[n // 2] = x[1] = x.max()          # a tie: two entries share the cotangent
    src = _check(lse, x)
    code = _code(src)
    assert "where=" in code and "np.where" not in code, src
    assert "1.0 / v" in code, src         # the share, once: no M / C over the whole array
    assert not re.search(r"= v\d+ / v\d+", code), src
    if n == BIG:                          # the softmax's array dies there: added in place
        assert re.search(r"np\.add\((v\d+), v\d+, out=\1, where=v\d+\)", code), src


@pytest.mark.parametrize("f", [lse_rows, neg_lse_min])
def test_reductions_over_an_axis(f):
    x = np.random.default_rng(3).standard_normal((300, 400))
    x[:, 7] = x.max(axis=1)              # ties in every row
    code = _code(_check(f, x))
    assert "1.0 / v" in code and not re.search(r"= v\d+ / v\d+", code)
    if f is lse_rows:         # softmax + where(M, share, 0.0): an addition at M
        assert re.search(r"np\.add\((v\d+), v\d+, out=\1, where=v\d+\)", code)
    else:                     # where(M, share, 0.0) - softmax: a full pass stays
        assert "np.where" in code


def _check_w(f, x, w):
    """jit(grad(f))(x, w) bitwise eager grad(f)(x, w) (the gradient in x); the source."""
    eager = dualad.grad(f)(x, w)
    g = dualad.jit(dualad.grad(f))
    first, second = g(x, w), g(x, w)
    assert _bitwise(first, eager) and _bitwise(second, eager)
    return _code(g.source(x, w)), eager


def _w():
    """A weight vector of -0.0 and +0.0 entries (and one 1.5)."""
    w = np.zeros(BIG)
    w[::2] = -0.0
    w[5] = 1.5
    return w


def test_a_constant_cotangent_is_shared_once():
    """-max(x): the trace folds max's cotangent into a constant array of -1.0; its one
    number is the share's factor (no product over the whole array)."""
    def f(x, w):
        return np.sum(x * w) - np.max(x)
    x = np.random.default_rng(8).standard_normal(BIG)
    code, _ = _check_w(f, x, _w())
    assert "1.0 / v" in code and not re.search(r"= v\d+ / v\d+", code), code


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
def test_infinite_and_nan_entries(bad):
    """Every number bitwise eager's, NaN where eager has NaN. A NaN's sign bit is not
    compared: NumPy 2.2's vector addition gives ``NaN + 0.0`` another sign than its
    operand had, which eager's addition of the where does and the masked addition, not
    touching that entry, does not (NumPy 2.4 keeps the sign either way)."""
    x = np.random.default_rng(5).standard_normal(BIG)
    x[10] = bad
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        eager = dualad.grad(lse)(x)
        g = dualad.jit(dualad.grad(lse))
        got = [g(x), g(x)]
    for r in got:
        nan = np.isnan(eager)
        assert r.dtype == eager.dtype and np.array_equal(np.isnan(r), nan)
        assert r[~nan].tobytes() == eager[~nan].tobytes()


def test_a_cotangent_that_may_hold_minus_zero_keeps_the_where():
    """w + where(M, s, 0.0) with w holding -0.0: w + 0.0 is +0.0 there (nothing proves w
    free of -0.0), so the addition of the where stays and the signs are eager's."""
    def f(x, w):
        return np.max(x) + np.sum(x * w)
    x = np.random.default_rng(9).standard_normal(BIG)
    code, g = _check_w(f, x, _w())
    assert "where=" not in code, code
    assert not np.signbit(g).any()


def test_a_cotangent_read_later_is_copied_not_overwritten():
    """The softmax is returned too: the masked addition works on a copy."""
    def both(x):
        m = np.max(x)
        e = np.exp(x - m)
        return e / np.sum(e), np.log(np.sum(e)) + m
    x = np.random.default_rng(2).standard_normal(BIG)
    j = dualad.jit(lambda x: dualad.value_and_grad(lambda z: both(z)[1])(x))
    v, g = j(x)
    v2, g2 = dualad.value_and_grad(lambda z: both(z)[1])(x)
    assert _bitwise(g, g2) and _bitwise(v, v2)


# --- the rewrites on hand-made programs -------------------------------------------------
def _prog(swap, y_prim="exp", op="add"):
    """v0 (x), v1 = y_prim(v0), v2 = x == max, v3 = where(v2, 2.5, 0.0), v4 = v1 op v3
    (or v3 op v1 when ``swap``)."""
    P, E, C = program.Program, program.Eqn, program.Const
    n = 5
    arr = (np.ndarray, (n,), np.dtype(np.float64))
    avals = {0: arr, 1: arr, 2: (np.ndarray, (n,), np.dtype(bool)),
             3: arr, 4: arr, 5: (np.ndarray, (), np.dtype(np.float64))}
    body = [E(REGISTRY[y_prim], (0,), {}, 1),
            E(REGISTRY["max"], (0,), {"axis": (0,), "keepdims": False}, 5),
            E(REGISTRY["equal"], (0, 5), {}, 2),
            E(REGISTRY["where"], (2, C(2.5), C(0.0)), {}, 3),
            E(REGISTRY[op], (3, 1) if swap else (1, 3), {}, 4)]
    return P((0,), body, (4,), avals, "hand")


@pytest.mark.parametrize("swap", [False, True])
def test_masked_add_keeps_the_operand_order(swap):
    prog = _prog(swap)
    out = selected.masked_adds(prog, {})
    (e,) = [e for e in out.body if e.prim is selected.MASKED_ADD]
    assert e.params["swap"] is swap
    fn, src = codegen.compile_program(prog)
    x = np.array([0.3, -1.0, 2.0, np.nan, 2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = np.exp(x) + np.where(x == np.max(x), 2.5, 0.0)
        got = fn(x)[0]
    assert "where=" in src and _bitwise(got, want)


def test_a_subtraction_needs_no_proof():
    """y - where(M, s, 0.0) with y = -x holding -0.0: y - 0.0 is y for every y, so the
    subtraction is made at the selected entries only, and the signs stay."""
    prog = _prog(False, "negative", "subtract")
    fn, src = codegen.compile_program(prog)
    assert "np.subtract(" in src and "where=" in src, src
    x = np.array([0.0, 1.0, 2.0, 0.0, 2.0, -0.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = -x - np.where(x == np.max(x), 2.5, 0.0)
        got = fn(x)[0]
    assert _bitwise(got, want) and np.signbit(got[[0, 3]]).all()   # -0.0 stays -0.0
    swapped = selected.masked_adds(_prog(True, "negative", "subtract"), {})
    assert not any(e.prim is selected.MASKED_ADD for e in swapped.body)   # 0.0 - y is -y


@pytest.mark.parametrize("prim", ["sin", "negative", "log"])
def test_no_masked_add_without_a_proof_of_no_minus_zero(prim):
    prog = _prog(False, prim)
    out = selected.masked_adds(prog, {})
    assert not any(e.prim is selected.MASKED_ADD for e in out.body)


def test_no_negative_zero_proofs():
    P, E, C = program.Program, program.Eqn, program.Const
    body = [E(REGISTRY["exp"], (0,), {}, 1),            # >= +0
            E(REGISTRY["multiply"], (1, C(2.0)), {}, 2),  # >= +0 times a positive
            E(REGISTRY["multiply"], (1, C(-2.0)), {}, 3),  # negative: not proved
            E(REGISTRY["subtract"], (1, 1), {}, 4),        # x - x may be anything signed
            E(REGISTRY["absolute"], (4,), {}, 5),          # |.|: proved again
            E(REGISTRY["divide"], (5, 2), {}, 6),          # quotient of two: proved
            E(REGISTRY["multiply"], (1, C(np.array([1.0, -0.0]))), {}, 7)]
    assert selected.no_negative_zero(body) == {1, 2, 5, 6}


def test_the_numba_backends_run_the_shared_rewrite():
    pytest.importorskip("numba")
    x = np.random.default_rng(4).standard_normal(300)
    x[3] = x.max()
    g = dualad.jit(dualad.grad(lse), backend="numba", compile="now")
    assert _bitwise(g(x), dualad.grad(lse)(x))
