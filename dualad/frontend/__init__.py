"""The NumPy front end (internal): how plain ``numpy`` calls on traced values reach the
registry.

- :mod:`.dispatch` — ``__array_ufunc__`` / ``__array_function__`` on the boxes;
- :mod:`.keywords` — NumPy's keyword arguments, kept or refused by name;
- :mod:`.objects` — lists of traced values given to NumPy (object arrays);
- :mod:`.casts` — integer casts; :mod:`.inplace` — in-place updates;
- :mod:`.scipy_errors` — SciPy
  functions that cannot reach dualad.
"""

__all__: list[str] = []
