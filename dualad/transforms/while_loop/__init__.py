"""``dualad.while_loop``: loops whose length is known only when they end (docs/while_loop.md).

:func:`dualad.while_loop` (``api.py``): JAX's ``lax.while_loop``; the predicate and the
body traced once into programs (``trace.py``), the loop ONE primitive whose rules are
while loops again, or, in reverse mode, a primitive that checkpoints online
(``rules.py``) by the schedule of ``online.py``.
"""
from .api import while_loop, DEFAULT_SNAPSHOTS, DEFAULT_SCHEDULE  # noqa: F401

__all__ = ["while_loop", "DEFAULT_SNAPSHOTS", "DEFAULT_SCHEDULE"]
