"""Where the un-jitted HVP (n = 10^5) and tall Jacobian (n = 10, m = 2000) spend their time.

    python bench/hvp_profile.py                 # interleaved timings, dualad and its peers
    python bench/hvp_profile.py --ops           # NumPy calls per HVP, by function
    python bench/hvp_profile.py --only hvp      # one workload

Peers (torch, jax) are timed when importable (the bench virtualenv has them); every peer is
pinned to one thread before it is imported (OMP/OPENBLAS/MKL_NUM_THREADS=1,
torch.set_num_threads(1)). Calls are interleaved round by round, so a change in the VM's
speed hits every implementation alike; each row prints the median and the minimum.
Minor page faults per call (``resource.getrusage``) show the fresh-allocation cost; the
CPU time (``time.process_time``, all threads) is steadier than the wall time when other
processes share the machine.
"""
from __future__ import annotations

import argparse
import collections
import os
import resource
import statistics
import sys
import time

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import numpy as np  # noqa: E402

import dualad  # noqa: E402
from dualad import jacobians  # noqa: E402


def hvp_f(np_):
    def f(x):
        return np_.sum(np_.log(np_.cosh(x[1:] - x[:-1] ** 2))) + 0.25 * np_.sum(x ** 4)
    return f


def hvp_closed_form(x, v):
    """∇²f v written out by hand in NumPy (a floor for the un-jitted HVP): with
    u = x[1:] − x[:-1]², t = tanh(u), s = 1 − t², u̇ = v[1:] − 2 x[:-1] v[:-1]."""
    xa = x[:-1]
    t = np.tanh(x[1:] - np.square(xa))
    s = 1.0 - np.square(t)
    du = v[1:] - 2.0 * xa * v[:-1]
    sdu = s * du
    out = 3.0 * np.square(x) * v
    out[1:] += sdu
    out[:-1] -= 2.0 * (xa * sdu + t * v[:-1])
    return out


def tall_f(np_, B):
    return lambda x: np_.tanh(B @ np_.sin(x)) * 2.0 + np_.cos(B @ x)


def hvp_impls(n=100_000):
    rng = np.random.default_rng(0)
    x, v = rng.uniform(-1, 1, n), rng.standard_normal(n)
    impls = {"numpy f": (lambda f=hvp_f(np): f(x)),
             "numpy closed form": lambda: hvp_closed_form(x, v),
             "dualad": (lambda f=hvp_f(np): dualad.hvp(f, x, v))}
    try:
        import torch
        torch.set_num_threads(1)
        xt, vt = torch.from_numpy(x), torch.from_numpy(v)
        ft = hvp_f(torch)

        def torch_hvp():
            xr = xt.detach().requires_grad_(True)
            g, = torch.autograd.grad(ft(xr), xr, create_graph=True)
            return torch.autograd.grad(g, xr, vt)[0]
        impls["torch (double-back)"] = torch_hvp
        impls["torch functional.hvp"] = lambda: torch.autograd.functional.hvp(ft, xt, vt)[1]
    except ImportError:
        pass
    try:
        import jax
        import jax.numpy as jnp
        jax.config.update("jax_enable_x64", True)
        fj = hvp_f(jnp)
        hv = jax.jit(lambda x, v: jax.jvp(jax.grad(fj), (x,), (v,))[1])
        xj, vj = jnp.asarray(x), jnp.asarray(v)
        impls["jax.jit"] = lambda: hv(xj, vj).block_until_ready()
    except ImportError:
        pass
    return impls


def tall_impls(n=10, m=2000):
    rng = np.random.default_rng(0)
    B, x = rng.standard_normal((m, n)) / np.sqrt(n), rng.standard_normal(n)
    f = tall_f(np, B)
    impls = {"numpy f": lambda: f(x),
             "dualad auto": lambda: jacobians.jacobian(f, x),
             "dualad jacfwd": lambda: jacobians.jacfwd(f, x)}
    try:
        import jax
        import jax.numpy as jnp
        jax.config.update("jax_enable_x64", True)
        jf = jax.jit(jax.jacfwd(tall_f(jnp, jnp.asarray(B))))
        xj = jnp.asarray(x)
        impls["jax.jit(jacfwd)"] = lambda: jf(xj).block_until_ready()
    except ImportError:
        pass
    try:
        import torch
        torch.set_num_threads(1)
        ft, xt = tall_f(torch, torch.from_numpy(B)), torch.from_numpy(x)
        impls["torch"] = lambda: torch.autograd.functional.jacobian(ft, xt, vectorize=True,
                                                                   strategy="forward-mode")
    except ImportError:
        pass
    return impls


def interleaved(impls, rounds=15, inner=None):
    for fn in impls.values():     # warm-up: caches, jit compilation
        fn(); fn()
    times = collections.defaultdict(list)
    cpu = collections.defaultdict(list)
    faults = collections.defaultdict(list)
    if inner is None:
        t0 = time.perf_counter(); impls["numpy f"](); dt = time.perf_counter() - t0
        inner = max(1, int(2e-3 / max(dt, 1e-7)))
    for _ in range(rounds):
        for name, fn in impls.items():
            r0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
            c0, t0 = time.process_time(), time.perf_counter()
            for _ in range(inner):
                fn()
            times[name].append((time.perf_counter() - t0) / inner)
            cpu[name].append((time.process_time() - c0) / inner)
            faults[name].append((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - r0) / inner)
    base = statistics.median(times["numpy f"])
    for name in impls:
        med, lo = statistics.median(times[name]), min(times[name])
        c = statistics.median(cpu[name])
        print(f"  {name:<22} median {med * 1e3:8.3f} ms  min {lo * 1e3:8.3f} ms  "
              f"{med / base:6.2f}x f   cpu {c * 1e3:8.3f} ms "
              f"{c / statistics.median(cpu['numpy f']):6.2f}x f  "
              f"{statistics.median(faults[name]):6.0f} faults/call")


def count_ops(fn):
    """The primitive values ``fn()`` computes (each registry ``impl`` call on plain values,
    which is where the NumPy passes happen), by name and output size, with the NumPy
    arrays allocated by the calls of ``fn()`` besides (``np.zeros`` and friends are counted
    by cProfile as built-ins)."""
    import cProfile
    import pstats
    from dualad.core.primitive import REGISTRY
    counts = collections.Counter()
    saved = {}
    for prim in REGISTRY.values():
        impl = saved[prim] = prim.impl

        def counting(*args, _impl=impl, _name=prim.name, **params):
            out = _impl(*args, **params)
            counts[f"{_name} -> {getattr(out, 'shape', ())}"] += 1
            return out
        prim.impl = counting
    pr = cProfile.Profile()
    try:
        pr.enable()
        fn()
        pr.disable()
    finally:
        for prim, impl in saved.items():
            prim.impl = impl
    st = pstats.Stats(pr)
    for (file, line, func), (cc, nc, tt, ct, callers) in st.stats.items():
        if file == "~" and "numpy" in func:
            counts[func] += nc
    return counts, st


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", choices=["hvp", "tall"])
    ap.add_argument("--ops", action="store_true")
    ap.add_argument("--rounds", type=int, default=15)
    args = ap.parse_args()
    print(f"dualad from {os.path.dirname(dualad.__file__)}")
    if args.ops:
        impls = hvp_impls() if args.only != "tall" else tall_impls()
        fn = impls["dualad"] if "dualad" in impls else impls["dualad jacfwd"]
        fn()
        counts, st = count_ops(fn)
        for name, c in sorted(counts.items()):
            print(f"  {c:6d}  {name}")
        print(f"  {sum(counts.values()):6d}  in all")
        st.sort_stats("tottime").print_stats(25)
        return
    if args.only in (None, "hvp"):
        print("HVP, n = 10^5")
        interleaved(hvp_impls(), args.rounds, inner=1)
    if args.only in (None, "tall"):
        print("tall Jacobian, n = 10, m = 2000")
        interleaved(tall_impls(), args.rounds)


if __name__ == "__main__":
    sys.exit(main())
