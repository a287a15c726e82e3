"""The one-function Numba mode writes a value where it is copied to (issue 32: ode).

A producer writes into its consumer's place (a concatenation's slice, a zero-padded
scatter's slice, a rolled loop's stack entry or its carry's next place) and the copy is
gone; a scatter zeroes only what no operand covers; a carry computed anew alternates two
places. Each case where such an elision could go wrong (a value read twice, concatenated
with itself, padded and also returned, a carry read after its new value is made,
carries that swap) is compared with the default backend bitwise and with eager
``dualad.grad``, every index bounds-checked; the ode gradient's source is checked for the
copies it no longer has."""
from __future__ import annotations

import importlib
import os
import pathlib
import re
import sys

import numpy as np
import pytest

numba = pytest.importorskip("numba")

import dualad  # noqa: E402

FW = importlib.import_module("dualad.interpreters.staging.numba_flatwrite")
ROOT = pathlib.Path(__file__).resolve().parents[4]   # the repository
BENCH = os.path.join(str(ROOT), "bench")
if BENCH not in sys.path:
    sys.path.insert(0, BENCH)
from gradbench_numpy import ode_objective  # noqa: E402

WHOLE = "# numba: the whole program"


@pytest.fixture(autouse=True)
def _boundscheck(monkeypatch):
    monkeypatch.setattr(FW, "BOUNDSCHECK", True)


def _whole(f, *args):
    """``jit(f, backend="numba")``: the whole-program mode, bitwise the default backend's
    numbers (the first call also checks it against the traced call). Returns its source."""
    jn, jp = dualad.jit(f, backend="numba", compile="now"), dualad.jit(f)
    jn(*args)
    got, want = jn(*args), jp(*args)
    src = jn.source(*args)
    assert src.startswith(WHOLE), src[:400]
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
    return src, got


def _grad(f, *args, argnums=0):
    """The gradient jitted with Numba, the default backend and eager, all agreeing."""
    g = dualad.grad(f, argnums=argnums)
    src, got = _whole(g, *args)
    eager = g(*args)
    eager = eager if isinstance(eager, tuple) else (eager,)
    for a, b in zip(got, eager, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    return src


def _copies(src):
    """Lines that only copy one arena entry into another (``wf[...] = wf[...]``)."""
    return [ln for ln in src.splitlines() if re.fullmatch(r"\s*wf\[[^\]]+\] = wf\[[^\]]+\]", ln)]


def _loop_body(src, nth=0):
    """The lines of the ``nth`` rolled loop (``for k in range``) of ``src``."""
    lines = src.splitlines()
    starts = [j for j, ln in enumerate(lines) if ln.strip().startswith("for k in range(")]
    j = starts[nth]
    ind = len(lines[j]) - len(lines[j].lstrip())
    body = []
    for ln in lines[j + 1:]:
        if ln.strip() and len(ln) - len(ln.lstrip()) <= ind:
            break
        body.append(ln)
    return body


def test_a_concatenated_value_read_twice_and_concatenated_with_itself():
    x = np.linspace(-1.0, 1.0, 9)

    def f(x):
        y = x * 2.0
        c = np.concatenate([y, y * y - 1.0, y])          # y twice, in two places
        d = np.concatenate([y[:4] + 1.0, y])             # y a third time
        return np.sum(c * c) + np.sum(d * y[0]) + np.sum(y * 3.0)

    src, _ = _whole(f, x)
    _grad(f, x)
    assert "wf" in src
    src, _ = _whole(lambda x: (np.concatenate([x * 2.0, x * 3.0]), x * 2.0), x)
    # the producers write into the concatenation: no copy loop left
    assert not _copies(src), src


def test_a_pad_whose_operand_is_also_returned_or_read_again():
    x = np.linspace(0.5, 1.5, 7)

    def h(x):
        _, pb = dualad.vjp(lambda z: z[1:], x)
        u = x[:-1] * 2.0
        p = pb(u)
        p = p[0] if isinstance(p, tuple) else p
        return p, u, p * u[0] + np.sum(u)

    _whole(h, x)

    def f(x):                       # the gradient pads x[1:] * ... into zeros and reads it
        y = x[1:] * x[:-1]
        return np.sum(np.concatenate([x[:1], y]) ** 2) + np.sum(x[2:] * x[:-2])

    src = _grad(f, x)
    assert not re.search(r"for j0 in range\(7\):\n\s+wf\[[^\]]+\] = 0\n", src), src


def test_pads_of_two_dimensional_slices_many_runs_of_zeros():
    a = np.linspace(-1.0, 1.0, 30).reshape(5, 6)

    def f(a):
        return np.sum(a[:, 1:] * a[:, :-1] / (1.0 + a[:, 1:] ** 2)) + np.sum(a[1:, ::2] ** 2) + \
            np.sum(a[::2, 1:3] * 3.0)

    _grad(f, a)


def test_a_carry_read_after_its_new_value_is_made():
    w = np.linspace(0.5, 1.5, 6)

    def f(w):
        a, b = w * 0.1, w * 0.3
        for _ in range(30):
            a_new = (a * w + b) / (1.0 + a * a)
            b = b * 0.5 + a * a_new          # the old a, read after the new one exists
            a = a_new
        return np.sum(a * b) + np.sum(a)

    src, _ = _whole(f, w)
    assert "for k in range(" in src
    src = _grad(f, w)
    assert "for k in range(" in src


def test_swapping_and_unchanged_carries_and_per_block_values():
    w = np.linspace(0.5, 1.5, 6)

    def f(w):
        a, b, c = w * 0.1, w[::-1] * 0.2, w * 1.0
        total = 0.0
        for _ in range(30):
            a, b = b, (a * w + b) * 0.5     # swap: one carry is the other's old value
            c = c                               # unchanged
            total = total + np.sum(a * b * c)
        return total + np.sum(b) + np.sum(a)

    src, _ = _whole(f, w)
    assert "for k in range(" in src
    _grad(f, w)


def test_the_ode_gradient_has_no_copy_back_no_concatenation_copy_no_zero_fill():
    x = np.random.default_rng(0).random(40)
    src = _grad(ode_objective(np, 30), x)
    fwd, bwd = _loop_body(src, 0), _loop_body(src, 1)
    loops = [sum(ln.strip().startswith("for ") for ln in b) for b in (fwd, bwd)]
    # forward: per rhs one loop, the product (into the concatenation) computed inside the
    # update's loop (into its stack entry, or the carry's next row): 4 loops, 17 before;
    # backward: 6 (27 before)
    assert loops == [4, 6], (loops, src)
    # no copy back of a carry, no copy into a concatenation, a pad or a stack, no zero fill
    # loop; the reversed stack the backward loop reads is a view, not a copy
    assert not _copies("\n".join(fwd + bwd)), src
    body = "\n".join(fwd + bwd) + "\n"
    assert not re.search(r"for \w+ in range\(\d+\):\n\s+wf\[[^\]]+\] = 0\n", body), src
    assert "for j_" not in src, src


def test_stacked_leading_parts_other_slices_and_a_stack_read_backward():
    w = np.linspace(0.5, 1.5, 6)

    def f(w):
        a, b = w * 0.1, w * 0.3
        total = 0.0
        for _ in range(30):
            u = a * w + b
            total = total + np.sum(u[:4] * a[:5][:4]) + np.sum(u[2:] * b[1:5])
            b = b * 0.5 + a * u                 # the old a read after the new one is made
            a = u / (1.0 + u * u)
        return total + np.sum(a * b)

    src, _ = _whole(f, w)
    assert "for k in range(" in src
    src = _grad(f, w)
    assert "for k in range(" in src


def test_a_carry_that_is_a_concatenation_or_a_pad_is_made_in_its_next_place():
    x = np.linspace(0.5, 1.5, 50)

    def f(x):
        y = x
        for _ in range(40):
            y = np.concatenate([y[:1], y[1:] * 0.5 + y[:-1] * 0.25])
        return np.sum(y * y)

    src, _ = _whole(f, x)
    src = _grad(f, x)
    body = "\n".join(_loop_body(src, 0) + _loop_body(src, 1)) + "\n"
    # only single entries are copied in the loops (a concatenation's y[:1]), no array
    assert not re.search(r"for \w+ in range\(\d+\):\n\s+wf\[[^\]]+\] = wf\[", body), src


def test_a_placed_loop_computed_inside_its_readers_loop_or_not():
    x = np.linspace(-1.0, 1.5, 12)

    def first(x):      # one load of d: the product made inside the update's loop
        d = np.concatenate([x[:1], x[1:] * 2.0])
        return np.sum(d * 3.0 + x)

    def middle(x):     # the product in the middle of the loop
        m = np.concatenate([x[:2], x[2:7] * 2.0, x[7:]])
        return np.sum(m * m - 1.0)

    def shifts(x):     # two loads of p at two shifts: made alone
        p = np.concatenate([x[:3], x[3:] * 0.5])
        return np.sum(p[1:] * p[:-1] + 1.0)

    def again(x):      # y read again: made alone
        y = x[1:] * 4.0
        q = np.concatenate([x[:1], y])
        return np.sum((q * 2.0 + 1.0) * x) + np.sum(y)

    def entry(x):      # an entry of d read as a number in the loop: made alone
        d = np.concatenate([x[:1], x[1:] * 2.0])
        return np.sum(d * d[5] + 1.0)

    inside = {first: "for i0 in range(1, 12):", middle: "for i0 in range(2, 7):",
              shifts: None, again: None, entry: None}
    for f, loop in inside.items():
        src, _ = _whole(f, x)
        assert (loop in src) if loop else "range(1, " not in src and "range(3, " not in src, src
        _grad(f, x)
