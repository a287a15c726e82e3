"""Dense Jacobians and Hessians against finite differences and each other."""
import numpy as np
import pytest

from dualad import jacobians
from dualad.jacobians import _common


def fd_jacobian(f, x, eps=1e-6):
    x = np.asarray(x, float)
    f0 = np.asarray(f(x))
    cols = []
    for j in range(x.size):
        e = np.zeros(x.size)
        e[j] = eps
        cols.append((np.asarray(f(x + e.reshape(x.shape))) - np.asarray(f(x - e.reshape(x.shape))))
                    / (2 * eps))
    return np.stack(cols, axis=-1).reshape(f0.shape + x.shape)


rng = np.random.default_rng(0)
W = rng.standard_normal((5, 4))


def f_vec(x):
    return np.tanh(W @ x) * np.sum(np.sin(x))


@pytest.mark.parametrize("mode", ["forward", "reverse", "auto"])
@pytest.mark.parametrize("chunk", [None, 1, 3])
def test_jacobian_matches_finite_differences(mode, chunk):
    x = rng.standard_normal(4)
    J = jacobians.jacobian(f_vec, x, mode=mode, chunk_size=chunk)
    assert J.shape == (5, 4)
    np.testing.assert_allclose(J, fd_jacobian(f_vec, x), rtol=1e-6, atol=1e-8)


def test_shapes_out_shape_plus_in_shape():
    x = rng.standard_normal((2, 3))
    f = lambda x: np.sin(x).T[..., None] * x[0, 0]  # (3, 2, 1)
    for mode in ("forward", "reverse"):
        J = jacobians.jacobian(f, x, mode=mode)
        assert J.shape == (3, 2, 1, 2, 3)
        np.testing.assert_allclose(J, fd_jacobian(f, x), atol=1e-7)
    assert jacobians.jacobian(lambda x: np.sum(x ** 2), x).shape == (2, 3)
    assert jacobians.jacobian(lambda s: np.array([1.0, 2.0]) * s, 1.5).shape == (2,)


def test_tuple_inputs_and_outputs():
    x, y = rng.standard_normal(3), rng.standard_normal(2)
    f = lambda x, y: (x[:2] * y, np.sum(x) * y[0])
    for mode in ("forward", "reverse", "auto"):
        (jxa, jya), (jxb, jyb) = jacobians.jacobian(f, x, y, argnums=(0, 1), mode=mode)
        assert jxa.shape == (2, 3) and jya.shape == (2, 2) and jxb.shape == (3,)
        np.testing.assert_allclose(jya, np.diag(x[:2]))
        np.testing.assert_allclose(jxb, np.full(3, y[0]))
        assert np.all(jyb == np.array([np.sum(x), 0.0]))
    ja, jb = jacobians.jacobian(f, x, y, argnums=1)
    assert ja.shape == (2, 2) and jb.shape == (2,)


def test_container_input():
    f = lambda p: p["a"] * p["b"][0]
    p = {"a": rng.standard_normal(2), "b": (rng.standard_normal(1),)}
    J = jacobians.jacfwd(f, p)
    assert J["a"].shape == (2, 2) and J["b"][0].shape == (2, 1)
    R = jacobians.jacrev(f, p)
    np.testing.assert_allclose(J["a"], R["a"])
    np.testing.assert_allclose(J["b"][0], R["b"][0])


def test_curried_forms():
    x = rng.standard_normal(4)
    for fn in (jacobians.jacobian(f_vec), jacobians.jacfwd(f_vec), jacobians.jacrev(f_vec)):
        np.testing.assert_allclose(fn(x), fd_jacobian(f_vec, x), rtol=1e-6, atol=1e-8)
    assert "f_vec" in jacobians.jacfwd(f_vec).__name__


def test_batched_sweeps_not_one_per_basis_vector(monkeypatch):
    import dualad
    calls = {"jvp": 0, "pullback": 0}
    real_jvp, real_vjp = dualad.jvp, dualad.vjp

    def jvp(*a, **k):
        calls["jvp"] += 1
        return real_jvp(*a, **k)

    def vjp(*a, **k):
        out, pb = real_vjp(*a, **k)

        def counted(c):
            calls["pullback"] += 1
            return pb(c)
        return out, counted
    monkeypatch.setattr(dualad, "jvp", jvp)
    monkeypatch.setattr(dualad, "vjp", vjp)
    x = rng.standard_normal(50)
    jacobians.jacfwd(np.sin, x)
    jacobians.jacrev(np.sin, x)
    assert calls == {"jvp": 1, "pullback": 1}
    jacobians.jacfwd(np.sin, x, chunk_size=20)
    jacobians.jacrev(np.sin, x, chunk_size=20)
    assert calls == {"jvp": 4, "pullback": 4}


def test_memory_budget_chunks():
    x = rng.standard_normal(100)
    # ~ a few values of 100 elements per direction (2.4 KB): a 120 KB budget -> small
    # chunks, same result. (120 KB, not 8 KB: max_memory bounds the whole call, the dense
    # result of 100 x 100 x 8 bytes = 80 KB included: docs/memory.md, test_memory_accounting.py.)
    J = jacobians.jacobian(lambda x: np.exp(np.sin(x) * 2.0), x, mode="forward",
                           max_memory=120_000)
    np.testing.assert_allclose(J, np.diag(np.exp(np.sin(x) * 2) * 2 * np.cos(x)))
    # plan counts the whole call as jacfwd does (its chunk is the most whose Footprint fits)
    p = jacobians.plan(lambda x: np.exp(np.sin(x) * 2.0), x, mode="forward", max_memory=120_000)
    assert 1 < p.n_chunks and p.footprint.forward(p.chunk_size) <= 120_000
    assert p.footprint.forward(p.chunk_size + 1) > 120_000


def test_auto_picks_forward_for_tall_and_reverse_for_wide():
    # Three layers: one-hot seeds make the first linear map on either side a gather, so
    # a single layer costs both modes about the same; the middle one decides (~50x here).
    tall, wide = rng.standard_normal((300, 3)), rng.standard_normal((3, 300))
    W1, W2 = rng.standard_normal((2, 300, 300)) / 20

    def deep_tall(x):
        return np.tanh(W2 @ np.tanh(W1 @ np.tanh(tall @ x)))

    def deep_wide(x):
        return np.tanh(wide @ np.tanh(W1 @ np.tanh(W2 @ x)))
    p1 = jacobians.plan(deep_tall, rng.standard_normal(3), sparse=False)
    p2 = jacobians.plan(deep_wide, rng.standard_normal(300), sparse=False)
    assert p1.mode == "forward" and p2.mode == "reverse"


def test_errors_name_function_argument_and_shape():
    with pytest.raises(ValueError, match="mode='sideways'"):
        jacobians.jacobian(np.sin, np.ones(2), mode="sideways")
    with pytest.raises(TypeError, match=r"jacobian\(f_vec\).*argument 0.*int64.*\(4,\)"):
        jacobians.jacobian(f_vec, np.arange(4))
    with pytest.raises(ValueError, match="argnums=3 is out of range"):
        jacobians.jacobian(f_vec, np.ones(4), argnums=3)
    with pytest.raises(TypeError, match=r"hessian: f_vec must return a scalar.*\(5,\)"):
        jacobians.hessian(f_vec, np.ones(4))
    with pytest.raises(ValueError, match=r"hvp\(<lambda>\): v has shape \(3,\).*\(4,\)"):
        jacobians.hvp(lambda x: np.sum(x ** 3), np.ones(4), np.ones(3))


# --- Hessians --------------------------------------------------------------------------
A = rng.standard_normal((6, 4))


def f_scalar(x):
    return np.sum(np.log(np.cosh(A @ x))) + 0.5 * np.sum(x ** 4) + x[0] * x[1] * x[2]


def hessian_exact(x):
    t = np.tanh(A @ x)
    h = A.T @ np.diag(1 - t ** 2) @ A + np.diag(6 * x ** 2)
    h[0, 1] += x[2]; h[1, 0] += x[2]; h[0, 2] += x[1]; h[2, 0] += x[1]
    h[1, 2] += x[0]; h[2, 1] += x[0]
    return h


@pytest.mark.parametrize("mode", ["auto", "forward-over-reverse", "reverse-over-reverse",
                                  "reverse-over-forward", "forward-over-forward"])
@pytest.mark.parametrize("chunk", [None, 3])
def test_hessian_modes_agree_and_are_exactly_symmetric(mode, chunk):
    x = rng.standard_normal(4)
    H = jacobians.hessian(f_scalar, x, mode=mode, chunk_size=chunk)
    np.testing.assert_allclose(H, hessian_exact(x), rtol=1e-10, atol=1e-12)
    assert np.array_equal(H, H.T)


def test_hessian_shapes_and_hvp():
    x = rng.standard_normal((2, 2))
    f = lambda x: np.sum(np.sin(x) ** 2) * x[0, 1]
    H = jacobians.hessian(f, x)
    assert H.shape == (2, 2, 2, 2)
    v = rng.standard_normal((3, 2, 2))
    hv = jacobians.hvp(f, x, v)
    np.testing.assert_allclose(hv, np.einsum("ijkl,bkl->bij", H, v), atol=1e-12)
    np.testing.assert_allclose(jacobians.hvp(f, x, v[0]), hv[0], atol=1e-12)
    g = lambda a, b: np.sum(a ** 2 * b[0]) + np.sum(b ** 3)
    (haa, hab), (hba, hbb) = jacobians.hessian(g, np.ones(3), np.ones(2), argnums=(0, 1))
    assert haa.shape == (3, 3) and hab.shape == (3, 2) and hba.shape == (2, 3)
    np.testing.assert_allclose(hab, hba.T)
    np.testing.assert_allclose(hbb, np.diag([6.0, 6.0]))
