"""Which code ``jit(f, backend="numba")`` runs for one program, decided at its first call.

:class:`NumbaReplay` first writes the whole program for ``numba.njit``
(:mod:`dualad.interpreters.staging.numba_whole`). At the first call (:meth:`NumbaReplay.first_call`, from
``Compiled.warm_up``) Numba types and compiles it, and its outputs are compared with the
traced call's (same types, shapes and dtypes; values within ``RTOL`` of each output's
largest entry: a few ulps of difference are expected, see numba_whole). When the program
has something the whole-program mode does not write, when Numba fails on it, or when
the outputs disagree, the program falls back, silently, to the fused path: elementwise
groups as Numba kernels, the rest NumPy calls (:mod:`dualad.interpreters.staging.numba_backend`), or,
for a program with rolled loops, the NumPy backend's rolled program (the fused path does
not roll loops). ``mode`` says which code runs and ``reason`` why the whole program
does not (shown at the top of ``jitted.source()`` too).
"""
from __future__ import annotations

import numpy as np

from .codegen import compile_program
from .loops import compile_rolled, roll
from .numba_backend import fuse_program
from .numba_whole import Unsupported, compile_whole

__all__ = ["NumbaReplay", "RTOL"]

# The whole program's first outputs must agree with the traced call's within this much of
# each output's largest magnitude (a few ulps apart: orders of additions, libm).
RTOL = 1e-9


class NumbaReplay:
    """The replay of one program under the Numba backend: ``fn``, ``source``, ``mode``
    (``"whole"``, ``"kernels"`` or ``"rolled"``) and ``reason`` (None for ``"whole"``)."""

    __slots__ = ("program", "fn", "source", "mode", "reason", "checked", "rolled")

    def __init__(self, program, rolled=None):
        """``rolled``: the NumPy backend's ``(fn, source)`` of ``program`` when already
        compiled (the tiered first calls ran it): the ``"rolled"`` fallback reuses it."""
        self.program = program
        self.checked = False
        self.rolled = rolled
        try:
            self.fn, self.source = compile_whole(program, name=program.name)
            self.mode, self.reason = "whole", None
        except Unsupported as exc:
            self._fall_back(f"not written for numba: {exc}")

    def _fall_back(self, reason):
        prog = self.program
        self.reason = reason
        if roll(prog, compile_body=lambda sub, name: (None, ""))[0] is not prog:
            self.mode = "rolled"
            fn, source = self.rolled or compile_rolled(prog, name=prog.name)
        else:
            self.mode = "kernels"
            fn, source = compile_program(fuse_program(prog), name=prog.name)
        self.fn = fn
        self.source = f"# numba: {self.mode} ({reason})\n" + source

    def first_call(self, inputs, expected):
        """Compile the whole program for ``inputs`` and check it against ``expected``
        (the traced call's output leaves); on any failure fall back. Returns ``(fn,
        source)`` to use from now on."""
        if self.mode == "whole" and not self.checked:
            self.checked = True
            try:
                with np.errstate(all="ignore"):
                    got = self.fn(*inputs)
                why = None if expected is None else _disagree(got, expected)
            except Exception as exc:  # noqa: BLE001 - Numba's typing or lowering error
                why = f"numba could not compile it: {type(exc).__name__}: " + \
                    " ".join(str(exc).split())[:300]
            if why is not None:
                self._fall_back(why)
        return self.fn, self.source


def _disagree(got, expected):
    """Why ``got`` (the whole program's outputs) is not ``expected``, or None."""
    if len(got) != len(expected):
        return f"{len(got)} outputs, the trace had {len(expected)}"
    for j, (a, b) in enumerate(zip(got, expected)):
        if type(a) is not type(b):
            return f"output {j} is {type(a).__name__}, the trace gave {type(b).__name__}"
        if isinstance(b, np.ndarray):
            if a.shape != b.shape or a.dtype != b.dtype:
                return f"output {j} is {a.dtype}{list(a.shape)}, the trace gave " \
                       f"{b.dtype}{list(b.shape)}"
        a, b = np.asarray(a), np.asarray(b)
        if b.dtype.kind == "f":
            finite = np.isfinite(b)
            if not np.array_equal(np.isfinite(a), finite) or \
                    not np.array_equal(a[~finite], b[~finite], equal_nan=True):
                return f"output {j}: its infinities or NaNs differ from the trace's"
            if finite.any():
                scale = float(np.max(np.abs(b[finite])))
                err = float(np.max(np.abs(a[finite] - b[finite])))
                if err > RTOL * scale:
                    return f"output {j} differs from the trace's by {err:.3g} (scale {scale:.3g})"
        elif not np.array_equal(a, b):
            return f"output {j} differs from the trace's"
    return None
