"""``dualad.scan``: loops the differentiation understands as loops (docs/scan.md).

:func:`dualad.scan` (``api.py``): JAX's ``lax.scan``, storing every step or, with
``checkpoints="binomial"``, one primitive reversed by the revolve schedule
(``rules.py``) after closure conversion of the step (``closure.py``); under a
``dualad.jit`` trace, the default loop as one loop equation whose rules are loops too
(``staged.py``, ``loop.py``, ``loop_rules.py``, ``partial.py``).
"""
from .api import scan, default_snapshots  # noqa: F401

__all__ = ["scan", "default_snapshots"]
