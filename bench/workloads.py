"""Benchmark workloads: each builds a zero-argument callable per system.

Peers are imported lazily inside the builders, so a missing peer only skips
its column. JAX runs in float64 (``jax_enable_x64``), as dualad does. Every builder
makes its data from the same seed, so every peer of a row differentiates the same
function at the same point, and each callable returns its derivative: ``bench/run.py``
compares every peer's result with dualad's once (``dualad.jit``'s to rtol 1e-10).

``dualad.jit`` rows wrap the un-jitted call in ``dualad.jit``; they are registered
unconditionally and skipped by ``run.py`` while ``dualad`` has no ``jit``. Every value a
peer receives as an argument is an argument of dualad's jitted program too, never a
constant baked into its trace (issue 32: the HVP's vector was): each dualad.jit row's
callable is made by :func:`replay`, which keeps the jitted function and its arguments for
tests/test_bench_run.py to check. Peers' spellings: bench/_spellings.py.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

import dualad


@dataclass
class Workload:
    name: str
    what: str
    baseline: object = None          # quick -> callable (the plain NumPy function)
    impls: dict = field(default_factory=dict)
    extra: object = None             # (times, base) -> str
    notes: dict = field(default_factory=dict)   # peer -> a line printed under the row


ALL = []


def workload(name, what, baseline=None, extra=None):
    wl = Workload(name, what, baseline, {}, extra, {})
    ALL.append(wl)

    def register(peer):
        def deco(make):
            wl.impls[peer] = make
            return make
        return deco
    wl.register = register
    return wl


def _rng():
    return np.random.default_rng(0)


# --- logistic regression gradient ----------------------------------------------
def _logistic_data(quick):
    rng = _rng()
    n = 2000 if quick else 10000
    X = rng.standard_normal((n, 100))
    y = (rng.random(n) < 0.5).astype(float)
    w = rng.standard_normal(100) * 0.1
    return X, y, w


def _logistic(np_, X, y):
    if np_.__name__ == "torch":  # torch.logaddexp wants two tensors; softplus is the same
        import torch.nn.functional as F
        softplus = F.softplus
    else:
        def softplus(z):
            return np_.logaddexp(0.0, z)

    def loss(w):
        z = X @ w
        return np_.sum(softplus(z) - y * z) / X.shape[0]
    return loss


def _base_logistic(quick):
    X, y, w = _logistic_data(quick)
    f = _logistic(np, X, y)
    return lambda: f(w)


LOGREG = workload("logreg", "gradient of a logistic-regression loss, X 10000x100",
                  _base_logistic)


def jit(fn):
    """``dualad.jit(fn)``: looked up at build time, so a dualad without ``jit`` fails
    only the rows that use it (run.py does not build them then)."""
    return dualad.jit(fn)


def replay(program, *args):
    """The zero-argument callable of a ``dualad.jit`` row: ``program(*args)``, every array
    of the row an input of the program. ``program`` and ``args`` are kept as attributes."""
    def call():
        return program(*args)
    call.program, call.args = program, args
    return call


def gradient_peers(wl, data, build):
    """Register dualad, dualad.jit, autograd, jax (eager and jit) and torch for the gradient of
    ``build(np_module, *data_arrays)(params)``; ``data(quick)`` gives
    ``(arrays, params)``, params an array or a list of arrays."""
    def as_list(p):
        return p if isinstance(p, list) else [p]

    @wl.register("dualad")
    def _(quick):
        arrays, p = data(quick)
        g = dualad.grad(build(np, *arrays))
        return lambda: g(p)

    @wl.register("dualad.jit")
    def _(quick):
        arrays, p = data(quick)
        return replay(jit(dualad.grad(build(np, *arrays))), p)

    @wl.register("autograd")
    def _(quick):
        import autograd
        import autograd.numpy as anp
        arrays, p = data(quick)
        g = autograd.grad(build(anp, *arrays))
        return lambda: g(p)

    def jax_version(quick, jit):
        import jax
        import jax.numpy as jnp
        arrays, p = data(quick)
        g = jax.grad(build(jnp, *[jnp.asarray(a) for a in arrays]))
        g = jax.jit(g) if jit else g
        pj = [jnp.asarray(a) for a in p] if isinstance(p, list) else jnp.asarray(p)
        return lambda: jax.block_until_ready(g(pj))

    wl.register("jax")(lambda quick: jax_version(quick, False))
    wl.register("jax.jit")(lambda quick: jax_version(quick, True))

    @wl.register("torch")
    def _(quick):
        import torch
        arrays, p = data(quick)
        f = build(torch, *[torch.from_numpy(a) for a in arrays])

        def run():
            pt = [torch.from_numpy(a).requires_grad_(True) for a in as_list(p)]
            return torch.autograd.grad(f(pt if isinstance(p, list) else pt[0]), pt)
        return run


gradient_peers(LOGREG, lambda quick: (_logistic_data(quick)[:2], _logistic_data(quick)[2]),
               _logistic)


# --- MLP loss gradient ----------------------------------------------------------------
def _mlp_data(quick):
    rng = _rng()
    batch = 128 if quick else 512
    X = rng.standard_normal((batch, 100))
    Y = rng.standard_normal((batch, 10))
    params = [rng.standard_normal((100, 256)) / 10, rng.standard_normal(256) * 0.1,
              rng.standard_normal((256, 256)) / 16, rng.standard_normal(256) * 0.1,
              rng.standard_normal((256, 10)) / 16, rng.standard_normal(10) * 0.1]
    return X, Y, params


def _mlp(np_, X, Y):
    def loss(params):
        W1, b1, W2, b2, W3, b3 = params
        h = np_.tanh(X @ W1 + b1)
        h = np_.tanh(h @ W2 + b2)
        out = h @ W3 + b3
        return np_.sum((out - Y) ** 2) / X.shape[0]
    return loss


def _base_mlp(quick):
    X, Y, p = _mlp_data(quick)
    f = _mlp(np, X, Y)
    return lambda: f(p)


MLP = workload("mlp", "gradient of an MLP loss (2 hidden tanh layers of 256, batch 512)",
               _base_mlp)
gradient_peers(MLP, lambda quick: (_mlp_data(quick)[:2], _mlp_data(quick)[2]), _mlp)


# --- Rosenbrock over scalars ------------------------------------------------------------
def rosenbrock(x):
    total = 0.0
    for i in range(len(x) - 1):
        total = total + 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1.0 - x[i]) ** 2
    return total


_X100 = np.linspace(-1.0, 1.5, 100)
ROSEN = workload("rosenbrock", "gradient of a Python-loop Rosenbrock over scalars x[i], n = 100",
                 lambda quick: (lambda: rosenbrock(_X100)))
ROSEN.register("dualad")(lambda quick: (lambda g=dualad.grad(rosenbrock): g(_X100)))
ROSEN.register("dualad.jit")(lambda quick: replay(jit(dualad.grad(rosenbrock)), _X100))


@ROSEN.register("autograd")
def _(quick):
    import autograd
    g = autograd.grad(rosenbrock)
    return lambda: g(_X100)


def _jax_rosen(quick, jit):
    import jax
    import jax.numpy as jnp
    g = jax.grad(rosenbrock)
    g = jax.jit(g) if jit else g
    x = jnp.asarray(_X100)
    return lambda: g(x).block_until_ready()


ROSEN.register("jax")(lambda quick: _jax_rosen(quick, False))
ROSEN.register("jax.jit")(lambda quick: _jax_rosen(quick, True))


@ROSEN.register("torch")
def _(quick):
    import torch

    def run():
        x = torch.from_numpy(_X100).requires_grad_(True)
        (g,) = torch.autograd.grad(rosenbrock(x), x)
        return g
    return run


# --- tape overhead per scalar operation -------------------------------------------------
def _chain(x, n):
    for _ in range(n):
        x = x * 1.0000001 + 1e-9
    return x


def _chain_x(x, n):
    """A chain whose derivative depends on x at every step (d x_{k+1} / d x_k = 1 + 2e-7 x_k),
    so a tracing jit cannot fold the derivative into a constant at trace time, as it can
    for :func:`_chain`'s constant 1.0000001."""
    for _ in range(n):
        x = x * (1.0 + 1e-7 * x)
    return x


len_chain = [100_000]


def _chain_n(quick):
    len_chain[0] = 10_000 if quick else 100_000
    return len_chain[0]


def _per_op(seconds):
    return f"{seconds * 1e9:.1f} ns" if seconds < 1e-6 else f"{seconds * 1e6:.2f} us"


def scalar_chain(name, chain, ops, what):
    """A workload timing the gradient of ``chain(x, 10^5)`` at x = 1.0: every step records
    ``ops`` scalar operations and sweeps them back; the row's extra line divides by them."""
    def per_op(times, base):
        return (f"per operation, recorded + swept back ({ops} per step): " +
                ", ".join(f"{p} {_per_op(t / (ops * len_chain[0]))}" for p, t in times.items()))
    wl = workload(name, what, lambda quick: (lambda: chain(np.float64(1.0), _chain_n(quick))),
                  extra=per_op)

    def loss(quick):
        n = _chain_n(quick)
        return lambda x: chain(x, n)

    wl.register("dualad")(lambda quick: (lambda g=dualad.grad(loss(quick)): g(1.0)))
    wl.register("dualad.jit")(lambda quick: replay(jit(dualad.grad(loss(quick))), 1.0))

    @wl.register("autograd")
    def _(quick):
        import autograd
        g = autograd.grad(loss(quick))
        return lambda: g(1.0)

    @wl.register("torch")
    def _(quick):
        import torch
        f = loss(quick)

        def run():
            x = torch.tensor(1.0, dtype=torch.float64, requires_grad=True)
            (g,) = torch.autograd.grad(f(x), x)
            return g
        return run

    @wl.register("jax.jit")
    def _(quick):
        import jax
        from _spellings import jax_scan_chain
        g = jax.jit(jax.grad(jax_scan_chain(lambda x: chain(x, 1), _chain_n(quick))))
        return lambda: g(1.0).block_until_ready()
    wl.notes["jax.jit"] = ("jax.jit: jax.grad of the chain as jax.lax.scan of one step, a JAX "
                           "user's spelling (jax.jit of the Python loop compiles for seconds "
                           "at 10^4 steps; eager jax over it takes minutes a call: not run)")
    return wl


CHAIN = scalar_chain("scalar-chain", _chain, 2,
                     "gradient of a chain of 10^5 steps x = x * 1.0000001 + 1e-9 (constant "
                     "derivative): recorded + swept back")
CHAIN_X = scalar_chain("scalar-chain-x", _chain_x, 3,
                       "gradient of a chain of 10^5 steps x = x * (1 + 1e-7 x) (derivative "
                       "depends on x): recorded + swept back")


# --- Hessian-vector product, n = 10^5 -----------------------------------------------------
def _hvp_f(np_):
    def f(x):
        return np_.sum(np_.log(np_.cosh(x[1:] - x[:-1] ** 2))) + 0.25 * np_.sum(x ** 4)
    return f


def _hvp_data(quick):
    rng = _rng()
    n = 10_000 if quick else 100_000
    return rng.uniform(-1, 1, n), rng.standard_normal(n)


def _base_hvp(quick):
    x, v = _hvp_data(quick)
    g = dualad.grad(_hvp_f(np))
    return lambda: g(x)


HVP = workload("hvp", "Hessian-vector product, n = 10^5 (baseline: one dualad gradient)",
               _base_hvp)


@HVP.register("dualad")
def _(quick):
    x, v = _hvp_data(quick)
    f = _hvp_f(np)
    return lambda: dualad.hvp(f, x, v)


@HVP.register("dualad.jit")
def _(quick):
    x, v = _hvp_data(quick)
    f = _hvp_f(np)
    return replay(jit(lambda x, v: dualad.hvp(f, x, v)), x, v)   # v an input, as for jax.jit


@HVP.register("autograd")
def _(quick):
    import autograd
    x, v = _hvp_data(quick)
    h = autograd.hessian_vector_product(_hvp_f(autograd.numpy))
    return lambda: h(x, v)


def _jax_hvp(quick, jit):
    import jax
    import jax.numpy as jnp
    x, v = _hvp_data(quick)
    f = _hvp_f(jnp)

    def hv(x, v):
        return jax.jvp(jax.grad(f), (x,), (v,))[1]
    hv = jax.jit(hv) if jit else hv
    xj, vj = jnp.asarray(x), jnp.asarray(v)
    return lambda: hv(xj, vj).block_until_ready()


HVP.register("jax")(lambda quick: _jax_hvp(quick, False))
HVP.register("jax.jit")(lambda quick: _jax_hvp(quick, True))


@HVP.register("torch")
def _(quick):
    import torch
    from _spellings import torch_hvp
    x, v = _hvp_data(quick)
    return torch_hvp(HVP, _hvp_f(torch), torch.from_numpy(x), torch.from_numpy(v))
