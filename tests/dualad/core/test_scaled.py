"""Scaled batches (dualad/core/scaled.py): a batch of tangents times a shared factor, kept
apart until something needs the product. Values equal the eager ones up to rounding."""
import numpy as np
import pytest

import dualad
from dualad import jacobians
from dualad.core import scaled
from dualad.core.onehot import OneHotBatch
from dualad.core.scaled import ScaledBatch

RNG = np.random.default_rng(3)


def _batch():
    base = RNG.standard_normal((4, 3, 5))
    scale = RNG.standard_normal((3, 5))
    return base, scale, ScaledBatch(base, scale, nb=1)


def test_structure_kept_through_scaling_negation_and_sums_of_one_base():
    base, scale, t = _batch()
    c = RNG.standard_normal(5)
    for got, want in [(t * c, base * scale * c), (c * t, base * scale * c),
                      (t / c, base * scale / c), (-t, -(base * scale)), (2.0 * t, 2 * base * scale),
                      (t + t * c, base * scale + base * scale * c),
                      (t - t / c, base * scale - base * scale / c)]:
        assert type(got) is ScaledBatch and got.base is base
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-14)


def test_anything_else_sees_the_product():
    base, scale, t = _batch()
    full = base * scale
    other = ScaledBatch(RNG.standard_normal((4, 3, 5)), scale, nb=1)   # another base
    cases = [(np.exp(t), np.exp(full)), (t * t, full * full), (t + other, full + np.asarray(other)),
             (t * RNG.standard_normal((4, 3, 5))[0:1], None),                # has a batch axis
             (np.sum(t, axis=(1, 2)), full.sum(axis=(1, 2))), (t.reshape(4, 15), full.reshape(4, 15)),
             (t[1], full[1]), (np.transpose(t, (0, 2, 1)), full.transpose(0, 2, 1)),
             (t @ np.ones((5, 2)), full @ np.ones((5, 2)))]
    for got, want in cases:
        assert type(got) is np.ndarray
        if want is not None:
            np.testing.assert_allclose(got, want, rtol=1e-14)
    assert t.shape == (4, 3, 5) and t.ndim == 3 and t.size == 60 and len(t) == 4
    assert t.dtype == np.float64 and ScaledBatch(base.astype(np.float32), scale.astype(np.float32),
                                                 1).dtype == np.float32


def test_with_one_hot_batches():
    base, scale, t = _batch()
    e = OneHotBatch(np.array([0, 3, 7, 14]), np.full(4, 0.5), (3, 5))
    np.testing.assert_allclose(t + e, base * scale + np.asarray(e), rtol=1e-15)
    np.testing.assert_allclose(e + t, base * scale + np.asarray(e), rtol=1e-15)
    np.testing.assert_allclose(t - e, base * scale - np.asarray(e), rtol=1e-15)


def test_only_large_plain_batches_are_deferred():
    t = np.ones((400, 200))
    d = np.arange(200.0)
    assert type(scaled.lazy_product(t, d, 1)) is ScaledBatch
    assert scaled.lazy_product(t[:10], d, 1) is None                 # small: multiply now
    assert scaled.lazy_product(t, d, 0) is None                      # no batch axis
    assert scaled.lazy_product(t, np.ones((400, 200)), 1) is None    # d has the batch axis
    assert scaled.lazy_product(t, 2.0, 1) is None                    # a number: multiply now


def _programs():
    A = RNG.standard_normal((6, 6)) / 3

    def chain(x):
        z = A @ x
        return np.sum(np.log(np.cosh(z))) + 0.5 * np.sum(x ** 4) + np.sum(np.tanh(z) * np.sin(x))

    def vector(x):
        y = np.exp(-x) * np.sqrt(1.0 + x * x)
        return np.concatenate([np.tanh(A @ y) / (2.0 + np.cos(x)), np.sort(y) ** 2])

    def broadcast(x):
        M = x.reshape(2, 3)
        return (np.sin(M) * np.arange(1.0, 4.0) + np.cos(M[:, :1]) * M).ravel()
    return chain, vector, broadcast


@pytest.mark.parametrize("prog", _programs(), ids=lambda f: f.__name__)
def test_every_batch_deferred_gives_the_eager_derivatives(prog, monkeypatch):
    x = RNG.uniform(-1.0, 1.0, 6)
    eager_jac = jacobians.jacobian(prog, x, mode="forward")
    eager_hess = jacobians.hessian(prog, x) if prog.__name__ == "chain" else None
    monkeypatch.setattr(scaled, "LAZY_MIN_SIZE", 1)
    calls = []
    real = scaled.ScaledBatch.dense

    def counting(self, dtype=None):
        calls.append(1)
        return real(self, dtype)
    monkeypatch.setattr(scaled.ScaledBatch, "dense", counting)
    np.testing.assert_allclose(jacobians.jacobian(prog, x, mode="forward"), eager_jac,
                               rtol=1e-13, atol=1e-14)
    if eager_hess is not None:
        np.testing.assert_allclose(jacobians.hessian(prog, x), eager_hess, rtol=1e-13, atol=1e-14)
    assert calls, "no scaled batch was formed"


def test_hessian_at_full_size_uses_them_and_is_exact():
    n = 300
    A = RNG.standard_normal((n, n)) / np.sqrt(n)
    x = RNG.standard_normal(n)
    H = jacobians.hessian(lambda x: np.sum(np.log(np.cosh(A @ x))) + 0.5 * np.sum(x ** 4), x)
    s = 1.0 / np.cosh(A @ x) ** 2
    np.testing.assert_allclose(H, A.T @ (s[:, None] * A) + np.diag(6 * x ** 2), rtol=1e-12,
                               atol=1e-12)
    assert np.array_equal(H, H.T)
    # a deferred product never reaches the user: jvp hands out plain arrays
    t = dualad.jvp(lambda x: np.sin(A @ x), (x,), (np.eye(n),))[1]
    assert type(t) is np.ndarray
    np.testing.assert_allclose(t, (np.cos(A @ x)[:, None] * A).T, rtol=1e-13)
