"""Jacobian and Hessian workloads (issue 5): dense Jacobian, Hessian, sparse Jacobian,
and the planner's choice on tall, wide and a grid of shapes.

Registered into :data:`workloads.ALL` on import, like the gradient workloads.
"""
from __future__ import annotations

import numpy as np

from dualad import jacobians
from workloads import workload, jit, replay, _rng


# --- dense Jacobian, n = m = 200 ------------------------------------------------------------
def _jac_data(quick):
    rng = _rng()
    n = 100 if quick else 200
    return rng.standard_normal((n, n)) / np.sqrt(n), rng.standard_normal(n)


def _jac_f(np_, W):
    return lambda x: np_.tanh(W @ x) * np_.sin(x)


def _base_jac(quick):
    W, x = _jac_data(quick)
    f = _jac_f(np, W)
    return lambda: f(x)


JAC = workload("jacobian", "dense Jacobian of tanh(W @ x) * sin(x), n = m = 200", _base_jac)


@JAC.register("dualad")
def _(quick):
    W, x = _jac_data(quick)
    f = _jac_f(np, W)
    return lambda: jacobians.jacobian(f, x)


@JAC.register("dualad.jit")
def _(quick):
    W, x = _jac_data(quick)
    f = _jac_f(np, W)
    return replay(jit(lambda x: jacobians.jacobian(f, x)), x)


@JAC.register("autograd")
def _(quick):
    import autograd
    import autograd.numpy as anp
    W, x = _jac_data(quick)
    j = autograd.jacobian(_jac_f(anp, W))
    return lambda: j(x)


def _jax_jac(quick, jit):
    import jax
    import jax.numpy as jnp
    W, x = _jac_data(quick)
    j = jax.jacfwd(_jac_f(jnp, jnp.asarray(W)))
    j = jax.jit(j) if jit else j
    xj = jnp.asarray(x)
    return lambda: j(xj).block_until_ready()


JAC.register("jax")(lambda quick: _jax_jac(quick, False))
JAC.register("jax.jit")(lambda quick: _jax_jac(quick, True))


@JAC.register("torch")
def _(quick):
    import torch
    from _spellings import torch_jacobian
    W, x = _jac_data(quick)
    return torch_jacobian(JAC, _jac_f(torch, torch.from_numpy(W)), torch.from_numpy(x),
                          len(x), W.shape[0])


# --- dense Hessian, n = 300 --------------------------------------------------------------------
def _hess_data(quick):
    rng = _rng()
    n = 100 if quick else 300
    return rng.standard_normal((n, n)) / np.sqrt(n), rng.standard_normal(n)


def _hess_f(np_, A):
    return lambda x: np_.sum(np_.log(np_.cosh(A @ x))) + 0.5 * np_.sum(x ** 4)


def _base_hess(quick):
    A, x = _hess_data(quick)
    f = _hess_f(np, A)
    return lambda: f(x)


HESS = workload("hessian", "dense Hessian of sum(log(cosh(A @ x))) + sum(x**4)/2, n = 300",
                _base_hess)


@HESS.register("dualad")
def _(quick):
    A, x = _hess_data(quick)
    f = _hess_f(np, A)
    return lambda: jacobians.hessian(f, x)


@HESS.register("dualad.jit")
def _(quick):
    A, x = _hess_data(quick)
    f = _hess_f(np, A)
    return replay(jit(lambda x: jacobians.hessian(f, x)), x)


@HESS.register("autograd")
def _(quick):
    import autograd
    import autograd.numpy as anp
    A, x = _hess_data(quick)
    h = autograd.hessian(_hess_f(anp, A))
    return lambda: h(x)


def _jax_hess(quick, jit):
    import jax
    import jax.numpy as jnp
    A, x = _hess_data(quick)
    h = jax.hessian(_hess_f(jnp, jnp.asarray(A)))
    h = jax.jit(h) if jit else h
    xj = jnp.asarray(x)
    return lambda: h(xj).block_until_ready()


HESS.register("jax")(lambda quick: _jax_hess(quick, False))
HESS.register("jax.jit")(lambda quick: _jax_hess(quick, True))


@HESS.register("torch")
def _(quick):
    import torch
    from _spellings import torch_hessian
    A, x = _hess_data(quick)
    return torch_hessian(HESS, _hess_f(torch, torch.from_numpy(A)), torch.from_numpy(x))


# --- sparse Jacobian of a Bratu residual, n = 20000 ---------------------------------------------
def bratu(np_, n, lam=1.0):
    """The 1-D Bratu residual (u'' + λ eᵘ on a uniform grid, zero boundary values)."""
    h2 = 1.0 / (n + 1) ** 2

    def residual(u):
        zero = np_.zeros(1)
        up = np_.concatenate([u[1:], zero])
        um = np_.concatenate([zero, u[:-1]])
        return (um - 2.0 * u + up) / h2 + lam * np_.exp(u)
    return residual


def _bratu_data(quick):
    n = 2000 if quick else 20000
    return n, np.linspace(0.0, 1.0, n) * 0.1


def _base_bratu(quick):
    n, u = _bratu_data(quick)
    f = bratu(np, n)
    return lambda: f(u)


SPARSE = workload("sparse-jacobian",
                  "sparse Jacobian of a Bratu residual, n = 20000, detection and coloring "
                  "included (a new function object per call: nothing cached)", _base_bratu)


@SPARSE.register("dualad")
def _(quick):
    n, u = _bratu_data(quick)

    def run():
        f = bratu(np, n)   # a fresh function: sparsity detected and colored every call
        return jacobians.sparse_jacobian(f, u)
    return run


@SPARSE.register("jax.jit")
def _(quick):
    """JAX has no sparse Jacobian of its own: a JAX user who knows the pattern is
    tridiagonal writes three JVPs (column j seeded by color j mod 3) under jax.jit and
    scatters the compressed columns into a CSR matrix. The pattern and coloring are given,
    not detected (as for CasADi)."""
    import jax
    import jax.numpy as jnp
    import scipy.sparse as sp
    n, u = _bratu_data(quick)
    f = bratu(jnp, n)
    seeds = jnp.asarray(np.arange(n)[None, :] % 3 == np.arange(3)[:, None], dtype=float)
    compressed = jax.jit(lambda u: jax.vmap(lambda s: jax.jvp(f, (u,), (s,))[1])(seeds))
    pattern = sp.diags([np.ones(n - 1), np.ones(n), np.ones(n - 1)], [-1, 0, 1], format="csr")
    rows = np.repeat(np.arange(n), np.diff(pattern.indptr))
    color, indices, indptr = pattern.indices % 3, pattern.indices, pattern.indptr
    uj = jnp.asarray(u)

    def run():
        c = np.asarray(compressed(uj))
        return sp.csr_matrix((c[color, rows], indices, indptr), shape=(n, n))
    return run


SPARSE.notes["jax.jit"] = ("jax.jit: three JVPs seeded by the tridiagonal pattern's coloring "
                           "(j mod 3), given, not detected; scattered into a CSR matrix")


# --- tall (n=10, m=2000) and wide (n=2000, m=10) Jacobians, against every peer --------------
def _shape_data(n, m):
    rng = _rng()
    return rng.standard_normal((m, n)) / np.sqrt(n), rng.standard_normal(n)


def _shape_fn(np_, B):
    return lambda x: np_.tanh(B @ np_.sin(x)) * 2.0 + np_.cos(B @ x)


def shaped_jacobian(name, n, m, jax_mode):
    """A Jacobian workload of ``_shape_fn`` for an n -> m map; JAX gets its better mode
    (``jacfwd`` when n < m, ``jacrev`` otherwise), torch the fastest of its spellings
    (bench/_spellings.py), dualad chooses itself."""
    def base(quick):
        B, x = _shape_data(n, m)
        f = _shape_fn(np, B)
        return lambda: f(x)
    wl = workload(name, f"dense Jacobian of tanh(B @ sin(x)) * 2 + cos(B @ x), n = {n}, "
                        f"m = {m} (JAX: jax.{jax_mode}; dualad: mode='auto')", base)

    @wl.register("dualad")
    def _(quick):
        B, x = _shape_data(n, m)
        f = _shape_fn(np, B)
        return lambda: jacobians.jacobian(f, x)

    @wl.register("dualad.jit")
    def _(quick):
        B, x = _shape_data(n, m)
        f = _shape_fn(np, B)
        return replay(jit(lambda x: jacobians.jacobian(f, x)), x)

    @wl.register("autograd")
    def _(quick):
        import autograd
        import autograd.numpy as anp
        B, x = _shape_data(n, m)
        j = autograd.jacobian(_shape_fn(anp, B))
        return lambda: j(x)

    def jax_version(quick, jit):
        import jax
        import jax.numpy as jnp
        B, x = _shape_data(n, m)
        j = getattr(jax, jax_mode)(_shape_fn(jnp, jnp.asarray(B)))
        j = jax.jit(j) if jit else j
        xj = jnp.asarray(x)
        return lambda: j(xj).block_until_ready()

    wl.register("jax")(lambda quick: jax_version(quick, False))
    wl.register("jax.jit")(lambda quick: jax_version(quick, True))

    @wl.register("torch")
    def _(quick):
        import torch
        from _spellings import torch_jacobian
        B, x = _shape_data(n, m)
        return torch_jacobian(wl, _shape_fn(torch, torch.from_numpy(B)), torch.from_numpy(x),
                              n, m)
    return wl


shaped_jacobian("jacobian-tall", 10, 2000, "jacfwd")
shaped_jacobian("jacobian-wide", 2000, 10, "jacrev")


# --- the planner on tall, wide and a grid of shapes ---------------------------------------------
def _shape_f(n, m, seed=0):
    rng = np.random.default_rng(seed)
    B = rng.standard_normal((m, n)) / np.sqrt(n)
    return (lambda x: np.tanh(B @ np.sin(x)) * 2.0 + np.cos(B @ x)), rng.standard_normal(n)


def _cpu_bounded(timing):
    """Median over the rounds of min(wall, process CPU) per call: a round that waited for
    the processor (other jobs on a loaded 2-core VM) is not charged the wait, as the
    planner's own cost.Stopwatch reads time."""
    import statistics
    return statistics.median(min(w, w * c) if c == c else w
                             for w, c in zip(timing.samples, timing.cpu))


def auto_vs_fixed(n, m, quick=False):
    """Times (auto, forward, reverse) of the Jacobian of an n -> m map, each a plan made
    once beforehand (``plan(f, x)``, ``plan(f, x, mode="forward")``, ``mode="reverse"``:
    a user's repeated calls amortize planning, and the three then differ only in the
    sweeps they run), timed interleaved (bench/_timing.interleaved: rounds in rotated
    order, so drift falls on all three; per call the median over the rounds of
    min(wall, CPU)). Returns the chosen mode, the three times and the seconds
    ``plan(f, x)`` took on a fresh function (median of 5, min(wall, CPU) each: the
    planner's own first-call cost)."""
    import statistics
    from _timing import interleaved
    from dualad.jacobians.cost import Stopwatch
    f, x = _shape_f(n, m)
    p = jacobians.plan(f, x, sparse=False)
    pf = jacobians.plan(f, x, mode="forward", sparse=False)
    pr = jacobians.plan(f, x, mode="reverse", sparse=False)
    fns = {"auto": lambda: p(x), "forward": lambda: pf(x), "reverse": lambda: pr(x)}
    for fn in fns.values():
        fn()   # warm up
    t = interleaved(fns, rounds=5 if quick else 15, min_time=0.05 if quick else 0.1)
    planning = []
    for _ in range(5):
        g = _shape_f(n, m)[0]        # a fresh function object: nothing cached
        watch = Stopwatch()
        jacobians.plan(g, x, sparse=False)
        planning.append(watch.seconds())
    return (p.mode, _cpu_bounded(t["auto"]), _cpu_bounded(t["forward"]),
            _cpu_bounded(t["reverse"]), statistics.median(planning))


TALL_WIDE = [(10, 2000), (2000, 10)]
GRID = [(n, m) for n in (10, 100, 1000) for m in (10, 100, 1000)]


def planner_report(quick):
    """Lines of the planner table: auto against the faster fixed mode (all three prepared
    plans, interleaved), and what planning cost on a first call."""
    from _timing import fmt
    shapes = TALL_WIDE + ([(10, 100), (100, 10), (100, 100)] if quick else GRID)
    lines = ["n -> m        chosen    auto        forward     reverse     auto / best fixed"
             "  plan(f, x)"]
    worst = 0.0
    for n, m in shapes:
        mode, ta, tf, tr, tp = auto_vs_fixed(n, m, quick)
        ratio = ta / min(tf, tr)
        worst = max(worst, ratio)
        lines.append(f"{n:>5} -> {m:<5}  {mode:<8}  {fmt(ta):>10}  {fmt(tf):>10}  {fmt(tr):>10}"
                     f"  {ratio:.2f}x              {fmt(tp):>10}")
    lines.append(f"worst auto / best fixed: {worst:.2f}x")
    return lines
