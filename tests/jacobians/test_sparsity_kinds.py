"""The sparsity kind each primitive declares (``Primitive.sparsity``) never misses a nonzero.

For every registered primitive with a pattern rule and declared samples, the detected
pattern of one call must contain every entry where a finite-difference probe of the
primal changes the output (over-approximation is allowed: a missed nonzero would make
a sparse Jacobian silently wrong).
"""
import numpy as np
import pytest

import dualad  # noqa: F401  (fills the registry)
import dualad.scipy  # noqa: F401  (registers quad and odeint)
from dualad.jacobians.rules import KIND_RULES, rule_for
from dualad.jacobians.sparsity import jacobian_sparsity
from dualad.core.primitive import REGISTRY, SPARSITY_KINDS, Primitive
from dualad.verification.rules import _materialize, default_samples

# The primitives that fell back to a dense pattern before their kind was declared.
NEWLY_DECLARED = ["cholesky", "cofactor", "cumprod", "det", "eig", "eigh", "eigvalsh", "expm",
                  "fft", "fractional_matrix_power", "inv", "irfft", "logabsdet", "logm",
                  "lu_packed", "pinv", "qr", "rfft", "solve", "solve_banded", "solve_stein",
                  "solve_sylvester", "solve_triangular", "solveh_banded", "sqrtm", "svd",
                  "svdvals"]


def _probe(f, xs):
    """Entries (i, j) where perturbing flat input j (real and imaginary parts) changes
    flat output i: every one is a true nonzero of the Jacobian."""
    y0 = np.ravel(f(*xs))
    cols = []
    for k, x in enumerate(xs):
        for j in range(np.size(x)):
            hit = np.zeros(y0.size, bool)
            for h in ((1e-3, 1e-3j) if np.iscomplexobj(x) else (1e-3,)):
                xp = [np.array(v, copy=True) for v in xs]
                xp[k].reshape(-1)[j] += h
                hit |= np.abs(np.ravel(f(*xp)) - y0) > 1e-9 * (1.0 + np.abs(y0))
            cols.append(hit)
    return np.stack(cols, axis=1)


def _calls(prim):
    rng = np.random.default_rng(0)
    nondiff = set(prim.nondiff_argnums)
    for smp in default_samples(prim)[:3]:
        if smp.get("signature"):
            continue
        vals, diff = _materialize(smp, rng, nondiff)
        if diff:
            yield vals, diff, dict(smp.get("params", {}))


def _with_rules():
    # stop_gradient's derivative is zero by declaration while its value moves with x (the
    # identity): probing the value is not probing its Jacobian (test_stop_gradient.py checks
    # its empty pattern)
    return sorted(name for name, p in REGISTRY.items()
                  if rule_for(p) is not None and not p.zero_derivative and p.samples
                  and not getattr(p, "stops_gradient", False))


@pytest.mark.parametrize("name", _with_rules())
def test_declared_pattern_contains_every_nonzero(name):
    prim = REGISTRY[name]
    for vals, diff, params in _calls(prim):
        def f(*xs):
            args = list(vals)
            for i, x in zip(diff, xs):
                args[i] = x
            return prim(*args, **params)
        xs = [np.asarray(vals[i]) for i in diff]
        probed = _probe(f, xs)
        pattern = jacobian_sparsity(f, *xs, argnums=tuple(range(len(xs)))).toarray()
        assert pattern.shape == probed.shape
        missed = np.argwhere(probed & ~pattern)
        assert not len(missed), f"{name}: pattern misses nonzeros at {missed[:5].tolist()}"


def test_declared_kinds_are_not_dense_for_stacks():
    """A stack of two matrices: inv's pattern is block diagonal, not dense."""
    stack = np.stack([np.eye(2) * 2.0 + 0.1, np.eye(2) * 3.0 - 0.2])
    p = jacobian_sparsity(lambda a: np.linalg.inv(a), stack).toarray()
    assert p.sum() == 2 * 4 * 4
    assert not p[:4, 4:].any() and not p[4:, :4].any()
    q = jacobian_sparsity(lambda x: np.fft.fft(x, axis=0), np.ones((4, 3))).toarray()
    assert q.sum() == 3 * 4 * 4     # each column's 4 outputs from its own 4 inputs
    c = jacobian_sparsity(lambda x: np.cumprod(x), np.arange(1.0, 5.0)).toarray()
    assert np.array_equal(c, np.tril(np.ones((4, 4), bool)))


def test_newly_declared_primitives_have_a_rule():
    assert all(rule_for(REGISTRY[n]) is not None for n in NEWLY_DECLARED)
    assert set(KIND_RULES) == SPARSITY_KINDS
    fallbacks = sorted(n for n, p in REGISTRY.items() if rule_for(p) is None)
    assert fallbacks == ["convolve", "odeint", "quad"]


def test_unknown_kind_is_refused():
    with pytest.raises(ValueError, match="unknown sparsity kind 'elementwize'"):
        Primitive("typo", np.sin, sparsity="elementwize")
