"""A GradBench tool for dualad: GradBench's JSON-lines protocol on stdin/stdout.

    python bench/gradbench/tool.py            # tool "dualad" (eager)
    python bench/gradbench/tool.py --jit      # tool "dualad-jit" (every function under
                                              # dualad.jit; its first run traces and compiles)

With GradBench's CLI (github.com/gradbench/gradbench, CONTRIBUTING.md, "Python"):
``./gradbench run --eval "./gradbench repo eval lse" --tool "python bench/gradbench/tool.py"``.

The protocol (CONTRIBUTING.md, "Protocol"): one JSON message per line from the eval, one
JSON response per line back, with the message's ``id``. ``start`` -> ``{"id", "tool"}``;
``define`` -> ``success`` true for the modules in ``gb_evals.FUNCTIONS`` (false, with an
``error``, otherwise); ``evaluate`` -> the function run at least ``min_runs`` times and
until ``min_seconds`` have passed, ``output`` the last result, one ``{"name": "evaluate",
"nanoseconds"}`` timing per run (the input conversion and the output's conversion to JSON
not timed, as GradBench's Python tools do), ``success`` false and the traceback in
``error`` if it raises; anything else (``analysis``, ...) -> ``{"id"}``.
Thread pools are pinned to one thread before NumPy loads (``--threads N`` to change).
"""
from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(1, os.path.dirname(HERE))
import _pinning  # noqa: E402  (imports nothing numerical)

if __name__ == "__main__":
    _pinning.pin_environment(_pinning.threads_from_argv(sys.argv[1:]), None,
                             affinity=False)

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402

import gb_evals  # noqa: E402
from gb_peers import DualadPeer  # noqa: E402


def evaluate(message, peer):
    inp = message.get("input") or {}
    call, post = gb_evals.build(message["module"], message["function"], peer, inp)
    min_runs = int(inp.get("min_runs", 1))
    min_seconds = float(inp.get("min_seconds", 0))
    timings, elapsed, out = [], 0, None
    while len(timings) < min_runs or elapsed < min_seconds * 1e9:
        t0 = time.perf_counter_ns()
        out = call()
        dt = time.perf_counter_ns() - t0
        timings.append({"name": "evaluate", "nanoseconds": dt})
        elapsed += dt
    return {"success": True, "output": post(out), "timings": timings}


def respond(message, peer, tool_name):
    kind = message.get("kind")
    if kind == "start":
        return {"tool": tool_name}
    if kind == "define":
        module = message.get("module")
        if module in gb_evals.FUNCTIONS:
            return {"success": True}
        return {"success": False, "error": f"{tool_name} has no module {module!r}; it has "
                + ", ".join(sorted(gb_evals.FUNCTIONS))}
    if kind == "evaluate":
        try:
            return evaluate(message, peer)
        except Exception as exc:  # noqa: BLE001 - the protocol carries the error
            return {"success": False, "error": "".join(traceback.format_exception(exc))}
    return {}


def serve(lines, write, jit=False):
    """Answer every message of ``lines`` (JSON strings) through ``write(str)``."""
    peer = DualadPeer(jit)
    tool_name = "dualad-jit" if jit else "dualad"
    for line in lines:
        if not line.strip():
            continue
        message = json.loads(line)
        write(json.dumps({"id": message["id"]} | respond(message, peer, tool_name)) + "\n")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--jit", action="store_true", help="run every function under dualad.jit")
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args(argv)

    def write(s):
        sys.stdout.write(s)
        sys.stdout.flush()
    serve(sys.stdin, write, args.jit)


if __name__ == "__main__":
    main()
