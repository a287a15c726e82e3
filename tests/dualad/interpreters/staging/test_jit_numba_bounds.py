"""The bounds proof of the one-function Numba program (dualad.interpreters.staging.numba_bounds): every
subscript of a buffer is shown inside it before the program is compiled, and a writer
error (an offset one too far) falls back to NumPy instead of reading a neighbour."""
from __future__ import annotations

import importlib

import numpy as np
import pytest

import dualad

bounds = importlib.import_module("dualad.interpreters.staging.numba_bounds")
base = importlib.import_module("dualad.interpreters.staging.numba_base")

GOOD = """
def f(v0, k0, wf):
    acc = 0.0
    for i0 in range(10):
        wf[i0 + 5] = v0[i0] * 2.0
    for k in range(3):
        for j0 in range(4):
            wf[20 + k * 4 + j0] = wf[(2 - k) * 4 + j0 + 1]
    for i0 in range(6):
        acc += wf[k0[i0]]
    out = np.empty(3, np.float64)
    out[2] = acc + _pw(wf, np.int64(20), np.int64(12))
    for i0 in range(0):
        wf[1000] = 1.0
    return (out,)
"""
SIZES = {"v0": 10, "k0": 6, "wf": 32}


def test_a_program_inside_its_buffers_is_proved():
    bounds.prove_in_bounds(GOOD, SIZES, {"k0": (0, 31)})


@pytest.mark.parametrize("bad, what", [
    ("wf[i0 + 5] = v0[i0] * 2.0", "wf[i0 + 23] = v0[i0] * 2.0"),        # one past the end
    ("wf[i0 + 5] = v0[i0] * 2.0", "wf[i0 + 5] = v0[i0 - 1] * 2.0"),     # before the start
    ("for k in range(3):", "for k in range(4):"),                       # one block too many
    ("np.int64(20), np.int64(12)", "np.int64(21), np.int64(12)"),       # the sum's range
    ("out[2] = acc", "out[3] = acc"),                                   # a local array
])
def test_an_access_outside_is_refused_with_its_range(bad, what):
    src = GOOD.replace(bad, what)
    assert src != GOOD
    with pytest.raises(base.Unsupported, match="bounds proof"):
        bounds.prove_in_bounds(src, SIZES, {"k0": (0, 31)})


def test_an_index_read_from_a_constant_uses_its_range():
    with pytest.raises(base.Unsupported, match="wf"):
        bounds.prove_in_bounds(GOOD, SIZES, {"k0": (0, 32)})


def test_an_index_it_cannot_evaluate_is_refused():
    src = GOOD.replace("wf[k0[i0]]", "wf[int(acc)]")
    with pytest.raises(base.Unsupported, match="cannot evaluate"):
        bounds.prove_in_bounds(src, SIZES, {"k0": (0, 31)})


def test_a_writer_error_falls_back_to_numpy_with_the_reason(monkeypatch):
    """An offset one too far in every read of an argument (a simulated writer bug): the
    one-function program is not compiled, the kernels' writer (whole arrays, no offsets)
    writes it instead, and the source says why."""
    pytest.importorskip("numba")
    flat = importlib.import_module("dualad.interpreters.staging.numba_flat")
    at = flat.View.at

    def shifted(self, idx):
        src = at(self, idx)
        return src[:-1] + " + 1]" if src.startswith("v") else src
    monkeypatch.setattr(flat.View, "at", shifted)

    def f(x):
        return np.sum(np.sin(x) * x)
    x = np.linspace(0.0, 1.0, 37)
    g = dualad.jit(dualad.grad(f), backend="numba", compile="now")
    np.testing.assert_allclose(g(x), dualad.grad(f)(x), rtol=1e-14)
    src = g.source(x)
    assert "the one-function writer declined: the bounds proof" in src, src
    assert "v0[" not in src.split("declined", 1)[1].split("\n", 1)[1]   # no flat reads


def test_parity_modulo_and_floor_division_offsets():
    """A carry alternating two places by the step's parity (``k & 1``), and ``%``/``//``
    by a positive constant, are bounded exactly enough to prove."""
    src = """
def f(wf):
    for k in range(7):
        for j0 in range(4):
            wf[10 + (k & 1) * 4 + j0] = wf[14 - (k & 1) * 4 + j0] + wf[(k % 2) * 4 + j0]
            wf[j0 + (k // 2)] = 0.0
"""
    bounds.prove_in_bounds(src, {"wf": 18}, {})
    with pytest.raises(base.Unsupported, match="bounds proof"):
        bounds.prove_in_bounds(src, {"wf": 17}, {})
    with pytest.raises(base.Unsupported, match="cannot evaluate"):
        bounds.prove_in_bounds(src.replace("(k & 1)", "(k ^ 1)"), {"wf": 18}, {})
