"""Reverse mode under a memory budget: peak memory and time of a gradient (issue 36).

Workloads (float64):
  loop   a Python loop of 10^4 steps ``x = sin(x) * 0.999`` on 5000 values, then ``sum``
  scan   the same loop as ``dualad.scan`` (10^4 steps)
  mlp    a 50-layer NumPy MLP, ``h = tanh(h @ W + b)``, width 64, batch 4096, ``sum(h^2)``

Methods: ``store`` (the ordinary sweep, every value taped), ``remat`` (``grad(f,
max_memory=frac * P)``, P the store-all tracemalloc peak of the same workload),
``checkpoint`` (hand-placed: ``dualad.checkpoint`` around blocks of 100 steps / 7 layers),
``binomial`` (``scan(..., checkpoints="binomial", snapshots=s)`` with s chosen for the
budget), ``torch`` / ``torch-ckpt`` / ``torch-budget`` (the same MLP in PyTorch:
plain, ``checkpoint_sequential`` with 7 segments, and ``torch.compile`` with the
partitioner's ``activation_memory_budget = frac``), run where torch imports.

Each configuration runs in its own process: one call (timed; ``torch.compile`` compiles
in it), then ``REMAT_REPEATS`` (default 1) timed calls whose peak resident set above its
value before the call is sampled every millisecond (glibc told to return freed arrays:
``MALLOC_MMAP_THRESHOLD_=16384``, every array of 2048 doubles or more is its own
mapping), then one call under tracemalloc (the peak of Python-allocated memory above
what the setup holds; torch's tensors are not Python allocations: for torch only RSS is
meaningful). ``REMAT_METHODS=remat,checkpoint``
runs a subset (the store-all reference always runs). Every gradient is asserted equal
to the store-all one (dualad: rtol 1e-12; torch, a different summation order: 1e-9).

    PYTHONPATH=. OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 \\
        /work/benchvenv/bin/python bench/remat_budget.py            (from the checkout)

Times on a shared machine move with its load; ``--times loop`` (or ``mlp``) runs every
dualad method in one process instead, ``REMAT_REPEATS`` rounds (default 2) with the
methods interleaved, and prints the least time of each (``remat-10%``: ``max_memory``
at 10% of the store-all peak measured above: 770.6 MB for the loop, 308.1 MB for the MLP).
"""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import tempfile

STEPS, WIDTH_LOOP = 10_000, 5000
LAYERS, WIDTH, BATCH = 50, 64, 4096
FRACS = (1.0, 0.3, 0.1, 0.03)
if os.environ.get("REMAT_SMALL"):   # a quick check of the script itself
    STEPS, WIDTH_LOOP, BATCH = 500, 1000, 256
OUT = os.path.join(tempfile.gettempdir(), "remat_budget")


def _setup(case):
    import numpy as np
    rng = np.random.default_rng(0)
    if case == "mlp":
        params = [(rng.standard_normal((WIDTH, WIDTH)) / np.sqrt(WIDTH),
                   rng.standard_normal(WIDTH) * 0.1) for _ in range(LAYERS)]
        return (params, rng.standard_normal((BATCH, WIDTH)))
    return (np.linspace(0.1, 1.5, WIDTH_LOOP),)


def loop(x):
    import numpy as np
    for _ in range(STEPS):
        x = np.sin(x) * 0.999
    return np.sum(x)


def _loop_blocks(x, block):
    import numpy as np
    import dualad

    def steps(x):
        for _ in range(block):
            x = np.sin(x) * 0.999
        return x
    run = dualad.checkpoint(steps)
    for _ in range(STEPS // block):
        x = run(x)
    return np.sum(x)


def _scan(x, snapshots=None):
    import numpy as np
    import dualad
    kw = {} if snapshots is None else {"checkpoints": "binomial", "snapshots": snapshots}
    c, _ = dualad.scan(lambda c, _: (np.sin(c) * 0.999, None), x, length=STEPS, **kw)
    return np.sum(c)


def mlp(params, x):
    import numpy as np
    h = x
    for W, b in params:
        h = np.tanh(h @ W + b)
    return np.sum(h ** 2)


def _mlp_blocks(params, x, per=7):
    import numpy as np
    import dualad

    def block(h, *flat):
        for W, b in zip(flat[0::2], flat[1::2]):
            h = np.tanh(h @ W + b)
        return h
    run = dualad.checkpoint(block)
    h = x
    for k in range(0, len(params), per):
        h = run(h, *[a for pair in params[k:k + per] for a in pair])
    return np.sum(h ** 2)


def _dualad_call(case, method, frac, peak):
    import dualad
    args = _setup(case)
    budget = int(frac * peak) if peak else None
    if case == "scan":
        if method == "binomial":   # s snapshots of a carry + one step's tape within budget
            s = max(2, int(budget // (WIDTH_LOOP * 8 * 3)))
            return (lambda: dualad.grad(lambda x: _scan(x, s))(*args)), {"snapshots": s}
        return (lambda: dualad.grad(_scan)(*args)), {}
    f = loop if case == "loop" else mlp
    if method == "store":
        return (lambda: dualad.grad(f)(*args)), {}
    if method == "checkpoint":
        g = (lambda x: _loop_blocks(x, 100)) if case == "loop" else _mlp_blocks
        return (lambda: dualad.grad(g)(*args)), {}
    plan = dualad.remat_plan(f, *args, max_memory=budget)
    info = {"budget": budget, "model_peak": plan.peak, "recomputed": plan.recomputed_flops /
            max(plan.total_flops, 1.0), "segments": len(plan.segments)}
    return (lambda: dualad.grad(f, max_memory=budget)(*args)), info


def _torch_call(method, frac):
    import numpy as np
    import torch
    torch.set_num_threads(1)
    params, x = _setup("mlp")
    P = [(torch.tensor(W, requires_grad=True), torch.tensor(b, requires_grad=True))
         for W, b in params]
    X = torch.tensor(x)
    layers = [lambda h, W=W, b=b: torch.tanh(h @ W + b) for W, b in P]

    def loss(h):
        if method == "torch-ckpt":
            from torch.utils.checkpoint import checkpoint_sequential
            h = checkpoint_sequential(torch.nn.Sequential(*[_Layer(f) for f in layers]), 7,
                                      h, use_reentrant=False)
        else:
            for f in layers:
                h = f(h)
        return (h ** 2).sum()
    fn = loss
    if method == "torch-budget":
        import torch._functorch.config as fconfig
        fconfig.activation_memory_budget = frac
        fn = torch.compile(loss, backend="aot_eager_decomp_partition")

    def call():
        for W, b in P:
            W.grad = b.grad = None
        fn(X).backward()
        return [(W.grad.numpy().copy(), b.grad.numpy().copy()) for W, b in P]
    del np
    return call, {}


class _Layer:
    pass


class _RssSampler:
    """The peak resident set above its value at entry, read from /proc/self/statm every
    millisecond on a thread (with MALLOC_MMAP_THRESHOLD_ set low, freed arrays leave the
    resident set, so a warm call's peak is its own)."""

    def __enter__(self):
        import threading
        self.page = os.sysconf("SC_PAGE_SIZE")
        self.base = self._now()
        self.peak = 0
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._poll, daemon=True)
        self.thread.start()
        return self

    def _now(self):
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * self.page

    def _poll(self):
        while not self.done.wait(0.001):
            self.peak = max(self.peak, self._now() - self.base)

    def __exit__(self, *exc):
        self.done.set()
        self.thread.join()
        self.peak = max(self.peak, self._now() - self.base)


def _child(case, method, frac, peak):
    import time
    import tracemalloc
    import numpy as np
    if method.startswith("torch"):
        import torch

        class Layer(torch.nn.Module):
            def __init__(self, f):
                super().__init__()
                self.f = f

            def forward(self, h):
                return self.f(h)
        globals()["_Layer"] = Layer
        call, info = _torch_call(method, frac)
    else:
        call, info = _dualad_call(case, method, frac, peak)
    t = time.perf_counter()
    g = call()                      # a first call: torch.compile compiles here
    times = [time.perf_counter() - t]
    rss = None
    for _ in range(int(os.environ.get("REMAT_REPEATS", "1"))):
        with _RssSampler() as sampler:
            t = time.perf_counter()
            call()
            times.append(time.perf_counter() - t)
        rss = sampler.peak if rss is None else max(rss, sampler.peak)
    peak_py = None
    if not method.startswith("torch"):
        import gc
        gc.collect()
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        call()
        peak_py = tracemalloc.get_traced_memory()[1] - base
        tracemalloc.stop()
    from dualad.extend import flatten
    leaves = [np.asarray(a) for a in flatten(g)[0]]
    os.makedirs(OUT, exist_ok=True)
    np.savez(os.path.join(OUT, f"{case}-{method}-{frac}.npz"), *leaves)
    print(json.dumps({"case": case, "method": method, "frac": frac, "time": min(times),
                      "rss": rss, "tracemalloc": peak_py, **info}))


def _run(case, method, frac=1.0, peak=0):
    cmd = [sys.executable, __file__, "--child", case, method, str(frac), str(peak)]
    env = dict(os.environ, MALLOC_MMAP_THRESHOLD_="16384", MALLOC_TRIM_THRESHOLD_="0")
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        return {"case": case, "method": method, "frac": frac,
                "error": (r.stderr.strip().splitlines() or ["?"])[-1][:200]}
    return json.loads(r.stdout.strip().splitlines()[-1])


def _same(case, method, frac):
    import numpy as np
    ref = np.load(os.path.join(OUT, f"{case}-store-1.0.npz"))
    got = np.load(os.path.join(OUT, f"{case}-{method}-{frac}.npz"))
    rtol = 1e-9 if method.startswith("torch") or case == "scan" else 1e-12
    for k in ref.files:
        np.testing.assert_allclose(got[k], ref[k], rtol=rtol, atol=1e-12 * np.abs(ref[k]).max())
    return True


def _configs(case, torch_ok):
    rows = [("store", 1.0)]
    rows += [("remat", f) for f in FRACS] if case != "scan" else []
    rows += [("checkpoint", 1.0)] if case != "scan" else [("binomial", f) for f in FRACS]
    if case == "mlp" and torch_ok:
        rows += [("torch", 1.0), ("torch-ckpt", 1.0)] + [("torch-budget", f) for f in FRACS]
    return rows


def _fmt(r):
    mb = lambda b: "-" if b is None else f"{b / 2**20:8.1f}"   # noqa: E731
    if "error" in r:
        return f"{r['case']:5} {r['method']:13} {r['frac']:5}  refused/failed: {r['error']}"
    extra = "" if "recomputed" not in r and "snapshots" not in r else (
        f"  snapshots {r['snapshots']}" if "snapshots" in r else
        f"  model {r['model_peak'] / 2**20:.1f} MB, recomputed {100 * r['recomputed']:.0f}%, "
        f"{r['segments']} segments")
    return (f"{r['case']:5} {r['method']:13} {r['frac']:5}  time {r['time']:7.3f} s  "
            f"tracemalloc {mb(r['tracemalloc'])} MB  rss {mb(r['rss'])} MB  "
            f"same={r.get('same')}{extra}")


def main():
    torch_ok = subprocess.run([sys.executable, "-c", "import torch"],
                              capture_output=True).returncode == 0
    cases = [c for c in ("loop", "scan", "mlp") if c in (sys.argv[1:] or [c])]
    for case in cases:
        store = _run(case, "store")
        store["same"] = True
        print(_fmt(store), flush=True)
        peak = store["tracemalloc"]
        only = os.environ.get("REMAT_METHODS")   # e.g. "remat,checkpoint": a subset
        for method, frac in _configs(case, torch_ok)[1:]:
            if only and method not in only.split(","):
                continue
            if case == "scan":
                peak = _store_loop_peak.get("loop", peak)
            r = _run(case, method, frac, peak)
            if "error" not in r:
                r["same"] = _same(case, method, frac)
            print(_fmt(r), flush=True)
        if case == "loop":
            _store_loop_peak["loop"] = peak


_store_loop_peak = {}
STORE_ALL_PEAK = {"loop": 770.6 * 2**20, "mlp": 308.1 * 2**20}   # measured (docs/remat.md)


def times(case):
    """Every dualad method on ``case`` in this process, rounds interleaved: least times."""
    import time
    import dualad
    args = _setup(case)
    f = loop if case == "loop" else mlp
    ways = {"store": lambda: dualad.grad(f)(*args),
            "checkpoint": (lambda: dualad.grad(lambda x: _loop_blocks(x, 100))(*args))
            if case == "loop" else (lambda: dualad.grad(_mlp_blocks)(*args))}
    if case == "loop":
        s = max(2, int(0.1 * STORE_ALL_PEAK["loop"] // (WIDTH_LOOP * 8 * 3)))
        ways[f"scan-binomial-{s}"] = lambda: dualad.grad(lambda x: _scan(x, s))(*args)
    for frac in FRACS[1:]:
        budget = int(frac * STORE_ALL_PEAK[case])
        ways[f"remat-{frac:.0%}"] = (lambda b: lambda: dualad.grad(f, max_memory=b)(*args))(
            budget)
    best = {}
    for _ in range(int(os.environ.get("REMAT_REPEATS", "2"))):
        for name, call in ways.items():
            t = time.perf_counter()
            try:
                call()
            except ValueError:
                best[name] = "refused"
                continue
            best[name] = min(best.get(name, math.inf), time.perf_counter() - t)
    print(case, json.dumps({k: v if isinstance(v, str) else round(v, 2)
                            for k, v in best.items()}))

if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        _child(sys.argv[2], sys.argv[3], float(sys.argv[4]), int(float(sys.argv[5])))
    elif sys.argv[1:2] == ["--times"]:
        times(sys.argv[2])
    else:
        main()
