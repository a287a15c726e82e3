"""Jitted replay against the plain function and the eager peers, interleaved.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. \\
        /work/venvs/bench/bin/python bench/jit_codegen.py [--only rosenbrock chain ...]

Each row times every column in turn, ``rounds`` times (one group of calls lasting about
``min_time`` per column per round), and prints the median per call: the load of a
shared machine then falls on every column alike. Columns: ``plain`` (the NumPy function,
no derivative), ``jit`` (``dualad.jit`` of the dualad derivative), ``jit0`` (the same
program compiled as recorded, without dualad.interpreters.staging.passes/specialize: one primitive call per
line as the first codegen, but with its name reuse and dead-array deletion; called directly), ``dualad`` (the same derivative, eager), ``autograd`` and ``torch``
eager when installed (BLAS and torch pinned to one thread). ``compile`` is the first
jitted call (trace + passes + codegen + ``compile()``). No timing asserts: this prints.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import dualad  # noqa: E402
import workloads as W  # noqa: E402
from _timing import fmt, optional  # noqa: E402

torch = optional("torch")
autograd = optional("autograd")
if torch is not None:
    torch.set_num_threads(1)


def interleaved(fns, rounds=7, min_time=0.05):
    """``{name: median seconds per call}`` with the columns timed in turn."""
    numbers = {}
    for name, fn in fns.items():
        fn()
        n = 1
        while True:
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            if time.perf_counter() - t0 >= min_time / 2 or n >= 1 << 20:
                break
            n *= 2
        numbers[name] = n
    samples = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            n = numbers[name]
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            samples[name].append((time.perf_counter() - t0) / n)
    return {name: statistics.median(s) for name, s in samples.items()}


def recorded(jitted, *args):
    """The program of ``jitted`` at ``args`` compiled as recorded (one primitive call per
    line, no passes, no Python floats, no scatter chains), called directly."""
    from dualad.interpreters.staging.codegen import compile_program
    from dualad.core.tree import flatten
    fn, _ = compile_program(jitted.program(*args), optimize=False)
    leaves = flatten(list(args))[0]     # arrays and floats only here: all of them traced
    return lambda: fn(*leaves)


def first_call(make):
    t0 = time.perf_counter()
    make()
    return time.perf_counter() - t0


def row(name, fns, per=None, compile_time=None, note=""):
    times = interleaved(fns)
    base = times.get("plain")
    parts = []
    for k, t in times.items():
        s = f"{k} {fmt(t)}"
        if per:
            s = f"{k} {t / per * 1e6:.3f} us/op"
        elif base and k != "plain":
            s += f" ({t / base:.2f}x)"
        parts.append(s)
    if compile_time is not None:
        parts.append(f"compile {fmt(compile_time)}")
    print(f"{name:<16} " + " | ".join(parts) + (f"  {note}" if note else ""), flush=True)
    return times


def bench_rosenbrock():
    x = W._X100
    g = dualad.grad(W.rosenbrock)
    j = dualad.jit(g)
    ct = first_call(lambda: j(x))
    fns = {"plain": lambda: W.rosenbrock(x), "jit": lambda: j(x), "jit0": recorded(j, x),
           "dualad": lambda: g(x)}
    if autograd is not None:
        ga = autograd.grad(W.rosenbrock)
        fns["autograd"] = lambda: ga(x)
    if torch is not None:
        def tr():
            xt = torch.from_numpy(x).requires_grad_(True)
            return torch.autograd.grad(W.rosenbrock(xt), xt)
        fns["torch"] = tr
    np.testing.assert_allclose(j(x), g(x), rtol=1e-14)
    t = row("rosenbrock", fns, compile_time=ct)
    if "autograd" in t:
        print(f"{'':16} autograd / jit = {t['autograd'] / t['jit']:.0f}x")


def _chains():
    def const(x, n):
        for _ in range(n):
            x = x * 1.0000001 + 1e-9
        return x

    def quad(x, n):
        for _ in range(n):
            x = x * (1.0 + 1e-7 * x)
        return x

    def sine(x, n):
        for _ in range(n):
            x = np.sin(x) + 0.5
        return x
    return {"chain-const": (const, 2), "chain-quad": (quad, 3), "chain-sin": (sine, 2)}


def bench_chain(n=100_000):
    for name, (body, ops) in _chains().items():
        f = (lambda body: lambda x: body(x, n))(body)
        g = dualad.grad(f)
        j = dualad.jit(g)
        ct = first_call(lambda: j(1.0))
        fns = {"jit": lambda: j(1.0), "jit0": recorded(j, 1.0), "dualad": lambda: g(1.0)}
        if torch is not None and name != "chain-sin":
            def tr(f=f):
                xt = torch.tensor(1.0, dtype=torch.float64, requires_grad=True)
                return torch.autograd.grad(f(xt), xt)
            fns["torch"] = tr
        assert abs(j(1.0) - g(1.0)) <= 1e-14 * abs(g(1.0)), (j(1.0), g(1.0))
        # per operation recorded and swept: ops forward + ops backward per step
        row(name, fns, per=2 * ops * n, compile_time=ct,
            note=f"({ops} ops/step, n = {n}; per op = time / (2*{ops}*n))")


def bench_gradient(wl_name):
    wl = next(w for w in W.ALL if w.name == wl_name)
    data = W._logistic_data if wl_name == "logreg" else W._mlp_data
    build = W._logistic if wl_name == "logreg" else W._mlp
    *arrays, p = data(False)
    f = build(np, *arrays)
    g = dualad.grad(f)
    j = dualad.jit(g)
    ct = first_call(lambda: j(p))
    fns = {"plain": lambda: f(p), "jit": lambda: j(p), "jit0": recorded(j, p),
           "dualad": lambda: g(p)}
    if torch is not None:
        fns["torch"] = wl.impls["torch"](False)
    for a, b in zip(j(p) if isinstance(p, list) else [j(p)], g(p) if isinstance(p, list)
                    else [g(p)]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-14)
    row(wl_name, fns, compile_time=ct)


def bench_hvp():
    x, v = W._hvp_data(False)
    f = W._hvp_f(np)
    j = dualad.jit(lambda x, v: dualad.hvp(f, x, v))
    ct = first_call(lambda: j(x, v))
    fns = {"plain": lambda: f(x), "jit": lambda: j(x, v), "jit0": recorded(j, x, v),
           "dualad": lambda: dualad.hvp(f, x, v)}
    if torch is not None:
        fns["torch"] = W.HVP.impls["torch"](False)
    np.testing.assert_allclose(j(x, v), dualad.hvp(f, x, v), rtol=1e-10, atol=1e-12)
    t = row("hvp", fns, compile_time=ct)
    if "torch" in t:
        print(f"{'':16} jit / torch = {t['jit'] / t['torch']:.2f}")


BENCHES = {"rosenbrock": bench_rosenbrock, "chain": bench_chain, "logreg":
           lambda: bench_gradient("logreg"), "mlp": lambda: bench_gradient("mlp"),
           "hvp": bench_hvp}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*")
    args = ap.parse_args()
    print(f"dualad from {os.path.dirname(dualad.__file__)}; numpy {np.__version__}; "
          f"torch {getattr(torch, '__version__', '-')}; autograd "
          f"{'yes' if autograd else '-'}")
    for name, fn in BENCHES.items():
        if not args.only or name in args.only:
            fn()


if __name__ == "__main__":
    main()
