"""Per-example gradients: dualad.vmap(grad) against a Python loop and the peers, one run.

    python bench/per_example.py [--threads 1] [--rounds 7] [--min-time 0.1] [--markdown]

Two losses, batch B = 256, each example's gradient with respect to the parameters:

- ``logreg``: logistic regression, d = 100 features, ℓ(w; x, y) = log(1 + exp(-y·xᵀw));
- ``mlp``: a 2-layer tanh network 100-64-1, ℓ(θ; x, y) = ½ (w₂ᵀ tanh(W₁x + b₁) + b₂ - y)²,
  θ = (W₁, b₁, w₂, b₂) (6,529 parameters, a tuple pytree).

Rows (each ``fn(params, X, Y)`` returning the B per-example gradients):

- ``dualad vmap``: ``dualad.vmap(dualad.grad(loss), in_axes=(None, 0, 0))``;
- ``dualad loop``: a Python loop of ``dualad.grad(loss)`` over the examples, stacked (the
  reference every other row is checked against, and the denominator of the ratios);
- ``dualad jacrev``: ``dualad.jacobians.jacrev`` of the vector of the B losses (written
  batched by hand), the way to get per-example gradients before ``vmap`` (logreg only:
  the MLP's batched losses with respect to a tuple would need the planner on pytrees);
- ``autograd loop``: HIPS autograd has no vmap: a loop of ``autograd.grad``;
- ``jax vmap``, ``jax vmap jit``: ``jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))``,
  eager and under ``jax.jit`` (float64: ``jax_enable_x64``; ``block_until_ready``);
- ``torch.func``: ``torch.func.vmap(torch.func.grad(loss), in_dims=(None, 0, 0))``,
  float64 tensors, eager.

Method: each row is warmed up (a jitted row compiles there) and calibrated to groups of
calls lasting at least ``--min-time``; then ``--rounds`` rounds each time one group of
every row, the rows' order rotated from round to round (interleaved: drift on a shared
VM falls on every row alike). Reported: the median over rounds, the spread (max/min over
rounds) and the ratio to the loop. BLAS, OpenMP, XLA and torch intra-op threads are all
pinned to ``--threads`` (1 by default), set before NumPy, JAX or torch is imported. Every
row's result is compared with the loop's: the largest absolute difference over all
gradients is printed. No timing is asserted anywhere.

The peers live in one venv built for this benchmark (dualad's own venv has no torch)::

    python3.11 -m venv /work/venvs/bench
    /work/venvs/bench/bin/pip install /opt/wheels/torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl
    /work/venvs/bench/bin/pip install jax==0.10.2 jaxlib==0.10.2 numpy scipy sympy autograd
    /work/venvs/bench/bin/pip install -e . --no-deps      # this checkout
    /work/venvs/bench/bin/python bench/per_example.py

(torch is the CPU wheel; no CUDA packages are pulled. Measured with torch 2.13.0+cpu,
jax/jaxlib 0.10.2, autograd 1.9.1, NumPy 2.4.6, SciPy 1.17.1.) A peer that is not
installed is skipped and named.
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time


def _args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=1, help="BLAS/OpenMP/XLA/torch threads")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--min-time", type=float, default=0.1, help="seconds per timed group")
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--only", nargs="+", choices=["logreg", "mlp"])
    ap.add_argument("--markdown", action="store_true", help="also print a Markdown table")
    return ap.parse_args(argv)


def pin_threads(n):
    """Every peer's thread pools to ``n``: set before NumPy/JAX/torch load their libraries."""
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS"):
        os.environ[var] = str(n)
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                               f" --xla_cpu_multi_thread_eigen={'true' if n > 1 else 'false'}"
                               f" intra_op_parallelism_threads={n}").strip()


if __name__ == "__main__":
    ARGS = _args()
    pin_threads(ARGS.threads)

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import fmt, group_times, optional  # noqa: E402

D, H = 100, 64


# --- the problems -------------------------------------------------------------------------

def data(batch, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((batch, D))
    labels = np.where(rng.standard_normal(batch) > 0, 1.0, -1.0)
    targets = rng.standard_normal(batch)
    w = rng.standard_normal(D) / np.sqrt(D)
    theta = (rng.standard_normal((H, D)) / np.sqrt(D), rng.standard_normal(H) * 0.1,
             rng.standard_normal(H) / np.sqrt(H), np.float64(0.1))
    return {"logreg": (w, X, labels), "mlp": (theta, X, targets)}


def np_losses(xp):
    """The two per-example losses written with the array namespace ``xp`` (NumPy for
    dualad and autograd, jax.numpy, or torch)."""
    def logreg(w, x, y):
        return xp.logaddexp(0.0 * y, -y * (x @ w))    # log(1 + exp(-y xᵀw))

    def mlp(theta, x, y):
        W1, b1, w2, b2 = theta
        return 0.5 * (w2 @ xp.tanh(W1 @ x + b1) + b2 - y) ** 2
    return {"logreg": logreg, "mlp": mlp}


def _as_list(g):
    """Per-example gradients as a list of NumPy arrays (one per parameter)."""
    if isinstance(g, (tuple, list)):
        return [np.asarray(a) for a in g]
    return [np.asarray(g)]


def _stack_loop(grads):
    return [np.stack(parts) for parts in zip(*(_as_list(g) for g in grads))]


# --- the rows -----------------------------------------------------------------------------

def dualad_rows(problem, args):
    import dualad
    loss = np_losses(np)[problem]
    grad = dualad.grad(loss)
    per_example = dualad.vmap(grad, in_axes=(None, 0, 0))
    p, X, Y = args
    rows = {"dualad vmap": lambda: _as_list(per_example(p, X, Y)),
            "dualad loop": lambda: _stack_loop(grad(p, X[i], Y[i]) for i in range(len(X)))}
    if problem == "logreg":
        from dualad import jacobians

        def losses(w):     # the B losses at once, written batched
            return np.logaddexp(0.0 * Y, -Y * (X @ w))
        rows["dualad jacrev"] = lambda: [jacobians.jacrev(losses, p)]
    return rows


def autograd_rows(problem, args):
    ag = optional("autograd")
    if ag is None:
        return {}
    import autograd.numpy as anp
    grad = ag.grad(np_losses(anp)[problem])
    p, X, Y = args
    return {"autograd loop": lambda: _stack_loop(grad(p, X[i], Y[i]) for i in range(len(X)))}


def jax_rows(problem, args):
    jax = optional("jax")
    if jax is None:
        return {}
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    per_example = jax.vmap(jax.grad(np_losses(jnp)[problem]), in_axes=(None, 0, 0))
    jitted = jax.jit(per_example)
    p, X, Y = jax.tree_util.tree_map(jnp.asarray, args)

    def run(fn):
        return lambda: _as_list(jax.block_until_ready(fn(p, X, Y)))
    return {"jax vmap": run(per_example), "jax vmap jit": run(jitted)}


def torch_rows(problem, args, threads):
    torch = optional("torch")
    if torch is None:
        return {}
    torch.set_num_threads(threads)
    from torch.func import grad, vmap
    losses = np_losses(torch)

    def logreg(w, x, y):     # torch.logaddexp takes tensors only
        return torch.logaddexp(torch.zeros((), dtype=x.dtype), -y * (x @ w))
    loss = logreg if problem == "logreg" else losses["mlp"]
    per_example = vmap(grad(loss), in_dims=(None, 0, 0))
    p, X, Y = args
    to = lambda a: torch.as_tensor(np.asarray(a, dtype=np.float64))  # noqa: E731
    p = tuple(to(a) for a in p) if isinstance(p, tuple) else to(p)
    X, Y = to(X), to(Y)

    def run():
        with torch.no_grad():
            g = per_example(p, X, Y)
        return [a.numpy() for a in (g if isinstance(g, tuple) else (g,))]
    return {"torch.func": run}


# --- timing -------------------------------------------------------------------------------

def calibrate(fn, min_time):
    """Calls per group so that one group lasts at least ``min_time`` (after a warm-up)."""
    fn()
    number = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        if time.perf_counter() - t0 >= min_time or number >= 1 << 16:
            return number
        number *= 2


def interleaved(rows, rounds, min_time):
    """{row: [seconds per call, one per round]}: every round times one group of each row,
    the order rotated from round to round."""
    names = list(rows)
    numbers = {n: calibrate(rows[n], min_time) for n in names}
    samples = {n: [] for n in names}
    for r in range(rounds):
        k = r % len(names)
        for n in names[k:] + names[:k]:
            samples[n] += group_times(rows[n], numbers[n], 1)
    return samples


def max_diff(got, ref):
    return max(float(np.max(np.abs(np.asarray(a) - b), initial=0.0)) for a, b in zip(got, ref))


def run(args):
    import dualad
    problems = args.only or ["logreg", "mlp"]
    all_data = data(args.batch)
    report = []
    for problem in problems:
        pargs = all_data[problem]
        rows = {}
        rows.update(dualad_rows(problem, pargs))
        rows.update(autograd_rows(problem, pargs))
        rows.update(jax_rows(problem, pargs))
        rows.update(torch_rows(problem, pargs, args.threads))
        ref = rows["dualad loop"]()
        diffs = {name: max_diff(fn(), ref) for name, fn in rows.items()}
        samples = interleaved(rows, args.rounds, args.min_time)
        med = {n: statistics.median(s) for n, s in samples.items()}
        loop = med["dualad loop"]
        print(f"\n{problem}: batch {args.batch}, per-example gradients "
              f"({sum(int(np.prod(r.shape[1:])) for r in ref)} parameters each)")
        print(f"  {'row':<14} {'median':>10} {'spread':>7} {'/ loop':>8} {'max |Δ| vs loop':>16}")
        for n in rows:
            spread = max(samples[n]) / min(samples[n])
            print(f"  {n:<14} {fmt(med[n]):>10} {spread:>7.2f} {med[n] / loop:>8.3f} "
                  f"{diffs[n]:>16.2e}")
            report.append((problem, n, med[n], spread, med[n] / loop, diffs[n]))
    missing = [name for name, mod in (("autograd", "autograd"), ("jax", "jax"),
                                      ("torch", "torch")) if optional(mod) is None]
    if missing:
        print(f"\nnot installed (skipped): {', '.join(missing)}")
    print(f"\n{machine(args.threads)}; dualad {dualad.__version__}")
    if args.markdown:
        print("\n| problem | row | median | spread | / loop | max abs diff vs loop |")
        print("|---|---|---|---|---|---|")
        for problem, n, t, spread, ratio, diff in report:
            print(f"| {problem} | {n} | {fmt(t)} | {spread:.2f} | {ratio:.3f} | {diff:.1e} |")
    return report


def machine(threads):
    import multiprocessing
    versions = [f"NumPy {np.__version__}"]
    from importlib import metadata
    for name in ("jax", "torch", "autograd"):
        try:
            versions.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            pass
    return (f"{platform.machine()}, {multiprocessing.cpu_count()} cores, Python "
            f"{platform.python_version()}, {', '.join(versions)}, {threads} thread(s) "
            f"per peer")


if __name__ == "__main__":
    run(ARGS)
