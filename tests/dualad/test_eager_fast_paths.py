"""Issue 31, the eager path: a basic slice's cotangent is a slice assignment (no
``np.add.at``), contractions reach BLAS, and the numbers stay those of the plain rules."""
import types

import numpy as np
from hypothesis import given, settings, strategies as st

import dualad
from dualad import cotangents


def _spy_numpy(calls):
    """Stands in for the ``np`` module inside dualad.cotangents, noting ``np.add.at``'s
    indices."""
    add = types.SimpleNamespace(at=lambda *a: (calls.append(a[1]), np.add.at(*a))[1],
                                reduce=np.add.reduce)

    class Spy:
        def __getattr__(self, name):
            return add if name == "add" else getattr(np, name)
    return Spy()


def _ode_like(x):
    y = np.zeros_like(x)
    for _ in range(3):
        y = y + 0.1 * np.concatenate([x[:1], x[1:] * y[:-1]])
    return y[-1] + np.sum(x[::2, None] * x[1::2][:, None])


def test_basic_slices_scatter_without_add_at(monkeypatch):
    calls = []
    x = np.linspace(0.5, 1.5, 8)
    want = dualad.grad(_ode_like)(x)
    monkeypatch.setattr(cotangents, "np", _spy_numpy(calls))
    got = dualad.grad(_ode_like)(x)
    assert calls == [], f"np.add.at ran for basic indices {calls}"
    np.testing.assert_array_equal(got, want)


def test_advanced_index_still_adds_repeats():
    x = np.arange(1.0, 5.0)
    g = dualad.grad(lambda v: np.sum(v[np.array([0, 2, 2, 2])]))(x)
    np.testing.assert_array_equal(g, [1.0, 0.0, 3.0, 0.0])
    g = dualad.grad(lambda v: np.sum(v[1:] * 2.0) + np.sum(v[np.array([1, 1])]) +
                    np.sum(v[:, None][np.array([3, 3]), 0]))(x)
    np.testing.assert_array_equal(g, [0.0, 4.0, 2.0, 4.0])


_BASIC = st.sampled_from([np.s_[1:], np.s_[:-1], np.s_[::2], np.s_[1::3], np.s_[2],
                          np.s_[-1], np.s_[:, 1], np.s_[1:, ::-1], np.s_[None, 2:],
                          np.s_[..., 0], np.s_[::-2, 1:2]])


@settings(derandomize=True, max_examples=40, deadline=None)
@given(_BASIC, _BASIC, st.booleans())
def test_slice_cotangents_match_dense_sum(a, b, two_d):
    """Σ w_a·x[a] + Σ w_b·x[b] has gradient scatter(w_a, a) + scatter(w_b, b), the
    overlapping entries added, whatever slices a and b are (1-D or 2-D x)."""
    x = np.arange(1.0, 13.0).reshape(3, 4) if two_d else np.arange(1.0, 13.0)
    try:
        xa, xb = x[a], x[b]
    except IndexError:
        return
    wa, wb = np.cos(np.arange(xa.size)).reshape(xa.shape), np.sin(
        np.arange(xb.size) + 1.0).reshape(xb.shape)
    want = np.zeros_like(x)
    np.add.at(want, a, wa)
    np.add.at(want, b, wb)
    got = dualad.grad(lambda v: np.sum(wa * v[a]) + np.sum(wb * v[b]))(x)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-15)
