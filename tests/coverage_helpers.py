"""The check every NumPy-coverage test runs: a function of float arrays, traced,
against NumPy itself and central differences, in both modes, batched, to order 2."""
import numpy as np

import dualad

RNG = np.random.default_rng(0)


def _leaves(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _flat(out):
    return np.concatenate([np.ravel(np.asarray(x, dtype=float)) for x in _leaves(out)])


def _like(x, batch=()):
    return RNG.standard_normal(batch + np.shape(x))


def _struct(out, leaves):
    return tuple(leaves) if isinstance(out, (tuple, list)) else leaves[0]


def check(f, *args, order=2, batch=True, rtol=1e-6, atol=1e-7, h=1e-6, value_rtol=1e-13,
          reference=None):
    """``f`` traced against ``reference`` (default: ``f`` on plain arrays, i.e. NumPy):
    the value; the JVP against central differences; the VJP against the JVP
    (dot-product test); batched JVP/VJP against a loop; and (order 2) the Hessian of
    ⟨ū, f⟩ along a direction by forward-over-reverse and reverse-over-reverse against a
    difference of gradients."""
    args = tuple(np.asarray(a, dtype=float) for a in args)
    reference = f if reference is None else reference
    out = reference(*args)
    ts = tuple(_like(a) for a in args)
    fd = (_flat(reference(*[a + h * t for a, t in zip(args, ts)]))
          - _flat(reference(*[a - h * t for a, t in zip(args, ts)]))) / (2 * h)
    val, jt = dualad.jvp(f, args, ts)
    assert [np.shape(v) for v in _leaves(val)] == [np.shape(o) for o in _leaves(out)], \
        f"shape {[np.shape(v) for v in _leaves(val)]} != {[np.shape(o) for o in _leaves(out)]}"
    np.testing.assert_allclose(_flat(val), _flat(out), rtol=value_rtol, atol=value_rtol,
                               err_msg="value vs NumPy")
    np.testing.assert_allclose(_flat(jt), fd, rtol=rtol * 100, atol=atol * 100,
                               err_msg="JVP vs central differences")
    cts = _struct(out, [_like(o) for o in _leaves(out)])
    _, pullback = dualad.vjp(f, *args)
    gs = pullback(cts)
    gs = gs if isinstance(gs, tuple) else (gs,)
    for g, a in zip(gs, args):
        assert np.shape(g) == np.shape(a), f"cotangent shape {np.shape(g)} for {np.shape(a)}"
    lhs = float(np.dot(_flat(cts), _flat(jt)))
    rhs = float(sum(np.sum(g * t) for g, t in zip(gs, ts)))
    np.testing.assert_allclose(rhs, lhs, rtol=1e-9, atol=1e-10, err_msg="VJP vs JVP")
    if batch:
        tb = tuple(_like(a, (3,)) for a in args)
        _, jb = dualad.jvp(f, args, tb)
        for k in range(3):
            _, jk = dualad.jvp(f, args, tuple(t[k] for t in tb))
            np.testing.assert_allclose(_flat(_struct(out, [x[k] for x in _leaves(jb)])),
                                       _flat(jk), rtol=1e-10, atol=1e-12,
                                       err_msg="batched JVP vs loop")
        cb = _struct(out, [_like(o, (2,)) for o in _leaves(out)])
        gb = pullback(cb)
        gb = gb if isinstance(gb, tuple) else (gb,)
        for k in range(2):
            gk = pullback(_struct(out, [c[k] for c in _leaves(cb)]))
            gk = gk if isinstance(gk, tuple) else (gk,)
            for x, y in zip(gb, gk):
                np.testing.assert_allclose(x[k], y, rtol=1e-10, atol=1e-12,
                                           err_msg="batched VJP vs loop")
    if order >= 2:
        def scalar(*xs):
            return sum(np.sum(c * o) for c, o in zip(_leaves(cts), _leaves(f(*xs))))

        nums = tuple(range(len(args)))
        grad = dualad.grad(scalar, argnums=nums)
        h2 = 1e-5
        fd2 = (_flat(grad(*[a + h2 * t for a, t in zip(args, ts)]))
               - _flat(grad(*[a - h2 * t for a, t in zip(args, ts)]))) / (2 * h2)
        fwd_rev = dualad.jvp(grad, args, ts)[1]
        np.testing.assert_allclose(_flat(fwd_rev), fd2, rtol=1e-4, atol=1e-5,
                                   err_msg="forward-over-reverse vs FD of gradient")
        rev_rev = dualad.grad(lambda *xs: sum(np.sum(g * t) for g, t in zip(grad(*xs), ts)),
                              argnums=nums)(*args)
        np.testing.assert_allclose(_flat(rev_rev), fd2, rtol=1e-4, atol=1e-5,
                                   err_msg="reverse-over-reverse vs FD of gradient")


def both_modes_grad(f, x):
    """∇ Σ f(x) by reverse mode and by forward vector mode."""
    x = np.asarray(x, dtype=float)
    g_rev = dualad.grad(lambda x: np.sum(f(x)))(x)
    _, g_fwd = dualad.jvp(lambda x: np.sum(f(x)), (x,), (np.eye(x.size).reshape((x.size,) +
                                                                            x.shape),))
    return np.asarray(g_rev), np.asarray(g_fwd).reshape(x.shape)
