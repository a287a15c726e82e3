"""bench/run.py's machinery: interleaved rounds, result comparison, thread pinning, and a
smoke run of the script itself (one small row, no timing asserted)."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench")
sys.path.insert(0, BENCH)

import _pinning  # noqa: E402
from _results import agree  # noqa: E402
from _timing import interleaved  # noqa: E402


def test_interleaved_rotates_the_order_and_samples_every_round():
    calls = []
    fns = {name: (lambda name=name: calls.append(name)) for name in "abc"}
    out = interleaved(fns, rounds=4, min_time=0.0, calibrated={"a": 1, "b": 1, "c": 1})
    assert calls == list("abc" "bca" "cab" "abc")
    for t in out.values():
        assert len(t.samples) == 4 and len(t.cpu) == 4 and t.number == 1
        assert t.spread >= 1.0 and t.median > 0


def test_interleaved_calibrates_groups_to_the_minimum_time():
    out = interleaved({"fast": lambda: None}, rounds=2, min_time=0.002)
    t = out["fast"]
    assert t.number > 1
    assert min(t.samples) * t.number >= 0.001   # a group lasts about min_time


def test_agree_dense_lists_tensors_and_tolerance():
    a = np.linspace(1.0, 2.0, 5)
    assert agree(a, a.copy(), 1e-10)[0]
    assert agree([a, a[:2]], np.concatenate([a, a[:2]]), 1e-10)[0]
    ok, how = agree(a * (1 + 1e-8), a, 1e-10)
    assert not ok and "worst entry" in how
    assert agree(a * (1 + 1e-12), a, 1e-10)[0]
    assert not agree(a[:4], a, 1e-8)[0]                 # shape
    assert not agree(np.full(5, np.nan), a, 1e-8)[0]    # non-finite
    assert not agree(object(), a, 1e-8)[0]              # not comparable


def test_agree_sparse_compares_on_the_pattern():
    A = sp.random(50, 50, density=0.1, random_state=0, format="csr") + sp.eye(50)
    assert agree(A.tocsc(), A, 1e-10)[0]
    B = A.tolil()
    B[3, 7] = B[3, 7] + 1e-3
    assert not agree(B.tocsr(), A, 1e-8)[0]
    assert agree(A.toarray(), A, 1e-10)[0]              # dense against sparse


def test_pinned_environ_sets_every_pool_and_keeps_user_xla_flags():
    env = _pinning.pinned_environ(1, {"XLA_FLAGS": "--xla_dump_to=/tmp/x"})
    assert all(env[v] == "1" for v in _pinning.POOL_VARS)
    assert env["XLA_FLAGS"].startswith("--xla_dump_to=/tmp/x ")
    assert "xla_cpu_multi_thread_eigen=false" in env["XLA_FLAGS"]
    env2 = _pinning.pinned_environ(2, {})
    assert env2["OPENBLAS_NUM_THREADS"] == "2" and "XLA_FLAGS" not in env2
    assert _pinning.threads_from_argv(["--quick", "--threads", "3"]) == 3
    assert _pinning.threads_from_argv(["--threads=4"]) == 4
    assert _pinning.threads_from_argv([]) == 1


def test_run_script_smoke(tmp_path):
    """The script end to end on one small row: the header records the pinning and the
    allocator setting, the row has its spread, and nothing raised or disagreed; the
    results file (for bench/charts.py) holds the row."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")}
    results = tmp_path / "results.json"
    res = subprocess.run([sys.executable, os.path.join(BENCH, "run.py"), "--quick", "--only",
                          "rosenbrock", "--rounds", "2", "--min-time", "0.005", "--markdown",
                          "--json", str(results)],
                         capture_output=True, text=True, env=env, timeout=300)
    out = res.stdout
    assert res.returncode == 0, res.stderr[-2000:]
    assert "threads pinned to 1: OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1" in out
    assert "keep_heap off" in out
    assert "spread" in out and "| rosenbrock |" in out
    assert "| first call: dualad.jit |" in out and "; first call " in out
    assert "MISMATCH" not in out and "ERROR" not in out
    import json
    doc = json.loads(results.read_text())
    assert [r["workload"] for r in doc["rows"]] == ["rosenbrock"] and doc["rounds"] == 2
    assert {"dualad", "dualad.jit"} <= set(doc["rows"][0]["peers"]) <= set(doc["measured"])
    try:
        import threadpoolctl  # noqa: F401
    except ImportError:
        pytest.skip("threadpoolctl not installed: pools not read back")
    assert "num_threads = 1" in out and "WARNING" not in out


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="no CPU affinity on this OS")
def test_pin_affinity_restricts_to_n_allowed_cores():
    allowed = os.sched_getaffinity(0)
    try:
        cores = _pinning.pin_affinity(1, sample=0.01)
        assert cores is not None and len(cores) == 1 and cores <= allowed
        assert os.sched_getaffinity(0) == cores
        assert _pinning.pin_affinity(len(allowed) + 1) is None   # more than allowed: untouched
    finally:
        os.sched_setaffinity(0, allowed)


# --- issue 32: an honest table -----------------------------------------------------------
def _rows():
    import workloads
    import workloads_jacobians  # noqa: F401  (registers the Jacobian rows)
    return {wl.name: wl for wl in workloads.ALL}


def _scaled(args, k):
    return [[a * k for a in p] if isinstance(p, list) else p * k for p in args]


def test_hvp_row_passes_the_vector_to_dualad_jit_as_an_argument():
    """jax.jit receives v as an argument; dualad.jit's program must too, not as a constant
    of its trace (before issue 32 the row jitted ``lambda x: hvp(f, x, v)``)."""
    import dualad
    import workloads
    call = _rows()["hvp"].impls["dualad.jit"](True)
    x, v = workloads._hvp_data(True)
    f = workloads._hvp_f(np)
    assert len(call.args) == 2 and np.array_equal(call.args[1], v)
    np.testing.assert_allclose(call(), dualad.hvp(f, x, v), rtol=1e-10)
    w = np.cos(np.arange(x.size))                 # another vector: another right answer
    got = call.program(x, w)
    np.testing.assert_allclose(got, dualad.hvp(f, x, w), rtol=1e-10, atol=1e-12)
    assert not np.allclose(got, call())
    assert list(call.program.cache_info().values()) == [1]   # replayed: one trace


@pytest.mark.parametrize("name", ["logreg", "mlp", "rosenbrock", "hvp", "jacobian", "hessian",
                                  "jacobian-tall", "jacobian-wide"])
def test_jitted_dualad_rows_take_what_the_peers_take_as_inputs(name):
    """Every dualad.jit row calls its program with the row's point (and vector) as
    arguments: at another point the replay (no new trace) gives the un-jitted answer."""
    call = _rows()[name].impls["dualad.jit"](True)
    assert call.args, "the row's values must be arguments of the jitted program"
    first = call()
    moved = _scaled(call.args, 1.01)
    got, want = call.program(*moved), call.program.__wrapped__(*moved)
    for g, w, f0 in zip(*(r if isinstance(r, (list, tuple)) else [r]
                          for r in (got, want, first))):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)
        assert not np.allclose(g, f0, rtol=1e-12, atol=0)
    assert list(call.program.cache_info().values()) == [1]


class _Row:
    name, notes = "row", {}


def test_fastest_keeps_the_fastest_agreeing_spelling_and_names_it():
    import time
    from _spellings import fastest
    wl = _Row()
    wl.notes = {}

    def slow():
        time.sleep(0.003)
        return np.ones(3)

    def broken():
        raise NotImplementedError("no forward mode here")

    fn = fastest(wl, "torch", {"by shape": slow, "other": lambda: np.ones(3),
                               "wrong": lambda: np.zeros(3), "missing": broken},
                 rounds=2, min_time=0.005)
    assert fn() is not None and fn.__name__ == "<lambda>"
    note = wl.notes["torch"]
    assert note.startswith("torch: other (the fastest at build time of: by shape ")
    assert "wrong disagreed" in note and "missing raised NotImplementedError" in note


@pytest.mark.parametrize("name", ["hvp", "jacobian", "hessian", "jacobian-tall",
                                  "jacobian-wide"])
def test_torch_rows_use_the_fastest_torch_spelling(name):
    """PyTorch's Jacobian, Hessian and HVP rows time torch.func's spellings next to the old
    torch.autograd.functional one, keep the fastest, agree with dualad and say which."""
    pytest.importorskip("torch")
    from _results import agree
    wl = _rows()[name]
    got, want = wl.impls["torch"](True)(), wl.impls["dualad"](True)()
    assert agree(got, want, 1e-8)[0]
    note = wl.notes["torch"]
    assert "torch.func." in note and "torch.autograd.functional." in note
    assert note.split(" (")[0].split(": ")[1] in note.split("of: ")[1]


def test_run_script_jax_on_the_scalar_chain_and_sparse_rows_and_first_calls():
    """With JAX installed, the scalar chain (lax.scan) and the sparse Jacobian (three
    colored JVPs) have a jax.jit column agreeing with dualad; every jitted peer gets a
    first-call column."""
    pytest.importorskip("jax")
    env = {k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")}
    res = subprocess.run([sys.executable, os.path.join(BENCH, "run.py"), "--quick", "--only",
                          "scalar-chain", "sparse-jacobian", "--rounds", "2", "--min-time",
                          "0.005", "--markdown", "--json", ""], capture_output=True, text=True,
                         env=env,
                         timeout=600)
    out = res.stdout
    assert res.returncode == 0, res.stderr[-2000:]
    assert out.count("  jax.jit ") == 2 and "jax.lax.scan" in out and "three JVPs" in out
    assert "first call: dualad.jit | first call: jax.jit |" in out
    assert "MISMATCH" not in out and "ERROR" not in out
