"""Mixed-mode Jacobians through a bottleneck (issue 36): forward, reverse, mixed, jax.jit.

    PYTHONPATH=. python bench/mixed_bottleneck.py [--quick] [--rounds R] [--elimination]

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
    return {"thin": (thin, rng.standard_normal(n), k),
            "wide": (wide, rng.standard_normal(n), k),
            "autoencoder": (autoencoder, rng.standard_normal(784), 16)}


def first_and_steady(make):
    """(seconds of make() and its first call, the callable for the steady state)."""
    t0 = time.perf_counter()
    fn = make()
    fn()
    return time.perf_counter() - t0, fn


def dualad_ways(f, x, J_ref):
    """name -> (first call s, callable, directions, sweeps, max error, plan)."""
    out = {}
    for mode in ("auto", "forward", "reverse"):     # the default first: nothing cached
        plans = []

        def make(mode=mode, plans=plans):
            plans.append(jacobians.plan(f, x, mode=mode))
            return lambda: plans[-1](x)
        first, fn = first_and_steady(make)
        p = plans[-1]
        J = fn()
        J = J.toarray() if hasattr(J, "toarray") else np.asarray(J)
        name = f"dualad {mode}" if mode != "auto" else f"dualad plan default ({p.mode})"
        out[name] = (first, fn, p.directions, p.n_chunks, np.abs(J - J_ref).max(), p)
    return out


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
    ways = dualad_ways(f, x, J_ref)
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
                                        "Why", "Planning"))))


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
    for name, (f, x, k) in workloads(quick).items():
        run(name, f, x, k, rounds)
    if "--elimination" in sys.argv:
        for name, (f, x, k) in workloads(quick).items():
            elimination(name, f, x)


if __name__ == "__main__":
    main()
