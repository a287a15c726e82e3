"""Staging: ``dualad.jit`` traces a function once per input signature into a program and
replays compiled code after.

- :mod:`.api` — ``jit`` and :class:`~.api.Jitted` (the cache of programs per signature);
- :mod:`.trace` — the staging trace; :mod:`.sharing` — hash-consing during a trace;
- :mod:`.program` — the program; :mod:`.passes`, :mod:`.specialize`, :mod:`.tighten`,
  :mod:`.selected`, :mod:`.fuse`, :mod:`.buffers` — its optimisations;
- :mod:`.codegen` — NumPy source; ``numba_*`` — the Numba writers; :mod:`.replay` —
  running a program without generating code;
- :mod:`.default` — when the default paths use jit, and the fallback.
"""

__all__: list[str] = []
