"""The shim's jit mode (AG_SHIM_JIT=1, ``autograd_suite.py --jit``): every derivative the
tests ask for runs through :func:`dualad.jit`, and check_grads checks ``jit(f)``.

Each jitted derivative is called twice with the same arguments: the first call traces (and
returns the values the trace computed), the second replays the compiled program, and the
second's result is what the test sees, so the tests check the replay, not the trace."""
import os

import dualad

ON = os.environ.get("AG_SHIM_JIT", "0") == "1"


def replayed(fun):
    """``fun`` under dualad.jit, answering each call from a replay of its program."""
    jitted = dualad.jit(fun)

    def call(*args, **kwargs):
        jitted(*args, **kwargs)              # traces (or replays a program of an earlier call)
        return jitted(*args, **kwargs)       # replays
    call.jitted = jitted
    return call
