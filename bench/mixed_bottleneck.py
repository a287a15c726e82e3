"""Mixed-mode Jacobians through a bottleneck (issue 36): forward, reverse, mixed, jax.jit.

    PYTHONPATH=. python bench/mixed_bottleneck.py [--quick] [--rounds R] [--elimination]
        [--only chain,chain-heavy,pde]

For ``f = g ∘ h`` with a narrow cut ``k`` the planner's default path (``plan(f, x)``) finds
the cut on f's jit program and evaluates ``J_g J_h`` (k reverse sweeps for ``J_h``, k
forward ones for ``J_g``) where pure forward mode needs ``n`` directions and pure reverse
``m`` (jacobians.bottleneck, docs/mixed.md). Workloads:

- ``thin``: ``tanh(B sin(A x))``, n = m = 2000, k = 10: the sides are one small matmul
  each, so the dense ``2000 x 10 x 2000`` product is most of any way's cost.
- ``wide``: ``tanh(W2 sin(B (A tanh(W1 x))))``, n = m = 2000 through k = 10, with
  ``W1, W2`` 2000 x 2000: a pure mode pushes 2000 directions through a 2000 x 2000 matmul.
- ``autoencoder``: a tanh MLP 784 -> 256 -> 16 -> 256 -> 784, the Jacobian of its output
  with respect to its input (k = 16).
- ``chain``: tanh layers 2000 -> 10 -> 500 -> 8 -> 2000 (several narrow layers: a chain of
  cuts, jacobians.chain).
- ``chain-heavy``: 2000 -> 10 -> 500 -> six 500 x 500 layers -> 8 -> 2000: the two cuts
  around a heavy middle.
- ``pde``: a 1-D diffusion residual ``r(p) = -(κ u')' - s`` at a fixed state ``u`` on
  2000 cells, whose diffusivity ``κ = exp(Ψ c)`` depends on the 2000 parameters ``p``
  only through an 8-coefficient closure ``c = tanh(Φ p)``; ``dr/dp``, 2000 x 2000, rank 8.

For the chain workloads two more ways are planned with ``mode="mixed"``: through the one
narrowest cut (``bottleneck.MAX_PIECES = 2`` while planning) and through every cut that
saves work (``chain.PIECE = 0``: no fixed cost per piece).

Per workload and way: directions, sweeps, the first call (for the planner's default path:
``plan`` plus its first call; for jax: tracing and compiling plus the first call) and the
median of interleaved rounds. jax runs with x64. BLAS and XLA are pinned to one thread and
the process to one core (bench/_pinning.py). Every result is checked against dualad's pure
reverse Jacobian (max abs difference printed).

``--elimination`` (the stretch goal): the multiply-adds of vertex elimination on each
workload's block graph (jacobians.elimination) in program order, reverse order, greedy
Markowitz order and the cut's order.
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _pinning import pin_environment, pin_runtime  # noqa: E402

_EARLY = pin_environment(1, sys.argv)

import time  # noqa: E402

import numpy as np  # noqa: E402

from _timing import fmt, interleaved, optional, table  # noqa: E402

import dualad  # noqa: E402

try:
    from dualad import jacobians  # noqa: E402
except ImportError:     # run from a source checkout: dualad.jacobians lives at <tree>/jacobians
    dualad.__path__.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from dualad import jacobians  # noqa: E402


def workloads(quick):
    """name -> (numpy f, jax f builder, x, cut): the functions and their point."""
    rng = np.random.default_rng(36)
    n, k = (500, 10) if quick else (2000, 10)
    A = rng.standard_normal((k, n)) / np.sqrt(n)
    B = rng.standard_normal((n, k))
    W1 = rng.standard_normal((n, n)) / np.sqrt(n)
    W2 = rng.standard_normal((n, n)) / np.sqrt(n)
    sizes = [784, 256, 16, 256, 784]
    Ws = [rng.standard_normal((b, a)) / np.sqrt(a) for a, b in zip(sizes, sizes[1:])]
    bs = [0.1 * rng.standard_normal(b) for b in sizes[1:]]

    def thin(x, np=np):
        return np.tanh(B @ np.sin(A @ x))

    def wide(x, np=np):
        return np.tanh(W2 @ np.sin(B @ (A @ np.tanh(W1 @ x))))

    def autoencoder(x, np=np):
        for W, b in zip(Ws, bs):
            x = np.tanh(W @ x + b)
        return x
    out = {"thin": (thin, rng.standard_normal(n), k),
           "wide": (wide, rng.standard_normal(n), k),
           "autoencoder": (autoencoder, rng.standard_normal(784), 16)}
    out.update(chain_workloads(rng, n, quick))
    out["pde"] = pde_workload(rng, n)
    return out


def chain_workloads(rng, n, quick):
    """``chain`` (n -> 10 -> 500 -> 8 -> n) and ``chain-heavy`` (six 500 x 500 layers
    between the cuts)."""
    w = 100 if quick else 500

    def mat(a, b):
        return rng.standard_normal((a, b)) / np.sqrt(b)
    V1, V2, V3, V4 = mat(10, n), mat(w, 10), mat(8, w), mat(n, 8)
    middle = [mat(w, w) for _ in range(6)]

    def chain(x, np=np):
        return np.tanh(V4 @ np.tanh(V3 @ np.tanh(V2 @ np.tanh(V1 @ x))))

    def chain_heavy(x, np=np):
        y = np.tanh(V2 @ np.tanh(V1 @ x))
        for M in middle:
            y = np.tanh(M @ y)
        return np.tanh(V4 @ np.tanh(V3 @ y))
    return {"chain": (chain, rng.standard_normal(n), 8),
            "chain-heavy": (chain_heavy, rng.standard_normal(n), 8)}


def pde_workload(rng, n, k=8):
    """The diffusion residual with a k-coefficient closure of its n parameters."""
    h = 1.0 / (n + 1)
    grid = np.linspace(0.0, 1.0, n + 2)
    u = np.sin(np.pi * grid) + 0.1 * np.sin(5 * np.pi * grid)     # the state, boundary 0
    Phi = rng.standard_normal((k, n)) / np.sqrt(n)                  # parameters -> closure
    modes = np.cos(np.pi * np.outer(0.5 * (grid[1:] + grid[:-1]), np.arange(k)))
    Psi = 0.3 * modes                                               # closure -> log κ
    s = np.ones(n)

    def pde(p, np=np):
        c = np.tanh(Phi @ p)                 # the closure: k coefficients
        kappa = np.exp(Psi @ c)              # diffusivity on the n + 1 faces
        flux = kappa * (u[1:] - u[:-1]) / h
        return -(flux[1:] - flux[:-1]) / h - s
    return pde, rng.standard_normal(n), k


def first_and_steady(make):
    """(seconds of make() and its first call, the callable for the steady state)."""
    t0 = time.perf_counter()
    fn = make()
    fn()
    return time.perf_counter() - t0, fn


def dualad_ways(f, x, J_ref, chains=False):
    """name -> (first call s, callable, directions, sweeps, max error, plan); with
    ``chains`` also mode="mixed" through one cut and through every cut that saves work."""
    from dualad.jacobians import bottleneck, chain
    out = {}
    ways = [("auto", {}), ("forward", {}), ("reverse", {})]   # the default first
    if chains:
        ways += [("mixed", {(bottleneck, "MAX_PIECES"): 2}), ("mixed", {(chain, "PIECE"): 0}),
                 ("mixed", {(bottleneck, "find_chain"): every_narrow_cut})]
    for mode, patch in ways:
        plans = []

        def make(mode=mode, plans=plans, patch=patch):
            saved = {key: getattr(*key) for key in patch}
            try:
                for (module, attr), value in patch.items():
                    setattr(module, attr, value)
                plans.append(jacobians.plan(f, x, mode=mode))
            finally:
                for (module, attr), value in saved.items():
                    setattr(module, attr, value)
            return lambda: plans[-1](x)
        first, fn = first_and_steady(make)
        p = plans[-1]
        J = fn()
        J = J.toarray() if hasattr(J, "toarray") else np.asarray(J)
        name = f"dualad {mode}" if mode != "auto" else f"dualad plan default ({p.mode})"
        if mode == "mixed":
            name = f"dualad mixed, {p.through.summary}"
            name += (" (one cut)" if (bottleneck, "MAX_PIECES") in patch else
                     " (every cut that saves work)" if (chain, "PIECE") in patch else
                     " (forced: every narrow layer)")
        out[name] = (first, fn, p.directions, p.n_chunks, np.abs(J - J_ref).max(), p)
    return out


def every_narrow_cut(program, first, max_pieces=None):
    """The pieces between every product output of at most 16 values through which every
    path passes (a narrow layer), whatever the model says: to measure a chain the model
    does not take."""
    from dualad.jacobians.chain import Piece, separators
    made = {e.out: e.prim.name for e in program.body}
    sizes = {v: int(np.prod(program.avals[v][1])) for v in made}
    cuts = [v for v in separators(program, 17) if made[v] == "matmul" and sizes[v] <= 16]
    nodes = [list(program.invars)] + [[v] for v in cuts] + [list(program.outvars)]
    return [Piece(program, a, b, program.name) for a, b in zip(nodes, nodes[1:])]


def jax_ways(f, x, J_ref):
    """jax.jit(jax.jacfwd(f)) and jax.jit(jax.jacrev(f)) with x64, when jax is installed."""
    jax = optional("jax")
    if jax is None:
        return {}
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    xj = jnp.asarray(x)
    out = {}
    for name, transform in (("jax.jit(jacfwd)", jax.jacfwd), ("jax.jit(jacrev)", jax.jacrev)):
        def make(transform=transform):
            jf = jax.jit(transform(lambda y: f(y, np=jnp)))
            return lambda: jf(xj).block_until_ready()
        first, fn = first_and_steady(make)
        err = np.abs(np.asarray(fn()) - J_ref).max()
        d = x.size if "fwd" in name else J_ref.shape[0]
        out[name] = (first, fn, d, 1, err, None)
    return out


def run(name, f, x, k, rounds):
    # the reference through a wrapper: f's own census is not cached for the plans' first call
    J_ref = np.asarray(jacobians.jacobian(lambda y: f(y), x, mode="reverse"))
    ways = dualad_ways(f, x, J_ref, chains=name.startswith("chain"))
    ways.update(jax_ways(f, x, J_ref))
    timings = interleaved({w: v[1] for w, v in ways.items()}, rounds=rounds, min_time=0.05)
    rows = [(w, d, s, fmt(v[0]), fmt(timings[w].median), f"{timings[w].spread:.2f}",
             f"{err:.1e}") for w, v in ways.items() for (_, _, d, s, err, _) in [v]]
    m, n = J_ref.shape
    print(f"\n== {name}: n = {n}, m = {m}, cut k = {k} ==")
    print(table(rows, ["way", "directions", "sweeps", "first call", "median",
                       "max/min", "max |J - J_rev|"]))
    default = [v[5] for w, v in ways.items() if w.startswith("dualad plan default")][0]
    print("\n".join(line for line in default.explain().splitlines()
                    if line.startswith(("Mixed mode", "  Estimated", "  Measured", "Chosen",
                                        "Why", "Planning", "  Cut", "  J_", "  Product"))))


def elimination(name, f, x):
    """Stretch: multiply-adds (and seconds) of vertex elimination on f's block graph in
    program order (forward), reverse order, greedy Markowitz order and the cut's order."""
    from dualad.jacobians.bottleneck import find_bottleneck
    from dualad.jacobians.elimination import eliminate
    program = dualad.jit(f).program(x)
    J_ref = np.asarray(jacobians.jacobian(f, x, mode="reverse"))
    cut, _ = find_bottleneck(program, x.size, J_ref.shape[0])
    rows = []
    for order in ("forward", "reverse", "markowitz", "cut"):
        t0 = time.perf_counter()
        J, flops, _ = eliminate(program, [x], order, cut=cut)
        rows.append((order, f"{flops:.3g}", fmt(time.perf_counter() - t0),
                     f"{np.abs(J - J_ref).max():.1e}"))
    print(f"\n-- {name}: vertex elimination on the block graph (the seconds include "
          f"building every local Jacobian densely) --")
    print(table(rows, ["order", "multiply-adds", "seconds", "max |J - J_rev|"]))


def main():
    quick = "--quick" in sys.argv
    rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 5
    print("\n".join(pin_runtime(1, _EARLY)))
    print(f"dualad.jacobians from {os.path.dirname(jacobians.__file__)}")
    only = sys.argv[sys.argv.index("--only") + 1].split(",") if "--only" in sys.argv else None
    for name, (f, x, k) in workloads(quick).items():
        if only is None or name in only:
            run(name, f, x, k, rounds)
    if "--elimination" in sys.argv:
        for name, (f, x, k) in workloads(quick).items():
            elimination(name, f, x)


if __name__ == "__main__":
    main()
