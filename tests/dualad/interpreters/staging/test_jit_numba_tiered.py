"""jit(f, backend="numba") is tiered (issue 32): the first call, and every call until Numba
is ready, runs the NumPy backend's program; the whole program compiles on one background
thread, is checked against the traced call, and only then replaces the NumPy replay.
``wait_compiled()`` waits for it; ``compile="now"`` compiles at the first call as before.

The compile step is gated in these tests (a patched ``numba_mode.compile_whole`` that waits
for an event), so "still pending" is a fact the test holds, not a race."""
from __future__ import annotations

import gc
import subprocess
import sys
import threading
import weakref

import numpy as np
import pytest

pytest.importorskip("numba")

import dualad  # noqa: E402
from dualad.interpreters.staging import numba_mode, numba_tier  # noqa: E402

WHOLE = "# numba: the whole program"


class Gate:
    """``numba_mode.compile_whole`` recording the thread and program it ran for, and held
    until ``open()`` (at most 120 s, so a broken test cannot hang the suite)."""

    def __init__(self, monkeypatch, closed=True):
        self.real = numba_mode.compile_whole
        self.event = threading.Event()
        if not closed:
            self.event.set()
        self.calls = []
        monkeypatch.setattr(numba_mode, "compile_whole", self)

    def __call__(self, program, name="replay"):
        self.calls.append((threading.get_ident(), program.name))
        self.event.wait(120)
        return self.real(program, name=name)

    def open(self):
        self.event.set()


def f(x):
    return np.sum(np.exp(x) * x - 2.0 * np.sin(x))


def _program(jitted):
    (entry,) = jitted._cache.values()
    return entry.programs[0][0]


def test_first_call_runs_the_numpy_program_and_numba_replaces_it_when_ready(monkeypatch):
    gate = Gate(monkeypatch)
    x = np.random.default_rng(0).random(30)
    jn, jp = dualad.jit(dualad.grad(f), backend="numba"), dualad.jit(dualad.grad(f))
    first, want = jn(x), jp(x)
    np.testing.assert_array_equal(first, want)           # the NumPy backend's program
    assert list(jn.cache_info(tiers=True).values()) == [["pending"]]
    assert jn.source(x).startswith(numba_tier.PENDING)
    assert jn.source(x)[len(numba_tier.PENDING):] == jp.source(x)
    assert not jn.wait_compiled(timeout=0.0)
    np.testing.assert_array_equal(jn(x), want)           # still NumPy's, still right
    gate.open()
    assert jn.wait_compiled()
    assert list(jn.cache_info(tiers=True).values()) == [["numba"]]
    assert jn.source(x).startswith(WHOLE)
    assert [t for t, _ in gate.calls] != [threading.get_ident()]   # not on this thread
    assert len(gate.calls) == 1
    np.testing.assert_allclose(jn(x), want, rtol=1e-14, atol=1e-14)
    assert list(jn.cache_info().values()) == [1]         # traced once, as before


def test_compile_now_compiles_at_the_first_call_on_the_calling_thread(monkeypatch):
    gate = Gate(monkeypatch, closed=False)
    x = np.random.default_rng(1).random(30)
    jn = dualad.jit(f, backend="numba", compile="now")
    y = jn(x)
    assert gate.calls == [(threading.get_ident(), "f")]
    assert list(jn.cache_info(tiers=True).values()) == [["numba"]]
    assert jn.source(x).startswith(WHOLE) and jn.wait_compiled(timeout=0.0)
    np.testing.assert_allclose(y, f(x), rtol=1e-14)


def test_the_numpy_backend_has_nothing_to_wait_for():
    j = dualad.jit(f)
    j(np.ones(3))
    assert j.wait_compiled(timeout=0.0)
    assert list(j.cache_info(tiers=True).values()) == [["numpy"]]


def test_fallbacks_keep_their_reason(monkeypatch):
    x = np.random.default_rng(2).random(20)
    jn = dualad.jit(lambda x: np.cumsum(np.sin(x) * x + 1.0) * 2.0, backend="numba")
    y = jn(x)
    assert jn.wait_compiled()
    (tiers,) = jn.cache_info(tiers=True).values()
    assert tiers == ["kernels: not written for numba: primitive 'cumsum'"]
    assert jn.source(x).startswith("# numba: kernels (not written for numba: primitive 'cumsum')")
    np.testing.assert_array_equal(jn(x), y)

    def broken(program, name="replay"):
        raise RuntimeError("a bug in the writer")

    monkeypatch.setattr(numba_mode, "compile_whole", broken)
    jb = dualad.jit(f, backend="numba")
    jb(x)
    assert jb.wait_compiled()
    (tiers,) = jb.cache_info(tiers=True).values()
    assert tiers == ["numpy: numba could not compile it: RuntimeError: a bug in the writer"]
    assert jb.source(x).startswith("# numba: numpy (numba could not compile it: RuntimeError")
    np.testing.assert_array_equal(jb(x), dualad.jit(f)(x))


def test_the_rolled_fallback_is_the_numpy_program_already_running():
    def looped(x):
        y = x
        if np.sum(x) > 0:                 # a guard: not written for numba
            for _ in range(300):          # a loop: the fallback is the rolled NumPy program
                y = np.sin(y) * 0.5 + x
        return y

    x = np.linspace(0.1, 1.0, 5)
    jn = dualad.jit(looped, backend="numba")
    y = jn(x)
    compiled = _program(jn)
    before = compiled.fn
    assert jn.wait_compiled()
    assert numba_tier.tier_of(compiled).startswith("numpy: not written for numba: a guard")
    assert jn.source(x).startswith("# numba: rolled (not written for numba: a guard")
    assert compiled.fn is before          # not compiled a second time
    np.testing.assert_array_equal(jn(x), y)


def test_a_disagreeing_whole_program_is_never_swapped_in(monkeypatch):
    real = numba_mode.compile_whole

    def wrong(program, name="replay"):
        fn, source = real(program, name)
        return (lambda *a: tuple(np.asarray(v) + 1.0 for v in fn(*a))), source

    monkeypatch.setattr(numba_mode, "compile_whole", wrong)
    x = np.random.default_rng(3).random(10)
    jn = dualad.jit(lambda x: np.exp(x) * x - 2.0, backend="numba")
    jn(x)
    assert jn.wait_compiled()
    assert jn.source(x).startswith("# numba: kernels (output 0 differs from the trace's")
    np.testing.assert_array_equal(jn(x), np.exp(x) * x - 2.0)


def test_the_check_uses_copies_of_the_first_call(monkeypatch):
    gate = Gate(monkeypatch)
    x = np.random.default_rng(4).random(25)
    jn = dualad.jit(lambda x: np.exp(x) * x - 2.0, backend="numba")
    y = jn(x)
    x[:] = 7.0            # the caller reuses its arrays before the compilation ran
    y[:] = -1.0
    gate.open()
    assert jn.wait_compiled()
    assert list(jn.cache_info(tiers=True).values()) == [["numba"]]
    np.testing.assert_allclose(jn(x), np.exp(x) * x - 2.0, rtol=1e-14)


def test_calls_from_two_threads_while_it_compiles(monkeypatch):
    gate = Gate(monkeypatch)
    rng = np.random.default_rng(5)
    xs = [rng.random(40) for _ in range(8)]
    g = dualad.grad(f)
    jn = dualad.jit(g, backend="numba")
    jn(xs[0])
    errors, started = [], threading.Barrier(2)

    def calls():
        try:
            started.wait(30)
            for _ in range(20):
                for x in xs:
                    np.testing.assert_allclose(jn(x), g(x), rtol=1e-13, atol=1e-13)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=calls) for _ in range(2)]
    for t in threads:
        t.start()
    gate.open()          # the swap happens while they call (or after: either is right)
    for t in threads:
        t.join(120)
    assert not errors, errors
    assert jn.wait_compiled()
    assert list(jn.cache_info(tiers=True).values()) == [["numba"]]
    threads = [threading.Thread(target=calls) for _ in range(2)]
    started.reset()
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors
    assert list(jn.cache_info().values()) == [1]


def test_a_dropped_jitted_function_is_not_kept_alive_by_the_queue(monkeypatch):
    gate = Gate(monkeypatch)
    x = np.random.default_rng(6).random(12)

    def busy(x):
        return np.sum(np.cos(x) * x)

    def dropped(x):
        return np.sum(np.tanh(x) * x)

    def cleared(x):
        return np.sum(np.sinh(x) * x)

    jb = dualad.jit(busy, backend="numba")
    jb(x)                 # holds the worker at the gate
    jd, jc = dualad.jit(dropped, backend="numba"), dualad.jit(cleared, backend="numba")
    jd(x), jc(x)          # queued behind it
    gone_d, gone_c = weakref.ref(_program(jd)), weakref.ref(_program(jc))
    held = _program(jc)   # a program someone still holds: its job is cancelled
    del jd
    jc.clear_cache()
    gc.collect()
    assert gone_d() is None
    assert numba_tier.tier_of(held).startswith("numpy: not compiled: clear_cache()")
    assert jc.wait_compiled(timeout=0.0)
    del held
    gc.collect()
    assert gone_c() is None
    gate.open()
    assert jb.wait_compiled()
    assert [name for _, name in gate.calls] == ["busy"]   # the others' jobs were skipped
    jc(x)
    assert jc.wait_compiled()
    assert [name for _, name in gate.calls] == ["busy", "cleared"]


def test_a_signature_that_runs_without_jit_cancels_its_queued_jobs(monkeypatch):
    gate = Gate(monkeypatch)

    def branchy(x):
        if np.sum(x) > 0:
            return np.sum(np.exp(x) * x)
        return np.sum(np.sin(x) * x)

    def busy(x):
        return np.sum(np.cos(x) * x)

    x = np.linspace(0.1, 1.0, 7)
    jb = dualad.jit(busy, backend="numba")
    jb(x)                 # holds the worker at the gate: branchy's job waits behind it
    jn = dualad.jit(branchy, backend="numba", max_traces=1)
    jn(x)
    compiled = _program(jn)
    with pytest.warns(dualad.JitRetraceWarning):
        np.testing.assert_allclose(jn(-x), branchy(-x), rtol=1e-14)
    assert numba_tier.tier_of(compiled) == \
        "numpy: not compiled: the function runs without jit here"
    assert jn.wait_compiled(timeout=0.0)
    gate.open()
    bystander = dualad.jit(f, backend="numba")   # the worker goes on to the next job
    bystander(x)
    assert bystander.wait_compiled() and jb.wait_compiled()
    assert [name for _, name in gate.calls] == ["busy", "f"]   # branchy's job skipped


def test_grad_of_a_jitted_numba_function_uses_the_replay_it_has(monkeypatch):
    gate = Gate(monkeypatch)
    x = np.random.default_rng(7).random(15)
    jn = dualad.jit(f, backend="numba")
    want = dualad.grad(f)(x)
    np.testing.assert_allclose(dualad.grad(jn)(x), want, rtol=1e-14)
    gate.open()
    assert jn.wait_compiled()
    compiled = _program(jn)
    assert compiled.tier == "numba"
    if compiled.transformed:      # its primitive under grad now calls the Numba replay
        assert compiled.transformed.fn is compiled.fn
    np.testing.assert_allclose(dualad.grad(jn)(x), want, rtol=1e-14)


@pytest.mark.parametrize("bad", ["soon", "NOW", True, None, 1])
def test_an_unknown_compile_value_is_refused(bad):
    def energy(x):
        return np.sum(x * x)

    with pytest.raises(ValueError) as err:
        dualad.jit(energy, backend="numba", compile=bad)
    msg = str(err.value)
    assert "energy" in msg and f"compile={bad!r}" in msg
    assert "'background'" in msg and "'now'" in msg
    with pytest.raises(ValueError, match="energy"):
        dualad.jit(compile=bad)(energy)


_EXIT = """
import numpy as np, dualad
def big(x):
    for k in range(60):
        x = np.tanh(x * 1.01 + 0.1) * np.exp(-x * x)
    return np.sum(x)
j = dualad.jit(dualad.grad(big), backend="numba")
j(np.ones(50))
print("answered")
"""


def test_interpreter_exit_does_not_wait_for_a_compilation():
    """The process exits (rc 0) while the worker may be inside Numba: no hang, no crash."""
    done = subprocess.run([sys.executable, "-c", _EXIT], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "answered\n" and done.stderr == ""


_FORK = """
import os, numpy as np, dualad
j = dualad.jit(lambda x: np.sum(np.exp(x) * x), backend="numba")
j(np.ones(5)); assert j.wait_compiled(120)          # the parent's worker ran
pid = os.fork()
if pid == 0:
    k = dualad.jit(lambda x: np.sum(np.sin(x) * x), backend="numba")
    k(np.ones(6))
    ok = k.wait_compiled(120) and k.cache_info(tiers=True) and \\
        list(k.cache_info(tiers=True).values()) == [["numba"]]
    os._exit(0 if ok else 3)
_, status = os.waitpid(pid, 0)
print(os.waitstatus_to_exitcode(status))
"""


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="no fork here")
def test_a_forked_child_starts_its_own_worker():
    done = subprocess.run([sys.executable, "-c", _FORK], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "0\n", done.stderr
