"""The interpreters of the registry, one folder each (internal).

- :mod:`.forward` — dual numbers (forward mode, vector mode);
- :mod:`.reverse` — the tape and the backward sweep (reverse mode);
- :mod:`.batching` — ``vmap``;
- :mod:`.staging` — ``dualad.jit``: trace to a program, optimise it, generate code;
- :mod:`.taylor` — Taylor mode: truncated Taylor series (``jet``, ``taylor``,
  ``derivative``, the differential operators);
- :mod:`.batched_rules` — rules written for one direction applied to a batch of them
  (shared by forward and reverse mode).

A new interpreter is a new folder here (Taylor mode was the last to arrive);
docs/guide_internals.md says what it needs.
"""

__all__: list[str] = []
