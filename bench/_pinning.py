"""One thread count for every peer's thread pools (bench/run.py).

A BLAS or OpenMP pool reads its size from the environment when its library loads, so
the variables must be set before NumPy, SciPy, PyTorch or JAX is imported. This module
imports none of them at import time: ``run.py`` calls :func:`pin_environment` first,
before its own imports, and re-executes itself when a numerical package was already
loaded (by a ``sitecustomize`` or a ``.pth`` hook) with other settings. After the peers
are imported, :func:`pin_runtime` sets PyTorch's pools and uses threadpoolctl (when
installed) to read back, and if needed limit, every native pool loaded in the process.

The variables are not enough for JAX: XLA's CPU runtime (JAX 0.10) sizes its intra-op
pool from the CPU affinity mask and splits single operations over it whatever XLA_FLAGS
says (measured: two tf_XLAEigen threads busy in a jitted logistic-regression gradient with
the flags set, CPU time 2x wall time). So the process is also restricted to N cores with
``sched_setaffinity`` before anything loads (``--no-affinity`` to opt out): no peer, however
its pools are sized, can then use more than N cores, and XLA makes a pool of N.
"""
from __future__ import annotations

import os
import sys

POOL_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
             "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")
# XLA's CPU backend computes on an Eigen pool of one thread per core unless told not to;
# it reads XLA_FLAGS when the backend starts (first computation), not at import.
XLA_ONE_THREAD = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
NUMERICAL = ("numpy", "scipy", "torch", "jax", "jaxlib", "casadi", "autograd")
_MARK = "DUALAD_BENCH_PINNED"


def threads_from_argv(argv):
    """The ``--threads N`` (or ``--threads=N``) of a command line, default 1."""
    for i, a in enumerate(argv):
        if a == "--threads" and i + 1 < len(argv):
            return int(argv[i + 1])
        if a.startswith("--threads="):
            return int(a.split("=", 1)[1])
    return 1


def affinity_from_argv(argv):
    return "--no-affinity" not in argv


def _idle_ticks():
    """core -> idle + iowait ticks so far, from /proc/stat (Linux); {} elsewhere."""
    try:
        with open("/proc/stat") as f:
            lines = [ln.split() for ln in f if ln.startswith("cpu") and ln[3].isdigit()]
    except OSError:
        return {}
    return {int(p[0][3:]): int(p[4]) + int(p[5]) for p in lines if len(p) > 5}


def pin_affinity(n, sample=0.2):
    """Restrict this process (and the threads it creates later) to ``n`` of its allowed
    cores: the ``n`` idlest over a ``sample``-second look at /proc/stat (so two benchmark
    runs at once do not pile onto one core), the last ones where that is unreadable.
    Returns the cores, or None where the OS has no affinity call or fewer are allowed."""
    import time
    if not hasattr(os, "sched_setaffinity"):
        return None
    allowed = sorted(os.sched_getaffinity(0))
    if len(allowed) < n:
        return None
    before = _idle_ticks()
    time.sleep(sample if len(allowed) > n and before else 0)
    after = _idle_ticks()
    idle = {c: after.get(c, 0) - before.get(c, 0) for c in allowed}
    cores = set(sorted(allowed, key=lambda c: (-idle[c], -c))[:n])
    if cores != set(allowed):
        os.sched_setaffinity(0, cores)
    return cores


def pinned_environ(n, environ):
    """A copy of ``environ`` with every pool variable at ``n`` (XLA's flags for n = 1)."""
    env = dict(environ)
    for var in POOL_VARS:
        env[var] = str(n)
    xla = env.get("XLA_FLAGS", "")
    if n == 1 and "xla_cpu_multi_thread_eigen" not in xla:
        env["XLA_FLAGS"] = (xla + " " + XLA_ONE_THREAD).strip()
    env[_MARK] = str(n)
    return env


def pin_environment(n, argv=None, affinity=True):
    """Set the pool variables in this process before any numerical import.

    If a numerical package is already loaded and the environment did not already say
    ``n`` (a previous pass), re-execute the script with the pinned environment: its pools
    were sized before we could say anything. Returns the names loaded too early (empty
    when the pinning is in time)."""
    early = [m for m in NUMERICAL if m in sys.modules]
    if affinity:
        pin_affinity(n)
    env = pinned_environ(n, os.environ)
    if early and os.environ.get(_MARK) != str(n) and argv is not None:
        sys.stdout.flush()
        os.execve(sys.executable, [sys.executable, *argv], env)
    os.environ.update(env)
    return early


_LIMITER = []   # threadpoolctl's limiter, kept alive for the whole run


def pin_runtime(n, early=()):
    """Set PyTorch's pools to ``n``, read every native pool back, and limit any that
    disagrees. Returns the lines to print in the header (what each peer reports)."""
    lines = [f"threads pinned to {n}: " + " ".join(f"{v}={os.environ.get(v)}" for v in
                                                  POOL_VARS[:3])
             + (f" XLA_FLAGS='{os.environ.get('XLA_FLAGS', '')}'" if n == 1 else
                " (XLA: no flag for n > 1; its pool is sized from the CPU affinity below)")]
    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    lines.append(f"  CPU affinity: cores {cores} of {os.cpu_count()}" if cores is not None
                 else "  CPU affinity: not available on this OS")
    if early:
        lines.append(f"  WARNING: {', '.join(early)} imported before the pinning: their pools "
                     "may ignore the variables (limited below where threadpoolctl can)")
    if "torch" in sys.modules:
        torch = sys.modules["torch"]
        torch.set_num_threads(n)
        try:
            torch.set_num_interop_threads(n)
        except RuntimeError as exc:   # only settable before torch's first parallel work
            lines.append(f"  torch.set_num_interop_threads({n}) refused: {exc}")
        lines.append(f"  torch: get_num_threads() = {torch.get_num_threads()}, "
                     f"get_num_interop_threads() = {torch.get_num_interop_threads()}")
    try:
        import threadpoolctl
    except ImportError:
        lines.append("  threadpoolctl not installed: native pools not read back "
                     "(pip install threadpoolctl)")
        return lines
    info = threadpoolctl.threadpool_info()
    wrong = [d for d in info if d.get("num_threads") != n]
    for d in info:
        lines.append(f"  {d.get('internal_api')} ({os.path.basename(d.get('filepath', ''))}, "
                     f"{d.get('user_api')}): num_threads = {d.get('num_threads')}")
    if wrong:
        _LIMITER.append(threadpoolctl.threadpool_limits(limits=n))
        now = {d.get("filepath"): d.get("num_threads") for d in threadpoolctl.threadpool_info()}
        for d in wrong:
            lines.append(f"  WARNING: {d.get('internal_api')} had {d.get('num_threads')} "
                         f"threads; limited to {now.get(d.get('filepath'))} by threadpoolctl")
    return lines
