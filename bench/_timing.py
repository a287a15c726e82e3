"""Timing helpers shared by the benchmark scripts (no timing asserts anywhere)."""
from __future__ import annotations

import importlib
import statistics
import time


def median_time(fn, *, repeat=7, min_time=0.05):
    """Median seconds per call of ``fn()``: calls are grouped so one group lasts
    at least ``min_time``; the median over ``repeat`` groups is returned."""
    fn()  # warm up (and compile, for jitted peers)
    number = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        dt = time.perf_counter() - t0
        if dt >= min_time or number >= 1 << 20:
            break
        number *= 2
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
