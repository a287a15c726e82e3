"""Timing helpers shared by the benchmark scripts (no timing asserts anywhere)."""
from __future__ import annotations

import importlib
import statistics
import time
from dataclasses import dataclass


def median_time(fn, *, repeat=7, min_time=0.05):
    """Median seconds per call of ``fn()``: calls are grouped so one group lasts
    at least ``min_time``; the median over ``repeat`` groups is returned."""
    fn()  # warm up (and compile, for jitted peers)
    number = calibrate(fn, min_time)
    return statistics.median(group_times(fn, number, repeat))


def group_times(fn, number, repeat):
    """Seconds per call of ``fn()``, one sample per group of ``number`` calls, ``repeat``
    groups."""
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        samples.append((time.perf_counter() - t0) / number)
    return samples


# --- interleaved rounds (bench/run.py) ---------------------------------------------------
@dataclass
class Timing:
    """Per-call seconds of one participant over the rounds of :func:`interleaved`.

    ``samples[r]`` is round r's group time divided by ``number`` (the calls per group);
    ``cpu[r]`` the process CPU seconds (all threads) per wall second in that group: about 1
    for single-threaded work, about k when k cores were busy, below 1 when the VM took the
    core away."""
    samples: list
    cpu: list
    number: int

    @property
    def median(self):
        return statistics.median(self.samples)

    @property
    def spread(self):
        """max / min over the rounds (1.00 = every round alike)."""
        return max(self.samples) / min(self.samples)

    @property
    def cpu_per_wall(self):
        return statistics.median(self.cpu)


def calibrate(fn, min_time):
    """Calls per group so that one group of ``fn()`` lasts at least ``min_time``."""
    number = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        dt = time.perf_counter() - t0
        if dt >= min_time or number >= 1 << 20:
            return number
        # jump close to the target instead of doubling from 1 for fast calls
        number = max(2 * number, min(1 << 20, int(number * min_time / max(dt, 1e-9) * 1.1)))


def interleaved(fns, *, rounds=7, min_time=0.05, calibrated=None):
    """Time every zero-argument callable in ``fns`` (name -> fn) in ``rounds`` rounds.

    The callables are already warmed up by the caller. Each is calibrated (calls per group
    so a group lasts >= ``min_time``); then every round times one group of each, the order
    rotated by one place per round, so drift on a shared machine (another process waking
    up, the CPU clock changing) falls on every participant alike instead of on whichever
    ran last. Returns name -> :class:`Timing`."""
    names = list(fns)
    number = dict(calibrated or {})
    for name in names:
        if name not in number:
            number[name] = calibrate(fns[name], min_time)
    out = {name: Timing([], [], number[name]) for name in names}
    for r in range(rounds):
        k = r % len(names) if names else 0
        for name in names[k:] + names[:k]:
            fn, num = fns[name], number[name]
            c0, t0 = time.process_time(), time.perf_counter()
            for _ in range(num):
                fn()
            dt, dc = time.perf_counter() - t0, time.process_time() - c0
            out[name].samples.append(dt / num)
            out[name].cpu.append(dc / dt if dt > 0 else float("nan"))
    return out


def optional(name):
    """Import a peer package if installed, else None."""
    try:
        return importlib.import_module(name)
    except Exception:  # noqa: BLE001 - any import failure means "not available"
        return None


def table(rows, headers):
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) for i, h in enumerate(headers)]
    line = "  ".join(str(h).ljust(w) for h, w in zip(headers, widths))
    out = [line, "  ".join("-" * w for w in widths)]
    out += ["  ".join(str(c).ljust(w) for c, w in zip(r, widths)) for r in rows]
    return "\n".join(out)


def fmt(seconds):
    if seconds is None:
        return "-"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} us"
    if seconds < 1:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"
