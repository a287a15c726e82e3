"""``dualad.jit``: trace once per input signature, replay a compiled program after
(:mod:`dualad.jit.api`; the program: :mod:`dualad.jit.program`; its source:
:mod:`dualad.jit.codegen`)."""
from .api import Jitted, JitRetraceWarning, jit

__all__ = ["jit", "Jitted", "JitRetraceWarning"]
