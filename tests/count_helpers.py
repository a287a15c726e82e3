"""Shared by the compile-cost tests: how many Python calls a step makes (a count, not a
time, so a loaded machine does not move it), and the scalar chain they measure it on."""
from __future__ import annotations

import sys


def chain(x, n):
    """``n`` steps of ``x = x * (1 + 1e-7 x)``: about 7 equations a step under jit(grad)."""
    for _ in range(n):
        x = x * (1.0 + 1e-7 * x)
    return x


def python_calls(fn, *args):
    """The number of Python and C function calls ``fn(*args)`` makes."""
    calls = [0]

    def count(frame, event, arg):
        if event in ("call", "c_call"):
            calls[0] += 1
    sys.setprofile(count)
    try:
        fn(*args)
    finally:
        sys.setprofile(None)
    return calls[0]
