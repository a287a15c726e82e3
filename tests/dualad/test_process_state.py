"""dualad changes no process-wide state behind the user's back (issue 15).

- ``detect_anomaly()`` applies to the thread (or asyncio task) that opened it: another
  thread's legitimate inf neither raises nor is checked.
- No sweep toggles the garbage collector: a user's ``gc.disable()`` / ``gc.enable()``
  holds while grads run in any thread.
- ``import dualad`` leaves the allocator alone; ``keep_heap()`` is an explicit opt-in.
"""
from __future__ import annotations

import asyncio
import gc
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import dualad
from dualad.core import tracer

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _in_thread(fn):
    """Start ``fn`` in a thread; its exception (if any) is re-raised by the returned join."""
    box = {}

    def run():
        try:
            box["value"] = fn()
        except BaseException as e:  # noqa: BLE001 - handed to the joining thread
            box["error"] = e

    t = threading.Thread(target=run)
    t.start()

    def join():
        t.join(timeout=60)
        assert not t.is_alive()
        if "error" in box:
            raise box["error"]
        return box.get("value")
    return join


# --- anomaly mode is per thread -------------------------------------------------------

def _legit_inf():
    """d/dx log(x) at 0 = inf: a right answer, not an anomaly of this thread."""
    with np.errstate(divide="ignore"):
        return dualad.grad(np.log)(0.0)


def _nan_grad():
    with np.errstate(invalid="ignore"):
        return dualad.grad(lambda x: np.sqrt(x) * 0.0 + np.log(x))(-1.0)


def test_detect_anomaly_does_not_reach_other_threads():
    entered, other_done = threading.Event(), threading.Event()
    assert tracer.ANOMALY[0] == 0

    def anomalous():
        with dualad.detect_anomaly():
            entered.set()
            assert other_done.wait(60)
            with pytest.raises(dualad.AnomalyError, match="nan"):
                _nan_grad()
            return "raised"

    join_a = _in_thread(anomalous)
    assert entered.wait(60)
    try:
        join_b = _in_thread(_legit_inf)    # runs while the other thread's context is open
        assert join_b() == np.inf
    finally:
        other_done.set()
    assert join_a() == "raised"
    assert tracer.ANOMALY[0] == 0


def test_detect_anomaly_concurrent_calls():
    """Both threads grad repeatedly at once: only the anomalous one ever raises."""
    stop = threading.Event()

    def anomalous():
        raised = 0
        with dualad.detect_anomaly():
            while not stop.is_set() or raised < 20:
                with pytest.raises(dualad.AnomalyError):
                    _nan_grad()
                raised += 1
        return raised

    join_a = _in_thread(anomalous)
    try:
        for _ in range(200):
            assert _legit_inf() == np.inf
    finally:
        stop.set()
    assert join_a() >= 20


def test_detect_anomaly_follows_asyncio_tasks():
    async def anomalous(gate):
        with dualad.detect_anomaly():
            await gate.wait()      # the other task runs while this context is open
            with pytest.raises(dualad.AnomalyError):
                _nan_grad()

    async def legit(gate):
        value = _legit_inf()
        gate.set()
        return value

    async def both():
        gate = asyncio.Event()
        a = asyncio.create_task(anomalous(gate))
        await asyncio.sleep(0)
        value = await legit(gate)
        await a
        return value

    assert asyncio.run(both()) == np.inf


# --- the garbage collector is the user's ----------------------------------------------

def _grad_waiting(inside, release):
    """A grad whose function signals ``inside`` and waits for ``release`` mid-recording."""
    def f(x):
        y = x * x
        inside.set()
        assert release.wait(60)
        return y
    return lambda: dualad.grad(f)(3.0)


@pytest.fixture
def restore_gc():
    was = gc.isenabled()
    yield
    (gc.enable if was else gc.disable)()


def test_user_gc_disable_survives_grad_in_another_thread(restore_gc):
    gc.enable()
    inside, release = threading.Event(), threading.Event()
    join = _in_thread(_grad_waiting(inside, release))
    assert inside.wait(60)
    gc.disable()                     # the user's own choice, made while the grad runs
    release.set()
    assert join() == 6.0
    assert not gc.isenabled()
    for _ in range(3):               # and after more grads in other threads
        _in_thread(lambda: dualad.grad(lambda x: np.sin(x) * x)(1.0))()
    assert not gc.isenabled()


def test_gc_enabled_stays_enabled_during_grad(restore_gc):
    gc.enable()
    inside, release = threading.Event(), threading.Event()
    join = _in_thread(_grad_waiting(inside, release))
    assert inside.wait(60)
    try:
        assert gc.isenabled()        # another thread's recording does not switch it off
    finally:
        release.set()
    assert join() == 6.0
    seen = []
    dualad.grad(lambda x: seen.append(gc.isenabled()) or x * x)(2.0)
    dualad.value_and_grad(lambda x: seen.append(gc.isenabled()) or x * x)(2.0)
    dualad.vjp(lambda x: seen.append(gc.isenabled()) or x * x, 2.0)[1](1.0)
    assert seen == [True, True, True] and gc.isenabled()


def test_gc_disabled_stays_disabled_after_grad(restore_gc):
    gc.disable()
    dualad.grad(lambda x: x * x)(2.0)
    dualad.vjp(lambda x: x * x, 2.0)[1](1.0)
    assert not gc.isenabled()


# --- the allocator is the user's ------------------------------------------------------

def _heap_applied(code, **env):
    env = {**{k: v for k, v in os.environ.items() if k != "DUALAD_KEEP_HEAP"}, **env}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=120, check=True)
    return out.stdout.split()


def test_import_leaves_the_allocator_alone():
    code = ("import dualad, dualad.interpreters.reverse.heap as h; print(h.applied); "
            "print(dualad.keep_heap()); print(h.applied)")
    before, returned, after = _heap_applied(code)
    assert before == "False"
    assert returned == after                    # True on glibc, False elsewhere
    import platform
    if platform.system() == "Linux" and platform.libc_ver()[0] == "glibc":
        assert after == "True"


def test_keep_heap_env_opt_in():
    code = "import dualad.interpreters.reverse.heap as h; print(h.applied)"
    assert _heap_applied(code, DUALAD_KEEP_HEAP="0") == ["False"]
    import platform
    if platform.system() == "Linux" and platform.libc_ver()[0] == "glibc":
        assert _heap_applied(code, DUALAD_KEEP_HEAP="1") == ["True"]
