"""Taylor mode (internal): truncated Taylor series pushed through every primitive.

- :mod:`.series` — the interpreter: :class:`~.series.Series` values, the
  :class:`~.series.TaylorTrace`, and the sub-tapes of the fallback rule;
- :mod:`.rules` — the ``"taylor"`` rule table: recurrences, linear and multilinear
  primitives, and the fallback through each primitive's JVP rule;
- :mod:`.special` — more recurrences (special functions, two-argument primitives), filed
  in the same table when this package is imported.

The user's functions are :func:`dualad.jet`, :func:`dualad.taylor` and
:func:`dualad.derivative` (:mod:`dualad.transforms.taylor`).
"""

from . import special, linalg  # noqa: F401  (file their recurrences)

__all__: list[str] = []
