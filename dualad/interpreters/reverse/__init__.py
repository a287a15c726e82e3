"""Reverse mode: record a tape, sweep it backward.

- :mod:`.tape` — recording: :class:`~.tape.Var` nodes and the VJP trace;
- :mod:`.sweep` — the iterative backward sweep;
- :mod:`.cotangents`, :mod:`.masked` — cotangent accumulation, structural zeros;
- :mod:`.compaction` — freeing what no output needs during the forward pass;
- :mod:`.versions` — catching arrays mutated between the forward pass and the pullback;
- :mod:`.anomaly` — ``detect_anomaly``; :mod:`.heap` — ``keep_heap``.
"""

__all__: list[str] = []
