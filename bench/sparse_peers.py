"""Prepared sparse Jacobians against CasADi and jax.jit (issue 35, "Evaluation speed").

    PYTHONPATH=. python bench/sparse_peers.py [--bratu] [--ba 1,2,3] [--rounds 5]

One process, every BLAS/OpenMP/XLA pool pinned to one thread and the process to one core
before NumPy loads (bench/_pinning.py), the participants of a row timed in interleaved
rounds (bench/_timing.py: each round times one group of each, the order rotated).
Every result is a ``scipy.sparse`` matrix, checked against an exact Jacobian before timing.

Sparse Bratu (``--bratu``). The 1-D residual of bench/workloads_jacobians.py (u'' + λ eᵘ,
the issue's "0.50 vs 1.65 ms" row, n = 2,000 / 20,000 / 200,000) and the 2-D one
F(u) = A u + λ eᵘ with A the 5-point Laplacian on a k x k grid (k = 32, 100, 317), A a
SciPy matrix in the NumPy code and a sparse ``DM`` in CasADi's. Participants:

- ``dualad plan``: ``jacobians.plan(F, u, output="sparse")`` (detection, coloring, choice
  once), then ``p(u)``: the sweeps replayed by ``dualad.jit`` (default), CSR out;
- ``dualad eager``: the same plan with ``jit=False`` (eager compressed sweeps);
- ``dualad numba``: ``jit="numba"``, timed after ``p.wait_compiled()``;
- ``casadi SX/MX``: a prebuilt ``casadi.Function`` of ``jacobian(F(u), u)``, called on
  the NumPy input, its nonzeros made a ``scipy.sparse.csc_matrix`` on the output sparsity
  read once (``DM.nonzeros()``; workloads_casadi.py's spelling), and the same through
  ``Function.buffer()`` into preallocated memory (``buf``; a copy of the values per call,
  as a fresh matrix per call needs).
The first-call column is the setup: dualad's plan() plus its first call; CasADi's graph,
derivative and Function plus its first call.

GradBench's bundle adjustment (``--ba``; bench/gradbench/gb_ba.py, GradBench's sizes by
number). The Jacobian of ``ba_flat`` (11 n + 3 m + p inputs, 3 p outputs, 29 nonzeros per
observation) as CSR on the exact pattern ``ba_sparsity``. Participants:

- ``jax jacfwd``: ``jax.jit`` of ``vmap(jacfwd(one observation's weighted reprojection))``
  over the gathered cameras and points (the issue's peer), assembled inside the jit into
  the CSR data order, then a ``csr_matrix`` on precomputed index arrays (shared by every
  result, not copied: the cheapest assembly a JAX user would write); ``jax jacrev``
  the same with ``jacrev`` (2 outputs per observation: JAX's better spelling here);
- ``dualad plan`` / ``dualad eager`` / ``dualad numba``: ``plan(ba_flat, v,
  output="sparse")`` as above, the planner's defaults (it detects the pattern, finds the
  gathers ``ba_flat`` starts with and plans ``J_g S``: jacobians.gathers), the first call
  including all of it;
- ``dualad given``: ``plan(..., sparsity=ba_sparsity(...), max_memory=4 GiB)``, the way
  this table was made before the cut (a given pattern of ``J_f`` is colored as it is: 14
  forward colors; 4 GiB so that the census' ~210 MB a direction at size 3 sweeps them at
  once); ``--no-given`` skips it.

dualad is imported from the checkout this file sits in (its parent directory), so the
benchmark environment (/work/benchvenv: jax, numba, casadi) needs no dualad install.
"""
from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(1, os.path.join(HERE, "gradbench"))
import _pinning  # noqa: E402  (imports nothing numerical)

if __name__ == "__main__":   # before NumPy loads: pin every pool (re-exec if too late)
    _EARLY = _pinning.pin_environment(_pinning.threads_from_argv(sys.argv[1:]), sys.argv,
                                      _pinning.affinity_from_argv(sys.argv[1:]))
else:
    _EARLY = ()

import argparse  # noqa: E402
import importlib  # noqa: E402
import importlib.util  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

from _timing import fmt, interleaved, optional, table  # noqa: E402


def import_jacobians():
    """``dualad.jacobians`` of this checkout (the package maps it to ``jacobians/``; an
    environment without dualad installed gets it loaded under that name here)."""
    root = os.path.dirname(HERE)
    if root not in sys.path:
        sys.path.insert(0, root)
    import dualad  # noqa: F401
    try:
        return importlib.import_module("dualad.jacobians")
    except ImportError:
        pass
    folder = os.path.join(root, "jacobians")
    spec = importlib.util.spec_from_file_location("dualad.jacobians",
                                                  os.path.join(folder, "__init__.py"),
                                                  submodule_search_locations=[folder])
    mod = importlib.util.module_from_spec(spec)
    sys.modules["dualad.jacobians"] = mod
    spec.loader.exec_module(mod)
    return mod


# --- participants ---------------------------------------------------------------------------
def dualad_participants(jacobians, f, x, numba, eager=True, given=None, **kw):
    """name -> (call, first-call seconds, note) for the three ways of a prepared plan (and
    ``dualad given``: the plan made with ``given``'s keywords, when given)."""
    out = {}
    ways = [("dualad plan", True, kw), ("dualad eager", False, kw),
            ("dualad numba", "numba", kw)] + ([("dualad given", True, given)] if given else [])
    for name, jit, kws in ways:
        if jit == "numba" and not numba or jit is False and not eager:
            continue
        t0 = time.perf_counter()
        p = jacobians.plan(f, x, output="sparse", jit=jit, **kws)
        p(x)
        first = time.perf_counter() - t0
        via = "" if getattr(p, "through", None) is None else " through gathers"
        note = f"{p.mode}{via}, {p.directions} colors, {p.n_chunks} sweep(s)"
        if jit == "numba":
            t1 = time.perf_counter()
            ready = p.wait_compiled(600)
            replayed = p.replayed if p.replayed is not None else p.through.inner.replayed
            tiers = sorted({t for v in replayed.jitted.cache_info(tiers=True).values()
                            for t in v})
            note += f"; Numba ready {time.perf_counter() - t1:.1f} s later, tier " \
                f"{'/'.join(tiers)}" + ("" if ready else " (NOT ready: NumPy program timed)")
        out[name] = (lambda p=p: p(x), first, note)
    return out


def casadi_participants(build):
    """``build(ca, kind) -> (symbol, derivative)``; name -> (call, first call, note) for
    SX and MX, each through DM.nonzeros() and through Function.buffer()."""
    ca = optional("casadi")
    if ca is None:
        return {}
    out = {}
    for kind in ("SX", "MX"):
        t0 = time.perf_counter()
        x, expr = build(ca, kind)
        fn = ca.Function("J", [x], [expr])
        spo = fn.sparsity_out(0)
        row = np.array(spo.row(), dtype=np.int32)
        colind = np.array(spo.colind(), dtype=np.int32)
        shape = (spo.size1(), spo.size2())
        x0 = build.x0

        def dm(fn=fn, row=row, colind=colind, shape=shape):
            values = np.array(fn(x0).nonzeros())
            return sp.csc_matrix((values, row.copy(), colind.copy()), shape=shape)
        dm()
        first = time.perf_counter() - t0
        buf, evaluate = fn.buffer()
        arg = np.ascontiguousarray(x0, dtype=float)
        res = np.empty(spo.nnz())
        buf.set_arg(0, memoryview(arg))
        buf.set_res(0, memoryview(res))

        def buffered(evaluate=evaluate, res=res, row=row, colind=colind, shape=shape,
                     keep=(buf, arg)):   # the buffer and its input must outlive the calls
            evaluate()
            return sp.csc_matrix((res.copy(), row.copy(), colind.copy()), shape=shape)
        out[f"casadi {kind}"] = (dm, first, f"casadi {ca.__version__} {kind}, DM.nonzeros()")
        out[f"casadi {kind} buf"] = (buffered, first, "Function.buffer()")
    return out


# --- sparse Bratu ---------------------------------------------------------------------------
def bratu_1d(xp_concat, zeros, exp, n, lam=1.0):
    """workloads_jacobians.bratu: (u[i-1] - 2 u[i] + u[i+1]) / h² + λ e^u[i], zero ends."""
    h2 = 1.0 / (n + 1) ** 2

    def residual(u):
        zero = zeros(1)
        return (xp_concat([zero, u[:-1]]) - 2.0 * u + xp_concat([u[1:], zero])) / h2 \
            + lam * exp(u)
    return residual


def laplacian_2d(k):
    L = sp.diags([np.ones(k - 1), -2 * np.ones(k), np.ones(k - 1)], [-1, 0, 1])
    eye = sp.eye(k)
    return ((sp.kron(L, eye) + sp.kron(eye, L)) * (k + 1) ** 2).tocsr()


def bratu_case(kind, size, lam=1.0):
    """(name, F (NumPy), u0, exact J, CasADi build) of one Bratu row."""
    if kind == "1-D":
        n = size
        u0 = np.linspace(0.0, 1.0, n) * 0.1
        f = bratu_1d(np.concatenate, np.zeros, np.exp, n, lam)
        h2 = 1.0 / (n + 1) ** 2
        exact = sp.diags([np.full(n - 1, 1 / h2), -2 / h2 + lam * np.exp(u0),
                          np.full(n - 1, 1 / h2)], [-1, 0, 1], format="csr")

        def build(ca, k):
            u = getattr(ca, k).sym("u", n)
            up, um = ca.vertcat(u[1:], 0), ca.vertcat(0, u[:-1])
            return u, ca.jacobian((um - 2.0 * u + up) / h2 + lam * ca.exp(u), u)
        name = f"1-D Bratu n={n}"
    else:
        A = laplacian_2d(size)
        n = A.shape[0]
        u0 = np.cos(np.arange(n) * 0.01) * 0.1

        def f(u):
            return A @ u + lam * np.exp(u)
        exact = (A + sp.diags(lam * np.exp(u0))).tocsr()

        def build(ca, k):
            u = getattr(ca, k).sym("u", n)
            return u, ca.jacobian(ca.mtimes(ca.DM(A), u) + lam * ca.exp(u), u)
        name = f"2-D Bratu {size}x{size} (n={n})"
    build.x0 = u0
    return name, f, u0, exact, build


def check(name, J, exact):
    """Max |J - exact| / max |exact|; raises when the structure or values are off."""
    J = sp.csr_matrix(J)
    err = abs(J - exact).max() / abs(exact).max()
    if J.shape != exact.shape or not err <= 1e-12:
        raise AssertionError(f"{name}: shape {J.shape} vs {exact.shape}, rel. error {err:.2e}")
    return err


def run_rows(title, rows, rounds, min_time):
    """Time every row's participants (interleaved) and print one table."""
    print(f"\n## {title}\n")
    lines = []
    for row_name, parts, exact, extra in rows:
        for name, (call, _, _) in parts.items():
            check(f"{row_name} / {name}", call(), exact)
        timings = interleaved({k: v[0] for k, v in parts.items()}, rounds=rounds,
                              min_time=min_time)
        best_peer = min((t.median, k) for k, t in timings.items() if not k.startswith("dualad"))\
            if any(not k.startswith("dualad") for k in timings) else (None, None)
        for name, t in timings.items():
            ratio = "" if best_peer[0] is None else f"{t.median / best_peer[0]:.2f}"
            lines.append((row_name, name, fmt(t.median), f"{t.spread:.2f}", ratio,
                          fmt(parts[name][1]), parts[name][2], extra))
            row_name = ""
            extra = ""
    print(table(lines, ("row", "participant", "median", "spread", "/ best peer",
                        "first call", "note", "f / detect")))


def bratu_rows(jacobians, numba):
    rows = []
    for kind, size in (("1-D", 2000), ("1-D", 20000), ("1-D", 200000), ("2-D", 32),
                       ("2-D", 100), ("2-D", 317)):
        name, f, u0, exact, build = bratu_case(kind, size)
        parts = dualad_participants(jacobians, f, u0, numba)
        parts.update(casadi_participants(build))
        t_f = min(_once(lambda: f(u0)) for _ in range(20))
        rows.append((name, parts, exact, f"f {fmt(t_f)}"))
    return rows


def _once(call):
    t0 = time.perf_counter()
    call()
    return time.perf_counter() - t0


# --- bundle adjustment ----------------------------------------------------------------------
def _csr_order():
    """For the (p, 2, 15) blocks [d cam (11), d X (3), d w] of each observation's two errors,
    the flat positions of the 28 stored entries in CSR order (row 2i: no v0 column, row
    2i + 1: no u0 column)."""
    x_cols = [0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13, 14]
    y_cols = [0, 1, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12, 13, 14]
    return np.array(x_cols), np.array(y_cols) + 15


def jax_participants(inputs, pattern, jacfwd=True):
    """jax.jit(vmap(jacfwd / jacrev(one observation))) assembled into ``pattern``'s CSR."""
    jax = optional("jax")
    if jax is None:
        return {}
    import gb_ba
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)
    ci, pi = inputs["obs"][:, 0], inputs["obs"][:, 1]
    x_sel, y_sel = _csr_order()
    sel = jnp.asarray(np.concatenate([x_sel, y_sel]))
    indices = pattern.indices.astype(np.int32)
    indptr = pattern.indptr.astype(np.int32)
    args = [jnp.asarray(inputs[k]) for k in ("cams", "X", "w", "feats")]

    def one(cam, x, w, feat):
        return w * (gb_ba.project(jnp, cam[None], x[None])[0] - feat)
    out = {}
    ways = (("jax jacfwd", jax.jacfwd),) if jacfwd else ()
    for name, jac in ways + (("jax jacrev", jax.jacrev),):
        d_one = jac(one, argnums=(0, 1, 2))

        def data(cams, X, w, feats, d_one=d_one):
            dc, dx, dw = jax.vmap(d_one)(cams[ci], X[pi], w, feats)
            blocks = jnp.concatenate([dc, dx, dw[..., None]], axis=-1)      # (p, 2, 15)
            flat = blocks.reshape(blocks.shape[0], 30)[:, sel]               # (p, 28)
            return jnp.concatenate([flat.ravel(), -2.0 * w])
        jitted = jax.jit(data)

        def call(jitted=jitted):
            return sp.csr_matrix((np.asarray(jitted(*args)), indices, indptr),
                                 shape=pattern.shape)
        t0 = time.perf_counter()
        call()
        out[name] = (call, time.perf_counter() - t0, f"jax {jax.__version__}, x64")
    return out


def ba_rows(jacobians, numba, sizes, detect, max_memory, eager=True, given=True,
            jacfwd=True):
    import gb_ba
    rows = []
    for k in sizes:
        n, m, p = gb_ba.SIZES[k]
        inputs = gb_ba.ba_inputs(n, m, p)
        f, v = gb_ba.ba_flat(inputs), gb_ba.ba_point(inputs)
        pattern = gb_ba.ba_sparsity(n, m, p)
        extra = f"f {fmt(min(_once(lambda: f(v)) for _ in range(5)))}"
        if detect:
            t0 = time.perf_counter()
            try:
                found = jacobians.jacobian_sparsity(f, v)
                same = (found != pattern).nnz == 0
                extra += f"; detect {fmt(time.perf_counter() - t0)}" + \
                    ("" if same else " (pattern differs!)")
            except Exception as e:  # noqa: BLE001  (TooDense on main at sizes >= 2)
                extra += f"; detect failed after {fmt(time.perf_counter() - t0)}: " \
                         f"{type(e).__name__}"
        kw = {} if max_memory is None else {"max_memory": max_memory}
        parts = dualad_participants(
            jacobians, f, v, numba, eager,
            given={"sparsity": pattern, "max_memory": 4 * 2 ** 30} if given else None, **kw)
        # the reference: the given pattern's forward sweeps on f itself (no cut), else the plan
        exact = parts.get("dualad given", parts["dualad plan"])[0]()
        parts.update(jax_participants(inputs, pattern, jacfwd))
        rows.append((f"BA {k} (n={n}, m={m}, p={p})", parts, exact, extra))
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bratu", action="store_true", help="the sparse Bratu rows")
    ap.add_argument("--ba", default="", help="GradBench BA sizes, e.g. 1,2,3 (none: skip)")
    ap.add_argument("--no-numba", action="store_true", help="skip jit='numba'")
    ap.add_argument("--no-detect", action="store_true", help="BA: skip the detection column")
    ap.add_argument("--no-eager", action="store_true", help="BA: skip jit=False")
    ap.add_argument("--ba-max-memory", type=float, default=None,
                    help="BA: the plans' max_memory in GiB (default: the planner's)")
    ap.add_argument("--no-jacfwd", action="store_true",
                    help="BA: skip jax jacfwd (slower than jacrev at every size measured)")
    ap.add_argument("--no-given", action="store_true",
                    help="BA: skip 'dualad given' (the pattern passed, 14 forward colors)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--min-time", type=float, default=0.05)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--no-affinity", action="store_true")
    args = ap.parse_args(argv)
    lines = _pinning.pin_runtime(args.threads, _EARLY)
    print("\n".join(lines))
    jacobians = import_jacobians()
    numba = not args.no_numba and optional("numba") is not None
    if args.bratu:
        run_rows("Sparse Bratu: prepared plan vs CasADi Function (scipy.sparse out)",
                 bratu_rows(jacobians, numba), args.rounds, args.min_time)
    if args.ba:
        sizes = [int(s) for s in args.ba.split(",") if s]
        for k in sizes:     # one table per size: the memory of one size at a time
            run_rows(f"GradBench BA size {k}: prepared plan vs jax.jit per-observation "
                     f"Jacobians (scipy.sparse out)",
                     ba_rows(jacobians, numba, [k], not args.no_detect,
                             None if args.ba_max_memory is None else
                             int(args.ba_max_memory * 2 ** 30), not args.no_eager,
                             not args.no_given, not args.no_jacfwd), args.rounds,
                     args.min_time)


if __name__ == "__main__":
    main()
